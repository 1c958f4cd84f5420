// The LIEF reader: the slow reference for the fast streaming scanner (scanner.cpp), used by
// `--elf-reader lief` and by the differential test, which compares the two readers' Binary with
// operator==. It copies the whole file into memory (and LIEF copies it twice more), hands it to LIEF 0.9
// and translates LIEF's parsed objects, following the scanner's semantics (wheelcheck/elf.hpp) exactly.
// Being a reference, it takes from LIEF everything LIEF exposes: header, segments, sections, dynamic
// entries, dynamic symbols, the raw .gnu.version values, .gnu.version_r and .gnu.version_d. Only the GNU
// property note is read from the raw bytes, at the offsets LIEF reports: LIEF 0.9 does not decode it.
//
// LIEF 0.9 never reports a failure: Parser::init() catches every exception and returns whatever it had
// parsed so far, and each table's parser gives up silently on a bad address. So this reader checks that
// LIEF's objects are complete and turns a shortfall into bad_input rather than a quietly different answer.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <LIEF/ELF.hpp>
#include <LIEF/logging.hpp>

#include "inspector/elf/detail.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"

// Where LIEF 0.9 and the scanner part ways (only unusual or damaged files), and what this reader does:
// - Symbol count: with section headers we ask for DYNSYM_COUNT_METHODS::COUNT_SECTION, the size of the
//   SHT_DYNSYM section, which is what readelf shows and what the scanner uses. COUNT_AUTO, LIEF's default,
//   starts from the highest symbol index a relocation names and takes the section or hash count only when
//   it is larger by less than 3000, so it can drop symbols. A file without an SHT_DYNSYM section (section
//   headers stripped) is parsed again with COUNT_HASH, then COUNT_AUTO, and a count is accepted only when
//   LIEF's parsed hash table confirms it the way the scanner counts (DT_MIPS_SYMTABNO, else DT_HASH
//   nchain, else the end of the last GNU hash chain). LIEF 0.9's COUNT_HASH returns 0 whenever DT_HASH is
//   present (it reads nchain only when it *cannot* read it), so a section-stripped file with DT_HASH, such
//   as glibc, is refused unless its relocations happen to name the last symbol; the scanner reads it.
// - LIEF reads no dynamic symbols without DT_SYMENT and stops at a symbol whose non-zero st_name names an
//   empty string: refused, by the count check.
// - LIEF parses the first PT_DYNAMIC segment (the scanner the last; refused when they differ) and at most
//   1000 dynamic entries (refused when no DT_NULL comes within them).
// - LIEF drops a .gnu.version_r entry whose vn_cnt or vn_aux is 0; the scanner keeps it, without aux.
// - LIEF bounds no string by DT_STRSZ, no table by its section, and reads section headers with its own
//   sizeof(Elf_Shdr) whatever e_shentsize says: it accepts some damaged files the scanner rejects.
// - The scanner considers an SHT_NOTE section only when it happened to capture its bytes (in practice, the
//   speculative prefix); this reader reads any inside the file. It matters only for a file whose note
//   segments name no ISA level.

