// Routes and gates through the library: the FlagOS rule set loads, names its default wheels and matches
// its members by glob. The rule files' errors and each FlagOS incident end to end are in
// tests/cli/test_gates_cli.cpp.
#include <map>
#include <vector>

#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/gates.hpp"
#include "wheelcheck/rules.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_gates {

using namespace wheelcheck;
using namespace wheelcheck::test;

TEST(Rules, FlagOsRuleSetLoadsAndMatchesItsMembers) {
  const auto rs = rules::load(source_dir() + "/db/rules/flagos.json");
  EXPECT_EQ(rs.name, "flagos");
  ASSERT_EQ(rs.routes.size(), 6U);
  const auto sets = rules::load_all(source_dir() + "/db/rules");
  for (const char* w : {"flagtree", "flag_gems", "flag-gems-cpp-cuda", "flag_gems_cpp_metax", "FlagCX"}) {
    ASSERT_NE(rules::default_for(sets, w), nullptr) << w;
  }
  ASSERT_NE(rules::default_for(sets, "torch"), nullptr);
  EXPECT_EQ(rules::default_for(sets, "torch")->name, "flagos-stack") << "FlagOS's fixes for torch builds; no routes";
  EXPECT_EQ(rules::default_for(sets, "numpy"), nullptr);
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

// The lists beside the routes: read, matched, and refused with the file and entry named when malformed.
TEST(Rules, KnownFixesOwnSymbolsRequiredVariablesImportsAndOwnersAreReadAndChecked) {
  const std::string head =
      R"({"schema": "wheelcheck-rules/1", "name": "t", "routes": [{"name": "r", "members": ["a.so"],
    "optional": true, "tolerated": "nothing to set"}], )";
  const auto rs = rules::parse(head + R"(
    "known": [{"id": "X #1", "wheels": ["flagtree"], "kinds": ["missing-version"], "match": "GLIBC_2.38", "fix": "rebuilt"}],
    "own_symbols": [{"wheels": ["flagcx"], "symbols": ["devApiBackend", "flagcx*"], "why": "its own"}],
    "requires_env": [{"id": "I12", "wheels": ["flagcx"], "members": ["flagcx/lib/*.bc"], "beside": ["flagtree"],
                      "variable": "FLAGCX_BITCODE_PATH", "why": "w"}],
    "imports_first": [{"wheels": ["flagcx"], "imports": ["Torch"], "why": "its __init__"}],
    "symbol_owners": [{"symbols": ["_ZN4c10d*"], "distributions": ["Torch"], "why": "torch's"}]})",
                               "t.json");
  EXPECT_EQ(rs.routes.front().tolerated, "nothing to set");
  ASSERT_EQ(rs.known.size(), 1U);
  EXPECT_EQ(rs.known[0].kinds, std::vector<std::string>{"missing-version"});
  ASSERT_NE(rules::own_symbol(rs, "FlagCX", "flagcxGetVersion"), nullptr);
  EXPECT_EQ(rules::own_symbol(rs, "flagtree", "flagcxGetVersion"), nullptr) << "only the wheels it names";
  EXPECT_EQ(rules::own_symbol(rs, "flagcx", "cudaMalloc"), nullptr);
  ASSERT_EQ(rs.requires_env.size(), 1U);
  EXPECT_EQ(rs.requires_env[0].variable, "FLAGCX_BITCODE_PATH");
  const auto first = rules::imports_first(rs, "flagcx");
  ASSERT_EQ(first.size(), 1U);
  EXPECT_EQ(first[0].first, "torch") << "normalized";
  EXPECT_TRUE(rules::imports_first(rs, "flagtree").empty());
  ASSERT_NE(rules::symbol_owner(rs, "_ZN4c10d4Work18blockCurrentStreamEv"), nullptr);
  EXPECT_EQ(rules::symbol_owner(rs, "_ZN4c10d4Work18blockCurrentStreamEv")->distributions,
            std::vector<std::string>{"torch"});
  EXPECT_EQ(rules::symbol_owner(rs, "cudaMalloc"), nullptr);

  auto refused = [&](const std::string& lists, const std::string& says) {
    try {
      rules::parse(head + lists + "}", "bad.json");
      ADD_FAILURE() << "accepted: " << lists;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    }
  };
  refused(R"("known": [{"id": "X", "fix": "f", "typo": 1}])", "known[0].typo: unknown field");
  refused(R"("known": [{"id": "X"}])", "known[0]: needs an \"id\" and a \"fix\"");
  refused(R"("own_symbols": [{"wheels": ["a"], "symbols": ["[x"]}])", "without its ']'");
  refused(R"("requires_env": [{"id": "I", "members": ["a.bc"], "variable": "NOT-A-NAME"}])", "shell variable name");
  refused(R"("imports_first": [{"wheels": ["a"], "imports": ["torch"]}])", "\"why\"");
  refused(R"("symbol_owners": {"symbols": []})", "symbol_owners: expected a list");
  try {
    rules::parse(R"({"schema": "wheelcheck-rules/1", "name": "t", "routes": [{"name": "r", "members": ["a.so"],
      "optional": true}]})",
                 "t.json");
    ADD_FAILURE() << "an optional route without gates or tolerated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tolerated"), std::string::npos) << e.what();
  }
}

