// The loader's configuration as it lies in an image: etc/ld.so.conf (what ldconfig reads to build the
// cache) and etc/ld.so.cache (what the loader reads at every start).
//
// ld.so.conf follows glibc's ldconfig (elf/ldconfig.c, parse_conf): a line is cut at its first '#' and
// stripped of leading white space; "include" followed by a blank starts a list of glob patterns separated
// by blanks (a relative one is taken from the including file's folder); "hwcap" followed by a blank (in
// any case) is ignored; any other line is one folder, whole: glibc splits it on nothing, cuts a "=TYPE"
// suffix, and drops trailing white space and slashes. glibc neither limits the nesting nor notices an
// include loop (it recurses until it runs out of file descriptors); here a file that is already being
// read is not read again, and the nesting stops at k_max_include_depth, both reported as "malformed-conf".
//
// ld.so.cache comes in three layouts (glibc's sysdeps/generic/dl-cache.h, elf/cache.c):
//   old     "ld.so-1.7.0", padding to 12, uint32 nlibs, nlibs x {int32 flags; uint32 key, value}, then
//           the strings; key and value count from the first byte after the entries.
//   new     "glibc-ld.so.cache" "1.1", uint32 nlibs, uint32 len_strings, uint8 flags (its two low bits
//           give the byte order: 0 unknown, 1 invalid, 2 little, 3 big), 3 padding bytes, uint32
//           extension_offset, 3 unused uint32 (48 bytes in all), then nlibs x {int32 flags; uint32 key,
//           value, osversion; uint64 hwcap} (24 bytes each), then the strings; key and value count from
//           the first byte of this header.
//   compat  an old cache whose string table starts (8-byte aligned after the old entries) with a whole
//           new cache; the loader, and this parser, use the new part.
// The new format's extension directory (at extension_offset, counted from the start of the file) is
// {uint32 magic 0xeaa42174; uint32 count; count x {uint32 tag, flags, offset, size}}, offsets from the
// start of the file. Tag 0 is the generator's version text; tag 1 an array of uint32 string indices
// naming the glibc-hwcaps subfolders, which an entry selects when its hwcap has bit 62 set (and no other
// bit of the high half, besides the 10 ISA-level bits): the low 32 bits are the array index. The loader
// and `ldconfig -p` both read those string indices from the start of the file, whereas ldconfig writes
// them from the start of the new header: in a compat cache the two differ and both print a wrong name.
// This parser reads them as the loader does, so its names are what the loader compares.
//
// Every count, offset and string is checked against the buffer (with 64-bit sums that cannot overflow):
// a malformed cache is an Error(BadInput) naming the field, never a read past the end.

#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include "wheelcheck/error.hpp"
#include "wheelcheck/rootfs.hpp"

namespace wheelcheck::probe {

namespace {

// --- ld.so.conf ---------------------------------------------------------------------------------------

constexpr int k_max_include_depth = 16;
constexpr std::uint64_t k_max_conf_size = std::uint64_t{1} << 20;

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string parent_folder(const std::string& image_path) {
  const auto slash = image_path.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return image_path.substr(0, slash);
}

class ConfReader {
 public:
  ConfReader(const RootFs& root, std::vector<Problem>& findings) : m_root(root), m_findings(findings) {}

  void read(const std::string& path, int depth) {
    std::vector<Problem> notes;  // reported by try_read_file below when the file resolves
    const auto resolved = m_root.resolve(path, &notes);
    if (!resolved) {  // a missing file is skipped quietly, as ldconfig skips it; a loop is reported
      m_findings.insert(m_findings.end(), notes.begin(), notes.end());
      return;
    }
    if (std::find(m_reading.begin(), m_reading.end(), resolved->image_path) != m_reading.end()) {
      std::string chain;
      for (const auto& f : m_reading) chain += f + " -> ";
      m_findings.push_back(
          Problem{"malformed-conf", path, "include loop (" + chain + resolved->image_path + "): not read again"});
      return;
    }
    if (depth > k_max_include_depth) {
      m_findings.push_back(
          Problem{"malformed-conf", path,
                  "includes nested deeper than " + std::to_string(k_max_include_depth) + " levels: not read"});
      return;
    }
    const auto text = m_root.try_read_file(path, m_findings, k_max_conf_size);
    if (!text) return;
    m_out.files.push_back(path);
    m_reading.push_back(resolved->image_path);
    parse(path, *text, depth);
    m_reading.pop_back();
  }

