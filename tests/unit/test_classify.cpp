// Missing-symbol classification (inspector/verdict/classify.cpp; the C++ name parts it uses are tested in
// test_cxx_names.cpp). Real libraries built here from a few lines of C++: a provider compiled one way, a consumer
// compiled against other declarations, the consumer's undefined symbol taken from its .dynsym and classified against
// the provider's export table (old vs new std::string and std::list ABI both ways, a lost [abi:cxx11] tag, changed
// parameters, qualifiers and return types, operators and templates, versions a version script does not define,
// destructor variants, the per-table index and its thread safety). Last, the corpus: PyTorch 2.6's libtorch_python
// against 2.14's libc10 and libtorch_cpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"
#include "wheelcheck/cxx_names.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/verdict.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_classify {

using namespace wheelcheck;
using namespace wheelcheck::test;
namespace fs = std::filesystem;

namespace {

exports::Table table_of(const std::string& path) {
  return exports::Table::from_binary(elf::read_elf_file(path), fs::path(path).filename().string(), path);
}

struct Need {
  std::string name;
  std::string version;
};

// The undefined symbol of `path` whose demangled name (or name) contains `text`; exactly one must.
Need need_of(const std::string& path, const std::string& text) {
  std::vector<Need> hits;
  for (const auto& s : elf::read_elf_file(path).symbols) {
    if (!s.defined && cxx::demangle_or_self(s.name).find(text) != std::string::npos)
      hits.push_back({s.name, s.version});
  }
  if (hits.size() != 1) {
    throw std::runtime_error(path + ": " + std::to_string(hits.size()) + " undefined symbols match " + text);
  }
  return hits.front();
}

verdict::Classification classify(const Need& need, const std::vector<const exports::Table*>& tables) {
  return verdict::classify_missing_symbol(need.name, need.version, tables);
}

std::string show(const verdict::Classification& c) {
  std::string s = c.classification + " [" + c.provider + "] " + c.explanation + " {";
  for (const auto& k : c.candidates) s += " " + k + ";";
  return s + " }";
}

}  // namespace

// Builds shared libraries in a fresh folder; a failed build throws with the compiler's message. Outside the
// anonymous namespace: the tests derive from it (GCC warns about a base of internal linkage once the file
// is compiled in a unity batch).
class ClassifyBuilt : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_program("g++") || !have_program("gcc")) GTEST_SKIP() << "no compiler";
  }

  std::string build(const std::string& name, const std::string& source_name, const std::string& source,
                    const std::string& flags = "") {
    std::string error;
    const bool c = source_name.ends_with(".c");
    const auto path =
        build_shared(m_dir, name, source_name, source, (c ? "" : "-std=gnu++17 ") + flags, c ? "gcc" : "g++", &error);
    if (!path) throw std::runtime_error("building " + name + ": " + error);
    return *path;
  }
  const TempDir& dir() const { return m_dir; }

 private:
  TempDir m_dir;
};

const char* const k_string_list_provider = R"(#include <list>
#include <string>
namespace ns {
void f(const std::string& s) { (void)s; }
int g(std::list<int>& l) { return static_cast<int>(l.size()); }
std::string h(int n) { return std::string(static_cast<std::size_t>(n), 'x'); }
}
)";

const char* const k_string_list_consumer = R"(#include <list>
#include <string>
namespace ns {
void f(const std::string& s);
int g(std::list<int>& l);
std::string h(int n);
}
int use() {
  std::list<int> l;
  ns::f("x");
  return ns::g(l) + static_cast<int>(ns::h(2).size());
}
)";

// ---------------------------------------------------------------------------------------------------
// Built libraries.

