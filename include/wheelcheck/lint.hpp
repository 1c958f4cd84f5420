// The publisher check (`wheelcheck lint`): what a wheel claims -- its local version label and project name, its
// tags, its Requires-Dist, its METADATA and WHEEL -- against what its binaries do, with no image. For the people
// who publish wheels: a defect caught before upload is one no image check has to explain later.
//
// Checks (inspector/lint/lint.cpp, one function each; findings are verdict::Findings, so that every renderer,
// SARIF and JUnit included, reads them as it reads a check's):
//   1. label-claim: a toolkit the label or name claims (+cu130, +cuda13.3, -cuda, +cann9.0.0, +dtk2604, ...)
//      against the runtimes the members need (libcudart.so.12 is CUDA 12's) and the ones it declares; a torch the
//      label claims (+torch2.7.1, +torch.2.9.1, cu12torch2.6) against the torch it pins.
//   2. undeclared-dependency / unused-dependency / unpinned-dependency: each needed soname mapped to the
//      distribution that ships it (the wheel itself, db/providers.json, the db's image distributions, the
//      system libraries a manylinux policy allows); needed but not declared (underlinking), a declared
//      library-only distribution nothing links (overdepending), C++ symbols only an undeclared distribution
//      defines (c10d::), and torch bound with no pin on its release.
//   3. metadata / root-is-purelib / tag-pure-binary: METADATA as installers read it (a blank line ends the
//      headers; duplicated single fields; an unknown Metadata-Version; a Requires-Dist that does not parse; Name
//      and Version against the file name); Root-Is-Purelib against native members; a pure or `none` ABI tag on
//      native code.
//   4. tag-floor / tag-claim: for linux_* tags, the manylinux policy the binaries are consistent with and the
//      symbols that set the floor (glibc 2.38's __isoc23_* redirections named); a manylinux tag above it.
//   5. unloadable-symbol: an undefined, non-weak symbol none of the object's own needs (transitively, in the
//      wheel and the allowed system libraries whose tables the db has) defines, or one the rule set says is the
//      wheel's own (FlagCX's devApiBackend): dlopen(RTLD_NOW) fails on every machine. The interpreter's global
//      scope (python's Py* API, libc, libm, the loader) is searched first, so a library with no DT_NEEDED is judged.
//   6. variant-claim / variant-metadata: a wheel variant's properties (PEP 825 draft) against its label and its
//      binaries (sm_arch against the fatbins, the CUDA bounds against libcudart.so.N, rocm_version against the
//      label and libamdhip64.so.N, abi_dependency :: torch against the torch pin), and its variant.json as uv
//      validates it and against the release's -variants.json (inspector/lint/variants.cpp).
//   7. extension-suffix / module-init: CPython's import against the Pythons the wheel's tags install it on: a member
//      named for another Python (.cpython-311- in a cp312 wheel) is never imported, one without the PyInit_ its
//      file name asks for is refused (inspector/verdict/import_rules.cpp, which the image check shares).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/ci.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/rules.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::policy {
class Policies;
struct DependencyLibrary;
}  // namespace wheelcheck::policy
namespace wheelcheck::variant {
struct File;
}

