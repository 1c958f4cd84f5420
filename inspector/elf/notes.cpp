// Notes (`readelf -n`), walked by one bounds-checked loop that hands each note to its decoder:
//   - the GNU property note, NT_GNU_PROPERTY_TYPE_0, whose GNU_PROPERTY_X86_ISA_1_NEEDED property names
//     the x86-64 micro-architecture level a file needs (x86-64-v2, -v3, -v4);
//   - the ABI tag note, NT_GNU_ABI_TAG (.note.ABI-tag: owner "GNU", type 1, a descriptor of four 32-bit
//     words: the OS, 0 for Linux, then the oldest kernel's major, minor and patch), which glibc's crt1.o
//     puts in every program it links: the kernel the C library was configured for (--enable-kernel).
//     It binds only a statically linked file, which carries that C library inside it.
// The decoders serve both readers; the streaming scanner applies them to the note segments (PT_NOTE and
// PT_GNU_PROPERTY for the property, PT_NOTE for the ABI tag), and to SHT_NOTE sections only in a file
// without note segments; inspector/elf/lief_reader.cpp does the same over LIEF's segments and sections.
// A damaged note ends the walk, not the file: what was found before it stands. An ABI tag note with a
// descriptor shorter than four words is no ABI tag (readelf calls it corrupt): it names no kernel.

#include <cstring>

#include <fmt/format.h>

#include "inspector/elf/detail.hpp"
#include "wheelcheck/elf.hpp"

namespace wheelcheck::elf {

std::string AbiTag::os_name() const {
  switch (os) {  // the ELF_NOTE_OS_* values of glibc's elf.h, as readelf names them
    case 0: return "Linux";
    case 1: return "Hurd";
    case 2: return "Solaris";
    case 3: return "FreeBSD";
  }
  return fmt::format("OS {}", os);
}

std::string AbiTag::version() const {
  return fmt::format("{}.{}.{}", major, minor, patch);
}

namespace detail {

namespace {
constexpr std::uint32_t k_gnu_property_x86_isa_1_needed = 0xc0008002;
constexpr std::uint32_t k_nt_gnu_abi_tag = 1;
constexpr std::uint32_t k_nt_gnu_property_type_0 = 5;

// Calls visit(type, descriptor) for every note owned by "GNU" in a note segment or section.
template <class Visit>
void walk_gnu_notes(std::span<const std::byte> notes, Endian endian, Class cls, Visit visit) {
  FieldReader r(notes, endian, cls, "note");
  std::uint64_t off = 0;
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
    if (is_gnu) visit(type, notes.subspan(desc_off, descsz));
    off = ((desc_off + descsz + align - 1) / align) * align;
  }
}
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
  std::optional<int> level;
  walk_gnu_notes(notes, endian, cls, [&](std::uint32_t type, std::span<const std::byte> desc) {
    if (type != k_nt_gnu_property_type_0) return;
    if (auto l = x86_isa_level_from_property(desc, endian, cls)) level = l;
  });
  return level;
}

std::optional<AbiTag> abi_tag_from_notes(std::span<const std::byte> notes, Endian endian, Class cls) {
  std::optional<AbiTag> tag;
  walk_gnu_notes(notes, endian, cls, [&](std::uint32_t type, std::span<const std::byte> desc) {
    if (tag || type != k_nt_gnu_abi_tag || desc.size() < 16) return;  // the first whole one wins
    const FieldReader r(desc, endian, cls, "ABI tag note");
    tag = AbiTag{r.u32(0), r.u32(4), r.u32(8), r.u32(12)};
  });
  return tag;
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

// A PT_NOTE segment.
std::optional<AbiTag> ElfScanner::Impl::abi_tag(const Segment& s) {
  return detail::abi_tag_from_notes(view(s.offset, s.filesz, "note segment"), endian, cls);
}

// The SHT_NOTE sections (within the table limit), in section header order; the first ABI tag wins.
std::optional<AbiTag> ElfScanner::Impl::abi_tag(const std::vector<Section>& secs) {
  for (const auto& s : secs) {
    if (s.type != detail::SHT_NOTE || s.size > limits.max_table_bytes) continue;
    if (auto tag = detail::abi_tag_from_notes(view(s.offset, s.size, "note section"), endian, cls)) return tag;
  }
  return std::nullopt;
}

}  // namespace wheelcheck::elf
