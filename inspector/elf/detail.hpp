// Internal declarations of the ELF readers (inspector/elf/), shared by the streaming scanner and LIEF:
// bounds-checked, endian-aware field access, the ELF constants the readers use, the GNU property note
// decoder, and the streaming scanner's state (ElfScanner::Impl), whose parts live in one file per ELF
// concept:
//   scanner.cpp   the streaming algorithm: captured ranges, passes, planning, the readers' entry points;
//   header.cpp    the ELF header, the program headers and the section headers;
//   dynamic.cpp   the dynamic section, where its tables lie, and the dynamic relocations;
//   symbols.cpp   .dynsym and the hash tables that count it;
//   versions.cpp  .gnu.version_r and .gnu.version_d;
//   notes.cpp     the GNU property note (the x86 ISA level);
//   sections.cpp  the section table with its names, for a SectionReader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::elf::detail {

// Checked a + b (never wraps): throws Error(BadInput) with `what` on overflow.
std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what);
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what);

// Reads fixed-width fields from a span in the file's byte order, every read bounds checked.
class FieldReader {
 public:
  FieldReader(std::span<const std::byte> bytes, Endian endian, Class cls, const char* what)
      : m_bytes(bytes), m_endian(endian), m_class(cls), m_what(what) {}
  std::uint8_t u8(std::uint64_t off) const {
    check(off, 1);
    return static_cast<std::uint8_t>(m_bytes[off]);
  }
  std::uint16_t u16(std::uint64_t off) const {
    check(off, 2);
    const auto* p = reinterpret_cast<const unsigned char*>(m_bytes.data() + off);
    return m_endian == Endian::Little ? static_cast<std::uint16_t>(p[0] | (p[1] << 8))
                                      : static_cast<std::uint16_t>((p[0] << 8) | p[1]);
  }
  std::uint32_t u32(std::uint64_t off) const { return static_cast<std::uint32_t>(unsigned_at(off, 4)); }
  std::uint64_t u64(std::uint64_t off) const { return unsigned_at(off, 8); }
  std::uint64_t word(std::uint64_t off) const { return m_class == Class::Elf64 ? u64(off) : u32(off); }
  std::int64_t sword(std::uint64_t off) const {
    if (m_class == Class::Elf64) return static_cast<std::int64_t>(u64(off));
    return static_cast<std::int32_t>(u32(off));
  }
  std::uint64_t size() const { return m_bytes.size(); }
  std::span<const std::byte> bytes() const { return m_bytes; }

 private:
  void check(std::uint64_t off, std::uint64_t len) const {
    if (off > m_bytes.size() || len > m_bytes.size() - off) out_of_range(off);
  }
  [[noreturn]] void out_of_range(std::uint64_t off) const;
  std::uint64_t unsigned_at(std::uint64_t off, int len) const {
    check(off, static_cast<std::uint64_t>(len));
    const auto* p = reinterpret_cast<const unsigned char*>(m_bytes.data() + off);
    std::uint64_t v = 0;
    for (int i = 0; i < len; ++i) {
      const int k = m_endian == Endian::Little ? len - 1 - i : i;
      v = (v << 8) | p[k];
    }
    return v;
  }
  std::span<const std::byte> m_bytes;
  Endian m_endian;
  Class m_class;
  const char* m_what;
};

// A NUL-terminated string at `off` inside a string table; throws when unterminated or out of range.
std::string string_at(std::span<const std::byte> table, std::uint64_t off, const char* table_name);

// DT_RPATH and DT_RUNPATH values split at ':' (an empty entry stays, as the loader reads it).
inline std::vector<std::string> split_path_list(std::string_view s) {
  return split(s, ":", true);
}

// st_info's binding and type as wheelcheck's enums (values the gABI does not name become Other).
Binding binding_from_info(std::uint8_t info);
SymbolType symbol_type_from_info(std::uint8_t info);

// The x86 ISA level (1..4) from the descriptor of an NT_GNU_PROPERTY_TYPE_0 note, if it names one.
std::optional<int> x86_isa_level_from_property(std::span<const std::byte> desc, Endian endian, Class cls);
// Walks a note segment or section and applies the decoder above to every GNU property note.
std::optional<int> x86_isa_level_from_notes(std::span<const std::byte> notes, Endian endian, Class cls);
// The first whole NT_GNU_ABI_TAG note (owner "GNU", type 1, four words) of a note segment or section.
std::optional<AbiTag> abi_tag_from_notes(std::span<const std::byte> notes, Endian endian, Class cls);

