// Fatbins: the GPU code nvcc embeds in an ELF file's `.nv_fatbin` section, read header by header.
//
// The layout, as nvcc 13.0 writes it (every field little-endian; checked against kernels built for known
// -gencode sets, tests/unit/test_fatbin.cpp, and docs/cuda.md):
//   container header, 16 bytes:  u32 magic 0xBA55ED50, u16 version 1, u16 header size (16),
//                                u64 size of the entries that follow;
//   entry, back to back:         u16 kind (1 PTX, 2 ELF/SASS; others are counted, not described),
//                                u16 version, u32 header size (64 and up), u64 payload size,
//                                then at +24 u16 minor and u16 major of the code version (the PTX ISA
//                                for PTX: 9.0; the cubin format for SASS: 1.8), +28 u32 architecture (80 for sm_80),
//                                +40 u64 flags; the payload follows the header.
//   flags:                       0x2000 / 0x8000 compressed payload, 0x100000 architecture-specific
//                                (`a`), 0x200000 family-specific (`f`).
// A linked library holds one container per object file, back to back, sometimes with zero padding.
// Only headers are read: the walker asks for the next header's bytes and skips every payload, so a
// 500 MB cuBLAS costs a few thousand small reads.
#include "inspector/cuda/fatbin.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include "wheelcheck/error.hpp"

namespace wheelcheck::cuda {

namespace {

constexpr std::uint32_t k_magic = 0xBA55ED50;
constexpr std::size_t k_container_header = 16;
constexpr std::size_t k_entry_header_min = 64;
constexpr std::size_t k_entry_header_max = 4096;
constexpr std::size_t k_max_containers = std::size_t{1} << 20;
constexpr std::uint64_t k_flag_compressed = 0x2000 | 0x8000;
constexpr std::uint64_t k_flag_arch_specific = 0x100000;
constexpr std::uint64_t k_flag_family = 0x200000;

template <typename T>
T load(const std::vector<std::byte>& b, std::size_t at) {
  T v{};
  std::memcpy(&v, b.data() + at, sizeof v);  // little-endian hosts only, as the rest of the reader
  return v;
}

std::uint64_t align8(std::uint64_t v) {
  return (v + 7) & ~std::uint64_t{7};
}

void add_variant(std::vector<Variant>& to, const Variant& v) {
  for (auto& have : to) {
    if (have.kind == v.kind && have.arch == v.arch && have.compressed == v.compressed && have.ptx_isa == v.ptx_isa) {
      have.entries += v.entries;
      return;
    }
  }
  to.push_back(v);
}

// Variants alike in kind, architecture, compression and PTX ISA counted together, in Fatbins' order.
class VariantTally {
 public:
  void add(const std::vector<Variant>& vs) {
    for (const auto& v : vs) m_counts[{v.kind, v.arch, v.compressed, v.ptx_isa}] += v.entries;
  }
  std::vector<Variant> sorted() const {
    std::vector<Variant> out;
    for (const auto& [key, n] : m_counts) {
      Variant v;
      std::tie(v.kind, v.arch, v.compressed, v.ptx_isa) = key;
      v.entries = n;
      out.push_back(v);
    }
    return out;
  }

