// Export tables: the symbols a table holds must be exactly what binutils' `nm -D --defined-only` lists, on
// libraries built here (versions default and hidden, weak, protected, hidden visibility, TLS, IFUNC,
// objects, GNU unique, and a .dynsym patched to hold the local, hidden, internal, file and section
// symbols no linker leaves there) and on this machine's libc and libstdc++. Then the file format: round
// trips, deterministic bytes, zcat and gzip interoperability, bind() and lookups, and malformed files
// (truncated or corrupt gzip, trailing members, a 200 MB gzip bomb, every kind of bad line) refused as
// BadInput with the line named.
#include <elf.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "readelf.hpp"
#include "support.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/exports.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_exports {

using namespace wheelcheck;
using namespace wheelcheck::test;

namespace {

// name, version, hidden: what nm's "name", "name@@V" and "name@V" say.
using Triple = std::tuple<std::string, std::string, bool>;

std::set<Triple> nm_triples(const std::string& path) {
  const auto r = run("nm -D --defined-only " + shell_quote(path));
  if (r.exit_code != 0) throw std::runtime_error("nm failed on " + path + ": " + r.err);
  std::set<Triple> out;
  std::stringstream ss(r.out);
  for (std::string line; std::getline(ss, line);) {
    // "0000000000001174 T old@@V2": value, letter, name.
    const auto sp1 = line.find(' ');
    const auto sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string::npos) throw std::runtime_error("unexpected nm line: " + line);
    const std::string text = line.substr(sp2 + 1);
    if (const auto at2 = text.find("@@"); at2 != std::string::npos) {
      out.insert({text.substr(0, at2), text.substr(at2 + 2), false});
    } else if (const auto at = text.find('@'); at != std::string::npos) {
      out.insert({text.substr(0, at), text.substr(at + 1), true});
    } else {
      out.insert({text, "", false});
    }
  }
  return out;
}

std::set<Triple> table_triples(const exports::Table& table) {
  std::set<Triple> out;
  for (const auto& e : table.symbols()) out.insert({std::string(e.name), std::string(e.version), e.hidden});
  return out;
}

std::string describe(const Triple& t) {
  const auto& [name, version, hidden] = t;
  return version.empty() ? name : name + (hidden ? "@" : "@@") + version;
}

// Set equality with the differences listed both ways.
void expect_same_as_nm(const exports::Table& table, const std::string& path) {
  const auto theirs = nm_triples(path);
  const auto ours = table_triples(table);
  EXPECT_EQ(ours.size(), table.symbols().size()) << path << ": the table repeats a (name, version)";
  std::vector<std::string> only_ours, only_nm;
  for (const auto& t : ours)
    if (!theirs.contains(t)) only_ours.push_back(describe(t));
  for (const auto& t : theirs)
    if (!ours.contains(t)) only_nm.push_back(describe(t));
  auto head = [](const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size() && i < 20; ++i) s += "  " + v[i] + "\n";
    return s;
  };
  EXPECT_TRUE(only_ours.empty() && only_nm.empty())
      << path << ": " << ours.size() << " in the table, " << theirs.size() << " from nm\n"
      << only_ours.size() << " only in the table:\n"
      << head(only_ours) << only_nm.size() << " only in nm:\n"
      << head(only_nm);
}

exports::Table table_of(const std::string& path) {
  return exports::Table::from_binary(elf::read_elf_file(path), std::filesystem::path(path).filename().string(), path);
}

constexpr const char* k_versioned_c = R"(
int f_default(void) { return 1; }
__attribute__((weak)) int f_weak(void) { return 2; }
__attribute__((visibility("protected"))) int f_protected(void) { return 3; }
__attribute__((visibility("hidden"))) int f_hidden_visibility(void) { return 4; }
__thread int tls_var = 5;
int obj = 6;
const int ro_obj = 7;
static int impl(void) { return 8; }
static void* resolve_impl(void) { return (void*)impl; }
int f_ifunc(void) __attribute__((ifunc("resolve_impl")));
int old_v1(void) { return 1; }
int old_v2(void) { return 2; }
__asm__(".symver old_v1,old@V1");
__asm__(".symver old_v2,old@@V2");
int gone_v1(void) { return 1; }
__asm__(".symver gone_v1,gone@V1");
int only_v1_default(void) { return 1; }
int f_local_patch(void) { return 9; }
int f_hidden_patch(void) { return 10; }
int f_internal_patch(void) { return 11; }
int f_file_patch(void) { return 12; }
int f_section_patch(void) { return 13; }
int call_hidden(void) { return f_hidden_visibility(); }
)";
constexpr const char* k_versioned_map =
    "V1 { global: f_*; tls_var; obj; ro_obj; old; gone; only_v1_default; call_hidden; local: *; };\n"
    "V2 { global: old; } V1;\n";

