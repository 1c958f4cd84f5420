// Notes (`readelf -n`): the GNU property note, NT_GNU_PROPERTY_TYPE_0, whose
// GNU_PROPERTY_X86_ISA_1_NEEDED property names the x86-64 micro-architecture level a file needs
// (x86-64-v2, -v3, -v4). The decoder serves both readers; the streaming scanner applies it to the
// PT_NOTE and PT_GNU_PROPERTY segments, and to SHT_NOTE sections only in a file without note segments.
// A damaged note ends the walk, not the file: what was found before it stands.

#include <cstring>

#include "inspector/elf/detail.hpp"
#include "wheelcheck/elf.hpp"

namespace wheelcheck::elf {

namespace detail {

namespace {
constexpr std::uint32_t k_gnu_property_x86_isa_1_needed = 0xc0008002;
constexpr std::uint32_t k_nt_gnu_property_type_0 = 5;
}  // namespace

std::optional<int> x86_isa_level_from_property(std::span<const std::byte> desc, Endian endian, Class cls) {
  FieldReader r(desc, endian, cls, "GNU property note");
  const std::uint64_t align = cls == Class::Elf64 ? 8 : 4;
  std::uint64_t off = 0;
  std::optional<int> level;
  while (off + 8 <= desc.size()) {
    const auto type = r.u32(off);
    const auto size = r.u32(off + 4);
    const std::uint64_t data = off + 8;
    if (size > desc.size() - data) break;  // a damaged property ends the walk, not the file
    if (type == k_gnu_property_x86_isa_1_needed && size >= 4) {
      const auto bits = r.u32(data);
      for (int bit = 3; bit >= 0; --bit) {
        if ((bits >> bit) & 1U) {
          level = bit + 1;
          break;
        }
      }
    }
    off = data + ((size + align - 1) / align) * align;
  }
  return level;
}

std::optional<int> x86_isa_level_from_notes(std::span<const std::byte> notes, Endian endian, Class cls) {
  FieldReader r(notes, endian, cls, "note");
  std::uint64_t off = 0;
  std::optional<int> level;
  while (off + 12 <= notes.size()) {
    const std::uint64_t namesz = r.u32(off);
    const std::uint64_t descsz = r.u32(off + 4);
    const auto type = r.u32(off + 8);
    const std::uint64_t name_off = off + 12;
    // GNU property notes align their descriptor to 8 in ELF64; other notes to 4.
    const std::uint64_t name_end = name_off + ((namesz + 3) / 4) * 4;
    if (name_end > notes.size()) break;
    const bool is_gnu = namesz == 4 && std::memcmp(notes.data() + name_off, "GNU", 4) == 0;
    const std::uint64_t align = (is_gnu && type == k_nt_gnu_property_type_0 && cls == Class::Elf64) ? 8 : 4;
    const std::uint64_t desc_off = ((name_off + namesz + align - 1) / align) * align;
    if (desc_off > notes.size() || descsz > notes.size() - desc_off) break;
    if (is_gnu && type == k_nt_gnu_property_type_0) {
      if (auto l = x86_isa_level_from_property(notes.subspan(desc_off, descsz), endian, cls)) level = l;
    }
    off = ((desc_off + descsz + align - 1) / align) * align;
  }
  return level;
}

}  // namespace detail

// A PT_NOTE or PT_GNU_PROPERTY segment.
std::optional<int> ElfScanner::Impl::x86_isa_level(const Segment& s) {
  return detail::x86_isa_level_from_notes(view(s.offset, s.filesz, "note segment"), endian, cls);
}

// The SHT_NOTE sections (within the table limit); the last that names a level wins.
std::optional<int> ElfScanner::Impl::x86_isa_level(const std::vector<Section>& secs) {
  std::optional<int> level;
  for (const auto& s : secs) {
    if (s.type == detail::SHT_NOTE && s.size <= limits.max_table_bytes) {
      if (auto l = detail::x86_isa_level_from_notes(view(s.offset, s.size, "note section"), endian, cls)) level = l;
    }
  }
  return level;
}

}  // namespace wheelcheck::elf
