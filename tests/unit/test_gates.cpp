// Routes and gates through the library: the FlagOS rule set loads, names its default wheels and matches
// its members by glob. The rule files' errors and each FlagOS incident end to end are in
// tests/cli/test_gates_cli.cpp.
#include "support.hpp"
#include "wheelcheck/rules.hpp"

using namespace wheelcheck;
using namespace wheelcheck::test;

TEST(Rules, FlagOsRuleSetLoadsAndMatchesItsMembers) {
  const auto rs = rules::load(source_dir() + "/db/rules/flagos.json");
  EXPECT_EQ(rs.name, "flagos");
  ASSERT_EQ(rs.routes.size(), 4U);
  const auto sets = rules::load_all(source_dir() + "/db/rules");
  for (const char* w : {"flagtree", "flag_gems", "flag-gems-cpp-cuda", "flag_gems_cpp_metax", "FlagCX"}) {
    ASSERT_NE(rules::default_for(sets, w), nullptr) << w;
  }
  EXPECT_EQ(rules::default_for(sets, "torch"), nullptr);
  const auto& gems = rs.routes[2];
  EXPECT_TRUE(rules::route_has(gems, "flag_gems_cpp_cuda", "flag_gems/c_operators.cpython-312-x86_64-linux-gnu.so"));
  EXPECT_TRUE(rules::route_has(gems, "flag_gems_cpp_cuda", "flag_gems/lib/libtriton_jit.so"));
  EXPECT_FALSE(rules::route_has(gems, "flag_gems_cpp_cuda", "flag_gems/lib/sub/libx.so")) << "'*' stays in its folder";
  EXPECT_FALSE(rules::route_has(gems, "torch", "flag_gems/lib/libtriton_jit.so")) << "limited to its wheels";
  const auto& flagcx = rs.routes[3];
  EXPECT_TRUE(flagcx.optional);
  EXPECT_TRUE(rules::core_for(flagcx, "flagcx"));
  EXPECT_FALSE(rules::core_for(flagcx, "flagtree"));
  // Gates in file order.
  EXPECT_EQ(gems.gates.front().first, "FLAGOS_USE_FLAGGEMS_CPP");
}
