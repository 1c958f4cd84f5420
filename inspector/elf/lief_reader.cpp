// The LIEF reader: the slow reference for the fast streaming scanner (scanner.cpp).
//
// It hands the whole file, copied into memory (LIEF copies it once more), to LIEF 0.9 and translates
// LIEF's parsed objects into wheelcheck's model. It is used by `--elf-reader lief` and by the
// differential test, which compares its Binary with the fast reader's through operator==, so every field
// follows the fast reader's semantics exactly (documented in wheelcheck/elf.hpp). Being a reference, it
// takes everything LIEF exposes from LIEF's objects: header, segments, sections, dynamic entries, dynamic
// symbols, the raw .gnu.version values (hidden bit included), .gnu.version_r (vna_other included) and
// .gnu.version_d (vd_flags, vd_hash included). Only the GNU property note is read from the raw bytes, at
// the offsets LIEF reports, because LIEF 0.9 does not decode NT_GNU_PROPERTY_TYPE_0.
//
// LIEF 0.9 never reports a failure: Parser::init() catches every exception (a bad e_ident, a bad_alloc
// on a 1.2 GB library) and returns whatever it had parsed so far, and each table's parser gives up
// silently on a bad address. So this reader checks that LIEF's objects are complete (the header, every
// program and section header, as many dynamic symbols as the table holds, a version for each of them)
// and turns a shortfall into bad_input rather than a quietly different answer.
//
// Where LIEF 0.9 and the fast reader can part ways (only for unusual or damaged files):
// - Symbol count: with section headers, we ask for DYNSYM_COUNT_METHODS::COUNT_SECTION, the size of the
//   SHT_DYNSYM section, which is what readelf shows and what the scanner uses. COUNT_AUTO is not used:
//   it starts from the highest symbol index a relocation names and takes the section or hash count only
//   when that is larger by less than 3000, so it can drop symbols. A file without an SHT_DYNSYM section
//   (section headers stripped) is parsed again with COUNT_HASH, and the count is checked against LIEF's
//   parsed hash table the way the scanner counts (DT_MIPS_SYMTABNO, else DT_HASH nchain, else the end of
//   the last GNU hash chain). LIEF 0.9's COUNT_HASH returns 0 whenever DT_HASH is present (it reads nchain
//   only when it *cannot* read it), so such a file, e.g. a section-stripped glibc, is refused here while
//   the scanner reads it.
// - LIEF parses the dynamic section of the first PT_DYNAMIC segment (the scanner takes the last), reads at
//   most 1000 entries, and reads dynamic symbols only when DT_SYMENT is present (refused here: count).
// - LIEF drops a .gnu.version_r entry whose vn_cnt or vn_aux is 0 (the scanner keeps it, without aux);
//   it stops reading .dynsym at a symbol whose non-zero st_name names an empty string (refused: count).
// - LIEF does not bound strings by DT_STRSZ nor tables by their section, and reads section headers with
//   its own sizeof(Elf_Shdr) whatever e_shentsize says; it tolerates some files the scanner rejects.

#include <cstddef>
#include <cstdint>
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