TEST_F(ClassifyBuilt, OldAbiWheelAgainstNewAbiLibrary) {
  const auto provider = build("libprovider.so", "provider.cpp", k_string_list_provider);
  const auto consumer = build("libconsumer.so", "consumer.cpp", k_string_list_consumer, "-D_GLIBCXX_USE_CXX11_ABI=0");
  const auto table = table_of(provider);
  const std::vector<const exports::Table*> scope = {&table};

  const auto f = classify(need_of(consumer, "ns::f("), scope);
  EXPECT_EQ(f.classification, "cxx-abi-mismatch") << show(f);
  EXPECT_EQ(f.provider, "libprovider.so");
  EXPECT_EQ(f.demangled, cxx::demangle("_ZN2ns1fERKSs").value());
  EXPECT_EQ(f.candidates,
            std::vector<std::string>{
                "ns::f(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)"});
  EXPECT_NE(f.explanation.find("the wheel was built with _GLIBCXX_USE_CXX11_ABI=0 (old std::string); "
                               "libprovider.so exports the C++11-ABI signature"),
            std::string::npos)
      << f.explanation;

  const auto g = classify(need_of(consumer, "ns::g("), scope);
  EXPECT_EQ(g.classification, "cxx-abi-mismatch") << show(g);
  EXPECT_EQ(g.candidates, std::vector<std::string>{"ns::g(std::__cxx11::list<int, std::allocator<int> >&)"});
  EXPECT_NE(g.explanation.find("_GLIBCXX_USE_CXX11_ABI=0 (old std::list)"), std::string::npos) << g.explanation;

  // Only the [abi:cxx11] tag tells them apart: the wheel side has none.
  const auto h = classify(need_of(consumer, "ns::h("), scope);
  EXPECT_EQ(h.classification, "cxx-abi-mismatch") << show(h);
  EXPECT_EQ(h.candidates, std::vector<std::string>{"ns::h[abi:cxx11](int)"});
  EXPECT_NE(h.explanation.find("_GLIBCXX_USE_CXX11_ABI=0"), std::string::npos) << h.explanation;
}

TEST_F(ClassifyBuilt, NewAbiWheelAgainstOldAbiLibrary) {
  const auto provider = build("libold.so", "old.cpp", k_string_list_provider, "-D_GLIBCXX_USE_CXX11_ABI=0");
  const auto consumer = build("libconsumer.so", "consumer.cpp", k_string_list_consumer);
  const auto table = table_of(provider);
  const std::vector<const exports::Table*> scope = {&table};

  const auto f = classify(need_of(consumer, "ns::f("), scope);
  EXPECT_EQ(f.classification, "cxx-abi-mismatch") << show(f);
  EXPECT_EQ(f.provider, "libold.so");
  ASSERT_EQ(f.candidates.size(), 1u);
  EXPECT_EQ(f.candidates[0], cxx::demangle("_ZN2ns1fERKSs").value());
  EXPECT_NE(f.explanation.find("the wheel was built with _GLIBCXX_USE_CXX11_ABI=1 (C++11-ABI std::string); "
                               "libold.so was built with _GLIBCXX_USE_CXX11_ABI=0 and exports the old-ABI signature"),
            std::string::npos)
      << f.explanation;

  const auto g = classify(need_of(consumer, "ns::g("), scope);
  EXPECT_EQ(g.classification, "cxx-abi-mismatch") << show(g);
  EXPECT_NE(g.explanation.find("C++11-ABI std::list"), std::string::npos) << g.explanation;

  // The wheel's ns::h[abi:cxx11](int) against ns::h(int) of a library with nothing of the C++11 ABI.
  const auto h = classify(need_of(consumer, "ns::h["), scope);
  EXPECT_EQ(h.classification, "cxx-abi-mismatch") << show(h);
  EXPECT_EQ(h.candidates, std::vector<std::string>{"ns::h(int)"});
}

TEST_F(ClassifyBuilt, LostAbiTagInANewAbiLibraryIsAChangedReturnType) {
  // As c10::getDtypeNames between PyTorch 2.6 and 2.14: the return type no longer involves std::string.
  const auto provider = build("libnames.so", "names.cpp", R"(#include <string>
#include <string_view>
namespace ns {
std::string_view name(int) { return "x"; }
void keep(const std::string&) {}
}
)");
  const auto consumer = build("libconsumer.so", "consumer.cpp", R"(#include <string>
namespace ns { std::string name(int); }
int use() { return static_cast<int>(ns::name(1).size()); }
)");
  const auto table = table_of(provider);
  const auto c = classify(need_of(consumer, "ns::name"), {&table});
  EXPECT_EQ(c.classification, "signature-changed") << show(c);
  EXPECT_EQ(c.demangled, "ns::name[abi:cxx11](int)");
  EXPECT_EQ(c.candidates, std::vector<std::string>{"ns::name(int)"});
  EXPECT_NE(c.explanation.find("without the [abi:cxx11] tag"), std::string::npos) << c.explanation;
  EXPECT_NE(c.explanation.find("its return type changed"), std::string::npos) << c.explanation;
}

