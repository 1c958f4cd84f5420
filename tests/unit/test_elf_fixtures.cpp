// The ELF readers on libraries built here, at test time, from a few lines of C and C++: versioned and
// hidden-version symbols, weak undefined symbols, mangled C++ names, RPATH against RUNPATH, DT_FLAGS_1,
// the x86 ISA level note, 32-bit and big-endian objects from Debian's cross compilers. Every answer is
// checked against readelf, and the streaming reader against itself under hostile chunking, a tiny
// speculative prefix (several passes), random access, and LIEF.
#include <gtest/gtest.h>

#include "readelf.hpp"
#include "support.hpp"
#include "wheelcheck/bytes.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/util.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_elf_fixtures {

using namespace wheelcheck;
using namespace wheelcheck::test;

namespace {

constexpr const char* k_provider = R"(
int foo_v1(void) { return 1; }
int foo_v2(void) { return 2; }
__asm__(".symver foo_v1,foo@FOO_1.0");
__asm__(".symver foo_v2,foo@@FOO_2.0");
int bar(void) { return 3; }
int counter = 4;
)";
constexpr const char* k_provider_map =
    "FOO_1.0 { global: foo; bar; counter; local: *; };\nFOO_2.0 { global: foo; } FOO_1.0;\n";

constexpr const char* k_consumer = R"(
#include <string>
#include <vector>
extern "C" int foo(void);
extern "C" __attribute__((weak)) int maybe_there(void);
namespace ns {
int mangled(const std::string& s, std::vector<int>& v) {
  v.push_back(foo());
  return static_cast<int>(s.size()) + (maybe_there ? maybe_there() : 0);
}
}
)";

// Builds the provider and a consumer linked against it into dir; returns {provider, consumer}.
struct Fixture {
  std::string provider, consumer;
};

std::optional<Fixture> build_pair(const TempDir& dir, const std::string& cc, const std::string& cxx,
                                  const std::string& consumer_flags, std::string* error) {
  dir.write("v.map", k_provider_map);
  auto p = build_shared(dir, "libprovider.so", "provider.c", k_provider,
                        "-Wl,--version-script=" + dir.file("v.map") + " -Wl,-soname,libprovider.so.1", cc, error);
  if (!p) return std::nullopt;
  auto c = build_shared(dir, "libconsumer.so", "consumer.cpp", k_consumer,
                        "-L" + dir.path() + " -lprovider " + consumer_flags, cxx, error);
  if (!c) return std::nullopt;
  return Fixture{*p, *c};
}

elf::Binary read_fast(const std::string& path, elf::ReaderLimits limits = {}) {
  return elf::read_elf(FileSource(path), elf::ReaderKind::Fast, limits);
}

// A source whose stream hands out one byte at a time: the scanner must not care how bytes arrive.
class DribbleSource final : public ByteSource {
 public:
  explicit DribbleSource(std::vector<std::byte> data) : m_data(std::move(data)) {}
  std::uint64_t size() const override { return m_data.size(); }
  std::string name() const override { return "dribble"; }
  std::unique_ptr<ByteStream> open() const override {
    struct S final : ByteStream {
      const std::vector<std::byte>& d;
      std::size_t pos = 0;
      explicit S(const std::vector<std::byte>& data) : d(data) {}
      std::size_t read(std::span<std::byte> out) override {
        if (pos == d.size() || out.empty()) return 0;
        out[0] = d[pos++];
        return 1;
      }
    };
    return std::make_unique<S>(m_data);
  }

 private:
  std::vector<std::byte> m_data;
};

void expect_all_readers_agree(const std::string& path) {
  const auto fast = read_fast(path);
  elf::ReaderLimits tiny;
  tiny.speculative_prefix = 64;  // nothing but the header on the first pass: forces later passes
  EXPECT_EQ(read_fast(path, tiny), fast) << "multi-pass read differs: " << path;
  EXPECT_EQ(elf::read_elf_file(path), fast) << "random-access read differs: " << path;
  EXPECT_EQ(elf::read_elf(DribbleSource(read_file_bytes(path)), elf::ReaderKind::Fast), fast)
      << "byte-at-a-time read differs: " << path;
  EXPECT_EQ(elf::read_elf(FileSource(path), elf::ReaderKind::Lief), fast) << "LIEF differs: " << path;
}

