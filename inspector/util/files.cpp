// Files and folders: whole-file reads with a size limit, atomic writes (and the sweep of their leftovers),
// locks, folder tests, the environment.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <vector>

#include "wheelcheck/bytes.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck {

namespace {
std::string fmt_mode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}
}  // namespace

std::string read_text_file(const std::string& path, std::uint64_t max_size) {
  FileSource source(path);
  if (source.size() > max_size) throw bad_input(path + " is larger than " + format_size(max_size));
  // To the end of the file, not to the size stat gives: /proc and /sys files say 0 and hold text.
  std::string text;
  auto stream = source.open();
  std::vector<std::byte> buf(std::size_t{64} << 10);
  while (const auto n = stream->read(buf)) {
    if (n > max_size - text.size()) throw bad_input(path + " is larger than " + format_size(max_size));
    text.append(reinterpret_cast<const char*>(buf.data()), n);
  }
  return text;
}

void make_dirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw Error(ErrorKind::Io, "cannot create folder " + path + ": " + ec.message());
}

namespace {

std::atomic<unsigned> g_temporary_counter{0};

// The pid a temporary's name carries ("x.json.tmp.123-4" -> 123), or 0 when it is not one of ours. The
// older form without "-<n>" ("x.json.tmp.123") counts only where every file is ours (the cache).
pid_t temporary_pid(std::string_view name, bool older_form) {
  const auto at = name.rfind(".tmp.");
  if (at == std::string_view::npos || at == 0) return 0;
  std::string_view rest = name.substr(at + 5);
  if (const auto dash = rest.find('-'); dash != std::string_view::npos) {
    const auto counter = rest.substr(dash + 1);
    if (counter.empty() || counter.find_first_not_of("0123456789") != std::string_view::npos) return 0;
    rest = rest.substr(0, dash);
  } else if (!older_form) {
    return 0;
  }
  if (rest.empty() || rest.size() > 9 || rest.find_first_not_of("0123456789") != std::string_view::npos) return 0;
  return static_cast<pid_t>(std::stol(std::string(rest)));
}

bool process_alive(pid_t pid) {
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

std::mutex g_swept_mutex;
std::set<std::string> g_swept;  // the folders this process has swept

void write_all(int fd, std::string_view content, const std::string& what) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw io_error("cannot write " + what);
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::string temporary_name(const std::string& final_name) {
  return final_name + ".tmp." + std::to_string(::getpid()) + "-" + std::to_string(g_temporary_counter++);
}

namespace {
void sweep(int dir_fd, const std::string& dir_key, bool ours) {
  {
    const std::lock_guard<std::mutex> hold(g_swept_mutex);
    if (!g_swept.insert(dir_key).second) return;
  }
  const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return;
  }
  const auto now = std::time(nullptr);
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    const pid_t pid = temporary_pid(name, ours);
    if (pid <= 0 || pid == ::getpid()) continue;
    const int f = ::openat(fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (f < 0) continue;
    struct stat st {};
    const bool regular = ::fstat(f, &st) == 0 && S_ISREG(st.st_mode);
    // A free lock: nobody is writing it now. Its process gone, or a day old: nobody ever will.
    if (regular && ::flock(f, LOCK_EX | LOCK_NB) == 0 && (!process_alive(pid) || now - st.st_mtime > 86400)) {
      stale.emplace_back(name);
    }
    ::close(f);
  }
  for (const auto& name : stale) static_cast<void>(::unlinkat(fd, name.c_str(), 0));
  ::closedir(d);
}
}  // namespace

void sweep_temporaries_at(int dir_fd, const std::string& dir_key) {
  sweep(dir_fd, dir_key, true);
}

void sweep_temporaries(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  sweep(fd, dir, false);
  ::close(fd);
}

void write_file_atomic(const std::string& path, std::string_view content, bool durable) {
  write_file_atomic_with(
      path, [&](const std::function<void(std::string_view)>& write) { write(content); }, durable);
}

void write_file_atomic_with(const std::string& path,
                            const std::function<void(const std::function<void(std::string_view)>&)>& produce,
                            bool durable, bool sweep) {
  const std::string folder = dir_name(path);
  if (sweep) sweep_temporaries(folder);
  const std::string tmp = temporary_name(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) {  // a dead process of this pid left it
    ::unlink(tmp.c_str());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  }
  if (fd < 0) throw io_error("cannot write " + path);
  static_cast<void>(::flock(fd, LOCK_EX));  // ours while written: no sweep removes it
  try {
    // Written in 1 MiB pieces as they are made: a report of any size in bounded memory.
    std::string buffer;
    const auto write = [&](std::string_view text) {
      buffer.append(text);
      if (buffer.size() >= (std::size_t{1} << 20)) {
        write_all(fd, buffer, path);
        buffer.clear();
      }
    };
    produce(write);
    write_all(fd, buffer, path);
    if (durable && ::fsync(fd) != 0) throw io_error("cannot write " + path);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const auto e = io_error("cannot write " + path);
    ::unlink(tmp.c_str());
    throw e;
  }
  if (durable) {
    const int d = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d >= 0) {
      static_cast<void>(::fsync(d));
      ::close(d);
    }
  }
}

std::string not_private_reason(const struct ::stat& st) {
  if (st.st_uid != ::geteuid()) {
    return "it is owned by user " + std::to_string(st.st_uid) + ", not by you (user " + std::to_string(::geteuid()) +
           ")";
  }
  if ((st.st_mode & S_IWOTH) != 0) return "anyone can write to it (mode " + fmt_mode(st.st_mode) + ")";
  if ((st.st_mode & S_IWGRP) != 0 && st.st_gid != ::getegid()) {
    return "its group (" + std::to_string(st.st_gid) + ") can write to it (mode " + fmt_mode(st.st_mode) + ")";
  }
  return "";
}

FileLock FileLock::acquire(const std::string& path, const std::function<void()>& on_wait, bool transient) {
  bool waited = false;
  for (;;) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) throw io_error("cannot open the lock " + path);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (on_wait && !waited) on_wait();
      waited = true;
      while (::flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        const auto e = io_error("cannot lock " + path);
        ::close(fd);
        throw e;
      }
    }
    // The holder before us may have removed the file (a transient lock): then ours locks nothing.
    struct stat held {
    }, named{};
    if (::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev) {
      return FileLock(fd, path, transient);
    }
    ::close(fd);
  }
}

FileLock::~FileLock() {
  if (m_fd < 0) return;
  if (m_transient) static_cast<void>(::unlink(m_path.c_str()));
  ::close(m_fd);
}

std::string getenv_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::string(v) : fallback;
}

std::string base_name(std::string_view path) {
  const auto slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string dir_name(std::string_view path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string join_path(std::string_view dir, std::string_view name) {
  if (dir == "/") return "/" + std::string(name);
  return std::string(dir) + "/" + std::string(name);
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace wheelcheck