TEST_F(ClassifyBuilt, ChangedParameters) {
  const auto provider = build("liblogger.so", "logger.cpp", R"(namespace ns {
struct Loc { const char* file; int line; };
struct Logger { Logger(Loc where, int severity, bool verbose); int level; };
Logger::Logger(Loc where, int severity, bool verbose) : level(where.line + severity + (verbose ? 1 : 0)) {}
}
)");
  const auto consumer = build("libconsumer.so", "consumer.cpp", R"(namespace ns {
struct Logger { Logger(const char* file, int line, int severity); int level; };
}
int use() { ns::Logger l("x.cpp", 1, 2); return l.level; }
)");
  const auto table = table_of(provider);
  const auto need = need_of(consumer, "ns::Logger::Logger");
  EXPECT_EQ(need.name, "_ZN2ns6LoggerC1EPKcii");
  const auto c = classify(need, {&table});
  EXPECT_EQ(c.classification, "signature-changed") << show(c);
  EXPECT_EQ(c.demangled, "ns::Logger::Logger(char const*, int, int)");
  EXPECT_EQ(c.candidates, std::vector<std::string>{"ns::Logger::Logger(ns::Loc, int, bool)"});  // C1, C2 as one
  EXPECT_EQ(c.provider, "liblogger.so");
  EXPECT_EQ(c.explanation,
            "ns::Logger::Logger is exported with other parameters: (ns::Loc, int, bool) instead of "
            "(char const*, int, int), in liblogger.so");
}

TEST_F(ClassifyBuilt, ChangedQualifiers) {
  const auto provider = build("libx.so", "x.cpp", R"(namespace ns {
struct X { int get() const; int v; };
int X::get() const { return v; }
}
)");
  const auto consumer = build("libconsumer.so", "consumer.cpp", R"(namespace ns { struct X { int get(); int v; }; }
int use(ns::X& x) { return x.get(); }
)");
  const auto table = table_of(provider);
  const auto c = classify(need_of(consumer, "ns::X::get"), {&table});
  EXPECT_EQ(c.classification, "signature-changed") << show(c);
  EXPECT_EQ(c.candidates, std::vector<std::string>{"ns::X::get() const"});
  EXPECT_NE(c.explanation.find("other qualifiers: () const instead of ()"), std::string::npos) << c.explanation;
}

