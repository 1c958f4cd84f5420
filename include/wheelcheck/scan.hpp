// The nightly scan: new wheels of some projects on package indexes, each checked against images, a
// report (JSON, Markdown, HTML), and pin advice per image and project. docs/scan.schema.json is the
// report's format; inspector/scan/scan.cpp explains the algorithm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/image.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/remote.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::scan {

struct Options {
  std::vector<std::string> indexes;   // simple API URLs (PEP 503/691)
  std::vector<std::string> projects;  // as written; normalized for URLs
  std::vector<std::string> images;    // db names or files; with targets empty: every FlagOS db image it is for
  std::vector<run::Target> targets;
  std::vector<std::string> assume;  // FACT=VALUE, applied to every image (image::assume)   // images resolved by the
                                    // caller (the command line's --image), first
  std::string state_dir;            // what was seen, and index pages for conditional requests ("": none kept)
  int shard_index = 1;              // 1-based
  int shard_count = 1;
  // `scan --merge`: the state folders of the shard runs of one scan, joined into the report, pins and state
  // (state_dir) one process would write; nothing is fetched or checked (inspector/scan/shards.cpp).
  std::vector<std::string> merge;
  std::optional<std::string> since;  // YYYY-MM-DD: only files uploaded on or after it are new
  remote::Mode mode = remote::Mode::Auto;
  std::string rules;       // as `check --rules`: "" (the rule set for the wheel), a name, a file, none
  InspectOptions inspect;  // the archive limits each wheel is read under
  std::function<void(const std::string&)> progress;  // one line at a time, for a terminal
  // Requests overlapped across wheels (inspector/scan/ahead.hpp): the pages and wheels ahead of the one being
  // checked are fetched and read by `jobs` threads, at most `per_host` requests at once on one host. 0: one at a time.
  std::size_t jobs = 8;
  std::size_t per_host = 8;
  // The environment every new wheel is checked in (`scan --with`: wheels or a lock's set, as installed on
  // each image): installed beside it, less the one of its own project (the new wheel replaces it), so the
  // pins say what works with the rest of the locked set. Empty: the image alone.
  std::function<std::vector<const WheelProfile*>(const image::Image&)> environment;
  std::vector<std::string> environment_args;  // as given, for the report ("environment")
  std::vector<verdict::Acceptance> accepted;  // conditions accepted in a settings file
};

// Parses "i/N" (1 <= i <= N). Throws Error(Usage).
std::pair<int, int> parse_shard(const std::string& text);
// The shard (1..N) a wheel's file name falls in: a hash of the name alone, so stable across runs and machines
// and under re-listing (a wheel's shard does not change when others are added).
int shard_of(const std::string& filename, int count);
bool in_shard(const std::string& filename, int index, int count);

// --- The report: one typed value (docs/scan.schema.json is its JSON, inspector/output/report_json.cpp) -----------

using Gates = std::vector<std::pair<std::string, std::string>>;  // VARIABLE=VALUE, in the routes' order

// One image's cell of a new wheel, as the report holds it (#/$defs/result): the run's cell at the report's size
// (findings and routes where the wheel is for the image; a record, without them, where it is not), the gates its
// routes set (kept: a record has no routes to compute them from), and whether the scan counts it.
struct Checked {
  run::Cell cell;
  Gates gates;
  bool counted = true;  // the scan counts it (exit code, step verdict): targeted, and no label names another build
};
// A cell of the run in the report: its gates, and whether the scan counts it (a cell the wheel is not for never is).
// The report's JSON holds it at its size (to_json below): what the scan keeps of a wheel is what that says.
Checked checked_of(const run::Cell& cell, bool counted);

// A listed wheel the scan found new, and what its check found.
struct Wheel {
  std::string filename, project, version;
  std::string url;  // credentials redacted
  std::string sha256;
  std::optional<std::uint64_t> size;
  std::optional<std::string> upload_time;
  bool yanked = false;
  std::string yanked_reason;
  bool is_new = true;                     // "new": every wheel a scan reports is
  std::string integrity;                  // "full", "headers-only"
  std::optional<std::string> error;       // why it could not be fetched, read or checked (set: exit code 2)
  std::vector<Checked> results;           // one per image, in the scan's order
  std::optional<lint::Report> publisher;  // the wheel on its own (`wheelcheck lint`), once it was read
  bool failed() const { return error.has_value(); }
};

// Pins: per image and project, the newest usable file, and why each newer one was passed over.
struct Pick {
  std::string filename, version;
  verdict::Verdict verdict = verdict::Verdict::Compatible;  // compatible, degraded or unknown
  Gates gates;
  std::string url;  // credentials redacted
  std::string sha256;
  std::optional<std::string> variant;  // the wheel variant's label
  std::vector<std::string> undecided;  // the release's variants whose support on the image is unknown
};
struct Passed {  // a newer file passed over, and why
  std::string filename, version, reason;
};
struct Pin {
  std::string image, project;
  std::optional<Pick> pick;  // none: nothing usable
  std::vector<Passed> passed;
};

struct Shard {
  int index = 1, count = 1;  // a merge: 0 of the shards' count
  bool merged = false;
};

