// The scan's state folder and the record of its last run (see state.hpp for the layout).
#include "inspector/scan/state.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <vector>

#include "wheelcheck/error.hpp"

namespace wheelcheck::scan::detail {

namespace {

bool safe_body_name(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name[0] != '.';
}

std::string dump_state_json(const Json& j) {
  return j.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
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

std::string keys_digest(const Json& wheels) {
  std::vector<std::string> keys;
  if (wheels.is_object()) {
    for (const auto& [key, value] : wheels.items()) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  std::string text;
  for (const auto& k : keys) text += k + "\n";
  return sha256_text(text);
}

State::State(std::string dir, std::vector<std::string>& warnings) : m_dir(std::move(dir)) {
  if (m_dir.empty()) return;
  struct stat st {};
  if (::stat(m_dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw bad_input("the scan state " + m_dir + " is not a folder");
    if (auto why = not_private_reason(st); !why.empty()) {
      m_refused = "the scan state " + m_dir + " is not private to you (" + why +
                  "): it was neither read nor saved, so every wheel counted as new";
      warnings.push_back(m_refused);
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
  const std::string file = m_dir + "/state.json";
  if (::stat(file.c_str(), &st) != 0) return;
  try {
    m_json = Json::parse(read_text_file(file));
  } catch (const std::exception& e) {
    throw bad_input("the scan state " + file + " is damaged (" + e.what() + "); remove it to start afresh");
  }
  if (!m_json.is_object() || m_json.value("schema", "") != k_state_schema) {
    throw bad_input(file + " is not a wheelcheck scan state (" + k_state_schema + ")");
  }
}

std::optional<Remembered> State::remembered(const std::string& filename, const std::string& sha256) {
  const Json& all = wheels();
  const auto it = all.find(wheel_key(filename, sha256));
  if (it == all.end()) return std::nullopt;
  Remembered r;
  if (const auto error = it->find("error"); error != it->end() && !error->is_null())
    r.error = error->is_string() ? error->get<std::string>() : error->dump();
  if (const auto results = it->find("results"); results != it->end() && results->is_object()) r.results = &*results;
  return r;
}

std::optional<Checked> Remembered::on(const std::string& image) const {
  if (results == nullptr) return std::nullopt;
  const auto it = results->find(image);
  if (it == results->end()) return std::nullopt;
  return checked_from_json(*it);
}

Json& State::slot(const char* name) {
  if (!m_json.contains(name) || !m_json[name].is_object()) m_json[name] = Json::object();
  return m_json[name];
}

std::optional<std::string> State::page_body(const std::string& url) {
  const auto it = pages().find(url);
  if (it == pages().end() || !kept()) return std::nullopt;
  const std::string name = it->value("body", "");
  if (!safe_body_name(name)) return std::nullopt;
  const std::string sha = it->value("sha256", "");
  if (const auto fresh = m_bodies.find(name); fresh != m_bodies.end()) return fresh->second;
  try {
    auto body = read_text_file(m_dir + "/pages/" + name, std::uint64_t{64} << 20);
    if (!sha.empty() && sha != sha256_text(body)) return std::nullopt;  // damaged: fetched afresh
    return body;
  } catch (const Error&) {
    return std::nullopt;
  }
}

void State::remember_page(const std::string& url, const net::Response& r) {
  if (m_dir.empty()) return;
  const std::string sha = sha256_text(r.body);
  const std::string body = fmt::format("{:016x}-{}.body", fnv1a(url), sha.substr(0, 16));
  m_bodies[body] = r.body;
  pages()[url] = Json{{"etag", r.validators.etag},
                      {"last_modified", r.validators.last_modified},
                      {"content_type", r.content_type},
                      {"final_url", r.url},
                      {"body", body},
                      {"sha256", sha}};
}

void State::adopt_page(const std::string& url, const Json& entry, std::string body) {
  const std::string name = entry.value("body", "");
  if (!safe_body_name(name)) throw bad_input("a shard's state names a page body " + name + " for " + url);
  m_bodies[name] = std::move(body);
  pages()[url] = entry;
}

void State::commit() {
  if (m_dir.empty()) return;
  if (!m_refused.empty()) throw Error(ErrorKind::Io, m_refused);
  try {
    make_dirs(m_dir + "/pages");
    sweep_temporaries(m_dir + "/pages");
    for (const auto& [name, body] : m_bodies) write_file_atomic(m_dir + "/pages/" + name, body);
    if (!record.is_null()) {
      const std::string text = dump_state_json(record);
      write_file_atomic(m_dir + "/shard.json", text, true);
      const auto& shard = record["shard"];
      m_json["run"] = Json{{"shard", Json::array({shard["index"], shard["count"]})}, {"record", sha256_text(text)}};
    }
    m_json["schema"] = k_state_schema;
    write_file_atomic(m_dir + "/state.json", dump_state_json(m_json), true);
  } catch (const Error& e) {
    throw Error(ErrorKind::Io, std::string("the scan state was not saved (") + e.what() +
                                   "): the next scan reports this one's new wheels again");
  }
  std::set<std::string> named;
  for (const auto& [url, entry] : pages().items()) named.insert(entry.value("body", ""));
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(m_dir + "/pages", ec)) {
    const auto name = e.path().filename().string();
    if (name.ends_with(".body") && named.count(name) == 0) std::filesystem::remove(e.path(), ec);
  }
}

std::optional<std::string> ShardFolder::body(const std::string& url) const {
  if (!state.contains("pages") || !state["pages"].is_object()) return std::nullopt;
  const Json& pages = state["pages"];
  const auto it = pages.find(url);
  if (it == pages.end()) return std::nullopt;
  const std::string name = it->value("body", "");
  if (!safe_body_name(name)) return std::nullopt;
  try {
    auto text = read_text_file(dir + "/pages/" + name, std::uint64_t{64} << 20);
    if (sha256_text(text) != it->value("sha256", "")) return std::nullopt;
    return text;
  } catch (const Error&) {
    return std::nullopt;
  }
}

ShardFolder read_shard_folder(const std::string& dir) {
  ShardFolder f;
  f.dir = dir;
  struct stat st {};
  const std::string file = dir + "/state.json";
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw bad_input("scan --merge: " + dir + " is not a folder (give the --state folders of the shard runs)");
  }
  if (::stat(file.c_str(), &st) != 0) {
    const bool report = ::stat((dir + "/report.json").c_str(), &st) == 0;
    throw bad_input("scan --merge: " + dir + " has no state.json" +
                    (report ? " (it holds a report: --merge takes the --state folders of the shard runs)"
                            : ": its shard never finished (or never ran); rerun `scan --shard K/N --state " + dir +
                                  "` from the state the others started from"));
  }
  try {
    f.state = Json::parse(read_text_file(file));
  } catch (const std::exception& e) {
    throw bad_input("scan --merge: " + file + " is damaged (" + e.what() + ")");
  }
  if (!f.state.is_object() || f.state.value("schema", "") != k_state_schema ||
      (f.state.contains("pages") && !f.state["pages"].is_object()) ||
      (f.state.contains("wheels") && !f.state["wheels"].is_object())) {
    throw bad_input("scan --merge: " + file + " is not a wheelcheck scan state (" + k_state_schema + ")");
  }
  const Json run = f.state.value("run", Json());
  if (!run.is_object()) {
    f.record_problem = "its state names no run record (a state written before shards were recorded, or never scanned)";
    return f;
  }
  std::string text;
  try {
    text = read_text_file(dir + "/shard.json");
  } catch (const Error&) {
    f.record_problem = "its run record shard.json is missing";
    return f;
  }
  if (sha256_text(text) != run.value("record", "")) {
    f.record_problem = "its shard.json is not the one its state names (a run that did not finish)";
    return f;
  }
  try {
    f.record = Json::parse(text);
    f.index = f.record.at("shard").at("index").get<int>();
    f.count = f.record.at("shard").at("count").get<int>();
    if (f.record.value("schema", "") != k_record_schema)
      throw std::runtime_error("not " + std::string(k_record_schema));
    // The shape the merge reads (a record is written by wheelcheck, but a folder can hold anything).
    if (f.index < 1 || f.count < 1 || f.index > f.count) throw std::runtime_error("its shard is not K of N");
    if (!f.record.at("options").is_object() || !f.record.at("base").is_string() ||
        !f.record.at("fetched").is_object() || !f.record.at("wheels").is_array()) {
      throw std::runtime_error("options, base, fetched or wheels is not what a record holds");
    }
    for (const auto& w : f.record["wheels"]) {
      if (!w.is_object() || !w.at("key").is_string() || !w.at("report").is_object() ||
          !w.at("report").at("results").is_array() || !w.at("errors").is_array() || !w.at("published").is_array()) {
        throw std::runtime_error("a wheel entry is not what a record holds");
      }
      for (const auto& line : w["published"]) {
        if (!line.is_string()) throw std::runtime_error("a wheel entry's published line is not text");
      }
      for (const auto& line : w["errors"]) {
        if (!line.is_string()) throw std::runtime_error("a wheel entry's error is not text");
      }
    }
    for (const auto& [url, outcome] : f.record["fetched"].items()) {
      const bool read = outcome.is_object() && outcome.contains("sha256") && outcome["sha256"].is_string();
      const bool failed = outcome.is_object() && outcome.contains("error") && outcome["error"].is_string();
      if (!read && !failed) throw std::runtime_error("what " + url + " answered is not what a record holds");
    }
  } catch (const std::exception& e) {
    f.record = nullptr;
    f.record_problem = std::string("its shard.json is damaged (") + e.what() + ")";
  }
  return f;
}

}  // namespace wheelcheck::scan::detail