TEST_F(ClassifyBuilt, OperatorsAndTemplates) {
  const auto provider = build("libops.so", "ops.cpp", R"(namespace ns {
struct X {
  int v;
  bool operator<(const X& o) const;
  int operator()(int a) const;
  explicit operator int() const;
  X& operator+=(long d);
};
bool X::operator<(const X& o) const { return v < o.v; }
int X::operator()(int a) const { return v + a; }
X::operator int() const { return v; }
X& X::operator+=(long d) { v += static_cast<int>(d); return *this; }
bool operator==(const X& a, const X& b) { return a.v == b.v; }
template <class T> T twice(T t) { return t + t; }
template int twice<int>(int);
template <class T> double scale(T t, double f) { return static_cast<double>(t) * f; }
template double scale<int>(int, double);
}
)");
  const auto consumer = build("libconsumer.so", "consumer.cpp", R"(namespace ns {
struct X {
  int v;
  bool operator<(X o) const;
  int operator()(int a, int b) const;
  explicit operator long() const;
  X& operator+=(int d);
};
bool operator==(const X& a, int b);
template <class T> T twice(T t);
template <class T> float scale(T t, double f);
}
long use(ns::X& x) {
  long r = x < x;
  r += x(1, 2) + static_cast<long>(x) + (x == 3);
  x += 1;
  return r + ns::twice<long>(2L) + static_cast<long>(ns::scale<int>(1, 2.0));
}
)");
  const auto table = table_of(provider);
  const std::vector<const exports::Table*> scope = {&table};
  struct Expect {
    const char* needed;  // in the demangled name
    const char* classification;
    std::vector<std::string> candidates;
    const char* explanation;
  };
  const Expect expects[] = {
      {"ns::X::operator<",
       "signature-changed",
       {"ns::X::operator<(ns::X const&) const"},
       "ns::X::operator< is exported with other parameters: (ns::X const&) const instead of (ns::X) const"},
      {"ns::X::operator()",
       "signature-changed",
       {"ns::X::operator()(int) const"},
       "ns::X::operator() is exported with other parameters: (int) const instead of (int, int) const"},
      {"ns::X::operator+=",
       "signature-changed",
       {"ns::X::operator+=(long)"},
       "ns::X::operator+= is exported with other parameters: (long) instead of (int)"},
      {"ns::operator==",
       "signature-changed",
       {"ns::operator==(ns::X const&, ns::X const&)"},
       "ns::operator== is exported with other parameters"},
      // A conversion to another type, another instantiation: other qualified names.
      {"ns::X::operator long", "absent", {}, "no library in the load scope exports ns::X::operator long() const"},
      {"ns::twice<long>", "absent", {}, "no library in the load scope exports long ns::twice<long>(long)"},
      {"ns::scale<int>",
       "signature-changed",
       {"double ns::scale<int>(int, double)"},
       "ns::scale<int> is exported with another return type: double instead of float"},
  };
  for (const auto& e : expects) {
    const auto c = classify(need_of(consumer, e.needed), scope);
    EXPECT_EQ(c.classification, e.classification) << e.needed << ": " << show(c);
    EXPECT_EQ(c.candidates, e.candidates) << e.needed << ": " << show(c);
    EXPECT_NE(c.explanation.find(e.explanation), std::string::npos) << e.needed << ": " << c.explanation;
    EXPECT_FALSE(c.demangled.empty());
  }
}

