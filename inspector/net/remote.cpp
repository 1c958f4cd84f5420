// Remote wheels (see include/wheelcheck/remote.hpp).
//
// Headers-only over HTTP: libzip reads the wheel through HttpFile, a RandomAccess whose reads become Range
// requests. libzip's first reads are the end-of-central-directory record and the central directory (one
// request at the end of the file); then each ELF member is read as the ELF scanner asks
// (inspector/wheel/zip_archive.cpp's MemberReader): its first bytes in a forward stream whose read-ahead
// grows with the run, and, for a large deflate member, its last few hundred KB decoded on their own. WHEEL
// and METADATA are small reads. A 870 MB PyTorch wheel costs under 1% of its bytes.
//
// The first request asks for the last 512 KiB (a suffix range): it tells the size and range support and
// brings the central directory, so a wheel under 512 KiB costs one request in all. Blocks of 64 KB are
// cached (at most 128 MB, least recently used first out); a miss fetches the run of missing blocks it
// needs, plus the read-ahead when the read continues where the previous one ended: as long as the run of
// reads so far, up to 2 MB (a sweep through a member's middle stops anywhere, so a run that has read 100 KB
// fetches 100 KB more, not a doubled window that may have grown past it; against doubling, a headers-only
// check of the 6.5 MB torch_python_ext wheel moved 28% of its bytes in 6 requests, not 32% in 7, the 870 MB
// torch wheel 5.6 MB, not 8.3, and six copies of that library 31 requests, not 37). Before the members are
// read, inspect names their local headers and first bytes (prefetch): their blocks come in runs, one
// request per run, so a wheel of many small libraries does not cost a request per member. 64 KB, not
// larger: the start of a member that is read holds its ELF header and dynamic symbols (some tens of KB
// compressed), and a larger block would bring as much again of the members beside it that are never read.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "wheelcheck/error.hpp"
#include "wheelcheck/remote.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::remote {

namespace {

constexpr std::uint64_t k_block = std::uint64_t{64} << 10;
// Two runs of missing blocks are fetched as one when at most this many blocks lie between them.
constexpr std::uint64_t k_merge_gap = 2;
// What one prefetch may bring in all: a share of the cache, so that it never evicts what it brought.
constexpr std::uint64_t k_max_prefetch = std::uint64_t{32} << 20;
constexpr std::uint64_t k_max_readahead = std::uint64_t{2} << 20;
// The first request's suffix: a central directory of some five thousand members, and any wheel under
// 512 KiB whole. Not a MiB: for a wheel whose last members are never read (a torch-shaped wheel ends with
// 1,900 Python files) the rest of the suffix is bytes moved for nothing, 512 KB of the 2.3 MB that its
// headers-only read moved with a MiB; a wheel of 512 KiB to a MiB costs a second request instead.
constexpr std::uint64_t k_first_suffix = std::uint64_t{512} << 10;
constexpr std::uint64_t k_max_cached = std::uint64_t{128} << 20;

}  // namespace

struct HttpFile::Impl {
  Impl(net::Client& c, net::RemoteFile f, std::string t) : client(c), file(std::move(f)), tail(std::move(t)) {}
  net::Client& client;
  net::RemoteFile file;
  const std::string tail;  // the file's last tail.size() bytes, from the first request
  mutable std::mutex mutex;
  mutable std::map<std::uint64_t, std::pair<std::string, std::uint64_t>> blocks;  // index -> bytes, last use
  mutable std::uint64_t clock = 0;
  mutable std::uint64_t cached = 0;
  mutable std::uint64_t last_end = ~std::uint64_t{0};
  mutable std::uint64_t run_begin = 0;  // where the run of reads that ends at last_end began

  std::string get(std::uint64_t begin, std::uint64_t length) const {
    std::string bytes;
    try {
      bytes = client.get_range(file, begin, length);
    } catch (const Error& e) {
      throw Error(ErrorKind::Io, e.what());  // the network, not the wheel: never a member problem
    }
    if (bytes.size() != length) throw Error(ErrorKind::Io, "short range answer from " + net::redact_url(file.url));
    return bytes;
  }

