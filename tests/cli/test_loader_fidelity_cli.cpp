// The disagreements with glibc's own loader that the loader harness (tests/loader) found, each pinned
// here as a test of the command line on files built at test time: the program interpreter only in /lib64,
// a dist-info without RECORD.
#include <filesystem>

#include "support.hpp"
#include "verdict_support.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/probe.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_loader_fidelity_cli {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;
using nlohmann::json;
using wheelcheck::test::run;  // not the namespace wheelcheck::run (a unity batch may have its header)

namespace {

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
  // Each module exports the PyInit_ its name asks for, as CPython's import requires (module-init).
  const std::string ext_src = "extern __thread int tv;\nint get(void) { return tv; }\n";
  const std::string m1 =
      build(dir, "_a.cpython-311-x86_64-linux-gnu.so", ext_src + "void* PyInit__a(void) { return 0; }\n",
            "-L" + dir.path() + " -lt -Wl,-rpath,'$ORIGIN'");
  const std::string m2 =
      build(dir, "_b.cpython-311-x86_64-linux-gnu.so", ext_src + "void* PyInit__b(void) { return 0; }\n",
            "-L" + dir.path() + " -lt -Wl,-rpath,'$ORIGIN'");
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
      build(dir, "_ops.cpython-311-x86_64-linux-gnu.so",
            "int c10_fn(void);\nint ops(void) { return c10_fn(); }\nvoid* PyInit__ops(void) { return 0; }\n",
            "-L" + site + "/torch/lib -lc10");
  const std::string whl =
      make_wheel(dir, "ops-1.0-cp311-cp311-linux_x86_64.whl", {{"ops/_ops.cpython-311-x86_64-linux-gnu.so", ext}},
                 {"--requires-dist", "torch>=2"});
  const json r = check_cli(whl, root);
  ASSERT_EQ(r["members"].size(), 1U);
  EXPECT_TRUE(r["members"][0]["loads"].get<bool>()) << r.dump(1);
  EXPECT_EQ(r["members"][0]["needs"][0]["rule"], "already loaded") << r.dump(1);
}

}  // namespace unity_test_loader_fidelity_cli
