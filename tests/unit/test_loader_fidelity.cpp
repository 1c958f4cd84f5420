// The disagreements with glibc's own loader that the loader harness (tests/loader) found, each pinned
// here as a test of the library on files built at test time: a broken dependency two members share,
// symbols an extension expects from the Python interpreter, a program's copy relocations. Those the
// command line shows are in tests/cli/test_loader_fidelity_cli.cpp.
#include <filesystem>

#include "support.hpp"
#include "verdict_support.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/probe.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/verdict.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_loader_fidelity {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;
using nlohmann::json;

namespace {

image::Image db_image(const TempDir& dir, const std::string& layers) {
  const std::string path = dir.file("img.json");
  write_binary(path, R"({"schema": "wheelcheck-image/1", "name": "img", "layers": [)" + layers + "]}");
  return image::Db(source_dir() + "/db").resolve(path);
}

verdict::Report check(const std::string& wheel, const image::Image& im) {
  return verdict::check(inspect_wheel(wheel), im);
}

const verdict::MemberReport* member(const verdict::Report& r, const std::string& path) {
  for (const auto& m : r.members) {
    if (m.path == path) return &m;
  }
  return nullptr;
}

}  // namespace

// Two extension modules share libcommon.so, whose own dependency is missing: both fail, and the one
// finding names both members (a route holding either goes off).
TEST(LoaderFidelity, BrokenSharedDependencyFailsEveryMember) {
  TempDir dir;
  const auto im = db_image(dir, R"("debian12", "python3.11-debian")");
  const std::string gone = build(dir, "libgone.so", "int gone(void) { return 1; }\n", "-Wl,-soname,libgone.so");
  const std::string common = build(dir, "libcommon.so", "int gone(void);\nint common(void) { return gone(); }\n",
                                   "-L" + dir.path() + " -lgone -Wl,-soname,libcommon.so");
  const std::string src = "int common(void);\nint f(void) { return common(); }\n";
  const std::string a =
      build(dir, "_a.cpython-311-x86_64-linux-gnu.so", src, "-L" + dir.path() + " -lcommon -Wl,-rpath,'$ORIGIN'");
  const std::string b =
      build(dir, "_b.cpython-311-x86_64-linux-gnu.so", src, "-L" + dir.path() + " -lcommon -Wl,-rpath,'$ORIGIN'");
  const std::string whl = make_wheel(dir, "two-1.0-cp311-cp311-linux_x86_64.whl",
                                     {{"two/libcommon.so", common},
                                      {"two/_a.cpython-311-x86_64-linux-gnu.so", a},
                                      {"two/_b.cpython-311-x86_64-linux-gnu.so", b}});
  const auto r = check(whl, im);
  for (const char* m : {"two/_a.cpython-311-x86_64-linux-gnu.so", "two/_b.cpython-311-x86_64-linux-gnu.so"}) {
    const auto* mr = member(r, m);
    ASSERT_NE(mr, nullptr) << m;
    EXPECT_FALSE(mr->loads) << m;
    EXPECT_EQ(mr->missing_libraries, std::vector<std::string>{"libgone.so"}) << m;
  }
  std::size_t missing = 0;
  for (const auto& f : r.findings) {
    if (f.kind != verdict::FindingKind::MissingLibrary) continue;
    ++missing;
    EXPECT_EQ(f.member, "two/libcommon.so");
    EXPECT_EQ(f.roots.size(), 2U) << "loaded_by names both members";
  }
  EXPECT_EQ(missing, 1U) << verdict::render_text(r, false);
}