TEST_F(ClassifyBuilt, VersionNewerThanTheLibraryDefines) {
  const char* const source = R"(int foo_1(void) { return 1; }
int foo_2(void) { return 2; }
int foo_3(void) { return 3; }
int bar(void) { return 0; }
int baz(void) { return 0; }
__asm__(".symver foo_1, foo@VER_1");
#ifdef WITH_VER_3
__asm__(".symver foo_2, foo@VER_2");
__asm__(".symver foo_3, foo@@VER_3");
#else
__asm__(".symver foo_2, foo@@VER_2");
#endif
)";
  const auto new_map = dir().write("new.map",
                                   "VER_1 { global: foo; bar; local: *; };\nVER_2 { global: foo; } VER_1;\n"
                                   "VER_3 { global: foo; baz; } VER_2;\n");
  const auto old_map =
      dir().write("old.map", "VER_1 { global: foo; bar; local: *; };\nVER_2 { global: foo; } VER_1;\n");
  const auto mid_map = dir().write("mid.map",
                                   "VER_1 { global: foo; bar; local: *; };\nVER_2 { global: foo; } VER_1;\n"
                                   "VER_3 { global: baz; } VER_2;\n");
  const std::string so = "-Wl,-soname,libv.so.1 -Wl,--version-script=";
  const auto built_new = build("new/libv.so", "new.c", source, "-DWITH_VER_3 " + so + shell_quote(new_map));
  const auto built_old = build("old/libv.so", "old.c", std::string(source), so + shell_quote(old_map));
  const auto built_mid = build("mid/libv.so", "mid.c", std::string(source), so + shell_quote(mid_map));
  const auto consumer = build("libconsumer.so", "consumer.c", "int foo(void);\nint use(void) { return foo(); }\n",
                              shell_quote(built_new));
  const auto need = need_of(consumer, "foo");
  ASSERT_EQ(need.version, "VER_3");

  const auto old_table = table_of(built_old);
  ASSERT_EQ(old_table.bind("foo", "VER_3"), nullptr);
  const auto c = classify(need, {&old_table});
  EXPECT_EQ(c.classification, "version-too-new") << show(c);
  EXPECT_EQ(c.provider, "libv.so");
  EXPECT_EQ(c.demangled, "");
  EXPECT_EQ(c.candidates, (std::vector<std::string>{"foo@VER_1", "foo@@VER_2"}));
  EXPECT_EQ(c.explanation,
            "foo@VER_3 is not exported by libv.so, which has it only at VER_1, VER_2 (default); libv.so does not "
            "define the version VER_3 at all (an older release than the one the wheel was built against)");

  const auto mid_table = table_of(built_mid);
  const auto m = classify(need, {&mid_table});
  EXPECT_EQ(m.classification, "version-too-new") << show(m);
  EXPECT_NE(m.explanation.find("libv.so defines the version VER_3, but not foo at it"), std::string::npos)
      << m.explanation;

  // An unversioned need, and only a non-default version exported.
  const auto hidden_map = dir().write("hidden.map", "VER_1 { global: foo; local: *; };\n");
  const auto hidden = build("hidden/libv.so", "hidden.c",
                            "int foo_1(void) { return 1; }\n"
                            "__asm__(\".symver foo_1, foo@VER_1\");\n",
                            "-Wl,--version-script=" + shell_quote(hidden_map));
  const auto hidden_table = table_of(hidden);
  ASSERT_EQ(hidden_table.bind("foo", ""), nullptr);
  const auto u = verdict::classify_missing_symbol("foo", "", {&hidden_table});
  EXPECT_EQ(u.classification, "version-too-new") << show(u);
  EXPECT_EQ(u.candidates, std::vector<std::string>{"foo@VER_1"});
  EXPECT_NE(u.explanation.find("needed without a version"), std::string::npos) << u.explanation;
}

TEST_F(ClassifyBuilt, Absent) {
  const auto provider = build("libp.so", "p.cpp", "namespace ns { int kept(int x) { return x; } }\n");
  const auto table = table_of(provider);
  const auto cxx = verdict::classify_missing_symbol("_ZN2ns4goneEi", "", {&table});
  EXPECT_EQ(cxx.classification, "absent");
  EXPECT_EQ(cxx.demangled, "ns::gone(int)");
  EXPECT_EQ(cxx.explanation, "no library in the load scope exports ns::gone(int)");
  EXPECT_TRUE(cxx.candidates.empty());
  EXPECT_EQ(cxx.provider, "");

  const auto c = verdict::classify_missing_symbol("no_such_function", "", {&table});
  EXPECT_EQ(c.classification, "absent");
  EXPECT_EQ(c.demangled, "");
  EXPECT_EQ(c.explanation, "no library in the load scope exports no_such_function");

  const auto vtable = verdict::classify_missing_symbol("_ZTVN2ns4GoneE", "", {&table});
  EXPECT_EQ(vtable.classification, "absent");
  EXPECT_EQ(vtable.demangled, "vtable for ns::Gone");

  EXPECT_EQ(verdict::classify_missing_symbol("_ZN2ns4goneEi", "", {}).classification, "absent");
}

TEST_F(ClassifyBuilt, OnlyAnotherDestructorVariant) {
  // The complete-object destructor (D1) kept local by a version script: only D2 is exported.
  const auto map = dir().write("d.map", "{ global: *; local: _ZN2ns1XD1Ev; };\n");
  const auto provider = build("libd.so", "d.cpp", "namespace ns { struct X { ~X(); int v; }; X::~X() { v = 0; } }\n",
                              "-Wl,--version-script=" + shell_quote(map));
  const auto table = table_of(provider);
  ASSERT_EQ(table.bind("_ZN2ns1XD1Ev", ""), nullptr);
  ASSERT_NE(table.bind("_ZN2ns1XD2Ev", ""), nullptr);
  const auto c = verdict::classify_missing_symbol("_ZN2ns1XD1Ev", "", {&table});
  EXPECT_EQ(c.classification, "absent") << show(c);
  EXPECT_NE(c.explanation.find("only other constructor or destructor variants of it are exported (_ZN2ns1XD2Ev in "
                               "libd.so)"),
            std::string::npos)
      << c.explanation;
}

