// The probe through the library, on roots built at test time from real files (this machine's glibc and
// libstdc++, the CUDA 13.0 runtime under /usr/local/cuda-13.0), with a real ld.so.cache made by
// `ldconfig -r`. Oracles: ldconfig -p -C, readelf -V, nm -D --defined-only, getconf GNU_LIBC_VERSION.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "probe_support.hpp"
#include "support.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/probe.hpp"

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;

namespace wheelcheck::test {

// The newest PREFIX<x.y.z> version definition, as readelf -V prints them.
std::string newest_verdef(const std::string& path, const std::string& prefix) {
  const auto r = run("readelf -V -W " + shell_quote(path));
  const std::regex re("Name: " + prefix + "([0-9]+(\\.[0-9]+)*)\\b");
  std::string best;
  auto less = [](const std::string& a, const std::string& b) {
    std::stringstream sa(a), sb(b);
    std::string x, y;
    for (;;) {
      const bool ha = static_cast<bool>(std::getline(sa, x, '.')), hb = static_cast<bool>(std::getline(sb, y, '.'));
      if (!ha || !hb) return !ha && hb;
      if (std::stol(x) != std::stol(y)) return std::stol(x) < std::stol(y);
    }
  };
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), re), end; it != end; ++it) {
    if (best.empty() || less(best, (*it)[1].str())) best = (*it)[1].str();
  }
  return best;
}

// `ldconfig -p -C CACHE`: "\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6".
std::set<std::tuple<std::string, std::string, std::string>> ldconfig_entries(const std::string& cache) {
  std::set<std::tuple<std::string, std::string, std::string>> out;
  const auto r = run("ldconfig -p -C " + shell_quote(cache));
  const std::regex re(R"(^\s+(\S+) \(([^)]*)\) => (\S+)$)");
  std::stringstream ss(r.out);
  for (std::string line; std::getline(ss, line);) {
    std::smatch m;
    if (std::regex_match(line, m, re)) out.insert({m[1], m[2], m[3]});
  }
  return out;
}

}  // namespace wheelcheck::test

