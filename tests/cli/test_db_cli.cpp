// The db through the command line: `wheelcheck images` lists the FlagOS, generated and target images,
// `wheelcheck image show` gives each fact's provenance, and scripts/gen-db.sh with the built binary
// reproduces the generated files.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "db_support.hpp"
#include "support.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_db_cli {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;
using wheelcheck::test::run;  // not the namespace wheelcheck::run (a unity batch may have its header)

TEST(ImagesCli, ListsFlagOsGeneratedAndTargetsAndShowsProvenance) {
  const auto r = run("cd / && " + shell_quote(binary_path()) + " images");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : k_flagos) EXPECT_NE(r.out.find(name), std::string::npos) << name;
  for (const char* name : k_targets) EXPECT_NE(r.out.find(name), std::string::npos) << name;
  // The 127 packaging targets as one row per policy with its architectures.
  EXPECT_NE(r.out.find("manylinux_2_17   manylinux2014   glibc 2.17   aarch64 armv7l i686 ppc64 ppc64le s390x x86_64"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("127 targets"), std::string::npos) << r.out;
  for (const char* name : {"debian12", "debian13", "torch2.6-debian", "cuda13.0-runtime"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  }
  const auto j = run(shell_quote(binary_path()) + " images --json");
  ASSERT_EQ(j.exit_code, 0);
  const auto list = nlohmann::json::parse(j.out);
  bool cuda = false;
  for (const auto& e : list) {
    if (e["name"] == "cuda13.0") {
      cuda = true;
      std::string unknown = e["unknown"].dump();
      EXPECT_NE(unknown.find("driver version"), std::string::npos) << unknown;
      EXPECT_NE(unknown.find("torch 2.10.0+cpu export tables"), std::string::npos) << unknown;
    }
  }
  EXPECT_TRUE(cuda);
  const auto show = run(shell_quote(binary_path()) + " image show cuda13.0 --json");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const auto im = nlohmann::json::parse(show.out);
  EXPECT_EQ(im["libc"]["version"]["origin"], "declared");
  EXPECT_EQ(im["libc"]["version"]["layer"], "ubuntu24.04");
  EXPECT_EQ(im["driver"]["value"], "unknown");
  const auto text = run(shell_quote(binary_path()) + " image show cuda13.0");
  EXPECT_NE(text.out.find("declared in ubuntu24.04"), std::string::npos);
  EXPECT_NE(text.out.find("probed in cuda13.0-runtime"), std::string::npos);
  const auto missing = run(shell_quote(binary_path()) + " image show cuda13");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("did you mean"), std::string::npos) << missing.err;
}

TEST(DbRegeneration, GeneratedFilesAreReproducedByTheirCommand) {
  // The files made from this machine's own glibc regenerate to the same bytes; the corpus suite
  // (DbRegenerationCorpus) checks the rest.
  if (!have_program("ldconfig") || !have_program("dpkg-query") || !fs::exists("/usr/lib/x86_64-linux-gnu/libc.so.6")) {
    GTEST_SKIP() << "needs a Debian x86_64 machine (dpkg-query, ldconfig)";
  }
  if (!fs::exists(shared_dir() + "/reference/manylinux-policy.json")) {
    GTEST_SKIP() << "../shared/reference absent: the packaging targets derive from its policy files";
  }
  const std::string build = fs::path(binary_path()).parent_path().string();
  const auto r =
      run("WHEELCHECK_SHARED=" + shell_quote(shared_dir()) + " " + shell_quote(source_dir() + "/scripts/gen-db.sh") +
          " --check --build " + shell_quote(build) + " debian12 targets");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("db/ is up to date"), std::string::npos) << r.out << r.err;
}

}  // namespace unity_test_db_cli
