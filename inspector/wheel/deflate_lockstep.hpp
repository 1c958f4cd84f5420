// Two ISA-L inflaters run in lockstep over one raw deflate stream entered at a block boundary, with
// different stand-ins for the unknown 32 KB window before it (all 0x00, all 0xFF): an output byte that
// differs between them copies that window, so every byte decoded is known or marked unknown. Shared by
// the decoders of a stream's end (deflate_tail.cpp) and of a piece of its middle (deflate_middle.cpp).
// ISA-L, not zlib: it inflates about three times as fast, and these decodes run to megabytes.
#pragma once

#include <isa-l/igzip_lib.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace wheelcheck::wheel {

inline constexpr std::size_t k_lockstep_window = 32768;

// Two ISA-L inflaters over the same input, one with a window of zeros, one of 0xFF bytes.
class Lockstep {
 public:
  // `first`: the byte that holds the block's first bit, entered at bit `shift`; the input after it comes
  // through input(). Restarts both decoders.
  bool start(std::byte first, unsigned shift) {
    m_alone = false;
    for (int i = 0; i < 2; ++i) {
      auto& s = m_state[i];
      isal_inflate_init(&s);
      s.crc_flag = 0;  // a raw deflate stream
      std::vector<std::uint8_t> dict(k_lockstep_window, i == 0 ? 0x00 : 0xFF);
      if (isal_inflate_set_dict(&s, dict.data(), static_cast<std::uint32_t>(dict.size())) != ISAL_DECOMP_OK)
        return false;
      s.read_in = static_cast<std::uint64_t>(static_cast<unsigned>(first) >> shift);
      s.read_in_length = static_cast<std::int32_t>(8 - shift);
    }
    return true;
  }
  void input(std::span<const std::byte> in) {
    for (auto& s : m_state) {  // the second, once alone, is never run again
      s.next_in = const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(in.data()));
      s.avail_in = static_cast<std::uint32_t>(in.size());
    }
  }
  std::uint32_t avail_in() const { return m_state[0].avail_in; }
  // Once the last 32 KB decoded are all known, every later byte is too (a copy reaches 32 KB back at
  // most): the second decoder has nothing left to tell, and the first goes on alone. `end`: the bytes
  // decoded so far; `unknown`: the caller's sorted map of unknown ranges, in the same offsets.
  void go_alone_once_known(std::uint64_t end, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& unknown) {
    if (!m_alone && end >= k_lockstep_window && (unknown.empty() || unknown.back().second + k_lockstep_window <= end))
      m_alone = true;
  }
  bool alone() const { return m_alone; }
  enum class Status { More, End, Error };
  // Decodes into a and b (the same size); `produced` bytes of each are written.
  Status run(std::span<std::byte> a, std::span<std::byte> b, std::size_t& produced) {
    std::span<std::byte> outs[2] = {a, b};
    int rc[2];
    if (m_alone) {
      auto& s = m_state[0];
      s.next_out = reinterpret_cast<std::uint8_t*>(a.data());
      s.avail_out = static_cast<std::uint32_t>(a.size());
      const int r = isal_inflate(&s);
      produced = a.size() - s.avail_out;
      if (r < 0) return Status::Error;
      return s.block_state == ISAL_BLOCK_FINISH ? Status::End : Status::More;
    }
    for (int i = 0; i < 2; ++i) {
      auto& s = m_state[i];
      s.next_out = reinterpret_cast<std::uint8_t*>(outs[i].data());
      s.avail_out = static_cast<std::uint32_t>(outs[i].size());
      rc[i] = isal_inflate(&s);
    }
    produced = a.size() - m_state[0].avail_out;
    if (rc[0] != rc[1] || produced != b.size() - m_state[1].avail_out || m_state[0].avail_in != m_state[1].avail_in)
      return Status::Error;  // cannot happen for a real stream: refuse rather than guess
    if (rc[0] < 0) return Status::Error;
    if (m_state[0].block_state == ISAL_BLOCK_FINISH) return Status::End;
    return Status::More;
  }

 private:
  inflate_state m_state[2]{};
  bool m_alone = false;
};

}  // namespace wheelcheck::wheel
