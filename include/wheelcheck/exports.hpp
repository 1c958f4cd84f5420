// Export tables: the dynamic symbols a library defines (what `nm -D --defined-only` lists), with their
// version and whether it is the default one, stored sorted and gzip-compressed in db/exports/, loaded fast.
//
// Which symbols (the rule binutils 2.40's `nm -D --defined-only` follows, checked against nm on real
// libraries by tests/unit/test_exports.cpp): every .dynsym entry after the null one that is defined
// (st_shndx != SHN_UNDEF: section, SHN_ABS and SHN_COMMON symbols alike), whatever its binding (local
// ones too) and visibility (hidden and internal ones too), except STT_SECTION and STT_FILE symbols, which
// nm drops as debugging symbols, and except a symbol with an empty name. The version is the one nm
// appends: none for index 0 or 1 (the base), none for a version-definition symbol (its name equals the
// version it defines: `GLIBC_2.2.5`, an SHN_ABS object), and 'h' (nm's single '@') when the 0x8000 bit is
// set or the version comes from .gnu.version_r (a copy-relocated definition in an executable). So the
// table is a superset of elf::Symbol::exported(); the entries the loader never binds to (local binding,
// an unknown type) keep a flag letter that says so and bind() passes over them.
//
// File format (documented in docs/exports.md): one gzip member (mtime 0, so a regenerated file is the same
// bytes) of text lines, each ending in '\n', no NUL byte anywhere, at most 64 MB in all:
//   #wheelcheck-exports 1
//   #library <file name>
//   #soname <soname, or - when none>
//   #machine <x86_64>
//   #class <64 or 32>
//   #source <where it was read from, an image path>
//   #verdef <name>            one line per version definition, in file order (index 1, the base, first)
//   #undefined-known          optional (written by this version): the file's undefined symbols follow
//   #undefined <name>\t<version or empty>\t<library or empty>\t<type letter>
//                             one line per undefined, non-weak dynamic symbol the loader must bind (not
//                             STT_SECTION/STT_FILE, not empty), sorted by (name, version); the library is
//                             its DT_VERNEED file. A table without #undefined-known says nothing of them.
//   #count <number of symbol lines>
//   <name>\t<version or empty>\t<flags>     sorted by (name, version), bytewise; no duplicate pair
// flags: one letter for the type (F func, O object, T tls, I ifunc, N notype, C common, X another type),
// one for the binding (G global, W weak, U unique, L local or another binding), and 'h' when the version
// is hidden (name@V, not name@@V; only with a version).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wheelcheck/elf.hpp"

namespace wheelcheck::exports {

struct Export {
  std::string_view name;     // mangled, as in .dynstr
  std::string_view version;  // empty when unversioned
  bool hidden = false;       // non-default version (name@V)
  char type = 'N';           // F O T I N C X
  char binding = 'G';        // G W U L

  // Whether the dynamic loader can bind a reference to it: not local, and a type ld.so accepts.
  bool bindable() const { return binding != 'L' && type != 'X'; }
};

// An undefined, non-weak dynamic symbol of the library: what binding it in a load needs.
// Views into storage the table owns, as Export's are.
struct Import {
  std::string_view name;
  std::string_view version;  // empty when unversioned
  std::string_view file;     // the DT_VERNEED library of the version; empty when unversioned
  char type = 'N';           // the type letter of its symbol (F O T I N C X)
  bool operator==(const Import&) const = default;
};

// The most decompressed text a table file may hold; more is refused as malformed (a gzip bomb).
inline constexpr std::size_t k_max_table_text = std::size_t{64} << 20;

// Immutable once built; views point into storage owned by the table, so moving a Table is safe.
class Table {
 public:
  Table();
  ~Table();
  Table(Table&&) noexcept;
  Table& operator=(Table&&) noexcept;
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;

  std::string library;  // file name the table was made from ("libc10.so")
  std::string soname;   // "" when the library has none
  std::string machine;  // elf::machine_name()
  int elf_class = 64;
  std::string source;
  std::vector<std::string> version_definitions;
  // The undefined, non-weak symbols, sorted by (name, version); known only for tables written with them.
  std::vector<Import> imports;
  bool imports_known = false;

  std::span<const Export> symbols() const;  // sorted by (name, version)
  // Every export named `name` (all its versions), possibly empty.
  std::span<const Export> find(std::string_view name) const;
  // The export a reference binds to: a versioned need binds only to that version (default or hidden);
  // an unversioned need binds to an unversioned definition, else to the default (non-hidden) one. Only
  // bindable() exports are considered; nullptr when none fits.
  const Export* bind(std::string_view name, std::string_view version) const;
  bool defines_version(std::string_view version) const;
  // Exports whose mangled name starts with `prefix` (for "same qualified name, other parameters").
  std::span<const Export> with_prefix(std::string_view prefix) const;

  // Building: from an ELF model, the symbols nm lists (see the rule above). Throws Error(BadInput) for a
  // name, version or header value the format cannot hold (a tab or a newline in it).
  static Table from_binary(const elf::Binary& binary, std::string library, std::string source);

 private:
  struct Storage;
  std::unique_ptr<Storage> m_storage;
  friend Table parse_table(std::string_view, std::string_view);
};

// The text of the format above, before compression (what `zcat` shows).
std::string table_text(const Table& table);
// The gzip bytes of the format above: deterministic (same table and zlib, same bytes).
std::string serialize_table(const Table& table);
// Parses gzip bytes; throws Error(BadInput) naming `what` for anything malformed (bad gzip, bad header,
// unsorted or duplicate lines, count mismatch, more than 64 MB of text).
Table parse_table(std::string_view gzip_bytes, std::string_view what);
void write_table(const Table& table, const std::string& path);  // atomic
Table load_table(const std::string& path);

}  // namespace wheelcheck::exports