constexpr const char* k_cxx = R"(
#include <string>
namespace ns {
inline int& counter() { static int c = 0; return c; }
int next() { return ++counter(); }
int overloaded(int x) { return x; }
int overloaded(const std::string& s) { return static_cast<int>(s.size()); }
template <class T> struct Box { static T value; };
template <class T> T Box<T>::value{};
int use_box() { return Box<int>::value; }
}
)";

constexpr const char* k_plain_c = "int plain_a(void) { return 1; }\nint plain_b = 2;\n";

// Rewrites fields of chosen .dynsym entries of an ELF64 little-endian file: what no linker emits, but
// nm still has a rule for (a local, a hidden or internal one, a file or section symbol).
void patch_dynsym(const std::string& in, const std::string& out,
                  const std::map<std::string, std::function<void(Elf64_Sym&)>>& patches) {
  std::string bytes = read_file(in);
  auto at = [&bytes](std::size_t offset, std::size_t size) {
    if (offset + size > bytes.size()) throw std::runtime_error("patch_dynsym: offset out of range");
    return bytes.data() + offset;
  };
  Elf64_Ehdr eh;
  std::memcpy(&eh, at(0, sizeof eh), sizeof eh);
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    std::memcpy(&sections[i], at(eh.e_shoff + i * eh.e_shentsize, sizeof(Elf64_Shdr)), sizeof(Elf64_Shdr));
  }
  std::size_t patched = 0;
  for (const auto& sh : sections) {
    if (sh.sh_type != SHT_DYNSYM) continue;
    const auto& strtab = sections.at(sh.sh_link);
    for (std::size_t off = sh.sh_offset; off + sizeof(Elf64_Sym) <= sh.sh_offset + sh.sh_size;
         off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, at(off, sizeof sym), sizeof sym);
      const std::string name(at(strtab.sh_offset + sym.st_name, 1));
      if (auto p = patches.find(name); p != patches.end()) {
        p->second(sym);
        std::memcpy(at(off, sizeof sym), &sym, sizeof sym);
        ++patched;
      }
    }
  }
  if (patched != patches.size()) throw std::runtime_error("patch_dynsym: not every symbol was found");
  write_binary(out, bytes);
}

unsigned char st_info(unsigned bind, unsigned type) {
  return static_cast<unsigned char>((bind << 4) | (type & 15U));
}

// The libraries every test here uses, built once.
struct Libraries {
  TempDir dir;
  std::string versioned, cxx, plain, patched;
  Libraries() {
    std::string error;
    dir.write("v.map", k_versioned_map);
    auto v =
        build_shared(dir, "libversioned.so", "versioned.c", k_versioned_c,
                     "-Wl,--version-script=" + dir.file("v.map") + " -Wl,-soname,libversioned.so.1", "gcc", &error);
    if (!v) throw std::runtime_error(error);
    versioned = *v;
    auto c = build_shared(dir, "libcxx.so", "cxx.cpp", k_cxx, "-Wl,-soname,libcxx.so.2", "g++", &error);
    if (!c) throw std::runtime_error(error);
    cxx = *c;
    auto p = build_shared(dir, "libplain.so", "plain.c", k_plain_c, "", "gcc", &error);
    if (!p) throw std::runtime_error(error);
    plain = *p;
    patched = dir.file("libpatched.so");
    patch_dynsym(versioned, patched,
                 {{"f_local_patch", [](Elf64_Sym& s) { s.st_info = st_info(STB_LOCAL, STT_FUNC); }},
                  {"f_hidden_patch", [](Elf64_Sym& s) { s.st_other = STV_HIDDEN; }},
                  {"f_internal_patch", [](Elf64_Sym& s) { s.st_other = STV_INTERNAL; }},
                  {"f_file_patch", [](Elf64_Sym& s) { s.st_info = st_info(STB_GLOBAL, STT_FILE); }},
                  {"f_section_patch", [](Elf64_Sym& s) { s.st_info = st_info(STB_GLOBAL, STT_SECTION); }}});
  }
};

const Libraries& libraries() {
  static const Libraries libs;
  return libs;
}

const exports::Export* find_one(const exports::Table& t, std::string_view name, std::string_view version) {
  for (const auto& e : t.find(name))
    if (e.version == version) return &e;
  return nullptr;
}

std::string flags_of(const exports::Export& e) {
  return std::string{e.type, e.binding} + (e.hidden ? "h" : "");
}

