// RootFs: a folder of the host taken as an image's "/", walked as the kernel walks a path under chroot(2).
//
// resolve() keeps two lists: the canonical components reached so far, and a stack of components still to
// walk (the requested path's, then those of every link met on the way). Each component is looked at with
// lstat(2) on host_root + the canonical path so far + the component:
//   - a folder or a file is appended to the canonical path (a file must be the last component);
//   - "." is skipped; ".." drops the last canonical component, and at "/" it stays at "/": the walk is
//     clamped at the root, as chroot(2) clamps it, and reported once as "escapes-root" (resolved.escaped);
//   - a symbolic link is read with readlink(2) and its target's components are pushed in front of what is
//     left; an absolute target first empties the canonical path, so "/etc/passwd" means the image's
//     /etc/passwd and never the host's (re-rooting). After 40 links (the kernel's MAXSYMLINKS) the walk
//     stops as a "symlink-loop".
// A component that is missing ends the walk (nullopt, no finding); one lstat(2) may not look at (a folder
// without search permission) ends it with an "unreadable" finding.
//
// So the only host paths ever opened are host_root + a canonical image path whose every component was
// lstat'ed as a non-link; they are opened with O_NOFOLLOW (and O_NONBLOCK, so that a FIFO cannot block a
// probe), and what was opened is checked again with fstat(2) before a byte is read.

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "wheelcheck/error.hpp"
#include "wheelcheck/rootfs.hpp"

namespace wheelcheck::probe {

namespace {

constexpr int k_max_links = 40;                  // the kernel's MAXSYMLINKS
constexpr std::size_t k_max_link_target = 4096;  // PATH_MAX: longer targets cannot be followed anyway
constexpr std::size_t k_read_chunk = std::size_t{1} << 20;

// The non-empty components of a path ("/a//b/" -> a, b).
std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i < path.size()) {
    const std::size_t slash = path.find('/', i);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    if (end > i) parts.emplace_back(path.substr(i, end - i));
    i = end + 1;
  }
  return parts;
}

std::string join_image(const std::vector<std::string>& parts) {
  if (parts.empty()) return "/";
  std::string out;
  for (const auto& p : parts) {
    out += '/';
    out += p;
  }
  return out;
}

bool has_wildcard(std::string_view component) {
  return component.find_first_of("*?[") != std::string_view::npos;
}

class FdCloser {
 public:
  explicit FdCloser(int fd) : m_fd(fd) {}
  ~FdCloser() {
    if (m_fd >= 0) ::close(m_fd);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  int get() const { return m_fd; }
  int release() {
    const int fd = m_fd;
    m_fd = -1;
    return fd;
  }

 private:
  int m_fd;
};

// A component still to walk, and the image path of the link whose target it came from ("" for the path
// that was asked for), so that a ".." that climbs above "/" can be blamed on the right link.
struct Pending {
  std::string part;
  std::string origin;
};

// readlink(2) without a size limit of its own: grows the buffer up to PATH_MAX. nullopt with errno set on
// failure (ENAMETOOLONG for a longer target).
std::optional<std::string> read_link(const std::string& host_path, std::uint64_t size_hint) {
  std::size_t size = static_cast<std::size_t>(std::min<std::uint64_t>(size_hint, k_max_link_target)) + 1;
  for (;;) {
    std::string buf(size, '\0');
    const ssize_t n = ::readlink(host_path.c_str(), buf.data(), buf.size());
    if (n < 0) return std::nullopt;
    if (static_cast<std::size_t>(n) < buf.size()) {
      buf.resize(static_cast<std::size_t>(n));
      return buf;
    }
    if (size > k_max_link_target) {
      errno = ENAMETOOLONG;
      return std::nullopt;
    }
    size = std::min(size * 2, k_max_link_target + 1);
  }
}

// What went wrong reading a file: the problem's kind and its detail; empty kind when the file was read.
struct ReadFailure {
  std::string kind;  // "missing", "unreadable", "too-large", or a resolution finding's kind
  std::string detail;
  bool from_resolution = false;  // already among the resolution's findings
};

}  // namespace