// ELF constants (gABI and the GNU extensions).
constexpr std::uint32_t PT_LOAD = 1, PT_DYNAMIC = 2, PT_INTERP = 3, PT_NOTE = 4, PT_GNU_PROPERTY = 0x6474e553,
                        PT_GNU_STACK = 0x6474e551;
constexpr std::uint32_t SHT_NOTE = 7, SHT_DYNSYM = 11, SHT_GNU_verdef = 0x6ffffffd, SHT_GNU_verneed = 0x6ffffffe,
                        SHT_GNU_versym = 0x6fffffff, SHT_NOBITS = 8;
constexpr std::int64_t DT_NULL = 0, DT_NEEDED = 1, DT_HASH = 4, DT_STRTAB = 5, DT_SYMTAB = 6, DT_RELA = 7,
                       DT_RELASZ = 8, DT_STRSZ = 10, DT_SYMENT = 11, DT_SONAME = 14, DT_RPATH = 15, DT_REL = 17,
                       DT_RELSZ = 18, DT_RUNPATH = 29, DT_FLAGS = 30, DT_GNU_HASH = 0x6ffffef5, DT_VERSYM = 0x6ffffff0,
                       DT_FLAGS_1 = 0x6ffffffb, DT_VERDEF = 0x6ffffffc, DT_VERDEFNUM = 0x6ffffffd,
                       DT_VERNEED = 0x6ffffffe, DT_VERNEEDNUM = 0x6fffffff, DT_MIPS_SYMTABNO = 0x70000011;
constexpr std::uint64_t DF_1_PIE = 0x08000000;

// The streaming scanner's view of the file.

// Thrown by a view of bytes the scanner has not captured: finish_pass() makes it the next pass's wish.
struct NeedBytes {
  std::uint64_t offset;
  std::uint64_t length;
};

struct Range {
  std::uint64_t begin;
  std::uint64_t end;
};

struct Capture {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::vector<std::byte> bytes;  // filled as the stream passes [begin, end)
  bool complete() const { return bytes.size() == end - begin; }
};

// The ELF header's fields the scanner reads.
struct Header {
  FileType type;
  std::uint16_t machine;
  std::uint32_t flags;
  std::uint64_t phoff, shoff;
  std::uint16_t phentsize, phnum, shentsize, shnum, shstrndx;
};

// A program header (`readelf -l`).
struct Segment {
  std::uint32_t type;
  std::uint32_t flags;
  std::uint64_t offset, vaddr, filesz, memsz;
};

// A section header (`readelf -S`).
struct Section {
  std::uint32_t name;  // sh_name: an offset into the section name table
  std::uint32_t type;
  std::uint32_t link;
  std::uint64_t flags;  // sh_flags
  std::uint64_t offset, size, entsize, addr;
};

// The dynamic section's (d_tag, d_val) entries up to DT_NULL.
using DynamicEntries = std::vector<std::pair<std::int64_t, std::uint64_t>>;

// The layout of the dynamic tables: file offset and length of each, from the dynamic section, the
// section headers when present (exact sizes), and otherwise the distance to the next known table.
struct Layout {
  std::optional<Range> strtab, symtab, versym, verneed, verdef, gnu_hash, sysv_hash;
  // A program's dynamic relocations (DT_RELA/DT_REL), read only for their copy relocations: an
  // executable's data symbol the loader copies from a library is "defined" in its .dynsym, but the
  // loader must still find it in a library. Libraries are never read for these (the hot path).
  std::optional<Range> rela, rel;
  std::uint64_t verneednum = 0, verdefnum = 0;
  std::optional<std::uint64_t> symcount;  // when known exactly without a hash table
};

// A symbol's version index (.gnu.version) -> the version's name and, for a needed version, its file.
struct VersionIndex {
  std::map<std::uint16_t, std::pair<std::string, std::string>> needs;  // index -> (version, file)
  std::map<std::uint16_t, std::string> definitions;                    // index -> version
  // Sets s.version (and version_hidden or version_file) from its raw .gnu.version value.
  void apply(std::uint16_t versym, Symbol& s) const;
};

}  // namespace wheelcheck::elf::detail

