// The wheel's zip container, read with libzip under limits.
//
// libzip parses the central directory and hands out a member's bytes. For deflate members (nearly all
// of a wheel) we ask libzip for the *raw* compressed bytes (ZIP_FL_COMPRESSED) and inflate them with
// ISA-L's igzip, which is markedly faster than zlib on large members, computing the CRC-32 as it goes.
// Other methods (stored, bzip2, lzma, zstd) go through libzip's own decompressors.
//
// Nothing here trusts the archive: a member must inflate to exactly its declared size (a stream that
// runs past it stops at once, so a lying size cannot make us inflate a bomb), must match its CRC-32,
// must fit the per-member and total limits, and must not be encrypted. A large member that claims a
// compression ratio no real wheel member has (a zip bomb: gigabytes of zeros in a few megabytes) is refused
// from its declared sizes alone, before a byte is inflated. Member names are checked for path traversal
// and control characters, and a member that is a symbolic link (unix mode S_IFLNK in the external
// attributes) is reported: nothing is ever extracted, but a wheel that carries such members is not one an
// installer should trust.

#include <fmt/format.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <sys/stat.h>
#include <zip.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <set>
#include <utility>

#include "inspector/wheel/deflate_tail.hpp"
#include "inspector/wheel/zip_check.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::wheel {

// The archive as zip_check.cpp reads it, and each member's local header against it: checked at open (a
// local file, or every_local_header), else when the member is first read; the disagreements found.
struct ZipLocalChecks {
  bool every_local_header = true;  // checked at open, all of them
  ZipDirectory directory;
  std::shared_ptr<const RandomAccess> file;
  std::vector<std::uint8_t> state;  // per member: 0 not checked, 1 agrees, 2 disagrees (see mismatch)
  std::vector<std::pair<std::uint64_t, std::string>> mismatch;
};

struct ZipArchive::Handle {
  zip_t* zip = nullptr;
  ZipLocalChecks checks;
  ~Handle() {
    if (zip != nullptr) zip_discard(zip);
  }
};

namespace {

std::string zip_error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

// A RandomAccess source's failure (an HTTP error, a short read), kept for the libzip call that saw it
// fail: libzip only knows "read error", the person needs the reason. Sources run on the calling thread.
thread_local std::exception_ptr t_source_error;

void rethrow_source_error() {
  if (auto e = std::exchange(t_source_error, nullptr)) std::rethrow_exception(e);
}

struct FileCloser {
  void operator()(zip_file_t* f) const {
    if (f != nullptr) zip_fclose(f);
  }
};
using ZipFile = std::unique_ptr<zip_file_t, FileCloser>;

ZipFile open_index(zip_t* zip, std::uint64_t index, zip_flags_t flags, const std::string& name) {
  ZipFile f(zip_fopen_index(zip, index, flags));
  if (!f) rethrow_source_error();
  if (!f) throw bad_input("cannot read member " + name + ": " + zip_strerror(zip));
  return f;
}

std::size_t read_some(zip_file_t* f, std::byte* out, std::size_t size, const std::string& name) {
  const auto n = zip_fread(f, out, size);
  if (n < 0) rethrow_source_error();
  if (n < 0) throw bad_input("cannot read member " + name + ": " + zip_file_strerror(f));
  return static_cast<std::size_t>(n);
}

[[noreturn]] void throw_bad_crc(const MemberInfo& m, std::uint32_t crc) {
  throw bad_input(
      fmt::format("member {} fails its CRC-32 check: its bytes give 0x{:08x}, the central directory says 0x{:08x}",
                  m.name, crc, m.crc));
}

[[noreturn]] void throw_too_long(const MemberInfo& m) {
  throw bad_input("member " + m.name + " inflates past its declared size of " + std::to_string(m.size) +
                  " bytes (a lying size, or a zip bomb)");
}

// Base for the two streams: counts output against the declared size.
class MemberStream : public ByteStream {
 protected:
  explicit MemberStream(MemberInfo info) : m_info(std::move(info)) {}
  MemberInfo m_info;
  std::uint64_t m_out = 0;
};

// Raw deflate through ISA-L.
class IsalInflateStream final : public MemberStream {
 public:
  // `input_chunk`: each read of compressed bytes (a headers-only read that may stop after a few KB asks
  // for little at a time: a remote file's read-ahead still makes its requests grow); 0: 256 KiB.
  IsalInflateStream(zip_t* zip, const MemberInfo& info, std::size_t input_chunk = 0)
      : MemberStream(info),
        m_file(open_index(zip, info.index, ZIP_FL_COMPRESSED, info.name)),
        m_in(info.compressed_size, 256 << 10),
        m_in_chunk(input_chunk != 0 ? std::min(input_chunk, m_in.size()) : m_in.size()) {
    isal_inflate_init(&m_state);
    m_state.crc_flag = ISAL_GZIP_NO_HDR;  // the gzip CRC-32 is the zip CRC-32
  }