  void fetch(std::uint64_t first_block, std::uint64_t last_block) const {
    const std::uint64_t begin = first_block * k_block;
    const std::uint64_t end = std::min(file.size, (last_block + 1) * k_block);
    const std::string bytes = get(begin, end - begin);
    for (std::uint64_t b = first_block; b <= last_block; ++b) {
      const std::uint64_t off = (b - first_block) * k_block;
      const std::uint64_t len = std::min(k_block, end - b * k_block);
      if (blocks.count(b) != 0) continue;
      blocks[b] = {bytes.substr(static_cast<std::size_t>(off), static_cast<std::size_t>(len)), ++clock};
      cached += len;
    }
  }

  // Least recently used blocks out, never those of the read in hand.
  void evict(std::uint64_t keep_first, std::uint64_t keep_last) const {
    while (cached > k_max_cached) {
      auto oldest = blocks.end();
      for (auto it = blocks.begin(); it != blocks.end(); ++it) {
        if (it->first >= keep_first && it->first <= keep_last) continue;
        if (oldest == blocks.end() || it->second.second < oldest->second.second) oldest = it;
      }
      if (oldest == blocks.end()) return;
      cached -= oldest->second.first.size();
      blocks.erase(oldest);
    }
  }

  // The blocks of `ranges` that are neither cached nor in the tail, as runs: one request per run.
  void prefetch(std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges) const {
    const std::uint64_t tail_begin = file.size - tail.size();
    std::vector<std::uint64_t> wanted;
    for (const auto& [offset, length] : ranges) {
      if (length == 0 || offset >= tail_begin) continue;
      const std::uint64_t end = std::min(offset + length, tail_begin);
      for (std::uint64_t b = offset / k_block; b <= (end - 1) / k_block; ++b) wanted.push_back(b);
    }
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    std::lock_guard lock(mutex);
    std::erase_if(wanted, [&](std::uint64_t b) { return blocks.count(b) != 0; });
    if (wanted.size() * k_block > k_max_prefetch) wanted.resize(k_max_prefetch / k_block);
    for (std::size_t i = 0; i < wanted.size();) {
      std::size_t j = i;
      while (j + 1 < wanted.size() && wanted[j + 1] - wanted[j] <= k_merge_gap + 1) ++j;
      fetch(wanted[i], wanted[j]);
      i = j + 1;
    }
    evict(~std::uint64_t{0}, 0);
  }

  void read_at(std::uint64_t offset, std::span<std::byte> out) const {
    if (out.empty()) return;
    if (offset > file.size || out.size() > file.size - offset) {
      throw bad_input(net::redact_url(file.url) + ": read at " + std::to_string(offset) + " runs past its end");
    }
    // What lies in the tail comes from it, also for a read that begins before it.
    const std::uint64_t tail_begin = file.size - tail.size();
    if (offset >= tail_begin) {
      std::memcpy(out.data(), tail.data() + (offset - tail_begin), out.size());
      return;
    }
    if (offset + out.size() > tail_begin) {
      const auto before = static_cast<std::size_t>(tail_begin - offset);
      std::memcpy(out.data() + before, tail.data(), out.size() - before);
      out = out.first(before);
    }
    std::lock_guard lock(mutex);
    if (out.size() > k_max_readahead) {  // a large read (a member's end): straight through, not cached
      const auto bytes = get(offset, out.size());
      std::memcpy(out.data(), bytes.data(), out.size());
      last_end = ~std::uint64_t{0};
      return;
    }
    const std::uint64_t first = offset / k_block;
    const std::uint64_t last = (offset + out.size() - 1) / k_block;
    const std::uint64_t last_file_block = (tail_begin - 1) / k_block;  // read-ahead stops at the tail
    if (offset != last_end) run_begin = offset;
    last_end = offset + out.size();
    const std::uint64_t readahead = offset == run_begin ? 0 : std::min(last_end - run_begin, k_max_readahead);
    for (std::uint64_t b = first; b <= last; ++b) {
      if (blocks.count(b) != 0) continue;
      std::uint64_t run_end = b;
      while (run_end < last && blocks.count(run_end + 1) == 0) ++run_end;
      if (run_end == last) run_end = std::min(last_file_block, last + readahead / k_block);
      fetch(b, run_end);
    }
    std::size_t done = 0;
    for (std::uint64_t b = first; b <= last; ++b) {
      auto& entry = blocks.at(b);
      entry.second = ++clock;
      const std::uint64_t block_begin = b * k_block;
      const std::uint64_t from = std::max(offset, block_begin);
      const std::uint64_t to = std::min<std::uint64_t>(offset + out.size(), block_begin + entry.first.size());
      std::memcpy(out.data() + done, entry.first.data() + (from - block_begin), to - from);
      done += static_cast<std::size_t>(to - from);
    }
    evict(first, last);
  }
};

