// A layer applied to a root folder as a container runtime applies it (the OCI image spec's "Applying
// Changesets"): entries in order, each replacing what the layers below put at its path; whiteouts and
// opaque folders; folders' symbolic links followed inside the root. Only the files a probe reads are
// written (kept_file); the rest of each layer is read past.
//
// Every step is relative to a descriptor of the root, one component at a time with O_NOFOLLOW: a link a
// layer planted ("lib -> ../../..") is resolved by the code below as the kernel would inside a chroot,
// never by the kernel on the host, so nothing can be written outside the root.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

#include "inspector/container/detail.hpp"
#include "probes/detail.hpp"
#include "wheelcheck/error.hpp"

namespace wheelcheck::container::detail {

// A descriptor closed with its owner (outside the anonymous namespace: RootWriter::Parent holds one).
class OwnedFd {
 public:
  explicit OwnedFd(int fd = -1) : m_fd(fd) {}
  ~OwnedFd() {
    if (m_fd >= 0) ::close(m_fd);
  }
  OwnedFd(OwnedFd&& o) noexcept : m_fd(o.m_fd) { o.m_fd = -1; }
  OwnedFd& operator=(OwnedFd&& o) noexcept {
    if (this != &o) {
      if (m_fd >= 0) ::close(m_fd);
      m_fd = o.m_fd;
      o.m_fd = -1;
    }
    return *this;
  }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  int get() const { return m_fd; }

 private:
  int m_fd;
};

namespace {

constexpr int k_max_links = 40;  // the kernel's limit on links followed in one path

Error io(const std::string& what) {
  return Error(ErrorKind::Io, what + ": " + std::strerror(errno));
}

Error hostile(const std::string& what) {
  return Error(ErrorKind::BadInput, what);
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool python_interpreter_name(std::string_view base) {
  if (base.substr(0, 6) != "python") return false;
  for (char c : base.substr(6)) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 't')) return false;
  }
  return true;
}

}  // namespace

bool kept_file(std::string_view path) {
  const auto slash = path.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const std::string_view dir = slash == std::string_view::npos ? std::string_view{} : path.substr(0, slash);
  if (probe::library_like(base)) return true;
  const auto dir_slash = dir.rfind('/');
  const std::string_view parent = dir_slash == std::string_view::npos ? dir : dir.substr(dir_slash + 1);
  if (parent == "bin" && python_interpreter_name(base)) return true;
  if (base == "os.py" && parent.substr(0, 7) == "python3") return true;
  if (ends_with(base, ".egg-info")) return true;
  for (const auto& part : split(dir, "/", false)) {
    if (ends_with(part, ".dist-info") || ends_with(part, ".egg-info")) return true;
  }
  if (path == "etc/ld.so.conf" || path == "etc/ld.so.cache" || path == "etc/os-release" ||
      path == "usr/lib/os-release" || path == "lib/apk/db/installed" || dir == "etc/ld.so.conf.d") {
    return true;
  }
  if (base == "version.json" || base == "version.txt") {
    for (const auto& part : split(dir, "/", false)) {
      if (part.rfind("cuda", 0) == 0) return true;
    }
  }
  return false;
}

struct RootWriter::Parent {
  OwnedFd fd;
  std::string path;  // canonical, inside the root ("" for the root)
};

RootWriter::RootWriter(const std::string& root) : m_root(root) {
  m_root_fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (m_root_fd < 0) throw io("cannot open " + root);
}

RootWriter::~RootWriter() {
  if (m_root_fd >= 0) ::close(m_root_fd);
}

