// Files and folders: whole-file reads with a size limit, atomic writes, folder tests, the environment.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "wheelcheck/bytes.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck {

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

void write_file_atomic(const std::string& path, std::string_view content) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw io_error("cannot write " + tmp);
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw io_error("cannot write " + tmp);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw io_error("cannot write " + path);
  }
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