const elf::Symbol* find_symbol(const elf::Binary& b, const std::string& name, bool defined) {
  for (const auto& s : b.symbols) {
    if (s.name == name && s.defined == defined) return &s;
  }
  return nullptr;
}

}  // namespace

TEST(ElfFixtures, VersionedProviderAgreesWithReadelf) {
  TempDir dir;
  std::string error;
  auto f = build_pair(dir, "gcc", "g++", "-Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/lib:/opt/x'", &error);
  ASSERT_TRUE(f) << error;
  const auto b = read_fast(f->provider);
  expect_agrees_with_readelf(b, f->provider);
  EXPECT_EQ(b.soname, "libprovider.so.1");
  // foo@FOO_1.0 is the hidden (non-default) version, foo@@FOO_2.0 the default.
  int hidden = 0, dflt = 0;
  for (const auto& s : b.symbols) {
    if (s.name != "foo" || !s.defined) continue;
    if (s.version == "FOO_1.0" && s.version_hidden) ++hidden;
    if (s.version == "FOO_2.0" && !s.version_hidden) ++dflt;
  }
  EXPECT_EQ(hidden, 1);
  EXPECT_EQ(dflt, 1);
  ASSERT_EQ(b.version_definitions.size(), 3U);
  EXPECT_TRUE(b.version_definitions[0].base());
  EXPECT_EQ(b.version_definitions[2].name, "FOO_2.0");
  EXPECT_EQ(b.version_definitions[2].parents, std::vector<std::string>{"FOO_1.0"});
  expect_all_readers_agree(f->provider);
}

TEST(ElfFixtures, ConsumerWithRpathWeakAndMangledSymbols) {
  TempDir dir;
  std::string error;
  auto f = build_pair(dir, "gcc", "g++", "-Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/lib:/opt/x' -Wl,-z,now", &error);
  ASSERT_TRUE(f) << error;
  const auto b = read_fast(f->consumer);
  expect_agrees_with_readelf(b, f->consumer);
  EXPECT_EQ(b.rpath, (std::vector<std::string>{"$ORIGIN/lib", "/opt/x"}));
  EXPECT_TRUE(b.runpath.empty());
  EXPECT_NE(std::find(b.needed.begin(), b.needed.end(), "libprovider.so.1"), b.needed.end());
  const auto* foo = find_symbol(b, "foo", false);
  ASSERT_NE(foo, nullptr);
  EXPECT_EQ(foo->version, "FOO_2.0");
  EXPECT_EQ(foo->version_file, "libprovider.so.1");
  const auto* weak = find_symbol(b, "maybe_there", false);
  ASSERT_NE(weak, nullptr);
  EXPECT_TRUE(weak->weak());
  EXPECT_NE(
      find_symbol(b, "_ZN2ns7mangledERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERSt6vectorIiSaIiEE", true),
      nullptr);
  EXPECT_NE(elf::dt_flags_1_names(b.flags_1), std::vector<std::string>{});
  expect_all_readers_agree(f->consumer);
}

TEST(ElfFixtures, RunpathAndNodeflib) {
  TempDir dir;
  std::string error;
  auto f = build_pair(dir, "gcc", "g++", "-Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN' -Wl,-z,nodefaultlib", &error);
  ASSERT_TRUE(f) << error;
  const auto b = read_fast(f->consumer);
  expect_agrees_with_readelf(b, f->consumer);
  EXPECT_TRUE(b.rpath.empty());
  EXPECT_EQ(b.runpath, std::vector<std::string>{"$ORIGIN"});
  const auto flags = elf::dt_flags_1_names(b.flags_1);
  EXPECT_NE(std::find(flags.begin(), flags.end(), "NODEFLIB"), flags.end());
  expect_all_readers_agree(f->consumer);
}

