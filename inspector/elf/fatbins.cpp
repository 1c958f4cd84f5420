// The streaming scanner's reading of the CUDA fatbin: the `.nv_fatbin` section's containers (see
// inspector/cuda/fatbin.cpp for their layout), without ever holding the section.
//
// The section headers, which say where `.nv_fatbin` lies, are the last bytes of the file, so a member
// streamed once cannot know the range before the fatbin has gone by. Streamed, the scanner therefore
// runs a seeking walker over the whole first pass (it finds containers by their magic and skips their
// payloads) and keeps, once the section headers are parsed, the containers inside `.nv_fatbin`. The
// section names come from `.shstrtab`, which linkers put just before the section headers: the first
// pass keeps a window of the file there (want_section_names), and so does a read with random access.
// Without the names (an unusual layout), the section that holds the first container is taken for
// `.nv_fatbin`. `__nv_relfatbin` (relocatable device code kept for a later device link) is never read:
// the runtime loads what `.nv_fatbin` holds.
// Read with random access (a file, a stored member), the caller walks the range fatbin_section() gives.

#include <algorithm>
#include <cstring>

#include "inspector/elf/detail.hpp"
#include "wheelcheck/elf.hpp"

namespace wheelcheck::elf {

namespace {

constexpr std::uint32_t k_sht_progbits = 1;
constexpr std::uint64_t k_names_window = std::uint64_t{256} << 10;
constexpr const char* k_section = ".nv_fatbin";

}  // namespace

// The window before the section headers where `.shstrtab` sits in what GNU ld and LLD write.
void ElfScanner::Impl::want_section_names(const Header& h) {
  if (h.shnum == 0 || h.shoff == 0 || h.shoff > file_size) return;
  // Streamed, the window rides along the one pass; with random access it is one more read near the
  // section headers (a remote member's decoded tail), smaller, and a miss costs a small pass.
  const std::uint64_t len = std::min(h.shoff, fatbin_walker ? k_names_window : k_names_window / 4);
  want(h.shoff - len, len);
}

std::optional<detail::Range> ElfScanner::Impl::find_fatbin_section(const Header& h, const std::vector<Section>& secs) {
  auto range_of = [&](const Section& s) -> std::optional<Range> {
    if (s.type != k_sht_progbits || s.size == 0 || s.offset > file_size || s.size > file_size - s.offset) {
      return std::nullopt;
    }
    return Range{s.offset, s.offset + s.size};
  };
  embedded_spans.clear();
  embedded_unknown = false;
  if (h.shstrndx < secs.size()) {
    const Section& names = secs[h.shstrndx];
    if (names.offset <= file_size && names.size <= file_size - names.offset && have(names.offset, names.size)) {
      const auto table = view(names.offset, names.size, ".shstrtab");
      std::optional<Range> found;
      for (const auto& s : secs) {
        if (s.name >= table.size()) continue;
        const auto* p = reinterpret_cast<const char*>(table.data()) + s.name;
        const std::string_view name(p, strnlen(p, table.size() - s.name));
        if (name == k_section) {
          if (!found) found = range_of(s);
        } else if (s.size != 0 && s.offset <= file_size && s.size <= file_size - s.offset &&
                   cuda::may_hold_loaded_code(name, s.type, s.flags)) {
          embedded_spans.push_back({std::string(name), s.offset, s.offset + s.size});
        }
      }
      std::sort(embedded_spans.begin(), embedded_spans.end(),
                [](const cuda::SectionSpan& a, const cuda::SectionSpan& b) { return a.begin < b.begin; });
      return found;
    }
    // Read with random access, the names cost one more small read: ask for them (never past the
    // passes the reader allows, which a well-formed file does not come near).
    if (!fatbin_walker && pass < limits.max_passes && names.size != 0 && names.offset <= file_size &&
        names.size <= std::min(file_size - names.offset, limits.max_table_bytes)) {
      throw detail::NeedBytes{names.offset, names.size};
    }
  }
  embedded_unknown = true;
  // No names: the section that holds the first container the stream showed.
  if (!fatbin_walker || fatbin_walker->containers().empty()) return std::nullopt;
  const auto first = fatbin_walker->containers().front().begin;
  for (const auto& s : secs) {
    auto r = range_of(s);
    if (r && r->begin <= first && first < r->end) return r;
  }
  return std::nullopt;
}

void ElfScanner::Impl::read_fatbins(const Header& h, const std::vector<Section>& secs, Binary& bin) {
  if (endian != Endian::Little) return;  // NVIDIA's GPU code ships in little-endian files only
  if (secs.empty()) {
    // No section headers: whatever containers the stream showed, from the first to the last.
    if (!fatbin_walker || fatbin_walker->containers().empty()) return;
    const auto& c = fatbin_walker->containers();
    fatbin_range = Range{c.front().begin, c.back().end};
  } else {
    fatbin_range = find_fatbin_section(h, secs);
  }
  const char* no_names = "the section names could not be read, so only the fatbin's own section was";
  if (fatbin_walker) {
    std::optional<cuda::Fatbins> f;
    if (fatbin_range) {
      f = cuda::merge_containers(fatbin_walker->containers(), fatbin_range->begin, fatbin_range->end);
      if (!fatbin_walker->failure().empty()) f->unread = fatbin_walker->failure();
    }
    if (!embedded_spans.empty()) {
      cuda::Fatbins all = f ? *f : cuda::Fatbins{};
      cuda::add_embedded(all, fatbin_walker->containers(), embedded_spans);
      if (f || all.embedded_containers > 0) f = std::move(all);
    } else if (f && embedded_unknown && !secs.empty()) {
      f->embedded_unread = no_names;
    }
    bin.cuda = std::move(f);
    return;
  }
  if (!fatbin_range) return;
  cuda::Fatbins f;
  f.section_size = fatbin_range->end - fatbin_range->begin;
  f.unread = "its entries were not read";  // read_elf_random reads them, or says why not
  if (embedded_unknown) f.embedded_unread = no_names;
  bin.cuda = std::move(f);
}

}  // namespace wheelcheck::elf
