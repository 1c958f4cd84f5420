// `wheelcheck probe` through the command line, on roots built at test time from real files (this machine's
// glibc and libstdc++, the CUDA 13.0 runtime under /usr/local/cuda-13.0), with a real ld.so.cache made by
// `ldconfig -r`: Python, torch and CUDA laid out as pip installs them, the tables written beside the
// description, `wheelcheck image show` reading it back, and usage errors. Oracle: nm -D --defined-only.
#include <filesystem>
#include <iostream>

#include "probe_support.hpp"
#include "support.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/image.hpp"

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;

namespace wheelcheck::test {

// A stand-in libc10.so built here: C++ functions in namespace c10, versioned and not.
std::string build_fake_c10(const TempDir& dir) {
  std::string err;
  auto so = build_shared(dir, "libc10.so", "c10.cpp",
                         "#include <string>\n"
                         "namespace c10 { struct SourceLocation { const char* f; int l; };\n"
                         "struct MessageLogger { MessageLogger(SourceLocation, int, bool); };\n"
                         "MessageLogger::MessageLogger(SourceLocation, int, bool) {}\n"
                         "std::string demangle(const char* n) { return n; }\n"
                         "int warn_count = 0; }\n"
                         "extern \"C\" int c10_version() { return 210; }\n",
                         "-Wl,-soname,libc10.so", "g++", &err);
  EXPECT_TRUE(so.has_value()) << err;
  return so.value_or("");
}

}  // namespace wheelcheck::test

TEST(Probe, PythonTorchAndCudaLaidOutAsPipInstallsThem) {
  if (!have_host_glibc()) GTEST_SKIP() << "needs this machine's glibc and ldconfig";
  const std::string cudart = "/usr/local/cuda-13.0/lib/libcudart.so.13";
  RootBuilder r;
  lay_out_glibc(r);
  const bool have_cuda = fs::exists(cudart);
  if (have_cuda) {
    r.copy(cudart, "/usr/local/cuda-13.0/lib/libcudart.so.13");
    r.symlink("cuda-13.0", "/usr/local/cuda");
    // The file a CUDA toolkit installer ships beside its folders (NVIDIA's format).
    r.write(
        "/usr/local/cuda-13.0/version.json",
        R"J({"cuda": {"name": "CUDA SDK", "version": "13.0.2"}, "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "13.0.96"}})J");
    r.write("/etc/ld.so.conf.d/zz-cuda.conf", "/usr/local/cuda-13.0/lib\n");
  }
  run_ldconfig(r);
  // Python 3.12 with torch as pip installs it.
  r.write("/usr/bin/python3.12", "#!/bin/sh\n");
  r.write("/usr/lib/python3.12/os.py", "");
  const std::string site = "/usr/lib/python3.12/site-packages";
  const std::string c10 = build_fake_c10(r.dir());
  ASSERT_FALSE(c10.empty());
  r.copy(c10, site + "/torch/lib/libc10.so");
  r.write(site + "/torch/__init__.py", "");
  r.write(site + "/torch-2.6.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.6.0\n");
  r.write(
      site + "/torch-2.6.0.dist-info/RECORD",
      "torch/__init__.py,,\ntorch/lib/libc10.so,,\ntorch-2.6.0.dist-info/METADATA,,\ntorch-2.6.0.dist-info/RECORD,,\n");

  TempDir out;
  const auto cmd = run(shell_quote(binary_path()) + " probe -q --root " + shell_quote(r.root()) +
                       " --name piproot -o " + shell_quote(out.file("piproot.json")));
  ASSERT_EQ(cmd.exit_code, 0) << cmd.out << cmd.err;
  const image::Image im = image::load_file(out.file("piproot.json"));

  ASSERT_EQ(im.pythons.size(), 1U);
  EXPECT_EQ(im.pythons[0].version, "3.12");
  EXPECT_EQ(im.pythons[0].executable, "/usr/bin/python3.12");
  EXPECT_EQ(im.pythons[0].abi_tags, (std::vector<std::string>{"cp312", "abi3"}));
  EXPECT_EQ(im.pythons[0].site_packages, std::vector<std::string>{site});
  const auto* torch = im.distribution("torch");
  ASSERT_NE(torch, nullptr);
  EXPECT_EQ(torch->version, "2.6.0");
  EXPECT_EQ(torch->location, site);
  ASSERT_EQ(torch->libraries.size(), 1U);
  EXPECT_EQ(torch->libraries[0].path, "torch/lib/libc10.so");
  EXPECT_EQ(torch->libraries[0].soname, "libc10.so");
  // The written table equals nm's view of the file.
  ASSERT_FALSE(torch->libraries[0].exports_file.empty());
  const auto table = exports::load_table(torch->libraries[0].exports_file);
  EXPECT_EQ(table_set(table), nm_defined(c10));
  EXPECT_FALSE(table.find("_ZN3c1013MessageLoggerC1ENS_14SourceLocationEib").empty());

  if (have_cuda) {
    ASSERT_TRUE(im.toolkit.has_value());
    EXPECT_EQ(im.toolkit->kind, image::ToolkitKind::Cuda);
    EXPECT_EQ(im.toolkit->version.text(), "13.0");
    EXPECT_EQ(im.toolkit->runtime.text(), "13.0.96");
    EXPECT_EQ(im.toolkit->runtime_sonames, std::vector<std::string>{"libcudart.so.13"});
    EXPECT_FALSE(im.driver.known()) << "no libcuda.so.1 in the root: the driver must be unknown";
    const auto* lib = find_library(im, "libcudart.so.13");
    ASSERT_NE(lib, nullptr);
    EXPECT_EQ(lib->path, "/usr/local/cuda-13.0/lib/libcudart.so.13");
    const auto t = exports::load_table(lib->exports_file);
    EXPECT_EQ(table_set(t), nm_defined(cudart));
  } else {
    std::cout << "[   NOTE   ] /usr/local/cuda-13.0 absent: CUDA part not checked\n";
  }
}

