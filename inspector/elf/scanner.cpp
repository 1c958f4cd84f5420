// The fast ELF reader: reads what the dynamic loader reads, from a forward-only stream.
//
// A wheel member arrives from libzip as a stream that can only go forward, and can be hundreds of MB
// (libcublasLt.so.13 is 541 MB, libtorch_cuda 1.2 GB). Everything wheelcheck needs from it is small:
// the ELF header, the program headers, the dynamic section, and the tables the dynamic section points
// at (.dynstr, .dynsym, .gnu.version, .gnu.version_r, .gnu.version_d, a hash table), the notes (the GNU
// property note, the ABI tag), and (at the very end) the section headers. So the scanner never holds the
// member: it keeps only byte ranges it *wants*, and learns which ones it wants as the stream goes by.
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
//
// This file holds that machinery (captures, passes, planning), the parse in its stages, and the
// readers' entry points. Each stage reads one ELF concept, in a file of its own: header.cpp (the ELF
// header, program and section headers), dynamic.cpp (the dynamic section and its tables' layout),
// symbols.cpp (.dynsym and the hash tables), versions.cpp (symbol versions), notes.cpp (the GNU
// property note and the ABI tag note). inspector/elf/detail.hpp declares them.

#include <algorithm>
#include <cstring>

#include "inspector/elf/detail.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

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

void FieldReader::out_of_range(std::uint64_t off) const {
  throw bad_input(std::string("ELF: ") + m_what + ": read at offset " + std::to_string(off) + " runs past its end (" +
                  std::to_string(m_bytes.size()) + " bytes)");
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

}  // namespace detail

using detail::Capture;
using detail::checked_mul;
using detail::NeedBytes;

// --- captures: the byte ranges kept from the stream -------------------------------------------------

bool ElfScanner::Impl::have(std::uint64_t off, std::uint64_t len) const {
  const std::uint64_t end = off + len;
  for (const auto& c : captures) {
    if (c.begin <= off && end <= c.begin + c.bytes.size()) return true;
  }
  return false;
}

