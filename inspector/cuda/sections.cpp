// The GPU code of an ELF file, read along with the ELF read as its SectionReader (wheelcheck/cuda.hpp):
// which sections hold it, from the section headers the ELF readers hand over, and their containers (see
// inspector/cuda/fatbin.cpp for their layout), read without ever holding a section.

#include <algorithm>
#include <cstring>
#include <utility>

#include "inspector/cuda/fatbin.hpp"
#include "wheelcheck/cuda.hpp"
#include "wheelcheck/elf.hpp"

namespace wheelcheck::cuda {

namespace {

constexpr std::uint32_t k_code_sht_progbits = 1;
constexpr const char* k_fatbin_section = ".nv_fatbin";
constexpr const char* k_no_section_names = "the section names could not be read, so only the fatbin's own section was";

struct FileRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

bool span_in_file(const elf::SectionHeader& s, std::uint64_t file_size) {
  return s.offset <= file_size && s.size <= file_size - s.offset;
}

std::optional<FileRange> progbits_range(const elf::SectionHeader& s, std::uint64_t file_size) {
  if (s.type != k_code_sht_progbits || s.size == 0 || !span_in_file(s, file_size)) return std::nullopt;
  return FileRange{s.offset, s.offset + s.size};
}

void sort_spans(std::vector<SectionSpan>& spans) {
  std::sort(spans.begin(), spans.end(), [](const SectionSpan& a, const SectionSpan& b) { return a.begin < b.begin; });
}

// Where the GPU code lies, as the streaming scanner finds it: .nv_fatbin's range, and the sections that
// may hold code the library loads itself (in file order; none when the names could not be read).
struct CodePlace {
  std::optional<FileRange> fatbin;
  std::vector<SectionSpan> embedded;
  bool names_unknown = false;
};

CodePlace place_code(const std::vector<elf::SectionHeader>& headers, bool names, std::uint64_t file_size,
                     const FatbinWalker* walker) {
  CodePlace out;
  if (headers.empty()) {
    // No section headers: whatever containers the stream showed, from the first to the last.
    if (walker != nullptr && !walker->containers().empty()) {
      out.fatbin = FileRange{walker->containers().front().begin, walker->containers().back().end};
    }
    return out;
  }
  if (names) {
    for (const auto& s : headers) {
      if (!s.name) continue;
      if (*s.name == k_fatbin_section) {
        if (!out.fatbin) out.fatbin = progbits_range(s, file_size);
      } else if (s.size != 0 && span_in_file(s, file_size) && may_hold_loaded_code(*s.name, s.type, s.flags)) {
        out.embedded.push_back({*s.name, s.offset, s.offset + s.size});
      }
    }
    sort_spans(out.embedded);
    return out;
  }
  out.names_unknown = true;
  // No names: the section that holds the first container the stream showed.
  if (walker == nullptr || walker->containers().empty()) return out;
  const auto first = walker->containers().front().begin;
  for (const auto& s : headers) {
    const auto r = progbits_range(s, file_size);
    if (r && r->begin <= first && first < r->end) {
      out.fatbin = r;
      break;
    }
  }
  return out;
}

// Streamed: the containers the seeking walk kept, sorted into .nv_fatbin's and the others'.
std::optional<Fatbins> streamed_code(const FatbinWalker& walker, const CodePlace& place, bool have_headers) {
  std::optional<Fatbins> f;
  if (place.fatbin) {
    f = merge_containers(walker.containers(), place.fatbin->begin, place.fatbin->end);
    if (!walker.failure().empty()) f->unread = walker.failure();
  }
  if (!place.embedded.empty()) {
    Fatbins all = f ? *f : Fatbins{};
    add_embedded(all, walker.containers(), place.embedded);
    if (f || all.embedded_containers > 0) f = std::move(all);
  } else if (f && place.names_unknown && have_headers) {
    f->embedded_unread = k_no_section_names;
  }
  return f;
}

// Random access: .nv_fatbin's entries through a directed walk that reads only their headers; then the
// other sections that may hold GPU code, looked through between containers.
std::optional<Fatbins> random_code(const CodePlace& place, std::uint64_t file_size, const elf::ReadAt& read_at,
                                   const std::string& skip_fatbins, const std::string& skip_loaded_code) {
  std::optional<Fatbins> out;
  if (place.fatbin) {
    if (!skip_fatbins.empty()) {
      Fatbins f;
      f.section_size = place.fatbin->end - place.fatbin->begin;
      f.unread = skip_fatbins;
      if (place.names_unknown) f.embedded_unread = k_no_section_names;
      return f;
    }
    FatbinWalker walker(place.fatbin->begin, place.fatbin->end, false);
    std::vector<std::byte> buf;
    while (!walker.done()) {
      buf.resize(walker.wanted_length());
      read_at(walker.wanted(), buf);
      walker.feed(walker.wanted(), buf);
    }
    out = merge_containers(walker.containers(), place.fatbin->begin, place.fatbin->end);
    if (!walker.failure().empty()) out->unread = walker.failure();
    if (place.names_unknown) out->embedded_unread = k_no_section_names;
  }
  if (place.embedded.empty()) return out;
  if (!skip_loaded_code.empty()) {
    if (out) out->embedded_unread = skip_loaded_code;
    return out;
  }
  Fatbins f = out ? *out : Fatbins{};
  add_embedded(f, seek_containers(place.embedded, file_size, read_at), place.embedded);
  if (out || f.embedded_containers > 0) out = std::move(f);
  return out;
}

// The whole file in memory (the LIEF reader's copy): .nv_fatbin read from its bytes, the other sections
// looked through.
std::optional<Fatbins> whole_code(const std::vector<elf::SectionHeader>& headers, std::span<const std::byte> bytes) {
  std::optional<Fatbins> f;
  std::vector<SectionSpan> spans;
  for (const auto& s : headers) {
    if (s.size == 0 || !span_in_file(s, bytes.size())) continue;
    const std::string name = s.name.value_or("");
    if (name == k_fatbin_section && s.type == k_code_sht_progbits) {
      if (f) continue;
      f = read_fatbins(bytes.subspan(static_cast<std::size_t>(s.offset), static_cast<std::size_t>(s.size)));
    } else if (s.name && may_hold_loaded_code(name, s.type, s.flags)) {
      spans.push_back({name, s.offset, s.offset + s.size});
    }
  }
  if (spans.empty()) return f;
  sort_spans(spans);
  const auto read_at = [&](std::uint64_t at, std::span<std::byte> out) {
    std::memcpy(out.data(), bytes.data() + at, out.size());
  };
  Fatbins all = f ? *f : Fatbins{};
  add_embedded(all, seek_containers(spans, bytes.size(), read_at), spans);
  if (f || all.embedded_containers > 0) f = std::move(all);
  return f;
}

}  // namespace

struct CodeReader::State {
  enum class Mode { Streamed, Random, Whole };
  Mode mode = Mode::Streamed;
  std::uint64_t file_size = 0;
  std::unique_ptr<FatbinWalker> walker;  // seeking over the whole first pass, when streamed
  elf::ReadAt read_at;
  std::string skip_fatbins;
  std::string skip_loaded_code;
  std::span<const std::byte> whole;
  std::optional<Fatbins> result;
};

CodeReader::CodeReader(std::uint64_t file_size) : m(std::make_unique<State>()) {
  m->file_size = file_size;
  m->walker = std::make_unique<FatbinWalker>(0, file_size, true);
}

CodeReader::CodeReader(std::uint64_t file_size, elf::ReadAt read_at, std::string skip_fatbins,
                       std::string skip_loaded_code)
    : m(std::make_unique<State>()) {
  m->mode = State::Mode::Random;
  m->file_size = file_size;
  m->read_at = std::move(read_at);
  m->skip_fatbins = std::move(skip_fatbins);
  m->skip_loaded_code = std::move(skip_loaded_code);
}

CodeReader::CodeReader(std::span<const std::byte> whole) : m(std::make_unique<State>()) {
  m->mode = State::Mode::Whole;
  m->file_size = whole.size();
  m->whole = whole;
}

CodeReader::~CodeReader() = default;

bool CodeReader::wants(elf::Endian endian) const {
  return endian == elf::Endian::Little;  // NVIDIA's GPU code ships in little-endian files only
}

void CodeReader::stream(std::uint64_t offset, std::span<const std::byte> data) {
  if (m->walker) m->walker->feed(offset, data);
}

void CodeReader::sections(const std::vector<elf::SectionHeader>& headers, bool names) {
  switch (m->mode) {
    case State::Mode::Whole: m->result = whole_code(headers, m->whole); return;
    case State::Mode::Streamed:
      m->result =
          streamed_code(*m->walker, place_code(headers, names, m->file_size, m->walker.get()), !headers.empty());
      return;
    case State::Mode::Random:
      m->result = random_code(place_code(headers, names, m->file_size, nullptr), m->file_size, m->read_at,
                              m->skip_fatbins, m->skip_loaded_code);
      return;
  }
}

const std::optional<Fatbins>& CodeReader::fatbins() const {
  return m->result;
}

FileCode read_file(const std::string& path, elf::ReaderLimits limits) {
  const FileRandomAccess file(path);
  const elf::ReadAt read_at = [&](std::uint64_t offset, std::span<std::byte> out) { file.read_at(offset, out); };
  CodeReader code(file.size(), read_at);
  FileCode out;
  out.binary = elf::read_elf_random(file.size(), read_at, limits, &code);
  out.fatbins = code.fatbins();
  return out;
}

}  // namespace wheelcheck::cuda