  std::size_t read(std::span<std::byte> out) override {
    if (m_done || out.empty()) return 0;
    // Never ask for more than one byte past the declared size: a longer stream is caught right there.
    const std::uint64_t room = m_info.size - m_out + 1;
    const auto want = static_cast<std::uint32_t>(std::min<std::uint64_t>({out.size(), room, 1U << 30}));
    m_state.next_out = reinterpret_cast<std::uint8_t*>(out.data());
    m_state.avail_out = want;
    while (m_state.avail_out > 0 && m_state.block_state != ISAL_BLOCK_FINISH) {
      if (m_state.avail_in == 0 && !m_in_eof) {
        const auto n = read_some(m_file.get(), m_in.data(), m_in_chunk, m_info.name);
        if (n == 0) m_in_eof = true;
        m_state.next_in = reinterpret_cast<std::uint8_t*>(m_in.data());
        m_state.avail_in = static_cast<std::uint32_t>(n);
      }
      const auto before = m_state.avail_out;
      const int rc = isal_inflate(&m_state);
      if (rc != ISAL_DECOMP_OK && rc != ISAL_END_INPUT) {
        throw bad_input("member " + m_info.name + " has corrupt deflate data (ISA-L error " + std::to_string(rc) + ")");
      }
      if (m_in_eof && m_state.avail_in == 0 && m_state.avail_out == before &&
          m_state.block_state != ISAL_BLOCK_FINISH) {
        throw bad_input("member " + m_info.name + " ends before its deflate stream does (truncated)");
      }
    }
    const std::size_t produced = want - m_state.avail_out;
    m_out += produced;
    if (m_out > m_info.size) throw_too_long(m_info);
    if (m_state.block_state == ISAL_BLOCK_FINISH && m_state.avail_out > 0) finish();
    return produced;
  }

 private:
  void finish() {
    m_done = true;
    if (m_out != m_info.size) {
      throw bad_input("member " + m_info.name + " inflates to " + std::to_string(m_out) + " bytes, but declares " +
                      std::to_string(m_info.size));
    }
    if (m_state.crc != m_info.crc) throw_bad_crc(m_info, m_state.crc);
  }

  ZipFile m_file;
  ReadBuffer m_in;         // compressed bytes: 256 KiB, or less for a small member
  std::size_t m_in_chunk;  // how much of m_in each read fills
  inflate_state m_state{};
  bool m_in_eof = false;
  bool m_done = false;
};

// Every other method, through libzip (which checks the CRC-32 itself); a stored member's bytes as they
// lie, with its CRC-32 computed here (ISA-L), so that a mismatch can say both values.
class LibzipStream final : public MemberStream {
 public:
  LibzipStream(zip_t* zip, const MemberInfo& info)
      : MemberStream(info),
        m_file(open_index(zip, info.index, info.method == ZIP_CM_STORE ? ZIP_FL_COMPRESSED : 0, info.name)),
        m_own_crc(info.method == ZIP_CM_STORE) {}

  std::size_t read(std::span<std::byte> out) override {
    const std::uint64_t room = m_info.size - m_out + 1;
    const auto n = read_some(m_file.get(), out.data(),
                             static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), room)), m_info.name);
    m_out += n;
    if (m_out > m_info.size) throw_too_long(m_info);
    if (n == 0 && !out.empty() && m_out != m_info.size) {
      throw bad_input("member " + m_info.name + " ends after " + std::to_string(m_out) + " bytes, but declares " +
                      std::to_string(m_info.size));
    }
    if (m_own_crc && n != 0) m_crc = crc32_gzip_refl(m_crc, reinterpret_cast<const unsigned char*>(out.data()), n);
    if (m_own_crc && m_out == m_info.size && !std::exchange(m_crc_checked, true) && m_crc != m_info.crc)
      throw_bad_crc(m_info, m_crc);
    return n;
  }

 private:
  ZipFile m_file;
  bool m_own_crc;
  bool m_crc_checked = false;
  std::uint32_t m_crc = 0;
};

// libzip's view of a RandomAccess: a seekable, read-only source (zip_source_function).
struct RandomAccessSource {
  std::shared_ptr<const RandomAccess> file;
  std::uint64_t pos = 0;
  zip_error_t error{};
};

