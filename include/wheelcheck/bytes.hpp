// Byte streams and sources: one stream interface (ByteStream) serves a zip member streamed by libzip
// (ZipArchive::open_member), a file on disk, and a buffer in a test. A source (ByteSource) is a file or a
// buffer, read forward in chunks; `open()` starts a fresh pass from offset 0, which is how the streaming
// ELF reader asks for a second look without ever holding a whole member in memory (inspect reopens a
// member the same way).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace wheelcheck {

// What a reader that cannot seek can be told about the bytes it will be asked for: content that the
// file's own headers predict at exact offsets. A deflate member's middle can be decoded without its
// start, but then the decoded bytes' offsets are unknown; a predicted anchor found among them places
// them, and the predicted entries check the placement (inspector/wheel/deflate_middle.cpp). The ELF
// reader gives one for the dynamic section (its address in the GOT's first word; the DT_* entries
// whose values the section headers give). A hint is advice: a reader may ignore it.
struct PredictedBytes {
  std::uint64_t offset = 0;  // exactly where `bytes` lie
  std::vector<std::byte> bytes;
};
struct PredictedEntry {
  std::uint64_t begin = 0, end = 0, stride = 1;  // `bytes` lie at begin + k * stride, within [begin, end)
  std::vector<std::byte> bytes;
};
struct ContentHint {
  std::uint64_t begin = 0, end = 0;     // the range this hint is about (the dynamic section); read whole
  std::vector<PredictedBytes> anchors;  // any one of them, found once, places the bytes around it
  std::vector<PredictedEntry> entries;  // each must be found where it is predicted: the placement's check
  // Where the file's parts of like content begin (its sections), sorted: a reader estimating where an
  // offset lies in compressed data takes a ratio measured in one part for that part only.
  std::vector<std::uint64_t> regions;
};

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Fills up to out.size() bytes; returns how many, 0 at the end. Throws Error on corrupt data.
  virtual std::size_t read(std::span<std::byte> out) = 0;
};

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::uint64_t size() const = 0;
  virtual std::string name() const = 0;
  virtual std::unique_ptr<ByteStream> open() const = 0;
};

// A buffer in memory (tests, small members).
class BufferSource final : public ByteSource {
 public:
  BufferSource(std::vector<std::byte> data, std::string name);
  std::uint64_t size() const override { return m_data.size(); }
  std::string name() const override { return m_name; }
  std::unique_ptr<ByteStream> open() const override;

 private:
  std::vector<std::byte> m_data;
  std::string m_name;
};

// A file on disk, read with plain read(2) in chunks.
class FileSource final : public ByteSource {
 public:
  explicit FileSource(std::string path);  // throws Error(Io) if it cannot be opened
  std::uint64_t size() const override { return m_size; }
  std::string name() const override { return m_path; }
  std::unique_ptr<ByteStream> open() const override;

 private:
  std::string m_path;
  std::uint64_t m_size = 0;
};

std::vector<std::byte> read_file_bytes(const std::string& path);

// Random access to a file's bytes: a file on disk (pread), or a remote one read in byte ranges. What
// libzip reads a wheel through when the wheel is not a local path. Implementations are thread safe.
class RandomAccess {
 public:
  virtual ~RandomAccess() = default;
  virtual std::uint64_t size() const = 0;
  virtual std::string name() const = 0;
  // Fills `out` with the bytes at [offset, offset + out.size()); throws Error when it cannot.
  virtual void read_at(std::uint64_t offset, std::span<std::byte> out) const = 0;
  // Advice: these ranges (offset, length) will be read soon. A remote file fetches them now, nearby ones
  // merged into one request each (remote::HttpFile); a local one ignores it. Reads answer the same either way.
  virtual void prefetch(std::span<const std::pair<std::uint64_t, std::uint64_t>> /*ranges*/) const {}
};

class FileRandomAccess final : public RandomAccess {
 public:
  explicit FileRandomAccess(std::string path);  // throws Error(Io) if it cannot be opened
  ~FileRandomAccess() override;
  FileRandomAccess(const FileRandomAccess&) = delete;
  FileRandomAccess& operator=(const FileRandomAccess&) = delete;
  std::uint64_t size() const override { return m_size; }
  std::string name() const override { return m_path; }
  void read_at(std::uint64_t offset, std::span<std::byte> out) const override;

 private:
  std::string m_path;
  int m_fd = -1;
  std::uint64_t m_size = 0;
};

}  // namespace wheelcheck
