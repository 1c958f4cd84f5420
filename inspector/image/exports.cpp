// Export tables: built from an ELF model, written as gzip text, loaded back without copying a name.
//
// Storage. A table owns one contiguous character buffer and a vector of Export records whose name and
// version are views into it. For a loaded table the buffer is the decompressed file itself (each view
// points at the bytes between two tabs of a line); for a table built from an ELF it is the names and
// versions laid end to end. Both live in Table::Storage behind a unique_ptr, so moving a Table moves a
// pointer and every view stays valid.
//
// Lookup. The records are sorted by (name, version), bytewise (std::string_view's ordering, which
// compares as unsigned char). find() is an equal_range on the name alone, with_prefix() a lower_bound on
// the prefix followed by a partition_point over the names that still start with it, and bind() a scan of
// find()'s few entries under the rule documented in the header.
//
// Writing. The text is compressed with zlib (level 9, memLevel 9, a gzip wrapper whose header we set: mtime
// 0, OS 3), so the same table always gives the same bytes with the same zlib.
//
// Loading. ISA-L's igzip inflates the whole member (it parses the gzip header and checks the CRC-32; we
// check ISIZE and that nothing follows the member) into one buffer that grows, from the size the trailer
// announces, up to k_max_table_text bytes and never further: a gzip bomb stops at 64 MB and is refused.
// The lines are then split in place with memchr and checked (magic, header lines in their order, flags,
// strict ordering, which also rules out duplicates, the count); every failure names the line.

#include "wheelcheck/exports.hpp"

#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <tuple>

#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::exports {

struct Table::Storage {
  std::string text;  // the decompressed file, or the names and versions end to end
  std::vector<Export> exports;
};

namespace {

constexpr std::string_view k_magic = "#wheelcheck-exports 1";
constexpr std::string_view k_magic_prefix = "#wheelcheck-exports ";
constexpr std::string_view k_no_soname = "-";
constexpr std::string_view k_type_letters = "FOTINCX";
constexpr std::string_view k_binding_letters = "GWUL";

bool export_less(const Export& a, const Export& b) {
  const int c = a.name.compare(b.name);
  return c != 0 ? c < 0 : a.version < b.version;
}

// Orders exports against a bare name, for equal_range.
struct NameLess {
  bool operator()(const Export& e, std::string_view name) const { return e.name < name; }
  bool operator()(std::string_view name, const Export& e) const { return name < e.name; }
};

char type_letter(elf::SymbolType type) {
  switch (type) {
    case elf::SymbolType::Func: return 'F';
    case elf::SymbolType::Object: return 'O';
    case elf::SymbolType::Tls: return 'T';
    case elf::SymbolType::GnuIfunc: return 'I';
    case elf::SymbolType::NoType: return 'N';
    case elf::SymbolType::Common: return 'C';
    default: return 'X';
  }
}

char binding_letter(elf::Binding binding) {
  switch (binding) {
    case elf::Binding::Global: return 'G';
    case elf::Binding::Weak: return 'W';
    case elf::Binding::GnuUnique: return 'U';
    default: return 'L';
  }
}

// The rule of the header comment: what `nm -D --defined-only` prints.
bool listed(const elf::Symbol& s) {
  return s.defined && s.type != elf::SymbolType::Section && s.type != elf::SymbolType::File && !s.name.empty();
}

void check_storable(std::string_view value, std::string_view field, const std::string& library) {
  if (value.find_first_of(std::string_view("\t\n\0", 3)) != std::string_view::npos) {
    throw bad_input(library + ": " + std::string(field) + " '" + std::string(value.substr(0, 80)) +
                    "' contains a tab, newline or NUL, which an export table cannot hold");
  }
}

std::string gzip(std::string_view text) {
  if (text.size() > k_max_table_text) {
    throw bad_input("export table text of " + std::to_string(text.size()) + " bytes is over the limit of " +
                    format_size(k_max_table_text));
  }
  z_stream z{};
  if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw Error(ErrorKind::Internal, "zlib deflateInit2 failed");
  }
  gz_header header{};
  header.time = 0;
  header.os = 3;  // Unix, whatever the platform: the bytes must not depend on it
  deflateSetHeader(&z, &header);
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
  z.next_in = reinterpret_cast<const Bytef*>(text.data());
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const auto produced = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw Error(ErrorKind::Internal, "zlib deflate failed (" + std::to_string(rc) + ")");
  out.resize(produced);
  return out;
}