zip_int64_t random_access_callback(void* userdata, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
  auto* src = static_cast<RandomAccessSource*>(userdata);
  switch (cmd) {
    case ZIP_SOURCE_OPEN: src->pos = 0; return 0;
    case ZIP_SOURCE_READ: {
      const std::uint64_t n = std::min<std::uint64_t>(len, src->file->size() - std::min(src->pos, src->file->size()));
      try {
        src->file->read_at(src->pos, std::span(static_cast<std::byte*>(data), static_cast<std::size_t>(n)));
      } catch (...) {
        t_source_error = std::current_exception();
        zip_error_set(&src->error, ZIP_ER_READ, 0);
        return -1;
      }
      src->pos += n;
      return static_cast<zip_int64_t>(n);
    }
    case ZIP_SOURCE_CLOSE: return 0;
    case ZIP_SOURCE_STAT: {
      auto* st = static_cast<zip_stat_t*>(data);
      zip_stat_init(st);
      st->size = src->file->size();
      st->valid |= ZIP_STAT_SIZE;
      return sizeof(zip_stat_t);
    }
    case ZIP_SOURCE_ERROR: return zip_error_to_data(&src->error, data, len);
    case ZIP_SOURCE_FREE:
      zip_error_fini(&src->error);
      delete src;  // NOLINT: libzip owns the source's lifetime
      return 0;
    case ZIP_SOURCE_SEEK: {
      const auto off = zip_source_seek_compute_offset(src->pos, src->file->size(), data, len, &src->error);
      if (off < 0) return -1;
      src->pos = static_cast<std::uint64_t>(off);
      return 0;
    }
    case ZIP_SOURCE_TELL: return static_cast<zip_int64_t>(src->pos);
    case ZIP_SOURCE_SUPPORTS:
      return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
                                            ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, ZIP_SOURCE_SEEK, ZIP_SOURCE_TELL,
                                            ZIP_SOURCE_SUPPORTS, -1);
    default: zip_error_set(&src->error, ZIP_ER_OPNOTSUPP, 0); return -1;
  }
}

// A member's compressed bytes through libzip, read at any offset; one open file kept for a run of reads
// in order (a sweep through a member's middle), reopened and sought for a read elsewhere.
class RawMember {
 public:
  RawMember(zip_t* zip, const MemberInfo& m) : m_zip(zip), m_info(m) {}
  void read(std::uint64_t offset, std::span<std::byte> out) {
    if (!m_file || offset != m_pos) {
      m_file = open_index(m_zip, m_info.index, ZIP_FL_COMPRESSED, m_info.name);
      if (zip_fseek(m_file.get(), static_cast<zip_int64_t>(offset), SEEK_SET) != 0) {
        rethrow_source_error();
        throw bad_input("cannot seek in member " + m_info.name + ": " + zip_file_strerror(m_file.get()));
      }
      m_pos = offset;
    }
    std::size_t done = 0;
    while (done < out.size()) {
      const auto n = read_some(m_file.get(), out.data() + done, out.size() - done, m_info.name);
      if (n == 0) throw bad_input("member " + m_info.name + " ends before its declared compressed size");
      done += n;
    }
    m_pos += out.size();
  }

 private:
  zip_t* m_zip;
  const MemberInfo& m_info;
  ZipFile m_file;
  std::uint64_t m_pos = 0;
};

void check_range(const MemberInfo& m, std::uint64_t offset, std::size_t length) {
  if (offset > m.size || length > m.size - offset) {
    throw bad_input("member " + m.name + ": read at " + std::to_string(offset) + " runs past its end (" +
                    std::to_string(m.size) + " bytes)");
  }
}

// A stored member: its bytes lie in the archive as they are.
class StoredMemberReader final : public MemberReader {
 public:
  StoredMemberReader(zip_t* zip, MemberInfo info) : m_zip(zip), m_info(std::move(info)) {}
  void read(std::uint64_t offset, std::span<std::byte> out) override {
    check_range(m_info, offset, out.size());
    m_raw.read(offset, out);
  }
  std::uint64_t inflated_from_start() const override { return 0; }
  std::uint64_t tail_bytes() const override { return 0; }

 private:
  zip_t* m_zip;
  MemberInfo m_info;
  RawMember m_raw{m_zip, m_info};
};

// A compressed member: a forward stream from its start (its first bytes kept), and for deflate, its
// end decoded on its own when a read lies far beyond where the stream has got to.
class StreamMemberReader final : public MemberReader {
 public:
  StreamMemberReader(const ZipArchive& archive, zip_t* zip, MemberInfo info)
      : m_archive(archive), m_zip(zip), m_info(std::move(info)) {}

  void read(std::uint64_t offset, std::span<std::byte> out) override {
    check_range(m_info, offset, out.size());
    if (offset + out.size() <= m_kept.size()) return copy(m_kept, 0, offset, out);
    if (m_tail && m_tail->covers(offset, out.size())) return copy(m_tail->bytes, m_tail->first, offset, out);
    for (const auto& piece : m_middle) {
      if (piece.covers(offset, out.size())) return copy(piece.bytes, piece.first, offset, out);
    }
    // Far: past the stream by 4 MB, or (a small member) by a quarter of the member, where inflating up to
    // the read costs more compressed bytes than decoding the end.
    const bool far = offset > m_pos + std::min(k_forward_gap, std::max(k_small_gap, m_info.size / 4));
    if (far && m_info.method == ZIP_CM_DEFLATE && m_info.compressed_size > k_small_tail_min) {
      if (takes_hints() && decode_middle(offset, out.size()))
        return copy(m_middle.back().bytes, m_middle.back().first, offset, out);
      if (decode_tail(offset, out.size())) return copy(m_tail->bytes, m_tail->first, offset, out);
    }
    forward(offset, out);
  }
  std::uint64_t inflated_from_start() const override { return m_inflated; }
  std::uint64_t tail_bytes() const override { return m_tail_len; }
  std::uint64_t middle_bytes() const override { return m_middle_len; }
  std::uint64_t middle_pieces() const override { return m_middle.size(); }
  bool takes_hints() const override { return m_info.method == ZIP_CM_DEFLATE && m_info.compressed_size > k_tail_min; }
  void expect(const ContentHint& hint) override {
    if (takes_hints() && m_hints.size() < 16) m_hints.push_back({hint, false});
  }

