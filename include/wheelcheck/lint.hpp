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
//      distribution that ships it (the wheel itself, db/providers.json and the db's image distributions as
//      include/wheelcheck/toolkit.hpp reads them, the system libraries a manylinux policy allows); needed but not
//      declared (underlinking), a declared library-only distribution nothing links (overdepending), C++ symbols only an
//      undeclared distribution defines (c10d::), and torch bound with no pin on its release.
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
//   8. exec-stack: a member whose PT_GNU_STACK asks for an executable stack (or which has none where that means
//      one): glibc 2.41 and later refuse to dlopen it, whatever the image (inspector/verdict/exec_stack.cpp, which
//      the image check shares).
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
#include "wheelcheck/toolkit.hpp"  // Options::providers: the table a caller loads once (toolkit::load_providers)
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::policy {
class Policies;
}  // namespace wheelcheck::policy
namespace wheelcheck::variant {
struct File;
}

namespace wheelcheck::lint {

inline constexpr const char* k_lint_schema = "wheelcheck-lint/1";

struct Options {
  const std::vector<toolkit::Provider>* providers = nullptr;  // toolkit::load_providers
  const policy::Policies* policies = nullptr;                 // tag-floor and tag-claim; none: those are not judged
  const rules::RuleSet* rules = nullptr;  // own_symbols: the wheel's own symbols (unloadable-symbol)
  const image::Db* db = nullptr;          // the system libraries' export tables (debian13's, x86_64)
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
