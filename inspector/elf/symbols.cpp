// The streaming scanner's reading of the dynamic symbols (`readelf --dyn-syms`): .dynsym, each symbol's
// version from .gnu.version, and the symbol count.
//
// The dynamic section gives .dynsym's address but not its length. The count comes, in order of trust,
// from the SHT_DYNSYM section header, DT_MIPS_SYMTABNO, DT_HASH's nchain, or the GNU hash table: its
// highest bucket starts the last hash chain, and the chain ends at the first value with bit 0 set, one
// past the last symbol. That walk reads the chain a word at a time through view(), so a chain that never
// ends is caught by the table limit rather than read past the file.

#include <algorithm>

#include "inspector/elf/detail.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"

namespace wheelcheck::elf {

namespace detail {

Binding binding_from_info(std::uint8_t info) {
  const auto bind = static_cast<std::uint8_t>(info >> 4);
  return (bind <= 2 || bind == 10) ? static_cast<Binding>(bind) : Binding::Other;
}

SymbolType symbol_type_from_info(std::uint8_t info) {
  const auto type = static_cast<std::uint8_t>(info & 15);
  return (type <= 6 || type == 10) ? static_cast<SymbolType>(type) : SymbolType::Other;
}

}  // namespace detail

using detail::checked_add;
using detail::checked_mul;
using detail::FieldReader;

std::uint64_t ElfScanner::Impl::symbol_count(const Layout& L) {
  if (L.symcount) return *L.symcount;
  if (L.sysv_hash) {
    FieldReader r(view(L.sysv_hash->begin, 8, "DT_HASH"), endian, cls, "DT_HASH");
    return r.u32(4);  // nchain
  }
  if (L.gnu_hash) {
    const std::uint64_t base = L.gnu_hash->begin;
    FieldReader h(view(base, 16, "DT_GNU_HASH header"), endian, cls, "DT_GNU_HASH header");
    const std::uint64_t nbuckets = h.u32(0), symoffset = h.u32(4), bloom = h.u32(8);
    const std::uint64_t word = cls == Class::Elf64 ? 8 : 4;
    const std::uint64_t buckets_off = checked_add(base + 16, checked_mul(bloom, word, "GNU hash bloom"), "GNU hash");
    const std::uint64_t buckets_len = checked_mul(nbuckets, 4, "GNU hash buckets");
    if (buckets_len > limits.max_table_bytes) throw bad_input("ELF: GNU hash table is implausibly large");
    FieldReader b(view(buckets_off, buckets_len, "DT_GNU_HASH buckets"), endian, cls, "DT_GNU_HASH buckets");
    std::uint64_t max_bucket = 0;
    for (std::uint64_t i = 0; i < nbuckets; ++i) max_bucket = std::max<std::uint64_t>(max_bucket, b.u32(i * 4));
    if (max_bucket == 0) return symoffset;
    if (max_bucket < symoffset) throw bad_input("ELF: GNU hash bucket points below symoffset");
    const std::uint64_t chains_off = checked_add(buckets_off, buckets_len, "GNU hash");
    std::uint64_t idx = max_bucket;
    // Walk the last chain in pieces: each step is bounds checked by view(); the chain ends at bit 0.
    // A chain word inside another known table means the end bit was never met: no real chain runs there.
    const std::pair<const std::optional<Range>*, const char*> others[] = {{&L.symtab, ".dynsym"},
                                                                          {&L.strtab, ".dynstr"},
                                                                          {&L.versym, ".gnu.version"},
                                                                          {&L.verneed, ".gnu.version_r"},
                                                                          {&L.verdef, ".gnu.version_d"}};
    for (std::uint64_t steps = 0;; ++steps, ++idx) {
      if (steps > limits.max_table_bytes / 4) throw bad_input("ELF: GNU hash chain does not end");
      const std::uint64_t at = checked_add(chains_off, (idx - symoffset) * 4, "GNU hash chain");
      for (const auto& [range, name] : others) {
        if (*range && at >= (*range)->begin && at < (*range)->end) {
          throw bad_input("ELF: the last GNU hash chain (from symbol " + std::to_string(max_bucket) + ") runs into " +
                          name + " at offset " + std::to_string(at) + " without an end bit");
        }
      }
      FieldReader c(view(at, 4, "DT_GNU_HASH chain"), endian, cls, "DT_GNU_HASH chain");
      if (c.u32(0) & 1U) return idx + 1;
    }
  }
  if (L.symtab) return (L.symtab->end - L.symtab->begin) / sym_entry_size();  // bounded guess
  return 0;
}

// .dynsym without its null entry, each symbol with its version.
void ElfScanner::Impl::read_symbols(const Layout& L, std::span<const std::byte> strtab,
                                    const detail::VersionIndex& versions, Binary& bin) {
  const std::uint64_t count = symbol_count(L);
  const std::uint64_t es = sym_entry_size();
  const std::uint64_t bytes = checked_mul(count, es, "dynamic symbol count");
  if (bytes > limits.max_table_bytes)
    throw bad_input("ELF: " + std::to_string(count) + " dynamic symbols exceed the reader's limit");
  FieldReader sr(view(L.symtab->begin, bytes, ".dynsym"), endian, cls, ".dynsym");
  std::optional<FieldReader> vr;
  if (L.versym)
    vr.emplace(view(L.versym->begin, checked_mul(count, 2, ".gnu.version"), ".gnu.version"), endian, cls,
               ".gnu.version");
  bin.symbols.reserve(count > 0 ? count - 1 : 0);
  for (std::uint64_t i = 1; i < count; ++i) {
    const std::uint64_t b = i * es;
    Symbol s;
    std::uint32_t name_off;
    std::uint8_t info, other;
    std::uint16_t shndx;
    if (cls == Class::Elf64) {
      name_off = sr.u32(b);
      info = sr.u8(b + 4);
      other = sr.u8(b + 5);
      shndx = sr.u16(b + 6);
      s.value = sr.u64(b + 8);
      s.size = sr.u64(b + 16);
    } else {
      name_off = sr.u32(b);
      s.value = sr.u32(b + 4);
      s.size = sr.u32(b + 8);
      info = sr.u8(b + 12);
      other = sr.u8(b + 13);
      shndx = sr.u16(b + 14);
    }
    s.name = detail::string_at(strtab, name_off, ".dynstr");
    s.binding = detail::binding_from_info(info);
    s.type = detail::symbol_type_from_info(info);
    s.visibility = static_cast<Visibility>(other & 3);
    s.defined = shndx != 0;
    if (vr) versions.apply(vr->u16(i * 2), s);
    bin.symbols.push_back(std::move(s));
  }
}

}  // namespace wheelcheck::elf