// Symbols an extension expects from the interpreter: bound against Debian's CPython 3.11 and 3.13 exports
// (the long-removed PyFPE_jbuf is an error), and against 3.12's stable ABI where its exports are unknown
// (PyModule_Create2 binds; PyFPE_jbuf becomes a condition that names it, never silence).
TEST(LoaderFidelity, InterpreterSymbolsAreBound) {
  TempDir dir;
  const std::string ext = build(dir, "_m.abi3.so",
                                "extern int PyFPE_jbuf[];\nvoid* PyModule_Create2(void*, int);\n"
                                "void* PyInit__m(void) { return PyFPE_jbuf[0] ? PyModule_Create2(0, 1013) : 0; }\n",
                                "");
  const std::string whl = make_wheel(dir, "pym-1.0-cp311-abi3-linux_x86_64.whl", {{"pym/_m.abi3.so", ext}});

  const auto r311 = check(whl, db_image(dir, R"("debian12", "python3.11-debian")"));
  EXPECT_EQ(r311.verdict, verdict::Verdict::Incompatible) << verdict::render_text(r311, false);
  bool fpe = false;
  for (const auto& f : r311.findings)
    fpe |= f.kind == verdict::FindingKind::MissingSymbol && f.symbol == "PyFPE_jbuf" &&
           f.severity == verdict::Severity::Error;
  EXPECT_TRUE(fpe) << verdict::render_text(r311, false);
  ASSERT_EQ(r311.members.size(), 1U);
  EXPECT_EQ(r311.members[0].symbols_interpreter, 1U) << "PyModule_Create2 binds to the interpreter";

  TempDir dir13;
  const auto r313 = check(whl, db_image(dir13, R"("debian13", "python3.13-debian")"));
  bool fpe13 = false;
  for (const auto& f : r313.findings) {
    fpe13 |= f.kind == verdict::FindingKind::MissingSymbol && f.symbol == "PyFPE_jbuf" &&
             f.severity == verdict::Severity::Error;
  }
  EXPECT_TRUE(fpe13) << "Debian 13's CPython 3.13 exports no PyFPE_jbuf either\n" << verdict::render_text(r313, false);

  TempDir dir2;
  const auto r312 = check(whl, db_image(dir2, R"("debian12", "python3.12")"));
  EXPECT_EQ(r312.verdict, verdict::Verdict::Unknown) << verdict::render_text(r312, false);
  bool named = false;
  for (const auto& f : r312.findings) {
    if (f.kind == verdict::FindingKind::MissingSymbol && f.severity == verdict::Severity::Condition) {
      named = f.explanation.find("PyFPE_jbuf") != std::string::npos &&
              f.explanation.find("PyModule_Create2") == std::string::npos;
    }
  }
  EXPECT_TRUE(named) << verdict::render_text(r312, false);
}

// A program's data symbol under R_X86_64_COPY is defined in its .dynsym, yet the loader must find it in
// a library: without it the program does not start.
TEST(LoaderFidelity, CopyRelocationsOfProgramsAreBound) {
  TempDir dir;
  const std::string with = build(dir, "libdata.so", "int counter = 5;\n", "-Wl,-soname,libdata.so");
  write_binary(dir.file("tool.c"),
               "#include <stdio.h>\nextern int counter;\nint main(void) { printf(\"%d\\n\", counter); return 0; }\n");
  // Installed at /bin/tool beside /site-packages (the image describes no Python: the stand-in folder).
  const auto r = run("gcc -fno-pie -no-pie -o " + dir.file("tool") + " " + dir.file("tool.c") + " " + with +
                     " -Wl,-rpath,'$ORIGIN/../site-packages/tool'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  TempDir other;
  const std::string without = build(other, "libdata.so", "int other = 5;\n", "-Wl,-soname,libdata.so");
  const auto im = db_image(dir, R"("debian12")");
  for (const bool has : {true, false}) {
    TempDir w;
    const std::string whl =
        make_wheel(w, "tool-1.0-py3-none-linux_x86_64.whl",
                   {{"tool-1.0.data/scripts/tool", dir.file("tool")}, {"tool/libdata.so", has ? with : without}});
    const auto profile = inspect_wheel(whl);
    bool copy = false;
    for (const auto& m : profile.members) {
      if (m.elf && m.path.find("scripts/tool") != std::string::npos) {
        for (const auto& s : m.elf->symbols) copy |= s.name == "counter" && s.defined && s.copy_relocated;
      }
    }
    EXPECT_TRUE(copy) << "counter is read as copy-relocated";
    const auto rep = verdict::check(profile, im);
    const auto* tool = member(rep, "tool-1.0.data/scripts/tool");
    ASSERT_NE(tool, nullptr) << verdict::render_text(rep, false);
    EXPECT_TRUE(tool->missing_libraries.empty()) << verdict::render_text(rep, false);
    EXPECT_EQ(tool->loads, has) << verdict::render_text(rep, false);
    bool unresolved = false;
    for (const auto& u : tool->unresolved) unresolved |= u.symbol == "counter";
    EXPECT_EQ(unresolved, !has) << verdict::render_text(rep, false);
  }
}

}  // namespace unity_test_loader_fidelity
