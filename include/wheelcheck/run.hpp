// One run of the check, many renderings: the wheels x images a command asks about, each checked the one
// way (the rule set, the packaging policies, what the wheel targets, the assumptions), into typed cells.
// check, gates, environments and the scan all take their answers from here (run::run, in
// inspector/verdict/run.cpp); each command only renders the result (bloaty's BloatyMain / RollupOutput),
// with the renderers of inspector/output/.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wheelcheck/exports.hpp"
#include "wheelcheck/gates.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/published.hpp"
#include "wheelcheck/rules.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::run {

// An image to check against, with the export tables of a root probed on the fly kept alive beside it.
struct Target {
  image::Image image;
  std::shared_ptr<std::map<std::string, exports::Table>> tables;
};

// Routes and gates: --rules (a rule set of db/rules, a rules file, or none), else the rule set whose
// applies_to names the wheel. Throws Error(Usage) for a name that is no rule set (with the closest).
class RuleChoice {
 public:
  RuleChoice(const std::string& rules, const std::string& rules_dir);
  const rules::RuleSet* for_wheel(const WheelProfile& wheel) const;

 private:
  bool m_none;
  std::vector<rules::RuleSet> m_sets;
  std::optional<rules::RuleSet> m_chosen;
};

// Why pip would not install the wheel on the image, in words ("x86_64 wheel, aarch64 image", "cp311 wheel, the
// image's Python is 3.12", "Requires-Python >=3.13, the image's Python is 3.12"); "" when it would. Only what an
// installer decides by: the platform tag (machine, OS, manylinux/musllinux floor against the image's C
// library), the Python and ABI tags, Requires-Python. A member's machine, a local version label and a project
// name never make a wheel "not targeted": the loader's verdict stands, and a label's claim is a finding.
std::string not_targeted(const WheelProfile& wheel, const image::Image& image);
// Why the wheel's local version label or project name says it is a build for another image than this one ("a
// CANN 8.5.0 build, a CANN 9.0.0 image", "a CUDA build, a TOPS image", "a CANN build for 910C, an image with
// Ascend 910B"); "" when they say nothing or agree (toolkit::of_label, of_name, mismatch). A claim, never a verdict:
// check reports it as a label-claim warning beside the loader's verdict, and the scan, over the images it was not asked
// about by name, uses it to choose which build belongs to each image (its pins, and which cells it reports).
std::string label_elsewhere(const WheelProfile& wheel, const image::Image& image);

// What every check of a run shares.
struct Context {
  std::vector<const WheelProfile*> with;  // wheels installed beside it (--with)
  const RuleChoice* rules = nullptr;
  const image::Db* db = nullptr;                               // its packaging policies
  const std::vector<verdict::Acceptance>* accepted = nullptr;  // conditions accepted in a settings file
};

// One wheel against one image.
struct Cell {
  std::string image;  // the image's name
  bool targeted = true;
  std::string not_targeted;  // why not, in words ("" when targeted)
  verdict::Report report;
  std::string headline;  // the reason that decided the verdict, in words ("" for compatible)
};
Cell check(const WheelProfile& wheel, const Target& target, const Context& context);

// --- A cell as JSON (inspector/output/cell_json.cpp): one shape at three sizes -----------------------------

// Each size holds the one before it. A cell the wheel is not for says "not-targeted" as its verdict (it is
// never usable there; its exit code stays incompatible's, 1) and why in not_targeted or its headline.
enum class Size {
  Record,    // image, targeted, verdict, headline, gates, conditions (findings and routes empty): the scan
             // state's record, a scan report's cell the wheel is not for
  Result,    // and every finding and route: a scan report's cell (docs/scan.schema.json #/$defs/result)
  Document,  // and the whole report (members, notes, driver, Python; the image as {name, summary}):
             // check --json, an environment's packages[].report (docs/verdict.schema.json)
};
inline constexpr const char* k_not_targeted = "not-targeted";
nlohmann::ordered_json to_json(const Cell& cell, Size size);
// A cell read back from any size: its report holds what that size carries (a record: no findings or
// routes). Throws Error(BadInput) for a verdict, finding kind or severity it does not know.
Cell cell_from_json(const nlohmann::ordered_json& j);
// The gates a cell's routes that are off set, as `wheelcheck gates` exports them for its report alone (its "gates").
std::vector<std::pair<std::string, std::string>> cell_gates(const Cell& cell);

