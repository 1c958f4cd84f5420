// The installed command line: `cmake --install` puts the db beside the binary, where it finds it from any
// folder.
#include <filesystem>

#include "support.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_resolve_cli {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;
using wheelcheck::test::run;  // not the namespace wheelcheck::run (a unity batch may have its header)

// The db travels with the binary: installed, `--image cuda13.0` works from any folder.
TEST(Install, DbIsFoundBesideTheInstalledBinary) {
  if (!have_program("cmake")) GTEST_SKIP() << "cmake absent";
  TempDir d;
  const std::string build_dir = fs::path(binary_path()).parent_path().string();
  const auto inst = run("cmake --install " + shell_quote(build_dir) + " --prefix " + shell_quote(d.file("prefix")));
  ASSERT_EQ(inst.exit_code, 0) << inst.out << inst.err;
  ASSERT_TRUE(fs::exists(d.file("prefix/share/wheelcheck/db/images/cuda13.0.json")));
  const auto r =
      run("cd / && env -u WHEELCHECK_DB " + shell_quote(d.file("prefix/bin/wheelcheck")) + " image show cuda13.0");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(d.file("prefix/share/wheelcheck/db/images/cuda13.0.json")), std::string::npos)
      << r.out.substr(0, 400);
}

}  // namespace unity_test_resolve_cli