// Streaming gzip with zlib: constant memory however much goes in.
class Gzipper {
 public:
  explicit Gzipper(int level = 9) {
    if (deflateInit2(&m_z, level, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("zlib");
  }
  ~Gzipper() { deflateEnd(&m_z); }
  Gzipper(const Gzipper&) = delete;
  Gzipper& operator=(const Gzipper&) = delete;
  void add(std::string_view data) { pump(data, Z_NO_FLUSH); }
  std::string finish() {
    pump({}, Z_FINISH);
    return std::move(m_out);
  }

 private:
  void pump(std::string_view data, int flush) {
    m_z.next_in = reinterpret_cast<const Bytef*>(data.data());
    m_z.avail_in = static_cast<uInt>(data.size());
    char buf[1 << 16];
    int rc = Z_OK;
    do {
      m_z.next_out = reinterpret_cast<Bytef*>(buf);
      m_z.avail_out = sizeof buf;
      rc = deflate(&m_z, flush);
      if (rc == Z_STREAM_ERROR) throw std::runtime_error("zlib deflate");
      m_out.append(buf, sizeof buf - m_z.avail_out);
    } while (m_z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  }
  z_stream m_z{};
  std::string m_out;
};

std::string gzip_text(std::string_view text) {
  Gzipper g;
  g.add(text);
  return g.finish();
}

// The BadInput message parse_table gives, or "" when it accepts.
std::string rejection(std::string_view gz) {
  try {
    (void)exports::parse_table(gz, "t.exports.gz");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    return e.what();
  }
  return "";
}

void expect_same_tables(const exports::Table& a, const exports::Table& b) {
  EXPECT_EQ(a.library, b.library);
  EXPECT_EQ(a.soname, b.soname);
  EXPECT_EQ(a.machine, b.machine);
  EXPECT_EQ(a.elf_class, b.elf_class);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.version_definitions, b.version_definitions);
  ASSERT_EQ(a.symbols().size(), b.symbols().size());
  for (std::size_t i = 0; i < a.symbols().size(); ++i) {
    const auto& x = a.symbols()[i];
    const auto& y = b.symbols()[i];
    ASSERT_TRUE(x.name == y.name && x.version == y.version && flags_of(x) == flags_of(y))
        << i << ": " << x.name << "@" << x.version << " " << flags_of(x) << " against " << y.name << "@" << y.version
        << " " << flags_of(y);
  }
}

// ---- the table holds what nm lists ----

TEST(ExportsNm, VersionedFixtureMatchesNm) {
  const auto& libs = libraries();
  const auto t = table_of(libs.versioned);
  expect_same_as_nm(t, libs.versioned);
  // The rule's cases, spelled out: version-definition symbols plainly, hidden visibility absent
  // (the linker made it local and dropped it from .dynsym), a hidden version with 'h'.
  EXPECT_NE(find_one(t, "V1", ""), nullptr);
  EXPECT_NE(find_one(t, "V2", ""), nullptr);
  EXPECT_TRUE(t.find("f_hidden_visibility").empty());
  ASSERT_NE(find_one(t, "old", "V1"), nullptr);
  EXPECT_TRUE(find_one(t, "old", "V1")->hidden);
  EXPECT_FALSE(find_one(t, "old", "V2")->hidden);
}

TEST(ExportsNm, CxxFixtureMatchesNm) {
  const auto& libs = libraries();
  const auto t = table_of(libs.cxx);
  expect_same_as_nm(t, libs.cxx);
  ASSERT_FALSE(t.find("_ZZN2ns7counterEvE1c").empty());
  EXPECT_EQ(t.find("_ZZN2ns7counterEvE1c")[0].binding, 'U');  // STB_GNU_UNIQUE
}

TEST(ExportsNm, UnversionedFixtureMatchesNm) {
  const auto& libs = libraries();
  const auto t = table_of(libs.plain);
  expect_same_as_nm(t, libs.plain);
  EXPECT_TRUE(t.version_definitions.empty());
  EXPECT_EQ(t.soname, "");
}

// Entries no linker leaves in .dynsym: nm lists the local one (lowercase letter) and the hidden and
// internal ones, and drops the file and section symbols.
TEST(ExportsNm, PatchedDynsymMatchesNm) {
  const auto& libs = libraries();
  const auto t = table_of(libs.patched);
  expect_same_as_nm(t, libs.patched);
  ASSERT_NE(find_one(t, "f_local_patch", "V1"), nullptr);
  EXPECT_EQ(find_one(t, "f_local_patch", "V1")->binding, 'L');
  EXPECT_NE(find_one(t, "f_hidden_patch", "V1"), nullptr);
  EXPECT_NE(find_one(t, "f_internal_patch", "V1"), nullptr);
  EXPECT_TRUE(t.find("f_file_patch").empty());
  EXPECT_TRUE(t.find("f_section_patch").empty());
}

TEST(ExportsNm, SystemLibcMatchesNm) {
  const std::string path = "/lib/x86_64-linux-gnu/libc.so.6";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  const auto t = table_of(path);
  expect_same_as_nm(t, path);
  EXPECT_GT(t.symbols().size(), 2000U);
  EXPECT_EQ(t.version_definitions, readelf_view(path).version_definitions);
  EXPECT_TRUE(t.defines_version("GLIBC_2.2.5"));
}

TEST(ExportsNm, SystemLibstdcxxMatchesNm) {
  const std::string path = "/lib/x86_64-linux-gnu/libstdc++.so.6";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  const auto t = table_of(path);
  expect_same_as_nm(t, path);
  EXPECT_EQ(t.version_definitions, readelf_view(path).version_definitions);
}

// ---- lookups ----

TEST(ExportsTable, FlagsAndMetadata) {
  const auto& libs = libraries();
  const auto t = table_of(libs.versioned);
  EXPECT_EQ(t.library, "libversioned.so");
  EXPECT_EQ(t.soname, "libversioned.so.1");
  EXPECT_EQ(t.machine, "x86_64");
  EXPECT_EQ(t.elf_class, 64);
  EXPECT_EQ(t.source, libs.versioned);
  EXPECT_EQ(t.version_definitions, (std::vector<std::string>{"libversioned.so.1", "V1", "V2"}));
  const std::map<std::pair<std::string, std::string>, std::string> expected = {
      {{"f_default", "V1"}, "FG"}, {{"f_weak", "V1"}, "FW"}, {{"f_protected", "V1"}, "FG"},
      {{"tls_var", "V1"}, "TG"},   {{"obj", "V1"}, "OG"},    {{"ro_obj", "V1"}, "OG"},
      {{"f_ifunc", "V1"}, "IG"},   {{"old", "V1"}, "FGh"},   {{"old", "V2"}, "FG"},
      {{"gone", "V1"}, "FGh"},     {{"V1", ""}, "OG"},       {{"V2", ""}, "OG"}};
  for (const auto& [key, flags] : expected) {
    const auto* e = find_one(t, key.first, key.second);
    ASSERT_NE(e, nullptr) << key.first << "@" << key.second;
    EXPECT_EQ(flags_of(*e), flags) << key.first << "@" << key.second;
  }
  // Sorted by (name, version), bytewise, no repeats.
  const auto all = t.symbols();
  for (std::size_t i = 1; i < all.size(); ++i) {
    EXPECT_TRUE(std::tie(all[i - 1].name, all[i - 1].version) < std::tie(all[i].name, all[i].version)) << i;
  }
}

TEST(ExportsTable, FindPrefixAndVersions) {
  const auto& libs = libraries();
  const auto t = table_of(libs.versioned);
  EXPECT_EQ(t.find("old").size(), 2U);
  EXPECT_EQ(t.find("f_default").size(), 1U);
  EXPECT_TRUE(t.find("nope").empty());
  EXPECT_TRUE(t.find("").empty());
  std::set<std::string> prefixed;
  for (const auto& e : t.with_prefix("f_")) prefixed.insert(std::string(e.name));
  EXPECT_TRUE(prefixed.contains("f_default") && prefixed.contains("f_ifunc") && prefixed.contains("f_weak"));
  for (const auto& name : prefixed) EXPECT_TRUE(name.starts_with("f_")) << name;
  std::size_t expected = 0;
  for (const auto& e : t.symbols()) expected += e.name.starts_with("f_") ? 1 : 0;
  EXPECT_EQ(t.with_prefix("f_").size(), expected);
  EXPECT_EQ(t.with_prefix("").size(), t.symbols().size());
  EXPECT_TRUE(t.with_prefix("zzz").empty());
  EXPECT_EQ(t.with_prefix("old").size(), 2U);

  const auto cxx = table_of(libs.cxx);
  EXPECT_EQ(cxx.with_prefix("_ZN2ns10overloaded").size(), 2U);  // both overloads, other parameters

  EXPECT_TRUE(t.defines_version("V1"));
  EXPECT_TRUE(t.defines_version("V2"));
  EXPECT_TRUE(t.defines_version("libversioned.so.1"));
  EXPECT_FALSE(t.defines_version("V3"));
  EXPECT_FALSE(t.defines_version(""));
}

TEST(ExportsTable, MoveKeepsViews) {
  auto a = table_of(libraries().versioned);
  const auto* data = a.symbols().data();
  const auto* first_name = a.symbols()[0].name.data();
  exports::Table b(std::move(a));
  EXPECT_EQ(b.symbols().data(), data);
  EXPECT_EQ(b.symbols()[0].name.data(), first_name);
  exports::Table c;
  EXPECT_TRUE(c.symbols().empty());
  EXPECT_EQ(c.bind("x", ""), nullptr);
  c = std::move(b);
  EXPECT_NE(c.bind("f_default", ""), nullptr);
  EXPECT_EQ(c.symbols()[0].name.data(), first_name);
}

// ---- bind ----

TEST(ExportsBind, VersionedNeedBindsOnlyThatVersion) {
  const auto t = table_of(libraries().versioned);
  const auto* v1 = t.bind("old", "V1");
  ASSERT_NE(v1, nullptr);
  EXPECT_EQ(v1->version, "V1");
  EXPECT_TRUE(v1->hidden);
  const auto* v2 = t.bind("old", "V2");
  ASSERT_NE(v2, nullptr);
  EXPECT_EQ(v2->version, "V2");
  EXPECT_EQ(t.bind("old", "V3"), nullptr);
  EXPECT_EQ(t.bind("f_default", "V2"), nullptr);
  ASSERT_NE(t.bind("f_default", "V1"), nullptr);
  EXPECT_EQ(t.bind("nope", "V1"), nullptr);
}

TEST(ExportsBind, UnversionedNeedBindsDefault) {
  const auto& libs = libraries();
  const auto t = table_of(libs.versioned);
  const auto* e = t.bind("old", "");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->version, "V2");
  EXPECT_FALSE(e->hidden);
  ASSERT_NE(t.bind("f_weak", ""), nullptr);
  EXPECT_EQ(t.bind("f_weak", "")->binding, 'W');
  const auto plain = table_of(libs.plain);
  ASSERT_NE(plain.bind("plain_a", ""), nullptr);
  EXPECT_EQ(plain.bind("plain_a", "")->version, "");
  EXPECT_EQ(plain.bind("plain_a", "V1"), nullptr);  // the header's rule: only that version
}

TEST(ExportsBind, HiddenOnlyVersionNotBoundByUnversionedNeed) {
  const auto t = table_of(libraries().versioned);
  ASSERT_EQ(t.find("gone").size(), 1U);
  EXPECT_EQ(t.bind("gone", ""), nullptr);
  ASSERT_NE(t.bind("gone", "V1"), nullptr);
  EXPECT_TRUE(t.bind("gone", "V1")->hidden);
}

TEST(ExportsBind, LocalDynsymNotBound) {
  const auto t = table_of(libraries().patched);
  ASSERT_NE(find_one(t, "f_local_patch", "V1"), nullptr);
  EXPECT_EQ(t.bind("f_local_patch", ""), nullptr);
  EXPECT_EQ(t.bind("f_local_patch", "V1"), nullptr);
  EXPECT_NE(t.bind("f_hidden_patch", "V1"), nullptr);  // ld.so does not look at visibility
}

// ---- the file format ----

TEST(ExportsFormat, RoundTrip) {
  const auto& libs = libraries();
  std::vector<std::string> paths = {libs.versioned, libs.cxx, libs.plain, libs.patched};
  if (std::filesystem::exists("/lib/x86_64-linux-gnu/libc.so.6")) paths.push_back("/lib/x86_64-linux-gnu/libc.so.6");
  for (const auto& path : paths) {
    SCOPED_TRACE(path);
    const auto t = table_of(path);
    const auto bytes = exports::serialize_table(t);
    const auto back = exports::parse_table(bytes, path);
    expect_same_tables(t, back);
    EXPECT_EQ(exports::serialize_table(back), bytes);
  }
}

TEST(ExportsFormat, DeterministicBytes) {
  const auto& libs = libraries();
  const auto a = exports::serialize_table(table_of(libs.versioned));
  const auto b = exports::serialize_table(table_of(libs.versioned));
  EXPECT_EQ(a, b);
  ASSERT_GE(a.size(), 10U);
  EXPECT_EQ(a.substr(0, 3), std::string("\x1f\x8b\x08", 3));
  EXPECT_EQ(a.substr(4, 4), std::string(4, '\0'));  // mtime 0
}

// The undefined, non-weak symbols the loader must bind: listed with their version and its library,
// weak ones left out, and read back as written; a table without them (an older file) says nothing.
TEST(ExportsFormat, UndefinedSymbolsRoundTrip) {
  const auto t = table_of(libraries().cxx);
  ASSERT_TRUE(t.imports_known);
  ASSERT_FALSE(t.imports.empty());
  bool from_libstdcxx = false;
  for (const auto& i : t.imports) {
    EXPECT_NE(i.name, "__cxa_finalize") << "a weak reference is not listed";
    EXPECT_NE(i.name, "__gmon_start__") << "a weak reference is not listed";
    EXPECT_EQ(i.version.empty(), i.file.empty()) << i.name;
    if (i.file == "libstdc++.so.6" && (i.version.starts_with("GLIBCXX_") || i.version.starts_with("CXXABI_")))
      from_libstdcxx = true;
  }
  EXPECT_TRUE(from_libstdcxx) << exports::table_text(t);
  EXPECT_TRUE(std::is_sorted(t.imports.begin(), t.imports.end(), [](const auto& a, const auto& b) {
    return std::tie(a.name, a.version) < std::tie(b.name, b.version);
  }));
  const auto back = exports::parse_table(exports::serialize_table(t), "t.exports.gz");
  EXPECT_TRUE(back.imports_known);
  EXPECT_EQ(back.imports, t.imports);
  std::string old = exports::table_text(t);
  const auto from = old.find("#undefined-known\n");
  const auto to = old.find("#count ");
  ASSERT_NE(from, std::string::npos);
  old.erase(from, to - from);
  const auto older = exports::parse_table(gzip_text(old), "old.exports.gz");
  EXPECT_FALSE(older.imports_known);
  EXPECT_TRUE(older.imports.empty());
  EXPECT_EQ(older.symbols().size(), t.symbols().size());
}

TEST(ExportsFormat, ZcatReadsWrittenFile) {
  if (!have_program("zcat")) GTEST_SKIP() << "no zcat";
  const auto& libs = libraries();
  TempDir dir;
  const auto t = table_of(libs.versioned);
  const auto path = dir.file("libversioned.so.exports.gz");
  exports::write_table(t, path);
  const auto r = run("zcat " + shell_quote(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, exports::table_text(t));
  EXPECT_TRUE(
      r.out.starts_with("#wheelcheck-exports 1\n#library libversioned.so\n#soname libversioned.so.1\n"
                        "#machine x86_64\n#class 64\n#source " +
                        libs.versioned + "\n#verdef libversioned.so.1\n#verdef V1\n#verdef V2\n#undefined-known\n"))
      << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("\nold\tV1\tFGh\nold\tV2\tFG\n"), std::string::npos);
  expect_same_tables(t, exports::load_table(path));
}

// gzip(1) writes the file name into the header (FNAME): such a file loads too.
TEST(ExportsFormat, GzipToolFileLoads) {
  if (!have_program("gzip")) GTEST_SKIP() << "no gzip";
  TempDir dir;
  const auto t = table_of(libraries().cxx);
  const auto text = dir.write("table", exports::table_text(t));
  const auto r = run("gzip -9 " + shell_quote(text));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_same_tables(t, exports::load_table(text + ".gz"));
}

TEST(ExportsFormat, LoadMissingFileIsError) {
  TempDir dir;
  EXPECT_THROW((void)exports::load_table(dir.file("absent.gz")), Error);
}

// ---- malformed files ----

TEST(ExportsMalformed, TruncatedGzip) {
  const auto bytes = exports::serialize_table(table_of(libraries().versioned));
  ASSERT_GT(bytes.size(), 100U);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{10}, std::size_t{17},
                        std::size_t{18}, std::size_t{40}, bytes.size() / 2, bytes.size() - 9, bytes.size() - 8,
                        bytes.size() - 5, bytes.size() - 4, bytes.size() - 1}) {
    EXPECT_NE(rejection(bytes.substr(0, n)), "") << "truncated to " << n << " of " << bytes.size();
  }
  EXPECT_NE(rejection("plain text, not gzip at all"), "");
}