  LdSoConf take() { return std::move(m_out); }

 private:
  void parse(const std::string& path, std::string_view text, int depth) {
    unsigned line_number = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
      const std::size_t nl = text.find('\n', pos);
      const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
      std::string_view line = text.substr(pos, end - pos);
      pos = end + 1;
      ++line_number;
      // ldconfig reads C strings: a NUL ends the line as '#' does.
      line = line.substr(0, line.find_first_of(std::string_view("#\0", 2)));
      while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
      if (line.empty()) continue;

      if (line.size() > 7 && line.substr(0, 7) == "include" && is_blank(line[7])) {
        std::string_view rest = line.substr(8);
        while (!rest.empty()) {
          const std::size_t cut = rest.find_first_of(" \t");
          const std::string_view word = rest.substr(0, cut);
          rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
          if (!word.empty()) include(path, std::string(word), depth);
        }
        continue;
      }
      if (line.size() > 5 && is_blank(line[5]) && ::strncasecmp(line.data(), "hwcap", 5) == 0) continue;
      add_folder(path, line_number, line);
    }
  }

  void include(const std::string& from, const std::string& pattern, int depth) {
    const std::string full = pattern.front() == '/' ? pattern : parent_folder(from) + "/" + pattern;
    for (const auto& file : m_root.glob(full)) read(file, depth + 1);
  }

  void add_folder(const std::string& from, unsigned line_number, std::string_view line) {
    std::string folder(line.substr(0, line.find('=')));
    while (!folder.empty() && is_space(folder.back())) folder.pop_back();
    while (!folder.empty() && folder.back() == '/') folder.pop_back();
    if (folder.empty()) return;  // ldconfig drops "/" this way too
    if (folder.front() != '/') {
      m_findings.push_back(Problem{"malformed-conf", from,
                                   "line " + std::to_string(line_number) + ": relative folder \"" + folder +
                                       "\" ignored (ldconfig would take it from its working folder)"});
      return;
    }
    if (!m_seen.insert(folder).second) return;
    // The same folder under another name (/lib/x86_64-linux-gnu through a /lib -> usr/lib link) is a
    // duplicate too: ldconfig compares device and inode.
    if (const auto r = m_root.resolve(folder); r && r->image_path != folder) {
      if (!m_seen.insert(r->image_path).second) return;
    }
    m_out.dirs.push_back(std::move(folder));
  }

  const RootFs& m_root;
  std::vector<Problem>& m_findings;
  LdSoConf m_out;
  std::set<std::string> m_seen;        // folders as written, and as resolved
  std::vector<std::string> m_reading;  // canonical paths of the files being read, outermost first
};

// --- ld.so.cache --------------------------------------------------------------------------------------

constexpr std::string_view k_old_magic = "ld.so-1.7.0";
constexpr std::string_view k_new_magic = "glibc-ld.so.cache";
constexpr std::string_view k_new_version = "1.1";
constexpr std::uint64_t k_old_header_size = 16;
constexpr std::uint64_t k_old_entry_size = 12;
constexpr std::uint64_t k_new_header_size = 48;
constexpr std::uint64_t k_new_entry_size = 24;
constexpr std::uint32_t k_extension_magic = 0xeaa42174u;
constexpr std::uint64_t k_extension_section_size = 16;
constexpr std::uint32_t k_tag_generator = 0;
constexpr std::uint32_t k_tag_glibc_hwcaps = 1;
constexpr std::uint64_t k_hwcap_extension = std::uint64_t{1} << 62;
constexpr std::uint64_t k_hwcap_isa_level_mask = (std::uint64_t{1} << 10) - 1;

enum class Endian { Little, Big };

// Bounds-checked reads from the cache bytes; every failure names the field.
class CacheBytes {
 public:
  CacheBytes(std::string_view bytes, Endian endian) : m_bytes(bytes), m_endian(endian) {}
  std::uint64_t size() const { return m_bytes.size(); }
  void set_endian(Endian e) { m_endian = e; }
  Endian endian() const { return m_endian; }

