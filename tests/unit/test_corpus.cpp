// Over the downloaded corpus of real third-party binaries (../shared/corpus/fetch-real-binaries.sh and
// make-real-wheels.sh; $WHEELCHECK_CORPUS, default ~/.cache/wheelcheck-corpus). Each test skips with a
// message when its part of the corpus is absent: the default suite never depends on it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "readelf.hpp"
#include "support.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/profile.hpp"

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