TEST(ExportsMalformed, CorruptGzip) {
  const auto bytes = exports::serialize_table(table_of(libraries().versioned));
  auto flip = [&bytes](std::size_t at) {
    auto b = bytes;
    b[at] = static_cast<char>(b[at] ^ 0x55);
    return b;
  };
  EXPECT_NE(rejection(flip(bytes.size() - 8)).find("CRC"), std::string::npos);  // CRC-32
  const auto isize = rejection(flip(bytes.size() - 2));
  EXPECT_TRUE(isize.find("ISIZE") != std::string::npos || isize.find("CRC") != std::string::npos) << isize;
  EXPECT_NE(rejection(flip(bytes.size() / 2)), "");  // the deflate data
  EXPECT_NE(rejection(flip(2)), "");                 // the method byte
}

TEST(ExportsMalformed, TrailingDataOrSecondMember) {
  const auto bytes = exports::serialize_table(table_of(libraries().plain));
  EXPECT_NE(rejection(bytes + "garbage").find("follow the gzip member"), std::string::npos);
  EXPECT_NE(rejection(bytes + bytes).find("follow the gzip member"), std::string::npos);
  EXPECT_NE(rejection(bytes + std::string(1, '\0')), "");
}

// 200 MB of zeros compress to about 200 KB: refused once 64 MB are out, whatever the trailer claims.
TEST(ExportsMalformed, GzipBomb) {
  Gzipper g(Z_DEFAULT_COMPRESSION);
  const std::string zeros(1 << 20, '\0');
  for (int i = 0; i < 200; ++i) g.add(zeros);
  const auto bomb = g.finish();
  EXPECT_LT(bomb.size(), std::size_t{1} << 20);
  const auto message = rejection(bomb);
  EXPECT_NE(message.find("64.0 MiB"), std::string::npos) << message;
  auto lying = bomb;  // ISIZE says 100 bytes
  lying.replace(lying.size() - 4, 4, std::string("\x64\0\0\0", 4));
  EXPECT_NE(rejection(lying).find("64.0 MiB"), std::string::npos);
}