namespace wheelcheck::elf {

namespace {

namespace L = LIEF::ELF;

constexpr std::uint64_t k_pt_note = 4;
constexpr std::uint64_t k_pt_gnu_property = 0x6474e553;  // not in LIEF 0.9's SEGMENT_TYPES

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

// The bytes of [offset, offset + size) of the file, as the scanner views them: a range outside the file
// is malformed input.
std::span<const std::byte> file_range(const std::vector<std::uint8_t>& bytes, std::uint64_t offset,
                                      std::uint64_t size) {
  if (size > bytes.size() || offset > bytes.size() - size) {
    throw bad_input("a note at offset " + std::to_string(offset) + " (" + std::to_string(size) +
                    " bytes) lies outside the file (" + std::to_string(bytes.size()) + " bytes)");
  }
  return std::as_bytes(std::span<const std::uint8_t>(bytes)).subspan(offset, size);
}

bool has_dynsym_section(const L::Binary& lief) {
  for (const L::Section& s : lief.sections()) {
    if (s.type() == L::ELF_SECTION_TYPES::SHT_DYNSYM) return true;
  }
  return false;
}

std::unique_ptr<L::Binary> parse(const std::vector<std::uint8_t>& bytes, const std::string& name) {
  std::unique_ptr<L::Binary> lief = L::Parser::parse(bytes, name, L::DYNSYM_COUNT_METHODS::COUNT_SECTION);
  if (lief == nullptr) throw bad_input("not an ELF file LIEF can parse");
  // Without an SHT_DYNSYM section, COUNT_SECTION finds no symbols: count them from the hash table instead.
  if (lief->has(L::DYNAMIC_TAGS::DT_SYMTAB) && !has_dynsym_section(*lief)) {
    lief = L::Parser::parse(bytes, name, L::DYNSYM_COUNT_METHODS::COUNT_HASH);
    if (lief == nullptr) throw bad_input("not an ELF file LIEF can parse");
  }
  return lief;
}

std::optional<int> x86_isa_level(const L::Binary& lief, const std::vector<std::uint8_t>& bytes, Endian endian,
                                 Class cls) {
  // The first note segment, in program header order, that names a level wins.
  for (const L::Segment& s : lief.segments()) {
    const auto type = raw(s.type());
    if (type != k_pt_note && type != k_pt_gnu_property) continue;
    if (auto level = detail::x86_isa_level_from_notes(file_range(bytes, s.file_offset(), s.physical_size()),
                                                      endian, cls)) {
      return level;
    }
  }
  // A file without program header notes may still carry the section; as in the scanner, the last
  // SHT_NOTE section that names a level wins, and a section outside the file is skipped.
  std::optional<int> level;
  for (const L::Section& s : lief.sections()) {
    if (s.type() != L::ELF_SECTION_TYPES::SHT_NOTE) continue;
    const std::uint64_t offset = s.file_offset();
    const std::uint64_t size = s.size();
    if (size > bytes.size() || offset > bytes.size() - size) continue;
    if (auto l = detail::x86_isa_level_from_notes(file_range(bytes, offset, size), endian, cls)) level = l;
  }
  return level;
}

void read_dynamic(const L::Binary& lief, Binary& bin) {
  for (const L::DynamicEntry& e : lief.dynamic_entries()) {
    // LIEF keeps every entry of the segment, the DT_NULL terminator and the padding after it included.
    if (e.tag() == L::DYNAMIC_TAGS::DT_NULL) break;
    switch (e.tag()) {
      case L::DYNAMIC_TAGS::DT_NEEDED:
        if (const auto* lib = dynamic_cast<const L::DynamicEntryLibrary*>(&e)) bin.needed.push_back(lib->name());
        break;
      case L::DYNAMIC_TAGS::DT_SONAME:
        if (const auto* so = dynamic_cast<const L::DynamicSharedObject*>(&e)) bin.soname = so->name();
        break;
      case L::DYNAMIC_TAGS::DT_RPATH:
        if (const auto* rp = dynamic_cast<const L::DynamicEntryRpath*>(&e)) {
          for (auto& p : detail::split_path_list(rp->rpath())) bin.rpath.push_back(std::move(p));
        }
        break;
      case L::DYNAMIC_TAGS::DT_RUNPATH:
        if (const auto* rp = dynamic_cast<const L::DynamicEntryRunPath*>(&e)) {
          for (auto& p : detail::split_path_list(rp->runpath())) bin.runpath.push_back(std::move(p));
        }
        break;
      case L::DYNAMIC_TAGS::DT_FLAGS: bin.flags = e.value(); break;
      case L::DYNAMIC_TAGS::DT_FLAGS_1: bin.flags_1 = e.value(); break;
      default: break;
    }
  }
}

Binding to_binding(std::uint8_t info) {
  const auto bind = static_cast<std::uint8_t>(info >> 4);
  return (bind <= 2 || bind == 10) ? static_cast<Binding>(bind) : Binding::Other;
}

SymbolType to_type(std::uint8_t info) {
  const auto type = static_cast<std::uint8_t>(info & 15);
  return (type <= 6 || type == 10) ? static_cast<SymbolType>(type) : SymbolType::Other;
}

void read_versions_and_symbols(const L::Binary& lief, Binary& bin) {
  // .gnu.version_r, and the version index -> (name, file) map its vna_other values define.
  std::map<std::uint16_t, std::pair<std::string, std::string>> need_index;
  for (const L::SymbolVersionRequirement& req : lief.symbols_version_requirement()) {
    VersionNeed need;
    need.file = req.name();
    for (const L::SymbolVersionAuxRequirement& aux : req.auxiliary_symbols()) {
      VersionNeedAux a;
      a.name = aux.name();
      a.hash = aux.hash();
      a.flags = aux.flags();
      a.other = aux.other();
      need_index[a.other] = {a.name, need.file};
      need.versions.push_back(std::move(a));
    }
    bin.version_needs.push_back(std::move(need));
  }
  // .gnu.version_d, and the vd_ndx -> name map. LIEF's own link from a symbol's version to a definition
  // points at the definition's *last* auxiliary name (a parent, if any), so versions are resolved here.
  std::map<std::uint16_t, std::string> def_index;
  for (const L::SymbolVersionDefinition& d : lief.symbols_version_definition()) {
    VersionDefinition def;
    def.index = d.ndx();
    def.flags = d.flags();
    def.hash = d.hash();
    bool first = true;
    for (const L::SymbolVersionAux& aux : d.symbols_aux()) {
      if (first) def.name = aux.name();
      else def.parents.push_back(aux.name());
      first = false;
    }
    def_index[def.index] = def.name;
    bin.version_definitions.push_back(std::move(def));
  }
  // .dynsym without its null entry, each with its raw .gnu.version value (hidden bit included).
  bool null_entry = true;
  for (const L::Symbol& ls : lief.dynamic_symbols()) {
    if (null_entry) {
      null_entry = false;
      continue;
    }
    Symbol s;
    s.name = ls.name();
    s.binding = to_binding(ls.information());
    s.type = to_type(ls.information());
    s.visibility = static_cast<Visibility>(ls.other() & 3);
    s.defined = ls.shndx() != 0;
    s.value = ls.value();
    s.size = ls.size();
    if (ls.has_version()) {
      const std::uint16_t v = ls.symbol_version().value();
      const auto idx = static_cast<std::uint16_t>(v & 0x7fff);
      if (idx >= 2) {
        if (auto d = def_index.find(idx); d != def_index.end()) {
          s.version = d->second;
          s.version_hidden = (v & 0x8000) != 0;
        } else if (auto n = need_index.find(idx); n != need_index.end()) {
          s.version = n->second.first;
          s.version_file = n->second.second;
        }
      }
    }
    bin.symbols.push_back(std::move(s));
  }
}

Binary translate(const L::Binary& lief, const std::vector<std::uint8_t>& bytes) {
  const L::Header& h = lief.header();
  Binary bin;
  const auto cls = raw(h.identity_class());
  const auto data = raw(h.identity_data());
  if (cls != 1 && cls != 2) throw bad_input("unknown class " + std::to_string(cls) + " in e_ident");
  if (data != 1 && data != 2) throw bad_input("unknown data encoding " + std::to_string(data) + " in e_ident");
  bin.elf_class = static_cast<Class>(cls);
  bin.endian = static_cast<Endian>(data);
  bin.os_abi = h.identity()[static_cast<std::size_t>(L::IDENTITY::EI_OSABI)];
  bin.type = static_cast<std::uint16_t>(raw(h.file_type()));
  bin.machine = static_cast<std::uint16_t>(raw(h.machine_type()));
  bin.e_flags = h.processor_flag();
  if (lief.has_interpreter()) bin.interpreter = lief.interpreter();
  bin.x86_isa_level = x86_isa_level(lief, bytes, bin.endian, bin.elf_class);
  bin.has_dynamic = lief.has(L::SEGMENT_TYPES::PT_DYNAMIC);
  if (!bin.has_dynamic) return bin;
  read_dynamic(lief, bin);
  read_versions_and_symbols(lief, bin);
  return bin;
}

}  // namespace

Binary read_elf_lief(const std::vector<std::uint8_t>& bytes, const std::string& name) {
  const auto fail = [&name](const std::string& what) { return bad_input("LIEF: " + name + ": " + what); };
  if (!has_elf_magic(bytes.data(), bytes.size())) throw fail("not an ELF file (no \\x7fELF magic)");
  silence_lief();
  try {
    const auto lief = parse(bytes, name);
    return translate(*lief, bytes);
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
