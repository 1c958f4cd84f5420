// The byte streams a layer passes through: the stored blob (a file's bytes, checked against the manifest's
// size and digest as they pass), the decompressor its first bytes name (gzip with ISA-L, zstd with
// libzstd, or none), and a hash of what comes out (docker-archive's diff_ids).
#include <isa-l/igzip_lib.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>

#include "inspector/container/detail.hpp"
#include "wheelcheck/error.hpp"

namespace wheelcheck::container::detail {

bool Stream::read_full(char* buf, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const std::size_t got = read(buf + done, n - done);
    if (got == 0) return false;
    done += got;
  }
  return true;
}

VerifiedFile::VerifiedFile(int fd, std::uint64_t offset, std::uint64_t available, std::uint64_t size,
                           std::string digest, std::string what)
    : m_fd(fd), m_offset(offset), m_size(size), m_digest(std::move(digest)), m_what(std::move(what)) {
  if (available != size) {
    throw Error(ErrorKind::BadInput, m_what + ": holds " + std::to_string(available) + " bytes, not the " +
                                         std::to_string(size) + " its manifest declares (the size is verified)");
  }
}

std::size_t VerifiedFile::read(char* buf, std::size_t n) {
  const std::uint64_t left = m_size - m_done;
  if (left == 0) return 0;
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(n, left));
  for (;;) {
    const auto got = ::pread(m_fd, buf, want, static_cast<off_t>(m_offset + m_done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw Error(ErrorKind::Io, m_what + ": cannot read: " + std::strerror(errno));
    if (got == 0) {
      throw Error(ErrorKind::BadInput, m_what + ": ends after " + std::to_string(m_done) + " of the " +
                                           std::to_string(m_size) + " bytes its manifest declares");
    }
    m_hash.update(buf, static_cast<std::size_t>(got));
    m_done += static_cast<std::uint64_t>(got);
    return static_cast<std::size_t>(got);
  }
}

void VerifiedFile::finish() {
  std::vector<char> buf(std::size_t{1} << 16);
  while (read(buf.data(), buf.size()) != 0) {
  }
  if (m_digest.empty()) return;
  const std::string actual = "sha256:" + to_hex(m_hash.finish());
  if (actual != m_digest) {
    throw Error(ErrorKind::BadInput, m_what + ": its bytes hash to " + actual + ", not to the " + m_digest +
                                         " its manifest names (a corrupt or substituted blob; nothing of it is kept)");
  }
}

std::size_t HashingStream::read(char* buf, std::size_t n) {
  const std::size_t got = m_in.read(buf, n);
  m_hash.update(buf, got);
  m_count += got;
  return got;
}

std::string HashingStream::finish() {
  std::vector<char> buf(std::size_t{1} << 16);
  while (read(buf.data(), buf.size()) != 0) {
  }
  return "sha256:" + to_hex(m_hash.finish());
}

namespace {

constexpr std::uint64_t k_ratio_floor = std::uint64_t{64} << 20;  // below this, any ratio is fine

// Counts what comes out of a decompressor against the limits.
class Budget {
 public:
  Budget(const Limits& limits, std::string what) : m_limits(limits), m_what(std::move(what)) {}
  void add(std::uint64_t out, std::uint64_t in_so_far) {
    m_out += out;
    if (m_out > m_limits.max_layer) {
      throw Error(ErrorKind::BadInput, m_what + ": decompresses to more than " + format_size(m_limits.max_layer) +
                                           " (a decompression bomb, or a layer past the limit)");
    }
    if (m_out > k_ratio_floor && in_so_far > 0 && m_out / in_so_far > m_limits.max_ratio) {
      throw Error(ErrorKind::BadInput, m_what + ": decompresses to more than " + std::to_string(m_limits.max_ratio) +
                                           " times its " + format_size(in_so_far) +
                                           " read so far (a decompression bomb)");
    }
  }

 private:
  const Limits& m_limits;
  std::string m_what;
  std::uint64_t m_out = 0;
};

// Reads ahead from the compressed stream, counting.
class Input {
 public:
  explicit Input(Stream& in) : m_in(in), m_buf(std::size_t{1} << 18) {}
  // Refills when empty; false at the end.
  bool fill() {
    if (m_pos < m_len) return true;
    m_len = m_in.read(m_buf.data(), m_buf.size());
    m_pos = 0;
    m_total += m_len;
    return m_len != 0;
  }
  const char* data() const { return m_buf.data() + m_pos; }
  std::size_t size() const { return m_len - m_pos; }
  void consume(std::size_t n) { m_pos += n; }
  std::uint64_t total() const { return m_total; }

 private:
  Stream& m_in;
  std::vector<char> m_buf;
  std::size_t m_pos = 0;
  std::size_t m_len = 0;
  std::uint64_t m_total = 0;
};

class Gzip : public Stream {
 public:
  Gzip(Stream& in, const Limits& limits, std::string what) : m_in(in), m_budget(limits, what), m_what(std::move(what)) {
    start_member();
  }
  std::size_t read(char* buf, std::size_t n) override {
    if (m_done) return 0;
    for (;;) {
      if (m_state.block_state == ISAL_BLOCK_FINISH) {
        // Another member (pigz and concatenated gzip files), or the end.
        if (!m_in.fill()) {
          m_done = true;
          return 0;
        }
        if (m_in.size() >= 1 && static_cast<unsigned char>(m_in.data()[0]) != 0x1f) {
          m_done = true;  // trailing bytes that are no gzip member: the stored blob's digest covers them
          return 0;
        }
        start_member();
      }
      if (m_state.avail_in == 0) {
        if (!m_in.fill()) {
          throw Error(ErrorKind::BadInput, m_what + ": the gzip stream is cut short (a truncated layer)");
        }
        m_state.next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(m_in.data()));
        m_state.avail_in = static_cast<std::uint32_t>(m_in.size());
      }
      const std::uint32_t before_in = m_state.avail_in;
      m_state.next_out = reinterpret_cast<std::uint8_t*>(buf);
      m_state.avail_out = static_cast<std::uint32_t>(std::min<std::size_t>(n, 1U << 30));
      const int r = isal_inflate(&m_state);
      m_in.consume(before_in - m_state.avail_in);
      if (r != ISAL_DECOMP_OK) {
        throw Error(ErrorKind::BadInput, m_what + ": not a valid gzip stream (" +
                                             (r == ISAL_INCORRECT_CHECKSUM ? std::string("its CRC does not match")
                                                                           : "ISA-L error " + std::to_string(r)) +
                                             ")");
      }
      const std::size_t out = static_cast<std::size_t>(reinterpret_cast<char*>(m_state.next_out) - buf);
      m_budget.add(out, m_in.total());
      if (out != 0) return out;
    }
  }

 private:
  void start_member() {
    isal_inflate_init(&m_state);
    m_state.crc_flag = ISAL_GZIP;
    m_state.avail_in = 0;
  }
  Input m_in;
  Budget m_budget;
  std::string m_what;
  inflate_state m_state{};
  bool m_done = false;
};

class Zstd : public Stream {
 public:
  Zstd(Stream& in, const Limits& limits, std::string what)
      : m_in(in), m_budget(limits, what), m_what(std::move(what)), m_ctx(ZSTD_createDCtx()) {
    if (m_ctx == nullptr) throw std::bad_alloc();
    // A frame may ask for a window of up to 2^27 bytes (zstd's default cap; --long=31 streams are refused).
    ZSTD_DCtx_setParameter(m_ctx, ZSTD_d_windowLogMax, 27);
  }
  ~Zstd() override { ZSTD_freeDCtx(m_ctx); }
  Zstd(const Zstd&) = delete;
  Zstd& operator=(const Zstd&) = delete;
  std::size_t read(char* buf, std::size_t n) override {
    for (;;) {
      if (m_in.size() == 0 && !m_in.fill()) {
        if (m_last != 0) {
          throw Error(ErrorKind::BadInput, m_what + ": the zstd stream is cut short (a truncated layer)");
        }
        return 0;
      }
      ZSTD_inBuffer in{m_in.data(), m_in.size(), 0};
      ZSTD_outBuffer out{buf, n, 0};
      m_last = ZSTD_decompressStream(m_ctx, &out, &in);
      m_in.consume(in.pos);
      if (ZSTD_isError(m_last) != 0U) {
        throw Error(ErrorKind::BadInput, m_what + ": not a valid zstd stream (" + ZSTD_getErrorName(m_last) + ")");
      }
      m_budget.add(out.pos, m_in.total());
      if (out.pos != 0) return out.pos;
    }
  }

 private:
  Input m_in;
  Budget m_budget;
  std::string m_what;
  ZSTD_DCtx* m_ctx;
  std::size_t m_last = 0;
};

// No compression: the bytes as they are, counted against the layer's limit.
class Plain : public Stream {
 public:
  Plain(Stream& in, const Limits& limits, std::string what) : m_in(in), m_budget(limits, std::move(what)) {}
  std::size_t read(char* buf, std::size_t n) override {
    const std::size_t got = m_in.read(buf, n);
    m_count += got;
    m_budget.add(got, m_count);
    return got;
  }

 private:
  Stream& m_in;
  std::uint64_t m_count = 0;
  Budget m_budget;
};

// Puts bytes already read back in front of a stream.
class Prefixed : public Stream {
 public:
  Prefixed(Stream& in, std::string head) : m_in(in), m_head(std::move(head)) {}
  std::size_t read(char* buf, std::size_t n) override {
    if (m_pos < m_head.size()) {
      const std::size_t k = std::min(n, m_head.size() - m_pos);
      std::memcpy(buf, m_head.data() + m_pos, k);
      m_pos += k;
      return k;
    }
    return m_in.read(buf, n);
  }

 private:
  Stream& m_in;
  std::string m_head;
  std::size_t m_pos = 0;
};

// The decompressor owns the stream that gives it the first bytes back.
template <class Decoder>
class Owning : public Stream {
 public:
  Owning(Stream& in, std::string head, const Limits& limits, std::string what)
      : m_prefixed(in, std::move(head)), m_decoder(m_prefixed, limits, std::move(what)) {}
  std::size_t read(char* buf, std::size_t n) override { return m_decoder.read(buf, n); }

 private:
  Prefixed m_prefixed;
  Decoder m_decoder;
};

}  // namespace

std::unique_ptr<Stream> decompressing(Stream& in, const Limits& limits, const std::string& what) {
  std::string head(4, '\0');
  std::size_t got = 0;
  while (got < head.size()) {
    const std::size_t k = in.read(head.data() + got, head.size() - got);
    if (k == 0) break;
    got += k;
  }
  head.resize(got);
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(head[i]); };
  if (got >= 2 && byte(0) == 0x1f && byte(1) == 0x8b) {
    return std::make_unique<Owning<Gzip>>(in, std::move(head), limits, what);
  }
  if (got >= 4 && byte(0) == 0x28 && byte(1) == 0xb5 && byte(2) == 0x2f && byte(3) == 0xfd) {
    return std::make_unique<Owning<Zstd>>(in, std::move(head), limits, what);
  }
  return std::make_unique<Owning<Plain>>(in, std::move(head), limits, what);
}

}  // namespace wheelcheck::container::detail