  void need(std::uint64_t off, std::uint64_t len, const std::string& what) const {
    if (off > m_bytes.size() || len > m_bytes.size() - off) {
      throw bad_input("ld.so.cache: " + what + " at offset " + std::to_string(off) + " (" + std::to_string(len) +
                      " bytes) runs past the end of the " + std::to_string(m_bytes.size()) + "-byte file");
    }
  }
  std::uint8_t u8(std::uint64_t off, const std::string& what) const {
    need(off, 1, what);
    return static_cast<std::uint8_t>(m_bytes[static_cast<std::size_t>(off)]);
  }
  std::uint32_t u32(std::uint64_t off, const std::string& what) const { return u32_as(off, m_endian, what); }
  std::uint32_t u32_as(std::uint64_t off, Endian endian, const std::string& what) const {
    need(off, 4, what);
    return static_cast<std::uint32_t>(uint_at(static_cast<std::size_t>(off), 4, endian));
  }
  std::int32_t i32(std::uint64_t off, const std::string& what) const {
    const std::uint32_t u = u32(off, what);
    std::int32_t v;
    std::memcpy(&v, &u, sizeof v);
    return v;
  }
  std::uint64_t u64(std::uint64_t off, const std::string& what) const {
    need(off, 8, what);
    return uint_at(static_cast<std::size_t>(off), 8, m_endian);
  }
  bool matches(std::uint64_t off, std::string_view text) const {
    return off <= m_bytes.size() && text.size() <= m_bytes.size() - off &&
           m_bytes.substr(static_cast<std::size_t>(off), text.size()) == text;
  }
  // A NUL-terminated string wholly inside the buffer.
  std::string c_string(std::uint64_t off, const std::string& what) const {
    if (off >= m_bytes.size()) {
      throw bad_input("ld.so.cache: " + what + " string offset " + std::to_string(off) + " lies outside the " +
                      std::to_string(m_bytes.size()) + "-byte file");
    }
    const auto start = static_cast<std::size_t>(off);
    const std::size_t nul = m_bytes.find('\0', start);
    if (nul == std::string_view::npos) {
      throw bad_input("ld.so.cache: " + what + " string at offset " + std::to_string(off) +
                      " is not terminated before the end of the file");
    }
    return std::string(m_bytes.substr(start, nul - start));
  }
  std::string bytes(std::uint64_t off, std::uint64_t len, const std::string& what) const {
    need(off, len, what);
    return std::string(m_bytes.substr(static_cast<std::size_t>(off), static_cast<std::size_t>(len)));
  }

 private:
  std::uint64_t uint_at(std::size_t off, std::size_t len, Endian endian) const {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < len; ++i) {
      const auto byte = static_cast<std::uint8_t>(m_bytes[off + (endian == Endian::Little ? len - 1 - i : i)]);
      v = (v << 8) | byte;
    }
    return v;
  }

  std::string_view m_bytes;
  Endian m_endian;
};

bool count_fits(std::uint64_t file_size, std::uint64_t start, std::uint64_t entry_size, std::uint64_t count) {
  return start <= file_size && count <= (file_size - start) / entry_size;
}

// The byte order of a header whose count is at `count_off`: the one under which the entries fit in the
// file, little-endian when both do (or neither: the caller's check then reports the little-endian count).
Endian guess_endian(const CacheBytes& in, std::uint64_t count_off, std::uint64_t entries_off,
                    std::uint64_t entry_size) {
  const bool little = count_fits(in.size(), entries_off, entry_size, in.u32_as(count_off, Endian::Little, "nlibs"));
  const bool big = count_fits(in.size(), entries_off, entry_size, in.u32_as(count_off, Endian::Big, "nlibs"));
  return !little && big ? Endian::Big : Endian::Little;
}

std::uint64_t align8(std::uint64_t v) {
  return (v + 7) & ~std::uint64_t{7};
}