namespace wheelcheck::lint {

inline constexpr const char* k_lint_schema = "wheelcheck-lint/1";

// A distribution that ships libraries (db/providers.json).
struct Provider {
  std::vector<std::string> distributions;  // normalized names; any of them provides
  // "package": only that distribution ships them (torch's libc10.so): needed and not declared is an error;
  // "runtime": a library carrier whose libraries an image's toolkit may also provide (nvidia-cublas-cu12).
  std::string kind;
  std::string toolkit, toolkit_version;  // "cuda", "12": the toolkit release its libraries belong to
  std::vector<std::string> libraries;    // the sonames it ships, exactly ("libc10.so"; Debian's "libc10.so.2.6" is
                                         // another build's: project_of)
  std::vector<std::string> symbols;      // fnmatch patterns of mangled names only it defines
  std::string namespaces;                // those patterns for people ("c10::, c10d::, at::, torch::")
  std::string abi;                       // why a wheel that binds its symbols pins its release ("" when not)
  std::string source;                    // "db/providers.json", or the image distribution it was read from
};
// db/providers.json, then each library of the db's image distributions (a "package" provider of that name).
// Throws Error(BadInput) naming the file when it is malformed; an absent file gives none.
std::vector<Provider> load_providers(const image::Db& db);
// The same, loaded once per db folder and kept for the process (every check of a run reads it); empty when the
// file is absent or malformed (`wheelcheck lint` reports a malformed one).
const std::vector<Provider>& cached_providers(const image::Db& db);
// The provider of a needed soname ("libtorch_npu.so" -> torch-npu): a distribution that ships that very soname;
// null when none is known. Another build's soname of the same library is not shipped by it: PyPI's torch ships
// libtorch.so, and Debian's libtorch.so.2.6 is no torch wheel's (installing torch does not provide it).
const Provider* provider_of(const std::vector<Provider>& providers, const std::string& soname);
// The libraries the wheel's members need that a distribution it declares (Requires-Dist, without an extra) ships:
// what policy::analyze takes from that distribution's folder where a member's RPATH or RUNPATH looks there
// (PyTorch's $ORIGIN/../../nvidia/cuda_runtime/lib). `wheelcheck lint` judges the tag's claim with them.
std::vector<policy::DependencyLibrary> dependency_libraries(const WheelProfile& wheel,
                                                            const std::vector<Provider>& providers);
// The project whose library `soname` is, in its own build or another's under a soname that carries a release
// ("libc10.so.2.6", Debian's build of torch's libc10.so -> torch): what the library is, never who ships it (a fix
// that says "install" asks provider_of). Null when none is known.
const Provider* project_of(const std::vector<Provider>& providers, const std::string& soname);

// METADATA's Version against the file name's, as pip acts on a wheel whose two differ (pip 23.2.1, asked by
// tests/unit/test_metadata_referee.cpp): it installs the wheel from its path or URL (as METADATA's version) and
// refuses it where it finds it by name in an index or --find-links, pinned or not ("has inconsistent version").
// The finding's evidence says what each command does ("pip install x==1.1 (...): refuses it"). A metadata finding of
// `severity` (lint: an error; the image check: a warning), or nullopt when the versions agree or one is absent.
std::optional<verdict::Finding> version_mismatch(const WheelProfile& wheel, verdict::Severity severity);

struct Options {
  const std::vector<Provider>* providers = nullptr;
  const policy::Policies* policies = nullptr;  // tag-floor and tag-claim; none: those are not judged
  const rules::RuleSet* rules = nullptr;       // own_symbols: the wheel's own symbols (unloadable-symbol)
  const image::Db* db = nullptr;               // the system libraries' export tables (debian13's, x86_64)
  const std::vector<verdict::Acceptance>* accepted = nullptr;  // [[accept]]: the finding becomes information
  const variant::File* release = nullptr;  // the release's -variants.json (a variant's copy is compared with it)
};

enum class Status { Clean, Warnings, Errors };
std::string status_name(Status s);  // "clean", "warnings", "errors"

// What the wheel claims and what its binaries show, in words (the text and JSON say both).
struct Claims {
  std::vector<std::string> said;   // "local version label +cuda13.3: CUDA 13.3", "tags cp312-cp312-linux_x86_64", ...
  std::vector<std::string> shown;  // "flagcx/lib/libflagcx.so needs libcudart.so.12 (CUDA 12)", "consistent with ..."
};

struct Report {
  std::string wheel;  // file name
  std::string sha256;
  std::string source;     // the path or URL it was named by
  std::string integrity;  // "full", "headers-only"
  Claims claims;
  std::vector<verdict::Finding> findings;  // worst first
  std::vector<std::string> notes;          // what could not be judged, and why
  Status status = Status::Clean;           // from the findings' severities
  bool intact = true;                      // false: the wheel fails its own integrity (archive, RECORD)
};

Report lint(const WheelProfile& wheel, const Options& options);

// 0 clean (information only), 1 an error-level finding, 3 warnings only, 2 a wheel that fails its own integrity.
int exit_code(const Report& report);
int exit_code(const std::vector<Report>& reports);  // the worst: 2, then 1, then 3, then 0

// The JSON of one wheel's report (docs/lint.schema.json #/$defs/wheel), and the document of a run.
nlohmann::ordered_json to_json(const Report& report);
nlohmann::ordered_json document(const std::vector<nlohmann::ordered_json>& wheels, int exit_code);
std::string render_text(const Report& report, bool color);
std::string render_markdown(const std::vector<Report>& reports);
// GitHub workflow commands (::error file=...::message), one per warning and error.
std::string render_github(const std::vector<Report>& reports);
// The worst finding above information in one line ("MEMBER: summary  [kind]"), as the scan prints it under a
// wheel; "" when there is none.
std::string headline(const Report& report);
// The report as a case of CI's formats (SARIF's run "wheelcheck/publisher/", JUnit's suite "publisher"): its
// verdict errors (incompatible's place), warnings (degraded's) or clean; `where` locates it (path or URL).
ci::Case publisher_case(const Report& report, const std::string& where);

// The lint cache (`wheelcheck lint` on a wheel the profile cache knows): a report in the cache's form, every field
// kept, and read back as it was (nullopt for a damaged or foreign text). k_lint_cache_format is raised whenever
// Report or Finding gains a field, so an older entry is a miss (the entry's name carries it: cmd_lint.cpp).
inline constexpr int k_lint_cache_format = 1;
std::string report_to_cache(const Report& report);
std::optional<Report> report_from_cache(std::string_view text);

}  // namespace wheelcheck::lint