// The folder `parts` names, links followed inside the root; created (0755) where missing when `create`,
// else nullopt where missing. A component that is a regular file is Error(BadInput).
std::optional<RootWriter::Parent> RootWriter::parent_of(const std::vector<std::string>& parts, bool create,
                                                        const std::string& what) {
  std::deque<std::string> todo(parts.begin(), parts.end());
  std::vector<std::string> canon;
  OwnedFd cur(::dup(m_root_fd));
  if (cur.get() < 0) throw io("dup");
  int links = 0;
  auto reopen = [&] {  // the folder `canon` names, from the root (after "..", or an absolute link)
    cur = OwnedFd(::dup(m_root_fd));
    for (const auto& c : canon) {
      OwnedFd next(::openat(cur.get(), c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (next.get() < 0) throw io("cannot open a folder of the root on the way to " + what);
      cur = std::move(next);
    }
  };
  while (!todo.empty()) {
    const std::string c = todo.front();
    todo.pop_front();
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      // Only a link's target brings ".." here (an entry's own is refused before). A runtime would stop it at
      // the root; an entry written through a link that climbs above the root is an attack, and refused.
      if (canon.empty()) {
        throw hostile(what + ": its path goes through a symbolic link that climbs out of the root (refused)");
      }
      canon.pop_back();
      reopen();
      continue;
    }
    struct stat st {};
    if (::fstatat(cur.get(), c.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) throw io("cannot look at " + what);
      if (!create) return std::nullopt;
      if (::mkdirat(cur.get(), c.c_str(), 0755) != 0 && errno != EEXIST) throw io("cannot make a folder for " + what);
    } else if (S_ISLNK(st.st_mode)) {
      if (++links > k_max_links) {
        throw hostile(what + ": more than 40 symbolic links on its way (a loop)");
      }
      std::string target(static_cast<std::size_t>(st.st_size) + 1, '\0');
      const auto n = ::readlinkat(cur.get(), c.c_str(), target.data(), target.size());
      if (n < 0) throw io("cannot read a link on the way to " + what);
      target.resize(static_cast<std::size_t>(n));
      const auto target_parts = split(target, "/", false);
      todo.insert(todo.begin(), target_parts.begin(), target_parts.end());
      if (!target.empty() && target[0] == '/') {
        canon.clear();
        reopen();
      }
      continue;
    } else if (!S_ISDIR(st.st_mode)) {
      throw hostile(what + ": its path goes through /" + join(canon, "/") + (canon.empty() ? "" : "/") + c +
                    ", which is not a folder");
    }
    OwnedFd next(::openat(cur.get(), c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) throw io("cannot open a folder on the way to " + what);
    cur = std::move(next);
    canon.push_back(c);
  }
  return Parent{std::move(cur), join(canon, "/")};
}

const RootWriter::Parent* RootWriter::cached_parent(const std::vector<std::string>& parts, bool create,
                                                    const std::string& what) {
  std::string key = (create ? "+" : "-") + join(parts, "/");
  if (m_cache && m_cache_valid && key == m_cache_key) return m_cache.get();
  auto p = parent_of(parts, create, what);
  if (!p) return nullptr;
  m_cache = std::make_unique<Parent>(std::move(*p));
  m_cache_key = std::move(key);
  m_cache_valid = true;
  return m_cache.get();
}

// Removes `name` in the folder, whatever it is; a folder with everything under it (never through a link).
void RootWriter::remove_at(int dir_fd, const std::string& name) {
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)) m_cache_valid = false;  // a path may resolve otherwise now
  if (S_ISDIR(st.st_mode)) {
    empty_folder(dir_fd, name, {});
    if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0) throw io("cannot remove the folder " + name);
  } else if (::unlinkat(dir_fd, name.c_str(), 0) != 0) {
    throw io("cannot remove " + name);
  }
}

// Empties the folder `path` in `dir_fd` of every entry not in `keep` (names).
void RootWriter::empty_folder(int dir_fd, const std::string& path, const std::set<std::string>& keep) {
  OwnedFd fd(::openat(dir_fd, path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) throw io("cannot open the folder " + path);
  std::vector<std::string> names;
  {
    DIR* d = ::fdopendir(::dup(fd.get()));
    if (d == nullptr) throw io("cannot list " + path);
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != ".." && keep.count(n) == 0) names.push_back(n);
    }
    ::closedir(d);
  }
  for (const auto& n : names) remove_at(fd.get(), n);
}