// The new-format cache whose header starts at `base` (0, or inside a compat cache's old string table).
void parse_new(CacheBytes& in, std::uint64_t base, bool endian_known, LdSoCache& out) {
  in.need(base, k_new_header_size, "new-format header");
  const std::uint8_t flags = in.u8(base + 28, "header flags");
  switch (flags & 3u) {
    case 0:  // written by a glibc older than 2.33: the order is the writer's, guessed from the count
      if (!endian_known) in.set_endian(guess_endian(in, base + 20, base + k_new_header_size, k_new_entry_size));
      break;
    case 1: throw bad_input("ld.so.cache: the header marks the cache invalid (byte-order flag 1)");
    case 2:
    case 3: {
      const Endian e = (flags & 3u) == 2 ? Endian::Little : Endian::Big;
      if (endian_known && e != in.endian()) {
        throw bad_input("ld.so.cache: the old and new parts of the compat cache disagree on the byte order");
      }
      in.set_endian(e);
      break;
    }
  }

  const std::uint32_t nlibs = in.u32(base + 20, "nlibs");
  const std::uint64_t entries = base + k_new_header_size;
  if (!count_fits(in.size(), entries, k_new_entry_size, nlibs)) {
    throw bad_input("ld.so.cache: nlibs " + std::to_string(nlibs) + " entries of " + std::to_string(k_new_entry_size) +
                    " bytes do not fit in the " + std::to_string(in.size()) + "-byte file");
  }

  // The extension directory: the generator and the glibc-hwcaps names.
  std::vector<std::uint32_t> hwcaps_index;
  const std::uint32_t ext = in.u32(base + 32, "extension_offset");
  if (ext != 0) {
    if (ext % 4 != 0) throw bad_input("ld.so.cache: extension_offset " + std::to_string(ext) + " is not aligned to 4");
    if (in.u32(ext, "extension magic") != k_extension_magic) {
      throw bad_input("ld.so.cache: no extension directory at extension_offset " + std::to_string(ext));
    }
    const std::uint32_t count = in.u32(ext + 4, "extension count");
    in.need(ext + 8, std::uint64_t{count} * k_extension_section_size, "extension directory");
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint64_t d = ext + 8 + std::uint64_t{i} * k_extension_section_size;
      const std::uint32_t tag = in.u32(d, "extension tag");
      const std::uint32_t offset = in.u32(d + 8, "extension offset");
      const std::uint32_t size = in.u32(d + 12, "extension size");
      in.need(offset, size, "extension section " + std::to_string(i));
      if (tag == k_tag_generator) {
        out.generator = in.bytes(offset, size, "generator");
      } else if (tag == k_tag_glibc_hwcaps && size != 0 && size % 4 == 0 && offset % 4 == 0) {
        // (glibc ignores a glibc-hwcaps section that is empty or misaligned; so does this.)
        hwcaps_index.clear();
        for (std::uint64_t j = 0; j < size / 4; ++j) hwcaps_index.push_back(in.u32(offset + 4 * j, "hwcaps index"));
      }
    }
  }

  out.entries.reserve(nlibs);
  for (std::uint32_t i = 0; i < nlibs; ++i) {
    const std::uint64_t e = entries + std::uint64_t{i} * k_new_entry_size;
    const std::string which = "entry " + std::to_string(i);
    CacheEntry entry;
    entry.flags = in.i32(e, which + " flags");
    entry.soname = in.c_string(base + in.u32(e + 4, which + " key"), which + " key");
    entry.path = in.c_string(base + in.u32(e + 8, which + " value"), which + " value");
    entry.hwcap = in.u64(e + 16, which + " hwcap");
    entry.arch = cache_flags_name(entry.flags);
    if (((entry.hwcap >> 32) & ~k_hwcap_isa_level_mask) == (k_hwcap_extension >> 32)) {
      const auto index = static_cast<std::uint32_t>(entry.hwcap);
      if (index < hwcaps_index.size() && hwcaps_index[index] < in.size()) {
        entry.hwcaps = in.c_string(hwcaps_index[index], which + " glibc-hwcaps name");
      }
    }
    out.entries.push_back(std::move(entry));
  }
}

}  // namespace

LdSoConf read_ld_so_conf(const RootFs& root, std::vector<Problem>& findings, std::string_view conf_path) {
  ConfReader reader(root, findings);
  reader.read(std::string(conf_path), 0);
  return reader.take();
}

