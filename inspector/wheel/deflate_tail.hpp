// Parts of a raw deflate stream decoded without its beginning: its end (deflate_tail.cpp) and a piece of
// its middle placed by predicted content (deflate_middle.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "wheelcheck/bytes.hpp"

namespace wheelcheck::wheel {

// An allocator that leaves new elements uninitialized: a decoder resizes its output to the room it
// writes next, and zeroing megabytes it overwrites at once cost as much as the decoding.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using DecodedBytes = std::vector<std::byte, UninitializedAllocator<std::byte>>;

// Records where a and b (n bytes: the same output decoded over two stand-in windows) differ, as unknown
// ranges [begin, end) from `base` on, merged with the last range when they touch. Equal stretches are
// passed over 64 bytes at a time.
void mark_unknown(const std::byte* a, const std::byte* b, std::size_t n, std::uint64_t base,
                  std::vector<std::pair<std::uint64_t, std::uint64_t>>& unknown);

// Uncompressed bytes decoded from a block boundary without the 32 KB before it (the window).
struct InflatedPiece {
  std::uint64_t first = 0;  // the uncompressed offset of bytes[0]
  DecodedBytes bytes;       // the tail: the stream's last bytes.size() bytes; a middle piece: placed
  // Where bytes copy the unknown window: [begin, end) indexes into `bytes`, sorted, disjoint (they are
  // few: mostly at the start, where back-references still reach before it).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> unknown;
  std::uint64_t block_bit = 0;            // the bit offset in the input where decoding started
  bool known(std::uint64_t index) const;  // bytes[index] is known
  // Whether every byte of [offset, offset + length) is decoded and known.
  bool covers(std::uint64_t offset, std::uint64_t length) const;
};

// Decodes the last part of a raw deflate stream from `tail`, the final tail.size() compressed bytes of a
// stream that inflates to `uncompressed_size` bytes in all. nullopt when no block boundary in `tail`
// decodes cleanly to the end of the stream, or the output would pass `max_output`.
std::optional<InflatedPiece> inflate_tail(std::span<const std::byte> tail, std::uint64_t uncompressed_size,
                                          std::uint64_t max_output);

// The first bit at or after `from_bit`, within data's first `search_bytes`, where a dynamic-Huffman or
// stored block can start and its first codes decode (the filter and probe of deflate_tail.cpp).
std::optional<std::uint64_t> find_block_start(std::span<const std::byte> data, std::uint64_t from_bit,
                                              std::uint64_t search_bytes);

// A piece of the middle of a raw deflate stream, for reading a few bytes there without inflating what
// comes before them (deflate_middle.cpp). The sweep starts at a block found at or after `sweep_from`
// (compressed), decodes forward with the unknown window marked, and places its output by the hint's
// anchors; it gives up unplaced at `sweep_to`.
struct MiddleRequest {
  std::uint64_t compressed_size = 0;  // the whole stream's
  std::uint64_t uncompressed_size = 0;
  std::uint64_t sweep_from = 0;
  std::uint64_t sweep_to = 0;
  std::uint64_t want = 0, want_length = 0;  // the uncompressed bytes the piece must hold, all known
  const ContentHint* hint = nullptr;
};
struct MiddleStats {
  std::uint64_t compressed_read = 0;  // compressed bytes fetched and decoded
  std::uint64_t decoded = 0;          // uncompressed bytes produced
  int starts = 0;                     // block starts tried
};
using ReadCompressed = std::function<void(std::uint64_t offset, std::span<std::byte> out)>;
// nullopt when no placement is found before sweep_to, or more than one is (never a guess). Throws only
// what `read` throws.
std::optional<InflatedPiece> inflate_middle(const MiddleRequest& request, const ReadCompressed& read,
                                            MiddleStats* stats = nullptr);

}  // namespace wheelcheck::wheel
