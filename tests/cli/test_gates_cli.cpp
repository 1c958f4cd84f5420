// Routes and gates through the command line: the rule files' errors as `wheelcheck gates` reports them, and
// each FlagOS incident end to end on the sample wheels built from samples/flagos (the right route off, for
// the right reason, with the right gates, and no gate for a route that works), evaluated by a real shell.
#include <filesystem>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/rules.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_gates_cli {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;
using nlohmann::json;
using wheelcheck::test::run;  // not the namespace wheelcheck::run (a unity batch may have its header)

namespace {

std::string sample(const std::string& name) {
  return fs::path(binary_path()).parent_path().string() + "/samples/flagos/" + name;
}
const std::string k_flagtree = "flagtree-0.6.1-cp312-cp312-linux_x86_64.whl";
const std::string k_gems = "flag_gems_cpp_cuda-5.4.0-cp312-cp312-linux_x86_64.whl";
const std::string k_flagcx_cuda = "flagcx-0.9.0+cu130-cp312-cp312-linux_x86_64.whl";
const std::string k_flagcx_ascend = "flagcx-0.9.0+ascend-cp312-cp312-linux_aarch64.whl";

std::string wc(const std::string& args) {
  return shell_quote(binary_path()) + " " + args;
}

// What `eval "$(wheelcheck gates ...)"` adds to a clean shell's environment, as NAME=value lines.
std::set<std::string> eval_in_shell(const std::string& gates_args) {
  const std::string script =
      "before=$(env | sort); eval \"$(" + wc(gates_args) + ")\" || exit 9; comm -13 <(echo \"$before\") <(env | sort)";
  const auto r = run("env -i PATH=/usr/bin:/bin bash -c " + shell_quote(script));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::set<std::string> out;
  std::stringstream ss(r.out);
  for (std::string line; std::getline(ss, line);) {
    if (line.rfind("_=", 0) != 0 && line.rfind("before=", 0) != 0) out.insert(line);
  }
  return out;
}

json gates_json(const std::string& args) {
  const auto r = run(wc("gates " + args + " --format json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

const json* route(const json& j, const std::string& name) {
  for (const auto& r : j["routes"]) {
    if (r["name"] == name) return &r;
  }
  return nullptr;
}

#define REQUIRE_SAMPLE(name)     \
  if (!fs::exists(sample(name))) \
  GTEST_SKIP() << "sample " << (name) << " not built (cmake --build build --target samples)"

}  // namespace

TEST(Rules, ErrorsInRuleFilesAreClearMessages) {
  const std::string head = R"({"schema": "wheelcheck-rules/1", "name": "t", "routes": [)";
  const std::pair<std::string, std::string> cases[] = {
      {R"({"name": "a", "members": ["lib/[abc.so"]})", "'[' without its ']'"},
      {R"({"name": "a", "members": ["lib/**/x.so"]})", "'**' is not supported"},
      {R"({"name": "a", "members": ["/abs.so"]})", "no leading '/'"},
      {R"({"name": "a", "members": ["a.so"], "optional": true, "gates": {"X": "0"}}, {"name": "b", "members": ["b.so"],
          "optional": true, "gates": {"X": "1"}})",
       "conflicts with route \"a\""},
      {R"({"name": "a", "members": ["a.so"], "depends_on": ["nope"]})", "unknown route \"nope\""},
      {R"({"name": "a", "members": ["a.so"]}, {"name": "a", "members": ["b.so"]})", "a second route named \"a\""},
      {R"({"name": "a", "members": ["a.so"], "optional": true})", "needs the gates"},
      {R"({"name": "a", "members": ["a.so"], "optional": true, "gates": {"1BAD": "0"}})", "not a shell variable name"},
      {R"({"name": "a", "members": []})", "at least one member glob"},
      {R"({"name": "a", "members": ["a.so"], "colour": "red"})", "unknown field"},
  };
  for (const auto& [routes, message] : cases) {
    SCOPED_TRACE(routes);
    try {
      rules::parse(head + routes + "]}", "t.json");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("t.json: ", 0), 0U) << e.what();
    }
  }
  // Through the command line: exit 2 and the message.
  REQUIRE_SAMPLE(k_flagtree);
  TempDir d;
  d.write("bad.json", head + R"({"name": "a", "members": ["lib/[x.so"]}]})");
  const auto r = run(
      wc("gates " + shell_quote(sample(k_flagtree)) + " --image cuda13.0 --rules " + shell_quote(d.file("bad.json"))));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("without its ']'"), std::string::npos) << r.err;
}

// Incident 1: the FlagGems C++ companion's libtriton_jit.so was built against PyTorch headers of another
// C++ ABI; the C++ route goes off, nothing else does.
TEST(Gates, FlagGemsCppRouteOffForTheC10Symbol) {
  REQUIRE_SAMPLE(k_gems);
  const std::string w = shell_quote(sample(k_gems));
  EXPECT_EQ(eval_in_shell("gates " + w + " --image cuda13.0"),
            (std::set<std::string>{"FLAGOS_USE_FLAGGEMS_CPP=0", "FLAGOS_BUILD_FLAGGEMS_CPP=0", "USE_C_EXTENSION=0",
                                   "WHEELCHECK_VERDICT=degraded"}));
  const auto j = gates_json(w + " --image cuda13.0");
  const json* r = route(j, "flaggems-cpp");
  ASSERT_NE(r, nullptr) << j.dump(2);
  EXPECT_FALSE((*r)["available"].get<bool>());
  const std::string reasons = (*r)["reasons"].dump();
  EXPECT_NE(reasons.find("flag_gems/lib/libtriton_jit.so"), std::string::npos) << reasons;
  EXPECT_NE(reasons.find("c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&)"),
            std::string::npos)
      << reasons;
  EXPECT_NE(reasons.find("cxx-abi-mismatch"), std::string::npos) << reasons;
  // With PyTorch 2.14's real tables, the MessageLogger constructor's changed signature shows too.
  const auto j214 = gates_json(w + " --image " + shell_quote(source_dir() + "/samples/images/cuda13.0-torch2.14.json"));
  const std::string r214 = (*route(j214, "flaggems-cpp"))["reasons"].dump();
  EXPECT_NE(r214.find("c10::MessageLogger::MessageLogger(char const*, int, int)  [signature-changed]"),
            std::string::npos)
      << r214;
  // The verdict command says the same, with the exit code of a degraded wheel.
  EXPECT_EQ(run(wc(w + " --image cuda13.0")).exit_code, 3);
}

// Incident 2: FlagTree's own triton/_C/libflagcx.so is a CUDA 12 build; in the CUDA 13.0 image the TLE
// loader goes off; in a CUDA 12 image it stays on.
TEST(Gates, FlagTreeTleLoaderOffOnCuda13OnOnCuda12) {
  REQUIRE_SAMPLE(k_flagtree);
  const std::string w = shell_quote(sample(k_flagtree));
  EXPECT_EQ(eval_in_shell("gates " + w + " --image cuda13.0"),
            (std::set<std::string>{"USE_TLE_DIST=0", "WHEELCHECK_VERDICT=degraded"}));
  const auto j = gates_json(w + " --image cuda13.0");
  const std::string reasons = (*route(j, "flagtree-tle-dist"))["reasons"].dump();
  EXPECT_NE(reasons.find("triton/_C/libflagcx.so: missing library libcudart.so.12"), std::string::npos) << reasons;
  EXPECT_TRUE((*route(j, "flagtree-core"))["available"].get<bool>());
  // CUDA 12: libcudart.so.12 found, no USE_TLE_DIST (the driver stays a condition: verdict unknown).
  const auto on12 =
      eval_in_shell("gates " + w + " --image " + shell_quote(source_dir() + "/samples/images/cuda12.4.json"));
  EXPECT_EQ(on12, (std::set<std::string>{"WHEELCHECK_VERDICT=unknown"}));
}

// Incident 3: the Ascend FlagCX build needs libtorch_npu.so, deliberately absent: FlagCX is skipped.
TEST(Gates, AscendFlagCxSkippedWithoutTorchNpu) {
  REQUIRE_SAMPLE(k_flagcx_ascend);
  const std::string w = shell_quote(sample(k_flagcx_ascend));
  EXPECT_EQ(eval_in_shell("gates " + w + " --image ascend-cann9"),
            (std::set<std::string>{"TORCH_DEVICE_BACKEND_AUTOLOAD=0", "WHEELCHECK_SKIP_FLAGCX=1",
                                   "WHEELCHECK_VERDICT=incompatible"}));
  const auto j = gates_json(w + " --image ascend-cann9");
  const json* r = route(j, "flagcx");
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE((*r)["optional"].get<bool>()) << "core for the FlagCX wheel itself";
  EXPECT_NE((*r)["reasons"].dump().find("missing library libtorch_npu.so"), std::string::npos) << (*r).dump(2);
  // The TLE route's member (flagcx/libflagcx.so) loads: no USE_TLE_DIST.
  EXPECT_TRUE((*route(j, "flagtree-tle-dist"))["available"].get<bool>());
  EXPECT_EQ(run(wc("gates " + w + " --image ascend-cann9")).exit_code, 0) << "gates exit 0 whatever the verdict";
  EXPECT_EQ(run(wc(w + " --image ascend-cann9")).exit_code, 1);
}

// The CI's set: every wheel at once, FlagCX installed beside FlagTree; merged gates, each once.
TEST(Gates, MergedOverTheWheelsAndFormats) {
  REQUIRE_SAMPLE(k_flagcx_cuda);
  const std::string args = "gates " + shell_quote(sample(k_flagtree)) + " " + shell_quote(sample(k_gems)) + " --with " +
                           shell_quote(sample(k_flagcx_cuda)) + " --image cuda13.0";
  EXPECT_EQ(eval_in_shell(args),
            (std::set<std::string>{"USE_TLE_DIST=0", "FLAGOS_USE_FLAGGEMS_CPP=0", "FLAGOS_BUILD_FLAGGEMS_CPP=0",
                                   "USE_C_EXTENSION=0", "WHEELCHECK_VERDICT=degraded"}));
  // The CUDA 13 FlagCX wheel given with --with is loaded as the TLE route's member, and works.
  const auto j = json::parse(run(wc(args + " --format json")).out);
  const std::string members = j["routes"].dump();
  EXPECT_NE(members.find("flagcx/libflagcx.so"), std::string::npos) << members;
  EXPECT_EQ(j["gates"], json({{"USE_TLE_DIST", "0"},
                              {"FLAGOS_USE_FLAGGEMS_CPP", "0"},
                              {"FLAGOS_BUILD_FLAGGEMS_CPP", "0"},
                              {"USE_C_EXTENSION", "0"}}));
  // `wheelcheck WHEEL --format sh` is the same output as `gates`.
  EXPECT_EQ(run(wc(shell_quote(sample(k_flagtree)) + " --image cuda13.0 --format sh")).out,
            run(wc("gates " + shell_quote(sample(k_flagtree)) + " --image cuda13.0")).out);
  // github: VAR=value lines into $GITHUB_ENV, annotations on stdout, the table in the summary.
  TempDir d;
  const auto gh = run("GITHUB_ENV=" + shell_quote(d.file("env")) + " " +
                      wc(args + " --format github --summary " + shell_quote(d.file("sum.md"))));
  EXPECT_EQ(gh.exit_code, 0) << gh.err;
  EXPECT_EQ(read_file(d.file("env")),
            "USE_TLE_DIST=0\nFLAGOS_USE_FLAGGEMS_CPP=0\nFLAGOS_BUILD_FLAGGEMS_CPP=0\nUSE_C_EXTENSION=0\nWHEELCHECK_"
            "VERDICT=degraded\n");
  EXPECT_NE(gh.out.find("::warning title=wheelcheck%3A flagtree-tle-dist off"), std::string::npos) << gh.out;
  const std::string md = read_file(d.file("sum.md"));
  EXPECT_NE(
      md.find("| flagtree-0.6.1-cp312-cp312-linux_x86_64.whl | degraded | flagtree-tle-dist (optional) | **no** |"),
      std::string::npos)
      << md;
  // Without $GITHUB_ENV the lines go to stdout, for `>> "$GITHUB_ENV"`.
  const auto plain = run("env -u GITHUB_ENV " + wc(args + " --format github"));
  EXPECT_EQ(plain.out.rfind("USE_TLE_DIST=0\n", 0), 0U) << plain.out;
}

// Values are single-quoted: eval sets them literally, whatever they hold; conflicting rule sets are
// an error naming both.
TEST(Gates, ShellQuotingAndConflictsBetweenRuleSets) {
  REQUIRE_SAMPLE(k_flagtree);
  TempDir d;
  d.write("odd.json", R"({"schema": "wheelcheck-rules/1", "name": "odd", "routes": [
      {"name": "core", "members": ["triton/_C/libtriton.so"]},
      {"name": "tle", "optional": true, "members": ["triton/_C/libflagcx.so"],
       "gates": {"ODD": "it's $(touch /tmp/wheelcheck-pwned) `id` \"q\""}}]})");
  const auto vars = eval_in_shell("gates " + shell_quote(sample(k_flagtree)) + " --image cuda13.0 --rules " +
                                  shell_quote(d.file("odd.json")));
  EXPECT_TRUE(vars.count("ODD=it's $(touch /tmp/wheelcheck-pwned) `id` \"q\"")) << *vars.begin();
  EXPECT_FALSE(fs::exists("/tmp/wheelcheck-pwned"));
  // Two rule sets in a db, each the default for one wheel, setting one variable two ways.
  fs::create_directories(d.file("db/rules"));
  for (const char* sub : {"images", "layers", "exports"})
    fs::create_directory_symlink(source_dir() + "/db/" + sub, d.file(std::string("db/") + sub));
  d.write("db/rules/a.json", R"({"schema": "wheelcheck-rules/1", "name": "a", "applies_to": ["flagtree"], "routes": [
      {"name": "tle", "optional": true, "members": ["triton/_C/libflagcx.so"], "gates": {"SHARED": "0"}}]})");
  d.write("db/rules/b.json",
          R"({"schema": "wheelcheck-rules/1", "name": "b", "applies_to": ["flag-gems-cpp-*"], "routes": [
      {"name": "cpp", "optional": true, "members": ["flag_gems/lib/*.so"], "gates": {"SHARED": "1"}}]})");
  const auto r = run(wc("gates " + shell_quote(sample(k_flagtree)) + " " + shell_quote(sample(k_gems)) +
                        " --image cuda13.0 --db " + shell_quote(d.file("db"))));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("route tle of rule set a"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("route cpp of rule set b"), std::string::npos) << r.err;
}