std::uint32_t le32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// One gzip member, whole, into at most k_max_table_text bytes.
std::string gunzip(std::string_view gz, const std::string& what) {
  constexpr std::size_t k_min_gzip = 18;  // 10 bytes of header, an empty final block, 8 of trailer
  if (gz.size() < k_min_gzip) {
    throw bad_input(what + ": not a gzip file: " + std::to_string(gz.size()) + " bytes, fewer than any gzip member");
  }
  const auto* in = reinterpret_cast<const unsigned char*>(gz.data());
  if (in[0] != 0x1f || in[1] != 0x8b) throw bad_input(what + ": not a gzip file: no 1f 8b magic");
  if (gz.size() > k_max_table_text) {
    throw bad_input(what + ": gzip file of " + std::to_string(gz.size()) + " bytes is over the limit of " +
                    format_size(k_max_table_text));
  }
  // The trailer's ISIZE is a hint only: a lying one costs a reallocation, never more than the cap.
  const std::size_t hint = le32(in + gz.size() - 4);
  std::string out(std::clamp<std::size_t>(hint, 4096, k_max_table_text + 1), '\0');

  auto state = std::make_unique<inflate_state>();
  isal_inflate_init(state.get());
  state->crc_flag = ISAL_GZIP;
  state->next_in = const_cast<std::uint8_t*>(in);  // ISA-L's API is not const-correct; it only reads
  state->avail_in = static_cast<std::uint32_t>(gz.size());
  state->next_out = reinterpret_cast<std::uint8_t*>(out.data());
  state->avail_out = static_cast<std::uint32_t>(out.size());
  for (;;) {
    const auto in_before = state->avail_in;
    const auto out_before = state->avail_out;
    const int rc = isal_inflate(state.get());
    if (rc < 0 || rc == ISAL_NEED_DICT) {
      throw bad_input(what + ": corrupt gzip data (ISA-L error " + std::to_string(rc) +
                      (rc == ISAL_INCORRECT_CHECKSUM ? ", CRC-32 mismatch)" : ")"));
    }
    if (state->block_state == ISAL_BLOCK_FINISH) break;
    if (state->avail_out == 0) {
      const std::size_t produced = out.size();
      if (produced > k_max_table_text) {
        throw bad_input(what + ": inflates to more than " + format_size(k_max_table_text) +
                        " of text (the limit for an export table; a gzip bomb?)");
      }
      out.resize(std::min(produced * 2, k_max_table_text + 1));
      state->next_out = reinterpret_cast<std::uint8_t*>(out.data() + produced);
      state->avail_out = static_cast<std::uint32_t>(out.size() - produced);
    } else if (state->avail_in == 0) {
      throw bad_input(what + ": truncated gzip file (it ends before its deflate stream and trailer do)");
    } else if (state->avail_in == in_before && state->avail_out == out_before) {
      throw bad_input(what + ": corrupt gzip data (the inflater makes no progress)");
    }
  }
  const std::size_t produced = out.size() - state->avail_out;
  if (produced > k_max_table_text) {
    throw bad_input(what + ": inflates to more than " + format_size(k_max_table_text) +
                    " of text (the limit for an export table; a gzip bomb?)");
  }
  if (state->avail_in != 0) {
    throw bad_input(what + ": " + std::to_string(state->avail_in) +
                    " bytes follow the gzip member (a second member or trailing garbage; one member is allowed)");
  }
  if (le32(in + gz.size() - 4) != static_cast<std::uint32_t>(produced)) {
    throw bad_input(what + ": gzip trailer's size (ISIZE) does not match the inflated data");
  }
  out.resize(produced);
  return out;
}

