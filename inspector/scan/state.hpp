// The scan's state folder (inspector/scan/state.cpp): one SQLite database, DIR/state.db, that holds what earlier
// runs saw and the record of the run in progress or last finished. docs/internals.md says why SQLite.
//
//   meta(key, value)            "schema": wheelcheck-scan-state/2
//   pages(url, entry, body)     the index pages (and variants files) with their validators: conditional requests
//                               answer 304 from them. entry: {etag, last_modified, content_type, final_url, sha256}
//   wheels(key, record)         "FILE#SHA256" -> the wheel's record: its verdicts per image (run::Size::Record)
//   run(key, value)             the run: "status" (running, done), "shard" [K, N], "options", "base" (the digest of
//                               the wheels it started from)
//   run_fetched(url, outcome)   what each page asked for answered: {"sha256"} or {"error", "not_found"}
//   run_wheels(seq, key, entry, remembered)
//                               each new wheel of the run in report order, committed as it is checked: its report
//                               entry with the errors and published lines that came with it (what `scan --merge`
//                               needs), and the record the state keeps of it once the run commits (NULL: not kept)
//   run_pins(seq, project, pin) the run's pins, in the report's order (and by project, for its page)
//
// A scan holds in memory only the wheels in flight: each result is a transaction of its own. The state's wheels
// change only in the commit (one transaction, once the report, pins and standard output are safe), so a killed or
// failed run leaves them as they were and the next run reports the same new wheels; it finds the killed run's
// results in run_wheels and takes them (same options, same starting state) instead of checking those wheels again.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/net.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/util.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace wheelcheck::scan::detail {

using Json = nlohmann::ordered_json;

inline constexpr const char* k_state_schema = "wheelcheck-scan-state/2";
inline constexpr const char* k_state_file = "state.db";

std::string sha256_text(std::string_view text);
// FNV-1a, 64 bits: the shard of a wheel's file name (stable across machines).
std::uint64_t fnv1a(std::string_view s);
std::string wheel_key(const std::string& filename, const std::string& sha256);

// One SQLite connection (throws Error(Io) naming the database and what SQLite said).
class Sql {
 public:
  Sql(const std::string& path, bool read_only);
  ~Sql();
  Sql(const Sql&) = delete;
  Sql& operator=(const Sql&) = delete;

  class Stmt {
   public:
    Stmt(Sql& db, const char* sql);
    ~Stmt();
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;
    Stmt& bind(int i, std::string_view text);
    Stmt& bind_blob(int i, std::string_view bytes);
    Stmt& bind_int(int i, std::int64_t v);
    Stmt& bind_null(int i);
    bool step();  // true: a row
    void run() {
      while (step()) {
      }
    }
    std::string text(int col) const;
    bool is_null(int col) const;
    std::int64_t integer(int col) const;
    void reset();

   private:
    Sql& m_db;
    sqlite3_stmt* m_stmt = nullptr;
  };

  void exec(const char* sql);
  [[noreturn]] void fail(const std::string& what) const;
  const std::string& path() const { return m_path; }
  sqlite3* handle() { return m_db; }

 private:
  sqlite3* m_db = nullptr;
  std::string m_path;
};

// A page the state keeps: its entry (validators, content type, final URL, sha256) and body.
struct Page {
  Json entry;
  std::string body;
};

// A wheel the state remembers, read: why it could not be read, and its cells by image (records, with their gates).
struct Remembered {
  std::optional<std::string> error;
  Json results;  // image -> its record (null: none)
  // Its cell on the image, as the record holds it: nullopt when it was not checked there; Error(BadInput) for a
  // record that cannot be read.
  std::optional<Checked> on(const std::string& image) const;
};
Remembered remembered_of(const Json& record);

// The run's identity: a merge takes shards whose options and base agree, and a run resumes a killed one only then.
struct RunInfo {
  std::string status;  // "running", "done" ("" when the state has no run)
  int index = 0, count = 0;
  Json options;
  std::string base;
};

// What a scan knows from earlier runs, read and written under the state's lock (a flock on DIR/lock: two scans on one
// state take turns).
class State {
 public:
  State(std::string dir, std::vector<std::string>& warnings);
  ~State();
  State(State&&) noexcept;
  State& operator=(State&&) = delete;

  const std::string& dir() const { return m_dir; }
  bool kept() const { return m_sql != nullptr; }  // read and saved
  bool empty();                                   // no wheel remembered

  bool knows(const std::string& key);
  std::optional<Remembered> remembered(const std::string& filename, const std::string& sha256);
  // The digest of the remembered wheels' keys (sorted): which state a run started from.
  std::string keys_digest();

  std::optional<Page> page(const std::string& url);  // a body whose sha256 is not the one recorded is not used
  void remember_page(const std::string& url, const net::Response& r);
  void adopt_page(const std::string& url, const Json& entry, std::string_view body);

  // The run. begin_run starts this run's record; the record of a killed run with the same options, shard and base
  // is kept aside (resumed() reads it) until the commit.
  void begin_run(const Json& options, int index, int count, const std::string& base);
  std::optional<Json> resumed(const std::string& key);
  std::uint64_t resumable() const { return m_resumable; }
  void record_fetched(const std::string& url, const Json& outcome);
  void record_wheel(const std::string& key, const Json& entry, const Json& remembered);
  void record_pin(std::int64_t seq, const std::string& project, const Json& pin);  // seq: its place in the report
  std::uint64_t run_wheels();
  void each_run_wheel(const std::function<void(const Json& entry)>& fn);
  void each_run_pin(const std::function<void(const Json& pin)>& fn);
  void each_run_pin_of(const std::string& project, const std::function<void(const Json& pin)>& fn);

  // The merge's base: a shard's state less the wheels its run added, and its pages (one SQL statement each).
  void copy_base_from(const std::string& shard_db);

  // The commit: the run's remembered wheels join the state and the run is marked done, in one durable transaction.
  // Throws Error(Io); the state on disk is then the one before this scan.
  void commit();

 private:
  std::string m_dir;
  std::string m_refused;  // why the state folder is not used, when it is not
  std::unique_ptr<Sql> m_sql;
  std::optional<FileLock> m_lock;
  std::int64_t m_seq = 0;
  std::uint64_t m_resumable = 0;
  void import_json_state(std::vector<std::string>& warnings);
};

// The run's new wheels and pins as its report reads them: from the state, one at a time, the cells of the report's
// images only.
std::shared_ptr<const Stored> stored_run(std::shared_ptr<State> state, std::vector<std::string> images,
                                         std::uint64_t count);

// A shard's state as `scan --merge` reads it (read only, never locked).
class ShardStore {
 public:
  explicit ShardStore(const std::string& dir);  // Error(BadInput) for a folder that is no scan state
  const std::string& dir() const { return m_dir; }
  const std::string& db_path() const { return m_sql->path(); }
  const RunInfo& run() const { return m_run; }
  const std::string& problem() const { return m_problem; }  // why its run is no finished run ("" when it is)

  std::optional<Json> entry(const std::string& key);       // its run's entry of the wheel
  std::optional<Json> remembered(const std::string& key);  // the wheel's record in its state
  std::optional<Json> fetched(const std::string& url);     // what its run's request of the URL answered
  std::optional<Page> page(const std::string& url);

 private:
  std::string m_dir;
  std::unique_ptr<Sql> m_sql;
  RunInfo m_run;
  std::string m_problem;
};

}  // namespace wheelcheck::scan::detail
