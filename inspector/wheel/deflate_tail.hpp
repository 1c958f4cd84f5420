// The end of a raw deflate stream, decoded without its beginning (see deflate_tail.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace wheelcheck::wheel {

struct InflatedTail {
  std::uint64_t first = 0;       // the uncompressed offset of bytes[0]
  std::vector<std::byte> bytes;  // the stream's last bytes.size() uncompressed bytes
  // Where bytes copy the unknown window: [begin, end) indexes into `bytes`, sorted, disjoint (they are
  // few: mostly at the start, where back-references still reach before it).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> unknown;
  std::uint64_t block_bit = 0;            // the bit offset in the tail where decoding started
  bool known(std::uint64_t index) const;  // bytes[index] is known
  // Whether every byte of [offset, offset + length) is decoded and known.
  bool covers(std::uint64_t offset, std::uint64_t length) const;
};

// Decodes the last part of a raw deflate stream from `tail`, the final tail.size() compressed bytes of a
// stream that inflates to `uncompressed_size` bytes in all. nullopt when no block boundary in `tail`
// decodes cleanly to the end of the stream, or the output would pass `max_output`.
std::optional<InflatedTail> inflate_tail(std::span<const std::byte> tail, std::uint64_t uncompressed_size,
                                         std::uint64_t max_output);

}  // namespace wheelcheck::wheel
