// Packaging policies as auditwheel reads them (manylinux, musllinux, android), and the platform tag a
// wheel is consistent with. The policy data is auditwheel's own (db/policies/, copied from its
// manylinux-policy.json, musllinux-policy.json and android-policy.json by `scripts/gen-db.sh targets`):
// per policy and architecture, the libraries a wheel may take from the system, the symbol versions it
// may need per family (GLIBC_, GLIBCXX_, CXXABI_, GCC_, ZLIB_, ...), and symbols it must not use.
//
// Stages of `analyze` (inspector/policy/consistency.cpp):
//   1. the wheel's machine and C library, from its ELF members (e_machine, NEEDED, PT_INTERP), else the
//      extension modules' file names (-linux-gnu, -linux-musl), else its own tags;
//   2. every rule of the policy family, each giving the most compatible policy it allows (its ceiling):
//      symbol versions, libraries outside the list (resolved in the wheel as glibc's loader would),
//      blacklisted symbols, UCS2 and PyFPE symbols (Python 2 era ABIs), the x86-64 ISA level, and the
//      kernel a statically linked member's glibc needs (its NT_GNU_ABI_TAG note) against the kernel of
//      the policy's systems (CentOS 5, 6, 7 for the legacy policies: consistency.cpp has the table);
//   3. consistent_with: the least of the ceilings, as a platform tag (linux_<arch> when no policy holds).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/image.hpp"
#include "wheelcheck/profile.hpp"

namespace wheelcheck::policy {

// The C library a policy family is for.
enum class Libc { Glibc, Musl, Android };
std::string libc_name(Libc libc);    // "glibc", "musl", "android"
std::string tag_prefix(Libc libc);   // "manylinux", "musllinux", "android"
std::string policy_file(Libc libc);  // "manylinux-policy.json", ...

// One policy for one architecture: "manylinux_2_17" for aarch64 is the tag manylinux_2_17_aarch64.
struct Policy {
  Libc libc = Libc::Glibc;
  std::string name;                  // "manylinux_2_17", "musllinux_1_2", "android_24"
  std::vector<std::string> aliases;  // "manylinux2014"
  int priority = 0;                  // higher is more compatible (auditwheel's order)
  std::string arch;                  // auditwheel's architecture: x86_64, i686, aarch64, armv7l, ppc64le, ...
  std::map<std::string, std::set<std::string>> symbol_versions;  // "GLIBC" -> {"2.17", ...}
  std::set<std::string> whitelist;                               // libraries the system provides
  std::map<std::string, std::set<std::string>> blacklist;        // library -> symbols a wheel must not use
  std::string tag() const;                                       // "manylinux_2_17_aarch64", "android_24_arm64_v8a"
  std::vector<std::string> alias_tags() const;                   // "manylinux2014_aarch64"
  std::string libc_version() const;  // "2.17" (glibc), "1.2" (musl), "24" (android API level)
};

// The platform tag spelling of an architecture: android says arm64_v8a for aarch64.
std::string tag_arch(Libc libc, std::string_view arch);
// The architecture a machine name (elf::machine_name) has in the policies: armhf -> armv7l; "" for one
// no policy knows (armel, mips64, ...).
std::string policy_arch(std::string_view machine);

class Policies {
 public:
  // db/policies/{manylinux,musllinux,android}-policy.json. Throws Error(BadInput) naming the file when
  // one is missing or malformed.
  static std::shared_ptr<const Policies> load(const std::string& dir);
  // The digest load() would compute, from the files' bytes alone (nothing parsed).
  static std::string digest_of(const std::string& dir);
  static Policies from_json(Libc libc, const nlohmann::json& list, std::string_view what);

  const std::vector<Policy>& all() const { return m_all; }
  // The policies of a family for an architecture, most compatible first.
  std::vector<const Policy*> of(Libc libc, std::string_view arch) const;
  // By tag or alias tag ("manylinux_2_17_aarch64", "manylinux2014_aarch64"); null when none.
  const Policy* find(std::string_view tag) const;
  // A sha256 of the policy files: caches of what was computed from them key on it.
  const std::string& digest() const { return m_digest; }