 private:
  // Reads within the first k_keep bytes are served from memory once inflated, and a read that starts
  // there and runs past the stream goes on from it; further than k_forward_gap past the stream, the tail
  // is tried first (see decode_tail for its size). 1 MiB: the ELF header, program headers and dynamic
  // symbols the scanner reads again lie in a library's first few hundred KB; keeping tens of MB costs
  // more in copies and page faults than it saves (+0.1 s of CPU on the 870 MB torch wheel at 32 MiB).
  static constexpr std::uint64_t k_keep = std::uint64_t{1} << 20;
  static constexpr std::uint64_t k_forward_gap = std::uint64_t{4} << 20;
  static constexpr std::uint64_t k_tail_min = std::uint64_t{4} << 20;
  // A member of 256 KB to 4 MB compressed (most libraries of a wheel) has its end decoded too, where the
  // read lies a quarter of the member (at least 256 KB) past the stream: a library's section headers and
  // dynamic section lie in its last tenth or so, and its dynamic symbols at its start.
  static constexpr std::uint64_t k_small_tail_min = std::uint64_t{256} << 10;
  static constexpr std::uint64_t k_small_gap = std::uint64_t{256} << 10;
  static constexpr std::uint64_t k_tail_max = std::uint64_t{256} << 20;         // compressed
  static constexpr std::uint64_t k_max_tail_output = std::uint64_t{512} << 20;  // uncompressed
  // The forward stream's first read of compressed bytes (later ones grow): the ELF header and the
  // dynamic symbols after it are some tens of KB compressed (ZipArchive::prefetch_heads brings the first
  // 64 KB). 16 KB, not 64: over the network a read past what is cached costs a block fetched for what
  // may be a few bytes more of the stream.
  static constexpr std::size_t k_first_input = std::size_t{16} << 10;

  static void copy(std::span<const std::byte> from, std::uint64_t first, std::uint64_t offset,
                   std::span<std::byte> out) {
    std::memcpy(out.data(), from.data() + (offset - first), out.size());
  }

  // How much of the member's end to decode: the compressed share of what is needed at the member's
  // average ratio, half as much again, and half a MB for a block to start in (a member under 4 MB: half
  // the share, and a 32nd of the member, 64 KB at least, for the block; a library's end is mostly
  // data that compresses better than its code, and a missed block start costs one more try, at least
  // half as long again, fetching only the bytes before the first). When that falls short, the next try
  // is sized from the ratio the decoded end actually had, and only the bytes before the previous tail
  // are fetched; six tries in all. Half as long again, not twice: a try that overshoots moves bytes that
  // are never used (torch_python_ext's 6.5 MB wheel: 27% of its bytes at twice, 21% at 1.5 times, for
  // about 5% more CPU on the torch wheel's headers-only read). Not tried at all when the share is over
  // k_tail_max or half the member: inflating from the start costs as much.
  bool decode_tail(std::uint64_t offset, std::size_t length) {
    const std::uint64_t need = m_info.size - offset;
    const std::uint64_t cap = std::min(k_tail_max, m_info.compressed_size / 2);
    double ratio = static_cast<double>(m_info.compressed_size) / static_cast<double>(m_info.size);
    std::vector<std::byte> tail;
    const bool small = m_info.compressed_size <= k_tail_min;
    const double share = small ? 0.5 : 1.5;
    const std::uint64_t slack =
        small ? std::max<std::uint64_t>(64 << 10, m_info.compressed_size / 32) : std::uint64_t{512} << 10;
    for (int attempt = 0; attempt < 6; ++attempt) {
      const auto want = static_cast<std::uint64_t>(static_cast<double>(need) * ratio * share) + slack;
      const std::uint64_t len = std::min(std::max<std::uint64_t>(want, tail.size() * 3 / 2), cap);
      if (len <= tail.size() || (attempt == 0 && want > cap)) return false;
      std::vector<std::byte> grown(static_cast<std::size_t>(len));
      m_raw.read(m_info.compressed_size - len, std::span(grown).first(static_cast<std::size_t>(len - tail.size())));
      std::copy(tail.begin(), tail.end(), grown.begin() + static_cast<std::ptrdiff_t>(len - tail.size()));
      tail = std::move(grown);
      m_tail_len = len;
      m_tail.reset();
      m_tail = inflate_tail(tail, m_info.size, k_max_tail_output);
      if (m_tail && m_tail->covers(offset, length)) return true;
      if (m_tail && !m_tail->bytes.empty()) {
        ratio = static_cast<double>(len) / static_cast<double>(m_tail->bytes.size());
      }
    }
    return false;
  }