// A valid text, then one change per case; each must be refused with its reason and line number.
constexpr std::string_view k_valid_text =
    "#wheelcheck-exports 1\n"  // 1
    "#library libx.so\n"       // 2
    "#soname libx.so.1\n"      // 3
    "#machine x86_64\n"        // 4
    "#class 64\n"              // 5
    "#source /usr/lib/libx.so.1\n"
    "#verdef libx.so.1\n"  // 7
    "#verdef V1\n"
    "#verdef V2\n"
    "#count 5\n"      // 10
    "V1\t\tOG\n"      // 11
    "V2\t\tOG\n"      // 12
    "bar\tV1\tFW\n"   // 13
    "old\tV1\tFGh\n"  // 14
    "old\tV2\tFG\n";  // 15

std::string replaced(std::string_view text, std::string_view from, std::string_view to) {
  std::string s(text);
  const auto at = s.find(from);
  if (at == std::string::npos) throw std::runtime_error("test text lacks " + std::string(from));
  s.replace(at, from.size(), to);
  return s;
}

TEST(ExportsMalformed, ValidTextParses) {
  const auto t = exports::parse_table(gzip_text(k_valid_text), "t");
  EXPECT_EQ(t.library, "libx.so");
  EXPECT_EQ(t.soname, "libx.so.1");
  EXPECT_EQ(t.source, "/usr/lib/libx.so.1");
  EXPECT_EQ(t.symbols().size(), 5U);
  EXPECT_EQ(exports::table_text(t), k_valid_text);
  const auto none = exports::parse_table(gzip_text(replaced(k_valid_text, "#soname libx.so.1", "#soname -")), "t");
  EXPECT_EQ(none.soname, "");
}

