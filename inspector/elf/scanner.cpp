// The fast ELF reader: reads what the dynamic loader reads, from a forward-only stream.
//
// A wheel member arrives from libzip as a stream that can only go forward, and can be hundreds of MB
// (libcublasLt.so.13 is 541 MB, libtorch_cuda 1.2 GB). Everything wheelcheck needs from it is small:
// the ELF header, the program headers, the dynamic section, and the tables the dynamic section points
// at (.dynstr, .dynsym, .gnu.version, .gnu.version_r, .gnu.version_d, a hash table), the GNU property
// note, and (at the very end) the section headers. So the scanner never holds the member: it keeps
// only byte ranges it *wants*, and learns which ones it wants as the stream goes by.
//
// The ranges, in the order a typical linker lays them out, and how each becomes known:
//   [0, ehdr)                      always wanted;
//   program headers                known from the ELF header (right after it, in practice);
//   PT_DYNAMIC, PT_INTERP, notes   known from the program headers;
//   section headers                known from the ELF header (usually the last bytes of the file);
//   .dynsym, .dynstr, versions     known only from the dynamic section's DT_* addresses, mapped to file
//                                  offsets through the PT_LOAD segments.
// The catch is the last line: the dynamic section sits in the writable segment *after* the code, while
// the tables it points at sit in the read-only segment *before* the code. So, on the first pass, the
// scanner also keeps a speculative prefix of the file (ReaderLimits::speculative_prefix, 8 MB by
// default), where every linker we know puts those tables. When the tables lie beyond the prefix (a
// library with an enormous .dynstr, or an unusual layout), the first pass still captures the section
// headers at the end; they give every table's exact extent, and a second pass captures exactly those
// ranges and stops as soon as it has them. Without section headers, the extent of a table whose size
// the dynamic section does not state runs to the next known table, so a pass or two more settle it.
//
// Parsing runs over the captured ranges through a view that throws NeedBytes for a range it lacks;
// finish_pass() turns that into the next pass's wish list. Every field read is bounds checked
// (FieldReader) and every size is checked against the file size and ReaderLimits before anything is
// allocated, so a hostile header cannot make the scanner allocate or loop without bound.

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include <fcntl.h>
#include <unistd.h>

#include "inspector/elf/detail.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"

namespace wheelcheck::elf {

namespace detail {

std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what) {
  if (a > ~std::uint64_t{0} - b) throw bad_input(std::string("ELF: ") + what + ": offset overflows");
  return a + b;
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what) {
  if (a != 0 && b > ~std::uint64_t{0} / a) throw bad_input(std::string("ELF: ") + what + ": size overflows");
  return a * b;
}

void FieldReader::check(std::uint64_t off, std::uint64_t len) const {
  if (off > m_bytes.size() || len > m_bytes.size() - off) {
    throw bad_input(std::string("ELF: ") + m_what + ": read at offset " + std::to_string(off) + " runs past its end (" +
                    std::to_string(m_bytes.size()) + " bytes)");
  }
}

std::uint8_t FieldReader::u8(std::uint64_t off) const {
  check(off, 1);
  return static_cast<std::uint8_t>(m_bytes[off]);
}

std::uint16_t FieldReader::u16(std::uint64_t off) const {
  check(off, 2);
  const auto* p = reinterpret_cast<const unsigned char*>(m_bytes.data() + off);
  return m_endian == Endian::Little ? static_cast<std::uint16_t>(p[0] | (p[1] << 8))
                                    : static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

std::uint32_t FieldReader::u32(std::uint64_t off) const {
  check(off, 4);
  const auto* p = reinterpret_cast<const unsigned char*>(m_bytes.data() + off);
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const int k = m_endian == Endian::Little ? 3 - i : i;
    v = (v << 8) | p[k];
  }
  return v;
}

std::uint64_t FieldReader::u64(std::uint64_t off) const {
  check(off, 8);
  const auto* p = reinterpret_cast<const unsigned char*>(m_bytes.data() + off);
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    const int k = m_endian == Endian::Little ? 7 - i : i;
    v = (v << 8) | p[k];
  }
  return v;
}

std::int64_t FieldReader::sword(std::uint64_t off) const {
  if (m_class == Class::Elf64) return static_cast<std::int64_t>(u64(off));
  return static_cast<std::int32_t>(u32(off));
}

