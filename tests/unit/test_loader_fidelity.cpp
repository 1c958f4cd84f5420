// The disagreements with glibc's own loader that the loader harness (tests/loader) found, each pinned
// here as a unit test on files built at test time: the program interpreter only in /lib64, a dist-info
// without RECORD, a broken dependency two members share, symbols an extension expects from the Python
// interpreter, a program's copy relocations, a libc-only process under DF_1_NODEFLIB.
#include <filesystem>

#include "support.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/probe.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/verdict.hpp"

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;
using nlohmann::json;

namespace {

std::string build(const TempDir& dir, const std::string& name, const std::string& source, const std::string& flags) {
  std::string err;
  auto so = build_shared(dir, name, name + ".c", source, flags, "gcc", &err);
  if (!so) ADD_FAILURE() << "building " << name << ": " << err;
  return so.value_or("");
}

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

// A Debian-like root from this machine's C library; the interpreter in /usr/lib64 (a link, as Debian
// has it) or only in a real /lib64 folder (as Red Hat's layout has it).
void lay_root(const std::string& root, bool interp_only_in_lib64) {
  const std::string lib = root + "/usr/lib/x86_64-linux-gnu";
  fs::create_directories(lib);
  fs::create_directories(root + "/etc/ld.so.conf.d");
  fs::create_directory_symlink("usr/lib", root + "/lib");
  for (const char* f : {"libc.so.6", "libm.so.6"})
    fs::copy_file(fs::canonical("/lib/x86_64-linux-gnu/" + std::string(f)), lib + "/" + f);
  const auto ld = fs::canonical("/lib64/ld-linux-x86-64.so.2");
  if (interp_only_in_lib64) {
    fs::create_directories(root + "/lib64");
    fs::copy_file(ld, root + "/lib64/ld-linux-x86-64.so.2");
  } else {
    fs::copy_file(ld, lib + "/ld-linux-x86-64.so.2");
    fs::create_directories(root + "/usr/lib64");
    fs::create_directory_symlink("usr/lib64", root + "/lib64");
    fs::create_symlink("../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", root + "/usr/lib64/ld-linux-x86-64.so.2");
  }
  write_binary(root + "/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
  write_binary(root + "/etc/ld.so.conf.d/x86_64-linux-gnu.conf", "/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n");
  fs::create_directories(root + "/usr/lib/python3.11/site-packages");
  const auto r = run("ldconfig -r " + shell_quote(root));
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

json check_cli(const std::string& wheel, const std::string& root) {
  const auto r = run(shell_quote(binary_path()) + " " + shell_quote(wheel) + " --image " + shell_quote(root) +
                     " --json -q --no-cache");
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 3 || r.exit_code == 4) << r.err;
  return json::parse(r.out);
}

}  // namespace

// libc.so.6 and a TLS library need ld-linux-x86-64.so.2; the loader always has it (PT_INTERP), wherever
// the file sits. Two identical members: both load.
TEST(LoaderFidelity, ProgramInterpreterOnlyInLib64IsLoaded) {
  if (!fs::exists("/lib64/ld-linux-x86-64.so.2")) GTEST_SKIP() << "not an x86_64 glibc machine";
  TempDir dir;
  const std::string root = dir.file("root");
  lay_root(root, true);
  const std::string tls = build(dir, "libt.so", "__thread int tv = 1;\n", "-Wl,-soname,libt.so");
  const std::string ext_src = "extern __thread int tv;\nint get(void) { return tv; }\n";
  const std::string m1 =
      build(dir, "_a.cpython-311-x86_64-linux-gnu.so", ext_src, "-L" + dir.path() + " -lt -Wl,-rpath,'$ORIGIN'");
  const std::string m2 =
      build(dir, "_b.cpython-311-x86_64-linux-gnu.so", ext_src, "-L" + dir.path() + " -lt -Wl,-rpath,'$ORIGIN'");
  const std::string whl = make_wheel(dir, "tlsw-1.0-cp311-cp311-linux_x86_64.whl",
                                     {{"tlsw/libt.so", tls},
                                      {"tlsw/_a.cpython-311-x86_64-linux-gnu.so", m1},
                                      {"tlsw/_b.cpython-311-x86_64-linux-gnu.so", m2}});
  const json r = check_cli(whl, root);
  for (const auto& f : r["findings"]) EXPECT_NE(f["kind"], "missing-library") << f.dump();
  ASSERT_EQ(r["members"].size(), 2U) << r.dump(1);
  for (const auto& m : r["members"]) {
    EXPECT_TRUE(m["loads"].get<bool>()) << m.dump(1);
    bool interp = false;
    for (const auto& n : m["needs"]) {
      if (n["name"] == "ld-linux-x86-64.so.2") {
        interp = true;
        EXPECT_TRUE(n["found"].get<bool>());
        EXPECT_EQ(n["rule"], "already loaded");
        EXPECT_EQ(n["where"], "/lib64/ld-linux-x86-64.so.2");
      }
    }
    EXPECT_TRUE(interp) << "libt.so's DT_NEEDED ld-linux-x86-64.so.2 is in the load tree";
  }
}

// A dist-info without RECORD: its native files come from the package folder named like the
// distribution, with a finding that says so; the wheel that Requires-Dist it finds libc10.so loaded.
TEST(LoaderFidelity, DistInfoWithoutRecordKeepsItsLibraries) {
  TempDir dir;
  const std::string root = dir.file("root");
  lay_root(root, false);
  const std::string site = root + "/usr/lib/python3.11/site-packages";
  fs::create_directories(site + "/torch/lib");
  fs::create_directories(site + "/torch-2.6.0.dist-info");
  write_binary(site + "/torch-2.6.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.6.0\n");
  fs::copy_file(build(dir, "libc10.so", "int c10_fn(void) { return 1; }\n", "-Wl,-soname,libc10.so"),
                site + "/torch/lib/libc10.so");
  probe::ProbeOptions o;
  o.root = root;
  const auto probed = probe::probe_root(o);
  const image::Distribution* torch = nullptr;
  for (const auto& d : probed.image.distributions) {
    if (d.name == "torch") torch = &d;
  }
  ASSERT_NE(torch, nullptr);
  ASSERT_EQ(torch->libraries.size(), 1U);
  EXPECT_EQ(torch->libraries[0].path, "torch/lib/libc10.so");
  bool said = false;
  for (const auto& f : probed.image.findings) {
    said |= f.kind == "assumed-files" && f.detail.find("torch") != std::string::npos &&
            f.detail.find("named like the distribution") != std::string::npos;
  }
  EXPECT_TRUE(said) << "the probe says what it assumed";

  const std::string ext =
      build(dir, "_ops.cpython-311-x86_64-linux-gnu.so", "int c10_fn(void);\nint ops(void) { return c10_fn(); }\n",
            "-L" + site + "/torch/lib -lc10");
  const std::string whl =
      make_wheel(dir, "ops-1.0-cp311-cp311-linux_x86_64.whl", {{"ops/_ops.cpython-311-x86_64-linux-gnu.so", ext}},
                 {"--requires-dist", "torch>=2"});
  const json r = check_cli(whl, root);
  ASSERT_EQ(r["members"].size(), 1U);
  EXPECT_TRUE(r["members"][0]["loads"].get<bool>()) << r.dump(1);
  EXPECT_EQ(r["members"][0]["needs"][0]["rule"], "already loaded") << r.dump(1);
}

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
