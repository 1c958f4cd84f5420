// What `wheelcheck lint` and `check` name (issue 60, "names"): the C++ scopes of the symbols a member leaves to an
// undeclared distribution are the qualified names' own first scopes (a template function's return type, "long*
// at::TensorBase::data_ptr<long>() const", is no namespace), and a distribution is said to ship a library only
// under the soname it really ships (PyPI's torch ships libtorch.so; Debian's libtorch.so.2.6 is another build's).
// Each case is built here: g++ libraries with those symbols and sonames, packed into wheels.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "support.hpp"
#include "wheelcheck/cxx_names.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/toolkit.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_lint_names {

using namespace wheelcheck;
using wheelcheck::test::run;
using wheelcheck::test::shell_quote;
using wheelcheck::test::TempDir;

std::string db_dir() {
  return wheelcheck::test::source_dir() + "/db";
}

// `wheelcheck lint --format json WHEEL` against the project's db; the document.
nlohmann::json lint_json(const std::string& wheel) {
  const auto r =
      run("WHEELCHECK_OFFLINE=1 " + shell_quote(wheelcheck::test::binary_path()) +
          " lint --no-cache -q --no-config --format json --db " + shell_quote(db_dir()) + " " + shell_quote(wheel));
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 3) << r.exit_code << r.err;
  return nlohmann::json::parse(r.out);
}

std::vector<nlohmann::json> findings_of(const nlohmann::json& doc, const std::string& kind) {
  std::vector<nlohmann::json> out;
  for (const auto& w : doc.at("wheels")) {
    for (const auto& f : w.at("findings")) {
      if (f.at("kind") == kind) out.push_back(f);
    }
  }
  return out;
}

TEST(LintNames, LeadingScopeIsTheQualifiedNamesFirstScope) {
  // Template specializations: the return type comes first in the demangled name.
  EXPECT_EQ(cxx::leading_scope("_ZNK2at10TensorBase8data_ptrIlEEPT_v"), "at::");
  EXPECT_EQ(cxx::leading_scope("_ZNK2at10TensorBase8data_ptrIhEEPT_v"), "at::");
  EXPECT_EQ(cxx::leading_scope("unsigned char* at::TensorBase::data_ptr<unsigned char>() const"), "at::");
  EXPECT_EQ(cxx::leading_scope("_ZN3c105ErrorC1EPKc"), "c10::");
  EXPECT_EQ(cxx::leading_scope("_ZN4c10d4Work18blockCurrentStreamEv"), "c10d::");
  // A function returning a scoped type from no scope has none; the arguments' scopes are not its own.
  EXPECT_EQ(cxx::leading_scope("at::Tensor make<int>(c10::Device)"), "");
  EXPECT_EQ(cxx::leading_scope("_Z3fooN3c106DeviceE"), "");
  EXPECT_EQ(cxx::leading_scope("foo"), "");
  EXPECT_EQ(cxx::leading_scope("operator<<(std::ostream&, at::Tensor const&)"), "");
  // Special names are about their subject.
  EXPECT_EQ(cxx::leading_scope("_ZTVN3c105ErrorE"), "c10::");    // vtable for c10::Error
  EXPECT_EQ(cxx::leading_scope("_ZTIN2at6TensorE"), "at::");     // typeinfo for at::Tensor
  EXPECT_EQ(cxx::leading_scope("_ZGVZN2at4implEvE1x"), "at::");  // guard variable for at::impl()::x
  EXPECT_EQ(cxx::leading_scope("std::vector<at::Tensor>::size() const"), "std::");
  EXPECT_EQ(cxx::leading_scope("(anonymous namespace)::helper()"), "(anonymous namespace)::");
}

