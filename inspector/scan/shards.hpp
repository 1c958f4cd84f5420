// The shards of one scan and their merge (inspector/scan/shards.cpp): the state folders of
// `scan --shard K/N --state DIR` runs, read and checked as one set by `scan --merge DIR... --state OUT`.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "inspector/scan/state.hpp"

namespace wheelcheck::scan::detail {

// The shards' folders, every one of 1..N present once, finished, started from the same state with the same
// options (read_shards throws Error(BadInput) naming each shard that is not). Each is read where it lies, a row at a
// time: what a merge holds is the wheel it is on, never a shard.
class Shards {
 public:
  int count() const { return static_cast<int>(m_folders.size()); }
  const std::string& base() const { return m_base; }  // the digest of the state they started from
  const Json& options() const { return m_folders.front()->run().options; }
  ShardStore& folder(int shard) { return *m_folders.at(static_cast<std::size_t>(shard - 1)); }

  // A new wheel as the shard that owns it recorded it: its entry (null when the shard did not check it) and its
  // record in the shard's state (null when absent).
  struct Taken {
    Json entry;
    Json remembered;
    std::string where;  // "shard K of N (DIR)"
  };
  Taken take(int shard, const std::string& key);

  // What the shards' runs fetched from a URL: the first answer read (in shard order) with its state entry and
  // body, and the failures of the shards that could not read it.
  struct Fetched {
    std::optional<std::string> body;
    Json entry;                       // the page's state entry (validators, content type, final URL, sha256)
    Json outcome;                     // as the run keeps it: {"sha256"} or {"error", "not_found"}
    std::vector<std::string> failed;  // "shard K of N could not read URL: ..." for each other shard that failed
    bool differed = false;            // two shards read different bodies (the index changed during the run)
  };
  Fetched fetched(const std::string& url);

  std::string where(int shard) const;  // "shard K of N (DIR)"

 private:
  friend Shards read_shards(const std::vector<std::string>& dirs);
  std::vector<std::unique_ptr<ShardStore>> m_folders;  // by shard index - 1
  std::string m_base;
};

Shards read_shards(const std::vector<std::string>& dirs);

// The first difference between two runs' options ("" when none), for the error that refuses a merge.
std::string options_difference(const Json& a, const Json& b);

}  // namespace wheelcheck::scan::detail