std::string cache_flags_name(std::int32_t flags) {
  // As `ldconfig -p` prints them (glibc elf/cache.c, print_entry): the library type, then the ABI.
  std::string out;
  switch (flags & 0xff) {
    case 0: out = "libc4"; break;
    case 1: out = "ELF"; break;
    case 2: out = "libc5"; break;
    case 3: out = "libc6"; break;
    default: out = "unknown"; break;
  }
  const int abi = flags & 0xff00;
  switch (abi) {
    case 0: break;
    case 0x0100: out += ",64bit"; break;  // SPARC
    case 0x0200: out += ",IA-64"; break;
    case 0x0300: out += ",x86-64"; break;
    case 0x0400: out += ",64bit"; break;  // s390x
    case 0x0500: out += ",64bit"; break;  // ppc64
    case 0x0600: out += ",N32"; break;    // MIPS n32
    case 0x0700: out += ",64bit"; break;  // MIPS n64
    case 0x0800: out += ",x32"; break;
    case 0x0900: out += ",hard-float"; break;  // ARM
    case 0x0a00: out += ",AArch64"; break;
    case 0x0b00: out += ",soft-float"; break;  // ARM
    case 0x0c00: out += ",nan2008"; break;
    case 0x0d00: out += ",N32,nan2008"; break;
    case 0x0e00: out += ",64bit,nan2008"; break;
    case 0x0f00: out += ",soft-float"; break;  // RISC-V
    case 0x1000:
      out += ",double-float";
      break;  // RISC-V
    // LoongArch (glibc 2.36): named as RISC-V's are. glibc 2.36's `ldconfig -p` has no words for them
    // yet and prints ",4352" and ",4608".
    case 0x1100: out += ",soft-float"; break;
    case 0x1200: out += ",double-float"; break;
    default: out += "," + std::to_string(abi); break;
  }
  return out;
}

LdSoCache parse_ld_so_cache(std::string_view bytes) {
  CacheBytes in(bytes, Endian::Little);
  LdSoCache out;
  if (bytes.empty()) throw bad_input("ld.so.cache: the file is empty");

  if (in.matches(0, k_old_magic)) {
    in.need(0, k_old_header_size, "old-format header");
    in.set_endian(guess_endian(in, 12, k_old_header_size, k_old_entry_size));
    const std::uint32_t nlibs = in.u32(12, "nlibs");
    if (!count_fits(in.size(), k_old_header_size, k_old_entry_size, nlibs)) {
      throw bad_input("ld.so.cache: nlibs " + std::to_string(nlibs) + " old-format entries of " +
                      std::to_string(k_old_entry_size) + " bytes do not fit in the " + std::to_string(in.size()) +
                      "-byte file");
    }
    const std::uint64_t strings = k_old_header_size + std::uint64_t{nlibs} * k_old_entry_size;
    const std::uint64_t new_base = align8(strings);
    // As the loader does: a new cache right after the old entries is used in their place.
    if (in.matches(new_base, std::string(k_new_magic) + std::string(k_new_version)) &&
        count_fits(in.size(), new_base, k_new_header_size, 1)) {
      out.format = "compat";
      parse_new(in, new_base, true, out);
      return out;
    }
    out.format = "old";
    out.entries.reserve(nlibs);
    for (std::uint32_t i = 0; i < nlibs; ++i) {
      const std::uint64_t e = k_old_header_size + std::uint64_t{i} * k_old_entry_size;
      const std::string which = "entry " + std::to_string(i);
      CacheEntry entry;
      entry.flags = in.i32(e, which + " flags");
      entry.soname = in.c_string(strings + in.u32(e + 4, which + " key"), which + " key");
      entry.path = in.c_string(strings + in.u32(e + 8, which + " value"), which + " value");
      entry.arch = cache_flags_name(entry.flags);
      out.entries.push_back(std::move(entry));
    }
    return out;
  }

  if (in.matches(0, k_new_magic)) {
    if (!in.matches(k_new_magic.size(), k_new_version)) {
      in.need(k_new_magic.size(), k_new_version.size(), "version");
      throw bad_input("ld.so.cache: unsupported version \"" + in.bytes(k_new_magic.size(), 3, "version") +
                      "\" (only 1.1 is known)");
    }
    out.format = "new";
    parse_new(in, 0, false, out);
    return out;
  }
  throw bad_input("ld.so.cache: not a cache file (neither \"ld.so-1.7.0\" nor \"glibc-ld.so.cache1.1\" magic)");
}

LdSoCache read_ld_so_cache(const RootFs& root, std::vector<Problem>& findings, std::string_view cache_path) {
  LdSoCache none;
  none.format = "none";
  const auto bytes = root.try_read_file(cache_path, findings);
  if (!bytes) return none;
  try {
    return parse_ld_so_cache(*bytes);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) throw;
    findings.push_back(Problem{"malformed-cache", std::string(cache_path), e.what()});
    return none;
  }
}

}  // namespace wheelcheck::probe
