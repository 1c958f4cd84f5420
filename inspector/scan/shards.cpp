// The shards of one scan, read and checked as one set for `scan --merge`.
//
// A shard run (`scan --shard K/N --state DIR`) keeps in DIR, beside the state, the record of its run
// (shard.json): its options, the digest of the state it started from, what each fetch answered, and the report
// entry of each new wheel it checked, with the errors and warnings that came with it. The merge takes the set
// only when it is whole: every shard 1..N once, each finished (its state names its record), all started from
// the same state with the same options. Anything else is an error that names each shard at fault and what to
// do; a merge never writes a smaller report. What the merge then does with the set is inspector/scan/scan.cpp's
// (the same report, pins and state as one process writes).
#include "inspector/scan/shards.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::scan::detail {

namespace {

std::string canonical_dir(const std::string& dir) {
  std::error_code ec;
  const auto p = std::filesystem::weakly_canonical(dir, ec);
  return ec ? dir : p.string();
}

}  // namespace

std::string options_difference(const Json& a, const Json& b) {
  for (const auto& [key, value] : a.items()) {
    const Json other = b.contains(key) ? b[key] : Json();
    if (value == other) continue;
    if (key == "images" && value.is_array() && other.is_array()) {
      // The same names with other facts: say which image.
      for (std::size_t i = 0; i < value.size() && value.size() == other.size(); ++i) {
        if (value[i] == other[i]) continue;
        const std::string name = value[i].value("name", std::string());
        if (name == other[i].value("name", std::string())) {
          return "the facts of image " + name + " differ (another db, image file or --assume)";
        }
        break;
      }
      std::vector<std::string> names_a, names_b;
      for (const auto& im : value) names_a.push_back(im.value("name", std::string()));
      for (const auto& im : other) names_b.push_back(im.value("name", std::string()));
      return fmt::format("images: {} against {}", join(names_a, ", "), join(names_b, ", "));
    }
    return fmt::format("{}: {} against {}", key, value.dump(), other.dump());
  }
  for (const auto& [key, value] : b.items()) {
    if (!a.contains(key)) return fmt::format("{}: none against {}", key, value.dump());
  }
  return "";
}

std::string Shards::where(int shard) const {
  return fmt::format("shard {} of {} ({})", shard, count(), folder(shard).dir);
}

const Json* Shards::entry(int shard, const std::string& key) const {
  const auto& entries = m_entries.at(static_cast<std::size_t>(shard - 1));
  const auto it = entries.find(key);
  return it == entries.end() ? nullptr : it->second;
}

const Json* Shards::remembered(int shard, const std::string& key) const {
  const auto& state = folder(shard).state;
  if (!state.contains("wheels") || !state["wheels"].contains(key)) return nullptr;
  return &state["wheels"][key];
}

Shards::Fetched Shards::fetched(const std::string& url) const {
  Fetched out;
  for (int k = 1; k <= count(); ++k) {
    const auto& record = folder(k).record;
    if (!record.contains("fetched") || !record["fetched"].contains(url)) continue;
    const Json& outcome = record["fetched"][url];
    if (outcome.contains("error")) {
      out.failed.push_back(
          fmt::format("shard {} of {} could not read {}: {}", k, count(), url, outcome.value("error", std::string())));
      if (out.outcome.is_null()) out.outcome = outcome;
      continue;
    }
    if (out.body) {
      out.differed = out.differed || outcome != out.outcome;
      continue;
    }
    auto body = folder(k).body(url);
    if (!body) throw bad_input("scan --merge: " + where(k) + " lacks the page body of " + url + " its record names");
    out.body = std::move(body);
    out.outcome = outcome;
    out.entry = folder(k).state["pages"][url];
  }
  return out;
}

Json Shards::base_wheels() const {
  const auto& first = m_folders.front();
  std::set<std::string> added;
  for (const auto& w : first.record["wheels"]) {
    if (w.value("remembered", false)) added.insert(w.value("key", ""));
  }
  Json out = Json::object();
  if (first.state.contains("wheels")) {
    for (const auto& [key, value] : first.state["wheels"].items()) {
      if (added.count(key) == 0) out[key] = value;
    }
  }
  return out;
}

Json Shards::base_pages() const {
  const auto& first = m_folders.front();
  return first.state.contains("pages") ? first.state["pages"] : Json::object();
}

Shards read_shards(const std::vector<std::string>& dirs) {
  if (dirs.empty()) throw usage_error("scan --merge: no shard state folders given");
  std::vector<ShardFolder> folders;
  std::set<std::string> seen;
  std::vector<std::string> problems;
  for (const auto& dir : dirs) {
    if (!seen.insert(canonical_dir(dir)).second) {
      problems.push_back(dir + " is given twice");
      continue;
    }
    try {
      folders.push_back(read_shard_folder(dir));
    } catch (const Error& e) {
      std::string why = e.what();
      if (why.rfind("scan --merge: ", 0) == 0) why = why.substr(14);
      problems.push_back(why);
    }
  }
  int count = 0;
  for (const auto& f : folders) {
    if (!f.record.is_null()) count = std::max(count, f.count);
  }
  std::map<int, ShardFolder*> by_index;
  for (auto& f : folders) {
    if (f.record.is_null()) {
      problems.push_back(f.dir + " is not a finished shard: " + f.record_problem + "; rerun its shard into it");
    } else if (f.count != count) {
      problems.push_back(fmt::format(
          "{} holds the record of a {}/{} run, not of one of {} shards (if it is the state the shards started "
          "from, its shard did not finish: rerun it)",
          f.dir, f.index, f.count, count));
    } else if (auto [it, added] = by_index.emplace(f.index, &f); !added) {
      problems.push_back(
          fmt::format("shard {} of {} is given twice ({} and {})", f.index, count, it->second->dir, f.dir));
    }
  }
  std::vector<std::string> missing;
  for (int k = 1; k <= count; ++k) {
    if (by_index.count(k) == 0) missing.push_back(std::to_string(k));
  }
  if (count > 0 && !missing.empty()) {
    problems.push_back(
        fmt::format("shard{} {} of {} {} missing: a merge writes nothing until every shard's state "
                    "folder is given",
                    missing.size() == 1 ? "" : "s", join(missing, ", "), count, missing.size() == 1 ? "is" : "are"));
  }
  if (problems.empty() && count == 0) problems.push_back("no shard state folder given");
  if (problems.empty()) {
    const ShardFolder& first = *by_index.at(1);
    for (const auto& [k, f] : by_index) {
      if (f->record.value("base", "") != first.record.value("base", "")) {
        problems.push_back(fmt::format(
            "shard {} ({}) started from another state than shard 1 ({}): every shard starts from the same state "
            "(the last merged one); rerun shard {} from it",
            k, f->dir, first.dir, k));
      } else if (auto diff = options_difference(first.record["options"], f->record["options"]); !diff.empty()) {
        problems.push_back(fmt::format("shard {} ({}) ran with other options than shard 1 ({})", k, f->dir, diff));
      }
    }
  }
  if (!problems.empty()) {
    std::string text = "scan --merge: the shards cannot be merged:";
    for (const auto& p : problems) text += "\n  " + p;
    throw bad_input(text);
  }
  Shards out;
  for (int k = 1; k <= count; ++k) out.m_folders.push_back(std::move(*by_index.at(k)));
  out.m_base = out.m_folders.front().record.value("base", "");
  for (const auto& f : out.m_folders) {
    auto& entries = out.m_entries.emplace_back();
    for (const auto& w : f.record["wheels"]) entries.emplace(w.value("key", ""), &w);
  }
  return out;
}

}  // namespace wheelcheck::scan::detail