// The one rule that decides what a report's headline names, whatever words a rendering says it in (run's
// summary, SARIF's and JUnit's pip phrases): for degraded and incompatible the route that is off (one the
// wheel's own members turn off first, a core one first for incompatible), else the finding that decided the
// verdict (verdict::reason), else the first condition; nothing for compatible.
struct Decided {
  const verdict::Route* route = nullptr;
  const verdict::Finding* finding = nullptr;
  std::string condition;
};
Decided decided(const verdict::Report& report, const WheelProfile* wheel = nullptr);

// The reason that decided a report's verdict in one line: the route that is off and why ("route
// flaggems-cpp (optional) is off: flag_gems/lib/libtriton_jit.so: undefined symbol ... [cxx-abi-mismatch]"),
// else the deciding finding's summary; "" for compatible.
std::string headline(const verdict::Report& report);
// The same, a route the wheel's own members turn off first (with wheels beside it, their routes are checked
// too: FlagTree's TLE loader in FlagCX's check).
std::string headline(const verdict::Report& report, const WheelProfile* wheel);

// The verdict a set of cells stands for: the worst over the images the wheel targets (an image it is not
// for does not make `--image all` fail); the worst of all when it targets none of them.
verdict::Verdict overall(const std::vector<const Cell*>& cells);

// --- One run over an image: the one loop every command shares ------------------------------------------

// What a package is to a run: asked about (checked: its verdict counts), installed beside the asked-about ones
// and judged on its own all the same (--with: its routes that are off turn their gates off), or only a
// provider (the scan's environment: it supplies libraries and symbols and is not judged).
enum class Role { Checked, Beside, Provider };

// One package of a run on one image: a wheel read, or why it could not be.
struct Package {
  const WheelProfile* wheel = nullptr;  // null: it could not be read (`error` says why)
  std::string error;
  Role role = Role::Checked;
};

// How the packages are installed: all together in one site-packages (a lock, an environment: each provides
// for every other), or each asked-about package alone with only the packages beside it (wheels named one by
// one on the command line: a matrix of independent answers).
enum class Installed { Together, Alone };

// Reading the export tables an image's published distributions lack (published::fill), when a wheel of the
// run needs them: once per image and run, with one bound for every command (an index the image merely
// names is asked twice at most, with a 5 s connect timeout: it must not hold up a runner without network).
struct Published {
  net::ClientOptions client;   // the command's own client options; the bound above is applied to a copy
  published::Options options;  // mode, inspect limits, cache, progress log
  std::function<void(const std::string&)> warn;  // what could not be read, for people
};
void fill_published(Target& target, const std::vector<const WheelProfile*>& wheels, const Published& published);

// What keeps a run's gates from vouching for it (exit 2, the gates fail closed), as a fact: a package that fails
// its own integrity (its archive or RECORD: verdict::integrity_problems), a lock's file that is not the one its
// hash names, a package that could not be read. `text` is the line printed ("W fails its own integrity
// check (...): do not pin it", "NAME: why").
struct Problem {
  enum class Kind { OwnIntegrity, LockHash, Unread };
  Kind kind = Kind::Unread;
  std::string text;
  bool operator==(const Problem&) const = default;
};
std::vector<std::string> texts_of(const std::vector<Problem>& problems);

