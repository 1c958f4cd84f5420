// Reading the end of a deflate stream without inflating all of it.
//
// A shared library's dynamic section sits in its writable segment, after the code and the read-only
// data: in libtorch_cuda.so (1.18 GB) it is 325 KB from the end. Inflating a 784 MB compressed member
// to reach it would defeat a headers-only check, so we decode the stream's *end* on its own:
//
// 1. Find a block boundary. Deflate data is a chain of blocks, each starting with 3 header bits, at any
//    bit position. Starting at the first byte of the compressed tail we try every bit position in turn:
//    a cheap filter keeps only what can begin a dynamic-Huffman block (a complete code-length code, as
//    zlib requires) or a stored block (LEN == ~NLEN); zlib then parses the candidate's block header and
//    first codes (a window-less probe: a back-reference before the start is fine, any other error
//    rejects it). Fixed-Huffman blocks are never taken as a start: their 3 bits match a quarter of all
//    positions.
// 2. Decode from the candidate to the end, twice, with two different fake windows (all 0x00, all 0xFF)
//    given as the preset dictionary. A byte that comes from a literal is the same in both; a byte that
//    copies (directly or through other copies) the unknown 32 KB before the start differs, so comparing
//    the two outputs marks exactly which bytes are known (kept as the few ranges that are not).
//    The search covers the tail's first MB and at most 16 whole decodes: a damaged end fails fast.
// 3. Accept the candidate only if it ends exactly at the end of the compressed data with the final
//    block: a false start almost never decodes that far without an error, and never lines up with the
//    real end by chance. The stream's total size is known (the zip entry's), so the output is placed by
//    counting back from the end.
// The ELF reader above checks everything it reads (offsets against the file, tables against each
// other), and the tests compare a headers-only profile with a full one on real wheels.

#include "inspector/wheel/deflate_tail.hpp"

#include "inspector/wheel/deflate_lockstep.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace wheelcheck::wheel {

namespace {

constexpr std::size_t k_probe_input = 4096;
// Bounds on the search, so a damaged or hostile tail costs little: deflate encoders end a block every
// few ten thousand symbols (zlib: 16K; ISA-L and others similar), so a boundary lies within the first
// hundred KB or so of any tail; and a candidate that passes the probe but fails later costs a decode.
constexpr std::size_t k_search_bytes = std::size_t{1} << 20;
constexpr int k_max_decodes = 16;
constexpr std::size_t k_chunk = std::size_t{1} << 20;  // uncompressed bytes decoded at a time

struct Inflater {
  z_stream z{};
  bool ok = false;
  Inflater() { ok = inflateInit2(&z, -15) == Z_OK; }
  ~Inflater() {
    if (ok) inflateEnd(&z);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
};

// Bits [bit, bit + 32) of the tail, least significant first (deflate's bit order).
std::uint64_t bits_at(std::span<const std::byte> tail, std::uint64_t bit) {
  std::uint64_t v = 0;
  const std::size_t first = static_cast<std::size_t>(bit / 8);
  for (std::size_t i = 0; i < 6 && first + i < tail.size(); ++i) {
    v |= static_cast<std::uint64_t>(tail[first + i]) << (8 * i);
  }
  return v >> (bit % 8);
}

// The cheap filter of step 1.
bool plausible_start(std::span<const std::byte> tail, std::uint64_t bit) {
  const std::uint64_t h = bits_at(tail, bit);
  const unsigned type = static_cast<unsigned>((h >> 1) & 3);
  if (type == 0) {
    const std::uint64_t aligned = (bit + 3 + 7) / 8;
    if (aligned + 4 > tail.size()) return false;
    const auto b = [&](std::uint64_t i) { return static_cast<unsigned>(tail[static_cast<std::size_t>(i)]); };
    const unsigned len = b(aligned) | (b(aligned + 1) << 8);
    const unsigned nlen = b(aligned + 2) | (b(aligned + 3) << 8);
    return len == (~nlen & 0xFFFFU) && len != 0;
  }
  if (type != 2) return false;
  const unsigned hlit = static_cast<unsigned>((h >> 3) & 31);
  const unsigned hdist = static_cast<unsigned>((h >> 8) & 31);
  const unsigned hclen = static_cast<unsigned>((h >> 13) & 15) + 4;
  if (hlit > 29 || hdist > 29) return false;
  // The code-length code: HCLEN 3-bit lengths; zlib accepts only a complete code (Kraft sum exactly 1).
  const std::uint64_t lengths = bits_at(tail, bit + 17) | (bits_at(tail, bit + 17 + 40) << 40);
  unsigned kraft = 0;
  for (unsigned i = 0; i < hclen; ++i) {
    const unsigned len = static_cast<unsigned>((lengths >> (3 * i)) & 7);
    if (len != 0) kraft += 128U >> len;
  }
  return kraft == 128;
}

// Step 1's zlib probe: no window, a little input; only "distance too far back" is allowed as an error.
bool probe(Inflater& inf, std::span<const std::byte> tail, std::uint64_t bit) {
  inflateReset(&inf.z);
  const std::size_t byte = static_cast<std::size_t>(bit / 8);
  const int shift = static_cast<int>(bit % 8);
  inflatePrime(&inf.z, 8 - shift, static_cast<int>(static_cast<unsigned>(tail[byte]) >> shift));
  std::array<Bytef, 16384> out;
  inf.z.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(tail.data() + byte + 1));
  const std::size_t avail = std::min(k_probe_input, tail.size() - byte - 1);
  inf.z.avail_in = static_cast<uInt>(avail);
  for (;;) {
    inf.z.next_out = out.data();
    inf.z.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&inf.z, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) return inf.z.avail_in == 0 && avail == tail.size() - byte - 1;
    if (rc == Z_BUF_ERROR || (rc == Z_OK && inf.z.avail_in == 0)) return true;
    if (rc == Z_DATA_ERROR) return inf.z.msg != nullptr && std::strcmp(inf.z.msg, "invalid distance too far back") == 0;
    if (rc != Z_OK) return false;
  }
}