// The report's counts (not-targeted cells apart).
struct Summary {
  std::uint64_t wheels_seen = 0, fresh = 0, checked = 0, errors = 0;
  std::uint64_t compatible = 0, degraded = 0, incompatible = 0, unknown = 0, not_targeted = 0;
};

inline constexpr const char* k_report_schema = "wheelcheck-scan/1";

// What a report's wheels and pins come to: the counts, whether one failed, whether a counted cell is incompatible,
// and the worst counted verdict of the new wheels.
struct Tally {
  Summary summary;
  bool failed = false, incompatible = false;
  verdict::Verdict worst = verdict::Verdict::Compatible;
};

// The new wheels and pins of a report kept where the scan wrote them (its state), read one at a time: a scan's
// report is never held whole (Report::each_wheel gives the held ones, then these).
class Stored {
 public:
  virtual ~Stored() = default;
  virtual std::uint64_t wheel_count() const = 0;
  // Each wheel in the report's order; the reference is good for the call only.
  virtual void each_wheel(const std::function<void(const Wheel&)>& fn) const = 0;
  virtual void each_pin(const std::function<void(const Pin&)>& fn) const = 0;
  // The pins of one project (every image), in the report's order.
  virtual void each_pin_of(const std::string& project, const std::function<void(const Pin&)>& fn) const {
    each_pin([&](const Pin& p) {
      if (p.project == project) fn(p);
    });
  }
};

struct Report {
  std::string generated_at;
  std::string wheelcheck_version;
  std::vector<std::string> indexes;  // credentials redacted
  std::vector<std::string> projects;
  std::vector<std::string> images;  // the report's columns
  Shard shard;
  std::optional<std::string> since;
  std::vector<std::string> environment;  // --with, as given
  std::uint64_t wheels_seen = 0;         // the wheel files the indexes list
  std::vector<Wheel> wheels;             // the new ones, held (a report read back, a test)
  std::vector<Pin> pins;
  std::shared_ptr<const Stored> stored;  // the new ones and the pins a scan kept in its state, after those held
  std::vector<std::string> warnings;
  std::vector<std::string> errors;  // what makes the exit code 2, each said as an error too

  std::uint64_t wheel_count() const { return wheels.size() + (stored ? stored->wheel_count() : 0); }
  void each_wheel(const std::function<void(const Wheel&)>& fn) const;
  void each_pin(const std::function<void(const Pin&)>& fn) const;
  void each_pin_of(const std::string& project, const std::function<void(const Pin&)>& fn) const;
  // The counts and outcome of every wheel (one pass over them; computed once for a stored report).
  Tally tally() const;
  Summary summary() const { return tally().summary; }

  // 0 nothing new is incompatible, 1 a new wheel is incompatible with an image its tags target (a counted
  // cell), 2 an index unreadable after the retries or a wheel that could not be read (errors says each).
  int exit_code() const;
  // The worst verdict of the new wheels on the images they are counted on: compatible when none fails.
  verdict::Verdict worst_new_verdict() const;
  bool a_shard() const { return shard.count > 1 && !shard.merged; }  // one shard's share, not a whole scan

 private:
  mutable std::shared_ptr<const Tally> m_tally;  // a stored report's, once computed
};

// The report's JSON (report.json) and back: the one writer and the one reader (inspector/output/report_json.cpp).
// The readers throw Error(BadInput) naming what a document lacks.
nlohmann::ordered_json to_json(const Report& report);
// The same JSON written as it is made (output::dump's bytes), a wheel at a time: a report of any size.
void write_json(const Report& report, const std::function<void(std::string_view)>& out);
Report report_from_json(const nlohmann::ordered_json& j);
nlohmann::ordered_json to_json(const Wheel& wheel);  // a report's wheel entry (and the shard record's)
Wheel wheel_from_json(const nlohmann::ordered_json& j);
nlohmann::ordered_json to_json(const Checked& checked);
Checked checked_from_json(const nlohmann::ordered_json& j);  // a report's result or a state's record
nlohmann::ordered_json to_json(const Pin& pin);
Pin pin_from_json(const nlohmann::ordered_json& j);

// A scan's outcome: the report, and the commit of its state, for the caller to run once it has written
// the report's files, the pins and its standard output (a scan commits last: one that could not write its
// outputs leaves the state as it was). Until commit() runs or the Result is gone, the state is locked.
struct Result {
  Report report;
  std::function<void()> commit;  // throws Error(Io) when the state cannot be saved
  net::Stats stats;              // what the scan's requests moved
};

// Runs a scan (its exit code: Report::exit_code; the report is complete for what could be read).
Result run(const Options& options, const image::Db& db, net::Client& client, const ProfileCache* cache);

// The report's counts for a list of checked wheels (counts by verdict; not-targeted cells apart).
Summary summary_of(const std::vector<Wheel>& wheels, std::uint64_t wheels_seen);

// The pins as shell assignments a setup script sources (the shape of FlagOS's version-pins.env).
std::string pins_env(const Report& report);
// The same, a pin at a time.
void write_pins_env(const Report& report, const std::function<void(std::string_view)>& write);

}  // namespace wheelcheck::scan
