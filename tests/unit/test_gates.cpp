// Routes and gates through the library: the FlagOS rule set loads, names its default wheels and matches
// its members by glob. The rule files' errors and each FlagOS incident end to end are in
// tests/cli/test_gates_cli.cpp.
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

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
  ASSERT_EQ(rs.routes.size(), 7U);
  const auto sets = rules::load_all(source_dir() + "/db/rules");
  for (const char* w : {"flagtree", "flag_gems", "flag-gems-cpp-cuda", "flag_gems_cpp_metax", "FlagCX"}) {
    ASSERT_NE(rules::default_for(sets, w), nullptr) << w;
  }
  ASSERT_NE(rules::default_for(sets, "torch"), nullptr);
  EXPECT_EQ(rules::default_for(sets, "torch")->name, "flagos-stack") << "FlagOS's fixes for torch builds; no routes";
  EXPECT_EQ(rules::default_for(sets, "numpy"), nullptr);
  // FlagGems' own import is a core route of Python modules (FlagTree#1234 broke it from FlagTree's side).
  const auto& gems_core = rs.routes[2];
  EXPECT_EQ(gems_core.name, "flaggems-core");
  EXPECT_FALSE(gems_core.optional);
  EXPECT_TRUE(rules::route_has(gems_core, "flag_gems", "flag_gems/__init__.py"));
  EXPECT_TRUE(rules::route_has(rs.routes[1], "flagtree", "triton/experimental/tle/language/flagcx_wrapper.py"));
  const auto& gems = rs.routes[3];
  EXPECT_TRUE(rules::route_has(gems, "flag_gems_cpp_cuda", "flag_gems/c_operators.cpython-312-x86_64-linux-gnu.so"));
  EXPECT_TRUE(rules::route_has(gems, "flag_gems_cpp_cuda", "flag_gems/lib/libtriton_jit.so"));
  EXPECT_FALSE(rules::route_has(gems, "flag_gems_cpp_cuda", "flag_gems/lib/sub/libx.so")) << "'*' stays in its folder";
  EXPECT_FALSE(rules::route_has(gems, "torch", "flag_gems/lib/libtriton_jit.so")) << "limited to its wheels";
  const auto& flagcx = rs.routes[4];
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
  EXPECT_EQ(set.size(), 7U) << "every gate of the flagos rule set but the NVIDIA path (the image's toolkit unknown)";
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
  EXPECT_EQ(on.count("USE_TLE_DIST"), 0U) << "no given wheel has FlagTree's route: never switched on";
  EXPECT_EQ(on.count("FLAGOS_USE_FLAGGEMS_CPP"), 0U) << "nor FlagGems' C++ route";
  const std::string sh = gates::to_sh(g);
  EXPECT_NE(sh.find("export WHEELCHECK_SKIP_FLAGCX='1'"), std::string::npos) << sh;
  EXPECT_EQ(sh.find("USE_TLE_DIST='"), std::string::npos) << sh;
  EXPECT_NE(sh.find("# USE_TLE_DIST not set: no given wheel has route flagtree-tle-dist of rule set flagos"),
            std::string::npos)
      << sh;
}