namespace wheelcheck::elf {

namespace {

namespace L = LIEF::ELF;

// PT_GNU_PROPERTY is not in LIEF 0.9's SEGMENT_TYPES: segment types are compared as numbers.
using detail::PT_DYNAMIC;
using detail::PT_GNU_PROPERTY;
using detail::PT_GNU_STACK;
using detail::PT_INTERP;
using detail::PT_NOTE;

// LIEF 0.9 catches its own exceptions and returns what it had parsed; one seen in practice is a
// std::bad_alloc from its data handler for any section (under 100 MB) that ends beyond 1 GiB into the file.
constexpr const char* k_silent_stop =
    ": LIEF 0.9 stopped at an error it does not report (such as a section ending beyond 1 GiB into the file)";

// LIEF 0.9 logs through easylogging++ to stderr; wheelcheck's output must stay clean.
void silence_lief() {
  static const bool once = [] {
    LIEF::Logger::disable();
    return true;
  }();
  (void)once;
}

template <typename E>
std::uint64_t raw(E e) {
  return static_cast<std::uint64_t>(e);
}

bool in_file(const std::vector<std::uint8_t>& bytes, std::uint64_t offset, std::uint64_t size) {
  return size <= bytes.size() && offset <= bytes.size() - size;
}

// A range outside the file is malformed input, as in the scanner (LIEF would read what it can of it).
void require_in_file(const std::vector<std::uint8_t>& bytes, std::uint64_t offset, std::uint64_t size,
                     const char* what) {
  if (!in_file(bytes, offset, size)) {
    throw bad_input(std::string(what) + " at offset " + std::to_string(offset) + " (" + std::to_string(size) +
                    " bytes) lies outside the file (" + std::to_string(bytes.size()) + " bytes)");
  }
}

// The bytes of [offset, offset + size) of the file.
std::span<const std::byte> file_range(const std::vector<std::uint8_t>& bytes, std::uint64_t offset, std::uint64_t size,
                                      const char* what) {
  require_in_file(bytes, offset, size, what);
  return std::as_bytes(std::span<const std::uint8_t>(bytes)).subspan(offset, size);
}

// e_ident, checked before LIEF sees the file: LIEF 0.9 swallows these errors and returns an empty Binary.
void check_ident(const std::vector<std::uint8_t>& bytes) {
  if (!has_elf_magic(bytes.data(), bytes.size())) throw bad_input("not an ELF file (no \\x7fELF magic)");
  if (bytes.size() < 16) throw bad_input("file of " + std::to_string(bytes.size()) + " bytes is too short");
  const unsigned cls = bytes[4];
  const unsigned data = bytes[5];
  if (cls != 1 && cls != 2) throw bad_input("unknown class " + std::to_string(cls) + " in e_ident");
  if (data != 1 && data != 2) throw bad_input("unknown data encoding " + std::to_string(data) + " in e_ident");
  const std::size_t ehdr = cls == 2 ? 64 : 52;
  if (bytes.size() < ehdr) {
    throw bad_input("file of " + std::to_string(bytes.size()) + " bytes is too short for its ELF header");
  }
}

// The dynamic entries as the loader sees them: up to the first DT_NULL (LIEF keeps the padding after it).
std::vector<const L::DynamicEntry*> dynamic_entries(const L::Binary& lief) {
  std::vector<const L::DynamicEntry*> out;
  for (const L::DynamicEntry& e : lief.dynamic_entries()) {
    if (e.tag() == L::DYNAMIC_TAGS::DT_NULL) break;
    out.push_back(&e);
  }
  return out;
}

// LIEF reads every entry of the first PT_DYNAMIC segment, DT_NULL and padding included, at most 1000;
// an exception on the way (a name outside the file) silently drops the rest.
void check_dynamic_complete(const L::Binary& lief) {
  const L::Segment* dynamic = nullptr;
  for (const L::Segment& s : lief.segments()) {
    if (raw(s.type()) != PT_DYNAMIC) continue;
    if (dynamic == nullptr) {
      dynamic = &s;
    } else if (s.file_offset() != dynamic->file_offset() || s.physical_size() != dynamic->physical_size()) {
      throw bad_input("several PT_DYNAMIC segments: LIEF reads the first, the loader the last");
    }
  }
  if (dynamic == nullptr) return;
  const std::uint64_t entry_size = lief.type() == L::ELF_CLASS::ELFCLASS64 ? 16 : 8;
  const std::uint64_t in_segment = dynamic->physical_size() / entry_size;
  const std::uint64_t parsed = lief.dynamic_entries().size();
  const bool complete = in_segment <= L::Parser::NB_MAX_DYNAMIC_ENTRIES
                            ? parsed == in_segment
                            : parsed == L::Parser::NB_MAX_DYNAMIC_ENTRIES &&
                                  dynamic_entries(lief).size() < L::Parser::NB_MAX_DYNAMIC_ENTRIES;
  if (!complete) {
    throw bad_input("LIEF parsed " + std::to_string(parsed) + " of " + std::to_string(in_segment) + " dynamic entries" +
                    (in_segment > L::Parser::NB_MAX_DYNAMIC_ENTRIES ? ": LIEF 0.9 reads at most 1000" : k_silent_stop));
  }
}

const L::DynamicEntry* find_tag(const std::vector<const L::DynamicEntry*>& entries, L::DYNAMIC_TAGS tag) {
  for (const auto* e : entries) {
    if (e->tag() == tag) return e;
  }
  return nullptr;
}

// The section headers the scanner would use: none when the table does not lie inside the file.
std::vector<const L::Section*> usable_sections(const L::Binary& lief, const std::vector<std::uint8_t>& bytes) {
  const L::Header& h = lief.header();
  std::vector<const L::Section*> out;
  if (h.section_headers_offset() == 0 || h.numberof_sections() == 0) return out;
  const std::uint64_t table = std::uint64_t{h.numberof_sections()} * h.section_header_size();
  if (!in_file(bytes, h.section_headers_offset(), table)) return out;
  for (const L::Section& s : lief.sections()) out.push_back(&s);
  if (out.size() != h.numberof_sections()) {
    throw bad_input("LIEF parsed " + std::to_string(out.size()) + " of " + std::to_string(h.numberof_sections()) +
                    " section headers" + k_silent_stop);
  }
  return out;
}

bool has_dynsym_section(const L::Binary& lief) {
  for (const L::Section& s : lief.sections()) {
    if (s.type() == L::ELF_SECTION_TYPES::SHT_DYNSYM) return true;
  }
  return false;
}

// Checks that LIEF got past the header and the program headers: an exception there (which LIEF swallows)
// ends its parse, leaving every later table empty.
void check_headers(const L::Binary& lief, const std::vector<std::uint8_t>& bytes) {
  const L::Header& h = lief.header();
  const auto& id = h.identity();
  for (std::size_t i = 0; i < id.size(); ++i) {
    if (id[i] != bytes[i]) throw bad_input("LIEF did not parse the ELF header");
  }
  if (h.program_headers_offset() == 0) return;
  const auto count = lief.segments().size();
  if (count != h.numberof_segments()) {
    throw bad_input("LIEF parsed " + std::to_string(count) + " of " + std::to_string(h.numberof_segments()) +
                    " program headers" + k_silent_stop);
  }
}

// The number of .dynsym entries (the null entry included) the scanner reads, from LIEF's parsed objects;
// nullopt when they do not tell.
std::optional<std::uint64_t> expected_symbol_count(const L::Binary& lief,
                                                   const std::vector<const L::DynamicEntry*>& entries,
                                                   const std::vector<const L::Section*>& sections, Class cls) {
  if (find_tag(entries, L::DYNAMIC_TAGS::DT_SYMTAB) == nullptr) return 0;
  const std::uint64_t entry_size = cls == Class::Elf64 ? 24 : 16;
  for (const auto* s : sections) {
    if (s->type() == L::ELF_SECTION_TYPES::SHT_DYNSYM) return s->size() / entry_size;
  }
  if (const auto* e = find_tag(entries, L::DYNAMIC_TAGS::DT_MIPS_SYMTABNO)) return e->value();
  if (find_tag(entries, L::DYNAMIC_TAGS::DT_HASH) != nullptr) {
    // LIEF's DT_HASH count is broken in 0.9 (see the top of this file); its parsed table is not.
    if (!lief.use_sysv_hash()) return std::nullopt;
    return lief.sysv_hash().nchain();
  }
  if (find_tag(entries, L::DYNAMIC_TAGS::DT_GNU_HASH) != nullptr && lief.use_gnu_hash()) {
    // The end of the chain of the highest bucket; LIEF read hash values for the symbols it counted.
    const L::GnuHash& gnu = lief.gnu_hash();
    std::uint64_t top = 0;
    for (const auto b : gnu.buckets()) top = std::max<std::uint64_t>(top, b);
    if (top == 0) return gnu.symbol_index();
    const auto& values = gnu.hash_values();
    for (std::uint64_t idx = top; idx >= gnu.symbol_index() && idx - gnu.symbol_index() < values.size(); ++idx) {
      if ((values[idx - gnu.symbol_index()] & 1U) != 0) return idx + 1;
    }
  }
  return std::nullopt;
}

std::unique_ptr<L::Binary> parse(const std::vector<std::uint8_t>& bytes, const std::string& name,
                                 L::DYNSYM_COUNT_METHODS method) {
  std::unique_ptr<L::Binary> lief = L::Parser::parse(bytes, name, method);
  if (lief == nullptr) throw bad_input("LIEF does not recognise the file as ELF");
  check_headers(*lief, bytes);
  return lief;
}

std::unique_ptr<L::Binary> parse(const std::vector<std::uint8_t>& bytes, const std::string& name) {
  auto lief = parse(bytes, name, L::DYNSYM_COUNT_METHODS::COUNT_SECTION);
  if (find_tag(dynamic_entries(*lief), L::DYNAMIC_TAGS::DT_SYMTAB) == nullptr || has_dynsym_section(*lief)) {
    return lief;
  }
  // Without an SHT_DYNSYM section, COUNT_SECTION finds no symbols. Try LIEF's other counts and keep the
  // first one its own hash table confirms (COUNT_HASH fails with DT_HASH, where COUNT_AUTO, the highest
  // relocated symbol, may happen to be right); read_symbols() refuses an unconfirmed count.
  const std::vector<const L::Section*> no_sections;
  const Class cls = static_cast<Class>(raw(lief->header().identity_class()));
  for (const auto method : {L::DYNSYM_COUNT_METHODS::COUNT_HASH, L::DYNSYM_COUNT_METHODS::COUNT_AUTO}) {
    lief = parse(bytes, name, method);
    const auto expected = expected_symbol_count(*lief, dynamic_entries(*lief), no_sections, cls);
    if (expected && *expected == lief->dynamic_symbols().size()) break;
  }
  return lief;
}

std::optional<int> x86_isa_level(const L::Binary& lief, const std::vector<const L::Section*>& sections,
                                 const std::vector<std::uint8_t>& bytes, Endian endian, Class cls) {
  // The first note segment, in program header order, that names a level wins.
  for (const L::Segment& s : lief.segments()) {
    const auto type = raw(s.type());
    if (type != PT_NOTE && type != PT_GNU_PROPERTY) continue;
    const auto notes = file_range(bytes, s.file_offset(), s.physical_size(), "a note segment");
    if (auto level = detail::x86_isa_level_from_notes(notes, endian, cls)) return level;
  }
  // A file without program header notes may still carry the section; as in the scanner, the last
  // SHT_NOTE section that names a level wins, and a section outside the file is skipped.
  std::optional<int> level;
  for (const auto* s : sections) {
    if (s->type() != L::ELF_SECTION_TYPES::SHT_NOTE || !in_file(bytes, s->file_offset(), s->size())) continue;
    const auto notes = file_range(bytes, s->file_offset(), s->size(), "a note section");
    if (auto l = detail::x86_isa_level_from_notes(notes, endian, cls)) level = l;
  }
  return level;
}

// The ABI tag as the scanner finds it: the first PT_NOTE segment that holds one; in a file without note
// segments, the first SHT_NOTE section that does.
std::optional<AbiTag> abi_tag(const L::Binary& lief, const std::vector<const L::Section*>& sections,
                              const std::vector<std::uint8_t>& bytes, Endian endian, Class cls) {
  bool note_segments = false;
  for (const L::Segment& s : lief.segments()) {
    const auto type = raw(s.type());
    if (type == PT_GNU_PROPERTY) note_segments = true;
    if (type != PT_NOTE) continue;
    note_segments = true;
    const auto notes = file_range(bytes, s.file_offset(), s.physical_size(), "a note segment");
    if (auto tag = detail::abi_tag_from_notes(notes, endian, cls)) return tag;
  }
  if (note_segments) return std::nullopt;
  for (const auto* s : sections) {
    if (s->type() != L::ELF_SECTION_TYPES::SHT_NOTE || !in_file(bytes, s->file_offset(), s->size())) continue;
    const auto notes = file_range(bytes, s->file_offset(), s->size(), "a note section");
    if (auto tag = detail::abi_tag_from_notes(notes, endian, cls)) return tag;
  }
  return std::nullopt;
}

void read_dynamic(const std::vector<const L::DynamicEntry*>& entries, Binary& bin) {
  for (const auto* e : entries) {
    switch (e->tag()) {
      case L::DYNAMIC_TAGS::DT_NEEDED:
        if (const auto* lib = dynamic_cast<const L::DynamicEntryLibrary*>(e)) bin.needed.push_back(lib->name());
        break;
      case L::DYNAMIC_TAGS::DT_SONAME:
        if (const auto* so = dynamic_cast<const L::DynamicSharedObject*>(e)) bin.soname = so->name();
        break;
      case L::DYNAMIC_TAGS::DT_RPATH:
        if (const auto* rp = dynamic_cast<const L::DynamicEntryRpath*>(e)) {
          for (auto& p : detail::split_path_list(rp->rpath())) bin.rpath.push_back(std::move(p));
        }
        break;
      case L::DYNAMIC_TAGS::DT_RUNPATH:
        if (const auto* rp = dynamic_cast<const L::DynamicEntryRunPath*>(e)) {
          for (auto& p : detail::split_path_list(rp->runpath())) bin.runpath.push_back(std::move(p));
        }
        break;
      case L::DYNAMIC_TAGS::DT_FLAGS: bin.flags = e->value(); break;
      case L::DYNAMIC_TAGS::DT_FLAGS_1: bin.flags_1 = e->value(); break;
      default: break;
    }
  }
}

void read_versions(const L::Binary& lief, const std::vector<const L::DynamicEntry*>& entries, Binary& bin) {
  for (const L::SymbolVersionRequirement& req : lief.symbols_version_requirement()) {
    VersionNeed need;
    need.file = req.name();
    for (const L::SymbolVersionAuxRequirement& aux : req.auxiliary_symbols()) {
      VersionNeedAux a;
      a.name = aux.name();
      a.hash = aux.hash();
      a.flags = aux.flags();
      a.other = aux.other();
      need.versions.push_back(std::move(a));
    }
    bin.version_needs.push_back(std::move(need));
  }
  for (const L::SymbolVersionDefinition& d : lief.symbols_version_definition()) {
    VersionDefinition def;
    def.index = d.ndx();
    def.flags = d.flags();
    def.hash = d.hash();
    bool first = true;
    for (const L::SymbolVersionAux& aux : d.symbols_aux()) {
      if (first)
        def.name = aux.name();
      else
        def.parents.push_back(aux.name());
      first = false;
    }
    bin.version_definitions.push_back(std::move(def));
  }
  // LIEF skips a table whose address it cannot map to the file; the scanner would have refused the file.
  const auto* verneednum = find_tag(entries, L::DYNAMIC_TAGS::DT_VERNEEDNUM);
  if (find_tag(entries, L::DYNAMIC_TAGS::DT_VERNEED) != nullptr && verneednum != nullptr && verneednum->value() != 0 &&
      bin.version_needs.empty()) {
    throw bad_input("LIEF did not read .gnu.version_r");
  }
  const auto* verdefnum = find_tag(entries, L::DYNAMIC_TAGS::DT_VERDEFNUM);
  if (find_tag(entries, L::DYNAMIC_TAGS::DT_VERDEF) != nullptr && verdefnum != nullptr && verdefnum->value() != 0 &&
      bin.version_definitions.empty()) {
    throw bad_input("LIEF did not read .gnu.version_d");
  }
}

void read_symbols(const L::Binary& lief, const std::vector<const L::DynamicEntry*>& entries,
                  const std::vector<const L::Section*>& sections, Binary& bin) {
  const auto count = lief.dynamic_symbols().size();
  const auto expected = expected_symbol_count(lief, entries, sections, bin.elf_class);
  if (!expected) {
    throw bad_input("LIEF read " + std::to_string(count) +
                    " dynamic symbols from a file without section headers, and its hash table does not confirm it");
  }
  if (count != *expected) {
    throw bad_input("LIEF read " + std::to_string(count) + " of " + std::to_string(*expected) +
                    " dynamic symbols (LIEF 0.9 reads none without DT_SYMENT, stops at an empty name, and "
                    "miscounts by DT_HASH without section headers)");
  }
  // Version index -> name (and file), later entries overriding earlier ones, as in the scanner. LIEF's own
  // link from a symbol's version to a definition points at the definition's *last* auxiliary name (a
  // parent, if any), so versions are resolved here from the raw .gnu.version value LIEF keeps.
  detail::VersionIndex versions;
  for (const auto& need : bin.version_needs) {
    for (const auto& a : need.versions) versions.needs[a.other] = {a.name, need.file};
  }
  for (const auto& def : bin.version_definitions) versions.definitions[def.index] = def.name;
  const bool versioned = find_tag(entries, L::DYNAMIC_TAGS::DT_VERSYM) != nullptr;
  bool null_entry = true;
  for (const L::Symbol& ls : lief.dynamic_symbols()) {
    if (null_entry) {  // index 0, STN_UNDEF
      null_entry = false;
      continue;
    }
    Symbol s;
    s.name = ls.name();
    s.binding = detail::binding_from_info(ls.information());
    s.type = detail::symbol_type_from_info(ls.information());
    s.visibility = static_cast<Visibility>(ls.other() & 3);
    s.defined = ls.shndx() != 0;
    s.value = ls.value();
    s.size = ls.size();
    if (versioned) {
      // LIEF links versions to symbols only when it read .gnu.version for every one of them.
      if (!ls.has_version()) throw bad_input("LIEF did not read .gnu.version");
      versions.apply(ls.symbol_version().value(), s);
    }
    bin.symbols.push_back(std::move(s));
  }
}

// A program's R_*_COPY relocations mark the symbols the loader copies from a library (as the scanner).
void mark_copy_relocations(const L::Binary& lief, Binary& bin) {
  const bool program = bin.type == FileType::Executable || (bin.flags_1 & detail::DF_1_PIE) != 0;
  const std::uint32_t copy = copy_relocation_type(bin.machine);
  if (!program || copy == 0) return;
  std::map<const L::Symbol*, std::size_t> index;
  std::size_t i = 0;
  for (const L::Symbol& s : lief.dynamic_symbols()) index[&s] = i++;
  for (const L::Relocation& r : lief.dynamic_relocations()) {
    if (r.type() != copy || !r.has_symbol()) continue;
    auto it = index.find(&r.symbol());
    if (it != index.end() && it->second >= 1 && it->second <= bin.symbols.size())
      bin.symbols[it->second - 1].copy_relocated = true;
  }
}

// The section headers as a SectionReader hears them: LIEF's names, always read.
std::vector<SectionHeader> section_headers(const std::vector<const L::Section*>& sections) {
  std::vector<SectionHeader> out;
  out.reserve(sections.size());
  for (const auto* s : sections) {
    out.push_back({s->name(), static_cast<std::uint32_t>(raw(s->type())), s->flags(), s->file_offset(), s->size()});
  }
  return out;
}

Binary translate(const L::Binary& lief, const std::vector<std::uint8_t>& bytes, SectionReader* reader) {
  const L::Header& h = lief.header();
  Binary bin;
  bin.elf_class = static_cast<Class>(raw(h.identity_class()));
  bin.endian = static_cast<Endian>(raw(h.identity_data()));
  bin.os_abi = h.identity()[static_cast<std::size_t>(L::IDENTITY::EI_OSABI)];
  bin.type = static_cast<FileType>(static_cast<std::uint16_t>(raw(h.file_type())));
  bin.machine = static_cast<std::uint16_t>(raw(h.machine_type()));
  bin.e_flags = h.processor_flag();
  for (const L::Segment& s : lief.segments()) {
    const auto type = raw(s.type());
    if (type == PT_INTERP || type == PT_DYNAMIC) {
      require_in_file(bytes, s.file_offset(), s.physical_size(), type == PT_INTERP ? "PT_INTERP" : "PT_DYNAMIC");
    }
    if (type == PT_DYNAMIC) bin.has_dynamic = true;
    if (type == PT_GNU_STACK) bin.gnu_stack = static_cast<std::uint32_t>(raw(s.flags()));  // the last, as the loader
  }
  if (lief.has_interpreter()) bin.interpreter = lief.interpreter();
  const auto sections = usable_sections(lief, bytes);
  bin.x86_isa_level = x86_isa_level(lief, sections, bytes, bin.endian, bin.elf_class);
  bin.abi_tag = abi_tag(lief, sections, bytes, bin.endian, bin.elf_class);
  if (reader != nullptr && reader->wants(bin.endian)) reader->sections(section_headers(sections), true);
  if (!bin.has_dynamic) return bin;
  check_dynamic_complete(lief);
  const auto entries = dynamic_entries(lief);
  read_dynamic(entries, bin);
  read_versions(lief, entries, bin);
  read_symbols(lief, entries, sections, bin);
  mark_copy_relocations(lief, bin);
  // Without DT_STRTAB, LIEF reads names from the .dynstr section or from offset 0 of the file; the scanner
  // has no string table to read them from.
  const bool has_strings = !bin.needed.empty() || bin.soname || !bin.rpath.empty() || !bin.runpath.empty() ||
                           !bin.symbols.empty() || !bin.version_needs.empty() || !bin.version_definitions.empty();
  if (has_strings && find_tag(entries, L::DYNAMIC_TAGS::DT_STRTAB) == nullptr) {
    throw bad_input("the dynamic section has no DT_STRTAB");
  }
  return bin;
}

}  // namespace

Binary read_elf_lief(const std::vector<std::uint8_t>& bytes, const std::string& name, SectionReader* sections) {
  const auto fail = [&name](const std::string& what) { return bad_input("LIEF: " + name + ": " + what); };
  try {
    check_ident(bytes);
    silence_lief();
    const auto lief = parse(bytes, name);
    return translate(*lief, bytes, sections);
  } catch (const Error& e) {
    throw fail(e.what());
  } catch (const LIEF::exception& e) {
    throw fail(e.what());
  } catch (const std::exception& e) {
    throw fail(e.what());
  } catch (...) {
    throw fail("unknown error");
  }
}

}  // namespace wheelcheck::elf
