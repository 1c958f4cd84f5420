// The lint cache (issue 60, "lint as fast as check"): `wheelcheck lint` keeps a wheel's report beside its profile
// in the profile cache, under a name that digests everything else the report depends on (this build, the db's
// files, --rules, [[accept]], --variants). A second lint of the same wheel is served from it without reading the
// wheel's profile; a changed db or a changed option is a miss; and what the cached report prints is byte for byte
// what a fresh lint prints, in every format lint has.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_lint_cache {

namespace fs = std::filesystem;
using wheelcheck::test::run;
using wheelcheck::test::shell_quote;
using wheelcheck::test::TempDir;

// The files under DIR/profiles whose name ends in `suffix_part` somewhere after the reader (".lint-", ".bin").
std::vector<std::string> entries(const std::string& cache, const std::string& part) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(cache + "/profiles", ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_regular_file() && name.find(part) != std::string::npos) out.push_back(it->path().string());
  }
  return out;
}

struct Lint {
  int exit_code;
  std::string out;
};

Lint lint(const std::string& wheel, const std::string& db, const std::string& cache, const std::string& extra,
          const std::string& binary = wheelcheck::test::binary_path()) {
  const std::string where = cache.empty() ? " --no-cache" : " --cache-dir " + shell_quote(cache);
  const auto r = run("WHEELCHECK_OFFLINE=1 " + shell_quote(binary) + " lint -q --no-config" + where + " --db " +
                     shell_quote(db) + " " + extra + " " + shell_quote(wheel));
  return {r.exit_code, r.out};
}

TEST(LintCache, ASecondLintIsServedFromTheCacheAndPrintsWhatAFreshOneDoes) {
  TempDir dir;
  std::string error;
  // A member that needs CUDA 12's runtime (information: the image may provide it) and leaves a c10:: symbol to an
  // undeclared torch (an error), in a linux_x86_64 wheel (a warning): findings of three severities with evidence.
  const auto cudart = wheelcheck::test::build_shared(dir, "lib/libcudart.so.12", "cudart.c",
                                                     "int cudaGetDeviceCount(int* n) { *n = 0; return 0; }\n",
                                                     "-Wl,-soname,libcudart.so.12", "gcc", &error);
  ASSERT_TRUE(cudart) << error;
  const auto ext =
      wheelcheck::test::build_shared(dir, "ext/_native.so", "native.cpp", R"(
namespace c10 { struct Error { Error(const char*); }; }
extern "C" int cudaGetDeviceCount(int*);
extern "C" int native_use() { c10::Error e("x"); int n = 0; return cudaGetDeviceCount(&n) + n; }
)",
                                     "-L" + shell_quote(dir.file("lib")) + " -l:libcudart.so.12", "g++", &error);
  ASSERT_TRUE(ext) << error;
  const auto wheel =
      wheelcheck::test::make_wheel(dir, "pkg-1.0+cu126-cp311-cp311-linux_x86_64.whl", {{"pkg/_native.so", *ext}});
  // A db of its own, to change.
  const std::string db = dir.file("db");
  fs::copy(wheelcheck::test::source_dir() + "/db", db, fs::copy_options::recursive);
  const std::string cache = dir.file("cache");

  const std::vector<std::string> formats = {"text", "json", "markdown", "github", "sarif", "junit"};
  std::vector<Lint> fresh;
  for (const auto& f : formats) fresh.push_back(lint(wheel, db, "", "--format " + f));
  ASSERT_EQ(fresh.front().exit_code, 1) << fresh.front().out;
  ASSERT_NE(fresh.front().out.find("undeclared-dependency"), std::string::npos) << fresh.front().out;

  // The first lint with a cache reads the wheel and keeps its report beside the profile.
  const auto first = lint(wheel, db, cache, "--format json");
  EXPECT_EQ(first.exit_code, fresh[1].exit_code);
  EXPECT_EQ(first.out, fresh[1].out);
  ASSERT_EQ(entries(cache, ".lint-").size(), 1u);
  // Served from the cache: with the profile gone, a lint that read the wheel would write it again.
  for (const auto& p : entries(cache, ".bin")) fs::remove(p);
  for (const auto& p : entries(cache, ".json")) fs::remove(p);
  for (std::size_t i = 0; i < formats.size(); ++i) {
    const auto cached = lint(wheel, db, cache, "--format " + formats[i]);
    EXPECT_EQ(cached.exit_code, fresh[i].exit_code) << formats[i];
    EXPECT_EQ(cached.out, fresh[i].out) << formats[i] << ": the cached report prints otherwise";
  }
  EXPECT_TRUE(entries(cache, ".bin").empty()) << "a cached lint read the wheel's profile again";
  EXPECT_EQ(entries(cache, ".lint-").size(), 1u);

  // Another option (no rule set) is another entry; so is a changed db.
  const auto no_rules = lint(wheel, db, cache, "--format json --rules none");
  EXPECT_EQ(entries(cache, ".lint-").size(), 2u) << "--rules none was answered from the default rules' entry";
  std::ofstream(db + "/providers.json", std::ios::app) << "\n";
  const auto changed = lint(wheel, db, cache, "--format json");
  EXPECT_EQ(changed.out, fresh[1].out);
  EXPECT_EQ(entries(cache, ".lint-").size(), 3u) << "a changed db was answered from the old db's entry";
  // Another build of wheelcheck (here a copy of this one: another file) never reads this build's reports.
  fs::create_directories(dir.file("bin"));
  fs::copy_file(wheelcheck::test::binary_path(), dir.file("bin/wheelcheck"));
  const auto other = lint(wheel, db, cache, "--format json", dir.file("bin/wheelcheck"));
  EXPECT_EQ(other.out, fresh[1].out);
  EXPECT_EQ(entries(cache, ".lint-").size(), 4u) << "another executable was answered from this one's entry";
  // A damaged entry is a miss, never an answer: the report is made again.
  for (const auto& p : entries(cache, ".lint-")) std::ofstream(p, std::ios::trunc) << "damaged";
  const auto again = lint(wheel, db, cache, "--format json");
  EXPECT_EQ(again.exit_code, fresh[1].exit_code);
  EXPECT_EQ(again.out, fresh[1].out);
}

}  // namespace unity_test_lint_cache
