// What the section headers predict about the dynamic section's bytes, for a reader that cannot seek
// (the middle of a deflate member: inspector/wheel/deflate_middle.cpp).
//
// The section headers (the file's last bytes, in every linker's layout) give the dynamic section's file
// offset, size and address, and the addresses and sizes of the tables its entries point at. So:
//   anchors  the first word of the GOT: the psABIs of x86-64, i386 and AArch64 put the dynamic
//            section's link-time address there (_GLOBAL_OFFSET_TABLE_[0] = _DYNAMIC), at an exact offset:
//            .got.plt's first word on x86, .got's on AArch64. On other machines both are offered; the
//            wrong one places the output a few entries off, where the entries may still check out, and
//            two standing placements are refused.
//   entries  (DT_SYMTAB, .dynsym's address), (DT_STRTAB, .dynstr's address), (DT_STRSZ, its size),
//            (DT_GNU_HASH, ...), (DT_VERSYM, ...), (DT_VERNEED, ...), (DT_VERDEF, ...), (DT_HASH, ...):
//            each at an entry boundary of the section, in whatever order the linker wrote them.
// Nothing here decides anything about the file: a hint only helps the reader find bytes, which the
// scanner then reads and checks as it checks everything.

#include <algorithm>
#include <array>
#include <cstring>

#include "inspector/elf/detail.hpp"

namespace wheelcheck::elf {

// Named, so that a unity batch of inspector/elf/ keeps these apart from the other files' own.
namespace predict {
namespace {

constexpr std::uint32_t k_sht_strtab = 3, k_sht_hash = 5, k_sht_dynamic = 6, k_sht_nobits = 8, k_sht_dynsym = 11;
constexpr std::uint32_t k_sht_gnu_hash = 0x6ffffff6, k_sht_verdef = 0x6ffffffd, k_sht_verneed = 0x6ffffffe,
                        k_sht_versym = 0x6fffffff;
constexpr std::uint64_t k_dt_hash = 4, k_dt_strtab = 5, k_dt_symtab = 6, k_dt_strsz = 10, k_dt_gnu_hash = 0x6ffffef5,
                        k_dt_versym = 0x6ffffff0, k_dt_verdef = 0x6ffffffc, k_dt_verneed = 0x6ffffffe;
constexpr std::uint16_t k_em_386 = 3, k_em_x86_64 = 62, k_em_aarch64 = 183;
constexpr std::uint64_t k_max_section_headers = 4096;
constexpr std::uint64_t k_max_shstrtab = 1 << 20;

struct Section {
  std::uint32_t name = 0, type = 0, link = 0;
  std::uint64_t addr = 0, offset = 0, size = 0;
};

std::vector<std::byte> encode(std::uint64_t value, unsigned width, Endian endian) {
  std::vector<std::byte> out(width);
  for (unsigned i = 0; i < width; ++i) {
    const unsigned shift = endian == Endian::Little ? 8 * i : 8 * (width - 1 - i);
    out[i] = static_cast<std::byte>((value >> shift) & 0xFF);
  }
  return out;
}

}  // namespace

std::optional<ContentHint> from_section_headers(std::uint64_t size, const ReadAt& read_at) {
  std::array<std::byte, 64> ehdr{};
  if (size < ehdr.size()) return std::nullopt;
  read_at(0, ehdr);
  if (!has_elf_magic(ehdr.data(), 4)) return std::nullopt;
  const auto cls = static_cast<unsigned>(ehdr[4]), data = static_cast<unsigned>(ehdr[5]);
  if ((cls != 1 && cls != 2) || (data != 1 && data != 2)) return std::nullopt;
  const Class c = cls == 2 ? Class::Elf64 : Class::Elf32;
  const Endian e = data == 1 ? Endian::Little : Endian::Big;
  const detail::FieldReader h(ehdr, e, c, "ELF header");
  const bool wide = c == Class::Elf64;
  const unsigned word = wide ? 8 : 4;
  const std::uint64_t shoff = wide ? h.u64(0x28) : h.u32(0x20);
  const std::uint64_t shentsize = h.u16(wide ? 0x3a : 0x2e);
  const std::uint64_t shnum = h.u16(wide ? 0x3c : 0x30);
  const std::uint64_t shstrndx = h.u16(wide ? 0x3e : 0x32);
  if (shoff == 0 || shnum == 0 || shnum > k_max_section_headers || shentsize != (wide ? 64U : 40U)) return std::nullopt;
  if (shoff > size || shnum * shentsize > size - shoff || shstrndx >= shnum) return std::nullopt;
  std::vector<std::byte> table(static_cast<std::size_t>(shnum * shentsize));
  read_at(shoff, table);
  const detail::FieldReader t(table, e, c, "section headers");
  std::vector<Section> sections(static_cast<std::size_t>(shnum));
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const std::uint64_t b = i * shentsize;
    auto& s = sections[static_cast<std::size_t>(i)];
    s.name = t.u32(b);
    s.type = t.u32(b + 4);
    s.addr = t.word(b + (wide ? 0x10 : 0x0c));
    s.offset = t.word(b + (wide ? 0x18 : 0x10));
    s.size = t.word(b + (wide ? 0x20 : 0x14));
    s.link = t.u32(b + (wide ? 0x28 : 0x18));
  }
  const auto dynamic =
      std::find_if(sections.begin(), sections.end(), [](const Section& s) { return s.type == k_sht_dynamic; });
  if (dynamic == sections.end() || dynamic->size == 0 || dynamic->offset > size ||
      dynamic->size > size - dynamic->offset || dynamic->size > (std::uint64_t{1} << 20))
    return std::nullopt;
  const Section& names = sections[static_cast<std::size_t>(shstrndx)];
  std::vector<std::byte> shstrtab;
  if (names.type == k_sht_strtab && names.offset <= size && names.size <= size - names.offset &&
      names.size <= k_max_shstrtab) {
    shstrtab.resize(static_cast<std::size_t>(names.size));
    read_at(names.offset, shstrtab);
  }
  auto name_of = [&](const Section& s) -> std::string {
    if (s.name >= shstrtab.size()) return {};
    const auto* begin = reinterpret_cast<const char*>(shstrtab.data()) + s.name;
    return std::string(begin, strnlen(begin, shstrtab.size() - s.name));
  };