TEST(ExportsMalformed, BadLines) {
  struct Case {
    std::string text, reason, line;
  };
  const std::string v(k_valid_text);
  const std::vector<Case> cases = {
      {v.substr(v.find('\n') + 1), "missing the #wheelcheck-exports magic line", "(line 1)"},
      {replaced(v, "exports 1", "exports 2"), "unsupported format version '2'", "(line 1)"},
      {"", "empty file", "(line 1)"},
      {replaced(v, "#library libx.so\n#soname libx.so.1\n", "#soname libx.so.1\n#library libx.so\n"),
       "expected #library, found '#soname libx.so.1'", "(line 2)"},
      {replaced(v, "#class 64", "#class 16"), "#class is neither 64 nor 32", "(line 5)"},
      {replaced(v, "#verdef V1\n", "#verdef V1\n#frobnicate\n"), "expected #verdef, #undefined or #count", "(line 9)"},
      {replaced(v, "#verdef V1\n", "#verdef V1\n#undefined f\t\t\tF\n"), "#undefined before #undefined-known",
       "(line 9)"},
      {replaced(v, "#verdef V1\n", "#verdef V1\n#undefined-known\n#undefined f\tV1\t\tF\n"),
       "version and library go together", "(line 10)"},
      {replaced(v, "#verdef V1\n", "#verdef V1\n#undefined-known\n#undefined f\t\t\tQ\n"), "unknown type letter",
       "(line 10)"},
      {replaced(v, "#verdef V1\n", "#verdef V1\n#undefined-known\n#undefined g\t\t\tF\n#undefined f\t\t\tF\n"),
       "not sorted, or repeated", "(line 11)"},
      {replaced(v, "#verdef V1\n", "#verdef V1\n#undefined-known\n#undefined f\t\t\n"), "expected #undefined",
       "(line 10)"},
      {v.substr(0, v.find("#count")), "ends before its #count line", "(line 10)"},
      {replaced(v, "#count 5", "#count 6"), "#count says 6 symbols, but 5 symbol lines follow", "(line 10)"},
      {replaced(v, "#count 5", "#count 4"), "#count says 4 symbols, but 5", "(line 10)"},
      {replaced(v, "#count 5", "#count five"), "#count is not a decimal number", "(line 10)"},
      {replaced(v, "#count 5", "#count 05"), "#count is not a decimal number", "(line 10)"},
      {replaced(v, "#count 5", "#count 99999999999999999999999"), "#count is not a decimal number", "(line 10)"},
      {replaced(v, "bar\tV1\tFW\nold\tV1\tFGh\n", "old\tV1\tFGh\nbar\tV1\tFW\n"), "not sorted: 'bar' comes after 'old'",
       "(line 14)"},
      {replaced(v, "old\tV1\tFGh\nold\tV2\tFG\n", "old\tV2\tFG\nold\tV1\tFGh\n"), "not sorted", "(line 15)"},
      {replaced(replaced(v, "#count 5", "#count 6"), "bar\tV1\tFW\n", "bar\tV1\tFW\nbar\tV1\tFG\n"),
       "duplicate symbol 'bar' version 'V1'", "(line 14)"},
      {replaced(v, "bar\tV1\tFW", "bar\tV1\tZW"), "unknown type letter 'Z'", "(line 13)"},
      {replaced(v, "bar\tV1\tFW", "bar\tV1\tFQ"), "unknown binding letter 'Q'", "(line 13)"},
      {replaced(v, "bar\tV1\tFW", "bar\tV1\tFWx"), "unknown flag 'x'", "(line 13)"},
      {replaced(v, "bar\tV1\tFW", "bar\tV1\tFWhh"), "are not <type><binding>[h]", "(line 13)"},
      {replaced(v, "bar\tV1\tFW", "bar\tV1\tF"), "are not <type><binding>[h]", "(line 13)"},
      {replaced(v, "V2\t\tOG", "V2\t\tOGh"), "flag h (hidden version) on a symbol without a version", "(line 12)"},
      {replaced(v, "bar\tV1\tFW", "bar V1 FW"), "expected <name>\\t<version>\\t<flags>", "(line 13)"},
      {replaced(v, "bar\tV1\tFW", "bar\tV1FW"), "expected <name>\\t<version>\\t<flags>", "(line 13)"},
      {replaced(v, "V1\t\tOG", "\tV1\tOG"), "empty symbol name", "(line 11)"},
      {replaced(v, "bar\tV1", std::string("b\0r\tV1", 6)), "NUL byte", "(line 13)"},
      {v.substr(0, v.size() - 1), "the last line has no newline", "(line 15)"},
  };
  for (const auto& c : cases) {
    const auto message = rejection(gzip_text(c.text));
    EXPECT_TRUE(message.starts_with("t.exports.gz: ")) << message;
    EXPECT_NE(message.find(c.reason), std::string::npos) << "expected: " << c.reason << "\ngot: " << message;
    EXPECT_NE(message.find(c.line), std::string::npos) << "expected " << c.line << " in: " << message;
  }
}

