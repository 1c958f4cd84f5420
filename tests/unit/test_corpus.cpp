// Over the downloaded corpus of real third-party binaries (../shared/corpus/fetch-real-binaries.sh and
// make-real-wheels.sh; $WHEELCHECK_CORPUS, default ~/.cache/wheelcheck-corpus). Each test skips with a
// message when its part of the corpus is absent: the default suite never depends on it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "readelf.hpp"
#include "support.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/profile.hpp"

#include <set>
#include <sstream>

using namespace wheelcheck;
using namespace wheelcheck::test;
namespace fs = std::filesystem;

namespace {

bool is_elf_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char head[4] = {};
  f.read(head, 4);
  return f.gcount() == 4 && elf::has_elf_magic(head, 4);
}

}  // namespace

namespace {
std::string missing_message() {
  return "corpus absent at " + corpus_dir() + ": run ../shared/corpus/fetch-real-binaries.sh and make-real-wheels.sh";
}
}  // namespace

// Every shared library in the corpus (PyTorch 1.13/2.6/2.14 for x86_64 and aarch64, the CUDA 12 runtime,
// glibc 2.41) and the CUDA 13.0 libraries of this machine: the fast reader equals LIEF and readelf.
TEST(Corpus, ReadersAgreeOnEveryLibrary) {
  std::vector<std::string> libs;
  for (const auto& f : find_files(corpus_dir() + "/debs", "")) {
    if (f.find(".so") != std::string::npos && !fs::is_symlink(f) && is_elf_file(f)) libs.push_back(f);
  }
  if (libs.empty()) GTEST_SKIP() << missing_message();
  for (const auto& f : find_files("/usr/local/cuda-13.0/lib", "")) {
    if (f.find(".so") != std::string::npos && !fs::is_symlink(f) && is_elf_file(f) &&
        fs::file_size(f) < (std::uintmax_t{200} << 20)) {
      libs.push_back(f);
    }
  }
  for (const auto& lib : libs) {
    SCOPED_TRACE(lib);
    const auto fast = elf::read_elf_file(lib);
    if (fs::file_size(lib) < (std::uintmax_t{700} << 20)) {  // LIEF copies the whole file: keep memory sane
      EXPECT_EQ(elf::read_elf(FileSource(lib), elf::ReaderKind::Lief), fast);
    }
    EXPECT_EQ(elf::read_elf(FileSource(lib), elf::ReaderKind::Fast), fast);
    expect_agrees_with_readelf(fast, lib);
  }
}

// The corpus wheels, inspected from the zip, equal the same libraries read from disk.
TEST(Corpus, WheelsMatchTheirLibrariesOnDisk) {
  const auto wheels = find_files(corpus_dir() + "/wheels", ".whl");
  if (wheels.empty()) GTEST_SKIP() << missing_message();
  for (const auto& w : wheels) {
    SCOPED_TRACE(w);
    const auto p = inspect_wheel(w);
    EXPECT_TRUE(p.record_verified);
    EXPECT_TRUE(p.problems.empty());
    EXPECT_FALSE(p.members.empty());
    for (const auto& m : p.members) {
      ASSERT_TRUE(m.elf) << m.error;
      EXPECT_FALSE(m.elf->symbols.empty()) << m.path;
    }
  }
}

// Debian's libc10 2.6 needs GLIBC_2.38 (the README's corpus facts): the version need is read.
TEST(Corpus, Libc10NeedsGlibc238) {
  const std::string lib = corpus_dir() + "/debs/libtorch2.6/usr/lib/x86_64-linux-gnu/libc10.so.2.6";
  if (!fs::exists(lib)) GTEST_SKIP() << missing_message();
  const auto b = elf::read_elf_file(lib);
  bool found = false;
  for (const auto& n : b.version_needs) {
    for (const auto& v : n.versions) found |= n.file == "libc.so.6" && v.name == "GLIBC_2.38";
  }
  EXPECT_TRUE(found);
}