// --export-on switches on only the routes a given wheel has and that are on: FlagTree's TLE loader on a
// CUDA image is on (USE_TLE_DIST=1); Torch-FL's MUSA FlagCX opt-in and FlagGems' C++ route are in no given
// wheel and stay unset (TORCH_FL_MUSA_FLAGCX_WHEEL=1 would send Torch-FL to a MUSA wheel that is not there).
TEST(Gates, ExportOnSwitchesOnOnlyTheRoutesAGivenWheelHas) {
  const auto sets = rules::load_all(source_dir() + "/db/rules");
  verdict::Report r;
  r.wheel = "flagtree-0.7.0-cp312-cp312-linux_x86_64.whl";
  r.image = "cuda13.0";
  for (const char* name : {"flagtree-core", "flagtree-tle-dist"}) {
    verdict::Route rt;
    rt.name = name;
    rt.rule_set = "flagos";
    rt.available = true;
    r.routes.push_back(rt);
  }
  const std::vector<verdict::Report> reports{r};
  gates::Options o;
  o.export_on = true;
  o.image_toolkit = "cuda";
  gates::Result g = gates::merge(reports, o);
  gates::add_on_values(g, sets);
  std::map<std::string, gates::Gate> on;
  for (const auto& gate : g.on) on[gate.variable] = gate;
  ASSERT_EQ(on.size(), 1U) << gates::to_sh(g);
  EXPECT_EQ(on["USE_TLE_DIST"].value, "1");
  EXPECT_EQ(on["USE_TLE_DIST"].wheel, r.wheel) << "the wheel that has the route";
  const std::string sh = gates::to_sh(g);
  for (const char* var : {"TORCH_FL_MUSA_FLAGCX_WHEEL", "USE_C_EXTENSION", "FLAGOS_USE_FLAGGEMS_CPP",
                          "TORCH_DEVICE_BACKEND_AUTOLOAD", "WHEELCHECK_SKIP_FLAGCX", "FLAGCX_BITCODE_PATH"}) {
    EXPECT_EQ(sh.find(std::string("export ") + var + "="), std::string::npos) << var << "\n" << sh;
  }
  EXPECT_NE(sh.find("# TORCH_FL_MUSA_FLAGCX_WHEEL not set: no given wheel has route flagcx-musa of rule set flagos, "
                    "so it is not switched on (its off value is 0)\n"),
            std::string::npos)
      << sh;
  const auto j = gates::to_json(g);
  EXPECT_EQ(j["on"], nlohmann::ordered_json({{"USE_TLE_DIST", "1"}})) << j.dump(2);
  EXPECT_EQ(j["unset"].size(), 7U) << j.dump(2);
}

// Failed closed, a gate whose value is a vendor's path (FLAGCX_BITCODE_PATH names NVIDIA FlagTree's own
// bitcode) is set only on an image of that vendor: not on Ascend, not on an image whose toolkit is unknown;
// the switches are set off everywhere.
TEST(Gates, FailClosedSetsAVendorsPathOnlyOnThatVendorsImage) {
  const auto sets = rules::load_all(source_dir() + "/db/rules");
  const std::string nvidia_bc = "/opt/flagtree/triton/backends/nvidia/lib/libflagcx_device.bc";
  auto vars = [](const gates::Result& g) {
    std::map<std::string, std::string> out;
    for (const auto& gate : g.gates) out[gate.variable] = gate.value;
    return out;
  };
  const auto cuda = vars(gates::fail_closed(sets, "x.whl: not a zip", "cuda"));
  EXPECT_EQ(cuda.at("FLAGCX_BITCODE_PATH"), nvidia_bc);
  EXPECT_EQ(cuda.size(), 8U);
  for (const char* toolkit : {"cann", "musa", ""}) {
    SCOPED_TRACE(toolkit);
    const gates::Result g = gates::fail_closed(sets, "x.whl: not a zip", toolkit);
    const auto set = vars(g);
    EXPECT_EQ(set.count("FLAGCX_BITCODE_PATH"), 0U);
    EXPECT_EQ(set.size(), 7U) << "every switch still off";
    EXPECT_EQ(set.at("TORCH_FL_MUSA_FLAGCX_WHEEL"), "0");
    EXPECT_EQ(set.at("WHEELCHECK_SKIP_FLAGCX"), "1");
    const std::string sh = gates::to_sh(g);
    EXPECT_EQ(sh.find("export FLAGCX_BITCODE_PATH"), std::string::npos) << sh;
    EXPECT_EQ(sh.find("nvidia/lib/libflagcx_device.bc'"), std::string::npos) << sh;
    ASSERT_EQ(g.unset.size(), 1U);
    EXPECT_EQ(g.unset[0], "FLAGCX_BITCODE_PATH not set: its value " + nvidia_bc +
                              " is a path of route flagcx-device-bitcode (rule set flagos), which only cuda builds "
                              "have, and the image's toolkit is " +
                              (*toolkit ? std::string(toolkit) : std::string("unknown or none")));
  }
  // Gates that cannot vouch for their wheels close the same way, with the merge's image toolkit.
  const std::vector<verdict::Report> none;
  gates::Options o;
  o.image_toolkit = "cann";
  gates::Result g = gates::merge(none, o);
  gates::close(g, sets, {"x.whl fails its own integrity check (RECORD)"});
  EXPECT_EQ(vars(g).count("FLAGCX_BITCODE_PATH"), 0U);
  o.image_toolkit = "cuda";
  g = gates::merge(none, o);
  gates::close(g, sets, {"x.whl fails its own integrity check (RECORD)"});
  EXPECT_EQ(vars(g).at("FLAGCX_BITCODE_PATH"), nvidia_bc);
}

}  // namespace unity_test_gates