TEST(ExportsMalformed, UnstorableNamesRefused) {
  elf::Binary b;
  elf::Symbol s;
  s.name = "bad\tname";
  s.defined = true;
  b.symbols.push_back(s);
  try {
    (void)exports::Table::from_binary(b, "libbad.so", "/x");
    ADD_FAILURE() << "accepted a name with a tab";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
  }
}

// ---- the corpus (downloaded by ../shared/corpus/fetch-real-binaries.sh), when present ----

std::string torch_lib(const std::string& name) {
  return corpus_dir() + "/debs/libtorch2.6/usr/lib/x86_64-linux-gnu/" + name;
}

TEST(ExportsCorpus, TorchLibrariesMatchNm) {
  for (const auto* name : {"libc10.so.2.6.0", "libtorch_cpu.so.2.6.0"}) {
    const auto path = torch_lib(name);
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "corpus absent: " << path;
    SCOPED_TRACE(path);
    const auto t = table_of(path);
    expect_same_as_nm(t, path);
    expect_same_tables(t, exports::parse_table(exports::serialize_table(t), path));
  }
}

// Prints how long loading libtorch_cpu's table takes (no assertion on time: machines differ).
TEST(ExportsCorpus, LibtorchCpuLoadTime) {
  const auto path = torch_lib("libtorch_cpu.so.2.6.0");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "corpus absent: " << path;
  TempDir dir;
  const auto file = dir.file("libtorch_cpu.so.exports.gz");
  const auto t = table_of(path);
  exports::write_table(t, file);
  double best_ms = 1e9;
  std::size_t count = 0;
  for (int i = 0; i < 7; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const auto loaded = exports::load_table(file);
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    best_ms = std::min(best_ms, took.count());
    count = loaded.symbols().size();
  }
  EXPECT_EQ(count, t.symbols().size());
  std::cout << "[ exports  ] libtorch_cpu: " << count << " exports, " << exports::table_text(t).size()
            << " bytes of text, " << std::filesystem::file_size(file)
            << " bytes gzip; load_table best of 7: " << best_ms << " ms\n";
}

}  // namespace

}  // namespace unity_test_exports