HttpFile::HttpFile(net::Client& client, net::RemoteFile file, std::string tail)
    : m_impl(std::make_unique<Impl>(client, std::move(file), std::move(tail))) {}
HttpFile::~HttpFile() = default;
std::uint64_t HttpFile::size() const {
  return m_impl->file.size;
}
std::string HttpFile::name() const {
  return net::redact_url(m_impl->file.url);
}
void HttpFile::read_at(std::uint64_t offset, std::span<std::byte> out) const {
  m_impl->read_at(offset, out);
}
void HttpFile::prefetch(std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges) const {
  m_impl->prefetch(ranges);
}
WheelUrl parse_wheel_url(const std::string& url) {
  if (!net::is_url(url)) throw bad_input("not an http(s) URL: " + net::redact_url(url));
  WheelUrl w;
  const auto hash = url.find('#');
  w.url = url.substr(0, hash);
  if (hash != std::string::npos) {
    const std::string fragment = url.substr(hash + 1);
    if (fragment.rfind("sha256=", 0) == 0) {
      w.sha256 = ascii_lower(fragment.substr(7));
      if (!is_sha256_hex(w.sha256)) {
        throw bad_input("the #sha256= fragment of " + net::redact_url(url) + " is not 64 hex digits");
      }
    }
  }
  std::string path = w.url.substr(0, w.url.find('?'));
  const auto slash = path.rfind('/');
  w.filename = percent_decode(slash == std::string::npos ? path : path.substr(slash + 1));
  if (w.filename.empty() || w.filename.find('/') != std::string::npos || w.filename == "." || w.filename == "..") {
    throw bad_input("cannot tell a wheel file name from " + net::redact_url(url));
  }
  return w;
}

namespace {

// A folder of this process's own under $TMPDIR (mkdtemp: mode 0700), removed with what it holds.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern = getenv_or("TMPDIR", "/tmp") + "/wheelcheck-download-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw io_error("cannot create a folder in " + getenv_or("TMPDIR", "/tmp"));
    m_path = pattern;
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

// Whether a download's lock (X.lock) is free now: absent, or nobody holds it.
bool lock_free(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free;
}

// What dead downloads left in the downloads folder: their locks, and parts a day old that nobody
// resumed. Once per folder and process.
void sweep_downloads(const std::string& dir) {
  static std::mutex mutex;
  static std::set<std::string> swept;
  {
    const std::lock_guard<std::mutex> hold(mutex);
    if (!swept.insert(dir).second) return;
  }
  std::error_code ec;
  const auto now = std::filesystem::file_time_type::clock::now();
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string path = e.path().string();
    if (!e.is_regular_file(ec) || e.is_symlink(ec)) continue;
    if (path.ends_with(".lock")) {
      if (lock_free(path)) std::filesystem::remove(path, ec);  // FileLock retakes a lock on a removed file
    } else if (path.ends_with(".part") || path.ends_with(".part.json")) {
      const std::string base = path.substr(0, path.rfind(".part"));
      const auto age = now - e.last_write_time(ec);
      if (!ec && age > std::chrono::hours(24) && lock_free(base + ".lock")) std::filesystem::remove(path, ec);
    }
  }
}

