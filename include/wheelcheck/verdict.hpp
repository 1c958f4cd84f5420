// The verdict: will a wheel's native code load and work in an image? Findings with evidence, the
// conditions an unknown fact leaves open, and one of compatible / degraded / incompatible / unknown.
// Stages: resolve (inspector/resolve/resolve.cpp: which file each DT_NEEDED loads, as glibc's loader
// searches), bind (inspector/resolve/bind.cpp: every undefined symbol against its load scope), wheel-level
// checks (inspector/verdict/wheel_checks.cpp: tags, Requires-Python, architecture), the check itself
// (inspector/verdict/check.cpp, with cuda.cpp for the CUDA runtime and driver, and routes.cpp), then the
// verdict (routes.cpp). Findings are made and summarised in one place (findings.cpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/exports.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/rules.hpp"

namespace wheelcheck::policy {
class Policies;
}
namespace wheelcheck::toolkit {
struct Provider;
}

namespace wheelcheck::verdict {

inline constexpr std::string_view k_verdict_schema = "wheelcheck-verdict/1";

enum class Severity {
  Info,       // worth knowing; changes nothing
  Condition,  // holds only if an unknown fact turns out right ("needs a driver >= 580.65.06")
  Warning,    // loads, but something is off (an optional dependency, a tag that is merely unusual)
  Error,      // will not load or run
};
std::string severity_name(Severity s);

// What a finding is about. kind_name gives the stable identifier of docs/verdict.md and the JSON.
enum class FindingKind {
  MissingLibrary,       // missing-library
  MissingVersion,       // missing-version
  MissingSymbol,        // missing-symbol
  WrongArch,            // wrong-arch
  TagPython,            // tag-python
  TagAbi,               // tag-abi
  TagPlatform,          // tag-platform
  RequiresPython,       // requires-python
  Driver,               // driver
  DriverTooOld,         // driver-too-old
  GpuCoverage,          // gpu-coverage: no SASS runs on the GPU and no PTX can be JIT-compiled for it
  GpuArchDropped,       // gpu-arch-dropped: the image's toolkit no longer builds or ships code for its GPU
  FatbinUnread,         // fatbin-unread: a member's GPU code could not be read, its coverage not checked
  IsaLevel,             // isa-level
  DeclaredLibrary,      // declared-library
  CpuPlatform,          // cpu-platform
  Archive,              // archive
  Record,               // record
  UnreadableMember,     // unreadable-member
  TagClaim,             // tag-claim
  RequiresDist,         // requires-dist: a Requires-Dist pin the image's (or the environment's) version does not meet
  TagPureBinary,        // tag-pure-binary: a py3-none-any (or other pure) tag on a wheel with native code
  Environment,          // environment: a variable a part of the wheel needs that the image does not set
  NumpyAbi,             // numpy-abi: a member built against NumPy 1.x's C API where numpy 2 is installed
  ExtensionSuffix,      // extension-suffix: an extension module named for another Python, which CPython never imports
  ModuleInit,           // module-init: an extension module without the PyInit_ function CPython looks up
  PolicyMachine,        // policy-machine
  PolicyLibc,           // policy-libc
  PolicyApiLevel,       // policy-api-level
  PolicySymbolVersion,  // policy-symbol-version
  PolicyLibrary,        // policy-library
  PolicyBlacklist,      // policy-blacklist
  PolicyUcs2,           // policy-ucs2
  PolicyPyfpe,          // policy-pyfpe
  PolicyIsaLevel,       // policy-isa-level
  PolicyKernel,         // policy-kernel
  PolicyUnknown,        // policy-unknown
  // The publisher check (`wheelcheck lint`, include/wheelcheck/lint.hpp): what a wheel claims against its binaries.
  LabelClaim,            // label-claim: a toolkit or torch its label or name claims, contradicted by what it needs
  UndeclaredDependency,  // undeclared-dependency: a library or symbols only a distribution it does not declare ships
  UnusedDependency,      // unused-dependency: a declared library-only distribution that nothing links
  UnpinnedDependency,    // unpinned-dependency: a distribution whose C++ symbols it binds, declared without a pin
  Metadata,              // metadata: METADATA as installers read it (fields after the headers, duplicates, ...)
  RootIsPurelib,         // root-is-purelib: WHEEL says purelib, the wheel holds native code
  TagFloor,              // tag-floor: a linux_* tag, and the policy (and symbols) the binaries really need
  UnloadableSymbol,      // unloadable-symbol: an undefined symbol that nothing the object loads can define
  VariantClaim,          // variant-claim: a wheel variant's property (PEP 825) its binaries contradict
  VariantMetadata,       // variant-metadata: variant.json an installer refuses, or that differs from the index's
  ExecStack,   // exec-stack: a library whose PT_GNU_STACK asks for an executable stack (glibc >= 2.41 refuses it)
  PythonLoad,  // python-load: a native file the wheel's Python code loads (ctypes.CDLL, torch.ops.load_library)
};
inline constexpr FindingKind k_last_finding_kind = FindingKind::PythonLoad;
// A kind's own words, one row per kind (inspector/verdict/kinds.cpp): what every finding of the kind
// says apart from its facts, the same under every verdict.
struct KindText {
  FindingKind kind;
  std::string_view name;     // "tag-claim": the JSON's "kind", docs/verdict.md
  std::string_view rule;     // "TagClaim": the SARIF rule's name
  std::string_view title;    // a heading: "The platform tag claims more than the binaries deliver"
  std::string_view meaning;  // what it means and what to do, for any finding of the kind (SARIF's help)
  bool integrity;            // the wheel fails its own integrity: never compatible nor degraded
};
const KindText& kind_text(FindingKind kind);
std::vector<KindText> kind_texts();  // every kind, in FindingKind's order
std::string kind_name(FindingKind kind);
// The wheel fails its own integrity (archive, record, unreadable-member): such a wheel is never
// compatible nor degraded, whatever route its member belongs to.
bool is_integrity(FindingKind kind);

// Why a symbol (or a version) is missing. why_name gives the JSON "classification" ("" for None).
enum class Why {
  None,
  LibraryMissing,    // library-missing: the library that should define it is itself missing
  SignatureChanged,  // signature-changed: the same qualified C++ name with other parameters
  CxxAbiMismatch,    // cxx-abi-mismatch: it differs only by the pre-C++11 std::string/std::list ABI
  VersionTooNew,     // version-too-new: exported, but not at the needed version
  Absent,            // absent: no export of that name at all
  UnknownExports,    // unknown-exports: a library in scope has no export table (a condition)
};
std::string why_name(Why why);
// In JSON, by name (nlohmann/json would write an enum's number).
template <typename BasicJson>
void to_json(BasicJson& j, FindingKind kind) {
  j = kind_name(kind);
}
template <typename BasicJson>
void to_json(BasicJson& j, Why why) {
  j = why_name(why);
}

// One reason, with what a person needs to act on it.
struct Finding {
  FindingKind kind = FindingKind::MissingLibrary;
  Severity severity = Severity::Error;
  std::string member;                   // the wheel member concerned; "" for the wheel as a whole
  std::string library;                  // the library concerned (a needed soname, the provider)
  std::string symbol;                   // mangled, as in .dynsym
  std::string demangled;                // for people; "" when the symbol is not C++
  std::string required_version;         // GLIBC_2.38, a CUDA major, a Python version, a glibc floor
  Why classification = Why::None;       // for missing-symbol and missing-version
  std::string explanation;              // one or two sentences for people
  std::string fix;                      // what would make it work, when we can say
  std::vector<std::string> candidates;  // what the image has instead (demangled signatures, versions)
  // missing-version: the symbols that need the version (the first k_floor_symbols_listed, demangled where
  // C++), and how many need it in all; what a user must fix behind a version floor.
  std::vector<std::string> symbols;
  std::size_t symbols_total = 0;
  std::vector<std::string> evidence;  // where it was found and by which rule, or every place tried
  std::string object;                 // the image library whose entry it is, when it is not the wheel's
                                      // ("/usr/lib/x86_64-linux-gnu/libfoo.so.1"); member is then ""
  std::vector<std::string> roots;     // every member whose load reaches it (JSON "loaded_by")
  // A distribution the wheel requires cannot be imported in the image (torch's libc10.so needs a glibc the
  // image lacks): the wheel cannot work there, whatever route holds its members.
  bool provider = false;
};

// How many of the symbols behind a version floor a finding names (Finding::symbols).
inline constexpr std::size_t k_floor_symbols_listed = 5;
// The symbols behind a version floor in words: "__isoc23_strtol", "__isoc23_strtol, __isoc23_sscanf and 3 more".
std::string symbols_words(const Finding& finding);
// Why a version's symbols are needed, where the cause is a known one: glibc 2.38's __isoc23_* redirections
// (headers of glibc 2.38+ in C2x/GNU mode), glibc 2.34's move of libpthread and libdl into libc, a GLIBCXX_
// version's GCC release. "" when none is known.
std::string known_cause(std::string_view version, const std::vector<std::string>& symbols);

// A finding in a short phrase, the same in the text report's headings, a route's reasons and a
// matrix cell: "missing library libfoo.so", "undefined symbol foo@V1  [absent]", "version GLIBC_2.38 of
// libc.so.6 not found", ...; the kind's name where no phrase says more.
std::string summary(const Finding& finding);
// What a finding requires, in the words pip uses (pypa/pip#14281): "requires glibc 2.38+ (image: 2.36)",
// "requires libcudart.so.12 (not found)", "requires NVIDIA driver 580.65.06+ (image: 535.104.05)", a C++
// symbol whose signature changed with what the library has instead; summary() where no such phrase says more.
// SARIF and JUnit messages and the Markdown summary use it.
std::string requirement(const Finding& finding);

// Checks of the wheel as a whole against the image, before any file is resolved: the wheel's tags
// (Python tag and ABI tag against the image's Pythons, abi3, manylinux_X_Y against its glibc, musllinux
// against musl, linux_<arch>), Requires-Python, and each ELF member's machine and class against the
// image's arch. Unknown image facts give Condition findings, never guesses.
std::vector<Finding> check_wheel_tags(const WheelProfile& wheel, const image::Image& image);

// Each Requires-Dist of the wheel with a version specifier, whose marker holds for `python` (null: the
// image's default) with no extra requested, that names a distribution installed there: one beside it in
// `with` (as pip installs it) or else the image's own. One that the installed version does not satisfy is a
// warning that says what `pip install --no-deps` (the pin silently broken) and plain `pip install` (the
// distribution replaced) would do. A requirement that does not parse is passed over.
std::vector<Finding> check_requires_dist(const WheelProfile& wheel, const image::Image& image,
                                         const image::Python* python, const std::vector<const WheelProfile*>& with);

// Why a needed symbol has no definition in `tables` (the export tables of the libraries in its load
// scope, in search order): signature-changed (the same qualified C++ name is exported with other
// parameters), cxx-abi-mismatch (it differs only by the pre-C++11 std::string / std::list ABI),
// version-too-new (the name is exported, but not at the needed version), or absent. Fills
// classification, demangled, explanation and candidates of a missing-symbol finding.
struct Classification {
  std::string classification;  // a why_name: check.cpp reads it with why_of
  std::string demangled;
  std::string explanation;
  std::vector<std::string> candidates;  // demangled (or name@version) of what is exported instead
  std::string provider;                 // the table's library where a candidate was found
};
Classification classify_missing_symbol(std::string_view mangled, std::string_view version,
                                       const std::vector<const exports::Table*>& tables);

// ---------------------------------------------------------------------------------------------------
// The whole check: `wheelcheck WHEEL --image NAME`.

enum class Verdict { Compatible, Degraded, Incompatible, Unknown };
std::string verdict_name(Verdict v);
// 0 compatible, 1 incompatible, 3 degraded, 4 unknown (README, `wheelcheck --help`).
int exit_code(Verdict v);
// Of several verdicts (a wheel x image matrix), the one the exit code reports: incompatible, then
// unknown, then degraded, then compatible.
Verdict worst(Verdict a, Verdict b);

// How one DT_NEEDED entry was resolved, for people and machines (libtree's evidence).
struct NeedReport {
  std::string requester;  // the object whose entry it is (member path or image path)
  std::string name;
  bool found = false;
  resolve::How rule = resolve::How::None;  // the loader's rule that found it (resolve::how_name)
  std::string where;                       // the path it resolved to
  resolve::Attempt by;                     // the attempt that found it (its rule, entry and owner)
  std::vector<resolve::Attempt> tried;     // every place looked at before, in order
};
// The report of one resolved need, its requester named as the caller names it.
NeedReport need_report(const resolve::Need& need, std::string requester);

struct MemberReport {
  std::string path;
  std::string kind;               // "extension", "library", "executable"
  bool loads = true;              // no Error finding for it
  std::vector<NeedReport> needs;  // its load tree, breadth first
  std::size_t symbols_bound = 0;
  std::size_t symbols_unbound = 0;
  std::size_t symbols_interpreter = 0;
  // What fails in this member's own load, whoever else shares the cause (the loader's view: every
  // member that reaches a broken dependency fails, not only the first).
  std::vector<std::string> missing_libraries;  // DT_NEEDED names nothing satisfies
  std::vector<std::string> missing_versions;   // "GLIBC_2.38 of libc.so.6"
  struct Unresolved {
    std::string object;  // the wheel object whose undefined symbol it is
    std::string symbol;
    std::string version;
    // "" (nothing in scope defines it), "missing-library" (its library is not found), "missing-version"
    // (its version node is not defined), "unknown-exports" (an object without an export table may define it)
    std::string because;
  };
  std::vector<Unresolved> unresolved;  // symbols nothing in scope defines (not those of a missing library)
};

// A route: a set of members, core or optional, and the gates that turn it off (db/rules).
struct Route {
  std::string name;
  std::string rule_set;
  std::string summary;
  bool optional = false;
  bool available = true;
  std::vector<std::string> members;                        // the members it covers in these wheels
  std::vector<std::string> reasons;                        // why it is unavailable: "MEMBER: why"
  std::vector<std::string> reason_members;                 // the MEMBER of each reason (not in the JSON)
  std::vector<std::string> conditions;                     // what it depends on that is unknown
  std::vector<std::pair<std::string, std::string>> gates;  // set when it is unavailable
};

// The NVIDIA driver a wheel needs in an image: the highest of what its CUDA runtime needs and what its
// PTX needs to be JIT-compiled where it must be (inspector/verdict/cuda_check.cpp).
struct DriverNeed {
  std::string version;             // "580.65.06"
  std::string because;             // "the CUDA 13 runtime (libcudart.so.13 of lib/libfoo.so)", or the PTX that sets it
  std::string image_driver;        // the image's driver, "" when unknown
  std::optional<bool> satisfied;   // against the image's driver; nullopt when that is unknown
  std::vector<std::string> notes;  // the other floors considered and why they are lower or conditional
};

struct Report {
  std::string schema{k_verdict_schema};
  Verdict verdict = Verdict::Compatible;
  std::string wheel;  // file name
  std::string wheel_sha256;
  std::string image;
  std::string image_summary;
  std::vector<Finding> findings;  // worst first
  std::vector<std::string> conditions;
  std::vector<Route> routes;
  std::vector<MemberReport> members;
  std::vector<std::string> notes;  // what the check assumed (preloaded distributions, install folder)
  struct PythonUsed {
    std::string version;
    std::string executable;     // "" when the image does not say
    std::string site_packages;  // where the wheel is installed
  };
  std::vector<std::string> assumptions;  // facts taken for granted (--assume, a description's "assumed")
  std::optional<PythonUsed> python;      // the Python its tags select; absent when none fits, or none is described
  std::optional<DriverNeed> driver;      // absent when nothing in the wheel needs an NVIDIA driver
};

// A condition accepted in a settings file ([[accept]] of wheelcheck.toml): a condition finding it matches
// does not make the verdict unknown; it stays in the report as information saying who accepted it, why and
// until when. The settings reader drops an expired acceptance (with a warning) before it gets here.
struct Acceptance {
  std::string rule;     // a finding kind or a classification ("driver", "unknown-exports"); "" any
  std::string wheel;    // a glob (fnmatch) on the wheel's file name; "" any
  std::string image;    // the image's name; "" any
  std::string match;    // a part of the finding's explanation; "" any
  std::string reason;   // why it is accepted (required)
  std::string expires;  // YYYY-MM-DD (required)
  std::string source;   // where it is written ("wheelcheck.toml:12")
};
// Whether `acceptance` covers the condition `f` of `wheel` (a file name) on `image`.
bool accepts(const Acceptance& acceptance, const Finding& f, const std::string& wheel, const std::string& image);

struct CheckOptions {
  std::vector<const WheelProfile*> with;                                 // wheels installed side by side (--with)
  const std::map<std::string, exports::Table>* memory_tables = nullptr;  // an image probed on the fly
  const rules::RuleSet* rules = nullptr;  // routes and gates (db/rules); none: every member is core
  // The packaging policies (image::Db::policies()): a packaging target's check, and the tag-claim finding
  // of every check. None: a packaging target cannot be judged (unknown) and tag claims are not checked.
  const policy::Policies* policies = nullptr;
  const std::vector<Acceptance>* accepted = nullptr;  // conditions accepted in a settings file
  // Which distribution ships a library (db/providers.json): a missing library's fix names it (libtorch_npu.so:
  // "install torch-npu"). None: the fix names no package.
  const std::vector<toolkit::Provider>* providers = nullptr;
};
// An image with `policy` set (a packaging target) is judged as that policy does (policy_check.cpp).
Report check(const WheelProfile& wheel, const image::Image& image, const CheckOptions& options = {});

// The finding that decided the verdict, the worst of them: for incompatible an error outside the optional
// routes that are off, for unknown such a condition, for degraded an error inside one; null for compatible.
const Finding* reason(const Report& report);
// One line per way the wheel fails its own integrity, from its integrity errors ("W.whl fails its own
// integrity check (pkg/x.py: RECORD: ...): do not pin it"); empty for an intact wheel.
std::vector<std::string> integrity_problems(const Report& report);
// The same for a wheel read but checked against no image (a lock's file no installer picks for it): its
// archive, RECORD and members judged alone.
std::vector<std::string> integrity_problems(const WheelProfile& wheel);
// The exit code a report stands for: its verdict's, except 2 (bad input) for a wheel that fails its own
// integrity (an error of kind archive, record or unreadable-member), whatever the verdict.
int exit_code(const Report& report);
std::string render_text(const Report& report, bool color);
nlohmann::ordered_json to_json(const Report& report);
// One finding and one route as the verdict document writes them (findings[], routes[]), and read back
// (inspector/output/cell_json.cpp): an unknown kind or severity throws Error(BadInput).
nlohmann::ordered_json finding_to_json(const Finding& finding);
nlohmann::ordered_json route_to_json(const Route& route);
Finding finding_from_json(const nlohmann::ordered_json& j);
Route route_from_json(const nlohmann::ordered_json& j);
// {"needs", "because", "image_driver", "satisfied", "notes"}: a report's "driver" (null when absent).
nlohmann::ordered_json driver_to_json(const DriverNeed& driver);

}  // namespace wheelcheck::verdict