// A member that binds torch-shaped C++ symbols through a library no distribution ships under that soname: its
// undeclared-dependency names the scopes c10:: and at::, never "long* at::" or "unsigned char* at::".
TEST(LintNames, UndeclaredSymbolsAreListedByTheirOwnNamespaces) {
  TempDir dir;
  std::string error;
  const auto lib = wheelcheck::test::build_shared(dir, "lib/libatstub.so.1", "atstub.cpp", R"(
namespace c10 { struct Error { Error(const char*); }; Error::Error(const char*) {} }
namespace at {
struct TensorBase { void* p; template <class T> T* data_ptr() const; };
template <class T> T* TensorBase::data_ptr() const { return static_cast<T*>(p); }
template long* TensorBase::data_ptr<long>() const;
template unsigned char* TensorBase::data_ptr<unsigned char>() const;
}
)",
                                                  "-Wl,-soname,libatstub.so.1", "g++", &error);
  ASSERT_TRUE(lib) << error;
  std::filesystem::create_symlink("libatstub.so.1", dir.file("lib/libatstub.so"));
  const auto ext = wheelcheck::test::build_shared(dir, "ext/_native.so", "native.cpp", R"(
namespace c10 { struct Error { Error(const char*); }; }
namespace at {
struct TensorBase { void* p; template <class T> T* data_ptr() const; };
extern template long* TensorBase::data_ptr<long>() const;
extern template unsigned char* TensorBase::data_ptr<unsigned char>() const;
}
extern "C" long native_use(const at::TensorBase& t) {
  c10::Error e("x");
  return *t.data_ptr<long>() + *t.data_ptr<unsigned char>();
}
)",
                                                  "-L" + shell_quote(dir.file("lib")) + " -latstub", "g++", &error);
  ASSERT_TRUE(ext) << error;
  const auto wheel =
      wheelcheck::test::make_wheel(dir, "pkg-1.0-cp311-cp311-linux_x86_64.whl", {{"pkg/_native.so", *ext}});
  const auto doc = lint_json(wheel);
  const auto undeclared = findings_of(doc, "undeclared-dependency");
  ASSERT_EQ(undeclared.size(), 1u) << doc.dump(1);
  const std::string e = undeclared.front().at("explanation").get<std::string>();
  // "pkg/_native.so leaves 3 c10:: and at:: symbols undefined (...)"
  const auto from = e.find("leaves 3 ");
  const auto to = e.find(" symbols undefined");
  ASSERT_TRUE(from != std::string::npos && to != std::string::npos && from < to) << e;
  std::set<std::string> scopes;
  std::string listed = e.substr(from + 9, to - from - 9);
  for (std::size_t p = 0;;) {
    const auto q = listed.find(" and ", p);
    scopes.insert(listed.substr(p, q == std::string::npos ? std::string::npos : q - p));
    if (q == std::string::npos) break;
    p = q + 5;
  }
  EXPECT_EQ(scopes, (std::set<std::string>{"c10::", "at::"})) << e;
  EXPECT_EQ(listed.find('*'), std::string::npos) << e;
}

// The symbols a member of the wheel itself defines are the wheel's: Debian's libtorch_cpu.so.2.6 packed beside the
// libc10.so.2.6 that defines its c10:: symbols needs no torch for them (the torch corpus wheel had "leaves 301 c10::
// symbols undefined, which only torch ships").
TEST(LintNames, SymbolsTheWheelDefinesNeedNoDistribution) {
  TempDir dir;
  std::string error;
  const auto lib = wheelcheck::test::build_shared(
      dir, "lib/libc10own.so.1", "c10own.cpp",
      "namespace c10 { struct Error { Error(const char*); }; Error::Error(const char*) {} }\n",
      "-Wl,-soname,libc10own.so.1", "g++", &error);
  ASSERT_TRUE(lib) << error;
  std::filesystem::create_symlink("libc10own.so.1", dir.file("lib/libc10own.so"));
  const auto user = wheelcheck::test::build_shared(
      dir, "ext/libuser.so", "user.cpp",
      "namespace c10 { struct Error { Error(const char*); }; }\nextern \"C\" void use() { c10::Error e(\"x\"); }\n",
      "-L" + shell_quote(dir.file("lib")) + " -lc10own -Wl,-rpath,'$ORIGIN'", "g++", &error);
  ASSERT_TRUE(user) << error;
  const auto alone =
      wheelcheck::test::make_wheel(dir, "alone-1.0-py3-none-linux_x86_64.whl", {{"alone/libuser.so", *user}});
  const auto both = wheelcheck::test::make_wheel(dir, "both-1.0-py3-none-linux_x86_64.whl",
                                                 {{"both/libuser.so", *user}, {"both/libc10own.so.1", *lib}});
  auto c10_symbols = [](const nlohmann::json& doc) {
    std::size_t n = 0;
    for (const auto& f : findings_of(doc, "undeclared-dependency"))
      n += f.at("explanation").get<std::string>().find("c10::") != std::string::npos;
    return n;
  };
  EXPECT_EQ(c10_symbols(lint_json(alone)), 1u) << "without the library, its c10:: symbols are torch's";
  EXPECT_EQ(c10_symbols(lint_json(both)), 0u) << lint_json(both).dump(1);
}