TEST_F(ClassifyBuilt, SearchesEveryTableOfTheScopeInOrder) {
  const auto first = build("libfirst.so", "first.cpp", "namespace other { int f(int x) { return x; } }\n");
  const auto second = build("libsecond.so", "second.cpp", "namespace ns { int f(long x) { return int(x); } }\n");
  const auto third = build("libthird.so", "third.cpp", "namespace ns { int f(short x) { return x; } }\n");
  const auto t1 = table_of(first);
  const auto t2 = table_of(second);
  const auto t3 = table_of(third);
  const auto c = verdict::classify_missing_symbol("_ZN2ns1fEi", "", {&t1, &t2, &t3});
  EXPECT_EQ(c.classification, "signature-changed") << show(c);
  EXPECT_EQ(c.provider, "libsecond.so");
  EXPECT_EQ(c.candidates, (std::vector<std::string>{"ns::f(long)", "ns::f(short)"}));
  EXPECT_EQ(c.explanation,
            "ns::f is exported with other parameters: (long) or (short) instead of (int), in libsecond.so");
}

TEST_F(ClassifyBuilt, DualAbiScopesUseTheIndexFromManyThreads) {
  // ns::Box<std::string>::put: the class's template argument is mangled Ss by the old ABI and
  // NSt7__cxx1112basic_string... by the new one, so no mangled prefix is shared; the per-table index is.
  const char* const box = R"(#include <string>
namespace ns {
template <class T> struct Box { int put(int v); };
template <class T> int Box<T>::put(int v) { return v; }
template struct Box<std::string>;
}
)";
  const auto provider = build("libbox.so", "box.cpp", box);
  const auto consumer = build("libconsumer.so", "consumer.cpp", R"(#include <string>
namespace ns { template <class T> struct Box { int put(int v); }; }
int use() { ns::Box<std::string> b; return b.put(1); }
)",
                              "-D_GLIBCXX_USE_CXX11_ABI=0");
  const auto need = need_of(consumer, "::put");
  EXPECT_EQ(need.name, "_ZN2ns3BoxISsE3putEi");
  EXPECT_TRUE(cxx::mangled_search_prefixes(need.name).empty());
  const auto table = table_of(provider);

  std::vector<verdict::Classification> results(8);
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < results.size(); ++k) {
    threads.emplace_back([&, k] { results[k] = classify(need, {&table}); });
  }
  for (auto& t : threads) t.join();
  for (const auto& c : results) {
    EXPECT_EQ(c.classification, "cxx-abi-mismatch") << show(c);
    EXPECT_EQ(
        c.candidates,
        std::vector<std::string>{
            "ns::Box<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >::put(int)"});
    EXPECT_EQ(c.explanation, results.front().explanation);
  }

  // Another table at an address the cache has seen (its index built) is not mistaken for the first.
  const auto other = build("libbox2.so", "box2.cpp",
                           "namespace ns { template <class T> struct Box { int put(int); };\n"
                           "template <> int Box<int>::put(int v) { return v; } }\n");
  std::optional<exports::Table> slot;
  slot.emplace(table_of(provider));
  const exports::Table* const address = &*slot;
  EXPECT_EQ(classify(need, {address}).classification, "cxx-abi-mismatch");
  slot.reset();
  slot.emplace(table_of(other));
  ASSERT_EQ(&*slot, address);
  const auto c = classify(need, {address});
  EXPECT_EQ(c.classification, "absent") << show(c);
}

// ---------------------------------------------------------------------------------------------------
// The corpus: what PyTorch 2.6's libtorch_python needs from c10 that 2.14 no longer provides.