std::string string_at(std::span<const std::byte> table, std::uint64_t off, const char* table_name) {
  if (off >= table.size()) {
    throw bad_input(std::string("ELF: string offset ") + std::to_string(off) + " is outside " + table_name + " (" +
                    std::to_string(table.size()) + " bytes)");
  }
  const auto* begin = reinterpret_cast<const char*>(table.data()) + off;
  const auto* end = reinterpret_cast<const char*>(table.data()) + table.size();
  const auto* nul = static_cast<const char*>(std::memchr(begin, 0, static_cast<std::size_t>(end - begin)));
  if (nul == nullptr) {
    throw bad_input(std::string("ELF: the string at offset ") + std::to_string(off) + " of " + table_name +
                    " has no terminating NUL");
  }
  return std::string(begin, nul);
}

std::vector<std::string> split_path_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto colon = s.find(':', start);
    out.push_back(s.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

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

using detail::checked_add;
using detail::checked_mul;
using detail::FieldReader;

namespace {

// ELF constants (gABI and the GNU extensions).
constexpr std::uint32_t PT_LOAD = 1, PT_DYNAMIC = 2, PT_INTERP = 3, PT_NOTE = 4, PT_GNU_PROPERTY = 0x6474e553;
constexpr std::uint32_t SHT_NOTE = 7, SHT_DYNSYM = 11, SHT_GNU_verdef = 0x6ffffffd, SHT_GNU_verneed = 0x6ffffffe,
                        SHT_GNU_versym = 0x6fffffff, SHT_NOBITS = 8;
constexpr std::int64_t DT_NULL = 0, DT_NEEDED = 1, DT_HASH = 4, DT_STRTAB = 5, DT_SYMTAB = 6, DT_STRSZ = 10,
                       DT_SYMENT = 11, DT_SONAME = 14, DT_RPATH = 15, DT_RUNPATH = 29, DT_FLAGS = 30,
                       DT_GNU_HASH = 0x6ffffef5, DT_VERSYM = 0x6ffffff0, DT_FLAGS_1 = 0x6ffffffb,
                       DT_VERDEF = 0x6ffffffc, DT_VERDEFNUM = 0x6ffffffd, DT_VERNEED = 0x6ffffffe,
                       DT_VERNEEDNUM = 0x6fffffff, DT_MIPS_SYMTABNO = 0x70000011;
// Tags whose value is an address of a table in the file: used to bound tables of unstated size.
constexpr std::int64_t k_address_tags[] = {DT_HASH,       DT_STRTAB,   DT_SYMTAB,   7 /*RELA*/, 17 /*REL*/,
                                           23 /*JMPREL*/, 12 /*INIT*/, 13 /*FINI*/, 25,         26,
                                           DT_GNU_HASH,   DT_VERSYM,   DT_VERDEF,   DT_VERNEED, 0x6ffffef6 /*TLSDESC*/};
constexpr std::uint64_t k_unknown_table_guess = 1 << 20;  // for a table bounded by nothing else

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

struct Segment {
  std::uint32_t type;
  std::uint32_t flags;
  std::uint64_t offset, vaddr, filesz, memsz;
};

struct Section {
  std::uint32_t type;
  std::uint32_t link;
  std::uint64_t offset, size, entsize, addr;
};

}  // namespace

struct ElfScanner::Impl {
  std::uint64_t file_size;
  ReaderLimits limits;
  int pass = 1;
  std::uint64_t pos = 0;
  std::vector<Capture> captures;  // sorted by begin within a pass; earlier passes' captures are kept
  std::vector<Range> next_wishes;
  std::uint64_t buffered = 0;
  std::uint64_t peak = 0;

  // What the header tells, once known (parsed from captures as they complete).
  bool header_known = false;
  Class cls = Class::Elf64;
  Endian endian = Endian::Little;
  bool planned_from_phdrs = false;
  bool planned_from_dynamic = false;

  Impl(std::uint64_t size, ReaderLimits l) : file_size(size), limits(l) {}

  // --- capture bookkeeping ------------------------------------------------------------------------
  bool have(std::uint64_t off, std::uint64_t len) const {
    const std::uint64_t end = off + len;
    for (const auto& c : captures) {
      if (c.begin <= off && end <= c.begin + c.bytes.size()) return true;
    }
    return false;
  }

  std::span<const std::byte> view(std::uint64_t off, std::uint64_t len) const {
    if (len > file_size || off > file_size - len) {
      throw bad_input("ELF: a table at offset " + std::to_string(off) + " (" + std::to_string(len) +
                      " bytes) lies outside the file (" + std::to_string(file_size) + " bytes)");
    }
    const std::uint64_t end = off + len;
    for (const auto& c : captures) {
      if (c.begin <= off && end <= c.begin + c.bytes.size()) {
        return std::span<const std::byte>(c.bytes).subspan(off - c.begin, len);
      }
    }
    throw NeedBytes{off, len};
  }

  // Adds a range to capture. In the current pass if the stream has not passed it yet, else in the next.
  void want(std::uint64_t off, std::uint64_t len) {
    if (len == 0) return;
    if (off >= file_size) return;
    len = std::min(len, file_size - off);
    if (len > limits.max_table_bytes) {
      throw bad_input("ELF: a table of " + std::to_string(len) + " bytes exceeds the reader's limit of " +
                      std::to_string(limits.max_table_bytes));
    }
    if (have(off, len)) return;
    for (const auto& c : captures) {  // already wanted in this pass: it fills as the stream passes
      if (c.begin <= off && off + len <= c.end && (c.complete() || c.begin + c.bytes.size() >= pos)) return;
    }
    if (off >= pos) {
      Capture c;
      c.begin = off;
      c.end = off + len;
      c.bytes.reserve(static_cast<std::size_t>(len));
      captures.push_back(std::move(c));
      std::sort(captures.begin(), captures.end(), [](const Capture& a, const Capture& b) { return a.begin < b.begin; });
    } else {
      next_wishes.push_back({off, off + len});
    }
  }

  void feed(const std::byte* data, std::size_t size) {
    const std::uint64_t chunk_begin = pos;
    const std::uint64_t chunk_end = pos + size;
    bool completed_something = false;
    for (auto& c : captures) {
      const std::uint64_t filled_to = c.begin + c.bytes.size();
      // A capture fills contiguously from its start; one the stream skipped past stays incomplete.
      if (c.complete() || filled_to < chunk_begin || filled_to >= chunk_end) continue;
      const std::uint64_t to = std::min(c.end, chunk_end);
      const auto* src = data + (filled_to - chunk_begin);
      c.bytes.insert(c.bytes.end(), src, src + (to - filled_to));
      buffered += to - filled_to;
      if (c.complete()) completed_something = true;
    }
    peak = std::max(peak, buffered);
    pos = chunk_end;
    if (completed_something) plan();
  }

  void skip_to(std::uint64_t offset) {
    if (offset < pos || offset > file_size) throw Error(ErrorKind::Internal, "ELF scanner: skip backwards");
    pos = offset;
  }

  // The first range still to capture in this pass, at or after the stream position.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> next_wanted() const {
    std::optional<std::pair<std::uint64_t, std::uint64_t>> best;
    for (const auto& c : captures) {
      const std::uint64_t filled_to = c.begin + c.bytes.size();
      if (c.complete() || filled_to < pos) continue;
      if (!best || filled_to < best->first) best = {{filled_to, c.end}};
    }
    return best;
  }

  // --- planning: infer wanted ranges from what has been captured -----------------------------------
  // Cheap and idempotent; runs whenever a capture completes. Parse errors are left for finish_pass().
  void plan() {
    try {
      plan_unchecked();
    } catch (const NeedBytes&) {
    } catch (const Error&) {
    }
  }

  std::uint64_t ehdr_size() const { return cls == Class::Elf64 ? 64 : 52; }

  void parse_ident() {
    auto id = view(0, 16);
    if (!has_elf_magic(id.data(), id.size())) throw bad_input("not an ELF file (no \\x7fELF magic)");
    const auto c = static_cast<std::uint8_t>(id[4]);
    const auto d = static_cast<std::uint8_t>(id[5]);
    if (c != 1 && c != 2) throw bad_input("ELF: unknown class " + std::to_string(c) + " in e_ident");
    if (d != 1 && d != 2) throw bad_input("ELF: unknown data encoding " + std::to_string(d) + " in e_ident");
    cls = static_cast<Class>(c);
    endian = static_cast<Endian>(d);
    header_known = true;
  }

  struct Header {
    std::uint16_t type, machine;
    std::uint32_t flags;
    std::uint64_t phoff, shoff;
    std::uint16_t phentsize, phnum, shentsize, shnum;
  };

  Header header() {
    if (!header_known) parse_ident();
    FieldReader r(view(0, ehdr_size()), endian, cls, "ELF header");
    Header h{};
    h.type = r.u16(16);
    h.machine = r.u16(18);
    if (cls == Class::Elf64) {
      h.phoff = r.u64(32);
      h.shoff = r.u64(40);
      h.flags = r.u32(48);
      h.phentsize = r.u16(54);
      h.phnum = r.u16(56);
      h.shentsize = r.u16(58);
      h.shnum = r.u16(60);
    } else {
      h.phoff = r.u32(28);
      h.shoff = r.u32(32);
      h.flags = r.u32(36);
      h.phentsize = r.u16(42);
      h.phnum = r.u16(44);
      h.shentsize = r.u16(46);
      h.shnum = r.u16(48);
    }
    const std::uint16_t min_ph = cls == Class::Elf64 ? 56 : 32;
    const std::uint16_t min_sh = cls == Class::Elf64 ? 64 : 40;
    if (h.phnum != 0 && h.phentsize < min_ph)
      throw bad_input("ELF: e_phentsize " + std::to_string(h.phentsize) + " is too small");
    if (h.shnum != 0 && h.shentsize < min_sh)
      throw bad_input("ELF: e_shentsize " + std::to_string(h.shentsize) + " is too small");
    return h;
  }

  std::vector<Segment> segments(const Header& h) {
    std::vector<Segment> out;
    if (h.phnum == 0 || h.phoff == 0) return out;
    const auto len = checked_mul(h.phnum, h.phentsize, "program headers");
    FieldReader r(view(h.phoff, len), endian, cls, "program headers");
    for (std::uint64_t i = 0; i < h.phnum; ++i) {
      const std::uint64_t b = i * h.phentsize;
      Segment s{};
      s.type = r.u32(b);
      if (cls == Class::Elf64) {
        s.flags = r.u32(b + 4);
        s.offset = r.u64(b + 8);
        s.vaddr = r.u64(b + 16);
        s.filesz = r.u64(b + 32);
        s.memsz = r.u64(b + 40);
      } else {
        s.offset = r.u32(b + 4);
        s.vaddr = r.u32(b + 8);
        s.filesz = r.u32(b + 16);
        s.memsz = r.u32(b + 20);
        s.flags = r.u32(b + 24);
      }
      out.push_back(s);
    }
    return out;
  }

  // Section headers, if present and captured; empty otherwise (never throws NeedBytes).
  std::vector<Section> sections(const Header& h) {
    std::vector<Section> out;
    if (h.shnum == 0 || h.shoff == 0) return out;
    const auto len = checked_mul(h.shnum, h.shentsize, "section headers");
    if (h.shoff > file_size || len > file_size - h.shoff) return out;  // stripped or damaged: not needed
    if (!have(h.shoff, len)) return out;
    FieldReader r(view(h.shoff, len), endian, cls, "section headers");
    for (std::uint64_t i = 0; i < h.shnum; ++i) {
      const std::uint64_t b = i * h.shentsize;
      Section s{};
      s.type = r.u32(b + 4);
      if (cls == Class::Elf64) {
        s.addr = r.u64(b + 16);
        s.offset = r.u64(b + 24);
        s.size = r.u64(b + 32);
        s.link = r.u32(b + 40);
        s.entsize = r.u64(b + 56);
      } else {
        s.addr = r.u32(b + 12);
        s.offset = r.u32(b + 16);
        s.size = r.u32(b + 20);
        s.link = r.u32(b + 24);
        s.entsize = r.u32(b + 36);
      }
      out.push_back(s);
    }
    return out;
  }

  std::uint64_t dyn_entry_size() const { return cls == Class::Elf64 ? 16 : 8; }
  std::uint64_t sym_entry_size() const { return cls == Class::Elf64 ? 24 : 16; }

  std::vector<std::pair<std::int64_t, std::uint64_t>> dynamic_entries(const Segment& dyn) {
    std::vector<std::pair<std::int64_t, std::uint64_t>> out;
    FieldReader r(view(dyn.offset, dyn.filesz), endian, cls, "dynamic section");
    const auto es = dyn_entry_size();
    for (std::uint64_t off = 0; off + es <= dyn.filesz; off += es) {
      const auto tag = r.sword(off);
      if (tag == DT_NULL) break;
      out.emplace_back(tag, r.word(off + es / 2));
    }
    return out;
  }

  // Virtual address -> file offset through the PT_LOAD segments.
  static std::optional<std::uint64_t> to_offset(const std::vector<Segment>& segs, std::uint64_t addr) {
    for (const auto& s : segs) {
      if (s.type == PT_LOAD && addr >= s.vaddr && addr - s.vaddr < s.filesz) return s.offset + (addr - s.vaddr);
    }
    return std::nullopt;
  }

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

  Layout layout(const std::vector<Segment>& segs, const std::vector<Section>& secs,
                const std::vector<std::pair<std::int64_t, std::uint64_t>>& dyn) {
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
    if (auto off = table(DT_VERSYM)) {
      if (const auto* s = section_at(*off, SHT_GNU_versym))
        L.versym = Range{*off, checked_add(*off, s->size, ".gnu.version")};
      else
        L.versym = bounded(*off);
    }
    if (auto off = table(DT_VERNEED)) {
      L.verneednum = tag.count(DT_VERNEEDNUM) ? tag[DT_VERNEEDNUM] : 0;
      if (const auto* s = section_at(*off, SHT_GNU_verneed))
        L.verneed = Range{*off, checked_add(*off, s->size, ".gnu.version_r")};
      else
        L.verneed = bounded(*off);
    }
    if (auto off = table(DT_VERDEF)) {
      L.verdefnum = tag.count(DT_VERDEFNUM) ? tag[DT_VERDEFNUM] : 0;
      if (const auto* s = section_at(*off, SHT_GNU_verdef))
        L.verdef = Range{*off, checked_add(*off, s->size, ".gnu.version_d")};
      else
        L.verdef = bounded(*off);
    }
    const bool program = header().type == 2 || (tag.count(DT_FLAGS_1) && (tag[DT_FLAGS_1] & 0x08000000) != 0);
    if (program) {
      for (const auto& [addr, size, out] : {std::tuple{std::int64_t{7}, std::int64_t{8}, &L.rela},
                                            std::tuple{std::int64_t{17}, std::int64_t{18}, &L.rel}}) {
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
    return L;
  }

  void want_range(const std::optional<Range>& r) {
    if (r && r->end > r->begin) want(r->begin, r->end - r->begin);
  }

  void plan_unchecked() {
    const Header h = header();
    if (!planned_from_phdrs) {
      if (h.phnum != 0) want(h.phoff, checked_mul(h.phnum, h.phentsize, "program headers"));
      if (h.shnum != 0 && h.shoff != 0) {
        const auto len = checked_mul(h.shnum, h.shentsize, "section headers");
        if (h.shoff <= file_size && len <= file_size - h.shoff) want(h.shoff, len);
      }
    }
    const auto segs = segments(h);
    if (!planned_from_phdrs) {
      planned_from_phdrs = true;
      for (const auto& s : segs) {
        if (s.type == PT_DYNAMIC || s.type == PT_INTERP || s.type == PT_NOTE || s.type == PT_GNU_PROPERTY) {
          want(s.offset, s.filesz);
        }
      }
    }
    const Segment* dyn = nullptr;
    for (const auto& s : segs) {
      if (s.type == PT_DYNAMIC) dyn = &s;
    }
    if (dyn == nullptr) return;
    const auto entries = dynamic_entries(*dyn);
    const auto L = layout(segs, sections(h), entries);
    want_range(L.strtab);
    want_range(L.symtab);
    want_range(L.versym);
    want_range(L.verneed);
    want_range(L.verdef);
    want_range(L.gnu_hash);
    want_range(L.sysv_hash);
    want_range(L.rela);
    want_range(L.rel);
  }

  void mark_copy_relocations(const Layout& L, std::uint16_t machine, Binary& bin) {
    const std::uint32_t copy = elf::copy_relocation_type(machine);
    if (copy == 0) return;
    const std::uint64_t word = cls == Class::Elf64 ? 8 : 4;
    for (const auto& [range, entry] : {std::pair{L.rela, 3 * word}, std::pair{L.rel, 2 * word}}) {
      if (!range) continue;
      const std::uint64_t n = (range->end - range->begin) / entry;
      FieldReader r(view(range->begin, n * entry), endian, cls, "dynamic relocations");
      for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t info = cls == Class::Elf64 ? r.u64(i * entry + word) : r.u32(i * entry + word);
        const std::uint64_t type = cls == Class::Elf64 ? (info & 0xffffffffU) : (info & 0xffU);
        const std::uint64_t sym = cls == Class::Elf64 ? (info >> 32) : (info >> 8);
        if (type == copy && sym >= 1 && sym <= bin.symbols.size()) bin.symbols[sym - 1].copy_relocated = true;
      }
    }
  }

  // --- the full parse over captured ranges -------------------------------------------------------
  std::uint64_t symbol_count(const Layout& L) {
    if (L.symcount) return *L.symcount;
    if (L.sysv_hash) {
      FieldReader r(view(L.sysv_hash->begin, 8), endian, cls, "DT_HASH");
      return r.u32(4);  // nchain
    }
    if (L.gnu_hash) {
      const std::uint64_t base = L.gnu_hash->begin;
      FieldReader h(view(base, 16), endian, cls, "DT_GNU_HASH header");
      const std::uint64_t nbuckets = h.u32(0), symoffset = h.u32(4), bloom = h.u32(8);
      const std::uint64_t word = cls == Class::Elf64 ? 8 : 4;
      const std::uint64_t buckets_off = checked_add(base + 16, checked_mul(bloom, word, "GNU hash bloom"), "GNU hash");
      const std::uint64_t buckets_len = checked_mul(nbuckets, 4, "GNU hash buckets");
      if (buckets_len > limits.max_table_bytes) throw bad_input("ELF: GNU hash table is implausibly large");
      FieldReader b(view(buckets_off, buckets_len), endian, cls, "DT_GNU_HASH buckets");
      std::uint64_t max_bucket = 0;
      for (std::uint64_t i = 0; i < nbuckets; ++i) max_bucket = std::max<std::uint64_t>(max_bucket, b.u32(i * 4));
      if (max_bucket == 0) return symoffset;
      if (max_bucket < symoffset) throw bad_input("ELF: GNU hash bucket points below symoffset");
      const std::uint64_t chains_off = checked_add(buckets_off, buckets_len, "GNU hash");
      std::uint64_t idx = max_bucket;
      // Walk the last chain in pieces: each step is bounds checked by view(); the chain ends at bit 0.
      for (std::uint64_t steps = 0;; ++steps, ++idx) {
        if (steps > limits.max_table_bytes / 4) throw bad_input("ELF: GNU hash chain does not end");
        FieldReader c(view(chains_off + (idx - symoffset) * 4, 4), endian, cls, "DT_GNU_HASH chain");
        if (c.u32(0) & 1U) return idx + 1;
      }
    }
    if (L.symtab) return (L.symtab->end - L.symtab->begin) / sym_entry_size();  // bounded guess
    return 0;
  }

  Binary parse() {
    const Header h = header();
    Binary bin;
    bin.elf_class = cls;
    bin.endian = endian;
    bin.os_abi = static_cast<std::uint8_t>(view(0, 16)[7]);
    bin.type = h.type;
    bin.machine = h.machine;
    bin.e_flags = h.flags;
    const auto segs = segments(h);
    const auto secs = sections(h);
    const Segment* dyn = nullptr;
    for (const auto& s : segs) {
      if (s.type == PT_INTERP) {
        auto bytes = view(s.offset, s.filesz);
        const auto* p = reinterpret_cast<const char*>(bytes.data());
        bin.interpreter.assign(p, strnlen(p, bytes.size()));
      } else if (s.type == PT_DYNAMIC) {
        dyn = &s;
      } else if ((s.type == PT_GNU_PROPERTY || s.type == PT_NOTE) && !bin.x86_isa_level) {
        bin.x86_isa_level = detail::x86_isa_level_from_notes(view(s.offset, s.filesz), endian, cls);
      }
    }
    // A file without note segments (an object file, an odd linker script) may still carry the property
    // in a note section: read those, through another pass if need be. With note segments present, the
    // property note is in one of them, so non-loaded note sections are not worth a pass.
    const bool note_segments = std::any_of(
        segs.begin(), segs.end(), [](const Segment& s) { return s.type == PT_NOTE || s.type == PT_GNU_PROPERTY; });
    if (!bin.x86_isa_level && !note_segments) {
      for (const auto& s : secs) {
        if (s.type == SHT_NOTE && s.size <= limits.max_table_bytes) {
          if (auto l = detail::x86_isa_level_from_notes(view(s.offset, s.size), endian, cls)) bin.x86_isa_level = l;
        }
      }
    }
    if (dyn == nullptr) return bin;
    bin.has_dynamic = true;
    const auto entries = dynamic_entries(*dyn);
    const auto L = layout(segs, secs, entries);
    std::span<const std::byte> strtab;
    if (L.strtab) strtab = view(L.strtab->begin, L.strtab->end - L.strtab->begin);
    auto str = [&](std::uint64_t off) { return detail::string_at(strtab, off, ".dynstr"); };
    for (const auto& [t, v] : entries) {
      switch (t) {
        case DT_NEEDED: bin.needed.push_back(str(v)); break;
        case DT_SONAME: bin.soname = str(v); break;
        case DT_RPATH:
          for (auto& p : detail::split_path_list(str(v))) bin.rpath.push_back(std::move(p));
          break;
        case DT_RUNPATH:
          for (auto& p : detail::split_path_list(str(v))) bin.runpath.push_back(std::move(p));
          break;
        case DT_FLAGS: bin.flags = v; break;
        case DT_FLAGS_1: bin.flags_1 = v; break;
        default: break;
      }
    }
    // .gnu.version_r
    std::map<std::uint16_t, std::pair<std::string, std::string>> need_index;  // index -> (version, file)
    if (L.verneed && L.verneednum) {
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
          need_index[a.other] = {a.name, need.file};
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
    // .gnu.version_d
    std::map<std::uint16_t, std::string> def_index;
    if (L.verdef && L.verdefnum) {
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
        def_index[def.index] = def.name;
        bin.version_definitions.push_back(std::move(def));
        const auto next = r.u32(off + 16);
        if (next == 0) break;
        off = checked_add(off, next, "vd_next");
      }
    }
    // .dynsym with .gnu.version
    if (L.symtab) {
      const std::uint64_t count = symbol_count(L);
      const std::uint64_t es = sym_entry_size();
      const std::uint64_t bytes = checked_mul(count, es, "dynamic symbol count");
      if (bytes > limits.max_table_bytes)
        throw bad_input("ELF: " + std::to_string(count) + " dynamic symbols exceed the reader's limit");
      FieldReader sr(view(L.symtab->begin, bytes), endian, cls, ".dynsym");
      std::optional<FieldReader> vr;
      if (L.versym)
        vr.emplace(view(L.versym->begin, checked_mul(count, 2, ".gnu.version")), endian, cls, ".gnu.version");
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
        s.name = str(name_off);
        const auto bind = info >> 4;
        s.binding = (bind <= 2 || bind == 10) ? static_cast<Binding>(bind) : Binding::Other;
        const auto type = info & 15;
        s.type = (type <= 6 || type == 10) ? static_cast<SymbolType>(type) : SymbolType::Other;
        s.visibility = static_cast<Visibility>(other & 3);
        s.defined = shndx != 0;
        if (vr) {
          const auto v = vr->u16(i * 2);
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
      mark_copy_relocations(L, h.machine, bin);
    }
    return bin;
  }

  std::optional<Binary> finish_pass() {
    if (pos != file_size && !satisfied()) {
      throw bad_input("ELF: the stream ended at byte " + std::to_string(pos) + " of " + std::to_string(file_size));
    }
    if (pass == 1 && file_size < 16)
      throw bad_input("ELF: file of " + std::to_string(file_size) + " bytes is too short");
    plan();
    try {
      Binary b = parse();
      captures.clear();
      captures.shrink_to_fit();
      buffered = 0;
      return b;
    } catch (const NeedBytes& need) {
      if (pass >= limits.max_passes) {
        throw bad_input("ELF: the layout could not be settled in " + std::to_string(pass) + " passes");
      }
      next_wishes.push_back({need.offset, need.offset + need.length});
    }
    // Start the next pass: keep complete captures, wish for the rest from offset 0.
    ++pass;
    pos = 0;
    std::vector<Capture> kept;
    buffered = 0;
    for (auto& c : captures) {
      if (c.complete()) {
        buffered += c.bytes.size();
        kept.push_back(std::move(c));
      }
    }
    captures = std::move(kept);
    auto wishes = std::move(next_wishes);
    next_wishes.clear();
    for (const auto& w : wishes) want(w.begin, w.end - w.begin);
    planned_from_phdrs = false;
    plan();
    return std::nullopt;
  }

  // Pass 1 always runs to the end (the section headers are there); later passes stop once captured.
  bool satisfied() const { return pass > 1 && !next_wanted(); }
};

ElfScanner::ElfScanner(std::uint64_t file_size, ReaderLimits limits)
    : m_impl(std::make_unique<Impl>(file_size, limits)) {
  // The first pass keeps a speculative prefix: the ELF header and, in practice, every dynamic table.
  m_impl->want(0, std::min(file_size, std::max<std::uint64_t>(limits.speculative_prefix, 64)));
}

ElfScanner::~ElfScanner() = default;

void ElfScanner::feed(const std::byte* data, std::size_t size) {
  m_impl->feed(data, size);
}
bool ElfScanner::satisfied() const {
  return m_impl->satisfied();
}
void ElfScanner::skip_to(std::uint64_t offset) {
  m_impl->skip_to(offset);
}
std::optional<std::pair<std::uint64_t, std::uint64_t>> ElfScanner::next_wanted() const {
  return m_impl->next_wanted();
}
std::optional<Binary> ElfScanner::finish_pass() {
  return m_impl->finish_pass();
}
int ElfScanner::passes() const {
  return m_impl->pass;
}
std::uint64_t ElfScanner::peak_buffered() const {
  return m_impl->peak;
}

bool has_elf_magic(const void* data, std::size_t size) {
  return size >= 4 && std::memcmp(data,
                                  "\x7f"
                                  "ELF",
                                  4) == 0;
}

std::string reader_name(ReaderKind kind) {
  return kind == ReaderKind::Lief ? "lief" : "fast";
}

namespace {

Binary read_elf_fast(const ByteSource& source, const ReaderLimits& limits) {
  ElfScanner scanner(source.size(), limits);
  std::vector<std::byte> buf(std::size_t{1} << 20);
  for (;;) {
    auto stream = source.open();
    while (!scanner.satisfied()) {
      const auto n = stream->read(buf);
      if (n == 0) break;
      scanner.feed(buf.data(), n);
    }
    if (auto b = scanner.finish_pass()) return std::move(*b);
  }
}

}  // namespace

Binary read_elf_random(std::uint64_t size, const std::function<void(std::uint64_t, std::span<std::byte>)>& read_at,
                       ReaderLimits limits) {
  limits.speculative_prefix = std::min<std::uint64_t>(limits.speculative_prefix, 64 << 10);
  ElfScanner scanner(size, limits);
  std::vector<std::byte> buf;
  for (;;) {
    while (auto range = scanner.next_wanted()) {
      scanner.skip_to(range->first);
      buf.resize(static_cast<std::size_t>(range->second - range->first));
      read_at(range->first, buf);
      scanner.feed(buf.data(), buf.size());
    }
    scanner.skip_to(size);
    if (auto b = scanner.finish_pass()) return std::move(*b);
  }
}

Binary read_elf_file(const std::string& path, ReaderLimits limits) {
  const FileRandomAccess file(path);
  return read_elf_random(
      file.size(), [&](std::uint64_t offset, std::span<std::byte> out) { file.read_at(offset, out); }, limits);
}

Binary read_elf(const ByteSource& source, ReaderKind kind, ReaderLimits limits) {
  if (kind == ReaderKind::Lief) {
    if (source.size() > (std::uint64_t{4} << 30)) throw bad_input(source.name() + ": too large for the LIEF reader");
    std::vector<std::uint8_t> bytes;
    bytes.reserve(source.size());
    auto stream = source.open();
    std::vector<std::byte> buf(std::size_t{1} << 20);
    while (auto n = stream->read(buf)) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(buf.data());
      bytes.insert(bytes.end(), p, p + n);
    }
    return read_elf_lief(bytes, source.name());
  }
  return read_elf_fast(source, limits);
}

}  // namespace wheelcheck::elf
