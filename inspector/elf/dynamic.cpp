// The streaming scanner's reading of the dynamic section (`readelf -d`): its entries, the file layout of
// the tables they point at, the entries the loader acts on (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH,
// DT_FLAGS, DT_FLAGS_1), and a program's copy relocations.
//
// The dynamic section gives each table's *address*; the PT_LOAD segments map an address to a file
// offset. Sizes come from wherever they are stated: DT_STRSZ for .dynstr, the section headers (when
// captured) for every table, DT_MIPS_SYMTABNO for .dynsym on MIPS. A table of unstated size runs to the
// next known table or the end of its segment; a later pass reads it again should that guess fall short
// (see scanner.cpp).

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>

#include "inspector/elf/detail.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"

namespace wheelcheck::elf {

using namespace detail;

namespace {

// Tags whose value is an address of a table in the file: used to bound tables of unstated size.
constexpr std::int64_t k_address_tags[] = {DT_HASH,       DT_STRTAB,   DT_SYMTAB,   DT_RELA,    DT_REL,
                                           23 /*JMPREL*/, 12 /*INIT*/, 13 /*FINI*/, 25,         26,
                                           DT_GNU_HASH,   DT_VERSYM,   DT_VERDEF,   DT_VERNEED, 0x6ffffef6 /*TLSDESC*/};
constexpr std::uint64_t k_unknown_table_guess = 1 << 20;  // for a table bounded by nothing else

// Virtual address -> file offset through the PT_LOAD segments.
std::optional<std::uint64_t> to_offset(const std::vector<Segment>& segs, std::uint64_t addr) {
  for (const auto& s : segs) {
    if (s.type == PT_LOAD && addr >= s.vaddr && addr - s.vaddr < s.filesz) return s.offset + (addr - s.vaddr);
  }
  return std::nullopt;
}

}  // namespace

DynamicEntries ElfScanner::Impl::dynamic_entries(const Segment& dyn) {
  DynamicEntries out;
  FieldReader r(view(dyn.offset, dyn.filesz, "dynamic section"), endian, cls, "dynamic section");
  const auto es = dyn_entry_size();
  for (std::uint64_t off = 0; off + es <= dyn.filesz; off += es) {
    const auto tag = r.sword(off);
    if (tag == DT_NULL) break;
    out.emplace_back(tag, r.word(off + es / 2));
  }
  return out;
}

Layout ElfScanner::Impl::layout(const Header& h, const std::vector<Segment>& segs, const std::vector<Section>& secs,
                                const DynamicEntries& dyn) {
  Layout L;
  std::map<std::int64_t, std::uint64_t> tag;
  std::vector<std::uint64_t> table_offsets;
  for (const auto& [t, v] : dyn) {
    if (!tag.count(t)) tag[t] = v;
    if (std::find(std::begin(k_address_tags), std::end(k_address_tags), t) != std::end(k_address_tags)) {
      if (auto o = to_offset(segs, v)) table_offsets.push_back(*o);
    }
  }
  for (const auto& s : secs) {
    if (s.type != SHT_NOBITS && s.size != 0 && s.offset != 0) table_offsets.push_back(s.offset);
  }
  std::sort(table_offsets.begin(), table_offsets.end());
  auto section_at = [&](std::uint64_t off, std::uint32_t type) -> const Section* {
    for (const auto& s : secs) {
      if (s.offset == off && s.type == type && s.type != SHT_NOBITS) return &s;
    }
    return nullptr;
  };
  auto segment_end = [&](std::uint64_t off) -> std::uint64_t {
    for (const auto& s : segs) {
      if (s.type == PT_LOAD && off >= s.offset && off - s.offset < s.filesz) return s.offset + s.filesz;
    }
    return file_size;
  };
  // A table of unstated size runs to the next known table or the end of its segment.
  auto bounded = [&](std::uint64_t off) -> Range {
    std::uint64_t end = segment_end(off);
    auto it = std::upper_bound(table_offsets.begin(), table_offsets.end(), off);
    if (it != table_offsets.end()) end = std::min(end, *it);
    if (end - off > k_unknown_table_guess && it == table_offsets.end()) end = off + k_unknown_table_guess;
    return Range{off, std::min(end, file_size)};
  };
  auto table = [&](std::int64_t t) -> std::optional<std::uint64_t> {
    auto it = tag.find(t);
    if (it == tag.end()) return std::nullopt;
    auto off = to_offset(segs, it->second);
    if (!off) {
      throw bad_input("ELF: dynamic entry " + std::to_string(t) + " points at address " + std::to_string(it->second) +
                      ", outside every PT_LOAD segment");
    }
    return off;
  };
  // A table whose section header states its size, else bounded by what follows it.
  auto sized = [&](std::uint64_t off, std::uint32_t section_type, const char* what) -> Range {
    if (const auto* s = section_at(off, section_type)) return Range{off, checked_add(off, s->size, what)};
    return bounded(off);
  };
  if (auto off = table(DT_STRTAB)) {
    auto sz = tag.count(DT_STRSZ) ? tag[DT_STRSZ] : 0;
    if (sz == 0) throw bad_input("ELF: DT_STRTAB without DT_STRSZ");
    L.strtab = Range{*off, checked_add(*off, sz, "DT_STRSZ")};
  }
  if (auto off = table(DT_SYMTAB)) {
    if (tag.count(DT_SYMENT) && tag[DT_SYMENT] != sym_entry_size()) {
      throw bad_input("ELF: DT_SYMENT is " + std::to_string(tag[DT_SYMENT]) + ", expected " +
                      std::to_string(sym_entry_size()));
    }
    if (const auto* s = section_at(*off, SHT_DYNSYM)) {
      L.symtab = Range{*off, checked_add(*off, s->size, ".dynsym size")};
      L.symcount = s->size / sym_entry_size();
    } else if (tag.count(DT_MIPS_SYMTABNO)) {
      L.symcount = tag[DT_MIPS_SYMTABNO];
      L.symtab =
          Range{*off, checked_add(*off, checked_mul(*L.symcount, sym_entry_size(), "DT_MIPS_SYMTABNO"), "symtab")};
    } else {
      L.symtab = bounded(*off);
    }
  }
  if (auto off = table(DT_VERSYM)) L.versym = sized(*off, SHT_GNU_versym, ".gnu.version");
  if (auto off = table(DT_VERNEED)) {
    L.verneednum = tag.count(DT_VERNEEDNUM) ? tag[DT_VERNEEDNUM] : 0;
    L.verneed = sized(*off, SHT_GNU_verneed, ".gnu.version_r");
  }
  if (auto off = table(DT_VERDEF)) {
    L.verdefnum = tag.count(DT_VERDEFNUM) ? tag[DT_VERDEFNUM] : 0;
    L.verdef = sized(*off, SHT_GNU_verdef, ".gnu.version_d");
  }
  const bool program = h.type == FileType::Executable || (tag.count(DT_FLAGS_1) && (tag[DT_FLAGS_1] & DF_1_PIE) != 0);
  if (program) {
    for (const auto& [addr, size, out] :
         {std::tuple{DT_RELA, DT_RELASZ, &L.rela}, std::tuple{DT_REL, DT_RELSZ, &L.rel}}) {
      if (!tag.count(size) || tag[size] == 0) continue;
      if (auto off = table(addr)) {
        if (tag[size] > limits.max_table_bytes) throw bad_input("ELF: dynamic relocations exceed the reader's limit");
        *out = Range{*off, std::min(file_size, checked_add(*off, tag[size], "DT_RELASZ"))};
      }
    }
  }
  if (!L.symcount) {
    if (auto off = table(DT_GNU_HASH))
      L.gnu_hash = bounded(*off);
    else if (auto off2 = table(DT_HASH))
      L.sysv_hash = Range{*off2, std::min(file_size, checked_add(*off2, 8, "DT_HASH"))};
  }
  check_no_overlap(L);
  return L;
}

// The dynamic tables lie inside the file and never share bytes in a file a linker wrote: a stated size
// past the end is refused by the table's name, and a table placed over another (a .dynsym inside .dynstr,
// a .gnu.version_r over .dynsym) would be read as two things at once, so it is refused too.
// A table of unstated size is bounded by the next known table, so only a table that starts inside
// another, or a stated size that runs over the next, can overlap.
void ElfScanner::Impl::check_no_overlap(const Layout& L) const {
  struct Named {
    const char* name;
    Range range;
  };
  std::vector<Named> tables;
  auto add = [&](const char* name, const std::optional<Range>& r, bool used = true) {
    if (used && r && r->end > r->begin) tables.push_back({name, *r});
  };
  add(".dynstr", L.strtab);
  add(".dynsym", L.symtab);
  add(".gnu.version", L.versym);
  add(".gnu.version_r", L.verneed, L.verneednum != 0);
  add(".gnu.version_d", L.verdef, L.verdefnum != 0);
  add(".gnu.hash", L.gnu_hash);
  for (const auto& t : tables) {
    if (t.range.end > file_size) {
      throw bad_input(std::string("ELF: ") + t.name + " (offset " + std::to_string(t.range.begin) + ", " +
                      std::to_string(t.range.end - t.range.begin) + " bytes) runs past the end of the file (" +
                      std::to_string(file_size) + " bytes)");
    }
  }
  for (std::size_t i = 0; i < tables.size(); ++i) {
    for (std::size_t j = i + 1; j < tables.size(); ++j) {
      const auto& a = tables[i];
      const auto& b = tables[j];
      if (a.range.begin < b.range.end && b.range.begin < a.range.end) {
        throw bad_input(std::string("ELF: ") + b.name + " (offset " + std::to_string(b.range.begin) + ", " +
                        std::to_string(b.range.end - b.range.begin) + " bytes) overlaps " + a.name + " (offset " +
                        std::to_string(a.range.begin) + ", " + std::to_string(a.range.end - a.range.begin) + " bytes)");
      }
    }
  }
}

// The entries the loader acts on, names read from .dynstr.
void ElfScanner::Impl::read_dynamic(const DynamicEntries& entries, std::span<const std::byte> strtab, Binary& bin) {
  auto str = [&](std::uint64_t off) { return string_at(strtab, off, ".dynstr"); };
  for (const auto& [t, v] : entries) {
    switch (t) {
      case DT_NEEDED: bin.needed.push_back(str(v)); break;
      case DT_SONAME: bin.soname = str(v); break;
      case DT_RPATH:
        for (auto& p : split_path_list(str(v))) bin.rpath.push_back(std::move(p));
        break;
      case DT_RUNPATH:
        for (auto& p : split_path_list(str(v))) bin.runpath.push_back(std::move(p));
        break;
      case DT_FLAGS: bin.flags = v; break;
      case DT_FLAGS_1: bin.flags_1 = v; break;
      default: break;
    }
  }
}

// A program's R_*_COPY relocations mark the symbols the loader copies from a library.
void ElfScanner::Impl::mark_copy_relocations(const Layout& L, std::uint16_t machine, Binary& bin) {
  const std::uint32_t copy = elf::copy_relocation_type(machine);
  if (copy == 0) return;
  const std::uint64_t word = cls == Class::Elf64 ? 8 : 4;
  for (const auto& [range, entry] : {std::pair{L.rela, 3 * word}, std::pair{L.rel, 2 * word}}) {
    if (!range) continue;
    const std::uint64_t n = (range->end - range->begin) / entry;
    FieldReader r(view(range->begin, n * entry, "dynamic relocations"), endian, cls, "dynamic relocations");
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t info = cls == Class::Elf64 ? r.u64(i * entry + word) : r.u32(i * entry + word);
      const std::uint64_t type = cls == Class::Elf64 ? (info & 0xffffffffU) : (info & 0xffU);
      const std::uint64_t sym = cls == Class::Elf64 ? (info >> 32) : (info >> 8);
      if (type == copy && sym >= 1 && sym <= bin.symbols.size()) bin.symbols[sym - 1].copy_relocated = true;
    }
  }
}

}  // namespace wheelcheck::elf