namespace wheelcheck::elf {

// The scanner's state: what it has captured, what it wants next, and the parse over the captures.
struct ElfScanner::Impl {
  using Range = detail::Range;
  using Header = detail::Header;
  using Segment = detail::Segment;
  using Section = detail::Section;
  using Layout = detail::Layout;
  using DynamicEntries = detail::DynamicEntries;

  std::uint64_t file_size;
  ReaderLimits limits;
  int pass = 1;
  std::uint64_t pos = 0;
  std::vector<detail::Capture> captures;  // sorted by begin within a pass; earlier passes' captures are kept
  std::vector<Range> next_wishes;

  // What the header tells, once known (parsed from captures as they complete).
  bool header_known = false;
  Class cls = Class::Elf64;
  Endian endian = Endian::Little;
  bool planned_from_phdrs = false;

  Impl(std::uint64_t size, ReaderLimits l) : file_size(size), limits(l) {}

  // Captures (scanner.cpp).
  bool have(std::uint64_t off, std::uint64_t len) const;
  // The captured bytes [off, off + len); throws NeedBytes when they have not been captured.
  // The captured bytes [off, off + len); throws Error(BadInput) naming `what` when they lie outside the file,
  // NeedBytes when this pass did not capture them.
  std::span<const std::byte> view(std::uint64_t off, std::uint64_t len, const char* what = "a table") const;
  void want(std::uint64_t off, std::uint64_t len);
  void want_range(const std::optional<Range>& r);
  void feed(const std::byte* data, std::size_t size);
  void skip_to(std::uint64_t offset);
  std::optional<std::pair<std::uint64_t, std::uint64_t>> next_wanted() const;
  bool satisfied() const;
  bool plan();  // false while the plan waits for bytes or the layout does not parse (parse() says why)
  void plan_unchecked();
  Binary parse();
  std::optional<Binary> finish_pass();

  // The ELF header, program headers and section headers (header.cpp).
  std::uint64_t ehdr_size() const { return cls == Class::Elf64 ? 64 : 52; }
  void parse_ident();
  Header header();
  Binary identify(const Header& h);
  std::vector<Segment> segments(const Header& h);
  std::vector<Section> sections(const Header& h);
  std::string interpreter(const Segment& s);

  // The dynamic section (dynamic.cpp).
  std::uint64_t dyn_entry_size() const { return cls == Class::Elf64 ? 16 : 8; }
  DynamicEntries dynamic_entries(const Segment& dyn);
  Layout layout(const Header& h, const std::vector<Segment>& segs, const std::vector<Section>& secs,
                const DynamicEntries& dyn);
  void check_no_overlap(const Layout& L) const;
  void read_dynamic(const DynamicEntries& entries, std::span<const std::byte> strtab, Binary& bin);
  void mark_copy_relocations(const Layout& L, std::uint16_t machine, Binary& bin);

  // .dynsym and the hash tables (symbols.cpp).
  std::uint64_t sym_entry_size() const { return cls == Class::Elf64 ? 24 : 16; }
  std::uint64_t symbol_count(const Layout& L);
  void read_symbols(const Layout& L, std::span<const std::byte> strtab, const detail::VersionIndex& versions,
                    Binary& bin);

  // .gnu.version_r and .gnu.version_d (versions.cpp).
  void read_version_needs(const Layout& L, std::span<const std::byte> strtab, Binary& bin, detail::VersionIndex& index);
  void read_version_definitions(const Layout& L, std::span<const std::byte> strtab, Binary& bin,
                                detail::VersionIndex& index);

  // Note segments and sections (notes.cpp).
  std::optional<int> x86_isa_level(const Segment& s);
  std::optional<int> x86_isa_level(const std::vector<Section>& secs);
  std::optional<AbiTag> abi_tag(const Segment& s);
  std::optional<AbiTag> abi_tag(const std::vector<Section>& secs);

  // The section table for a SectionReader (sections.cpp): .shstrtab's window on the first pass, then the
  // headers with their names (and whether they could be read), handed to the reader once the read is done.
  SectionReader* section_reader = nullptr;
  bool random_access = false;  // fed only what next_wanted() asks for (read_elf_random)
  std::optional<std::pair<std::vector<SectionHeader>, bool>> section_table;
  void want_section_names(const Header& h);
  void read_section_table(const Header& h, const std::vector<Section>& secs);
};

}  // namespace wheelcheck::elf
