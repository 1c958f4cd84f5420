// The streaming scanner's section table for a SectionReader (wheelcheck/elf.hpp): the section headers
// with their names, which a reader of some sections' contents (the CUDA fatbins, inspector/cuda/
// sections.cpp) needs to find them.
//
// The section names come from `.shstrtab`, which linkers put just before the section headers: the first
// pass keeps a window of the file there (want_section_names), and so does a read with random access,
// which asks for the table itself when the window missed it. Without the names (an unusual layout) the
// headers go to the reader unnamed.

#include <algorithm>
#include <cstring>

#include "inspector/elf/detail.hpp"
#include "wheelcheck/elf.hpp"

namespace wheelcheck::elf {

namespace {

constexpr std::uint64_t k_names_window = std::uint64_t{256} << 10;

}  // namespace

// The window before the section headers where `.shstrtab` sits in what GNU ld and LLD write.
void ElfScanner::Impl::want_section_names(const Header& h) {
  if (h.shnum == 0 || h.shoff == 0 || h.shoff > file_size) return;
  // Streamed, the window rides along the one pass; with random access it is one more read near the
  // section headers (a remote member's decoded tail), smaller, and a miss costs a small pass.
  const std::uint64_t len = std::min(h.shoff, random_access ? k_names_window / 4 : k_names_window);
  want(h.shoff - len, len);
}

void ElfScanner::Impl::read_section_table(const Header& h, const std::vector<Section>& secs) {
  section_table.reset();
  if (section_reader == nullptr || !section_reader->wants(endian)) return;
  std::vector<SectionHeader> headers;
  headers.reserve(secs.size());
  for (const auto& s : secs) headers.push_back({std::nullopt, s.type, s.flags, s.offset, s.size});
  if (h.shstrndx < secs.size()) {
    const Section& names = secs[h.shstrndx];
    if (names.offset <= file_size && names.size <= file_size - names.offset && have(names.offset, names.size)) {
      const auto table = view(names.offset, names.size, ".shstrtab");
      for (std::size_t i = 0; i < secs.size(); ++i) {
        if (secs[i].name >= table.size()) continue;
        const auto* p = reinterpret_cast<const char*>(table.data()) + secs[i].name;
        headers[i].name = std::string(p, strnlen(p, table.size() - secs[i].name));
      }
      section_table.emplace(std::move(headers), true);
      return;
    }
    // Read with random access, the names cost one more small read: ask for them (never past the
    // passes the reader allows, which a well-formed file does not come near).
    if (random_access && pass < limits.max_passes && names.size != 0 && names.offset <= file_size &&
        names.size <= std::min(file_size - names.offset, limits.max_table_bytes)) {
      throw detail::NeedBytes{names.offset, names.size};
    }
  }
  section_table.emplace(std::move(headers), false);
}

}  // namespace wheelcheck::elf
