// Tar as image layers and image archives write it (POSIX ustar, GNU and pax headers): read entry by entry
// from a stream, or indexed in a file. Every header is checked (its checksum, its numbers, its size against
// the limit) before anything is done with its entry.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "inspector/container/detail.hpp"
#include "wheelcheck/error.hpp"

namespace wheelcheck::container::detail {

namespace {

constexpr std::size_t k_block = 512;
constexpr std::uint64_t k_max_extension = std::uint64_t{1} << 20;  // a pax header or GNU long name

std::string field(const char* header, std::size_t offset, std::size_t length) {
  const char* p = header + offset;
  return std::string(p, ::strnlen(p, length));
}

// An octal number (spaces and NULs around it), or GNU's base-256 (the first byte's high bit set).
std::optional<std::uint64_t> number(const char* header, std::size_t offset, std::size_t length) {
  const auto* p = reinterpret_cast<const unsigned char*>(header + offset);
  if ((p[0] & 0x80U) != 0) {
    if ((p[0] & 0x40U) != 0) return std::nullopt;  // negative
    std::uint64_t v = p[0] & 0x3fU;
    for (std::size_t i = 1; i < length; ++i) {
      if (v > (~std::uint64_t{0} >> 8)) return std::nullopt;
      v = (v << 8) | p[i];
    }
    return v;
  }
  std::size_t i = 0;
  while (i < length && (p[i] == ' ' || p[i] == 0)) ++i;
  std::uint64_t v = 0;
  bool any = false;
  for (; i < length && p[i] >= '0' && p[i] <= '7'; ++i) {
    if (v > (~std::uint64_t{0} >> 3)) return std::nullopt;
    v = v * 8 + (p[i] - '0');
    any = true;
  }
  for (; i < length; ++i) {
    if (p[i] != ' ' && p[i] != 0) return std::nullopt;
  }
  if (!any) return 0;
  return v;
}

bool zero_block(const char* b) {
  return std::all_of(b, b + k_block, [](char c) { return c == 0; });
}

bool checksum_ok(const char* b) {
  const auto stored = number(b, 148, 8);
  if (!stored) return false;
  std::uint64_t unsigned_sum = 0;
  std::int64_t signed_sum = 0;
  for (std::size_t i = 0; i < k_block; ++i) {
    const bool in_field = i >= 148 && i < 156;
    const auto c = in_field ? static_cast<unsigned char>(' ') : static_cast<unsigned char>(b[i]);
    unsigned_sum += c;
    signed_sum += in_field ? ' ' : static_cast<signed char>(b[i]);
  }
  return *stored == unsigned_sum || static_cast<std::int64_t>(*stored) == signed_sum;
}

// The records of a pax extended header ("LEN key=value\n" each) that matter here.
void apply_pax(const std::string& data, std::map<std::string, std::string>& out, const std::string& what) {
  std::size_t pos = 0;
  while (pos < data.size()) {
    const auto space = data.find(' ', pos);
    if (space == std::string::npos) break;
    std::uint64_t len = 0;
    for (std::size_t i = pos; i < space; ++i) {
      if (data[i] < '0' || data[i] > '9' || len > k_max_extension) {
        throw Error(ErrorKind::BadInput, what + ": a malformed pax header record");
      }
      len = len * 10 + static_cast<std::uint64_t>(data[i] - '0');
    }
    if (len <= space - pos + 1 || pos + len > data.size() || data[pos + len - 1] != '\n') {
      throw Error(ErrorKind::BadInput, what + ": a malformed pax header record");
    }
    const std::string record = data.substr(space + 1, pos + len - space - 2);
    const auto eq = record.find('=');
    if (eq != std::string::npos) out[record.substr(0, eq)] = record.substr(eq + 1);
    pos += len;
  }
}

}  // namespace

std::optional<std::string> clean_image_path(std::string_view path) {
  std::string out;
  for (const auto& part : split(path, "/", false)) {
    if (part == ".") continue;
    if (part == "..") return std::nullopt;
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;  // "" names the root itself
}

TarReader::TarReader(Stream& in, const Limits& limits, std::string what)
    : m_in(in), m_limits(limits), m_what(std::move(what)) {}

void TarReader::skip(std::uint64_t n) {
  std::vector<char> buf(static_cast<std::size_t>(std::min<std::uint64_t>(n, std::uint64_t{1} << 16)));
  while (n > 0) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(n, buf.size()));
    const std::size_t got = m_in.read(buf.data(), want);
    if (got == 0) throw Error(ErrorKind::BadInput, m_what + ": the tar ends inside an entry (a truncated layer)");
    n -= got;
    m_position += got;
  }
}

std::string TarReader::read_extension(std::uint64_t size) {
  if (size > k_max_extension) {
    throw Error(ErrorKind::BadInput,
                m_what + ": a pax header or long name of " + std::to_string(size) + " bytes (more than 1 MiB)");
  }
  std::string data(static_cast<std::size_t>(size), '\0');
  if (!m_in.read_full(data.data(), data.size())) {
    throw Error(ErrorKind::BadInput, m_what + ": the tar ends inside a header (a truncated layer)");
  }
  m_position += size;
  const std::uint64_t pad = (k_block - size % k_block) % k_block;
  skip(pad);
  return data;
}

