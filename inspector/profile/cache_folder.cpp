// The profile cache's folder: private, link-free, capped; and the framing that makes each entry prove
// itself (cache_folder.hpp says what each promises).
#include "cache_folder.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <isa-l/crc64.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <ctime>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cache_folder {

namespace {

constexpr std::string_view k_magic = "wcache1 ";
constexpr std::size_t k_crc_digits = 16;
constexpr std::size_t k_max_header = 4096;

std::uint64_t crc_of(std::string_view a, std::string_view b) {
  std::uint64_t crc = crc64_ecma_refl(0, reinterpret_cast<const unsigned char*>(a.data()), a.size());
  return crc64_ecma_refl(crc, reinterpret_cast<const unsigned char*>(b.data()), b.size());
}

std::string hex16(std::uint64_t v) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s(k_crc_digits, '0');
  for (std::size_t i = k_crc_digits; i-- > 0; v >>= 4) s[i] = digits[v & 0xf];
  return s;
}

std::vector<std::string> components(const std::string& rel) {
  return split(rel, "/", false);
}

// One component below dir_fd as a folder, never through a link; -1 when it is absent or not a folder.
int open_below(int dir_fd, const std::string& name) {
  return ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

// LEN bytes; false when the file is shorter than fstat said (another process replaced it: a miss) or
// unreadable.
bool read_fully(int fd, char* out, std::size_t len) {
  std::size_t done = 0;
  while (done < len) {
    const auto n = ::read(fd, out + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Least recently used: a hit refreshes its mtime, at most once an hour (a warm path writes nothing else).
void touch(int fd, std::int64_t mtime) {
  if (std::time(nullptr) - mtime > 3600) static_cast<void>(::futimens(fd, nullptr));
}

}  // namespace

std::string frame(std::string_view kind, std::string_view key, bool flag, std::string_view payload) {
  std::string rest;
  rest.reserve(kind.size() + key.size() + 32);
  rest.append(kind).append(flag ? " 1 " : " 0 ").append(std::to_string(payload.size())).append(" ");
  rest.append(key).append("\n");
  std::string out;
  out.reserve(k_magic.size() + k_crc_digits + 1 + rest.size() + payload.size());
  out.append(k_magic).append(hex16(crc_of(rest, payload))).append(" ").append(rest).append(payload);
  return out;
}

std::optional<Unframed> unframe(std::string_view bytes, std::string_view kind, std::string_view key) {
  const std::size_t start = k_magic.size() + k_crc_digits + 1;
  if (bytes.size() < start || bytes.substr(0, k_magic.size()) != k_magic || bytes[start - 1] != ' ') {
    return std::nullopt;
  }
  const auto newline = bytes.find('\n', start);
  if (newline == std::string_view::npos || newline - start > k_max_header) return std::nullopt;
  const std::string_view rest = bytes.substr(start, newline + 1 - start);
  const std::string_view payload = bytes.substr(newline + 1);
  // "<kind> <flag> <size> <key>\n"
  const std::string_view line = rest.substr(0, rest.size() - 1);
  if (line.size() < kind.size() + 5 || line.substr(0, kind.size()) != kind || line[kind.size()] != ' ') {
    return std::nullopt;
  }
  std::string_view tail = line.substr(kind.size() + 1);
  if (tail.size() < 2 || (tail[0] != '0' && tail[0] != '1') || tail[1] != ' ') return std::nullopt;
  Unframed u;
  u.flag = tail[0] == '1';
  tail = tail.substr(2);
  const auto space = tail.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::uint64_t size = 0;
  const auto [end, ec] = std::from_chars(tail.data(), tail.data() + space, size);
  if (ec != std::errc() || end != tail.data() + space || size != payload.size()) return std::nullopt;
  if (tail.substr(space + 1) != key) return std::nullopt;
  std::uint64_t crc = 0;
  const std::string_view digits = bytes.substr(k_magic.size(), k_crc_digits);
  const auto [cend, cec] = std::from_chars(digits.data(), digits.data() + digits.size(), crc, 16);
  if (cec != std::errc() || cend != digits.data() + digits.size()) return std::nullopt;
  if (crc != crc_of(rest, payload)) return std::nullopt;
  u.payload = payload;
  return u;
}

Folder::Folder(const std::string& dir, std::uint64_t max_size) : m_dir(dir), m_max(max_size) {
  make_dirs(dir);
  m_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (m_fd < 0) throw io_error("cannot open " + dir);
  struct stat st {};
  if (::fstat(m_fd, &st) != 0) {
    const auto e = io_error("cannot open " + dir);
    ::close(m_fd);
    throw e;
  }
  if (const auto why = not_private_reason(st); !why.empty()) {
    ::close(m_fd);
    throw Error(ErrorKind::Io, dir + " is not private to you: " + why);
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    const auto e = io_error("cannot write " + dir);
    ::close(m_fd);
    throw e;
  }
}

Folder::~Folder() {
  if (m_fd >= 0) ::close(m_fd);
}

int Folder::open_dir(const std::string& rel, bool create) const {
  int fd = ::dup(m_fd);
  if (fd < 0) return -1;
  for (const auto& name : components(rel)) {
    int next = open_below(fd, name);
    if (next < 0 && create) {
      if (errno == ELOOP || errno == ENOTDIR) static_cast<void>(::unlinkat(fd, name.c_str(), 0));  // a link, a file
      if (::mkdirat(fd, name.c_str(), 0755) != 0 && errno != EEXIST) {
        ::close(fd);
        return -1;
      }
      next = open_below(fd, name);
    }
    ::close(fd);
    if (next < 0) return -1;
    fd = next;
  }
  return fd;
}

std::optional<Folder::Opened> Folder::open_file(const std::string& rel, std::uint64_t max) const {
  const auto slash = rel.rfind('/');
  const FdGuard dir{slash == std::string::npos ? ::dup(m_fd) : open_dir(rel.substr(0, slash), false)};
  if (dir.fd < 0) return std::nullopt;
  // A folder touched is a folder swept (once a process): what a killed run left here goes now.
  sweep_temporaries_at(dir.fd, m_dir + "/" + (slash == std::string::npos ? "" : rel.substr(0, slash)));
  const std::string leaf = slash == std::string::npos ? rel : rel.substr(slash + 1);
  // O_NONBLOCK: a FIFO planted as an entry cannot block the open; fstat then refuses it.
  FdGuard f{::openat(dir.fd, leaf.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) > max) {
    return std::nullopt;
  }
  Opened file{f.fd, static_cast<std::uint64_t>(st.st_size), st.st_mtime};
  f.fd = -1;
  return file;
}

std::optional<std::string> Folder::read(const std::string& rel, std::uint64_t max) const {
  const auto file = open_file(rel, max);
  if (!file) return std::nullopt;
  const FdGuard f{file->fd};
  std::string bytes(static_cast<std::size_t>(file->size), '\0');
  if (!read_fully(f.fd, bytes.data(), bytes.size())) return std::nullopt;
  touch(f.fd, file->mtime);
  return bytes;
}

std::optional<MappedEntry> Folder::map_entry(const std::string& rel, std::uint64_t max, std::string_view kind,
                                             std::string_view key) const {
  const auto file = open_file(rel, max);
  if (!file) return std::nullopt;
  const FdGuard f{file->fd};
  if (file->size == 0) return std::nullopt;
  const auto size = static_cast<std::size_t>(file->size);
  // MAP_POPULATE: the page cache's pages mapped in one call (no fault per page, no copy). An entry is
  // only ever replaced by a rename, never changed in place, so the mapped file stays as it was checked.
  void* at = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, f.fd, 0);
  if (at == MAP_FAILED) return std::nullopt;
  std::shared_ptr<const void> bytes(at, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
  const auto u = unframe(std::string_view(static_cast<const char*>(at), size), kind, key);
  if (!u) return std::nullopt;
  touch(f.fd, file->mtime);
  return MappedEntry{std::move(bytes), u->payload, u->flag};
}

void Folder::write(const std::string& rel, std::string_view content) const {
  const auto slash = rel.rfind('/');
  const std::string folder = slash == std::string::npos ? "" : rel.substr(0, slash);
  const FdGuard dir{open_dir(folder, true)};
  if (dir.fd < 0) throw io_error("cannot create " + m_dir + "/" + folder);
  sweep_temporaries_at(dir.fd, m_dir + "/" + folder);
  const std::string leaf = slash == std::string::npos ? rel : rel.substr(slash + 1);
  const std::string tmp = temporary_name(leaf);
  int fd = ::openat(dir.fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) {
    static_cast<void>(::unlinkat(dir.fd, tmp.c_str(), 0));
    fd = ::openat(dir.fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  }
  const std::string path = m_dir + "/" + rel;
  if (fd < 0) throw io_error("cannot write " + path);
  static_cast<void>(::flock(fd, LOCK_EX));
  std::size_t done = 0;
  while (done < content.size()) {
    const auto n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const auto e = io_error("cannot write " + path);
      ::close(fd);
      static_cast<void>(::unlinkat(dir.fd, tmp.c_str(), 0));
      throw e;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 || ::renameat(dir.fd, tmp.c_str(), dir.fd, leaf.c_str()) != 0) {
    const auto e = io_error("cannot write " + path);
    static_cast<void>(::unlinkat(dir.fd, tmp.c_str(), 0));
    throw e;
  }
  account(content.size());
}

std::string Folder::subfolder(const std::string& rel) const {
  const FdGuard dir{open_dir(rel, true)};
  if (dir.fd < 0) throw io_error("cannot create " + m_dir + "/" + rel);
  sweep_temporaries_at(dir.fd, m_dir + "/" + rel);
  return m_dir + "/" + rel;
}

void Folder::account(std::uint64_t bytes) const {
  const std::lock_guard<std::mutex> hold(m_mutex);
  if (!m_total) {
    m_total = 0;
    evict();  // counts what is there (and trims it to the cap)
  }
  *m_total += bytes;
  if (*m_total > m_max) evict();
}

// Counts the entries (profiles/*/*, index/*/*) and, over the cap, removes the least recently used until
// 90% of it is left. An entry is all the files of one wheel's sha256 (profile, rendering, derived texts),
// used as recently as its most recently used file, and goes whole. Called with m_mutex held.
void Folder::evict() const {
  struct File {
    int dir;
    std::string name;
  };
  struct Entry {
    std::int64_t mtime = 0;
    std::uint64_t size = 0;
    std::vector<File> files;
  };
  std::map<std::string, Entry> entries;  // by top/shard/sha256 (an index file: by its own name)
  std::vector<int> dirs;
  std::uint64_t total = 0;
  for (const char* top : {"profiles", "index"}) {
    const FdGuard t{open_dir(top, false)};
    if (t.fd < 0) continue;
    DIR* d = ::fdopendir(::dup(t.fd));
    if (d == nullptr) continue;
    while (const dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      const int shard = open_below(t.fd, e->d_name);
      if (shard < 0) continue;
      dirs.push_back(shard);
      DIR* s = ::fdopendir(::dup(shard));
      if (s == nullptr) continue;
      while (const dirent* f = ::readdir(s)) {
        struct stat st {};
        if (f->d_name[0] == '.' || ::fstatat(shard, f->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (!S_ISREG(st.st_mode)) continue;
        const std::string name = f->d_name;
        auto& entry = entries[std::string(top) + "/" + e->d_name + "/" + name.substr(0, 64)];
        entry.mtime = std::max<std::int64_t>(entry.mtime, st.st_mtime);
        entry.size += static_cast<std::uint64_t>(st.st_size);
        entry.files.push_back({shard, name});
        total += static_cast<std::uint64_t>(st.st_size);
      }
      ::closedir(s);
    }
    ::closedir(d);
  }
  if (total > m_max) {
    std::vector<const std::pair<const std::string, Entry>*> order;
    for (const auto& e : entries) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
      return std::tie(a->second.mtime, a->first) < std::tie(b->second.mtime, b->first);
    });
    const std::uint64_t goal = m_max / 10 * 9;
    for (const auto* e : order) {
      if (total <= goal) break;
      for (const auto& f : e->second.files) static_cast<void>(::unlinkat(f.dir, f.name.c_str(), 0));
      total -= e->second.size;
    }
  }
  for (const int fd : dirs) ::close(fd);
  m_total = total;
}

}  // namespace wheelcheck::cache_folder