// A root made of Debian 13's glibc 2.41 and PyTorch 2.14 laid out as pip installs it: the probe reports
// glibc 2.41, Python 3.13, torch 2.14 with its libraries, and libc10's exports exactly as nm lists them.
TEST(CorpusProbe, Glibc241AndTorch214Root) {
  const std::string libc6 = corpus_dir() + "/debs/libc6/usr/lib/x86_64-linux-gnu";
  const std::string torch = corpus_dir() + "/debs/libtorch2.14/usr/lib/x86_64-linux-gnu";
  if (!fs::exists(libc6 + "/libc.so.6") || !fs::exists(torch)) GTEST_SKIP() << missing_message();
  TempDir t;
  const std::string root = t.file("root");
  const std::string lib = root + "/usr/lib/x86_64-linux-gnu";
  const std::string site = root + "/usr/lib/python3.13/site-packages";
  ASSERT_EQ(run("mkdir -p " + shell_quote(lib) + " " + shell_quote(site + "/torch/lib") + " " +
                shell_quote(site + "/torch-2.14.1.dist-info") + " " + shell_quote(root + "/usr/bin") + " " +
                shell_quote(root + "/etc") + " && ln -s usr/lib " + shell_quote(root + "/lib") + " && cp -a " +
                shell_quote(libc6) + "/*.so* " + shell_quote(lib) + "/")
                .exit_code,
            0);
  write_binary(root + "/etc/ld.so.conf", "/usr/lib/x86_64-linux-gnu\n");
  write_binary(root + "/usr/bin/python3.13", "");
  const std::string c10 = fs::canonical(torch + "/libc10.so.2.14").string();
  fs::copy_file(c10, site + "/torch/lib/libc10.so");
  write_binary(site + "/torch-2.14.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.14.1\n");
  write_binary(site + "/torch-2.14.1.dist-info/RECORD", "torch/lib/libc10.so,,\n");
  ASSERT_EQ(run("ldconfig -X -r " + shell_quote(root)).exit_code, 0);
  TempDir out;
  const auto cmd = run(shell_quote(binary_path()) + " probe -q --root " + shell_quote(root) + " -o " +
                       shell_quote(out.file("d.json")));
  ASSERT_EQ(cmd.exit_code, 0) << cmd.err;
  const auto im = image::load_file(out.file("d.json"));
  EXPECT_EQ(im.libc_version.text(), "2.41");
  ASSERT_EQ(im.pythons.size(), 1U);
  EXPECT_EQ(im.pythons[0].version, "3.13");
  const auto* d = im.distribution("torch");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->version, "2.14.1");
  ASSERT_EQ(d->libraries.size(), 1U);
  EXPECT_EQ(d->libraries[0].soname, "libc10.so.2.14");
  // nm's view, parsed here independently of wheelcheck.
  std::set<std::string> nm, ours;
  std::stringstream ss(run("nm -D --defined-only " + shell_quote(c10)).out);
  for (std::string line; std::getline(ss, line);) nm.insert(line.substr(line.find_last_of(' ') + 1));
  const auto table = exports::load_table(d->libraries[0].exports_file);
  for (const auto& e : table.symbols()) {
    ours.insert(std::string(e.name) + (e.version.empty() ? "" : (e.hidden ? "@" : "@@") + std::string(e.version)));
  }
  EXPECT_EQ(ours, nm);
  EXPECT_GT(ours.size(), 500U);
  // The cache lists glibc's libraries, as ldconfig does.
  const auto p = run("ldconfig -p -C " + shell_quote(root + "/etc/ld.so.cache"));
  EXPECT_EQ(std::to_string(im.loader.cache.size()) + " libs found", p.out.substr(0, p.out.find(" in cache"))) << p.out;
}

// Every generated db file is what its committed command makes today.
TEST(DbRegenerationCorpus, EveryGeneratedFileIsReproduced) {
  if (!fs::exists(corpus_dir() + "/debs/libtorch2.6")) GTEST_SKIP() << missing_message();
  const std::string build = fs::path(binary_path()).parent_path().string();
  const auto r = run(shell_quote(source_dir() + "/scripts/gen-db.sh") + " --check --build " + shell_quote(build));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("db/ is up to date"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.err.find("skipped"), std::string::npos) << "inputs missing: " << r.err;
}