 private:
  std::map<std::tuple<CodeKind, Arch, bool, std::optional<PtxIsa>>, std::uint64_t> m_counts;
};

void keep_newest(std::optional<CubinFormat>& to, const std::optional<CubinFormat>& v) {
  if (v && (!to || *to < *v)) to = v;
}

std::string hex_offset(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

FatbinWalker::FatbinWalker(std::uint64_t begin, std::uint64_t end, bool seeking)
    : m_begin(begin), m_end(end), m_seeking(seeking), m_pos(begin) {
  next_boundary(begin);
}

void FatbinWalker::next_boundary(std::uint64_t at) {
  m_phase = Phase::Boundary;
  m_pos = m_seeking ? align8(at) : at;
  m_buf.clear();
  m_current = {};
  if (m_pos >= m_end) {
    m_pos = m_end;
    m_need = 0;
    return;
  }
  // Directed, a container header is read whole; seeking, one aligned word at a time.
  m_need = static_cast<std::size_t>(std::min<std::uint64_t>(m_seeking ? 8 : k_container_header, m_end - m_pos));
}

void FatbinWalker::reject(const std::string& why) {
  if (m_seeking) {
    next_boundary(wanted());
    return;
  }
  m_failed = true;
  m_failure = why + " at offset " + hex_offset(m_pos - m_begin) + " of the fatbin";
}

void FatbinWalker::feed(std::uint64_t offset, std::span<const std::byte> data) {
  while (!done() && !data.empty()) {
    const std::uint64_t want = wanted();
    if (offset + data.size() <= want) return;
    if (offset < want) {
      data = data.subspan(static_cast<std::size_t>(want - offset));
      offset = want;
    }
    if (offset > want) {
      if (!m_seeking) throw Error(ErrorKind::Internal, "fatbin walker: wanted bytes were skipped");
      next_boundary(offset);
      continue;
    }
    if (m_seeking && m_phase == Phase::Boundary && m_buf.empty()) {
      scan_for_magic(offset, data);
      if (data.empty()) continue;  // else at a magic, or at a word the chunk cuts: gathered below
    }
    const std::size_t take = std::min(wanted_length(), data.size());
    m_buf.insert(m_buf.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(take));
    data = data.subspan(take);
    offset += take;
    if (m_buf.size() == m_need) on_complete();
  }
}

// Seeking: the first 8-byte aligned magic in `data`, without gathering word by word. Leaves `data` at
// the magic (the phase then a container header) or at a word the chunk cuts (gathered next).
void FatbinWalker::scan_for_magic(std::uint64_t& offset, std::span<const std::byte>& data) {
  const std::uint64_t data_end = std::min(offset + data.size(), m_end);
  std::uint64_t p = m_pos;
  // Eight words at a time, without a branch per word (the loop runs over every byte of a streamed
  // member outside its containers), then word by word to place a hit or finish the chunk.
  for (; p + 64 <= data_end; p += 64) {
    const auto* block = data.data() + (p - offset);
    bool hit = false;
    for (int w = 0; w < 8; ++w) {
      std::uint32_t word;
      std::memcpy(&word, block + 8 * w, sizeof word);
      hit |= word == k_magic;
    }
    if (hit) break;
  }
  for (; p + 8 <= data_end; p += 8) {
    std::uint32_t word;
    std::memcpy(&word, data.data() + (p - offset), sizeof word);
    if (word == k_magic) {
      m_pos = p;
      m_phase = Phase::ContainerHeader;
      m_need = k_container_header;
      m_buf.clear();
      data = data.subspan(static_cast<std::size_t>(p - offset));
      offset = p;
      return;
    }
  }
  if (p >= m_end) {
    next_boundary(m_end);
    data = {};
    return;
  }
  m_pos = p;
  m_need = static_cast<std::size_t>(std::min<std::uint64_t>(8, m_end - p));
  data = data.subspan(static_cast<std::size_t>(std::min<std::uint64_t>(p - offset, data.size())));
  offset = p;
}

void FatbinWalker::on_complete() {
  switch (m_phase) {
    case Phase::Boundary: {
      // Zero padding between containers is skipped 8 bytes at a time, keeping the bytes already gathered
      // beyond it (a directed read gathers 16 at once): the walk never steps back over what it consumed.
      for (;;) {
        if (m_buf.size() >= 4 && load<std::uint32_t>(m_buf, 0) == k_magic) {
          m_phase = Phase::ContainerHeader;
          m_need = k_container_header;
          if (m_buf.size() >= m_need) on_complete();
          return;
        }
        const std::size_t step = std::min<std::size_t>(8, m_buf.size());
        const bool zeros = std::all_of(m_buf.begin(), m_buf.begin() + static_cast<std::ptrdiff_t>(step),
                                       [](std::byte b) { return b == std::byte{0}; });
        if (!m_seeking && !zeros && m_buf.size() >= 8) {
          reject("no fatbin container (magic 0xba55ed50) where one should begin");
          return;
        }
        m_buf.erase(m_buf.begin(), m_buf.begin() + static_cast<std::ptrdiff_t>(step));
        m_pos += step;
        if (m_pos >= m_end || step == 0) {
          next_boundary(m_end);
          return;
        }
        m_need = static_cast<std::size_t>(std::min<std::uint64_t>(m_seeking ? 8 : k_container_header, m_end - m_pos));
        if (m_buf.size() < m_need) return;  // gathered on the next bytes
      }
    }
    case Phase::ContainerHeader: {
      const auto version = load<std::uint16_t>(m_buf, 4);
      const auto header = load<std::uint16_t>(m_buf, 6);
      const auto size = load<std::uint64_t>(m_buf, 8);
      if (version != 1 || header < k_container_header || header > 256) {
        reject("a fatbin container of version " + std::to_string(version) + " with a header of " +
               std::to_string(header) + " bytes");
        return;
      }
      if (header > m_end - m_pos || size > m_end - m_pos - header) {
        reject("a fatbin container of " + std::to_string(size) + " bytes runs past its section");
        return;
      }
      if (m_containers.size() >= k_max_containers) {
        m_failed = true;
        m_failure = "more than " + std::to_string(k_max_containers) + " fatbin containers";
        return;
      }
      m_current = Container{m_pos, m_pos + header + size, {}, 0, std::nullopt};
      if (size == 0) {
        m_containers.push_back(std::move(m_current));
        next_boundary(m_pos + header);
        return;
      }
      m_phase = Phase::Entry;
      m_pos += header;
      m_buf.clear();
      m_need = static_cast<std::size_t>(std::min<std::uint64_t>(k_entry_header_min, m_current.end - m_pos));
      return;
    }
    case Phase::Entry: {
      if (m_buf.size() < k_entry_header_min) {
        reject("a fatbin entry header cut short by its container's end");
        return;
      }
      const auto header = load<std::uint32_t>(m_buf, 4);
      const auto payload = load<std::uint64_t>(m_buf, 8);
      if (header < k_entry_header_min || header > k_entry_header_max) {
        reject("a fatbin entry header of " + std::to_string(header) + " bytes");
        return;
      }
      if (header > m_current.end - m_pos || payload > m_current.end - m_pos - header) {
        reject("a fatbin entry of " + std::to_string(payload) + " bytes runs past its container");
        return;
      }
      // Everything described lies in the first 64 bytes; a longer header is skipped with the payload.
      const auto kind = load<std::uint16_t>(m_buf, 0);
      const auto minor = load<std::uint16_t>(m_buf, 24);
      const auto major = load<std::uint16_t>(m_buf, 26);
      const auto arch = load<std::uint32_t>(m_buf, 28);
      const auto flags = load<std::uint64_t>(m_buf, 40);
      ++m_current.entries;
      if (kind == 1 || kind == 2) {
        if (arch < 10 || arch > 999) {
          reject("a fatbin entry for architecture " + std::to_string(arch));
          return;
        }
        Variant v;
        v.kind = kind == 1 ? CodeKind::Ptx : CodeKind::Sass;
        v.arch.major = static_cast<int>(arch / 10);
        v.arch.minor = static_cast<int>(arch % 10);
        v.arch.suffix = (flags & k_flag_arch_specific) != 0 ? 'a' : (flags & k_flag_family) != 0 ? 'f' : 0;
        v.compressed = (flags & k_flag_compressed) != 0;
        if (v.kind == CodeKind::Ptx) v.ptx_isa = PtxIsa{major, minor};
        if (v.kind == CodeKind::Sass) keep_newest(m_current.newest_cubin, CubinFormat{major, minor});
        v.entries = 1;
        add_variant(m_current.variants, v);
      }
      const std::uint64_t next = m_pos + header + payload;
      if (next == m_current.end) {
        const std::uint64_t end = m_current.end;
        m_containers.push_back(std::move(m_current));
        next_boundary(end);
        return;
      }
      m_phase = Phase::Entry;
      m_pos = next;
      m_buf.clear();
      m_need = static_cast<std::size_t>(std::min<std::uint64_t>(k_entry_header_min, m_current.end - m_pos));
      return;
    }
  }
}

Fatbins merge_containers(const std::vector<Container>& containers, std::uint64_t begin, std::uint64_t end) {
  Fatbins f;
  f.section_size = end - begin;
  VariantTally tally;
  std::uint64_t cursor = begin;
  std::uint64_t covered = 0;
  bool tiled = true;
  for (const auto& c : containers) {
    if (c.begin < begin || c.end > end) continue;
    // Containers follow each other, with at most a little zero padding between them.
    if (c.begin < cursor || c.begin - cursor > 64) tiled = false;
    cursor = c.end;
    covered += c.end - c.begin;
    ++f.containers;
    f.entries += c.entries;
    tally.add(c.variants);
    keep_newest(f.newest_cubin, c.newest_cubin);
  }
  if (end - cursor > 64 && cursor < end) tiled = false;
  f.variants = tally.sorted();
  if (!tiled) {
    f.unread = "its fatbin containers could not all be followed (" + std::to_string(f.containers) + " read, " +
               std::to_string(covered) + " of " + std::to_string(end - begin) + " bytes)";
  }
  return f;
}

bool may_hold_loaded_code(std::string_view name, std::uint32_t type, std::uint64_t flags) {
  constexpr std::uint32_t k_sht_nobits = 8;
  constexpr std::uint64_t k_shf_alloc = 0x2;
  return (flags & k_shf_alloc) != 0 && type != k_sht_nobits && name != ".nv_fatbin" && name != "__nv_relfatbin";
}

void add_embedded(Fatbins& f, const std::vector<Container>& containers, const std::vector<SectionSpan>& sections) {
  VariantTally tally;
  tally.add(f.variants);
  auto s = sections.begin();
  for (const auto& c : containers) {  // both ascending
    while (s != sections.end() && s->end <= c.begin) ++s;
    if (s == sections.end()) break;
    if (c.begin < s->begin || c.end > s->end) continue;
    ++f.embedded_containers;
    f.embedded_entries += c.entries;
    // Sections ascend, so a section already named is the last one named.
    if (f.embedded_sections.empty() || f.embedded_sections.back() != s->name) f.embedded_sections.push_back(s->name);
    tally.add(c.variants);
    keep_newest(f.newest_cubin, c.newest_cubin);
  }
  f.variants = tally.sorted();
}

std::vector<Container> seek_containers(const std::vector<SectionSpan>& sections, std::uint64_t file_size,
                                       const std::function<void(std::uint64_t, std::span<std::byte>)>& read_at) {
  constexpr std::uint64_t k_chunk = std::uint64_t{1} << 20;
  FatbinWalker walker(0, file_size, true);
  std::vector<std::byte> buf;
  for (const auto& s : sections) {
    const std::uint64_t end = std::min(s.end, file_size);
    while (!walker.done()) {
      const std::uint64_t at = std::max(s.begin, walker.wanted());
      if (at >= end) break;
      // Between containers every byte is looked at; inside one, only the header it asks for.
      const std::uint64_t len = walker.in_container() && at == walker.wanted()
                                    ? std::min<std::uint64_t>(walker.wanted_length(), end - at)
                                    : std::min(k_chunk, end - at);
      buf.resize(static_cast<std::size_t>(len));
      read_at(at, buf);
      walker.feed(at, buf);
    }
  }
  return walker.containers();
}

Fatbins read_fatbins(std::span<const std::byte> section) {
  FatbinWalker w(0, section.size(), false);
  w.feed(0, section);
  if (!w.failure().empty()) {
    Fatbins f;
    f.section_size = section.size();
    f.unread = w.failure();
    return f;
  }
  return merge_containers(w.containers(), 0, section.size());
}

}  // namespace wheelcheck::cuda