// Gates that cannot vouch for their wheels fail closed: what the merge turned off keeps its value, every other
// gate of the rule sets is added at its off value, the first problem is the error and the count of the rest.
TEST(Gates, CloseKeepsTheMergedGatesAndAddsEveryOtherAtItsOffValue) {
  const auto sets = rules::load_all(source_dir() + "/db/rules");
  verdict::Report r;
  r.wheel = "flagtree-0.6.1-cp312-cp312-linux_x86_64.whl";
  r.verdict = verdict::Verdict::Degraded;
  verdict::Route tle;
  tle.name = "flagtree-tle-dist";
  tle.rule_set = "flagos";
  tle.optional = true;
  tle.available = false;
  tle.reasons = {"triton/_C/libflagcx.so: missing library libcudart.so.12"};
  tle.gates = {{"USE_TLE_DIST", "0"}};
  r.routes.push_back(tle);
  const std::vector<verdict::Report> reports{r};  // the result points into them
  gates::Result g = gates::merge(reports);
  ASSERT_EQ(g.gates.size(), 1U);
  EXPECT_TRUE(g.error.empty());
  gates::close(g, sets,
               {"x.whl fails its own integrity check (RECORD)", "y.whl: not a zip",
                "x.whl fails its own integrity check (RECORD)"});
  EXPECT_EQ(g.error, "x.whl fails its own integrity check (RECORD) (and 1 more problem)") << "duplicates said once";
  std::map<std::string, std::string> set;
  for (const auto& gate : g.gates) set[gate.variable] = gate.value;
  EXPECT_EQ(set.size(), 8U) << "every gate of the flagos rule set";
  EXPECT_EQ(set["USE_TLE_DIST"], "0");
  EXPECT_EQ(set["FLAGOS_USE_FLAGGEMS_CPP"], "0");
  EXPECT_EQ(set["WHEELCHECK_SKIP_FLAGCX"], "1");
  const std::string sh = gates::to_sh(g);
  EXPECT_NE(sh.find("export WHEELCHECK_VERDICT='error'\n(exit 2)\n"), std::string::npos) << sh;
  EXPECT_EQ(sh.find("# WARNING:"), std::string::npos) << "the integrity line is the error, said once:\n" << sh;
}

// --export-on: the gates of routes that are on at their opposite value; --conditions-off: a route that holds
// only under a condition sets its gates.
TEST(Gates, OnValuesAndCautiousRoutes) {
  EXPECT_EQ(gates::on_value("0"), "1");
  EXPECT_EQ(gates::on_value("1"), "0");
  EXPECT_EQ(gates::on_value("false"), "true");
  EXPECT_EQ(gates::on_value("cuda"), "") << "no known opposite";
  const auto sets = rules::load_all(source_dir() + "/db/rules");
  verdict::Report r;
  r.wheel = "flagcx-0.9.0+cu130-cp312-cp312-linux_x86_64.whl";
  r.verdict = verdict::Verdict::Unknown;
  verdict::Route cx;
  cx.name = "flagcx";
  cx.rule_set = "flagos";
  cx.available = true;
  cx.conditions = {"flagcx/libflagcx.so: needs an NVIDIA driver >= 580.65.06"};
  cx.gates = {{"TORCH_DEVICE_BACKEND_AUTOLOAD", "0"}, {"WHEELCHECK_SKIP_FLAGCX", "1"}};
  r.routes.push_back(cx);
  EXPECT_TRUE(gates::merge({r}).gates.empty()) << "a route on under a condition sets nothing by default";
  gates::Options o;
  o.conditions_off = true;
  const std::vector<verdict::Report> reports{r};
  gates::Result g = gates::merge(reports, o);
  ASSERT_EQ(g.gates.size(), 2U);
  ASSERT_EQ(g.cautious.size(), 1U);
  EXPECT_NE(g.cautious.front().find("holds only if flagcx/libflagcx.so: needs an NVIDIA driver"), std::string::npos);
  gates::add_on_values(g, sets);
  std::map<std::string, std::string> on;
  for (const auto& gate : g.on) on[gate.variable] = gate.value;
  EXPECT_EQ(on.count("WHEELCHECK_SKIP_FLAGCX"), 0U) << "set off, so not on";
  EXPECT_EQ(on["USE_TLE_DIST"], "1");
  EXPECT_EQ(on["FLAGOS_USE_FLAGGEMS_CPP"], "1");
  const std::string sh = gates::to_sh(g);
  EXPECT_NE(sh.find("export WHEELCHECK_SKIP_FLAGCX='1'"), std::string::npos) << sh;
  EXPECT_NE(sh.find("export USE_TLE_DIST='1'"), std::string::npos) << sh;
}

}  // namespace unity_test_gates
