// Reading a few bytes in the middle of a deflate stream without inflating what comes before them.
//
// libcublasLt.so.13 (541 MB) is linked with x86-64 large-model sections: its .dynamic sits 114 MB before
// the end, ahead of .lrodata and .ldata, so decoding the member's end (deflate_tail.cpp) costs 30% of the
// wheel. The section headers, at the very end, say where .dynamic is in the *uncompressed* file; what
// nobody can say is where that is in the compressed stream, nor, once a piece of the middle is decoded,
// at which uncompressed offset its first byte lies. So:
//
// 1. The caller (zip_archive.cpp) estimates the compressed offset twice (the member's average ratio; the
//    ratio of its decoded end, extrapolated back) and sweeps from below the lower estimate to above the
//    higher one. Each miss moves the sweep on; it never decodes past `sweep_to`.
// 2. The sweep starts at a block boundary (find_block_start: the filter and probe of deflate_tail.cpp)
//    and decodes forward with ISA-L twice in lockstep, over a window of zeros and one of 0xFF bytes: a
//    byte that differs copies the unknown 32 KB before the start, so every output byte is known or marked
//    unknown, exactly as in the tail decoder.
// 3. The output is placed by content the ELF headers predict (bytes.hpp's ContentHint): an anchor (the
//    GOT's first word holds the dynamic section's address) found among known bytes gives a candidate
//    offset; the candidate stands only if the wanted range is then known and every predicted entry (the
//    DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_VERSYM, ... entries whose values the section headers give) lies
//    where it must. More than one standing candidate, or none by sweep_to, is no answer: the caller
//    falls back to decoding the end, and nothing is ever guessed.
// The second decoder stops as soon as the last 32 KB decoded are all known (every later byte then is),
// which is within a few hundred KB on real libraries. Memory: one buffer of the output (twice k_history
// and a chunk, 17 MB, which the decoder writes into), the second decoder's 1 MB chunk and one input
// chunk, whatever the member's size.

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>

#include "inspector/wheel/deflate_lockstep.hpp"
#include "inspector/wheel/deflate_tail.hpp"

namespace wheelcheck::wheel {

// Named, so that a unity batch with deflate_tail.cpp (whose anonymous namespace has constants of its own)
// keeps the two apart.
namespace middle {
namespace {

constexpr std::size_t k_in_chunk = std::size_t{512} << 10;        // compressed bytes fetched at a time
constexpr std::size_t k_out_chunk = std::size_t{1} << 20;         // uncompressed bytes decoded at a time
constexpr std::size_t k_history = std::size_t{8} << 20;           // decoded bytes kept behind the newest
constexpr std::uint64_t k_start_search = 1024 * 1024;             // compressed bytes searched for a block start
constexpr int k_max_starts = 16;                                  // false starts tolerated
constexpr std::uint64_t k_piece_margin = std::uint64_t{1} << 20;  // kept before the hint's range

bool matches(std::span<const std::byte> hist, std::uint64_t at, const std::vector<std::byte>& bytes) {
  return at <= hist.size() && bytes.size() <= hist.size() - at &&
         std::memcmp(hist.data() + at, bytes.data(), bytes.size()) == 0;
}

// The decoded output kept so far: stream offsets (bytes since the sweep's block start), the known map.
// One buffer, allocated once per sweep and never zeroed: the decoder writes into its spare end, and the
// oldest bytes are dropped by one move within it when it fills (the sweep decodes hundreds of MB on a
// large library, so growing a vector and copying each chunk into it cost more than decoding).
struct History {
  std::uint64_t first = 0;  // the stream offset of data[0]
  std::unique_ptr<std::byte[]> data;
  std::size_t used = 0, capacity = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> unknown;  // stream offsets, sorted, disjoint