RootFs::RootFs(std::string host_root) : m_root(std::move(host_root)) {
  while (m_root.size() > 1 && m_root.back() == '/') m_root.pop_back();
  if (m_root.empty()) throw usage_error("image root: an empty path is not a folder");
  struct stat st {};
  if (::stat(m_root.c_str(), &st) != 0) {
    throw usage_error("image root " + m_root + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) throw usage_error("image root " + m_root + " is not a folder");
  if (::access(m_root.c_str(), R_OK | X_OK) != 0) {
    throw usage_error("image root " + m_root + " is not readable: " + std::strerror(errno));
  }
}

namespace {

std::string host_of(const std::string& root, const std::string& image_path) {
  if (root == "/") return image_path;
  return image_path == "/" ? root : root + image_path;
}

}  // namespace

std::optional<RootFs::Resolved> RootFs::resolve(std::string_view image_path, std::vector<Problem>* findings) const {
  const std::string requested(image_path);
  auto report = [&](const char* kind, std::string path, std::string detail) {
    if (findings != nullptr) findings->push_back(Problem{kind, std::move(path), std::move(detail)});
  };

  std::vector<std::string> done;
  std::vector<Pending> pending;  // a stack: back() is walked next
  {
    auto parts = split_path(image_path);
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending.push_back(Pending{std::move(*it), ""});
  }
  int links = 0;
  bool escaped = false;
  std::vector<std::string> blamed;  // origins already reported as escaping

  while (!pending.empty()) {
    Pending next = std::move(pending.back());
    pending.pop_back();
    if (next.part == ".") continue;
    if (next.part == "..") {
      if (!done.empty()) {
        done.pop_back();
        continue;
      }
      escaped = true;
      if (std::find(blamed.begin(), blamed.end(), next.origin) == blamed.end()) {
        blamed.push_back(next.origin);
        if (next.origin.empty()) {
          report("escapes-root", requested, "the path climbs above / and is clamped at the image's root");
        } else {
          report("escapes-root", next.origin,
                 "the link's target climbs above / and is clamped at the image's root (resolving " + requested + ")");
        }
      }
      continue;
    }

    done.push_back(std::move(next.part));
    const std::string image = join_image(done);
    const std::string host = host_of(m_root, image);
    struct stat st {};
    if (::lstat(host.c_str(), &st) != 0) {
      const int err = errno;
      if (err != ENOENT && err != ENOTDIR) report("unreadable", image, std::strerror(err));
      return std::nullopt;
    }
    if (S_ISLNK(st.st_mode)) {
      if (++links > k_max_links) {
        report("symlink-loop", requested,
               "more than " + std::to_string(k_max_links) + " symbolic links (the last one at " + image + ")");
        return std::nullopt;
      }
      const auto target = read_link(host, static_cast<std::uint64_t>(std::max<off_t>(st.st_size, 0)));
      if (!target) {
        report("unreadable", image, std::string("cannot read the link: ") + std::strerror(errno));
        return std::nullopt;
      }
      if (target->empty()) return std::nullopt;  // the kernel answers ENOENT for an empty target
      done.pop_back();
      if ((*target)[0] == '/') done.clear();
      auto parts = split_path(*target);
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending.push_back(Pending{std::move(*it), image});
      continue;
    }
    if (!S_ISDIR(st.st_mode) && !pending.empty()) return std::nullopt;  // ENOTDIR: a file is not a folder
  }

  Resolved r;
  r.image_path = join_image(done);
  r.host_path = host_of(m_root, r.image_path);
  r.escaped = escaped;
  return r;
}

RootFs::Type RootFs::type(std::string_view image_path) const {
  const auto r = resolve(image_path);
  if (!r) return Type::Missing;
  struct stat st {};
  if (::lstat(r->host_path.c_str(), &st) != 0) return Type::Missing;
  if (S_ISREG(st.st_mode)) return Type::File;
  if (S_ISDIR(st.st_mode)) return Type::Directory;
  return Type::Other;
}

namespace {

// The one place a file of the image is read. On failure, `failure` says why and nothing is returned.
// The resolution's own findings (an escape, a loop) go to `notes`.
std::optional<std::string> read_resolved(const RootFs& root, std::string_view image_path, std::uint64_t max_size,
                                         std::vector<Problem>& notes, ReadFailure& failure) {
  const auto r = root.resolve(image_path, &notes);
  if (!r) {
    // A loop or an unreadable component explains the failure; otherwise something is simply missing.
    const auto it = std::find_if(notes.begin(), notes.end(), [](const Problem& f) { return f.kind != "escapes-root"; });
    failure =
        it == notes.end() ? ReadFailure{"missing", "no such file", true} : ReadFailure{it->kind, it->detail, true};
    return std::nullopt;
  }
  const int fd = ::open(r->host_path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    failure = ReadFailure{"unreadable", std::strerror(errno)};
    return std::nullopt;
  }
  FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    failure = ReadFailure{"unreadable", std::strerror(errno)};
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    failure = ReadFailure{"unreadable", S_ISDIR(st.st_mode) ? "a folder, not a regular file" : "not a regular file"};
    return std::nullopt;
  }
  const auto size = static_cast<std::uint64_t>(std::max<off_t>(st.st_size, 0));
  if (size > max_size) {
    failure = ReadFailure{"too-large", std::to_string(size) + " bytes, over the limit of " + std::to_string(max_size)};
    return std::nullopt;
  }
  // Read at most the size fstat(2) gave: a file that grows meanwhile is read as it was.
  std::string out(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const std::size_t want = std::min(out.size() - got, k_read_chunk);
    const ssize_t n = ::read(fd, out.data() + got, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      failure = ReadFailure{"unreadable", std::strerror(errno)};
      return std::nullopt;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

}  // namespace

std::string RootFs::read_file(std::string_view image_path, std::uint64_t max_size) const {
  ReadFailure failure;
  std::vector<Problem> notes;
  auto content = read_resolved(*this, image_path, max_size, notes, failure);
  if (!content) throw bad_input(std::string(image_path) + ": " + failure.kind + ": " + failure.detail);
  return std::move(*content);
}

std::optional<std::string> RootFs::try_read_file(std::string_view image_path, std::vector<Problem>& findings,
                                                 std::uint64_t max_size) const {
  ReadFailure failure;
  std::vector<Problem> notes;
  auto content = read_resolved(*this, image_path, max_size, notes, failure);
  findings.insert(findings.end(), notes.begin(), notes.end());
  if (!content && !failure.from_resolution) {
    findings.push_back(Problem{failure.kind, std::string(image_path), failure.detail});
  }
  return content;
}

std::vector<std::string> RootFs::list_dir(std::string_view image_path) const {
  std::vector<std::string> names;
  const auto r = resolve(image_path);
  if (!r) return names;
  FdCloser fd(::open(r->host_path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) return names;
  DIR* dir = ::fdopendir(fd.get());
  if (dir == nullptr) return names;
  fd.release();  // closedir closes it now
  while (const dirent* e = ::readdir(dir)) {
    const std::string_view name(e->d_name);
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> RootFs::glob(std::string_view pattern) const {
  // Expanded component by component, as glob(3) does: a component with a wildcard is matched against the
  // entries of every folder reached so far (fnmatch with FNM_PERIOD: "*" does not match a leading dot),
  // any other is appended as it is. The final list is sorted by bytes, as glob(3) sorts in the C locale
  // (ldconfig sets LC_COLLATE=C for this).
  const auto parts = split_path(pattern);
  std::vector<std::string> current{""};  // "" stands for "/"
  bool last_literal = true;
  for (const auto& part : parts) {
    std::vector<std::string> next;
    last_literal = !has_wildcard(part);
    for (const auto& prefix : current) {
      if (last_literal) {
        next.push_back(prefix + "/" + part);
        continue;
      }
      for (const auto& name : list_dir(prefix.empty() ? "/" : prefix)) {
        if (::fnmatch(part.c_str(), name.c_str(), FNM_PERIOD) == 0) next.push_back(prefix + "/" + name);
      }
    }
    current = std::move(next);
    if (current.empty()) break;
  }
  std::vector<std::string> out;
  for (auto& p : current) {
    if (p.empty()) p = "/";
    // Names read from a folder exist; a literal last component must be checked.
    if (last_literal && !resolve(p)) continue;
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace wheelcheck::probe