// --export-on on CUDA 13.0 with FlagTree and the CUDA FlagCX wheel beside it: the routes those wheels have are
// on or off as checked; Torch-FL's MUSA FlagCX path and FlagGems' C++ route are in neither wheel and stay unset
// (an opt-in such as TORCH_FL_MUSA_FLAGCX_WHEEL=1 would send the setup to a wheel that is not there).
TEST(Gates, ExportOnLeavesRoutesNoGivenWheelHasUnset) {
  REQUIRE_SAMPLE(k_flagcx_cuda);
  const std::string args = "gates " + shell_quote(sample(k_flagtree)) + " --with " +
                           shell_quote(sample(k_flagcx_cuda)) + " --image cuda13.0 --export-on";
  EXPECT_EQ(eval_in_shell(args), (std::set<std::string>{"USE_TLE_DIST=0", "TORCH_DEVICE_BACKEND_AUTOLOAD=1",
                                                        "WHEELCHECK_SKIP_FLAGCX=0", "WHEELCHECK_VERDICT=degraded"}));
  const auto out = run(wc(args)).out;
  EXPECT_NE(out.find("# TORCH_FL_MUSA_FLAGCX_WHEEL not set: no given wheel has route flagcx-musa"), std::string::npos)
      << out;
  EXPECT_NE(out.find("# USE_C_EXTENSION not set: no given wheel has route flaggems-cpp"), std::string::npos) << out;
}