std::span<const std::byte> ElfScanner::Impl::view(std::uint64_t off, std::uint64_t len, const char* what) const {
  if (len > file_size || off > file_size - len) {
    throw bad_input(std::string("ELF: ") + what + ": offset " + std::to_string(off) + " + " + std::to_string(len) +
                    " bytes lies outside the file (" + std::to_string(file_size) + " bytes)");
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
void ElfScanner::Impl::want(std::uint64_t off, std::uint64_t len) {
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

void ElfScanner::Impl::want_range(const std::optional<Range>& r) {
  if (r && r->end > r->begin) want(r->begin, r->end - r->begin);
}

void ElfScanner::Impl::feed(const std::byte* data, std::size_t size) {
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
    if (c.complete()) completed_something = true;
  }
  pos = chunk_end;
  if (section_reader != nullptr && pass == 1)
    section_reader->stream(chunk_begin, std::span<const std::byte>(data, size));
  if (completed_something) plan();
}

void ElfScanner::Impl::skip_to(std::uint64_t offset) {
  if (offset < pos || offset > file_size) throw Error(ErrorKind::Internal, "ELF scanner: skip backwards");
  pos = offset;
}

// The first range still to capture in this pass, at or after the stream position.
std::optional<std::pair<std::uint64_t, std::uint64_t>> ElfScanner::Impl::next_wanted() const {
  std::optional<std::pair<std::uint64_t, std::uint64_t>> best;
  for (const auto& c : captures) {
    const std::uint64_t filled_to = c.begin + c.bytes.size();
    if (c.complete() || filled_to < pos) continue;
    if (!best || filled_to < best->first) best = {{filled_to, c.end}};
  }
  return best;
}

// Pass 1 always runs to the end (the section headers are there); later passes stop once captured.
bool ElfScanner::Impl::satisfied() const {
  return pass > 1 && !next_wanted();
}

// --- planning: infer wanted ranges from what has been captured ---------------------------------------
// Cheap and idempotent; runs whenever a capture completes. True once the plan is settled; false while it
// needs bytes not captured yet (a later capture plans again) or the layout does not parse: parse errors are
// left for finish_pass(), whose parse() reports them with the bytes it has.
bool ElfScanner::Impl::plan() {
  try {
    plan_unchecked();
    return true;
  } catch (const NeedBytes&) {
    return false;
  } catch (const Error&) {
    return false;
  }
}

void ElfScanner::Impl::plan_unchecked() {
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
    if (pass == 1) want_section_names(h);
    planned_from_phdrs = true;
    for (const auto& s : segs) {
      if (s.type == detail::PT_DYNAMIC || s.type == detail::PT_INTERP || s.type == detail::PT_NOTE ||
          s.type == detail::PT_GNU_PROPERTY) {
        want(s.offset, s.filesz);
      }
    }
  }
  // The section names, for a SectionReader (sections.cpp): exactly, once the section headers are captured.
  if (const auto secs = sections(h); h.shstrndx < secs.size()) want(secs[h.shstrndx].offset, secs[h.shstrndx].size);
  const Segment* dyn = nullptr;
  for (const auto& s : segs) {
    if (s.type == detail::PT_DYNAMIC) dyn = &s;
  }
  if (dyn == nullptr) return;
  const auto entries = dynamic_entries(*dyn);
  const auto L = layout(h, segs, sections(h), entries);
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

// --- the full parse over captured ranges, a stage per ELF concept ------------------------------------

Binary ElfScanner::Impl::parse() {
  const Header h = header();
  Binary bin = identify(h);
  const auto segs = segments(h);
  const auto secs = sections(h);
  const Segment* dyn = nullptr;
  for (const auto& s : segs) {
    if (s.type == detail::PT_INTERP) {
      bin.interpreter = interpreter(s);
    } else if (s.type == detail::PT_DYNAMIC) {
      dyn = &s;
    } else if (s.type == detail::PT_GNU_STACK) {
      bin.gnu_stack = s.flags;  // glibc's loader takes the last one, as here
    } else if (s.type == detail::PT_GNU_PROPERTY || s.type == detail::PT_NOTE) {
      if (!bin.x86_isa_level) bin.x86_isa_level = x86_isa_level(s);
      if (s.type == detail::PT_NOTE && !bin.abi_tag) bin.abi_tag = abi_tag(s);
    }
  }
  // A file without note segments (an object file, an odd linker script) may still carry the property
  // in a note section: read those, through another pass if need be. With note segments present, the
  // property note is in one of them, so non-loaded note sections are not worth a pass.
  const bool note_segments = std::any_of(segs.begin(), segs.end(), [](const Segment& s) {
    return s.type == detail::PT_NOTE || s.type == detail::PT_GNU_PROPERTY;
  });
  if (!bin.x86_isa_level && !note_segments) bin.x86_isa_level = x86_isa_level(secs);
  if (!bin.abi_tag && !note_segments) bin.abi_tag = abi_tag(secs);
  read_section_table(h, secs);
  if (dyn == nullptr) return bin;
  bin.has_dynamic = true;
  const auto entries = dynamic_entries(*dyn);
  const auto L = layout(h, segs, secs, entries);
  std::span<const std::byte> strtab;
  if (L.strtab) strtab = view(L.strtab->begin, L.strtab->end - L.strtab->begin, ".dynstr");
  read_dynamic(entries, strtab, bin);
  detail::VersionIndex versions;
  read_version_needs(L, strtab, bin, versions);
  read_version_definitions(L, strtab, bin, versions);
  if (L.symtab) {
    read_symbols(L, strtab, versions, bin);
    mark_copy_relocations(L, h.machine, bin);
  }
  return bin;
}

std::optional<Binary> ElfScanner::Impl::finish_pass() {
  if (pos != file_size && !satisfied()) {
    throw bad_input("ELF: the stream ended at byte " + std::to_string(pos) + " of " + std::to_string(file_size));
  }
  if (pass == 1 && file_size < 16) throw bad_input("ELF: file of " + std::to_string(file_size) + " bytes is too short");
  plan();
  try {
    Binary b = parse();
    captures.clear();
    captures.shrink_to_fit();
    if (section_table) section_reader->sections(section_table->first, section_table->second);
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
  for (auto& c : captures) {
    if (c.complete()) kept.push_back(std::move(c));
  }
  captures = std::move(kept);
  auto wishes = std::move(next_wishes);
  next_wishes.clear();
  for (const auto& w : wishes) want(w.begin, w.end - w.begin);
  planned_from_phdrs = false;
  plan();
  return std::nullopt;
}

// --- the public scanner and the readers --------------------------------------------------------------

ElfScanner::ElfScanner(std::uint64_t file_size, ReaderLimits limits, SectionReader* sections, bool random_access)
    : m_impl(std::make_unique<Impl>(file_size, limits)) {
  m_impl->section_reader = sections;
  m_impl->random_access = random_access;
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

Binary read_elf_fast(const ByteSource& source, const ReaderLimits& limits, SectionReader* sections) {
  ElfScanner scanner(source.size(), limits, sections);
  // A chunk of 1 MiB, or less for a small source (util.hpp).
  const ReadBuffer read_buffer(source.size(), std::size_t{1} << 20);
  const std::span<std::byte> buf = read_buffer.span();
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

Binary read_elf_random(std::uint64_t size, const ReadAt& read_at, ReaderLimits limits, SectionReader* sections,
                       const std::function<void(const ContentHint&)>& hint) {
  if (hint) {
    // Advice only: a damaged header or table is the scanner's to report, as it reads them below.
    try {
      if (auto predicted = predict_dynamic(size, read_at)) hint(*predicted);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Io) throw;
    }
  }
  limits.speculative_prefix = std::min<std::uint64_t>(limits.speculative_prefix, 64 << 10);
  ElfScanner scanner(size, limits, sections, true);
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

Binary read_elf_file(const std::string& path, ReaderLimits limits, SectionReader* sections) {
  const FileRandomAccess file(path);
  return read_elf_random(
      file.size(), [&](std::uint64_t offset, std::span<std::byte> out) { file.read_at(offset, out); }, limits,
      sections);
}

Binary read_elf(const ByteSource& source, ReaderKind kind, ReaderLimits limits, SectionReader* sections) {
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
    return read_elf_lief(bytes, source.name(), sections);
  }
  return read_elf_fast(source, limits, sections);
}

}  // namespace wheelcheck::elf
