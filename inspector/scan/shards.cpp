// The shards of one scan, read and checked as one set for `scan --merge`.
//
// A shard run (`scan --shard K/N --state DIR`) keeps in its state (DIR/state.db), beside what it remembers, the
// record of its run: its options, the digest of the state it started from, what each fetch answered, and the report
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
#include <stdexcept>

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
  return fmt::format("shard {} of {} ({})", shard, count(), m_folders.at(static_cast<std::size_t>(shard - 1))->dir());
}

Shards::Taken Shards::take(int shard, const std::string& key) {
  Taken t;
  t.where = where(shard);
  auto& f = folder(shard);
  if (auto e = f.entry(key)) {
    if (!e->is_object() || !e->contains("report") || !(*e)["report"].is_object() || !e->contains("errors") ||
        !(*e)["errors"].is_array() || !e->contains("published") || !(*e)["published"].is_array()) {
      throw bad_input("scan --merge: " + t.where + " records " + key + " in a form this wheelcheck cannot read");
    }
    for (const auto* list : {&(*e)["errors"], &(*e)["published"]}) {
      for (const auto& line : *list) {
        if (!line.is_string()) throw bad_input("scan --merge: " + t.where + "'s entry of " + key + " is damaged");
      }
    }
    t.entry = std::move(*e);
    if (auto r = f.remembered(key)) t.remembered = std::move(*r);
  }
  return t;
}

Shards::Fetched Shards::fetched(const std::string& url) {
  Fetched out;
  for (int k = 1; k <= count(); ++k) {
    auto outcome = folder(k).fetched(url);
    if (!outcome) continue;
    if (outcome->contains("error")) {
      out.failed.push_back(
          fmt::format("shard {} of {} could not read {}: {}", k, count(), url, outcome->value("error", std::string())));
      if (out.outcome.is_null()) out.outcome = *outcome;
      continue;
    }
    if (out.body) {
      out.differed = out.differed || *outcome != out.outcome;
      continue;
    }
    auto page = folder(k).page(url);
    if (!page) throw bad_input("scan --merge: " + where(k) + " lacks the page body of " + url + " its record names");
    out.body = std::move(page->body);
    out.entry = std::move(page->entry);
    out.outcome = *outcome;
  }
  return out;
}

Shards read_shards(const std::vector<std::string>& dirs) {
  if (dirs.empty()) throw usage_error("scan --merge: no shard state folders given");
  std::vector<std::unique_ptr<ShardStore>> folders;
  std::set<std::string> seen;
  std::vector<std::string> problems;
  for (const auto& dir : dirs) {
    if (!seen.insert(canonical_dir(dir)).second) {
      problems.push_back(dir + " is given twice");
      continue;
    }
    try {
      folders.push_back(std::make_unique<ShardStore>(dir));
    } catch (const Error& e) {
      std::string why = e.what();
      if (why.rfind("scan --merge: ", 0) == 0) why = why.substr(14);
      problems.push_back(why);
    }
  }
  int count = 0;
  for (const auto& f : folders) {
    if (f->problem().empty()) count = std::max(count, f->run().count);
  }
  std::map<int, std::size_t> by_index;
  for (std::size_t i = 0; i < folders.size(); ++i) {
    const ShardStore& f = *folders[i];
    if (!f.problem().empty()) {
      problems.push_back(f.dir() + " is not a finished shard: " + f.problem() + "; rerun its shard into it");
    } else if (f.run().count != count) {
      problems.push_back(fmt::format(
          "{} holds the record of a {}/{} run, not of one of {} shards (if it is the state the shards started "
          "from, its shard did not finish: rerun it)",
          f.dir(), f.run().index, f.run().count, count));
    } else if (auto [it, added] = by_index.emplace(f.run().index, i); !added) {
      problems.push_back(fmt::format("shard {} of {} is given twice ({} and {})", f.run().index, count,
                                     folders[it->second]->dir(), f.dir()));
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
    const ShardStore& first = *folders[by_index.at(1)];
    for (const auto& [k, i] : by_index) {
      const ShardStore& f = *folders[i];
      if (f.run().base != first.run().base) {
        problems.push_back(fmt::format(
            "shard {} ({}) started from another state than shard 1 ({}): every shard starts from the same state "
            "(the last merged one); rerun shard {} from it",
            k, f.dir(), first.dir(), k));
      } else if (auto diff = options_difference(first.run().options, f.run().options); !diff.empty()) {
        problems.push_back(fmt::format("shard {} ({}) ran with other options than shard 1 ({})", k, f.dir(), diff));
      }
    }
  }
  if (!problems.empty()) {
    std::string text = "scan --merge: the shards cannot be merged:";
    for (const auto& p : problems) text += "\n  " + p;
    throw bad_input(text);
  }
  Shards out;
  for (int k = 1; k <= count; ++k) out.m_folders.push_back(std::move(folders[by_index.at(k)]));
  out.m_base = out.m_folders.front()->run().base;
  return out;
}

}  // namespace wheelcheck::scan::detail

namespace wheelcheck::scan {

std::pair<int, int> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t used = 0;
    const int i = std::stoi(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("i");
    const std::string rest = text.substr(slash + 1);
    const int n = std::stoi(rest, &used);
    if (used != rest.size() || i < 1 || n < 1 || i > n || n > 10000) throw std::invalid_argument("range");
    return {i, n};
  } catch (const std::exception&) {
    throw usage_error("--shard " + text + ": expected i/N with 1 <= i <= N (e.g. 2/4)");
  }
}

int shard_of(const std::string& filename, int count) {
  return count <= 1 ? 1 : static_cast<int>(detail::fnv1a(filename) % static_cast<std::uint64_t>(count)) + 1;
}

bool in_shard(const std::string& filename, int index, int count) {
  return shard_of(filename, count) == index;
}

}  // namespace wheelcheck::scan