// One image's run: every package judged on its own (its own members; the others only provide), the
// environment's verdict, and what keeps its gates from vouching for it.
struct Environment {
  std::string image;
  std::vector<Cell> cells;              // one per package read and not a mere provider, in package order
  std::vector<std::size_t> package_of;  // cells[i] is the cell of packages[package_of[i]]
  std::vector<Role> roles;              // of each cell
  verdict::Verdict verdict = verdict::Verdict::Compatible;  // environment_verdict over its cells
  // Why its gates cannot vouch for it: each integrity problem of a package (verdict::integrity_problems),
  // then each package that could not be read ("NAME: why"). Non-empty: the gates fail closed, exit 2.
  std::vector<Problem> problems;
  const Cell* cell_of(std::size_t package) const;  // null for a package without a cell
};
// The one loop: fills the image's published tables the packages need (when `published` is given), then
// checks each package that is not a mere provider with run::check, the others as providers (Installed).
Environment judge(const std::vector<Package>& packages, Target& target, const Context& context, Installed how,
                  const Published* published);
// --- The run: every package on every image, one answer ------------------------------------------------------

// What a command asks: on each image, the packages installed there (the same wheels everywhere for wheels
// named on the command line; a lock's picks differ by image), and how.
struct Request {
  struct On {
    Target* target = nullptr;
    std::vector<Package> packages;  // read, or why not (a package that could not be read is a problem)
    // A lock's packages with no wheel for this image, or whose wheel could not be read: each makes the
    // image's environment incompatible.
    std::vector<std::string> missing;
    // Problems of the run on this image that no cell shows (a lock's wheel no installer picks here that
    // fails its own integrity): exit 2 and fail-closed gates, as a checked wheel's would.
    std::vector<Problem> problems;
  };
  std::vector<On> images;
  Context context;
  Installed how = Installed::Alone;
  const Published* published = nullptr;  // reading the export tables published distributions lack
};

// Its one answer: each image's environment, the verdict, what keeps the gates from vouching, the exit code.
struct Result {
  std::vector<Environment> environments;  // one per image, in the request's order
  // The one rule: installed alone (wheels named one by one), the worst over the asked-about packages of
  // each one's verdict over the images it is for (run::overall: an image a wheel is not for does not make
  // `--image all` fail), degraded at worst by a package beside them whose routes are off; installed
  // together (an environment), the worst environment, incompatible where a package has no wheel.
  verdict::Verdict verdict = verdict::Verdict::Compatible;
  std::vector<Problem> problems;  // every environment's, each once: non-empty, exit 2, the gates fail closed
  // 2 with problems; else gates' 0 (WHEELCHECK_VERDICT carries the verdict), check's verdict::exit_code.
  int exit_code(bool gates) const;
  // The gates of every environment under the run's verdict (gates_of).
  gates::Result gates(const std::vector<rules::RuleSet>& fail_closed_sets, const gates::Options& options = {}) const;
};
// The run every command makes (check, gates, environments; the scan per new wheel): each image judged by the
// one loop (judge, with its one published-table fill and bound), then the one verdict rule.
Result run(const Request& request);

// The gates of environments (one per image; `gates` takes one): merged over every cell's report (checked and
// beside), under the environments' verdict; failed closed over `fail_closed_sets` (gates::close) when an
// environment has problems.
gates::Result gates_of(const std::vector<const Environment*>& environments,
                       const std::vector<rules::RuleSet>& fail_closed_sets, const gates::Options& options = {});

// An environment on one image: packages installed together, each judged on its own (its own members,
// resolved and judged under its own METADATA and RECORD; the other packages only provide libraries and
// symbols). `checked` are the packages asked about; `beside` those installed beside them and not asked
// about (--with). The environment's verdict is the worst of the checked packages'; a package beside them
// whose routes are off (FlagCX's libflagcx.so, which FlagTree's TLE loader also loads) makes it degraded at
// worst, since its gates turn those routes off.
verdict::Verdict environment_verdict(const std::vector<const Cell*>& checked, const std::vector<const Cell*>& beside);
// The routes of a beside package that are off, each in a line ("route flagtree-tle-dist (optional) is off:
// flagcx/libflagcx.so: missing library libcudart.so.12"): what its report adds to the environment's.
std::vector<std::string> routes_off(const Cell& cell);

}  // namespace wheelcheck::run
