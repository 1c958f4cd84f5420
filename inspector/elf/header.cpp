// The streaming scanner's reading of the ELF header (`readelf -h`), the program headers (`readelf -l`)
// and the section headers (`readelf -S`), over the ranges it captured (see scanner.cpp). The ELF header
// says where both header tables lie; the program headers say where the dynamic section, the interpreter
// and the notes lie and map the dynamic section's addresses to file offsets (dynamic.cpp). The section
// headers are optional: a stripped file has none, and the scanner uses them only when it captured them,
// for the exact size of each table.

#include <cstring>

#include "inspector/elf/detail.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"

namespace wheelcheck::elf {

using detail::checked_mul;
using detail::FieldReader;

// e_ident: the magic, the class (32 or 64 bits) and the byte order every later field is read in.
void ElfScanner::Impl::parse_ident() {
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

detail::Header ElfScanner::Impl::header() {
  if (!header_known) parse_ident();
  FieldReader r(view(0, ehdr_size()), endian, cls, "ELF header");
  Header h{};
  h.type = static_cast<FileType>(r.u16(16));
  h.machine = r.u16(18);
  if (cls == Class::Elf64) {
    h.phoff = r.u64(32);
    h.shoff = r.u64(40);
    h.flags = r.u32(48);
    h.phentsize = r.u16(54);
    h.phnum = r.u16(56);
    h.shentsize = r.u16(58);
    h.shnum = r.u16(60);
    h.shstrndx = r.u16(62);
  } else {
    h.phoff = r.u32(28);
    h.shoff = r.u32(32);
    h.flags = r.u32(36);
    h.phentsize = r.u16(42);
    h.phnum = r.u16(44);
    h.shentsize = r.u16(46);
    h.shnum = r.u16(48);
    h.shstrndx = r.u16(50);
  }
  const std::uint16_t min_ph = cls == Class::Elf64 ? 56 : 32;
  const std::uint16_t min_sh = cls == Class::Elf64 ? 64 : 40;
  if (h.phnum != 0 && h.phentsize < min_ph)
    throw bad_input("ELF: e_phentsize " + std::to_string(h.phentsize) + " is too small");
  if (h.shnum != 0 && h.shentsize < min_sh)
    throw bad_input("ELF: e_shentsize " + std::to_string(h.shentsize) + " is too small");
  return h;
}

// The Binary's header fields: class, byte order, OS ABI, file type, machine, flags.
Binary ElfScanner::Impl::identify(const Header& h) {
  Binary bin;
  bin.elf_class = cls;
  bin.endian = endian;
  bin.os_abi = static_cast<std::uint8_t>(view(0, 16)[7]);
  bin.type = h.type;
  bin.machine = h.machine;
  bin.e_flags = h.flags;
  return bin;
}

std::vector<detail::Segment> ElfScanner::Impl::segments(const Header& h) {
  std::vector<Segment> out;
  if (h.phnum == 0 || h.phoff == 0) return out;
  const auto len = checked_mul(h.phnum, h.phentsize, "program headers");
  FieldReader r(view(h.phoff, len, "program headers"), endian, cls, "program headers");
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
std::vector<detail::Section> ElfScanner::Impl::sections(const Header& h) {
  std::vector<Section> out;
  if (h.shnum == 0 || h.shoff == 0) return out;
  const auto len = checked_mul(h.shnum, h.shentsize, "section headers");
  if (h.shoff > file_size || len > file_size - h.shoff) return out;  // stripped or damaged: not needed
  if (!have(h.shoff, len)) return out;
  FieldReader r(view(h.shoff, len), endian, cls, "section headers");
  for (std::uint64_t i = 0; i < h.shnum; ++i) {
    const std::uint64_t b = i * h.shentsize;
    Section s{};
    s.name = r.u32(b);
    s.type = r.u32(b + 4);
    if (cls == Class::Elf64) {
      s.flags = r.u64(b + 8);
      s.addr = r.u64(b + 16);
      s.offset = r.u64(b + 24);
      s.size = r.u64(b + 32);
      s.link = r.u32(b + 40);
      s.entsize = r.u64(b + 56);
    } else {
      s.flags = r.u32(b + 8);
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

// PT_INTERP: the program interpreter's path, up to its NUL.
std::string ElfScanner::Impl::interpreter(const Segment& s) {
  const auto bytes = view(s.offset, s.filesz, "PT_INTERP");
  const auto* p = reinterpret_cast<const char*>(bytes.data());
  return std::string(p, strnlen(p, bytes.size()));
}

}  // namespace wheelcheck::elf
