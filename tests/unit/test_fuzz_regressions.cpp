// The fuzz targets' regressions in the normal suite: every input kept in fuzz/regressions/<target>/ (one
// that once crashed, hung or leaked under libFuzzer, see fuzz/README.md) is replayed through the same
// entry function the fuzzer calls (fuzz/entries.cpp), unsanitized, and must return normally. Seeds built
// at test time (an ELF compiled here, a wheel packed from it, this machine's ld.so.cache, the db's JSON)
// and mutations of them (truncations, flipped bytes) go through the entries too, so the replay exercises
// every target even where no regression is kept.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "fuzz/entries.hpp"
#include "support.hpp"

namespace wheelcheck::fuzz {
namespace {

namespace fs = std::filesystem;
using test::read_file;
using test::TempDir;
using namespace std::string_literals;

Entry entry_of(std::string_view name) {
  for (const auto& t : targets()) {
    if (t.name == name) return t.entry;
  }
  return nullptr;
}

// Runs one input through a target; any exception is a failure naming the input.
void replay(std::string_view target, const std::string& bytes, const std::string& what) {
  const Entry entry = entry_of(target);
  ASSERT_NE(entry, nullptr) << target;
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  try {
    EXPECT_EQ(entry(data, bytes.size()), 0) << target << ": " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << target << ": " << what << ": " << e.what();
  }
}

// The input, every tenth prefix of it, and copies with one byte flipped at a few deterministic places:
// what the parsers meet when a file is cut short or damaged.
void replay_mutations(std::string_view target, const std::string& bytes, const std::string& what) {
  replay(target, bytes, what);
  for (int k = 0; k < 10; ++k)
    replay(target, bytes.substr(0, bytes.size() * k / 10), what + " cut at " + std::to_string(k) + "/10");
  for (std::size_t i = 1; i < bytes.size(); i = i * 2 + 7) {
    std::string flipped = bytes;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
    replay(target, flipped, what + " flipped at " + std::to_string(i));
  }
}

std::string build_versioned_library(const TempDir& dir) {
  dir.write("lib.map", "FOO_1.0 { global: foo; local: *; };\nFOO_2.0 { global: foo; } FOO_1.0;\n");
  const auto so = test::build_shared(dir, "libfoo.so.1", "foo.c",
                                     "int foo_v1(int x) { return x + 1; }\nint foo_v2(int x) { return x + 2; }\n"
                                     "__asm__(\".symver foo_v1,foo@FOO_1.0\");\n"
                                     "__asm__(\".symver foo_v2,foo@@FOO_2.0\");\n",
                                     "-Wl,-soname,libfoo.so.1 -Wl,--version-script=" + dir.file("lib.map"));
  return so ? *so : std::string();
}

TEST(FuzzRegressions, EveryKeptInputReturnsNormally) {
  const fs::path root = fs::path(test::source_dir()) / "fuzz" / "regressions";
  ASSERT_TRUE(fs::is_directory(root)) << root;
  std::set<std::string> names;
  for (const auto& t : targets()) names.insert(std::string(t.name));
  std::size_t replayed = 0;
  for (const auto& folder : fs::directory_iterator(root)) {
    if (!folder.is_directory()) continue;
    const auto target = folder.path().filename().string();
    // A folder that names no target would be silently skipped by fuzz/run.sh --replay as well.
    EXPECT_TRUE(names.count(target)) << "fuzz/regressions/" << target << " is not a fuzz target";
    if (!names.count(target)) continue;
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(folder.path())) {
      if (f.is_regular_file() && !f.path().filename().string().starts_with('.')) files.push_back(f.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      replay(target, read_file(f.string()), f.string());
      ++replayed;
    }
  }
  RecordProperty("replayed", static_cast<int>(replayed));
}

TEST(FuzzRegressions, EveryTargetTakesEmptyAndTinyInputs) {
  ASSERT_EQ(targets().size(), 14u);
  for (const auto& t : targets()) {
    for (const std::string bytes : {std::string(), std::string(1, '\0'), std::string("0"), std::string("1\n"),
                                    std::string("\x7f"
                                                "ELF",
                                                4),
                                    std::string("PK\x05\x06", 4)}) {
      replay(t.name, bytes, "tiny input of " + std::to_string(bytes.size()) + " bytes");
    }
  }
}

TEST(FuzzRegressions, ElfAndWheelSeedsBuiltHere) {
  if (!test::have_program("gcc")) GTEST_SKIP() << "gcc is needed to build the ELF seed";
  TempDir dir;
  const auto so = build_versioned_library(dir);
  ASSERT_FALSE(so.empty());
  const auto elf = read_file(so);
  ASSERT_GT(elf.size(), 1000u);
  replay_mutations("elf", elf, "libfoo.so.1");
  const auto wheel = test::make_wheel(dir, "demo-1.0-cp312-cp312-linux_x86_64.whl", {{"demo/libfoo.so.1", so}});
  replay_mutations("zip", read_file(wheel), "demo wheel");
  const auto stored =
      test::make_wheel(dir, "demo-2.0-cp312-cp312-linux_x86_64.whl", {{"demo/libfoo.so.1", so}}, {"--stored"});
  replay_mutations("zip", read_file(stored), "stored demo wheel");
  // The deflate stream of the member, its size in front: what fuzz_inflate_tail reads.
  std::string prefix(4, '\0');
  for (int i = 0; i < 4; ++i) prefix[i] = static_cast<char>((elf.size() >> (8 * i)) & 0xff);
  replay_mutations("inflate_tail", prefix + elf.substr(elf.size() / 2), "ELF bytes as a deflate tail");
  // The member's raw deflate data with the ELF's own first word as an anchor: what fuzz_inflate_middle reads.
  const auto bytes = read_file(wheel);
  const auto at = bytes.find("demo/libfoo.so.1");
  ASSERT_NE(at, std::string::npos);
  std::string head(16, '\0');
  for (int i = 0; i < 8; ++i) head[4 + i] = elf[static_cast<std::size_t>(i)];
  replay_mutations("inflate_middle", head + bytes.substr(at + 16, 4000), "a wheel member's deflate data");
}

TEST(FuzzRegressions, SystemAndDbSeeds) {
  if (fs::is_regular_file("/etc/ld.so.cache")) {
    replay_mutations("ldconfig", "0" + read_file("/etc/ld.so.cache"), "/etc/ld.so.cache");
  }
  replay("ldconfig", "1include /etc/ld.so.conf.d/*.conf\n/usr/lib\0/opt/lib\ninclude loop.conf\0../x\n"s,
         "ld.so.conf with includes");
  const auto db = fs::path(test::source_dir()) / "db";
  replay_mutations("image", "00" + read_file((db / "images" / "debian12.json").string()), "debian12.json");
  replay_mutations("image", "10" + read_file((db / "rules" / "flagos.json").string()), "flagos rules");
  replay("image", "20" + read_file((db / "policies" / "manylinux-policy.json").string()), "manylinux policy");
  replay_mutations("dist_info", "2demo/__init__.py,sha256=abc,12\n\"a,\"\"b\",,\n", "RECORD");
  replay_mutations("names", "torch-2.10.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl\n>=3.10,<3.14", "names");
  replay_mutations("demangle", "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKc", "append");
  replay_mutations("index", "0<a href=\"demo-1.0-py3-none-any.whl#sha256=00\" data-yanked>x</a>", "HTML page");
  replay_mutations("index", "1{\"meta\": {\"api-version\": \"1.0\"}, \"name\": \"demo\", \"files\": []}", "JSON page");
  const std::string digest(64, 'a');
  replay_mutations(
      "lock",
      "0lock-version = \"1.0\"\n[[packages]]\nname = \"demo\"\nversion = \"1.0\"\nmarker = \"extra == 'cpu'\"\n"
      "wheels = [{url = \"https://x.example/demo-1.0-py3-none-any.whl\", hashes = {sha256 = \"" +
          digest + "\"}}]\n",
      "pylock.toml");
  replay_mutations("lock",
                   "1{\"version\": \"1\", \"install\": [{\"download_info\": {\"url\": "
                   "\"https://x.example/demo-1.0-py3-none-any.whl\"}, \"metadata\": {\"name\": \"demo\"}}]}",
                   "pip report");
  replay_mutations("lock",
                   "2-i https://x.example/simple\ndemo==1.0 ; python_version >= \"3.10\" --hash=sha256:" + digest +
                       "\n-r more.txt\n",
                   "requirements file");
  replay("lock", "2-r loop.txt\n", "requirements file in a cycle");
  replay_mutations("lock", "3python_version >= '3.10' and ('cpu' in extras or extra == 'dev')", "marker");
}

}  // namespace
}  // namespace wheelcheck::fuzz
