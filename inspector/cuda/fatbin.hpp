// Internal to the readers: the fatbin walker, a push parser over a run of fatbin containers that reads
// only the containers' and the entries' headers and skips every payload (inspector/cuda/fatbin.cpp).
//
// Two ways to drive it:
//   directed: the range of `.nv_fatbin` is known (a file on disk, a stored member, LIEF's whole copy):
//     feed exactly the bytes wanted() asks for, in order, until done();
//   seeking: the range is not known yet (a member streamed once, whose section headers come last): feed
//     every byte of the file; containers are found by their magic at 8-byte aligned offsets and read
//     as they pass; the caller keeps those inside `.nv_fatbin` once the section headers are known.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wheelcheck/cuda.hpp"

namespace wheelcheck::cuda {

struct Container {
  std::uint64_t begin = 0;  // file offset of its header
  std::uint64_t end = 0;    // one past its last entry
  std::vector<Variant> variants;
  std::uint64_t entries = 0;                // every entry, those of kinds not described (neither SASS nor PTX) too
  std::optional<CubinFormat> newest_cubin;  // the newest cubin format of its SASS entries
};

class FatbinWalker {
 public:
  // Directed over [begin, end), or seeking over a file of `end` bytes (begin 0).
  FatbinWalker(std::uint64_t begin, std::uint64_t end, bool seeking);

  // Bytes at file offset `offset`, in increasing order. Bytes before wanted() are ignored; in directed
  // mode a gap over wanted bytes is an error (Error(Internal): the driver's bug, not the input's).
  void feed(std::uint64_t offset, std::span<const std::byte> data);
  // The next bytes wanted: [offset, offset + length). Done when offset reaches the end.
  std::uint64_t wanted() const { return m_pos + m_buf.size(); }
  std::size_t wanted_length() const { return m_need - m_buf.size(); }
  bool done() const { return m_failed || m_pos >= m_end; }
  // Reading a container's headers (seeking: past its magic), rather than looking for the next one.
  bool in_container() const { return m_phase != Phase::Boundary; }

  // Directed: why the containers could not be read ("" when they could). Seeking never fails: what does
  // not hold together is not a container.
  const std::string& failure() const { return m_failure; }
  const std::vector<Container>& containers() const { return m_containers; }

 private:
  enum class Phase { Boundary, ContainerHeader, Entry };
  void consume(std::span<const std::byte> bytes);
  void scan_for_magic(std::uint64_t& offset, std::span<const std::byte>& data);
  void on_complete();
  void next_boundary(std::uint64_t at);
  void reject(const std::string& why);

  std::uint64_t m_begin;
  std::uint64_t m_end;
  bool m_seeking;
  Phase m_phase = Phase::Boundary;
  std::uint64_t m_pos;           // where the bytes in m_buf begin
  std::size_t m_need = 8;        // bytes wanted at m_pos
  std::vector<std::byte> m_buf;  // gathered bytes of the current header
  Container m_current;           // the container being read
  bool m_failed = false;
  std::string m_failure;
  std::vector<Container> m_containers;
};

// The containers of a seeking walk that lie inside [begin, end) merged into one Fatbins; `unread` says
// so when they do not tile the range (a container the walk could not follow).
Fatbins merge_containers(const std::vector<Container>& containers, std::uint64_t begin, std::uint64_t end);

// A section that may hold GPU code the library loads itself: allocated (SHF_ALLOC), with bytes in the file
// (not SHT_NOBITS), and neither .nv_fatbin (read as the runtime's own) nor __nv_relfatbin (device-link
// input, never loaded).
bool may_hold_loaded_code(std::string_view name, std::uint32_t type, std::uint64_t flags);

// The containers of a seeking walk that lie wholly inside one of `sections` (ascending), added to `f` as
// code outside .nv_fatbin: counted in f.embedded_*, their variants merged into f.variants.
void add_embedded(Fatbins& f, const std::vector<Container>& containers, const std::vector<SectionSpan>& sections);

// A seeking walk over `sections` (ascending, within a file of file_size bytes) through random access:
// every byte between containers is read (their magic is looked for at 8-byte aligned offsets), never a
// payload.
std::vector<Container> seek_containers(const std::vector<SectionSpan>& sections, std::uint64_t file_size,
                                       const std::function<void(std::uint64_t, std::span<std::byte>)>& read_at);

}  // namespace wheelcheck::cuda
