// The streaming scanner's reading of symbol versions (`readelf -V`): .gnu.version_r, the versions this
// file needs from each library ("File: libc.so.6  Cnt: 2"), and .gnu.version_d, the versions it defines.
// Both are linked lists inside their table (vn_next, vna_next, vd_next, vda_next are byte offsets to the
// next entry, 0 at the end), walked here with checked additions that must stay inside the table and a bound on the
// entry count. Each auxiliary entry carries the index .gnu.version gives a symbol of that version; VersionIndex maps
// those indices back to names for symbols.cpp (and for the LIEF reader, which resolves them the same way).

#include "inspector/elf/detail.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"

namespace wheelcheck::elf {

namespace detail {

void VersionIndex::apply(std::uint16_t versym, Symbol& s) const {
  const auto idx = static_cast<std::uint16_t>(versym & 0x7fff);
  if (idx < 2) return;  // 0 local, 1 global: unversioned
  if (auto d = definitions.find(idx); d != definitions.end()) {
    s.version = d->second;
    s.version_hidden = (versym & 0x8000) != 0;
  } else if (auto n = needs.find(idx); n != needs.end()) {
    s.version = n->second.first;
    s.version_file = n->second.second;
  }
}

}  // namespace detail

using detail::checked_add;
using detail::FieldReader;

namespace {

// The offset `link` (vn_aux, vn_next, vna_next, vd_aux, vd_next, vda_next) leads to from the entry at `from`,
// which must lie inside the table. The links are unsigned and a link of 0 ends its list, so a chain only
// moves forward: it cannot loop inside 64-bit offsets, and a link meant to loop back (a huge value that a
// 32-bit reader would wrap around to an earlier entry) lands past the end, where it is refused by name.
std::uint64_t follow(const FieldReader& table, std::uint64_t from, std::uint32_t link, const char* link_name,
                     const char* table_name) {
  const std::uint64_t to = checked_add(from, link, link_name);
  if (to >= table.size()) {
    throw bad_input(std::string("ELF: ") + table_name + ": " + link_name + " " + std::to_string(link) +
                    " of the entry at offset " + std::to_string(from) + " leads outside the table (" +
                    std::to_string(table.size()) + " bytes): a broken or looping chain");
  }
  return to;
}

}  // namespace

void ElfScanner::Impl::read_version_needs(const Layout& L, std::span<const std::byte> strtab, Binary& bin,
                                          detail::VersionIndex& index) {
  if (!L.verneed || !L.verneednum) return;
  auto str = [&](std::uint64_t off) { return detail::string_at(strtab, off, ".dynstr"); };
  FieldReader r(view(L.verneed->begin, L.verneed->end - L.verneed->begin, ".gnu.version_r"), endian, cls,
                ".gnu.version_r");
  std::uint64_t off = 0;
  for (std::uint64_t i = 0; i < L.verneednum; ++i) {
    if (i > 65535) throw bad_input("ELF: too many version needs");
    VersionNeed need;
    const auto cnt = r.u16(off + 2);
    need.file = str(r.u32(off + 4));
    std::uint64_t aux = cnt == 0 ? off : follow(r, off, r.u32(off + 8), "vn_aux", ".gnu.version_r");
    for (std::uint16_t k = 0; k < cnt; ++k) {
      VersionNeedAux a;
      a.hash = r.u32(aux);
      a.flags = r.u16(aux + 4);
      a.other = r.u16(aux + 6);
      a.name = str(r.u32(aux + 8));
      index.needs[a.other] = {a.name, need.file};
      need.versions.push_back(std::move(a));
      const auto next = r.u32(aux + 12);
      if (next == 0 || k + 1 == cnt) break;  // the last entry's link is not followed
      aux = follow(r, aux, next, "vna_next", ".gnu.version_r");
    }
    bin.version_needs.push_back(std::move(need));
    const auto next = r.u32(off + 12);
    if (next == 0 || i + 1 == L.verneednum) break;  // the last entry's link is not followed
    off = follow(r, off, next, "vn_next", ".gnu.version_r");
  }
}

void ElfScanner::Impl::read_version_definitions(const Layout& L, std::span<const std::byte> strtab, Binary& bin,
                                                detail::VersionIndex& index) {
  if (!L.verdef || !L.verdefnum) return;
  auto str = [&](std::uint64_t off) { return detail::string_at(strtab, off, ".dynstr"); };
  FieldReader r(view(L.verdef->begin, L.verdef->end - L.verdef->begin, ".gnu.version_d"), endian, cls,
                ".gnu.version_d");
  std::uint64_t off = 0;
  for (std::uint64_t i = 0; i < L.verdefnum; ++i) {
    if (i > 65535) throw bad_input("ELF: too many version definitions");
    VersionDefinition def;
    def.flags = r.u16(off + 2);
    def.index = r.u16(off + 4);
    const auto cnt = r.u16(off + 6);
    def.hash = r.u32(off + 8);
    std::uint64_t aux = cnt == 0 ? off : follow(r, off, r.u32(off + 12), "vd_aux", ".gnu.version_d");
    for (std::uint16_t k = 0; k < cnt; ++k) {
      auto name = str(r.u32(aux));
      if (k == 0)
        def.name = std::move(name);
      else
        def.parents.push_back(std::move(name));
      const auto next = r.u32(aux + 4);
      if (next == 0 || k + 1 == cnt) break;  // the last entry's link is not followed
      aux = follow(r, aux, next, "vda_next", ".gnu.version_d");
    }
    index.definitions[def.index] = def.name;
    bin.version_definitions.push_back(std::move(def));
    const auto next = r.u32(off + 16);
    if (next == 0 || i + 1 == L.verdefnum) break;  // the last entry's link is not followed
    off = follow(r, off, next, "vd_next", ".gnu.version_d");
  }
}

}  // namespace wheelcheck::elf