  explicit History(std::size_t chunk) : data(new std::byte[2 * k_history + chunk]), capacity(2 * k_history + chunk) {}
  void reset() {
    first = 0;
    used = 0;
    unknown.clear();
  }
  std::span<const std::byte> bytes() const { return {data.get(), used}; }
  std::uint64_t end() const { return first + used; }
  // Where the decoder writes the next n bytes (n at most the chunk given to the constructor).
  std::span<std::byte> spare(std::size_t n) {
    if (capacity - used < n) {  // keep the newest k_history bytes
      const std::size_t drop = used - k_history;
      std::memmove(data.get(), data.get() + drop, k_history);
      used = k_history;
      first += drop;
      std::erase_if(unknown, [&](const auto& r) { return r.second <= first; });
    }
    return {data.get() + used, n};
  }
  // Takes n bytes written at spare(); b: the same bytes from the second decoder (its window of 0xFF
  // bytes), or nullptr once it has gone.
  void commit(std::size_t n, const std::byte* b) {
    if (b != nullptr) mark_unknown(data.get() + used, b, n, end(), unknown);
    used += n;
  }
  // Whether stream bytes [from, to) are held and known.
  bool known(std::uint64_t from, std::uint64_t to) const {
    if (from < first || to > end() || from > to) return false;
    auto it = std::lower_bound(unknown.begin(), unknown.end(), std::make_pair(from, std::uint64_t{0}),
                               [](const auto& r, const auto& v) { return r.second <= v.first; });
    return it == unknown.end() || it->first >= to;
  }
};

// Where `needle` occurs in hay[from..]: a memchr for its rarest-looking byte (not 0x00 or 0xFF, which
// fill binaries), then a compare. Indexes into hay.
std::vector<std::uint64_t> find_all(std::span<const std::byte> hay, std::size_t from,
                                    const std::vector<std::byte>& needle) {
  std::vector<std::uint64_t> out;
  if (needle.empty() || hay.size() < needle.size()) return out;
  std::size_t key = 0;
  for (std::size_t i = 0; i < needle.size(); ++i) {
    if (needle[i] != std::byte{0} && needle[i] != std::byte{0xFF}) {
      key = i;
      break;
    }
  }
  const auto* base = reinterpret_cast<const unsigned char*>(hay.data());
  const std::size_t last = hay.size() - needle.size();  // the last index a match may start at
  for (std::size_t at = from; at <= last;) {
    const auto* hit =
        static_cast<const unsigned char*>(std::memchr(base + at + key, static_cast<int>(needle[key]), last - at + 1));
    if (hit == nullptr) break;
    const std::size_t start = static_cast<std::size_t>(hit - base) - key;
    if (std::memcmp(base + start, needle.data(), needle.size()) == 0) out.push_back(start);
    at = start + 1;
  }
  return out;
}

enum class Verdict { Stands, Fails, Wait };

// Whether the output placed at `base` (the uncompressed offset of stream offset 0) is what the hint
// predicts. Wait: the bytes to judge are not decoded yet.
Verdict judge(const History& h, std::uint64_t base, const MiddleRequest& r) {
  const ContentHint& hint = *r.hint;
  const std::uint64_t lo = std::min(hint.begin, r.want), hi = std::max(hint.end, r.want + r.want_length);
  if (lo < base) return Verdict::Fails;  // before the sweep's start: cannot be this placement
  if (hi - base > h.end()) return Verdict::Wait;
  if (!h.known(lo - base, hi - base)) return Verdict::Fails;
  for (const auto& e : hint.entries) {
    bool found = false;
    for (std::uint64_t at = e.begin; !found && at + e.bytes.size() <= e.end;
         at += std::max<std::uint64_t>(e.stride, 1)) {
      if (at < base || !h.known(at - base, at - base + e.bytes.size())) return Verdict::Fails;
      found = matches(h.bytes(), at - base - h.first, e.bytes);
    }
    if (!found) return Verdict::Fails;
  }
  return Verdict::Stands;
}

struct Candidate {
  std::uint64_t base;
  Verdict verdict = Verdict::Wait;
};

}  // namespace

std::optional<InflatedPiece> sweep(const MiddleRequest& r, const ReadCompressed& read, MiddleStats* stats) {
  MiddleStats local;
  MiddleStats& st = stats != nullptr ? *stats : local;
  if (r.hint == nullptr || r.hint->anchors.empty() || r.sweep_from >= r.compressed_size) return std::nullopt;
  const std::uint64_t sweep_to = std::min(r.sweep_to, r.compressed_size);
  std::size_t longest = 0;
  for (const auto& a : r.hint->anchors) longest = std::max(longest, a.bytes.size());
  if (longest == 0) return std::nullopt;

  std::vector<std::byte> in;
  auto fetch = [&](std::uint64_t at, std::uint64_t length) {
    in.resize(static_cast<std::size_t>(std::min<std::uint64_t>(length, r.compressed_size - at)));
    read(at, in);
    st.compressed_read += in.size();
  };
  auto lockstep = std::make_unique<Lockstep>();
  // Output chunks no larger than the stream could fill at deflate's ceiling (1032:1) nor than 1 MB; left
  // uninitialized (every byte used is written first).
  const std::size_t out_chunk = static_cast<std::size_t>(
      std::clamp<std::uint64_t>(r.compressed_size * 1032, std::uint64_t{64} << 10, k_out_chunk));
  std::unique_ptr<std::byte[]> b_buf(new std::byte[out_chunk]);
  const std::span<std::byte> b(b_buf.get(), out_chunk);
  History h(out_chunk);
  std::uint64_t search_at = r.sweep_from;  // compressed offset where the next block start is looked for
  std::uint64_t search_bit = 0;
  while (st.starts < k_max_starts && search_at < sweep_to) {
    fetch(search_at, k_start_search + 64);
    const auto bit = find_block_start(in, search_bit, std::min<std::uint64_t>(k_start_search, in.size()));
    if (!bit) {
      search_at += k_start_search;
      search_bit = 0;
      continue;
    }
    ++st.starts;
    const std::uint64_t block_byte = search_at + *bit / 8;
    if (!lockstep->start(in[static_cast<std::size_t>(*bit / 8)], static_cast<unsigned>(*bit % 8))) return std::nullopt;
    std::uint64_t in_at = block_byte + 1;  // the next compressed byte to feed
    h.reset();
    std::vector<Candidate> candidates;
    bool failed = false;
    while (!failed) {
      if (lockstep->avail_in() == 0) {
        if (in_at >= sweep_to || in_at >= r.compressed_size) break;  // unplaced by sweep_to: give up
        fetch(in_at, k_in_chunk);
        in_at += in.size();
        lockstep->input(in);
      }
      std::size_t produced = 0;
      const auto status = lockstep->run(h.spare(out_chunk), b, produced);
      if (status == Lockstep::Status::Error) {
        failed = true;
        break;
      }
      const std::uint64_t before = h.end();
      h.commit(produced, lockstep->alone() ? nullptr : b.data());
      lockstep->go_alone_once_known(h.end(), h.unknown);
      st.decoded += produced;
      // New anchor sightings, in the bytes just decoded (and the few before, for one that straddles).
      for (const auto& anchor : r.hint->anchors) {
        const std::uint64_t from =
            std::max(h.first, before >= anchor.bytes.size() ? before - anchor.bytes.size() + 1 : 0);
        if (anchor.bytes.empty() || h.end() - from < anchor.bytes.size()) continue;
        for (const std::uint64_t at : find_all(h.bytes(), static_cast<std::size_t>(from - h.first), anchor.bytes)) {
          if (anchor.offset < at + h.first || !h.known(at + h.first, at + h.first + anchor.bytes.size())) continue;
          const std::uint64_t base = anchor.offset - (at + h.first);
          if (std::none_of(candidates.begin(), candidates.end(), [&](const Candidate& c) { return c.base == base; }))
            candidates.push_back({base});
        }
      }
      for (auto& c : candidates) {
        if (c.verdict == Verdict::Wait) c.verdict = judge(h, c.base, r);
      }
      const auto standing = std::count_if(candidates.begin(), candidates.end(),
                                          [](const Candidate& c) { return c.verdict == Verdict::Stands; });
      const bool waiting = std::any_of(candidates.begin(), candidates.end(),
                                       [](const Candidate& c) { return c.verdict == Verdict::Wait; });
      if (standing > 1) return std::nullopt;  // two placements fit: refuse
      if (standing == 1 && !waiting) {
        const auto& c = *std::find_if(candidates.begin(), candidates.end(),
                                      [](const Candidate& x) { return x.verdict == Verdict::Stands; });
        if (c.base + h.first > r.uncompressed_size || h.used > r.uncompressed_size - (c.base + h.first))
          return std::nullopt;  // a placement past the stream's end is no placement
        // The piece keeps what the hint is about and what was decoded after it, with k_piece_margin
        // before it for reads beside it: not the megabytes before, which nothing asks for.
        const std::uint64_t lo = std::min(r.hint->begin, r.want) - c.base;  // judge(): h.first <= lo
        const std::uint64_t keep = std::max(h.first, lo - std::min(lo, k_piece_margin));
        const auto kept = h.bytes().subspan(static_cast<std::size_t>(keep - h.first));
        InflatedPiece piece;
        piece.first = c.base + keep;
        piece.block_bit = block_byte * 8 + *bit % 8;
        piece.bytes.assign(kept.begin(), kept.end());
        for (const auto& [u0, u1] : h.unknown) {
          if (u1 <= keep) continue;
          piece.unknown.emplace_back(std::max(u0, keep) - keep, u1 - keep);
        }
        return piece;
      }
      if (status == Lockstep::Status::End) {
        // The real end, unplaced; or a final block long before the member's end: a false start.
        failed = in_at < r.compressed_size || lockstep->avail_in() != 0;
        break;
      }
      if (produced == 0 && lockstep->avail_in() != 0) {
        failed = true;  // no progress with input left: a broken state
        break;
      }
    }
    if (!failed) return std::nullopt;
    // A false start (or damaged data): look again just after it, unless the sweep had got far.
    if (h.end() > (std::uint64_t{4} << 20)) return std::nullopt;
    search_at = block_byte;
    search_bit = *bit % 8 + 1;
  }
  return std::nullopt;
}

}  // namespace middle

std::optional<InflatedPiece> inflate_middle(const MiddleRequest& r, const ReadCompressed& read, MiddleStats* stats) {
  return middle::sweep(r, read, stats);
}

}  // namespace wheelcheck::wheel