// Splits the text into lines, numbered from 1, and turns every failure into bad_input with the number.
class LineParser {
 public:
  LineParser(std::string_view text, std::string_view what) : m_text(text), m_what(what) {}

  bool at_end() const { return m_pos == m_text.size(); }
  std::size_t line_number() const { return m_line; }
  std::size_t lines_left() const {
    return static_cast<std::size_t>(
        std::count(m_text.begin() + static_cast<std::ptrdiff_t>(m_pos), m_text.end(), '\n'));
  }

  std::string_view next() {
    const char* begin = m_text.data() + m_pos;
    const auto* nl = static_cast<const char*>(std::memchr(begin, '\n', m_text.size() - m_pos));
    ++m_line;
    if (nl == nullptr) fail("the last line has no newline");
    const auto len = static_cast<std::size_t>(nl - begin);
    m_pos += len + 1;
    return {begin, len};
  }

  // The value of "#key value"; the next line must be it.
  std::string_view field(std::string_view key) {
    if (at_end()) fail("the file ends before its #" + std::string(key) + " line");
    const auto line = next();
    if (line.size() < key.size() + 2 || line[0] != '#' || line.substr(1, key.size()) != key ||
        line[key.size() + 1] != ' ') {
      fail("expected #" + std::string(key) + ", found " + quoted(line));
    }
    return line.substr(key.size() + 2);
  }

  [[noreturn]] void fail(const std::string& reason) const { fail_at(reason, m_line); }
  [[noreturn]] void fail_at(const std::string& reason, std::size_t line) const {
    throw bad_input(std::string(m_what) + ": " + reason + " (line " + std::to_string(line) + ")");
  }

  static std::string quoted(std::string_view line) {
    constexpr std::size_t k_shown = 60;
    return "'" + std::string(line.substr(0, k_shown)) + (line.size() > k_shown ? "...'" : "'");
  }

 private:
  std::string_view m_text;
  std::string_view m_what;
  std::size_t m_pos = 0;
  std::size_t m_line = 0;
};

std::size_t parse_count(std::string_view digits, const LineParser& lines) {
  std::size_t value = 0;
  const auto* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (digits.empty() || ec != std::errc() || ptr != end || (digits.size() > 1 && digits[0] == '0')) {
    lines.fail("#count is not a decimal number: " + LineParser::quoted(digits));
  }
  return value;
}

// "<type><binding>[h]" into the export; the version must be present for 'h'.
void parse_flags(std::string_view flags, Export& e, const LineParser& lines) {
  if (flags.size() < 2 || flags.size() > 3) {
    lines.fail("flags " + LineParser::quoted(flags) + " are not <type><binding>[h]");
  }
  if (k_type_letters.find(flags[0]) == std::string_view::npos) {
    lines.fail("unknown type letter " + LineParser::quoted(flags.substr(0, 1)) + " (one of " +
               std::string(k_type_letters) + ")");
  }
  if (k_binding_letters.find(flags[1]) == std::string_view::npos) {
    lines.fail("unknown binding letter " + LineParser::quoted(flags.substr(1, 1)) + " (one of " +
               std::string(k_binding_letters) + ")");
  }
  e.type = flags[0];
  e.binding = flags[1];
  if (flags.size() == 3) {
    if (flags[2] != 'h') lines.fail("unknown flag " + LineParser::quoted(flags.substr(2, 1)) + " (only h)");
    if (e.version.empty()) lines.fail("flag h (hidden version) on a symbol without a version");
    e.hidden = true;
  }
}

