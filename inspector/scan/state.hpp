// The scan's state folder (inspector/scan/state.cpp): what earlier runs saw, and the record of the last run.
//
// DIR/state.json     {"schema": "wheelcheck-scan-state/1", "pages": {URL: validators, body file, sha256},
//                     "wheels": {"FILE#SHA256": the wheel's verdicts per image}, "run": {"shard": [K, N],
//                     "record": sha256 of shard.json}}
// DIR/pages/*.body   the page bodies state.json names (conditional requests answer 304 from them)
// DIR/shard.json     the run's record (wheelcheck-scan-shard/1): what `scan --merge` needs of a shard run
//                     that its state alone does not say (the report entries of its new wheels, its errors,
//                     what each fetch answered, the state it started from); written before state.json, so
//                     a record whose sha256 state.json does not name is one of a run that did not finish.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/net.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::scan::detail {

using Json = nlohmann::ordered_json;

inline constexpr const char* k_state_schema = "wheelcheck-scan-state/1";
inline constexpr const char* k_record_schema = "wheelcheck-scan-shard/1";

std::string sha256_text(std::string_view text);
// FNV-1a, 64 bits: the page bodies' names and the shard of a wheel's file name (stable across machines).
std::uint64_t fnv1a(std::string_view s);
std::string wheel_key(const std::string& filename, const std::string& sha256);
// The digest of a set of wheel keys (sorted): which state a run started from.
std::string keys_digest(const Json& wheels);

// A wheel the state remembers (state.json's "wheels"), read: why it could not be read, and its cells by image
// (records: run::Size::Record, with their gates).
struct Remembered {
  std::optional<std::string> error;
  const Json* results = nullptr;  // image -> its record
  // Its cell on the image, as the record holds it: nullopt when it was not checked there; Error(BadInput) for a
  // record that cannot be read.
  std::optional<Checked> on(const std::string& image) const;
};

// What a scan knows from earlier runs, read under the state's lock and written back by commit() only once the
// scan's outputs are safe (its report, pins and standard output). Page bodies are named by their content, so
// until state.json is replaced (one rename, the commit) it names only bodies of its own run; a body whose
// sha256 is not the one recorded is not used.
class State {
 public:
  State(std::string dir, std::vector<std::string>& warnings);

  Json& pages() { return slot("pages"); }
  Json& wheels() { return slot("wheels"); }
  // A wheel's record, read (nullopt when the state has none).
  std::optional<Remembered> remembered(const std::string& filename, const std::string& sha256);
  const std::string& dir() const { return m_dir; }
  bool kept() const { return !m_dir.empty() && m_refused.empty(); }  // read and saved
  bool empty() const { return !m_json.contains("wheels") || m_json["wheels"].empty(); }

  std::optional<std::string> page_body(const std::string& url);
  void remember_page(const std::string& url, const net::Response& r);
  // A page as another state folder kept it (the merge of shards): its entry and body.
  void adopt_page(const std::string& url, const Json& entry, std::string body);

  // The run's record, written by commit() as shard.json (null: none).
  Json record = nullptr;

  // The commit: the new page bodies, the record, then state.json (fsynced, one rename), then the bodies no
  // page names any more. Throws Error(Io); the state on disk is then the one before this scan.
  void commit();

 private:
  Json& slot(const char* name);
  std::string m_dir;
  std::string m_refused;  // why the state folder is not used, when it is not
  std::optional<FileLock> m_lock;
  Json m_json = Json::object();
  std::map<std::string, std::string> m_bodies;  // new page bodies, written by commit()
};

// A shard's state folder as `scan --merge` reads it (never locked, never written).
struct ShardFolder {
  std::string dir;
  Json state;                  // state.json
  Json record;                 // shard.json, null when state.json does not name it (a run that did not finish, or none)
  std::string record_problem;  // why record is null
  int index = 0, count = 0;    // the record's shard
  // A page body of this folder, when its sha256 is `sha` (nullopt otherwise).
  std::optional<std::string> body(const std::string& url) const;
};

// Reads DIR/state.json and DIR/shard.json. Throws Error(BadInput) for a folder that is no scan state.
ShardFolder read_shard_folder(const std::string& dir);

}  // namespace wheelcheck::scan::detail