void RootWriter::apply(TarReader& layer, const Limits& limits, std::vector<std::string>& notes) {
  static_cast<void>(limits);
  const std::string& what = layer.what();
  std::set<std::string> made;  // canonical paths this layer made: an opaque marker keeps them
  std::vector<char> buf(std::size_t{1} << 20);
  TarEntry e;
  while (layer.next(e)) {
    const auto clean = clean_image_path(e.path);
    if (!clean) throw hostile(what + ": an entry named " + printable(e.path) + " climbs out of the root (\"..\")");
    if (clean->empty()) continue;  // the root itself
    if (e.type == '3' || e.type == '4') {
      throw hostile(what + ": /" + printable(*clean) + " is a " + (e.type == '3' ? "character" : "block") +
                    " device (an image layer has no business making one; refused)");
    }
    auto parts = split(*clean, "/", false);
    const std::string name = parts.back();
    parts.pop_back();
    const std::string entry_what = what + ": /" + printable(*clean);
    const bool whiteout = name.rfind(".wh.", 0) == 0;
    if (whiteout && name != ".wh..wh..opq") {
      const std::string victim = name.substr(4);
      if (victim.empty() || victim == "." || victim == ".." || victim.rfind(".wh.", 0) == 0) {
        throw hostile(entry_what + ": a whiteout that names " + printable(victim.empty() ? "nothing" : victim));
      }
    }
    const Parent* parent = cached_parent(parts, !whiteout, entry_what);
    if (parent == nullptr) continue;  // a whiteout under a folder no layer below made: nothing to delete
    const int pfd = parent->fd.get();
    const std::string path = parent->path.empty() ? name : parent->path + "/" + name;
    if (whiteout) {
      if (name == ".wh..wh..opq") {
        std::set<std::string> keep;
        const std::string prefix = parent->path.empty() ? "" : parent->path + "/";
        for (const auto& m : made) {
          if (m.size() > prefix.size() && m.compare(0, prefix.size(), prefix) == 0 &&
              m.find('/', prefix.size()) == std::string::npos) {
            keep.insert(m.substr(prefix.size()));
          }
        }
        empty_folder(pfd, ".", keep);
        continue;
      }
      remove_at(pfd, name.substr(4));
      continue;
    }
    if (e.type == '5') {
      struct stat st {};
      if (::fstatat(pfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)) remove_at(pfd, name);
      if (::mkdirat(pfd, name.c_str(), 0755) != 0 && errno != EEXIST) throw io("cannot make " + entry_what);
      made.insert(path);
      continue;
    }
    if (e.type == '2') {
      if (e.link.empty()) throw hostile(entry_what + ": a symbolic link to nothing");
      remove_at(pfd, name);
      if (::symlinkat(e.link.c_str(), pfd, name.c_str()) != 0) throw io("cannot make the link " + entry_what);
      m_cache_valid = false;
      made.insert(path);
      continue;
    }
    if (e.type == '1') {
      const auto target = clean_image_path(e.link);
      if (!target || target->empty()) {
        throw hostile(entry_what + ": a hard link to " + printable(e.link) + ", outside the root (refused)");
      }
      auto tparts = split(*target, "/", false);
      const std::string tname = tparts.back();
      tparts.pop_back();
      auto tparent = parent_of(tparts, false, entry_what);
      struct stat st {};
      const bool there = tparent && ::fstatat(tparent->fd.get(), tname.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
      if (there && S_ISDIR(st.st_mode)) throw hostile(entry_what + ": a hard link to a folder (refused)");
      remove_at(pfd, name);
      if (there) {
        if (::linkat(tparent->fd.get(), tname.c_str(), pfd, name.c_str(), 0) != 0)
          throw io("cannot link " + entry_what);
        made.insert(path);
      } else if (kept_file(path)) {
        notes.push_back("/" + printable(path) + " is a hard link to /" + printable(*target) +
                        ", a file the probe does not keep: it is missing from the probed root");
      }
      continue;
    }
    if (e.type != '0') continue;  // a fifo, or a type no runtime makes a file of: nothing a probe reads
    remove_at(pfd, name);
    if (!kept_file(path)) continue;  // its data is read past by the next header
    OwnedFd out(::openat(pfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                         (e.mode & 0111) != 0 ? 0755 : 0644));
    if (out.get() < 0) throw io("cannot write " + entry_what);
    for (;;) {
      const std::size_t n = layer.read_data(buf.data(), buf.size());
      if (n == 0) break;
      std::size_t done = 0;
      while (done < n) {
        const auto w = ::write(out.get(), buf.data() + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) throw io("cannot write " + entry_what);
        done += static_cast<std::size_t>(w);
      }
      m_bytes += n;
    }
    ++m_files;
    made.insert(path);
  }
}

}  // namespace wheelcheck::container::detail