TEST(Probe, CliWritesTablesBesideTheDescriptionAndShowReadsThem) {
  if (!have_host_glibc()) GTEST_SKIP() << "needs this machine's glibc";
  RootBuilder r;
  lay_out_glibc(r);
  run_ldconfig(r);
  TempDir out;
  const auto cmd = run(shell_quote(binary_path()) + " probe -q --root " + shell_quote(r.root()) +
                       " --name mini --env LD_LIBRARY_PATH=/opt/x:/opt/y -o " + shell_quote(out.file("mini.json")));
  ASSERT_EQ(cmd.exit_code, 0) << cmd.err;
  EXPECT_TRUE(fs::exists(out.file("exports/mini/usr/lib/x86_64-linux-gnu/libc.so.6.exports.gz")));
  const auto im = image::load_file(out.file("mini.json"));
  EXPECT_EQ(im.loader.ld_library_path, (std::vector<std::string>{"/opt/x", "/opt/y"}));
  EXPECT_EQ(im.env.at("LD_LIBRARY_PATH"), "/opt/x:/opt/y");
  const auto show = run(shell_quote(binary_path()) + " image show " + shell_quote(out.file("mini.json")));
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("probed in mini"), std::string::npos) << show.out;
  // Usage errors: a missing root, a bad --env.
  EXPECT_EQ(run(shell_quote(binary_path()) + " probe --root /nonexistent-root-xyz").exit_code, 2);
  EXPECT_EQ(run(shell_quote(binary_path()) + " probe -q --root " + shell_quote(r.root()) + " --env NOEQUALS").exit_code,
            2);
}

// A root whose library links loop or climb above its / is hostile or broken: the probe still prints what
// it found (the links resolved inside the root), names each link, and exits 2 unless told to accept it.
TEST(Probe, CliExitsTwoForARootWithUnsafeLinks) {
  if (!have_host_glibc()) GTEST_SKIP() << "needs this machine's glibc";
  RootBuilder r;
  lay_out_glibc(r);
  run_ldconfig(r);
  const std::string base = shell_quote(binary_path()) + " probe -q --json --root " + shell_quote(r.root());
  ASSERT_EQ(run(base).exit_code, 0) << "the clean root is accepted";
  r.symlink("libloop2.so.1", "/usr/lib/libloop.so.1");
  r.symlink("libloop.so.1", "/usr/lib/libloop2.so.1");
  r.symlink("../../../../../../../etc/shadow", "/usr/lib/libclimb.so.1");
  const auto cmd = run(base);
  EXPECT_EQ(cmd.exit_code, 2) << cmd.err;
  EXPECT_NE(cmd.err.find("/usr/lib/libloop.so.1: a symlink loop"), std::string::npos) << cmd.err;
  EXPECT_NE(cmd.err.find("/usr/lib/libclimb.so.1: a link that points outside the root"), std::string::npos) << cmd.err;
  EXPECT_NE(cmd.err.find("--allow-unsafe-root"), std::string::npos) << cmd.err;
  const auto doc = nlohmann::json::parse(cmd.out);  // the description is still printed, whole
  EXPECT_EQ(doc.at("libc").at("kind").at("value"), "glibc") << cmd.out;
  const auto allowed = run(base + " --allow-unsafe-root");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_NE(allowed.err.find("warning: /usr/lib/libloop.so.1: a symlink loop"), std::string::npos) << allowed.err;
}
