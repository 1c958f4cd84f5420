// An environment as a run leaves it for one image (a lock's packages, wheels named with it, --with), and
// its renderings (inspector/output/environment.cpp): the text of `wheelcheck pylock.toml --image NAME` and
// its JSON (docs/environment.schema.json). inspector/cli/cmd_env.cpp resolves and reads the packages and
// judges them with run::run; only these functions say how the answer looks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/gates.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/rules.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::environment {

// One package of a lock, as it comes out for one image.
struct Entry {
  std::string name, version, source;
  // Checked: its wheel was checked with the others. Skipped: its marker is false for the image's Python.
  // NoWheel: nothing the lock lists, or its indexes have, installs there (incompatible). Unknown: its files
  // could not be looked up (offline: not looked up; an index that could not be read), or its wheel was not
  // read offline: the answer is unknown, nothing says it has no wheel. Integrity: the file picked is not
  // what the lock's hash says (an integrity failure of the file: exit 2; it is not checked, never pinned).
  // Error: its wheel could not be read (exit 2).
  enum class State { Checked, Skipped, NoWheel, Unknown, Integrity, Error } state = State::Checked;
  std::string reason;  // skipped, no wheel, unknown, integrity, error: why, in words
  // A wheel was picked among the files found while an index was not looked up (offline) or could not be
  // read: which, in words ("" when every index was read). pip picks the same way then (it warns and goes
  // on with the files it found).
  std::string lookup_note;
  lock::File file;  // the file picked
  // Wheel variants (PEP 825 draft) in the pick: the picked file's label ("" for a plain wheel), how it was
  // chosen, the facts the choice waits on, and what an installer without variant support takes instead
  // ("" when the same file, "none" when nothing).
  std::string variant, variant_note;
  std::vector<std::string> depends_on;
  std::string without_variants;
  bool given = false;     // a wheel named on the command line, not in a lock
  bool beside = false;    // from --with: installed, not checked
  std::size_t wheel = 0;  // index into the read wheels
  // No wheel for the image: the lock's own files of the package (local paths) all the same, read so that
  // one that fails its own integrity is exit 2 here too, whatever the image (integrity first).
  std::vector<std::size_t> unpicked;
};

// A wheel of the environment as it was read (once, whichever images pick it).
struct ReadWheel {
  std::optional<WheelProfile> profile;
  std::string error;
  // Why it was not read although nothing is wrong with it: a URL under WHEELCHECK_OFFLINE with no profile in
  // the cache ("" otherwise). The entry's answer is unknown.
  std::string offline;
  // The file read is not what the lock's hash says: in words ("" when it is, or no hash was given). Its
  // profile is dropped: a file that is not the lock's is not checked.
  std::string integrity;
  std::uint64_t bytes_fetched = 0;
  bool from_cache = false;
  bool whole = false;
};

// One image's environment: its entries and the run's judgement of them.
struct Environment {
  std::string image;
  std::vector<Entry> entries;
  const run::Environment* judged = nullptr;  // the run's (run::Result owns it): a cell per checked entry, in order
  std::vector<std::size_t> cell_entry;       // judged.cells[i] is entries[cell_entry[i]]
  verdict::Verdict verdict = verdict::Verdict::Compatible;
  bool bad_input = false;
  std::vector<std::string> integrity;
  // The gates of all its wheels merged (run::gates_of), failed closed when it has problems: the command fills
  // them, the renderings only read them.
  gates::Result gates;
};

// "checked", "skipped", "no-wheel", "unknown", "integrity", "error": an entry's state in the JSON.
std::string state_name(Entry::State s);

// The environment document (docs/environment.schema.json): its verdict, each package with its state, file
// and whole report (run::Size::Document), and its gates.
nlohmann::ordered_json to_json(const Environment& env, const std::vector<ReadWheel>& wheels,
                               const std::vector<std::string>& locks);
// The environment for people: a row per package (its verdict and reason, the wheel and how it was read),
// each package's own routes that are off and findings, the gates, and the verdict with the exit code.
std::string text(const Environment& env, const std::vector<ReadWheel>& wheels, const std::vector<std::string>& locks,
                 const image::Image& image, bool color);

}  // namespace wheelcheck::environment