TEST(ElfFixtures, X86IsaLevelFromGnuPropertyNote) {
  TempDir dir;
  std::string error;
  auto so = build_shared(dir, "libv3.so", "v3.c", "int f(int x) { return x * 3; }\n",
                         "-march=x86-64-v3 -Wl,-z,x86-64-v3", "gcc", &error);
  if (!so) GTEST_SKIP() << "this linker cannot mark x86-64-v3: " << error;
  const auto b = read_fast(*so);
  ASSERT_TRUE(b.x86_isa_level);
  EXPECT_EQ(*b.x86_isa_level, 3);
  expect_agrees_with_readelf(b, *so);
  expect_all_readers_agree(*so);
}

// Debian's cross compilers (installed by scripts/install-deps.sh) give 32-bit and big-endian objects.
class CrossFixture : public ::testing::TestWithParam<std::tuple<std::string, std::string, elf::Class, elf::Endian>> {};

TEST_P(CrossFixture, AgreesWithReadelf) {
  const auto& [triple, machine, cls, endian] = GetParam();
  if (!have_program(triple + "-gcc") || !have_program(triple + "-g++")) {
    GTEST_SKIP() << triple << "-gcc/g++ are not installed (scripts/install-deps.sh installs them)";
  }
  TempDir dir;
  std::string error;
  auto f =
      build_pair(dir, triple + "-gcc", triple + "-g++", "-Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/../lib'", &error);
  ASSERT_TRUE(f) << error;
  for (const auto& path : {f->provider, f->consumer}) {
    const auto b = read_fast(path);
    EXPECT_EQ(b.elf_class, cls);
    EXPECT_EQ(b.endian, endian);
    EXPECT_EQ(elf::machine_name(b.machine, b.elf_class, b.endian, b.e_flags), machine);
    expect_agrees_with_readelf(b, path);
    expect_all_readers_agree(path);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Arches, CrossFixture,
    ::testing::Values(std::make_tuple("i686-linux-gnu", "i686", elf::Class::Elf32, elf::Endian::Little),
                      std::make_tuple("powerpc64-linux-gnu", "ppc64", elf::Class::Elf64, elf::Endian::Big),
                      std::make_tuple("aarch64-linux-gnu", "aarch64", elf::Class::Elf64, elf::Endian::Little)),
    [](const auto& info) { return std::get<1>(info.param); });

TEST(ElfFixtures, SystemLibrariesAgreeWithReadelf) {
  // Real, large, distribution-built libraries on this machine: libstdc++ has thousands of versioned
  // C++ symbols; libc defines GLIBC_* versions.
  const std::vector<std::string> wanted = {"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
                                           "/usr/lib/x86_64-linux-gnu/libc.so.6",
                                           "/usr/lib/x86_64-linux-gnu/libz.so.1"};
  std::vector<std::string> present;
  for (const auto& path : wanted) {
    if (is_file(path)) present.push_back(path);
  }
  if (present.empty()) GTEST_SKIP() << "none of these system libraries is here: " << join(wanted, ", ");
  for (const auto& path : present) {
    const auto b = read_fast(path);
    expect_agrees_with_readelf(b, path);
    expect_all_readers_agree(path);
  }
}

TEST(ElfFixtures, StaticExecutableHasNoDynamicSection) {
  TempDir dir;
  const auto src = dir.write("main.c", "int main(void) { return 0; }\n");
  const auto out = dir.file("static");
  const auto r = run("gcc -static -o " + shell_quote(out) + " " + shell_quote(src));
  if (r.exit_code != 0) GTEST_SKIP() << "no static libc here: " << r.err;
  const auto b = read_fast(out);
  EXPECT_FALSE(b.has_dynamic);
  EXPECT_TRUE(b.needed.empty());
  EXPECT_EQ(elf::type_name(b.type), "EXEC");
  expect_all_readers_agree(out);
}

}  // namespace unity_test_elf_fixtures
