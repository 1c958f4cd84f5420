// Byte sources: a file on disk (streamed or read at offsets) and a buffer in memory, behind one interface.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <filesystem>

#include "wheelcheck/bytes.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck {

namespace {

class FdStream final : public ByteStream {
 public:
  explicit FdStream(const std::string& path) : m_path(path) {
    m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (m_fd < 0) throw io_error("cannot open " + path);
  }
  ~FdStream() override {
    if (m_fd >= 0) ::close(m_fd);
  }
  FdStream(const FdStream&) = delete;
  FdStream& operator=(const FdStream&) = delete;
  std::size_t read(std::span<std::byte> out) override {
    for (;;) {
      const ssize_t n = ::read(m_fd, out.data(), out.size());
      if (n >= 0) return static_cast<std::size_t>(n);
      if (errno != EINTR) throw io_error("cannot read " + m_path);
    }
  }

 private:
  std::string m_path;
  int m_fd = -1;
};

class BufferStream final : public ByteStream {
 public:
  explicit BufferStream(std::span<const std::byte> data) : m_data(data) {}
  std::size_t read(std::span<std::byte> out) override {
    const std::size_t n = std::min(out.size(), m_data.size() - m_pos);
    std::copy_n(m_data.begin() + static_cast<std::ptrdiff_t>(m_pos), n, out.begin());
    m_pos += n;
    return n;
  }

 private:
  std::span<const std::byte> m_data;
  std::size_t m_pos = 0;
};

}  // namespace

BufferSource::BufferSource(std::vector<std::byte> data, std::string name)
    : m_data(std::move(data)), m_name(std::move(name)) {}

std::unique_ptr<ByteStream> BufferSource::open() const {
  return std::make_unique<BufferStream>(m_data);
}

FileSource::FileSource(std::string path) : m_path(std::move(path)) {
  struct stat st {};
  if (::stat(m_path.c_str(), &st) != 0) throw io_error("cannot open " + m_path);
  if (!S_ISREG(st.st_mode)) throw bad_input(m_path + " is not a regular file");
  m_size = static_cast<std::uint64_t>(st.st_size);
}

std::unique_ptr<ByteStream> FileSource::open() const {
  return std::make_unique<FdStream>(m_path);
}

FileRandomAccess::FileRandomAccess(std::string path) : m_path(std::move(path)) {
  m_size = FileSource(m_path).size();
  m_fd = ::open(m_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (m_fd < 0) throw io_error("cannot open " + m_path);
}

FileRandomAccess::~FileRandomAccess() {
  if (m_fd >= 0) ::close(m_fd);
}

void FileRandomAccess::read_at(std::uint64_t offset, std::span<std::byte> out) const {
  if (offset > m_size || out.size() > m_size - offset) {
    throw bad_input(m_path + ": read at " + std::to_string(offset) + " runs past the end of the file");
  }
  std::size_t done = 0;
  while (done < out.size()) {
    const auto n = ::pread(m_fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw io_error("cannot read " + m_path);
    if (n == 0) throw bad_input(m_path + ": file shrank while reading");
    done += static_cast<std::size_t>(n);
  }
}

std::vector<std::byte> read_file_bytes(const std::string& path) {
  FileSource source(path);
  std::vector<std::byte> out(source.size());
  auto stream = source.open();
  std::size_t done = 0;
  while (done < out.size()) {
    const auto n = stream->read(std::span(out).subspan(done));
    if (n == 0) break;
    done += n;
  }
  out.resize(done);
  return out;
}

}  // namespace wheelcheck