// Step 2: the whole decode from `bit`, twice in lockstep (deflate_lockstep.hpp: ISA-L, the two decodes
// consume the same input and produce the same number of bytes per call, only the window's contents
// differ), written straight into the piece; the second decoder stops once the last 32 KB are known.
std::optional<InflatedPiece> decode(Lockstep& lockstep, std::span<const std::byte> tail, std::uint64_t bit,
                                    std::uint64_t max_output) {
  const std::size_t byte = static_cast<std::size_t>(bit / 8);
  if (!lockstep.start(tail[byte], static_cast<unsigned>(bit % 8))) return std::nullopt;
  lockstep.input(tail.subspan(byte + 1));
  InflatedPiece t;
  t.block_bit = bit;
  // A library's end inflates to about three times its compressed size: room for that, grown by half as
  // needed, never past max_output.
  std::size_t room = static_cast<std::size_t>(std::min<std::uint64_t>(max_output, (tail.size() - byte) * 3 + 65536));
  DecodedBytes b(k_chunk);
  for (;;) {
    if (t.bytes.size() + k_chunk > room)
      room = static_cast<std::size_t>(
          std::min<std::uint64_t>(max_output + k_chunk, std::max(room + room / 2, t.bytes.size() + k_chunk)));
    if (t.bytes.capacity() < room) t.bytes.reserve(room);
    const std::size_t at = t.bytes.size();
    if (at + k_chunk > max_output + k_chunk) return std::nullopt;
    t.bytes.resize(at + k_chunk);
    std::size_t produced = 0;
    const auto status = lockstep.run(std::span(t.bytes).subspan(at), b, produced);
    t.bytes.resize(at + produced);
    if (status == Lockstep::Status::Error) return std::nullopt;
    if (t.bytes.size() > max_output) return std::nullopt;
    if (!lockstep.alone()) {
      mark_unknown(t.bytes.data() + at, b.data(), produced, at, t.unknown);
      lockstep.go_alone_once_known(t.bytes.size(), t.unknown);
    }
    if (status == Lockstep::Status::End) {
      if (lockstep.avail_in() != 0) return std::nullopt;  // a final block before the real end
      return t;
    }
    if (produced == 0) return std::nullopt;  // the input is used up without a final block, or no progress
  }
}

}  // namespace

void mark_unknown(const std::byte* a, const std::byte* b, std::size_t n, std::uint64_t base,
                  std::vector<std::pair<std::uint64_t, std::uint64_t>>& unknown) {
  constexpr std::size_t k_stride = 64;
  for (std::size_t i = 0; i < n;) {
    if (n - i >= k_stride && std::memcmp(a + i, b + i, k_stride) == 0) {
      i += k_stride;
      continue;
    }
    const std::size_t stop = std::min(n, i + k_stride);
    for (; i < stop; ++i) {
      if (a[i] == b[i]) continue;
      if (!unknown.empty() && unknown.back().second == base + i)
        ++unknown.back().second;
      else
        unknown.emplace_back(base + i, base + i + 1);
    }
  }
}

bool InflatedPiece::known(std::uint64_t index) const {
  auto it = std::upper_bound(unknown.begin(), unknown.end(), std::make_pair(index, ~std::uint64_t{0}));
  return index < bytes.size() && (it == unknown.begin() || std::prev(it)->second <= index);
}

bool InflatedPiece::covers(std::uint64_t offset, std::uint64_t length) const {
  if (offset < first || length > bytes.size() || offset - first > bytes.size() - length) return false;
  const std::uint64_t from = offset - first, to = from + length;
  for (const auto& [b, e] : unknown) {
    if (b < to && from < e) return false;
  }
  return true;
}

std::optional<std::uint64_t> find_block_start(std::span<const std::byte> data, std::uint64_t from_bit,
                                              std::uint64_t search_bytes) {
  if (data.size() < 8) return std::nullopt;
  Inflater inf;
  if (!inf.ok) return std::nullopt;
  const std::uint64_t last_bit = std::min<std::uint64_t>(data.size() - 6, search_bytes) * 8;
  for (std::uint64_t bit = from_bit; bit < last_bit; ++bit) {
    if (plausible_start(data, bit) && probe(inf, data, bit)) return bit;
  }
  return std::nullopt;
}

std::optional<InflatedPiece> inflate_tail(std::span<const std::byte> tail, std::uint64_t uncompressed_size,
                                          std::uint64_t max_output) {
  if (tail.size() < 8) return std::nullopt;
  Inflater inf;
  if (!inf.ok) return std::nullopt;
  Lockstep lockstep;
  max_output = std::min(max_output, uncompressed_size);
  const std::uint64_t last_bit = std::min(tail.size() - 6, k_search_bytes) * 8;
  int decodes = 0;
  for (std::uint64_t bit = 0; bit < last_bit && decodes < k_max_decodes; ++bit) {
    if (!plausible_start(tail, bit) || !probe(inf, tail, bit)) continue;
    ++decodes;
    auto t = decode(lockstep, tail, bit, max_output);
    if (!t || t->bytes.size() > uncompressed_size) continue;
    t->first = uncompressed_size - t->bytes.size();
    return t;
  }
  return std::nullopt;
}

}  // namespace wheelcheck::wheel