// "<name>\t<version>\t<file>\t<type>" of an #undefined line, appended in order.
void parse_import(std::string_view rest, std::vector<Import>& imports, const LineParser& lines) {
  std::string_view parts[4];
  for (int i = 0; i < 3; ++i) {
    const auto tab = rest.find('\t');
    if (tab == std::string_view::npos)
      lines.fail("expected #undefined <name>\\t<version>\\t<library>\\t<type>, found " + LineParser::quoted(rest));
    parts[i] = rest.substr(0, tab);
    rest.remove_prefix(tab + 1);
  }
  parts[3] = rest;
  if (parts[0].empty()) lines.fail("empty symbol name");
  if (parts[3].size() != 1 || k_type_letters.find(parts[3][0]) == std::string_view::npos)
    lines.fail("unknown type letter " + LineParser::quoted(parts[3]) + " (one of " + std::string(k_type_letters) + ")");
  if (parts[1].empty() != parts[2].empty()) lines.fail("an undefined symbol's version and library go together");
  Import i{parts[0], parts[1], parts[2], parts[3][0]};
  if (!imports.empty() && std::tie(imports.back().name, imports.back().version) >= std::tie(i.name, i.version))
    lines.fail("undefined symbols not sorted, or repeated: " + LineParser::quoted(i.name));
  imports.push_back(std::move(i));
}

}  // namespace

Table::Table() = default;
Table::~Table() = default;
Table::Table(Table&&) noexcept = default;
Table& Table::operator=(Table&&) noexcept = default;

std::span<const Export> Table::symbols() const {
  if (!m_storage) return {};
  return m_storage->exports;
}

std::span<const Export> Table::find(std::string_view name) const {
  const auto all = symbols();
  const auto [first, last] = std::equal_range(all.begin(), all.end(), name, NameLess{});
  return {first, last};
}

const Export* Table::bind(std::string_view name, std::string_view version) const {
  const auto candidates = find(name);
  const Export* fallback = nullptr;
  for (const auto& e : candidates) {
    if (!e.bindable()) continue;
    if (!version.empty()) {
      if (e.version == version) return &e;
    } else if (e.version.empty()) {
      return &e;
    } else if (!e.hidden && fallback == nullptr) {
      fallback = &e;
    }
  }
  return fallback;
}

bool Table::defines_version(std::string_view version) const {
  return std::find(version_definitions.begin(), version_definitions.end(), version) != version_definitions.end();
}

std::span<const Export> Table::with_prefix(std::string_view prefix) const {
  const auto all = symbols();
  const auto first = std::lower_bound(all.begin(), all.end(), prefix, NameLess{});
  const auto last =
      std::partition_point(first, all.end(), [prefix](const Export& e) { return e.name.starts_with(prefix); });
  return {first, last};
}

