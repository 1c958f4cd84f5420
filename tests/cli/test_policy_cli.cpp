// Packaging policies through the command line: `wheelcheck inspect` states what a wheel's binaries are
// consistent with, in text and JSON, computed and cached alike.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "support.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_policy_cli {

using namespace wheelcheck;
using namespace wheelcheck::test;
using wheelcheck::test::run;  // not the namespace wheelcheck::run (a unity batch may have its header)
namespace fs = std::filesystem;

TEST(InspectCli, StatesConsistentWithInTextAndJson) {
  const auto w =
      shared_dir() + "/fixtures/auditwheel-wheels/python_mscl-67.0.1.0-cp313-cp313-manylinux2014_aarch64.whl";
  if (!fs::exists(w)) GTEST_SKIP() << "../shared/fixtures/auditwheel-wheels is absent";
  TempDir d;
  const std::string cmd = shell_quote(binary_path()) + " inspect --cache-dir " + shell_quote(d.file("cache")) + " ";
  const auto text = run(cmd + shell_quote(w));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("consistent with: linux_aarch64"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("GLIBC_2.29 of libm.so.6 needs manylinux_2_31_aarch64"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("tagged manylinux2014_aarch64, but its binaries are consistent only with linux_aarch64"),
            std::string::npos)
      << text.out;
  // Cold (computed) and warm (the cached rendering with the cached head) print the same document.
  const auto cold = run(shell_quote(binary_path()) + " inspect --no-cache --json " + shell_quote(w));
  const auto warm1 = run(cmd + "--json " + shell_quote(w));
  const auto warm2 = run(cmd + "--json " + shell_quote(w));
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  EXPECT_EQ(cold.out, warm1.out);
  EXPECT_EQ(cold.out, warm2.out);
  const auto j = nlohmann::json::parse(cold.out);
  EXPECT_EQ(j["consistent_with"], "linux_aarch64");
  EXPECT_EQ(j["tag_claim"]["tag"], "manylinux2014_aarch64");
  bool libm = false;
  for (const auto& k : j["constrained_by"]) {
    libm = libm ||
           (k["library"] == "libm.so.6" && k["version"] == "GLIBC_2.29" && k["ceiling"] == "manylinux_2_31_aarch64");
  }
  EXPECT_TRUE(libm) << j["constrained_by"].dump(2);
  EXPECT_EQ(j["schema_version"], 1);  // the profile follows in the same object
  SKIP_WITHOUT_JSONSCHEMA();
  const auto file = d.write("one.json", cold.out);
  const auto many = run(cmd + "--json " + shell_quote(w) + " " + shell_quote(w));
  const auto arr = nlohmann::json::parse(many.out);
  ASSERT_EQ(arr.size(), 2U);
  const auto v = validate_json(source_dir() + "/docs/inspect.schema.json", {file});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

}  // namespace unity_test_policy_cli