 private:
  std::vector<Policy> m_all;
  std::string m_digest;
};

// The image a check against a packaging target uses: the policy's libraries and versions, its C library,
// the loader's default folders; `policy` names the tag (image::Image::policy).
image::Image target_image(const Policy& policy);

// Why a wheel is not consistent with a more compatible tag: one rule, one library or symbol version.
enum class Rule { Machine, Libc, ApiLevel, SymbolVersion, Library, Blacklist, Ucs2, PyFpe, IsaLevel, Kernel };
std::string rule_name(Rule rule);  // "machine", "libc", "api-level", "symbol-version", "library", ..., "kernel"

struct Constraint {
  Rule rule = Rule::SymbolVersion;
  std::string member;                // the member whose reference it is; "" for the wheel as a whole
  std::string library;               // "libm.so.6"
  std::string version;               // "GLIBC_2.29"; "x86-64-v3" (isa-level); "Linux 3.2.0" (kernel)
  std::vector<std::string> symbols;  // the blacklisted, UCS2 or PyFPE symbols
  std::string ceiling;               // the most compatible tag this reason allows ("linux_aarch64" for none)
  int ceiling_priority = 0;
  std::string detail;  // one sentence for people
  // The declared Requires-Dist distribution that ships `library`, reached by the member's RPATH or RUNPATH into a
  // folder of site-packages the wheel does not fill (PyTorch's $ORIGIN/../nvidia/cuda_runtime/lib): the library
  // the dependency installs there, which `auditwheel repair --exclude` leaves as it is. Such a reason keeps
  // auditwheel's answer (consistent_with) but is no reason against the wheel's tag (check_claim). "" for none.
  std::string dependency;
  // Whether `auditwheel show` judges this reason as wheelcheck does: false for the kernel rule (auditwheel has
  // none), the musl release (auditwheel reads the musl it runs on) and a declared dependency's library
  // (auditwheel, with only the wheel, calls it external).
  bool auditwheel_judges = true;
};

// A library a declared Requires-Dist distribution ships (db/providers.json): given to analyze, a member that
// reaches it by RPATH or RUNPATH into site-packages, outside the wheel's own folders, takes it from there.
struct DependencyLibrary {
  std::string soname;        // "libcudart.so.12"
  std::string distribution;  // "nvidia-cuda-runtime-cu12"
  std::string requirement;   // the Requires-Dist as written, for people
};

struct Consistency {
  bool pure = false;  // no ELF member: every policy accepts it (consistent_with is null)
  Libc libc = Libc::Glibc;
  std::string libc_evidence;  // how the C library was told ("NEEDED libc.so.6 of foo.so", ...)
  std::string machine;        // elf::machine_name of the members ("armhf")
  std::string arch;           // the policies' name for it ("armv7l"); "" when no policy has the machine
  std::string tag;            // consistent_with: "manylinux_2_31_aarch64", or "linux_aarch64"
  int priority = 0;           // the tag's policy priority; 0 for linux_<arch>
  // Newest version per family the members need ("GLIBC" -> "2.29", "GLIBCXX" -> "3.4.22").
  std::map<std::string, std::string> newest_versions;
  std::vector<Constraint> constrained_by;  // each reason below the most compatible policy, most limiting first
  // The tag with the declared dependencies' libraries counted as installed (the reasons with `dependency` left
  // out): what the wheel delivers once pip installs what it requires. Equal to tag when no reason is one.
  std::string tag_with_dependencies;
  int priority_with_dependencies = 0;
};

// The C library and loader of a policy family, which every system of it has and no policy lists as a library:
// glibc's ld-linux-*.so.* and ld64.so.*, musl's ld-musl-*.so.1 and libc.musl-*.so.1 (Alpine's soname of musl's
// libc, which is its loader too) and libc.so (musl's soname on other systems).
bool c_library_of(Libc libc, std::string_view soname);

// dependencies: the libraries declared Requires-Dist distributions ship (none: the wheel alone, as auditwheel).
Consistency analyze(const WheelProfile& wheel, const Policies& policies,
                    const std::vector<DependencyLibrary>& dependencies = {});

// The wheel's own platform tag claims more than its binaries deliver: the most compatible tag it carries
// for the same C library, above consistent_with (or for another machine or C library).
struct Overclaim {
  std::string tag;                         // the claimed tag ("manylinux2014_aarch64")
  std::string consistent_with;             // what it is ("linux_aarch64")
  std::vector<const Constraint*> because;  // the reasons below the claim
  std::string detail;                      // one sentence naming both, and why
  // Whether `auditwheel show` names the same tag for the same reasons: false when a reason below the claim is
  // one auditwheel does not judge (Constraint::auditwheel_judges), so a finding must not say it agrees.
  bool auditwheel_agrees = true;
};
// Whether any of the wheel's platform tags names a policy family (manylinux, musllinux, android): only
// such a wheel can overclaim, and knowing it needs no policy data (checks skip loading it otherwise).
bool claims_a_policy(const WheelProfile& wheel);
std::optional<Overclaim> check_claim(const WheelProfile& wheel, const Consistency& c, const Policies& policies);

nlohmann::ordered_json to_json(const Constraint& c);
// {"consistent_with": ..., "libc": ..., "constrained_by": [...], "newest_versions": {...}, "tag_claim": ...}
nlohmann::ordered_json to_json(const Consistency& c, const std::optional<Overclaim>& claim);
std::string render_text(const Consistency& c, const std::optional<Overclaim>& claim, bool color);

}  // namespace wheelcheck::policy