TEST(ClassifyCorpus, Torch26PythonAgainstTorch214) {
  const std::string lib = corpus_dir() + "/debs/libtorch2.6/usr/lib/x86_64-linux-gnu/libtorch_python.so.2.6.0";
  const std::string dir214 = corpus_dir() + "/debs/libtorch2.14/usr/lib/x86_64-linux-gnu/";
  const std::string c10 = dir214 + "libc10.so.2.14.1";
  const std::string cpu = dir214 + "libtorch_cpu.so.2.14.1";
  if (!fs::exists(lib) || !fs::exists(c10) || !fs::exists(cpu)) {
    GTEST_SKIP() << "corpus absent: run ../shared/corpus/fetch-real-binaries.sh";
  }
  const auto c10_table = table_of(c10);
  const auto cpu_table = table_of(cpu);
  const std::vector<const exports::Table*> scope = {&c10_table, &cpu_table};

  // Undefined, non-weak symbols whose qualified name is in c10 (c10::complex<double> const*
  // at::TensorBase::const_data_ptr<...>() only returns a c10 type: it is at::'s).
  std::vector<elf::Symbol> needs;
  for (const auto& s : elf::read_elf_file(lib).symbols) {
    if (s.defined || s.weak()) continue;
    const auto d = cxx::demangle(s.name);
    if (d && cxx::qualified_name(*d).starts_with("c10::")) needs.push_back(s);
  }
  EXPECT_EQ(needs.size(), 334u);
  std::vector<elf::Symbol> missing;
  for (const auto& s : needs) {
    if (c10_table.bind(s.name, s.version) == nullptr && cpu_table.bind(s.name, s.version) == nullptr) {
      missing.push_back(s);
    }
  }
  ASSERT_EQ(missing.size(), 22u);

  const auto start = std::chrono::steady_clock::now();
  std::vector<verdict::Classification> results;
  for (const auto& s : missing) results.push_back(verdict::classify_missing_symbol(s.name, s.version, scope));
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  std::map<std::string, int> counts;
  bool logger_seen = false;
  for (std::size_t k = 0; k < missing.size(); ++k) {
    const auto& c = results[k];
    ++counts[c.classification];
    std::cout << "  " << c.classification << "  " << c.demangled << "\n      " << c.explanation << "\n";
    if (c.demangled == "c10::getDtypeNames[abi:cxx11](c10::ScalarType)") {
      EXPECT_EQ(c.classification, "signature-changed");
      EXPECT_EQ(c.candidates, std::vector<std::string>{"c10::getDtypeNames(c10::ScalarType)"});
    }
    if (c.demangled == "c10::MessageLogger::MessageLogger(char const*, int, int)") {
      logger_seen = true;
      EXPECT_EQ(c.classification, "signature-changed");
      EXPECT_EQ(c.provider, "libc10.so.2.14.1");
      EXPECT_NE(std::find(c.candidates.begin(), c.candidates.end(),
                          "c10::MessageLogger::MessageLogger(c10::SourceLocation, int, bool)"),
                c.candidates.end())
          << show(c);
    }
    EXPECT_FALSE(c.demangled.empty());
  }
  EXPECT_TRUE(logger_seen);
  std::cout << "  classified " << missing.size() << " in " << ms << " ms:";
  for (const auto& [k, n] : counts) std::cout << " " << k << " " << n;
  std::cout << "\n";
  // Moved to header-only inline code (PyObjectSlot, the SymInt operators) or renamed: absent; the logger's
  // constructor and getDtypeNames (whose return type no longer holds std::string) changed.
  EXPECT_EQ(counts, (std::map<std::string, int>{{"absent", 20}, {"signature-changed", 2}}));

  // For the record: a name no mangled prefix serves (std::__cxx11 scopes) builds each table's index once.
  const auto index_start = std::chrono::steady_clock::now();
  const auto fallback = verdict::classify_missing_symbol(
      "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE11wheelcheck_Ev", "", scope);
  const auto index_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - index_start).count();
  EXPECT_EQ(fallback.classification, "absent");
  std::cout << "  a name needing the per-table index, first call: " << index_ms << " ms\n";
}

}  // namespace unity_test_classify