  // A read far into the member that a hint covers: the sweep of deflate_middle.cpp, between two
  // estimates of where the read lies in the compressed stream: the member's average ratio, and the ratio
  // of its decoded end carried back (a library's large-model data at the end compresses unlike its
  // code). Tried first only when the sweep is cheaper than decoding the end would be; its failure (no
  // placement, or two) costs the bytes swept and falls back to the end.
  bool decode_middle(std::uint64_t offset, std::size_t length) {
    auto hint = std::find_if(m_hints.begin(), m_hints.end(), [&](const auto& h) {
      return !h.second && h.first.begin <= offset && offset + length <= h.first.end;
    });
    if (hint == m_hints.end()) return false;
    hint->second = true;
    const auto C = static_cast<double>(m_info.compressed_size), U = static_cast<double>(m_info.size);
    const double at = static_cast<double>(offset);
    const double by_average = at * C / U;
    double by_end = by_average;
    if (m_tail && m_tail->first > offset && m_tail->first < m_info.size) {
      // The decoded end's ratio holds for the part of the file it lies in; before that part, the
      // member's average.
      const double c_end = C - static_cast<double>(m_tail_len) + static_cast<double>(m_tail->block_bit / 8);
      const double u_end = static_cast<double>(m_tail->first);
      const auto& regions = hint->first.regions;
      auto part = std::upper_bound(regions.begin(), regions.end(), m_tail->first);
      const double u_part = part == regions.begin() ? 0.0 : std::max(at, static_cast<double>(*std::prev(part)));
      by_end = c_end - (u_end - u_part) * (C - c_end) / (U - u_end) - (u_part - at) * C / U;
      by_end = std::max(0.0, by_end);
    }
    const double margin = double(1 << 20);
    // The anchors may lie after the wanted bytes (the GOT follows the dynamic section): reach them too,
    // at worst as stored bytes.
    std::uint64_t reach = m_info.size - std::min(m_info.size, offset);
    std::uint64_t last = hint->first.end;
    for (const auto& a : hint->first.anchors) last = std::max(last, a.offset + a.bytes.size());
    reach = std::min(reach, last - std::min(last, offset));
    const double from = std::max(0.0, std::min(by_average, by_end) - margin);
    const double to = std::max(by_average, by_end) + margin + static_cast<double>(reach) * 1.01 + (1 << 20);
    const double tail_cost = (U - at) * (C / U) * 1.5 + (512 << 10);
    if (to - from >= tail_cost || to - from > double(k_tail_max)) return false;
    MiddleRequest r;
    r.compressed_size = m_info.compressed_size;
    r.uncompressed_size = m_info.size;
    r.sweep_from = static_cast<std::uint64_t>(from);
    r.sweep_to = static_cast<std::uint64_t>(to);
    r.want = offset;
    r.want_length = length;
    r.hint = &hint->first;
    MiddleStats stats;
    auto piece = inflate_middle(
        r, [&](std::uint64_t off, std::span<std::byte> out) { m_raw.read(off, out); }, &stats);
    m_middle_len += stats.compressed_read;
    if (!piece || !piece->covers(offset, length)) return false;
    m_middle.push_back(std::move(*piece));
    return true;
  }

  void forward(std::uint64_t offset, std::span<std::byte> out) {
    if (offset < m_pos && m_kept.size() == m_pos) {  // its start is kept: serve that, go on from the stream
      const auto head = static_cast<std::size_t>(m_pos - offset);
      copy(m_kept, 0, offset, out.first(head));
      offset = m_pos;
      out = out.subspan(head);
    }
    if (offset < m_pos || !m_stream) {
      if (m_info.method == ZIP_CM_DEFLATE)
        m_stream = std::make_unique<IsalInflateStream>(m_zip, m_info, k_first_input);
      else
        m_stream = m_archive.open_member(m_info.index);
      m_pos = 0;
    }
    // A chunk of 1 MiB, or less for a small member (util.hpp).
    const ReadBuffer read_buffer(m_info.size, std::size_t{1} << 20);
    const std::span<std::byte> buf = read_buffer.span();
    std::size_t filled = 0;
    while (filled < out.size()) {
      const std::uint64_t want_end = offset + out.size();
      const auto n =
          m_stream->read(buf.first(static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), want_end - m_pos))));
      if (n == 0) throw bad_input("member " + m_info.name + " ends before its declared size");
      if (m_pos == m_kept.size() && m_kept.size() < k_keep) {
        m_kept.insert(m_kept.end(), buf.begin(),
                      buf.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(n, k_keep - m_kept.size())));
      }
      const std::uint64_t chunk_begin = m_pos;
      m_pos += n;
      m_inflated = std::max(m_inflated, m_pos);
      if (m_pos <= offset) continue;
      const std::uint64_t from = std::max(offset, chunk_begin);
      std::memcpy(out.data() + (from - offset), buf.data() + (from - chunk_begin), m_pos - from);
      filled = static_cast<std::size_t>(m_pos - offset);
    }
  }

  const ZipArchive& m_archive;
  zip_t* m_zip;
  MemberInfo m_info;
  std::unique_ptr<ByteStream> m_stream;
  std::uint64_t m_pos = 0;
  std::uint64_t m_inflated = 0;
  std::vector<std::byte> m_kept;
  std::optional<InflatedPiece> m_tail;
  std::uint64_t m_tail_len = 0;
  std::vector<std::pair<ContentHint, bool>> m_hints;  // bool: tried
  std::vector<InflatedPiece> m_middle;
  std::uint64_t m_middle_len = 0;
  RawMember m_raw{m_zip, m_info};
};