TEST(Probe, RealGlibcRootMatchesLdconfigReadelfAndGetconf) {
  if (!have_host_glibc()) GTEST_SKIP() << "needs this machine's /usr/lib/x86_64-linux-gnu/libc.so.6 and ldconfig";
  RootBuilder r;
  lay_out_glibc(r);
  run_ldconfig(r);
  probe::ProbeOptions o;
  o.root = r.root();
  o.name = "glibc-root";
  const auto result = probe::probe_root(o);
  const image::Image& im = result.image;

  // glibc's version: getconf asks the running C library, the one copied into the root.
  const auto getconf = run("getconf GNU_LIBC_VERSION");
  ASSERT_EQ(getconf.exit_code, 0);
  const std::string host_glibc =
      getconf.out.substr(getconf.out.find(' ') + 1, getconf.out.find('\n') - getconf.out.find(' ') - 1);
  ASSERT_TRUE(im.libc_version.known()) << im.libc_version.note;
  EXPECT_EQ(*im.libc_version.value, host_glibc);
  EXPECT_EQ(im.libc_kind.text(), "glibc");
  EXPECT_EQ(im.arch.text(), "x86_64");
  EXPECT_EQ(im.glibcxx.text(), newest_verdef("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "GLIBCXX_"));
  EXPECT_EQ(im.cxxabi.text(), newest_verdef("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "CXXABI_"));

  // ld.so.cache: the same entries, soname, arch words and path, as ldconfig prints them.
  const auto expected = ldconfig_entries(r.host("/etc/ld.so.cache"));
  ASSERT_FALSE(expected.empty());
  std::set<std::tuple<std::string, std::string, std::string>> got;
  for (const auto& e : im.loader.cache) got.insert({e.soname, e.arch, e.path});
  EXPECT_EQ(got, expected);
  // Every cache entry is a library of the description, with that soname.
  for (const auto& [soname, arch, path] : expected) {
    const auto* lib = find_library(im, soname);
    ASSERT_NE(lib, nullptr) << soname;
    EXPECT_NE(std::find(lib->names.begin(), lib->names.end(), path), lib->names.end())
        << soname << " is not reachable as " << path;
    EXPECT_EQ(lib->machine, "x86_64");
    EXPECT_EQ(lib->elf_class, 64);
  }
  // ld.so.conf and the default folders of a Debian multiarch layout.
  EXPECT_EQ(im.loader.conf_files,
            (std::vector<std::string>{"/etc/ld.so.conf", "/etc/ld.so.conf.d/x86_64-linux-gnu.conf"}));
  EXPECT_EQ(im.loader.default_dirs.front(), "/lib/x86_64-linux-gnu");
  // One real file per library, however many names reach it.
  std::set<std::string> paths;
  for (const auto& l : im.libraries) EXPECT_TRUE(paths.insert(l.path).second) << l.path;
  const auto* cxx = find_library(im, "libstdc++.so.6");
  ASSERT_NE(cxx, nullptr);
  EXPECT_EQ(cxx->path, "/usr/lib/x86_64-linux-gnu/" +
                           fs::canonical("/usr/lib/x86_64-linux-gnu/libstdc++.so.6").filename().string());
  // No CUDA, no Python in this root: nothing invented.
  EXPECT_FALSE(im.toolkit.has_value());
  EXPECT_TRUE(im.pythons.empty());
  EXPECT_TRUE(im.findings.empty()) << im.findings.front().kind << " " << im.findings.front().path;

  // Exports of libc.so.6 equal nm's view of the same file.
  bool checked = false;
  for (const auto& [key, table] : result.tables) {
    if (table.soname != "libc.so.6") continue;
    EXPECT_EQ(table_set(table), nm_defined("/usr/lib/x86_64-linux-gnu/libc.so.6"));
    checked = true;
  }
  EXPECT_TRUE(checked);
}

TEST(Probe, CudaVersionFromTheRuntimeDistributionWhenNoVersionJson) {
  const std::string dist = "/usr/local/cuda-13.0/dist-info";
  RootBuilder r;
  r.mkdir("/usr/local/cuda-13.0/lib");
  std::string err;
  // A libcudart.so.13 made here, so the test runs without CUDA; the dist-info is NVIDIA's format.
  auto so =
      build_shared(r.dir(), "libcudart.so.13", "rt.c", "int cudaRuntimeGetVersion(int* v) { *v = 13000; return 0; }\n",
                   "-Wl,-soname,libcudart.so.13", "gcc", &err);
  ASSERT_TRUE(so) << err;
  r.copy(*so, "/usr/local/cuda-13.0/lib/libcudart.so.13");
  r.write(dist + "/nvidia_cuda_runtime-13.0.96.dist-info/METADATA",
          "Metadata-Version: 2.1\nName: nvidia-cuda-runtime\nVersion: 13.0.96\n");
  r.write("/etc/ld.so.conf", "/usr/local/cuda-13.0/lib\n");
  probe::ProbeOptions o;
  o.root = r.root();
  const auto res = probe::probe_root(o);
  ASSERT_TRUE(res.image.toolkit.has_value());
  EXPECT_EQ(res.image.toolkit->runtime.text(), "13.0.96");
  EXPECT_EQ(res.image.toolkit->version.text(), "13.0");
  EXPECT_EQ(res.image.toolkit->version.origin, image::Origin::Derived);
  // No interpreter: the arch comes from the libraries, the C library is unknown and says why.
  EXPECT_EQ(res.image.arch.text(), "x86_64");
  EXPECT_EQ(res.image.arch.origin, image::Origin::Derived);
  EXPECT_FALSE(res.image.libc_version.known());
  EXPECT_FALSE(res.image.libc_version.note.empty());
}

TEST(Probe, HostileRootGivesFindingsAndNeverLeavesTheRoot) {
  if (!have_host_glibc()) GTEST_SKIP() << "needs this machine's glibc";
  RootBuilder r;
  lay_out_glibc(r);
  const std::string lib = "/usr/lib/x86_64-linux-gnu";
  // A loop, a link to the host's libc by an absolute path (re-rooted: absent here), a relative link
  // climbing above the root (clamped at the root), a truncated ELF, a text file named like a library.
  r.symlink("libloop.so.2", lib + "/libloop.so.1");
  r.symlink("libloop.so.1", lib + "/libloop.so.2");
  r.symlink("/opt/host-only/libsecret.so.1", lib + "/libsecret.so.1");
  r.symlink("../../../../../../../../usr/lib/x86_64-linux-gnu/libm.so.6", lib + "/libclimb.so.6");
  const std::string libm = read_file("/usr/lib/x86_64-linux-gnu/libm.so.6");
  r.write(lib + "/libtrunc.so.1", libm.substr(0, 200));
  r.write(lib + "/libtext.so.1", "this is not an ELF file\n");
  // A cache that is not one.
  r.write("/etc/ld.so.cache", "glibc-ld.so.cache1.1" + std::string(30, '\xff'));
  // Bait outside the root: a probe that escaped would find it.
  fs::create_directories("/tmp/wheelcheck-host-bait");
  probe::ProbeOptions o;
  o.root = r.root();
  const auto res = probe::probe_root(o);
  std::map<std::string, std::string> kinds;
  for (const auto& f : res.image.findings) kinds[f.path] += f.kind + " ";
  EXPECT_NE(kinds[lib + "/libloop.so.1"].find("symlink-loop"), std::string::npos);
  EXPECT_NE(kinds[lib + "/libclimb.so.6"].find("escapes-root"), std::string::npos);
  EXPECT_NE(kinds[lib + "/libtrunc.so.1"].find("malformed-elf"), std::string::npos);
  EXPECT_NE(kinds[lib + "/libtext.so.1"].find("not-elf"), std::string::npos);
  EXPECT_NE(kinds["/etc/ld.so.cache"].find("malformed-cache"), std::string::npos);
  EXPECT_EQ(res.image.loader.cache_format, "none");
  // The climbing link reached the root's own libm, and nothing reached /opt/host-only.
  const auto* m = find_library(res.image, "libm.so.6");
  ASSERT_NE(m, nullptr);
  EXPECT_NE(std::find(m->names.begin(), m->names.end(), lib + "/libclimb.so.6"), m->names.end());
  for (const auto& l : res.image.libraries) {
    EXPECT_EQ(l.path.find("host-only"), std::string::npos);
    EXPECT_EQ(l.path.find(r.root()), std::string::npos) << "a host path leaked into the description: " << l.path;
  }
  // The rest of the root is still described.
  EXPECT_EQ(res.image.libc_kind.text(), "glibc");
}

// Debian's Python: /usr/bin/python3.X with /usr/lib/python3/dist-packages, and distributions that
// Debian packages as *.egg-info folders (PKG-INFO, top_level.txt, no RECORD), as python3-torch is.
TEST(Probe, DebianDistPackagesAndEggInfo) {
  RootBuilder r;
  std::string err;
  auto ext = build_shared(r.dir(), "_x.so", "x.c", "int PyInit__x(void) { return 0; }\n", "", "gcc", &err);
  ASSERT_TRUE(ext) << err;
  auto helper = build_shared(r.dir(), "libfoo.so", "foo.c", "int foo(void) { return 1; }\n", "-Wl,-soname,libfoo.so",
                             "gcc", &err);
  ASSERT_TRUE(helper) << err;
  r.write("/usr/bin/python3.11", "");
  r.write("/usr/lib/python3.11/os.py", "");
  const std::string dist = "/usr/lib/python3/dist-packages";
  r.write(dist + "/foo-1.0+debian.egg-info/PKG-INFO", "Metadata-Version: 2.1\nName: foo\nVersion: 1.0+debian\n");
  r.write(dist + "/foo-1.0+debian.egg-info/top_level.txt", "foo\n");
  r.copy(*ext, dist + "/foo/_x.cpython-311-x86_64-linux-gnu.so");
  r.copy(*helper, dist + "/foo/lib/libfoo.so");
  r.write(dist + "/foo/__init__.py", "");
  // A file-style egg-info (setuptools' old single-file form) is read too.
  r.write(dist + "/bar-2.0.egg-info", "Metadata-Version: 1.1\nName: bar\nVersion: 2.0\n");
  probe::ProbeOptions o;
  o.root = r.root();
  const auto res = probe::probe_root(o);
  ASSERT_EQ(res.image.pythons.size(), 1U);
  EXPECT_EQ(res.image.pythons[0].executable, "/usr/bin/python3.11");
  EXPECT_EQ(res.image.pythons[0].site_packages, std::vector<std::string>{dist});
  const auto* foo = res.image.distribution("foo");
  ASSERT_NE(foo, nullptr);
  EXPECT_EQ(foo->version, "1.0+debian");
  EXPECT_EQ(foo->location, dist);
  std::vector<std::string> libs;
  for (const auto& l : foo->libraries) libs.push_back(l.path);
  std::sort(libs.begin(), libs.end());
  EXPECT_EQ(libs, (std::vector<std::string>{"foo/_x.cpython-311-x86_64-linux-gnu.so", "foo/lib/libfoo.so"}));
  ASSERT_NE(res.image.distribution("bar"), nullptr);
  EXPECT_EQ(res.image.distribution("bar")->version, "2.0");
}
