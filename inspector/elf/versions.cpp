// The streaming scanner's reading of symbol versions (`readelf -V`): .gnu.version_r, the versions this
// file needs from each library ("File: libc.so.6  Cnt: 2"), and .gnu.version_d, the versions it defines.
// Both are linked lists inside their table (vn_next, vna_next, vd_next, vda_next are byte offsets to the
// next entry, 0 at the end), walked here with checked additions and a bound on the entry count. Each
// auxiliary entry carries the index .gnu.version gives a symbol of that version; VersionIndex maps those
// indices back to names for symbols.cpp (and for the LIEF reader, which resolves them the same way).

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

void ElfScanner::Impl::read_version_needs(const Layout& L, std::span<const std::byte> strtab, Binary& bin,
                                          detail::VersionIndex& index) {
  if (!L.verneed || !L.verneednum) return;
  auto str = [&](std::uint64_t off) { return detail::string_at(strtab, off, ".dynstr"); };
  FieldReader r(view(L.verneed->begin, L.verneed->end - L.verneed->begin), endian, cls, ".gnu.version_r");
  std::uint64_t off = 0;
  for (std::uint64_t i = 0; i < L.verneednum; ++i) {
    if (i > 65535) throw bad_input("ELF: too many version needs");
    VersionNeed need;
    const auto cnt = r.u16(off + 2);
    need.file = str(r.u32(off + 4));
    std::uint64_t aux = checked_add(off, r.u32(off + 8), "vn_aux");
    for (std::uint16_t k = 0; k < cnt; ++k) {
      VersionNeedAux a;
      a.hash = r.u32(aux);
      a.flags = r.u16(aux + 4);
      a.other = r.u16(aux + 6);
      a.name = str(r.u32(aux + 8));
      index.needs[a.other] = {a.name, need.file};
      need.versions.push_back(std::move(a));
      const auto next = r.u32(aux + 12);
      if (next == 0) break;
      aux = checked_add(aux, next, "vna_next");
    }
    bin.version_needs.push_back(std::move(need));
    const auto next = r.u32(off + 12);
    if (next == 0) break;
    off = checked_add(off, next, "vn_next");
  }
}

void ElfScanner::Impl::read_version_definitions(const Layout& L, std::span<const std::byte> strtab, Binary& bin,
                                                detail::VersionIndex& index) {
  if (!L.verdef || !L.verdefnum) return;
  auto str = [&](std::uint64_t off) { return detail::string_at(strtab, off, ".dynstr"); };
  FieldReader r(view(L.verdef->begin, L.verdef->end - L.verdef->begin), endian, cls, ".gnu.version_d");
  std::uint64_t off = 0;
  for (std::uint64_t i = 0; i < L.verdefnum; ++i) {
    if (i > 65535) throw bad_input("ELF: too many version definitions");
    VersionDefinition def;
    def.flags = r.u16(off + 2);
    def.index = r.u16(off + 4);
    const auto cnt = r.u16(off + 6);
    def.hash = r.u32(off + 8);
    std::uint64_t aux = checked_add(off, r.u32(off + 12), "vd_aux");
    for (std::uint16_t k = 0; k < cnt; ++k) {
      auto name = str(r.u32(aux));
      if (k == 0)
        def.name = std::move(name);
      else
        def.parents.push_back(std::move(name));
      const auto next = r.u32(aux + 4);
      if (next == 0) break;
      aux = checked_add(aux, next, "vda_next");
    }
    index.definitions[def.index] = def.name;
    bin.version_definitions.push_back(std::move(def));
    const auto next = r.u32(off + 16);
    if (next == 0) break;
    off = checked_add(off, next, "vd_next");
  }
}

}  // namespace wheelcheck::elf