// Members at most this large are never refused for their ratio: their size alone bounds the work.
constexpr std::uint64_t k_ratio_floor = std::uint64_t{16} << 20;

struct OverLimit {
  const char* kind;
  std::string message;
};

// Whether a member's declared sizes alone break a limit: its uncompressed size, or (for a large member)
// its compression ratio.
std::optional<OverLimit> over_limits(const MemberInfo& m, const ArchiveLimits& limits) {
  if (m.size > limits.max_member_size) {
    return OverLimit{"member-too-large", "declares " + format_size(m.size) + " uncompressed, over the limit of " +
                                             format_size(limits.max_member_size) +
                                             " (raise it with --max-member-size)"};
  }
  if (m.size > k_ratio_floor && m.method != ZIP_CM_STORE &&
      m.size / std::max<std::uint64_t>(m.compressed_size, 1) > limits.max_ratio) {
    return OverLimit{"compression-ratio", "declares " + format_size(m.size) + " from " +
                                              format_size(m.compressed_size) + " compressed, a ratio of " +
                                              std::to_string(m.size / std::max<std::uint64_t>(m.compressed_size, 1)) +
                                              ":1, over the limit of " + std::to_string(limits.max_ratio) +
                                              ":1 for members over 16 MiB (a zip bomb? raise it with --max-ratio)"};
  }
  return std::nullopt;
}

// Members that are never read: encrypted ones, links, those over a limit, and those whose local header
// disagrees with the central directory (the disagreement checked here when the archive was opened
// without checking every local header: a headers-only read checks the members it reads, as it reads them).
void refuse_unreadable(const MemberInfo& m, const ArchiveLimits& limits, ZipLocalChecks& h) {
  if (h.state.size() > m.index && h.state[m.index] == 0 && h.file) {
    const auto why = check_local_header(*h.file, h.directory, h.directory.entries.at(m.index));
    h.state[m.index] = why ? 2 : 1;
    if (why) h.mismatch.emplace_back(m.index, *why);
  }
  for (const auto& [index, why] : h.mismatch) {
    if (index == m.index) throw bad_input("member " + m.name + ": " + why);
  }
  if (m.encrypted) throw bad_input("member " + m.name + " is encrypted");
  if (m.symlink) throw bad_input("member " + m.name + " is a symbolic link");
  if (auto why = over_limits(m, limits)) throw bad_input("member " + m.name + " " + why->message);
}

}  // namespace

std::optional<std::string> unsafe_member_name(std::string_view name) {
  if (name.empty()) return "empty name";
  if (name.find('\0') != std::string_view::npos) return "NUL byte in name";
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return fmt::format("control character 0x{:02x} in name", u);
  }
  if (name.front() == '/') return "absolute path";
  if (name.find('\\') != std::string_view::npos) return "backslash in name";
  if (name.size() >= 2 && name[1] == ':' && std::isalpha(static_cast<unsigned char>(name[0]))) return "drive letter";
  std::size_t start = 0;
  while (start <= name.size()) {
    auto slash = name.find('/', start);
    if (slash == std::string_view::npos) slash = name.size();
    if (name.substr(start, slash - start) == "..") return "'..' component (path traversal)";
    start = slash + 1;
  }
  return std::nullopt;
}

std::unique_ptr<ZipArchive> ZipArchive::open(const std::string& path, const ArchiveLimits& limits) {
  std::unique_ptr<ZipArchive> a(new ZipArchive());
  a->m_path = path;
  a->m_limits = limits;
  a->m_handle = std::make_unique<Handle>();
  int code = 0;
  // Not ZIP_CHECKCONS: zip_check.cpp checks all it checks and more, and names the member and both values
  // where libzip only says "inconsistent" (and refuses to open, so nothing else could be reported).
  a->m_handle->zip = zip_open(path.c_str(), ZIP_RDONLY, &code);
  return open_handle(std::move(a), code);
}