// Failed closed (a wheel that is not there): the switches are off on every image, and FLAGCX_BITCODE_PATH,
// whose value is NVIDIA FlagTree's own bitcode, is set on an NVIDIA image only, never on Ascend or on an image
// wheelcheck does not know.
TEST(Gates, FailClosedSetsTheNvidiaBitcodePathOnlyOnCuda) {
  TempDir d;
  const std::string missing = shell_quote(d.file("flagcx-0.14.0+cuda13.3-cp312-cp312-linux_x86_64.whl"));
  const std::string nvidia =
      "export FLAGCX_BITCODE_PATH='/opt/flagtree/triton/backends/nvidia/lib/libflagcx_device.bc'";
  for (const char* image : {"flagos-runtime-ascend-cann9.0.0", "ascend-cann9", "no-such-image"}) {
    SCOPED_TRACE(image);
    const auto r = run(wc("gates " + missing + " --image " + image));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.out.find("export TORCH_FL_MUSA_FLAGCX_WHEEL='0'\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("export WHEELCHECK_SKIP_FLAGCX='1'\n"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("FLAGCX_BITCODE_PATH='"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("# FLAGCX_BITCODE_PATH not set: its value /opt/flagtree/triton/backends/nvidia/lib/"
                         "libflagcx_device.bc is a path of route flagcx-device-bitcode (rule set flagos), which only "
                         "cuda builds have, and the image's toolkit is " +
                         std::string(std::string(image) == "no-such-image" ? "unknown or none" : "cann")),
              std::string::npos)
        << r.out;
    const auto j = run(wc("gates " + missing + " --image " + image + " --format json"));
    EXPECT_EQ(json::parse(j.out)["gates"].count("FLAGCX_BITCODE_PATH"), 0U) << j.out;
  }
  const auto cuda = run(wc("gates " + missing + " --image flagos-runtime-nvidia-cuda13.3"));
  EXPECT_EQ(cuda.exit_code, 2) << cuda.err;
  EXPECT_NE(cuda.out.find(nvidia + "\n"), std::string::npos) << cuda.out;
}

// samples/set_env_cuda.sh: pins, checks, evals the gates and shows the decisions.
TEST(Gates, SetEnvCudaScriptShowsTheFlow) {
  REQUIRE_SAMPLE(k_flagcx_cuda);
  const auto r =
      run("WHEELCHECK=" + shell_quote(binary_path()) + " " + shell_quote(source_dir() + "/samples/set_env_cuda.sh") +
          " " + shell_quote(fs::path(sample(k_flagtree)).parent_path().string()));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("FlagTree TLE distributed loader: off (USE_TLE_DIST=0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FlagGems C++ route: off"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FlagCX: install"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("overall verdict: degraded"), std::string::npos) << r.out;
}

}  // namespace unity_test_gates_cli
