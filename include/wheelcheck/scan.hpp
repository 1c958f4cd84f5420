// The nightly scan: new wheels of some projects on package indexes, each checked against images, a
// report (JSON, Markdown, HTML), and pin advice per image and project. docs/scan.schema.json is the
// report's format; inspector/scan/scan.cpp explains the algorithm.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/image.hpp"
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

// A scan's outcome: the report, and the commit of its state, for the caller to run once it has written
// the report's files, the pins and its standard output (a scan commits last: one that could not write its
// outputs leaves the state as it was). Until commit() runs or the Result is gone, the state is locked.
struct Result {
  nlohmann::ordered_json report;
  std::function<void()> commit;  // throws Error(Io) when the state cannot be saved
};

// Runs a scan. The report's exit_code: 0 nothing new is incompatible, 1 a new wheel is incompatible with
// an image its tags target, 2 an index unreadable after the retries or a wheel that could not be read
// (the report is still complete for the rest; "errors" says each).
Result run(const Options& options, const image::Db& db, net::Client& client, const ProfileCache* cache);

// The report's "summary" for a list of checked wheels (counts by verdict; not-targeted cells apart).
nlohmann::ordered_json summary_of(const nlohmann::ordered_json& wheels, std::uint64_t wheels_seen);

// The pins as shell assignments a setup script sources (the shape of FlagOS's version-pins.env).
std::string pins_env(const nlohmann::ordered_json& report);

}  // namespace wheelcheck::scan