std::unique_ptr<ZipArchive> ZipArchive::open(std::shared_ptr<const RandomAccess> file, const ArchiveLimits& limits,
                                             bool every_local_header) {
  std::unique_ptr<ZipArchive> a(new ZipArchive());
  a->m_path = file->name();
  a->m_limits = limits;
  a->m_handle = std::make_unique<Handle>();
  a->m_file = file;
  zip_error_t error;
  zip_error_init(&error);
  auto* state = new RandomAccessSource{std::move(file), 0, {}};  // NOLINT: freed by ZIP_SOURCE_FREE
  zip_error_init(&state->error);
  zip_source_t* src = zip_source_function_create(random_access_callback, state, &error);
  if (src == nullptr) {
    zip_error_fini(&state->error);
    delete state;  // NOLINT
    zip_error_fini(&error);
    throw std::bad_alloc();
  }
  a->m_handle->checks.file = a->m_file;
  a->m_handle->checks.every_local_header = every_local_header;
  a->m_handle->zip = zip_open_from_source(src, ZIP_RDONLY, &error);
  const int code = zip_error_code_zip(&error);
  zip_error_fini(&error);
  if (a->m_handle->zip == nullptr) {
    zip_source_free(src);
    rethrow_source_error();
  }
  return open_handle(std::move(a), code);
}

std::unique_ptr<ZipArchive> ZipArchive::open_handle(std::unique_ptr<ZipArchive> a, int code) {
  const std::string& path = a->m_path;
  const ArchiveLimits& limits = a->m_limits;
  auto& checks = a->m_handle->checks;
  if (a->m_handle->zip == nullptr) {
    if (code == ZIP_ER_NOENT || code == ZIP_ER_OPEN || code == ZIP_ER_READ) {
      errno = 0;
      throw Error(ErrorKind::BadInput, "cannot open " + path + ": " + zip_error_text(code));
    }
  }
  if (!checks.file) checks.file = std::make_shared<FileRandomAccess>(path);
  // The end records and the central directory, read strictly: where they disagree, this names what and
  // both values (libzip refuses such an archive with "inconsistent", or worse reads one of two readings).
  try {
    checks.directory = read_zip_directory(*checks.file, limits.max_members);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) throw;
    throw bad_input(path + ": " + e.what());
  }
  if (a->m_handle->zip == nullptr) {
    const std::string why = code == ZIP_ER_NOZIP    ? "not a zip archive (truncated, or not a wheel at all)"
                            : code == ZIP_ER_INCONS ? "inconsistent zip archive (" + zip_error_text(code) + ")"
                                                    : zip_error_text(code);
    throw bad_input(path + ": " + why);
  }
  zip_t* zip = a->m_handle->zip;
  const auto count = zip_get_num_entries(zip, 0);
  if (count < 0) throw bad_input(path + ": cannot count members");
  if (static_cast<std::uint64_t>(count) > limits.max_members) {
    throw bad_input(path + ": " + std::to_string(count) + " members, more than the limit of " +
                    std::to_string(limits.max_members) + " (raise it with --max-members)");
  }
  if (static_cast<std::uint64_t>(count) != checks.directory.entries.size()) {
    throw bad_input(fmt::format("{}: libzip reads {} members, the central directory walked entry by entry {}", path,
                                count, checks.directory.entries.size()));
  }
  checks.state.assign(checks.directory.entries.size(), 0);
  std::set<std::string> seen;
  std::uint64_t total = 0;
  a->m_members.reserve(static_cast<std::size_t>(count));
  for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(count); ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip, i, 0, &st) != 0)
      throw bad_input(path + ": cannot read member " + std::to_string(i) + ": " + zip_strerror(zip));
    MemberInfo m;
    m.index = i;
    m.name = (st.valid & ZIP_STAT_NAME) ? st.name : "";
    m.size = st.size;
    m.compressed_size = st.comp_size;
    m.method = static_cast<std::uint16_t>(st.comp_method);
    m.crc = st.crc;
    m.encrypted = (st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE;
    m.directory = !m.name.empty() && m.name.back() == '/';
    // The name's bytes as stored (zip_check.cpp's): libzip converts a name without the UTF-8 flag from CP437
    // (0x1b becomes U+2190) and a NUL to a space; its raw name must be that of the walk, NULs aside.
    const char* raw = zip_get_name(zip, i, ZIP_FL_ENC_RAW);
    const auto& c = checks.directory.entries[static_cast<std::size_t>(i)];
    std::string as_libzip = c.name;
    std::replace(as_libzip.begin(), as_libzip.end(), '\0', ' ');
    if ((raw != nullptr ? std::string_view(raw) : std::string_view(m.name)) != as_libzip || m.size != c.size ||
        m.compressed_size != c.compressed_size || m.crc != c.crc || m.method != c.method) {
      throw bad_input(
          fmt::format("{}: member {}: libzip reads it otherwise than the central directory's walk "
                      "(size {} or {})",
                      path, m.name, m.size, c.size));
    }
    if (auto why = unsafe_member_name(c.name)) {
      a->m_problems.push_back({"unsafe-path", m.name, *why});
    }
    if (!seen.insert(m.name).second)
      a->m_problems.push_back({"duplicate-name", m.name, "the archive holds this name twice"});
    if (m.encrypted) a->m_problems.push_back({"encrypted-member", m.name, "encrypted members cannot be inspected"});
    zip_uint8_t opsys = 0;
    zip_uint32_t attributes = 0;
    if (zip_file_get_external_attributes(zip, i, 0, &opsys, &attributes) == 0 && opsys == ZIP_OPSYS_UNIX &&
        ((attributes >> 16) & S_IFMT) == S_IFLNK) {
      m.symlink = true;
      a->m_problems.push_back({"symlink-member", m.name,
                               "a symbolic link (unix mode S_IFLNK): a wheel holds files, and a link could point "
                               "anywhere once extracted"});
    }
    if (auto why = over_limits(m, limits)) {
      m.refused = true;
      a->m_problems.push_back({why->kind, m.name, why->message});
    }
    m.refused = m.refused || m.encrypted || m.symlink;
    total += std::min(m.size, limits.max_member_size);
    a->m_members.push_back(std::move(m));
  }
  if (checks.every_local_header) {
    // Every local header against the central directory, and no two members sharing bytes: a member that
    // disagrees is reported (its name, both values) and never read.
    std::vector<std::string> names;
    names.reserve(a->m_members.size());
    for (const auto& m : a->m_members) names.push_back(m.name);
    checks.state.assign(names.size(), 1);
    for (auto& [index, p] : check_local_headers(*checks.file, checks.directory, names)) {
      checks.state[index] = 2;
      a->m_members[index].refused = true;
      checks.mismatch.emplace_back(index, p.detail);
      a->m_problems.push_back(std::move(p));
    }
    // Every member decided: the walk is not needed again (each worker thread opens its own archive).
    std::vector<CentralEntry>().swap(checks.directory.entries);
  }
  if (total > limits.max_total_size) {
    throw bad_input(path + ": members declare " + format_size(total) + " uncompressed, over the limit of " +
                    format_size(limits.max_total_size) + " (raise it with --max-total-size)");
  }
  return a;
}

