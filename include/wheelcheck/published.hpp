// Export tables from published wheels: a distribution of an image description may say where its wheel is
// published (image::Published: an index and a requirement, or a URL). When a check needs the exports of
// its libraries and the db has none, the wheel an installer would pick for the image is read headers-only
// (a few MB of a 900 MB torch wheel; the profile cache keeps it under the wheel's sha256, so a second check
// moves none of its bytes), and the distribution's libraries take the facts and tables of that very wheel.
// `wheelcheck image fill` writes them as a db layer and its export tables, for offline use.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "wheelcheck/exports.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/remote.hpp"

namespace wheelcheck::published {

struct Options {
  remote::Mode mode = remote::Mode::Auto;  // --verify: headers-only where the server answers ranges
  InspectOptions inspect;
  const ProfileCache* cache = nullptr;
  std::function<void(const std::string&)> log;  // a line per wheel read, for people
};

// What reading one distribution's published wheel gave.
struct Outcome {
  std::string distribution;  // "torch 2.10.0+cpu"
  std::string where;         // the index or URL the description names
  std::string wheel;         // the file read ("" when none could be)
  std::string url;
  std::string sha256;
  std::uint64_t wheel_size = 0;
  std::uint64_t bytes_fetched = 0;  // wheel bytes moved for it (0 from the cache)
  bool from_cache = false;
  bool headers_only = true;
  std::string error;     // why its tables could not be read ("" when they were)
  bool offline = false;  // not tried: WHEELCHECK_OFFLINE is set (the report's condition says so; no warning)
};

// One distribution read from its published wheel: a copy whose libraries are the wheel's shared libraries
// (facts as a probe records them, `exports` set to the keys of `tables`), and the tables by key.
struct Read {
  image::Distribution distribution;
  std::map<std::string, exports::Table> tables;
  Outcome outcome;
};
// `key_prefix` starts every table key ("mem" references use them as they are; `image fill` writes files).
// Throws Error (BadInput, Io) when the index or the wheel cannot be read, or no wheel fits the image.
Read read(const image::Distribution& distribution, const image::Image& image, net::Client& client,
          const Options& options, const std::string& key_prefix);

// Whether a distribution lacks export tables for some library (the check cannot bind against it).
bool lacks_tables(const image::Distribution& distribution);
// Whether the wheels need the distribution's exports: one Requires-Dist it, or a member needs a library it
// ships (by soname or file name). A distribution one of them replaces (same name) is not needed.
bool needed_by(const image::Distribution& distribution, const std::vector<const WheelProfile*>& wheels);

// Fills, in `image`, each distribution that names where it is published, lacks tables, and the wheels
// need: its libraries become the wheel's (tables added to `tables` under "mem:" references). One that
// cannot be read keeps its libraries, and its exports_unknown says which index could not be read and why
// (its `published` is then cleared: a run asks once). With WHEELCHECK_OFFLINE set (not "0") nothing is
// fetched: each such distribution says so, naming its index.
std::vector<Outcome> fill(image::Image& image, std::map<std::string, exports::Table>& tables,
                          const std::vector<const WheelProfile*>& wheels, net::Client& client, const Options& options);

}  // namespace wheelcheck::published