bool TarReader::next(TarEntry& entry) {
  skip(m_left + m_padding);
  m_left = 0;
  m_padding = 0;
  std::map<std::string, std::string> pax;
  std::optional<std::string> long_name;
  std::optional<std::string> long_link;
  char header[k_block];
  for (;;) {
    const std::size_t got = [&] {
      std::size_t done = 0;
      while (done < k_block) {
        const std::size_t k = m_in.read(header + done, k_block - done);
        if (k == 0) break;
        done += k;
      }
      return done;
    }();
    if (got == 0) return false;  // no end-of-archive blocks: still the end (GNU tar accepts it too)
    if (got < k_block) throw Error(ErrorKind::BadInput, m_what + ": the tar ends inside a header (a truncated layer)");
    m_position += k_block;
    if (zero_block(header)) return false;  // the end-of-archive marker; what follows is padding
    if (!checksum_ok(header)) {
      throw Error(ErrorKind::BadInput, m_what + ": a tar header at byte " + std::to_string(m_position - k_block) +
                                           " whose checksum is wrong (not a tar, or a corrupt one)");
    }
    if (++m_entries > m_limits.max_entries) {
      throw Error(ErrorKind::BadInput, m_what + ": more than " + std::to_string(m_limits.max_entries) + " entries");
    }
    const auto size = number(header, 124, 12);
    if (!size) throw Error(ErrorKind::BadInput, m_what + ": a tar header with a malformed size");
    const char type = header[156] == 0 ? '0' : header[156];
    if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
      const std::string data = read_extension(*size);
      if (type == 'x') apply_pax(data, pax, m_what);
      if (type == 'L') long_name = std::string(data.c_str());
      if (type == 'K') long_link = std::string(data.c_str());
      continue;  // 'g' (global pax) says nothing a probe needs
    }
    entry = TarEntry{};
    entry.type = type == '7' ? '0' : type;
    const std::string magic = field(header, 257, 6);
    std::string name = field(header, 0, 100);
    if (magic == "ustar") {  // POSIX: a prefix folder (GNU's "ustar " has none there)
      const std::string prefix = field(header, 345, 155);
      if (!prefix.empty()) name = prefix + "/" + name;
    }
    entry.path = long_name ? *long_name : name;
    entry.link = long_link ? *long_link : field(header, 157, 100);
    entry.size = *size;
    if (auto it = pax.find("path"); it != pax.end()) entry.path = it->second;
    if (auto it = pax.find("linkpath"); it != pax.end()) entry.link = it->second;
    if (auto it = pax.find("size"); it != pax.end()) {
      const std::string& v = it->second;
      const bool digits =
          !v.empty() && v.size() <= 19 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits) throw Error(ErrorKind::BadInput, m_what + ": a pax size that is not a number");
      entry.size = std::stoull(v);
    }
    entry.mode = static_cast<std::uint32_t>(number(header, 100, 8).value_or(0644) & 07777);
    if (entry.type == 'S') {
      throw Error(ErrorKind::BadInput, m_what + ": " + printable(entry.path) +
                                           " is a GNU sparse file, which image layers do not use (not read)");
    }
    // Links, folders and devices carry no data whatever their size field says (POSIX).
    if (entry.type != '0') entry.size = entry.type == '1' || entry.type == '2' || entry.type == '5' ? 0 : entry.size;
    if (entry.size > m_limits.max_member) {
      throw Error(ErrorKind::BadInput, m_what + ": " + printable(entry.path) + " declares " + format_size(entry.size) +
                                           ", more than the limit of " + format_size(m_limits.max_member) +
                                           " for one file");
    }
    entry.data_offset = m_position;
    m_left = entry.size;
    m_padding = (k_block - entry.size % k_block) % k_block;
    return true;
  }
}

std::size_t TarReader::read_data(char* buf, std::size_t n) {
  if (m_left == 0) return 0;
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(n, m_left));
  const std::size_t got = m_in.read(buf, want);
  if (got == 0) throw Error(ErrorKind::BadInput, m_what + ": the tar ends inside an entry (a truncated layer)");
  m_left -= got;
  m_position += got;
  return got;
}

namespace {

// A file read from its start with pread; skip() seeks.
class SeekingFile : public Stream {
 public:
  SeekingFile(int fd, std::uint64_t size) : m_fd(fd), m_size(size) {}
  std::size_t read(char* buf, std::size_t n) override {
    if (m_pos >= m_size) return 0;
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(n, m_size - m_pos));
    for (;;) {
      const auto got = ::pread(m_fd, buf, want, static_cast<off_t>(m_pos));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw Error(ErrorKind::Io, std::string("cannot read an archive: ") + std::strerror(errno));
      m_pos += static_cast<std::uint64_t>(got);
      return static_cast<std::size_t>(got);
    }
  }
  void seek(std::uint64_t pos) { m_pos = pos; }
  std::uint64_t position() const { return m_pos; }

 private:
  int m_fd;
  std::uint64_t m_size;
  std::uint64_t m_pos = 0;
};

}  // namespace

std::map<std::string, Member> index_tar_file(int fd, const Limits& limits, const std::string& what) {
  const off_t end = ::lseek(fd, 0, SEEK_END);
  if (end < 0) throw Error(ErrorKind::Io, what + ": cannot seek");
  const auto size = static_cast<std::uint64_t>(end);
  SeekingFile file(fd, size);
  std::map<std::string, Member> members;
  // Headers only: each entry's data is seeked over, never read.
  for (;;) {
    TarReader reader(file, limits, what);
    TarEntry e;
    if (!reader.next(e)) break;
    const std::uint64_t data = file.position();
    if (e.size > size || data > size - e.size) {
      throw Error(ErrorKind::BadInput, what + ": " + printable(e.path) + " declares " + std::to_string(e.size) +
                                           " bytes past the end of the archive (a truncated archive)");
    }
    const auto clean = clean_image_path(e.path);
    if (!clean) {
      throw Error(ErrorKind::BadInput, what + ": a member named " + printable(e.path) + " (a path that climbs)");
    }
    if (!clean->empty()) members[*clean] = Member{data, e.size, e.type, e.link};
    file.seek(data + e.size + (k_block - e.size % k_block) % k_block);
  }
  return members;
}

}  // namespace wheelcheck::container::detail