ZipArchive::~ZipArchive() = default;

std::optional<std::uint64_t> ZipArchive::find(std::string_view name) const {
  for (const auto& m : m_members) {
    if (m.name == name) return m.index;
  }
  return std::nullopt;
}

std::unique_ptr<ByteStream> ZipArchive::open_member(std::uint64_t index) const {
  if (index >= m_members.size()) throw Error(ErrorKind::Internal, "member index out of range");
  const auto& m = m_members[index];
  refuse_unreadable(m, m_limits, m_handle->checks);
  if (m.method == ZIP_CM_DEFLATE) return std::make_unique<IsalInflateStream>(m_handle->zip, m);
  return std::make_unique<LibzipStream>(m_handle->zip, m);
}

std::string ZipArchive::read_small(std::uint64_t index) const {
  const auto& m = m_members.at(index);
  if (m.size > m_limits.max_metadata_size) {
    throw bad_input("member " + m.name + " is " + format_size(m.size) + ", too large for a metadata file");
  }
  auto stream = open_member(index);
  std::string out(m.size, '\0');
  std::size_t done = 0;
  std::byte extra[1];
  while (done < out.size()) {
    const auto n = stream->read(std::span(reinterpret_cast<std::byte*>(out.data()) + done, out.size() - done));
    if (n == 0) break;
    done += n;
  }
  if (done != out.size() || stream->read(extra) != 0)
    throw bad_input("member " + m.name + " is not the size it declares");
  return out;
}

void ZipArchive::prefetch_heads(std::span<const std::uint64_t> indices, std::uint64_t head) const {
  if (!m_file || indices.empty()) return;
  const auto& at = m_handle->checks.directory.entries;
  if (at.size() != m_members.size()) return;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  ranges.reserve(indices.size());
  for (const auto i : indices) {
    if (i >= at.size()) continue;
    // The local header (30 bytes, the name, an extra field that may be longer than the central
    // directory's by a zip64 record), then the member's first bytes.
    ranges.emplace_back(at[i].local_offset, 30 + at[i].name.size() + at[i].extra_length + 32 +
                                                std::min(m_members[i].compressed_size, head));
  }
  m_file->prefetch(ranges);
}

std::unique_ptr<MemberReader> ZipArchive::random_member(std::uint64_t index) const {
  const auto& m = m_members.at(index);
  refuse_unreadable(m, m_limits, m_handle->checks);
  if (m.method == ZIP_CM_STORE) {
    if (m.compressed_size != m.size) throw bad_input("stored member " + m.name + " has two different sizes");
    return std::make_unique<StoredMemberReader>(m_handle->zip, m);
  }
  return std::make_unique<StreamMemberReader>(*this, m_handle->zip, m);
}

}  // namespace wheelcheck::wheel