Table Table::from_binary(const elf::Binary& binary, std::string library, std::string source) {
  Table table;
  table.library = std::move(library);
  table.soname = binary.soname.value_or("");
  table.machine = elf::machine_name(binary.machine, binary.elf_class, binary.endian, binary.e_flags);
  table.elf_class = binary.elf_class == elf::Class::Elf32 ? 32 : 64;
  table.source = std::move(source);
  check_storable(table.library, "library name", table.library);
  check_storable(table.soname, "soname", table.library);
  check_storable(table.machine, "machine", table.library);
  check_storable(table.source, "source", table.library);
  for (const auto& d : binary.version_definitions) {
    check_storable(d.name, "version definition", table.library);
    table.version_definitions.push_back(d.name);
  }

  // The undefined symbols, laid end to end in the storage below with the exports; views once it is built.
  struct PendingImport {
    std::size_t at, name, version, file;
    char type;
  };
  std::vector<PendingImport> pending_imports;
  auto storage = std::make_unique<Storage>();
  for (const auto& s : binary.symbols) {
    if (s.defined || s.weak() || s.name.empty() || s.type == elf::SymbolType::Section ||
        s.type == elf::SymbolType::File)
      continue;
    check_storable(s.name, "symbol name", table.library);
    check_storable(s.version, "version", table.library);
    check_storable(s.version_file, "version file", table.library);
    const std::string_view file = s.version.empty() ? std::string_view() : std::string_view(s.version_file);
    pending_imports.push_back(
        {storage->text.size(), s.name.size(), s.version.size(), file.size(), type_letter(s.type)});
    storage->text += s.name;
    storage->text += s.version;
    storage->text += file;
  }
  // First the bytes, then the views: the buffer no longer moves once they are taken.
  struct Pending {
    std::size_t name_at, name_size, version_at, version_size;
    bool hidden;
    char type, binding;
  };
  std::vector<Pending> pending;
  for (const auto& s : binary.symbols) {
    if (!listed(s)) continue;
    check_storable(s.name, "symbol name", table.library);
    // nm prints a version-definition symbol (name == the version it defines) without a version.
    const bool from_need = !s.version_file.empty();
    const bool versioned = !s.version.empty() && (from_need || s.version != s.name);
    Pending p{};
    p.name_at = storage->text.size();
    p.name_size = s.name.size();
    p.hidden = versioned && (s.version_hidden || from_need);  // nm's single '@'
    p.type = type_letter(s.type);
    p.binding = binding_letter(s.binding);
    storage->text += s.name;
    if (versioned) {
      check_storable(s.version, "version", table.library);
      p.version_at = storage->text.size();
      p.version_size = s.version.size();
      storage->text += s.version;
    }
    pending.push_back(p);
  }
  const std::string_view text = storage->text;
  for (const auto& p : pending_imports) {
    table.imports.push_back({text.substr(p.at, p.name), text.substr(p.at + p.name, p.version),
                             text.substr(p.at + p.name + p.version, p.file), p.type});
  }
  std::sort(table.imports.begin(), table.imports.end(),
            [](const Import& a, const Import& b) { return std::tie(a.name, a.version) < std::tie(b.name, b.version); });
  table.imports.erase(
      std::unique(table.imports.begin(), table.imports.end(),
                  [](const Import& a, const Import& b) { return a.name == b.name && a.version == b.version; }),
      table.imports.end());
  table.imports_known = true;
  storage->exports.reserve(pending.size());
  for (const auto& p : pending) {
    storage->exports.push_back(Export{text.substr(p.name_at, p.name_size), text.substr(p.version_at, p.version_size),
                                      p.hidden, p.type, p.binding});
  }
  // A repeated (name, version) only happens in a malformed .dynsym: the first one stays.
  auto& exports = storage->exports;
  std::stable_sort(exports.begin(), exports.end(), export_less);
  exports.erase(
      std::unique(exports.begin(), exports.end(),
                  [](const Export& a, const Export& b) { return a.name == b.name && a.version == b.version; }),
      exports.end());
  table.m_storage = std::move(storage);
  return table;
}

std::string table_text(const Table& table) {
  const auto symbols = table.symbols();
  std::size_t size = 256 + table.library.size() + table.source.size() + table.soname.size();
  for (const auto& v : table.version_definitions) size += v.size() + 9;
  for (const auto& e : symbols) size += e.name.size() + e.version.size() + 6;
  std::string out;
  out.reserve(size);
  auto line = [&out](std::string_view key, std::string_view value) {
    out += '#';
    out += key;
    out += ' ';
    out += value;
    out += '\n';
  };
  out += k_magic;
  out += '\n';
  line("library", table.library);
  line("soname", table.soname.empty() ? k_no_soname : std::string_view(table.soname));
  line("machine", table.machine);
  line("class", std::to_string(table.elf_class));
  line("source", table.source);
  for (const auto& v : table.version_definitions) line("verdef", v);
  if (table.imports_known) {
    out += "#undefined-known\n";
    for (const auto& i : table.imports) {
      out += "#undefined ";
      out += i.name;
      out += '\t';
      out += i.version;
      out += '\t';
      out += i.file;
      out += '\t';
      out += i.type;
      out += '\n';
    }
  }
  line("count", std::to_string(symbols.size()));
  for (const auto& e : symbols) {
    out += e.name;
    out += '\t';
    out += e.version;
    out += '\t';
    out += e.type;
    out += e.binding;
    if (e.hidden) out += 'h';
    out += '\n';
  }
  return out;
}

std::string serialize_table(const Table& table) {
  return gzip(table_text(table));
}