// provider_of: a soname a distribution ships, exactly; Debian's versioned sonames of the same libraries are another
// build's (PyPI's torch ships libtorch.so and libc10.so, never libtorch.so.2.6).
TEST(LintNames, AProviderShipsOnlyTheSonamesItLists) {
  const image::Db db(db_dir());
  const auto providers = toolkit::load_providers(db);
  const auto* torch = toolkit::provider_of(providers, "libtorch.so");
  ASSERT_NE(torch, nullptr);
  EXPECT_EQ(torch->distributions.front(), "torch");
  EXPECT_EQ(toolkit::provider_of(providers, "libtorch.so.2.6"), nullptr);
  EXPECT_EQ(toolkit::provider_of(providers, "libc10.so.2.6"), nullptr);
  ASSERT_NE(toolkit::provider_of(providers, "libcudart.so.12"), nullptr);
  EXPECT_EQ(toolkit::provider_of(providers, "libcudart.so.12.4.127"), nullptr);
}

// `check`'s fix for a missing library names a distribution to install only when it ships that very soname: a member
// needing libtorch.so is told to install torch; one needing Debian's libtorch.so.2.6 is told to provide the library
// (no torch wheel has it), and lint does not call it torch's undeclared dependency.
TEST(LintNames, AFixInstallsADistributionOnlyForTheSonameItShips) {
  TempDir dir;
  std::string error;
  for (const std::string soname : {"libtorch.so", "libtorch.so.2.6"}) {
    const auto lib =
        wheelcheck::test::build_shared(dir, soname + "/" + soname, "torch.c", "int torch_init(void) { return 1; }\n",
                                       "-Wl,-soname," + soname, "gcc", &error);
    ASSERT_TRUE(lib) << error;
    const auto ext =
        wheelcheck::test::build_shared(dir, soname + "/_native.so", "native.c",
                                       "int torch_init(void);\nint native_use(void) { return torch_init(); }\n",
                                       "-L" + shell_quote(dir.file(soname)) + " -l:" + soname, "gcc", &error);
    ASSERT_TRUE(ext) << error;
    std::filesystem::create_directories(dir.file(soname + "/dist"));
    const auto wheel = wheelcheck::test::make_wheel(dir, soname + "/dist/pkg-1.0-cp311-cp311-linux_x86_64.whl",
                                                    {{"pkg/_native.so", *ext}});
    const auto r = run("WHEELCHECK_OFFLINE=1 " + shell_quote(wheelcheck::test::binary_path()) +
                       " check --no-cache -q --no-config --format json --image debian12 --db " + shell_quote(db_dir()) +
                       " " + shell_quote(wheel));
    ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    std::string fix;
    for (const auto& f : doc.at("findings")) {
      if (f.at("kind") == "missing-library" && f.at("library") == soname) fix = f.at("fix").get<std::string>();
    }
    ASSERT_FALSE(fix.empty()) << doc.dump(1);
    const auto lint = lint_json(wheel);
    if (soname == "libtorch.so") {
      EXPECT_EQ(fix.rfind("install torch", 0), 0u) << fix;
      EXPECT_NE(fix.find("(it ships libtorch.so)"), std::string::npos) << fix;
      EXPECT_EQ(findings_of(lint, "undeclared-dependency").size(), 1u) << lint.dump(1);
    } else {
      EXPECT_EQ(fix.rfind("provide libtorch.so.2.6", 0), 0u) << fix;
      EXPECT_EQ(fix.find("torch beside"), std::string::npos) << fix;
      EXPECT_TRUE(findings_of(lint, "undeclared-dependency").empty()) << lint.dump(1);
    }
  }
}

}  // namespace unity_test_lint_names