  ContentHint hint;
  hint.begin = dynamic->offset;
  hint.end = dynamic->offset + dynamic->size;
  const auto address = encode(dynamic->addr, word, e);
  // Which GOT holds it: x86-64 and i386 put _DYNAMIC in .got.plt's first word, AArch64 in .got's (as
  // binutils and lld write them); elsewhere both are offered, and the entries' check keeps at most one.
  const std::uint16_t machine = h.u16(0x12);
  std::vector<const char*> gots = {".got.plt", ".got"};
  if (machine == k_em_x86_64 || machine == k_em_386) gots = {".got.plt"};
  if (machine == k_em_aarch64) gots = {".got"};
  for (const char* got : gots) {
    for (const auto& s : sections) {
      if (s.type == k_sht_nobits || s.size < word || s.offset > size || word > size - s.offset || name_of(s) != got)
        continue;
      hint.anchors.push_back({s.offset, address});
    }
  }
  auto entry = [&](std::uint64_t tag, std::uint64_t value) {
    auto bytes = encode(tag, word, e);
    const auto v = encode(value, word, e);
    bytes.insert(bytes.end(), v.begin(), v.end());
    hint.entries.push_back({hint.begin, hint.end, 2ULL * word, std::move(bytes)});
  };
  for (const auto& s : sections) {
    switch (s.type) {
      case k_sht_dynsym: entry(k_dt_symtab, s.addr); break;
      case k_sht_gnu_hash: entry(k_dt_gnu_hash, s.addr); break;
      case k_sht_hash: entry(k_dt_hash, s.addr); break;
      case k_sht_versym: entry(k_dt_versym, s.addr); break;
      case k_sht_verneed: entry(k_dt_verneed, s.addr); break;
      case k_sht_verdef: entry(k_dt_verdef, s.addr); break;
      default: break;
    }
  }
  if (dynamic->link < sections.size()) {
    const Section& strtab = sections[dynamic->link];
    if (strtab.type == k_sht_strtab) {
      entry(k_dt_strtab, strtab.addr);
      entry(k_dt_strsz, strtab.size);
    }
  }
  for (const auto& s : sections) {
    if (s.type != k_sht_nobits && s.size != 0 && s.offset < size) hint.regions.push_back(s.offset);
  }
  std::sort(hint.regions.begin(), hint.regions.end());
  hint.regions.erase(std::unique(hint.regions.begin(), hint.regions.end()), hint.regions.end());
  // Two entries at least, or a placement would rest on the anchor alone.
  if (hint.anchors.empty() || hint.entries.size() < 2) return std::nullopt;
  return hint;
}

}  // namespace predict

std::optional<ContentHint> predict_dynamic(std::uint64_t size, const ReadAt& read_at) {
  return predict::from_section_headers(size, read_at);
}

}  // namespace wheelcheck::elf