// A full profile of the claimed sha256 (it was verified when stored), else a headers-only one made
// earlier from this very URL with this claim.
Fetched from_cache(const std::string& sha, const std::string& url, const InspectOptions& options,
                   const ProfileCache* cache, bool headers_ok) {
  Fetched f;
  if (cache == nullptr || !is_sha256_hex(sha)) return f;
  const std::string reader = elf::reader_name(options.reader);
  if (auto p = cache->load(sha, reader)) {
    f.profile = std::move(*p);
    f.from_cache = true;
  } else if (headers_ok) {
    if (auto q = cache->load(sha, headers_key(reader, net::redact_url(url)))) {
      f.profile = std::move(*q);
      f.from_cache = true;
    }
  }
  return f;
}

}  // namespace

Fetched inspect_url(const std::string& url, const Fetch& fetch, InspectOptions options, const ProfileCache* cache,
                    net::Client& client) {
  const auto w = parse_wheel_url(url);
  const std::string sha = !fetch.sha256.empty() ? fetch.sha256 : w.sha256;
  if (auto hit = from_cache(sha, w.url, options, cache, fetch.mode != Mode::Full); hit.from_cache) return hit;

  const auto before = client.stats().bytes_received;
  // One request learns the size and range support and brings the central directory (and, for a wheel
  // under 512 KiB, the whole of it); a full read asks only for the size.
  std::string tail;
  const auto file = fetch.mode == Mode::Full ? client.stat(w.url) : client.stat_with_tail(w.url, k_first_suffix, tail);
  Fetched f;
  if (fetch.mode != Mode::Full && file.ranges) {
    options.verify = Verify::Headers;
    if (tail.size() > file.size) tail.clear();
    f.profile = inspect_wheel(std::make_shared<HttpFile>(client, file, std::move(tail)), w.filename, sha, options);
  } else if (fetch.mode == Mode::Headers) {
    throw bad_input(net::redact_url(w.url) +
                    ": the server does not answer byte ranges, so a headers-only read "
                    "is impossible (--verify full downloads the whole wheel)");
  } else {
    // The whole wheel: downloaded (verified against the index's sha256 before it lands), inspected in
    // full, then removed: the profile is what is kept. One process at a time per file name (a lock
    // beside it): a second one waits, then finds the first one's profile in the cache.
    std::string dir = fetch.downloads_dir;
    std::unique_ptr<TempFolder> scratch;
    if (dir.empty() && cache != nullptr) dir = cache->downloads_dir();
    if (dir.empty()) {
      scratch = std::make_unique<TempFolder>();  // no cache: a private folder of this process
      dir = scratch->path();
    }
    make_dirs(dir);
    sweep_downloads(dir);
    const std::string dest = dir + "/" + w.filename;
    const auto lock = FileLock::acquire(dest + ".lock", {}, true);
    if (auto hit = from_cache(sha, w.url, options, cache, false); hit.from_cache) return hit;
    client.download(w.url, dest, sha, fetch.progress);
    options.verify = Verify::Full;
    try {
      f.profile = inspect_wheel(dest, options);
    } catch (...) {
      std::remove(dest.c_str());
      throw;
    }
    std::remove(dest.c_str());
    f.whole = true;
  }
  f.profile.source = net::redact_url(w.url);
  f.bytes_fetched = client.stats().bytes_received - before;
  // A cache that cannot be written costs speed, never the answer (store skips a profile without a sha256).
  if (cache != nullptr) {
    try {
      cache->store(f.profile);
    } catch (const Error& e) {
      f.cache_error = e.what();
    }
  }
  return f;
}

}  // namespace wheelcheck::remote
