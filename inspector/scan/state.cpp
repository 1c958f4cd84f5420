// The scan's state folder: one SQLite database (see state.hpp for its tables).
#include "inspector/scan/state.hpp"

#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "wheelcheck/error.hpp"

namespace wheelcheck::scan::detail {

namespace {

constexpr const char* k_tables = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pages(url TEXT PRIMARY KEY, entry TEXT NOT NULL, body BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS wheels(key TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS run(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS run_fetched(url TEXT PRIMARY KEY, outcome TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS run_wheels(seq INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, entry TEXT NOT NULL,
                                      remembered TEXT);
CREATE TABLE IF NOT EXISTS run_pins(seq INTEGER PRIMARY KEY, project TEXT NOT NULL, pin TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS run_pins_of ON run_pins(project, seq);
)sql";

Json parse_stored(const std::string& text, const std::string& what) {
  try {
    return Json::parse(text);
  } catch (const std::exception& e) {
    throw bad_input(what + " is damaged (" + e.what() + ")");
  }
}

std::string dump_stored(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

RunInfo read_run(Sql& sql) {
  RunInfo r;
  Sql::Stmt q(sql, "SELECT key, value FROM run");
  while (q.step()) {
    const std::string key = q.text(0), value = q.text(1);
    if (key == "status") r.status = value;
    if (key == "base") r.base = value;
    if (key == "options") r.options = parse_stored(value, sql.path() + "'s run options");
    if (key == "shard") {
      const Json s = parse_stored(value, sql.path() + "'s run shard");
      if (s.is_array() && s.size() == 2 && s[0].is_number_integer() && s[1].is_number_integer()) {
        r.index = s[0].get<int>();
        r.count = s[1].get<int>();
      }
    }
  }
  return r;
}

void check_schema(Sql& sql) {
  Sql::Stmt q(sql, "SELECT value FROM meta WHERE key = 'schema'");
  const std::string schema = q.step() ? q.text(0) : "";
  if (schema != k_state_schema)
    throw bad_input(sql.path() + " is not a wheelcheck scan state (" + k_state_schema + "; it says '" + schema + "')");
}

}  // namespace

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

std::string sha256_text(std::string_view text) {
  Hasher h;
  h.update(text.data(), text.size());
  return to_hex(h.finish());
}

std::string wheel_key(const std::string& filename, const std::string& sha256) {
  return filename + "#" + sha256;
}

// --- Sql ---------------------------------------------------------------------------------------------------------

Sql::Sql(const std::string& path, bool read_only) : m_path(path) {
  const int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (sqlite3_open_v2(path.c_str(), &m_db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    const std::string why = m_db != nullptr ? sqlite3_errmsg(m_db) : "out of memory";
    sqlite3_close(m_db);
    m_db = nullptr;
    throw Error(ErrorKind::Io, path + ": " + why);
  }
  sqlite3_busy_timeout(m_db, 60000);
  sqlite3_extended_result_codes(m_db, 1);
  // A small page cache (the merge opens one connection per shard): the scan reads a row at a time.
  exec("PRAGMA cache_size = -1024");
  if (!read_only) {
    // WAL: a result is on the disk when its transaction returns (a kill -9 loses none); NORMAL syncs at the
    // checkpoints, FULL (the commit) at the transaction's end.
    exec("PRAGMA journal_mode = WAL");
    exec("PRAGMA synchronous = NORMAL");
  }
}

Sql::~Sql() {
  sqlite3_close_v2(m_db);
}

void Sql::fail(const std::string& what) const {
  const int code = sqlite3_extended_errcode(m_db);
  const bool input = (code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB;
  const std::string text = m_path + ": " + what + ": " + sqlite3_errmsg(m_db);
  if (input) throw bad_input(text + " (a damaged state: remove it to start afresh)");
  throw Error(ErrorKind::Io, text);
}

void Sql::exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(m_db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string why = message != nullptr ? message : "?";
    sqlite3_free(message);
    fail(std::string("'") + std::string(sql).substr(0, 40) + "' failed (" + why + ")");
  }
}

Sql::Stmt::Stmt(Sql& db, const char* sql) : m_db(db) {
  if (sqlite3_prepare_v2(db.m_db, sql, -1, &m_stmt, nullptr) != SQLITE_OK) db.fail("a query");
}

Sql::Stmt::~Stmt() {
  sqlite3_finalize(m_stmt);
}

Sql::Stmt& Sql::Stmt::bind(int i, std::string_view text) {
  if (sqlite3_bind_text64(m_stmt, i, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK)
    m_db.fail("a query");
  return *this;
}

Sql::Stmt& Sql::Stmt::bind_blob(int i, std::string_view bytes) {
  if (sqlite3_bind_blob64(m_stmt, i, bytes.data(), bytes.size(), SQLITE_TRANSIENT) != SQLITE_OK) m_db.fail("a query");
  return *this;
}

Sql::Stmt& Sql::Stmt::bind_int(int i, std::int64_t v) {
  if (sqlite3_bind_int64(m_stmt, i, v) != SQLITE_OK) m_db.fail("a query");
  return *this;
}

Sql::Stmt& Sql::Stmt::bind_null(int i) {
  if (sqlite3_bind_null(m_stmt, i) != SQLITE_OK) m_db.fail("a query");
  return *this;
}

bool Sql::Stmt::step() {
  const int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  m_db.fail("a read or write");
}

std::string Sql::Stmt::text(int col) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(m_stmt, col));
  const int n = sqlite3_column_bytes(m_stmt, col);
  return p == nullptr ? std::string() : std::string(p, static_cast<std::size_t>(n));
}

bool Sql::Stmt::is_null(int col) const {
  return sqlite3_column_type(m_stmt, col) == SQLITE_NULL;
}

std::int64_t Sql::Stmt::integer(int col) const {
  return sqlite3_column_int64(m_stmt, col);
}

void Sql::Stmt::reset() {
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
}

// --- Remembered --------------------------------------------------------------------------------------------------

Remembered remembered_of(const Json& record) {
  Remembered r;
  if (const auto error = record.find("error"); error != record.end() && !error->is_null())
    r.error = error->is_string() ? error->get<std::string>() : error->dump();
  if (const auto results = record.find("results"); results != record.end() && results->is_object())
    r.results = *results;
  return r;
}

std::optional<Checked> Remembered::on(const std::string& image) const {
  if (!results.is_object()) return std::nullopt;
  const auto it = results.find(image);
  if (it == results.end()) return std::nullopt;
  return checked_from_json(*it);
}

// --- State -------------------------------------------------------------------------------------------------------

State::State(std::string dir, std::vector<std::string>& warnings) : m_dir(std::move(dir)) {
  if (m_dir.empty()) return;
  struct stat st {};
  if (::stat(m_dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw bad_input("the scan state " + m_dir + " is not a folder");
    if (auto why = not_private_reason(st); !why.empty()) {
      warnings.push_back("the scan state " + m_dir + " is not private to you (" + why +
                         "): it was neither read nor saved, so every wheel counted as new");
      m_refused = warnings.back();
      return;
    }
  }
  // Two scans on one state take turns: the second reads what the first saved.
  try {
    make_dirs(m_dir);
    m_lock.emplace(FileLock::acquire(m_dir + "/lock", [this] {
      std::fprintf(stderr, "wheelcheck: waiting for another scan of the state %s (its lock)\n", m_dir.c_str());
    }));
  } catch (const Error& e) {
    warnings.push_back(std::string("the scan state cannot be locked (") + e.what() + ")");
  }
  try {
    sweep_temporaries(m_dir);
    m_sql = std::make_unique<Sql>(m_dir + "/" + k_state_file, false);
    m_sql->exec("BEGIN IMMEDIATE");
    m_sql->exec(k_tables);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Io) throw;
    // Unwritable (a read-only folder, a full disk): the scan runs and reports, every wheel new, and fails at its
    // commit with this (exit 2), its report written.
    m_sql.reset();
    m_refused = std::string("the scan state cannot be used (") + e.what() + "): it was not saved";
    warnings.push_back(m_refused + ", and every wheel counted as new");
    return;
  }
  {
    Sql::Stmt q(*m_sql, "SELECT value FROM meta WHERE key = 'schema'");
    if (!q.step()) {
      Sql::Stmt(*m_sql, "INSERT INTO meta(key, value) VALUES('schema', ?)").bind(1, k_state_schema).run();
    } else if (q.text(0) != k_state_schema) {
      m_sql->exec("ROLLBACK");
      throw bad_input(m_dir + "/" + k_state_file + " is not a wheelcheck scan state (" + k_state_schema + ")");
    }
  }
  m_sql->exec("COMMIT");
  import_json_state(warnings);
}

State::~State() = default;
State::State(State&&) noexcept = default;

// A state folder written by wheelcheck before the database (state.json, pages/*.body): read once into it, so that
// an upgrade does not report every wheel as new again; the old files are removed once the import is committed.
void State::import_json_state(std::vector<std::string>& warnings) {
  const std::string file = m_dir + "/state.json";
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return;
  Json old;
  try {
    old = Json::parse(read_text_file(file));
  } catch (const std::exception& e) {
    throw bad_input("the scan state " + file + " is damaged (" + e.what() + "); remove it to start afresh");
  }
  if (!old.is_object() || old.value("schema", "") != "wheelcheck-scan-state/1")
    throw bad_input(file + " is not a wheelcheck scan state (wheelcheck-scan-state/1)");
  m_sql->exec("BEGIN IMMEDIATE");
  std::size_t wheels = 0;
  if (const auto w = old.find("wheels"); w != old.end() && w->is_object()) {
    Sql::Stmt put(*m_sql, "INSERT OR REPLACE INTO wheels(key, record) VALUES(?, ?)");
    for (const auto& [key, record] : w->items()) {
      put.bind(1, key).bind(2, dump_stored(record)).run();
      put.reset();
      ++wheels;
    }
  }
  if (const auto p = old.find("pages"); p != old.end() && p->is_object()) {
    for (const auto& [url, entry] : p->items()) {
      const std::string name = entry.value("body", "");
      if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') continue;
      try {
        const auto body = read_text_file(m_dir + "/pages/" + name, std::uint64_t{64} << 20);
        if (sha256_text(body) != entry.value("sha256", "")) continue;
        Json kept = entry;
        kept.erase("body");
        adopt_page(url, kept, body);
      } catch (const Error&) {
        continue;  // a page without its body is fetched afresh
      }
    }
  }
  m_sql->exec("COMMIT");
  std::error_code ec;
  std::filesystem::remove(file, ec);
  std::filesystem::remove(m_dir + "/shard.json", ec);
  std::filesystem::remove_all(m_dir + "/pages", ec);
  warnings.push_back(
      fmt::format("the scan state {} was read from its state.json ({} wheels) into {}", m_dir, wheels, k_state_file));
}

bool State::empty() {
  if (!m_sql) return true;
  Sql::Stmt q(*m_sql, "SELECT 1 FROM wheels LIMIT 1");
  return !q.step();
}

bool State::knows(const std::string& key) {
  if (!m_sql) return false;
  Sql::Stmt q(*m_sql, "SELECT 1 FROM wheels WHERE key = ?");
  return q.bind(1, key).step();
}

std::optional<Remembered> State::remembered(const std::string& filename, const std::string& sha256) {
  if (!m_sql) return std::nullopt;
  // This run's record first (its wheels join the state at the commit), then the state's.
  Sql::Stmt q(*m_sql,
              "SELECT remembered FROM run_wheels WHERE key = ?1 AND remembered IS NOT NULL "
              "UNION ALL SELECT record FROM wheels WHERE key = ?1 LIMIT 1");
  if (!q.bind(1, wheel_key(filename, sha256)).step()) return std::nullopt;
  Json record;
  try {
    record = Json::parse(q.text(0));
  } catch (const std::exception& e) {
    Remembered r;
    r.error = std::string("its record in the state cannot be read (") + e.what() + ")";
    return r;
  }
  return remembered_of(record);
}

std::string State::keys_digest() {
  Hasher h;
  if (m_sql) {
    Sql::Stmt q(*m_sql, "SELECT key FROM wheels ORDER BY key");
    while (q.step()) {
      const std::string line = q.text(0) + "\n";
      h.update(line.data(), line.size());
    }
  }
  return to_hex(h.finish());
}

std::optional<Page> State::page(const std::string& url) {
  if (!m_sql) return std::nullopt;
  Sql::Stmt q(*m_sql, "SELECT entry, body FROM pages WHERE url = ?");
  if (!q.bind(1, url).step()) return std::nullopt;
  Page p;
  try {
    p.entry = Json::parse(q.text(0));
  } catch (const std::exception&) {
    return std::nullopt;  // fetched afresh
  }
  p.body = q.text(1);
  if (!p.entry.is_object() || p.entry.value("sha256", "") != sha256_text(p.body)) return std::nullopt;
  return p;
}

void State::remember_page(const std::string& url, const net::Response& r) {
  if (!m_sql) return;
  adopt_page(url,
             Json{{"etag", r.validators.etag},
                  {"last_modified", r.validators.last_modified},
                  {"content_type", r.content_type},
                  {"final_url", r.url},
                  {"sha256", sha256_text(r.body)}},
             r.body);
}

void State::adopt_page(const std::string& url, const Json& entry, std::string_view body) {
  if (!m_sql) return;
  Sql::Stmt(*m_sql, "INSERT OR REPLACE INTO pages(url, entry, body) VALUES(?, ?, ?)")
      .bind(1, url)
      .bind(2, dump_stored(entry))
      .bind_blob(3, body)
      .run();
}

void State::begin_run(const Json& options, int index, int count, const std::string& base) {
  if (!m_sql) return;
  const RunInfo last = read_run(*m_sql);
  const bool resume = last.status == "running" && last.options == options && last.index == index &&
                      last.count == count && last.base == base;
  m_sql->exec("BEGIN IMMEDIATE");
  bool resumed_before = false;
  {
    Sql::Stmt older(*m_sql, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'resume_wheels'");
    resumed_before = older.step();
  }
  if (resume) {
    // What the killed run took from an earlier killed one, and had not reached, is kept too.
    if (resumed_before) {
      m_sql->exec(
          "INSERT OR IGNORE INTO run_wheels(key, entry, remembered) SELECT key, entry, remembered FROM resume_wheels;"
          "DROP TABLE resume_wheels");
    }
    m_sql->exec("ALTER TABLE run_wheels RENAME TO resume_wheels");
    m_sql->exec(k_tables);
  } else {
    m_sql->exec("DROP TABLE IF EXISTS resume_wheels; DELETE FROM run_wheels");
  }
  m_sql->exec("DELETE FROM run_fetched; DELETE FROM run_pins; DELETE FROM run");
  Sql::Stmt put(*m_sql, "INSERT INTO run(key, value) VALUES(?, ?)");
  const std::pair<const char*, std::string> rows[] = {{"status", "running"},
                                                      {"shard", Json::array({index, count}).dump()},
                                                      {"options", dump_stored(options)},
                                                      {"base", base}};
  for (const auto& [key, value] : rows) {
    put.bind(1, key).bind(2, value).run();
    put.reset();
  }
  m_sql->exec("COMMIT");
  m_resumable = 0;
  if (resume) {
    Sql::Stmt q(*m_sql, "SELECT count(*) FROM resume_wheels");
    if (q.step()) m_resumable = static_cast<std::uint64_t>(q.integer(0));
  }
  m_seq = 0;
}

std::optional<Json> State::resumed(const std::string& key) {
  if (!m_sql || m_resumable == 0) return std::nullopt;
  Sql::Stmt q(*m_sql, "SELECT entry, remembered FROM resume_wheels WHERE key = ?");
  if (!q.bind(1, key).step()) return std::nullopt;
  try {
    Json out = Json::object();
    out["entry"] = Json::parse(q.text(0));
    out["remembered"] = q.is_null(1) ? Json() : Json::parse(q.text(1));
    return out;
  } catch (const std::exception&) {
    return std::nullopt;  // checked again
  }
}

void State::record_fetched(const std::string& url, const Json& outcome) {
  if (!m_sql) return;
  Sql::Stmt(*m_sql, "INSERT OR REPLACE INTO run_fetched(url, outcome) VALUES(?, ?)")
      .bind(1, url)
      .bind(2, dump_stored(outcome))
      .run();
}

void State::record_wheel(const std::string& key, const Json& entry, const Json& remembered) {
  if (!m_sql) return;
  Sql::Stmt put(*m_sql, "INSERT OR REPLACE INTO run_wheels(seq, key, entry, remembered) VALUES(?, ?, ?, ?)");
  put.bind_int(1, ++m_seq).bind(2, key).bind(3, dump_stored(entry));
  if (remembered.is_null())
    put.bind_null(4);
  else
    put.bind(4, dump_stored(remembered));
  put.run();
}

void State::record_pin(std::int64_t seq, const std::string& project, const Json& pin) {
  if (!m_sql) return;
  Sql::Stmt(*m_sql, "INSERT OR REPLACE INTO run_pins(seq, project, pin) VALUES(?, ?, ?)")
      .bind_int(1, seq)
      .bind(2, project)
      .bind(3, dump_stored(pin))
      .run();
}

std::uint64_t State::run_wheels() {
  if (!m_sql) return 0;
  Sql::Stmt q(*m_sql, "SELECT count(*) FROM run_wheels");
  return q.step() ? static_cast<std::uint64_t>(q.integer(0)) : 0;
}

void State::each_run_wheel(const std::function<void(const Json& entry)>& fn) {
  if (!m_sql) return;
  Sql::Stmt q(*m_sql, "SELECT entry FROM run_wheels ORDER BY seq");
  while (q.step()) fn(parse_stored(q.text(0), m_sql->path() + "'s run record"));
}

void State::each_run_pin(const std::function<void(const Json& pin)>& fn) {
  if (!m_sql) return;
  Sql::Stmt q(*m_sql, "SELECT pin FROM run_pins ORDER BY seq");
  while (q.step()) fn(parse_stored(q.text(0), m_sql->path() + "'s run pins"));
}

void State::each_run_pin_of(const std::string& project, const std::function<void(const Json& pin)>& fn) {
  if (!m_sql) return;
  Sql::Stmt q(*m_sql, "SELECT pin FROM run_pins WHERE project = ? ORDER BY seq");
  q.bind(1, project);
  while (q.step()) fn(parse_stored(q.text(0), m_sql->path() + "'s run pins"));
}

void State::copy_base_from(const std::string& shard_db) {
  if (!m_sql) return;
  Sql::Stmt(*m_sql, "ATTACH DATABASE ? AS shard").bind(1, shard_db).run();
  try {
    m_sql->exec("BEGIN IMMEDIATE");
    m_sql->exec(
        "INSERT OR REPLACE INTO main.pages SELECT url, entry, body FROM shard.pages;"
        "INSERT OR REPLACE INTO main.wheels SELECT key, record FROM shard.wheels WHERE key NOT IN "
        "(SELECT key FROM shard.run_wheels WHERE remembered IS NOT NULL)");
    m_sql->exec("COMMIT");
  } catch (...) {
    sqlite3_exec(m_sql->handle(), "ROLLBACK; DETACH DATABASE shard", nullptr, nullptr, nullptr);
    throw;
  }
  m_sql->exec("DETACH DATABASE shard");
}

void State::commit() {
  if (m_dir.empty()) return;
  if (!m_sql) throw Error(ErrorKind::Io, m_refused.empty() ? "the scan state could not be opened" : m_refused);
  try {
    m_sql->exec("PRAGMA synchronous = FULL");
    m_sql->exec("BEGIN IMMEDIATE");
    m_sql->exec(
        "INSERT OR REPLACE INTO wheels(key, record) SELECT key, remembered FROM run_wheels WHERE remembered IS NOT "
        "NULL;"
        "UPDATE run SET value = 'done' WHERE key = 'status';"
        "DROP TABLE IF EXISTS resume_wheels");
    m_sql->exec("COMMIT");
    m_sql->exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } catch (const Error& e) {
    sqlite3_exec(m_sql->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw Error(ErrorKind::Io, std::string("the scan state was not saved (") + e.what() +
                                   "): the next scan reports this one's new wheels again");
  }
}

// --- the report's wheels, read back ----------------------------------------------------------------------------

namespace {

class StoredRun : public Stored {
 public:
  StoredRun(std::shared_ptr<State> state, std::vector<std::string> images, std::uint64_t count)
      : m_state(std::move(state)), m_images(std::move(images)), m_count(count) {}
  std::uint64_t wheel_count() const override { return m_count; }
  void each_wheel(const std::function<void(const Wheel&)>& fn) const override {
    m_state->each_run_wheel([&](const Json& entry) {
      Wheel w = wheel_from_json(entry.at("report"));
      std::erase_if(w.results, [&](const Checked& c) {
        return std::find(m_images.begin(), m_images.end(), c.cell.image) == m_images.end();
      });
      fn(w);
    });
  }
  void each_pin(const std::function<void(const Pin&)>& fn) const override {
    m_state->each_run_pin([&](const Json& pin) { fn(pin_from_json(pin)); });
  }
  void each_pin_of(const std::string& project, const std::function<void(const Pin&)>& fn) const override {
    m_state->each_run_pin_of(project, [&](const Json& pin) { fn(pin_from_json(pin)); });
  }

 private:
  std::shared_ptr<State> m_state;
  std::vector<std::string> m_images;
  std::uint64_t m_count;
};

}  // namespace

std::shared_ptr<const Stored> stored_run(std::shared_ptr<State> state, std::vector<std::string> images,
                                         std::uint64_t count) {
  return std::make_shared<StoredRun>(std::move(state), std::move(images), count);
}

// --- ShardStore ----------------------------------------------------------------------------------------------------

ShardStore::ShardStore(const std::string& dir) : m_dir(dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw bad_input("scan --merge: " + dir + " is not a folder (give the --state folders of the shard runs)");
  }
  const std::string file = dir + "/" + k_state_file;
  if (::stat(file.c_str(), &st) != 0) {
    const bool report = ::stat((dir + "/report.json").c_str(), &st) == 0;
    const bool old = ::stat((dir + "/state.json").c_str(), &st) == 0;
    throw bad_input("scan --merge: " + dir + " has no " + k_state_file +
                    (report ? " (it holds a report: --merge takes the --state folders of the shard runs)"
                     : old  ? " (its state.json is an older wheelcheck's: rerun its shard with this one)"
                            : ": its shard never finished (or never ran); rerun `scan --shard K/N --state " + dir +
                                 "` from the state the others started from"));
  }
  try {
    m_sql = std::make_unique<Sql>(file, true);
    check_schema(*m_sql);
    m_run = read_run(*m_sql);
  } catch (const Error& e) {
    std::string why = e.what();
    throw bad_input("scan --merge: " + why);
  }
  if (m_run.status.empty()) {
    m_problem = "its state names no run (never scanned)";
  } else if (m_run.status != "done") {
    m_problem = "its run did not finish (killed, or its outputs could not be written)";
  } else if (m_run.index < 1 || m_run.count < 1 || m_run.index > m_run.count || !m_run.options.is_object()) {
    m_problem = "its run's record is damaged (its shard is not K of N)";
  }
}

std::optional<Json> ShardStore::entry(const std::string& key) {
  Sql::Stmt q(*m_sql, "SELECT entry FROM run_wheels WHERE key = ?");
  if (!q.bind(1, key).step()) return std::nullopt;
  return parse_stored(q.text(0), m_sql->path() + "'s entry of " + key);
}

std::optional<Json> ShardStore::remembered(const std::string& key) {
  Sql::Stmt q(*m_sql, "SELECT record FROM wheels WHERE key = ?");
  if (!q.bind(1, key).step()) return std::nullopt;
  return parse_stored(q.text(0), m_sql->path() + "'s record of " + key);
}

std::optional<Json> ShardStore::fetched(const std::string& url) {
  Sql::Stmt q(*m_sql, "SELECT outcome FROM run_fetched WHERE url = ?");
  if (!q.bind(1, url).step()) return std::nullopt;
  Json j = parse_stored(q.text(0), m_sql->path() + "'s record of " + url);
  const bool read = j.is_object() && j.contains("sha256") && j["sha256"].is_string();
  const bool failed = j.is_object() && j.contains("error") && j["error"].is_string();
  if (!read && !failed)
    throw bad_input("scan --merge: what " + url + " answered is not what a record holds in " + m_dir);
  return j;
}

std::optional<Page> ShardStore::page(const std::string& url) {
  Sql::Stmt q(*m_sql, "SELECT entry, body FROM pages WHERE url = ?");
  if (!q.bind(1, url).step()) return std::nullopt;
  Page p;
  p.entry = parse_stored(q.text(0), m_sql->path() + "'s page " + url);
  p.body = q.text(1);
  if (!p.entry.is_object() || p.entry.value("sha256", "") != sha256_text(p.body)) return std::nullopt;
  return p;
}

}  // namespace wheelcheck::scan::detail
