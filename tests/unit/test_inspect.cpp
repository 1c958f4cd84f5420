// inspect through the library, on wheels packed here from libraries built here: ELF members found by their
// magic wherever they are, and the profile cache's round trip. The command line's inspect is in
// tests/cli/test_inspect_cli.cpp.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "inspect_support.hpp"
#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/util.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_inspect {

using namespace wheelcheck;
using namespace wheelcheck::test;
using nlohmann::json;

TEST(Inspect, FindsElfMembersByMagicWhereverTheyAre) {
  TempDir dir;
  const auto b = build_members(dir);
  const auto w = make_wheel(dir, k_name, layout(b), {"--requires-dist", "torch>=2.6", "--requires-python", ">=3.10"});
  const auto p = inspect_wheel(w);
  std::vector<std::string> paths;
  for (const auto& m : p.members) paths.push_back(m.path);
  EXPECT_EQ(paths,
            (std::vector<std::string>{"pkg/ext.cpython-312-x86_64-linux-gnu.so",
                                      "pkg-1.0.data/platlib/pkg/lib/libhelper.so", "pkg-1.0.data/scripts/tool"}));
  EXPECT_TRUE(p.record_verified);
  EXPECT_TRUE(p.problems.empty()) << kinds(p.problems)[0];
  EXPECT_EQ(p.member_count, 8U);
  EXPECT_EQ(p.metadata.requires_dist, std::vector<std::string>{"torch>=2.6"});
  EXPECT_EQ(p.metadata.requires_python, ">=3.10");
  EXPECT_EQ(p.sha256, sha256_file_hex(w));
  const auto& ext = *p.members[0].elf;
  EXPECT_EQ(ext.needed[0], "libhelper.so");
  EXPECT_EQ(ext.runpath, std::vector<std::string>{"$ORIGIN/lib"});
  EXPECT_FALSE(p.members[2].elf->interpreter.empty());  // the script is an executable with PT_INTERP
}

TEST(Inspect, CacheRoundTripsTheProfileExactly) {
  TempDir dir;
  const auto b = build_members(dir);
  const auto w = make_wheel(dir, k_name, layout(b));
  const auto p = inspect_wheel(w);
  const auto q = deserialize_profile(serialize_profile(p));
  EXPECT_EQ(profile_to_json(q), profile_to_json(p));
  auto damaged = serialize_profile(p);
  damaged.resize(damaged.size() / 2);
  EXPECT_THROW(deserialize_profile(damaged), Error);
}

}  // namespace unity_test_inspect