Table parse_table(std::string_view gzip_bytes, std::string_view what) {
  const std::string name(what);
  auto storage = std::make_unique<Table::Storage>();
  storage->text = gunzip(gzip_bytes, name);
  const std::string_view text = storage->text;
  LineParser lines(text, what);

  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    lines.fail_at(
        "NUL byte in the text",
        1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n')));
  }
  if (text.empty()) lines.fail_at("empty file: no #wheelcheck-exports magic line", 1);
  if (text.back() != '\n') {
    lines.fail_at("the last line has no newline",
                  1 + static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')));
  }
  const auto magic = lines.next();
  if (magic != k_magic) {
    if (magic.starts_with(k_magic_prefix)) {
      lines.fail("unsupported format version " + LineParser::quoted(magic.substr(k_magic_prefix.size())) +
                 " (this wheelcheck reads version 1)");
    }
    lines.fail("missing the #wheelcheck-exports magic line, found " + LineParser::quoted(magic));
  }

  Table table;
  table.library = lines.field("library");
  const auto soname = lines.field("soname");
  table.soname = soname == k_no_soname ? "" : std::string(soname);
  table.machine = lines.field("machine");
  const auto elf_class = lines.field("class");
  if (elf_class != "64" && elf_class != "32")
    lines.fail("#class is neither 64 nor 32: " + LineParser::quoted(elf_class));
  table.elf_class = elf_class == "32" ? 32 : 64;
  table.source = lines.field("source");
  std::size_t count = 0;
  for (;;) {
    if (lines.at_end()) lines.fail_at("the file ends before its #count line", lines.line_number() + 1);
    const auto line = lines.next();
    if (line.starts_with("#verdef ")) {
      if (table.imports_known) lines.fail("#verdef after #undefined-known");
      table.version_definitions.emplace_back(line.substr(8));
    } else if (line == "#undefined-known") {
      if (table.imports_known) lines.fail("a second #undefined-known line");
      table.imports_known = true;
    } else if (line.starts_with("#undefined ")) {
      if (!table.imports_known) lines.fail("#undefined before #undefined-known");
      parse_import(line.substr(11), table.imports, lines);
    } else if (line.starts_with("#count ")) {
      count = parse_count(line.substr(7), lines);
      break;
    } else {
      lines.fail("expected #verdef, #undefined or #count, found " + LineParser::quoted(line));
    }
  }

  // Every remaining line is a symbol line (a name may start with '#'); the text ends in '\n', so the
  // newlines left are the lines left.
  const std::size_t count_line = lines.line_number();
  const std::size_t remaining = lines.lines_left();
  if (remaining != count) {
    lines.fail_at(
        "#count says " + std::to_string(count) + " symbols, but " + std::to_string(remaining) + " symbol lines follow",
        count_line);
  }

  auto& exports = storage->exports;
  exports.reserve(count);
  while (!lines.at_end()) {
    const auto line = lines.next();
    const auto tab1 = line.find('\t');
    const auto tab2 = tab1 == std::string_view::npos ? tab1 : line.find('\t', tab1 + 1);
    if (tab2 == std::string_view::npos)
      lines.fail("expected <name>\\t<version>\\t<flags>, found " + LineParser::quoted(line));
    Export e;
    e.name = line.substr(0, tab1);
    e.version = line.substr(tab1 + 1, tab2 - tab1 - 1);
    if (e.name.empty()) lines.fail("empty symbol name");
    parse_flags(line.substr(tab2 + 1), e, lines);
    if (!exports.empty() && !export_less(exports.back(), e)) {
      const auto& prev = exports.back();
      if (prev.name == e.name && prev.version == e.version) {
        lines.fail("duplicate symbol " + LineParser::quoted(e.name) + " version " + LineParser::quoted(e.version));
      }
      lines.fail("not sorted: " + LineParser::quoted(e.name) + " comes after " + LineParser::quoted(prev.name));
    }
    exports.push_back(e);
  }
  table.m_storage = std::move(storage);
  return table;
}

void write_table(const Table& table, const std::string& path) {
  write_file_atomic(path, serialize_table(table));
}

Table load_table(const std::string& path) {
  return parse_table(read_text_file(path, k_max_table_text), path);
}

}  // namespace wheelcheck::exports
