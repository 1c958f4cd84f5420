// End-to-end tests of `wheelcheck scan` and of wheels given as URLs: the real build/wheelcheck binary
// against tests/net/server.py serving the FlagOS-shaped sample index that tests/tools/sample_index.py lays
// out from the built samples (build/samples, or $WHEELCHECK_SAMPLES_DIR). Faults are injected through the
// server's POST /_faults and what wheelcheck asked for is read back from GET /_stats. Every run gets its own
// --state, --report and --cache-dir under a temporary folder: never the user's cache.
//
// Expectations (the samples' known verdicts): flagtree 0.6.1 on cuda13.0 degraded (USE_TLE_DIST=0);
// flag_gems_cpp_cuda 5.4.0 on cuda13.0 degraded (FLAGOS_USE_FLAGGEMS_CPP=0 ...); flagcx 0.9.0+cu130 on cuda13.0
// unknown (driver version); flagcx 0.9.0+ascend on ascend-cann9 incompatible (libtorch_npu.so). The index
// adds flagtree 0.7.0 (yanked: "broken build") and flagcx 0.9.1+cu124 (the wrong CUDA toolkit variant).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "net_server.hpp"
#include "support.hpp"
#include "wheelcheck/format.hpp"
#include "wheelcheck/report.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* k_hosted = "flagos-pypi-hosted";
constexpr const char* k_nvidia = "flagos-pypi-nvidia";
constexpr const char* k_ascend = "flagos-pypi-ascend";

constexpr const char* k_flagtree_061 = "flagtree-0.6.1-cp312-cp312-linux_x86_64.whl";
constexpr const char* k_flagtree_070 = "flagtree-0.7.0-cp312-cp312-linux_x86_64.whl";
constexpr const char* k_gems = "flag_gems_cpp_cuda-5.4.0-cp312-cp312-linux_x86_64.whl";
constexpr const char* k_cx_cu130 = "flagcx-0.9.0+cu130-cp312-cp312-linux_x86_64.whl";
constexpr const char* k_cx_cu124 = "flagcx-0.9.1+cu124-cp312-cp312-linux_x86_64.whl";
constexpr const char* k_cx_ascend = "flagcx-0.9.0+ascend-cp312-cp312-linux_aarch64.whl";

// The samples folder: $WHEELCHECK_SAMPLES_DIR, else the build's samples folder.
std::string samples_dir() {
  if (const char* s = std::getenv("WHEELCHECK_SAMPLES_DIR"); s != nullptr && *s != '\0') return s;
  return build_samples_dir();
}

// Why these tests cannot run here ("" when they can).
std::string missing_tools() {
  if (!have_program("python3")) return "python3 is not on PATH (tests/net/server.py and sample_index.py need it)";
  const auto samples = samples_dir();
  if (!fs::is_regular_file(samples + "/flagos/" + k_flagtree_061))
    return "the FlagOS sample wheels are not built (" + samples + "/flagos; set WHEELCHECK_SAMPLES_DIR)";
  return "";
}

// Keeps the developer's environment out of wheelcheck's way: no proxy for loopback, no ~/.netrc, no pip index.
void isolate_environment() {
  ::setenv("no_proxy", "127.0.0.1,localhost", 1);
  ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
  ::setenv("NETRC", "/nonexistent/netrc", 1);
  ::unsetenv("PIP_INDEX_URL");
  ::unsetenv("PIP_EXTRA_INDEX_URL");
}

CommandResult wheelcheck(const std::string& args) {
  return run(shell_quote(binary_path()) + " " + args);
}

std::string describe(const CommandResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out.substr(0, 4000) + "\nstderr:\n" +
         r.err.substr(0, 4000);
}

json load_json(const std::string& path) {
  const auto text = read_file(path);
  if (text.empty()) throw std::runtime_error("empty or missing JSON file: " + path);
  return json::parse(text);
}

std::string sha256_hex(const std::string& bytes) {
  Hasher h;
  h.update(bytes.data(), bytes.size());
  return to_hex(h.finish());
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A sample index tree in a temporary folder and a server.py on it.
class SampleIndex {
 public:
  explicit SampleIndex(int extra_projects = 0) {
    const auto r = run("python3 " + shell_quote(source_dir() + "/tests/tools/sample_index.py") + " --samples " +
                       shell_quote(samples_dir()) + " --out " + shell_quote(root()) + " --extra-projects " +
                       std::to_string(extra_projects));
    if (r.exit_code != 0) throw std::runtime_error("sample_index.py failed: " + r.out + r.err);
    m_server = std::make_unique<NetServer>(NetServer::index_server(root()));
  }
  std::string root() const { return m_dir.path() + "/index"; }
  NetServer& server() const { return *m_server; }
  std::string index_url(const std::string& index) const { return m_server->url("/" + index + "/simple/"); }
  std::string file_path(const std::string& index, const std::string& project, const std::string& filename) const {
    return "/" + index + "/files/" + project + "/" + filename;
  }
  std::string local(const std::string& index, const std::string& project, const std::string& filename) const {
    return root() + "/" + index + "/" + project + "/" + filename;
  }
  // The URL of a file with its #sha256= fragment.
  std::string file_url(const std::string& index, const std::string& project, const std::string& filename) const {
    return m_server->url(file_path(index, project, filename)) +
           "#sha256=" + sha256_hex(read_file(local(index, project, filename)));
  }
  // The three indexes, the three FlagOS projects, both CI images.
  std::string flagos_args() const {
    return "--index " + shell_quote(index_url(k_hosted)) + " --index " + shell_quote(index_url(k_nvidia)) +
           " --index " + shell_quote(index_url(k_ascend)) +
           " --project flagtree --project flag-gems-cpp-cuda --project flagcx --image cuda13.0 --image ascend-cann9";
  }

 private:
  TempDir m_dir;
  std::unique_ptr<NetServer> m_server;
};

// One run's folders: --state, --report, --cache-dir under a temporary folder.
struct ScanRun {
  std::string state, report, cache;
  std::string args() const {
    return "-q --state " + shell_quote(state) + " --report " + shell_quote(report) + " --cache-dir " +
           shell_quote(cache);
  }
  json report_json() const { return load_json(report + "/report.json"); }
};
ScanRun scan_run(const TempDir& dir, const std::string& name, const std::string& cache = "cache",
                 const std::string& state = "") {
  return {dir.file(state.empty() ? name + "-state" : state), dir.file(name), dir.file(cache)};
}

const json* find_wheel(const json& report, const std::string& filename) {
  for (const auto& w : report.at("wheels"))
    if (w.at("filename") == filename) return &w;
  return nullptr;
}
const json* find_result(const json& wheel, const std::string& image) {
  for (const auto& r : wheel.at("results"))
    if (r.at("image") == image) return &r;
  return nullptr;
}
const json* find_pin(const json& report, const std::string& image, const std::string& project) {
  for (const auto& p : report.at("pins"))
    if (p.at("image") == image && p.at("project") == project) return &p;
  return nullptr;
}
std::set<std::string> wheel_names(const json& report) {
  std::set<std::string> out;
  for (const auto& w : report.at("wheels")) out.insert(w.at("filename").get<std::string>());
  return out;
}

void expect_schema_valid(const std::string& report_json) {
  if (python_with_jsonschema().empty()) {
    std::cout << "[  INFO    ] python3-jsonschema is absent: " << report_json << " not validated\n";
    return;
  }
  const auto v = validate_json(source_dir() + "/docs/scan.schema.json", {report_json});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

// The expected verdict of one wheel on one image.
struct Cell {
  const char* wheel;
  const char* image;
  bool targeted;
  const char* verdict;  // checked only when targeted
};
const std::vector<Cell>& expected_cells() {
  static const std::vector<Cell> cells = {
      {k_flagtree_061, "cuda13.0", true, "degraded"},
      {k_flagtree_061, "ascend-cann9", false, ""},
      {k_flagtree_070, "cuda13.0", true, "degraded"},
      {k_flagtree_070, "ascend-cann9", false, ""},
      {k_gems, "cuda13.0", true, "degraded"},
      {k_gems, "ascend-cann9", false, ""},
      {k_cx_cu130, "cuda13.0", true, "unknown"},
      {k_cx_cu130, "ascend-cann9", false, ""},
      // The same bytes as +cu130 under a +cu124 label: pip installs it on cuda13.0 (labels are no part of its
      // choice), so its cell is the loader's verdict, the cu130 build's; the pins pass it over for its label.
      {k_cx_cu124, "cuda13.0", true, "unknown"},
      {k_cx_cu124, "ascend-cann9", false, ""},
      {k_cx_ascend, "cuda13.0", false, ""},
      {k_cx_ascend, "ascend-cann9", true, "incompatible"},
  };
  return cells;
}

// The verdicts of the full run of the three indexes (every wheel new).
void expect_flagos_verdicts(const json& report) {
  EXPECT_EQ(wheel_names(report),
            (std::set<std::string>{k_flagtree_061, k_flagtree_070, k_gems, k_cx_cu130, k_cx_cu124, k_cx_ascend}));
  EXPECT_EQ(report.at("images"), json({"cuda13.0", "ascend-cann9"}));
  for (const auto& c : expected_cells()) {
    SCOPED_TRACE(std::string(c.wheel) + " on " + c.image);
    const auto* w = find_wheel(report, c.wheel);
    ASSERT_NE(w, nullptr);
    EXPECT_TRUE(w->at("new").get<bool>());
    EXPECT_TRUE(w->at("error").is_null()) << w->at("error");
    ASSERT_EQ(w->at("results").size(), 2u);
    const auto* r = find_result(*w, c.image);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->at("targeted").get<bool>(), c.targeted);
    if (c.targeted) {
      EXPECT_EQ(r->at("verdict"), c.verdict) << r->at("headline");
    }
  }
  const auto* ft = find_wheel(report, k_flagtree_061);
  const auto* ft7 = find_wheel(report, k_flagtree_070);
  const auto* gems = find_wheel(report, k_gems);
  const auto* cx = find_wheel(report, k_cx_cu130);
  const auto* asc = find_wheel(report, k_cx_ascend);
  ASSERT_TRUE(ft && ft7 && gems && cx && asc);
  EXPECT_EQ(find_result(*ft, "cuda13.0")->at("gates"), json({{"USE_TLE_DIST", "0"}}));
  EXPECT_FALSE(ft->at("yanked").get<bool>());
  EXPECT_EQ(ft->at("yanked_reason"), "");
  EXPECT_TRUE(ft7->at("yanked").get<bool>());
  EXPECT_EQ(ft7->at("yanked_reason"), "broken build");
  EXPECT_EQ(find_result(*gems, "cuda13.0")->at("gates").value("FLAGOS_USE_FLAGGEMS_CPP", ""), "0");
  EXPECT_TRUE(contains(find_result(*cx, "cuda13.0")->at("headline").get<std::string>(), "driver"));
  bool npu = false;
  for (const auto& f : find_result(*asc, "ascend-cann9")->at("findings"))
    npu = npu || (f.at("kind") == "missing-library" && contains(f.at("library").get<std::string>(), "libtorch_npu.so"));
  EXPECT_TRUE(npu) << find_result(*asc, "ascend-cann9")->at("findings").dump(1);
  EXPECT_EQ(ft->at("sha256"), sha256_hex(read_file(samples_dir() + "/flagos/" + k_flagtree_061)));
  EXPECT_EQ(ft->at("project"), "flagtree");
  EXPECT_EQ(ft->at("version"), "0.6.1");

  const auto& s = report.at("summary");
  EXPECT_EQ(s.at("wheels_seen"), 6);
  EXPECT_EQ(s.at("new"), 6);
  EXPECT_EQ(s.at("checked"), 6);
  EXPECT_EQ(s.at("errors"), 0);
  EXPECT_EQ(s.at("verdicts"),
            json({{"compatible", 0}, {"degraded", 3}, {"incompatible", 1}, {"unknown", 2}, {"not-targeted", 6}}));
}

void expect_flagos_pins(const json& report) {
  const auto* tree = find_pin(report, "cuda13.0", "flagtree");
  ASSERT_NE(tree, nullptr);
  ASSERT_FALSE(tree->at("pick").is_null());
  EXPECT_EQ(tree->at("pick").at("version"), "0.6.1");
  EXPECT_EQ(tree->at("pick").at("filename"), k_flagtree_061);
  EXPECT_EQ(tree->at("pick").at("verdict"), "degraded");
  EXPECT_EQ(tree->at("pick").at("gates"), json({{"USE_TLE_DIST", "0"}}));
  ASSERT_EQ(tree->at("passed_over").size(), 1u) << tree->dump(1);
  EXPECT_EQ(tree->at("passed_over")[0].at("version"), "0.7.0");
  EXPECT_EQ(tree->at("passed_over")[0].at("reason"), "yanked: broken build");

  const auto* cx = find_pin(report, "cuda13.0", "flagcx");
  ASSERT_NE(cx, nullptr);
  ASSERT_FALSE(cx->at("pick").is_null());
  EXPECT_EQ(cx->at("pick").at("version"), "0.9.0+cu130");
  EXPECT_EQ(cx->at("pick").at("verdict"), "unknown");
  ASSERT_EQ(cx->at("passed_over").size(), 1u) << cx->dump(1);
  EXPECT_EQ(cx->at("passed_over")[0].at("filename"), k_cx_cu124);
  EXPECT_EQ(cx->at("passed_over")[0].at("reason").get<std::string>().rfind("wrong toolkit variant", 0), 0u)
      << cx->at("passed_over")[0].at("reason");

  const auto* gems = find_pin(report, "cuda13.0", "flag-gems-cpp-cuda");
  ASSERT_NE(gems, nullptr);
  ASSERT_FALSE(gems->at("pick").is_null());
  EXPECT_EQ(gems->at("pick").at("version"), "5.4.0");
  EXPECT_EQ(gems->at("pick").at("verdict"), "degraded");
  EXPECT_TRUE(gems->at("passed_over").empty());

  // Nothing of flagcx works on the Ascend image: the Ascend build needs torch_npu, the rest target x86_64.
  const auto* cx_asc = find_pin(report, "ascend-cann9", "flagcx");
  ASSERT_NE(cx_asc, nullptr);
  EXPECT_TRUE(cx_asc->at("pick").is_null());
  bool ascend_incompatible = false;
  for (const auto& p : cx_asc->at("passed_over"))
    ascend_incompatible = ascend_incompatible || (p.at("filename") == k_cx_ascend &&
                                                  p.at("reason").get<std::string>().rfind("incompatible: ", 0) == 0);
  EXPECT_TRUE(ascend_incompatible) << cx_asc->dump(1);
  EXPECT_EQ(report.at("pins").size(), 6u);
}

// The report.md row of one wheel: "| `FILE` ... |" with its cells.
std::string md_row(const std::string& md, const std::string& filename) {
  const auto at = md.find("| `" + filename + "`");
  if (at == std::string::npos) return "";
  return md.substr(at, md.find('\n', at) - at);
}

// Each test of the suite starts with no faults and an empty request log on the suite's server.
class ScanCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    isolate_environment();
    s_skip = missing_tools();
    if (s_skip.empty()) s_index = std::make_unique<SampleIndex>();
  }
  static void TearDownTestSuite() { s_index.reset(); }
  void SetUp() override {
    if (!s_skip.empty()) GTEST_SKIP() << s_skip;
    ASSERT_TRUE(fs::is_regular_file(binary_path())) << binary_path() << " is not built";
    server().clear_faults();
    server().clear_stats();
  }
  void TearDown() override {
    if (s_index) server().clear_faults();
  }
  static SampleIndex& index() { return *s_index; }
  static NetServer& server() { return s_index->server(); }

  TempDir m_work;
  static std::unique_ptr<SampleIndex> s_index;
  static std::string s_skip;
};
std::unique_ptr<SampleIndex> ScanCli::s_index;
std::string ScanCli::s_skip;

TEST_F(ScanCli, FullScanThroughFaultsReportsVerdictsAndPins) {
  const std::string gems_path = index().file_path(k_nvidia, "flag-gems-cpp-cuda", k_gems);
  const std::string tree_path = index().file_path(k_hosted, "flagtree", k_flagtree_061);
  server().add_faults(json::array({
      {{"path", "^/flagos-pypi-nvidia/simple/flagcx/$"}, {"fault", "status"}, {"code", 500}},
      {{"path", "^/flagos-pypi-hosted/simple/flagtree/$"}, {"fault", "status"}, {"code", 429}, {"retry_after", 1}},
      {{"path", "^" + gems_path + "$"}, {"fault", "reset"}},
      // flagtree 0.6.1: the first request (the suffix range that brings this small wheel whole) is cut in
      // half, then a slow one passes.
      {{"path", "^" + tree_path + "$"}, {"fault", "truncate"}},
      {{"path", "^" + tree_path + "$"}, {"fault", "slow"}, {"rate", 100000000}},
  }));
  const auto run1 = scan_run(m_work, "r1");
  const auto pins = m_work.file("pins.env");
  const auto sarif_file = m_work.file("scan.sarif");
  const auto r = wheelcheck("scan " + index().flagos_args() + " " + run1.args() + " --pins " + shell_quote(pins) +
                            " -o sarif=" + shell_quote(sarif_file));
  ASSERT_EQ(r.exit_code, 1) << describe(r);

  // Every fault was met, and wheelcheck got through them.
  std::string faults_body;
  ASSERT_EQ(http_request("GET", server().url("/_faults"), "", &faults_body), 200);
  for (const auto& rule : json::parse(faults_body)) EXPECT_EQ(rule.at("count"), 0) << rule.dump();
  std::map<std::string, std::vector<int>> statuses;
  bool truncated = false;
  for (const auto& q : server().stats()) {
    statuses[q.at("path").get<std::string>()].push_back(q.at("status").get<int>());
    if (q.at("path") == tree_path && q.at("status") != 0 && q.at("range").is_string() && q.at("range") != "bytes=0-0")
      truncated = truncated || q.at("bytes_sent").get<long>() < 6266;
  }
  EXPECT_EQ(statuses["/flagos-pypi-nvidia/simple/flagcx/"], (std::vector<int>{500, 200}));
  EXPECT_EQ(statuses["/flagos-pypi-hosted/simple/flagtree/"], (std::vector<int>{429, 200}));
  EXPECT_EQ(statuses[gems_path].at(0), 0) << "the reset request";
  EXPECT_GE(statuses[gems_path].size(), 2u);
  EXPECT_TRUE(truncated) << "no truncated answer for " << tree_path;

  const auto report = run1.report_json();
  expect_schema_valid(run1.report + "/report.json");
  EXPECT_EQ(report.at("schema"), "wheelcheck-scan/1");
  EXPECT_EQ(report.at("exit_code"), 1);
  EXPECT_EQ(report.at("shard"), json({{"index", 1}, {"count", 1}}));
  EXPECT_TRUE(report.at("since").is_null());
  EXPECT_EQ(report.at("projects"), json({"flagtree", "flag-gems-cpp-cuda", "flagcx"}));
  EXPECT_EQ(report.at("indexes").size(), 3u);
  expect_flagos_verdicts(report);
  expect_flagos_pins(report);
  EXPECT_TRUE(contains(read_file(pins), "FLAGTREE_VERSION_CUDA13_0='0.6.1'")) << read_file(pins);

  // The publisher check of each new wheel, once (not per image): the Ascend FlagCX needs libtorch_npu.so and
  // declares no torch-npu, in the report, its Markdown and HTML, and SARIF's run "wheelcheck/publisher/".
  const auto* ascend = find_wheel(report, k_cx_ascend);
  ASSERT_NE(ascend, nullptr);
  ASSERT_TRUE(ascend->contains("publisher")) << ascend->dump(1);
  EXPECT_EQ(ascend->at("publisher").at("status"), "errors") << ascend->at("publisher").dump(1);
  bool npu = false;
  for (const auto& f : ascend->at("publisher").at("findings"))
    npu = npu || (f.at("kind") == "undeclared-dependency" && f.at("library") == "torch-npu");
  EXPECT_TRUE(npu) << ascend->at("publisher").dump(1);
  // stdout: a publisher row under the wheel, its worst finding (the same line as the report's headline).
  EXPECT_TRUE(contains(ascend->at("publisher").at("headline").get<std::string>(), "needs torch-npu"))
      << ascend->at("publisher").dump(1);
  EXPECT_TRUE(contains(
      r.out, "    publisher        errors         " + ascend->at("publisher").at("headline").get<std::string>()))
      << r.out;
  for (const auto& w : report.at("wheels"))
    EXPECT_TRUE(!w.at("error").is_null() || w.contains("publisher")) << w.at("filename") << " has no publisher check";
  EXPECT_TRUE(contains(read_file(run1.report + "/report.md"), "### Publisher findings")) << "report.md";
  EXPECT_TRUE(contains(read_file(run1.report + "/report.html"), "id=\"publisher\"")) << "report.html";
  const auto sarif = load_json(sarif_file);
  std::size_t publisher_runs = 0, npu_results = 0;
  for (const auto& run : sarif.at("runs")) {
    if (run.at("automationDetails").at("id") != "wheelcheck/publisher/") continue;
    ++publisher_runs;
    for (const auto& res : run.at("results"))
      if (res.at("ruleId") == "undeclared-dependency" && res.at("properties").at("wheel") == k_cx_ascend &&
          contains(res.at("message").at("text").get<std::string>(), "libtorch_npu.so"))
        ++npu_results;
  }
  EXPECT_EQ(publisher_runs, 1u) << "one publisher run in the scan's SARIF";
  EXPECT_EQ(npu_results, 1u) << "the Ascend FlagCX's undeclared torch-npu, once (not per image)";

  // report.md: the wheels x images table, one row per wheel, and the pins table.
  const auto md = read_file(run1.report + "/report.md");
  EXPECT_TRUE(contains(md, "| Wheel | `cuda13.0` | `ascend-cann9` |")) << md;
  EXPECT_TRUE(contains(md, "| Image | `flagtree` | `flag-gems-cpp-cuda` | `flagcx` |")) << md;
  for (const auto& c : expected_cells()) {
    const auto row = md_row(md, c.wheel);
    ASSERT_FALSE(row.empty()) << c.wheel << " has no row in report.md";
    if (std::string(c.image) == "cuda13.0") {
      const auto first = row.find(c.targeted ? c.verdict : "not targeted");
      EXPECT_NE(first, std::string::npos) << row;
    }
  }
  EXPECT_TRUE(contains(md_row(md, k_cx_ascend), "not targeted | ❌ incompatible |")) << md_row(md, k_cx_ascend);
  EXPECT_TRUE(contains(md_row(md, k_flagtree_061), "degraded | ➖ not targeted |")) << md_row(md, k_flagtree_061);
  EXPECT_TRUE(contains(md_row(md, k_flagtree_070), "(yanked)")) << md_row(md, k_flagtree_070);
  EXPECT_TRUE(contains(md, "yanked: broken build"));

  // report.html, rendered by headless Chromium: one <details> in each cell of the matrix.
  const auto html = run1.report + "/report.html";
  ASSERT_TRUE(fs::is_regular_file(html));
  if (chromium().empty()) {
    std::cout << "[  INFO    ] chromium is absent: report.html not rendered\n";
    return;
  }
  const auto dom = run_chromium(m_work, "--dump-dom", html);
  ASSERT_EQ(dom.exit_code, 0) << dom.err.substr(0, 2000);
  const auto begin = dom.out.find("<table class=\"matrix\"");
  ASSERT_NE(begin, std::string::npos) << dom.out.substr(0, 2000);
  const auto table = dom.out.substr(begin, dom.out.find("</table>", begin) - begin);
  std::vector<std::string> cells;
  for (auto at = table.find("<td"); at != std::string::npos;) {
    const auto next = table.find("<td", at + 3);
    cells.push_back(table.substr(at, next == std::string::npos ? std::string::npos : next - at));
    at = next;
  }
  ASSERT_EQ(cells.size(), 12u) << "6 wheels x 2 images";
  for (const auto& cell : cells) {
    std::size_t n = 0;
    for (auto at = cell.find("<details"); at != std::string::npos; at = cell.find("<details", at + 1)) ++n;
    EXPECT_EQ(n, 1u) << cell.substr(0, 300);
  }
}

TEST_F(ScanCli, SecondScanWithTheSameStateFetchesNoWheel) {
  const auto run1 = scan_run(m_work, "r1", "cache", "state");
  ASSERT_EQ(wheelcheck("scan " + index().flagos_args() + " " + run1.args()).exit_code, 1);
  server().clear_stats();
  const auto run2 = scan_run(m_work, "r2", "cache", "state");
  const auto r = wheelcheck("scan " + index().flagos_args() + " " + run2.args());
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto report = run2.report_json();
  expect_schema_valid(run2.report + "/report.json");
  EXPECT_TRUE(report.at("wheels").empty()) << report.at("wheels").dump(1);
  EXPECT_EQ(report.at("summary").at("wheels_seen"), 6);
  EXPECT_EQ(report.at("summary").at("new"), 0);
  EXPECT_EQ(report.at("summary").at("checked"), 0);
  EXPECT_EQ(report.at("exit_code"), 0);
  // The pins still come from what the state remembers.
  const auto* tree = find_pin(report, "cuda13.0", "flagtree");
  ASSERT_NE(tree, nullptr);
  ASSERT_FALSE(tree->at("pick").is_null());
  EXPECT_EQ(tree->at("pick").at("version"), "0.6.1");

  // Only project pages were asked for: those that exist answered 304 to a conditional request, the
  // projects an index lacks 404. No wheel file was requested.
  const std::set<std::string> existing = {"/flagos-pypi-hosted/simple/flagtree/",
                                          "/flagos-pypi-nvidia/simple/flag-gems-cpp-cuda/",
                                          "/flagos-pypi-nvidia/simple/flagcx/", "/flagos-pypi-ascend/simple/flagcx/"};
  std::set<std::string> answered_304;
  const auto stats = server().stats();
  ASSERT_FALSE(stats.empty());
  for (const auto& q : stats) {
    const auto path = q.at("path").get<std::string>();
    EXPECT_FALSE(contains(path, "/files/")) << "a wheel was fetched: " << q.dump();
    EXPECT_TRUE(contains(path, "/simple/")) << q.dump();
    if (existing.count(path) != 0) {
      EXPECT_EQ(q.at("status"), 304) << q.dump();
      EXPECT_TRUE(q.at("if_none_match").is_string()) << q.dump();
      answered_304.insert(path);
    } else {
      EXPECT_EQ(q.at("status"), 404) << q.dump();
    }
  }
  EXPECT_EQ(answered_304, existing);
}

// A run that could not commit (its report could not be written: exit 2, the state's wheels as they were) leaves its
// results in the state's run record; the next run with the same options takes them instead of fetching and checking
// those wheels again (what a kill -9 mid-run leaves too: tests/fault's kill-9 case), reports the same new wheels, and
// commits; the one after finds nothing new.
TEST_F(ScanCli, ARunThatCouldNotCommitIsTakenUpWithoutFetchingItsWheelsAgain) {
  const auto ref = scan_run(m_work, "ref", "ref-cache");
  ASSERT_EQ(wheelcheck("scan " + index().flagos_args() + " " + ref.args()).exit_code, 1);
  const auto expected = wheel_names(ref.report_json());
  ASSERT_FALSE(expected.empty());

  const std::string state = m_work.file("state"), blocked = m_work.write("blocked", "a file where a folder goes");
  const std::string common = "scan " + index().flagos_args() + " -q --no-cache --state " + shell_quote(state);
  server().clear_stats();
  const auto failed = wheelcheck(common + " --report " + shell_quote(blocked + "/report"));
  ASSERT_EQ(failed.exit_code, 2) << describe(failed);
  std::size_t fetched = 0;
  for (const auto& q : server().stats()) fetched += contains(q.at("path").get<std::string>(), "/files/") ? 1 : 0;
  EXPECT_GT(fetched, 0U) << "the first run read the wheels";

  server().clear_stats();
  const std::string out = m_work.file("out");
  const auto taken = wheelcheck(common + " --report " + shell_quote(out));
  ASSERT_EQ(taken.exit_code, 1) << describe(taken);
  for (const auto& q : server().stats())
    EXPECT_FALSE(contains(q.at("path").get<std::string>(), "/files/")) << "fetched again: " << q.dump();
  const json report = load_json(out + "/report.json");
  EXPECT_EQ(wheel_names(report), expected) << "the same new wheels, as the killed run found them";
  auto normal = [](json j) {
    j.erase("generated_at");
    for (auto& w : j["wheels"]) w.erase("integrity");  // --no-cache here, a cache there: the same read
    return j;
  };
  EXPECT_EQ(normal(report)["wheels"], normal(ref.report_json())["wheels"]);

  const auto again = wheelcheck(common + " --report " + shell_quote(m_work.file("again")));
  ASSERT_EQ(again.exit_code, 0) << describe(again);
  EXPECT_TRUE(load_json(m_work.file("again") + "/report.json").at("wheels").empty()) << "committed by the second run";
}

// A state an older wheelcheck wrote (STATE/state.json, schema wheelcheck-scan-state/1) is read into state.db once: the
// wheels it remembers are not new again after the upgrade (a night of false alerts), and the old files are gone.
TEST_F(ScanCli, AStateJsonOfAnOlderWheelcheckIsReadOnce) {
  const auto run1 = scan_run(m_work, "r1", "cache", "new-state");
  ASSERT_EQ(wheelcheck("scan " + index().flagos_args() + " " + run1.args()).exit_code, 1);
  const std::string old = m_work.file("old-state");
  fs::create_directories(old);
  // The records as the older scan kept them: state.json's "wheels", FILE#SHA256 -> the record.
  const std::string py =
      "import json, sqlite3, sys\n"
      "con = sqlite3.connect(sys.argv[1] + '/state.db')\n"
      "wheels = {k: json.loads(r) for k, r in con.execute('SELECT key, record FROM wheels')}\n"
      "json.dump({'schema': 'wheelcheck-scan-state/1', 'pages': {}, 'wheels': wheels}, open(sys.argv[2] + "
      "'/state.json', 'w'))\n";
  const std::string script = m_work.write("old.py", py);
  const auto made =
      test::run("python3 " + shell_quote(script) + " " + shell_quote(run1.state) + " " + shell_quote(old));
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  const auto run2 = scan_run(m_work, "r2", "cache", "old-state");
  const auto r = wheelcheck("scan " + index().flagos_args() + " " + run2.args());
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(run2.report_json().at("wheels").empty()) << "every wheel the old state remembers is not new";
  EXPECT_TRUE(contains(r.out + r.err, "was read from its state.json")) << r.out << r.err;
  EXPECT_TRUE(fs::exists(old + "/state.db"));
  EXPECT_FALSE(fs::exists(old + "/state.json")) << "read once";
}

TEST_F(ScanCli, NewWheelBetweenScansIsTheOnlyOneReported) {
  SampleIndex own;  // this test changes its index
  const auto run1 = scan_run(m_work, "r1", "cache", "state");
  ASSERT_EQ(wheelcheck("scan " + own.flagos_args() + " " + run1.args()).exit_code, 1);

  // flag_gems_cpp_cuda 5.5.0: a re-pack of 5.4.0 with the version changed, uploaded between the scans.
  const std::string added = "flag_gems_cpp_cuda-5.5.0-cp312-cp312-linux_x86_64.whl";
  const auto folder = own.root() + "/" + k_nvidia + "/flag-gems-cpp-cuda/";
  const auto py =
      "import sys; sys.path.insert(0, sys.argv[1]); import sample_index as s; "
      "open(sys.argv[3], 'wb').write(s.repack(sys.argv[2], version='5.5.0'))";
  const auto made = run("python3 -B -c " + shell_quote(py) + " " + shell_quote(source_dir() + "/tests/tools") + " " +
                        shell_quote(folder + k_gems) + " " + shell_quote(folder + added));
  ASSERT_EQ(made.exit_code, 0) << made.err;

  own.server().clear_stats();
  const auto run2 = scan_run(m_work, "r2", "cache", "state");
  const auto r = wheelcheck("scan " + own.flagos_args() + " " + run2.args());
  ASSERT_EQ(r.exit_code, 0) << describe(r);  // the new wheel is degraded on cuda13.0: nothing new incompatible
  const auto report = run2.report_json();
  expect_schema_valid(run2.report + "/report.json");
  ASSERT_EQ(wheel_names(report), std::set<std::string>{added});
  const auto& w = report.at("wheels")[0];
  EXPECT_TRUE(w.at("new").get<bool>());
  EXPECT_EQ(w.at("version"), "5.5.0");
  EXPECT_EQ(w.at("project"), "flag-gems-cpp-cuda");
  EXPECT_EQ(w.at("sha256"), sha256_hex(read_file(folder + added)));
  ASSERT_NE(find_result(w, "cuda13.0"), nullptr);
  EXPECT_EQ(find_result(w, "cuda13.0")->at("verdict"), "degraded");
  EXPECT_FALSE(find_result(w, "ascend-cann9")->at("targeted").get<bool>());
  EXPECT_EQ(report.at("summary").at("wheels_seen"), 7);
  EXPECT_EQ(report.at("summary").at("new"), 1);
  const auto* pin = find_pin(report, "cuda13.0", "flag-gems-cpp-cuda");
  ASSERT_NE(pin, nullptr);
  ASSERT_FALSE(pin->at("pick").is_null());
  EXPECT_EQ(pin->at("pick").at("version"), "5.5.0");

  // Only the new wheel's file was fetched.
  for (const auto& q : own.server().stats()) {
    const auto path = q.at("path").get<std::string>();
    if (contains(path, "/files/")) {
      EXPECT_EQ(path, own.file_path(k_nvidia, "flag-gems-cpp-cuda", added));
    }
  }
}

TEST_F(ScanCli, WrongHashWithVerifyFullIsAnErrorAndCachesNothing) {
  const auto tree_path = index().file_path(k_hosted, "flagtree", k_flagtree_061);
  server().add_faults(json{{"path", "^" + tree_path + "$"}, {"fault", "wrong_hash"}, {"count", -1}});
  const auto run1 = scan_run(m_work, "r1");
  const auto r = wheelcheck("scan " + index().flagos_args() + " --verify full " + run1.args());
  ASSERT_EQ(r.exit_code, 2) << describe(r);
  const auto report = run1.report_json();
  expect_schema_valid(run1.report + "/report.json");
  EXPECT_EQ(report.at("exit_code"), 2);
  EXPECT_EQ(report.at("summary").at("errors"), 1);
  EXPECT_EQ(report.at("summary").at("checked"), 5);
  const auto* bad = find_wheel(report, k_flagtree_061);
  ASSERT_NE(bad, nullptr);
  ASSERT_TRUE(bad->at("error").is_string());
  EXPECT_TRUE(contains(bad->at("error").get<std::string>(), "sha256")) << bad->at("error");
  EXPECT_TRUE(bad->at("results").empty());
  for (const auto& w : report.at("wheels")) {
    if (w.at("filename") == k_flagtree_061) continue;
    EXPECT_TRUE(w.at("error").is_null()) << w.dump();
    EXPECT_EQ(w.at("integrity"), "full") << w.at("filename");
  }

  // Nothing of the bad download stays in the cache: no download, no profile under the index's sha256.
  const auto true_sha = sha256_hex(read_file(index().local(k_hosted, "flagtree", k_flagtree_061)));
  EXPECT_TRUE(find_files(run1.cache + "/downloads", "").empty());
  std::set<std::string> profiled;
  for (const auto& f : find_files(run1.cache + "/profiles", "")) {
    const auto name = fs::path(f).filename().string();
    profiled.insert(name.substr(0, name.find('.')));
  }
  EXPECT_EQ(profiled.count(true_sha), 0u);
  EXPECT_EQ(profiled.size(), 5u) << "one profile per wheel checked";

  // Without the fault, a fresh scan over the same cache checks it fine.
  server().clear_faults();
  const auto run2 = scan_run(m_work, "r2");
  const auto r2 = wheelcheck("scan " + index().flagos_args() + " --verify full " + run2.args());
  ASSERT_EQ(r2.exit_code, 1) << describe(r2);
  const auto report2 = run2.report_json();
  const auto* good = find_wheel(report2, k_flagtree_061);
  ASSERT_NE(good, nullptr);
  EXPECT_TRUE(good->at("error").is_null()) << good->at("error");
  EXPECT_EQ(good->at("integrity"), "full");
  ASSERT_NE(find_result(*good, "cuda13.0"), nullptr);
  EXPECT_EQ(find_result(*good, "cuda13.0")->at("verdict"), "degraded");
  EXPECT_EQ(report2.at("summary").at("errors"), 0);
}

// A wheel that could not be fetched (a transfer that did not match the index's sha256, a server that
// answered 503 through every retry) is not "seen": the next scan with the same state tries it again, and
// the pin does not stay "nothing usable" once the server is well.
TEST_F(ScanCli, FetchErrorIsRetriedByTheNextScan) {
  const auto tree_path = index().file_path(k_hosted, "flagtree", k_flagtree_061);
  const std::vector<json> faults = {
      {{"path", "^" + tree_path + "$"}, {"fault", "wrong_hash"}, {"count", -1}},
      {{"path", "^" + tree_path + "$"}, {"fault", "status"}, {"code", 503}, {"count", -1}},
  };
  for (const auto& fault : faults) {
    SCOPED_TRACE(fault.dump());
    const auto state = "state-" + fault.at("fault").get<std::string>();
    server().clear_faults();
    server().add_faults(fault);
    // Each fault gets its own profile cache: a profile cached by the other case would (rightly) spare the fetch.
    const auto run1 = scan_run(m_work, state + "-r1", state + "-cache", state);
    const auto tree = " --index " + shell_quote(index().index_url(k_hosted)) + " --project flagtree --image cuda13.0";
    ASSERT_EQ(wheelcheck("scan" + tree + " --verify full " + run1.args()).exit_code, 2);
    ASSERT_NE(find_wheel(run1.report_json(), k_flagtree_061), nullptr);
    EXPECT_TRUE(find_wheel(run1.report_json(), k_flagtree_061)->at("error").is_string());
    server().clear_faults();
    const auto run2 = scan_run(m_work, state + "-r2", state + "-cache", state);
    const auto r = wheelcheck("scan" + tree + " --verify full " + run2.args());
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    const auto report = run2.report_json();
    EXPECT_EQ(wheel_names(report), std::set<std::string>{k_flagtree_061});
    const auto* w = find_wheel(report, k_flagtree_061);
    if (w != nullptr) {
      EXPECT_TRUE(w->at("error").is_null()) << w->at("error");
    }
    const auto* pin = find_pin(report, "cuda13.0", "flagtree");
    ASSERT_NE(pin, nullptr);
    EXPECT_FALSE(pin->at("pick").is_null()) << pin->dump(1);
  }
}

// Shards check disjoint shares of the new wheels, each keeping its results in its own --state; the merge of their
// state folders writes the report, pins and state the unsharded scan writes (tests/jobs/shards.py covers N = 1,
// 2, 3, 7, a second night, a killed and a missing shard, and the CI samples).
TEST_F(ScanCli, ShardsAreDisjointAndMergeEqualsTheUnshardedRun) {
  const auto whole = scan_run(m_work, "whole");
  ASSERT_EQ(wheelcheck("scan " + index().flagos_args() + " " + whole.args() + " --pins " +
                       shell_quote(m_work.file("whole.env")))
                .exit_code,
            1);
  std::vector<json> shards;
  std::string dirs;
  for (const auto* s : {"1/2", "2/2"}) {
    const auto part = scan_run(m_work, std::string("shard-") + s[0]);
    const auto r = wheelcheck("scan " + index().flagos_args() + " --shard " + s + " " + part.args());
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << describe(r);
    shards.push_back(part.report_json());
    dirs += " " + shell_quote(part.state);
    expect_schema_valid(part.report + "/report.json");
    EXPECT_EQ(shards.back().at("exit_code"), r.exit_code);
    EXPECT_EQ(shards.back().at("shard"), json({{"index", s[0] - '0'}, {"count", 2}}));
  }
  const auto a = wheel_names(shards[0]), b = wheel_names(shards[1]);
  for (const auto& n : a) EXPECT_EQ(b.count(n), 0u) << n << " is in both shards";
  EXPECT_FALSE(a.empty());
  EXPECT_FALSE(b.empty());

  // A shard alone is no merge: the other is missing, and nothing is written.
  const auto lone = wheelcheck(
      "scan -q " + index().flagos_args() + " --merge " + shell_quote(m_work.file("shard-1-state")) + " --state " +
      shell_quote(m_work.file("lone-state")) + " --report " + shell_quote(m_work.file("lone")));
  EXPECT_EQ(lone.exit_code, 2) << describe(lone);
  EXPECT_TRUE(contains(lone.err, "shard 2 of 2 is missing")) << lone.err;
  EXPECT_FALSE(fs::exists(m_work.file("lone")));

  const auto merged_dir = m_work.file("merged");
  const auto r = wheelcheck("scan -q " + index().flagos_args() + " --merge" + dirs + " --state " +
                            shell_quote(m_work.file("merged-state")) + " --report " + shell_quote(merged_dir) +
                            " --pins " + shell_quote(m_work.file("merged.env")));
  ASSERT_EQ(r.exit_code, 1) << describe(r);
  auto merged = load_json(merged_dir + "/report.json");
  expect_schema_valid(merged_dir + "/report.json");
  auto unsharded = whole.report_json();
  std::set<std::string> both = a;
  both.insert(b.begin(), b.end());
  EXPECT_EQ(both, wheel_names(unsharded));
  EXPECT_EQ(merged.at("shard"), json({{"index", 0}, {"count", 2}, {"merged", true}}));
  expect_flagos_verdicts(merged);
  for (auto* j : {&merged, &unsharded}) {
    j->erase("generated_at");
    j->erase("shard");
  }
  EXPECT_EQ(merged, unsharded);
  // The pins file, but for its first line (the time it was generated).
  const auto tail = [](const std::string& text) { return text.substr(text.find('\n') + 1); };
  EXPECT_EQ(tail(read_file(m_work.file("merged.env"))), tail(read_file(m_work.file("whole.env"))));
  EXPECT_EQ(read_file(m_work.file("merged-state") + "/shard.json"), read_file(whole.state + "/shard.json"));
}

TEST_F(ScanCli, PinsFileIsShellASetupScriptSources) {
  const auto run1 = scan_run(m_work, "r1");
  const auto pins = m_work.file("version-pins.env");
  ASSERT_EQ(wheelcheck("scan " + index().flagos_args() + " " + run1.args() + " --pins " + shell_quote(pins)).exit_code,
            1);
  const auto sourced = run("bash -c " + shell_quote("set -eu; source " + shell_quote(pins) +
                                                    "; echo \"$FLAGTREE_VERSION_CUDA13_0\"; "
                                                    "echo \"$FLAGCX_VERSION_CUDA13_0\"; "
                                                    "echo \"$FLAGTREE_GATES_CUDA13_0\"; "
                                                    "echo \"$FLAG_GEMS_CPP_CUDA_VERSION_CUDA13_0\""));
  ASSERT_EQ(sourced.exit_code, 0) << sourced.err << read_file(pins);
  EXPECT_EQ(sourced.out, "0.6.1\n0.9.0+cu130\nUSE_TLE_DIST=0\n5.4.0\n") << read_file(pins);
  EXPECT_TRUE(sourced.err.empty()) << sourced.err;
}

// The files a scan writes are its typed report's renderings: report.json read back by the one reader
// (scan::report_from_json) and written again is the same bytes, and the Markdown, the HTML and the pins of the
// report read back are the files the scan wrote.
TEST_F(ScanCli, ReportFilesAreTheTypedReportsRenderings) {
  const auto run1 = scan_run(m_work, "r1");
  const auto pins = m_work.file("pins.env");
  ASSERT_EQ(wheelcheck("scan " + index().flagos_args() + " " + run1.args() + " --pins " + shell_quote(pins)).exit_code,
            1);
  const std::string written = read_file(run1.report + "/report.json");
  const scan::Report back = scan::report_from_json(nlohmann::ordered_json::parse(written));
  EXPECT_EQ(back.exit_code(), 1);
  EXPECT_FALSE(back.wheels.empty());
  EXPECT_FALSE(back.pins.empty());
  EXPECT_EQ(output::dump(scan::to_json(back)), written);
  EXPECT_EQ(scan::report_markdown(back), read_file(run1.report + "/report.md"));
  EXPECT_EQ(scan::report_html(back), read_file(run1.report + "/report.html"));
  EXPECT_EQ(scan::pins_env(back), read_file(pins));
}

// The message a scan leaves for people: stdout (the summary and warnings) and stderr (errors).
std::string messages(const CommandResult& r) {
  return r.out + r.err;
}

// A PEP 691 page that is not JSON (200, the JSON content type, random bytes). The bytes differ on every
// answer, so a few scans try a few of them (some make a parser's message that is not UTF-8).
TEST_F(ScanCli, GarbageJsonIndexExitsTwoWithAMessage) {
  server().add_faults(json{{"path", "^/flagos-pypi-hosted/simple/"}, {"fault", "garbage"}, {"count", -1}});
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE("scan " + std::to_string(i + 1));
    const auto run1 = scan_run(m_work, "r" + std::to_string(i));
    const auto r = wheelcheck("scan --index " + shell_quote(index().index_url(k_hosted)) +
                              " --project flagtree --image cuda13.0 " + run1.args());
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(contains(messages(r), "flagtree")) << describe(r);
    EXPECT_FALSE(contains(messages(r), "internal error")) << describe(r);
    if (r.exit_code == 2) {
      const auto report = run1.report_json();
      EXPECT_EQ(report.at("exit_code"), 2);
      EXPECT_FALSE(report.at("warnings").empty());
    }
  }
}

// A PEP 503 page of random bytes (200, text/html): not an empty project.
TEST_F(ScanCli, GarbageHtmlIndexExitsTwoWithAMessage) {
  server().add_faults(
      json{{"path", "^/flagos-pypi-hosted/simple/"}, {"fault", "garbage"}, {"type", "html"}, {"count", -1}});
  const auto run1 = scan_run(m_work, "r1");
  const auto r = wheelcheck("scan --index " + shell_quote(index().index_url(k_hosted)) +
                            " --project flagtree --image cuda13.0 " + run1.args());
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(contains(messages(r), "flagtree")) << describe(r);
}

TEST_F(ScanCli, ProjectsOnNoIndexExitTwoWithAMessage) {
  const auto run1 = scan_run(m_work, "r1");
  // An index that does not exist (404 for every page), and misspelt projects on a real one.
  const auto r = wheelcheck("scan --index " + shell_quote(server().url("/no-such-index/simple/")) + " --index " +
                            shell_quote(index().index_url(k_hosted)) +
                            " --project flagtre --project flagcxx --image cuda13.0 " + run1.args());
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  for (const auto* project : {"flagtre", "flagcxx"}) {
    const auto line = std::string("project ") + project + " is on none of the indexes";
    EXPECT_TRUE(contains(messages(r), line)) << describe(r);
    const auto report = run1.report_json();
    bool warned = false;
    for (const auto& w : report.at("warnings")) warned = warned || contains(w.get<std::string>(), line);
    EXPECT_TRUE(warned) << report.at("warnings");
    EXPECT_EQ(report.at("exit_code"), 2);
  }
  for (const auto& q : server().stats()) EXPECT_FALSE(contains(q.at("path").get<std::string>(), "/files/"));
}

TEST_F(ScanCli, SinceInTheFutureFindsNothingNew) {
  const auto run1 = scan_run(m_work, "r1");
  const auto r = wheelcheck("scan " + index().flagos_args() + " --since 2999-01-01 --json " + run1.args());
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto report = json::parse(r.out);
  EXPECT_EQ(report, run1.report_json());
  expect_schema_valid(run1.report + "/report.json");
  EXPECT_EQ(report.at("since").get<std::string>().rfind("2999-01-01", 0), 0u);
  EXPECT_EQ(report.at("summary").at("wheels_seen"), 6);
  EXPECT_EQ(report.at("summary").at("new"), 0);
  EXPECT_EQ(report.at("summary").at("checked"), 0);
  for (const auto& w : report.at("wheels")) EXPECT_FALSE(w.at("new").get<bool>()) << w.dump();
  for (const auto& q : server().stats()) EXPECT_FALSE(contains(q.at("path").get<std::string>(), "/files/"));
}

// Without --image: every db image that each wheel's tags target, never a packaging target.
TEST_F(ScanCli, DefaultImagesAreThoseTheTagsTarget) {
  const auto run1 = scan_run(m_work, "r1");
  const auto args = "--index " + shell_quote(index().index_url(k_hosted)) + " --index " +
                    shell_quote(index().index_url(k_nvidia)) + " --index " + shell_quote(index().index_url(k_ascend)) +
                    " --project flagtree --project flag-gems-cpp-cuda --project flagcx ";
  const auto r = wheelcheck("scan " + args + run1.args());
  ASSERT_EQ(r.exit_code, 1) << describe(r);
  const auto report = run1.report_json();
  expect_schema_valid(run1.report + "/report.json");
  std::set<std::string> images;
  for (const auto& i : report.at("images")) images.insert(i.get<std::string>());
  EXPECT_EQ(images.count("cuda13.0"), 1u);
  EXPECT_EQ(images.count("ascend-cann9"), 1u);
  for (const auto& i : images) {
    EXPECT_NE(i.rfind("manylinux", 0), 0u) << i;
    EXPECT_NE(i.rfind("musllinux", 0), 0u) << i;
  }
  EXPECT_EQ(images.count("musa5.1"), 0u) << "musa5.1 has Python 3.10: no cp312 wheel targets it";
  // Every wheel has a result on every image the report shows: the images a wheel is not for are shown as
  // not targeted (never as a missing result) and counted so.
  int not_targeted = 0;
  for (const auto& w : report.at("wheels")) {
    EXPECT_EQ(w.at("results").size(), images.size()) << w.at("filename");
    for (const auto& res : w.at("results")) {
      EXPECT_EQ(images.count(res.at("image").get<std::string>()), 1u);
      if (!res.at("targeted").get<bool>()) {
        ++not_targeted;
        EXPECT_EQ(res.at("headline").get<std::string>().rfind("not targeted: ", 0), 0u) << res.dump();
      }
    }
  }
  EXPECT_GT(not_targeted, 0);
  EXPECT_EQ(report.at("summary").at("verdicts").at("not-targeted"), not_targeted);
  const auto* asc = find_wheel(report, k_cx_ascend);
  ASSERT_NE(asc, nullptr);
  ASSERT_NE(find_result(*asc, "ascend-cann9"), nullptr);
  EXPECT_TRUE(find_result(*asc, "ascend-cann9")->at("targeted").get<bool>());
  EXPECT_EQ(find_result(*asc, "ascend-cann9")->at("verdict"), "incompatible");
  ASSERT_NE(find_result(*asc, "cuda13.0"), nullptr);
  EXPECT_FALSE(find_result(*asc, "cuda13.0")->at("targeted").get<bool>()) << "an aarch64 wheel on an x86_64 image";
  const auto* tree = find_wheel(report, k_flagtree_061);
  ASSERT_NE(tree, nullptr);
  ASSERT_NE(find_result(*tree, "cuda13.0"), nullptr);
  EXPECT_EQ(find_result(*tree, "cuda13.0")->at("verdict"), "degraded");
  ASSERT_NE(find_result(*tree, "ascend-cann9"), nullptr);
  EXPECT_FALSE(find_result(*tree, "ascend-cann9")->at("targeted").get<bool>());
  // The Markdown report says "not targeted" for such a cell, never "no result".
  const std::string md = read_file(run1.report + "/report.md");
  EXPECT_EQ(md.find("no result"), std::string::npos) << md;
  // Stdout prints what was checked, a row each; the images a wheel is not for are one line, counted.
  EXPECT_TRUE(contains(r.out, "scan: 6 wheels listed, 6 new, 6 checked, 0 errors\n")) << r.out;
  std::size_t rows = 0, skipped_lines = 0;
  for (const auto& w : report.at("wheels")) {
    std::size_t skipped = 0;
    std::vector<std::string> names;
    for (const auto& res : w.at("results")) {
      if (!res.at("targeted").get<bool>()) {
        ++skipped;
        names.push_back(res.at("image").get<std::string>());
      }
    }
    if (skipped == 0) continue;
    std::string line = "    not targeted on " + std::to_string(skipped) + (skipped == 1 ? " image" : " images");
    if (skipped <= 3) {
      line += ": ";
      for (std::size_t i = 0; i < names.size(); ++i) line += (i ? ", " : "") + names[i];
    }
    line += " (the report says why)\n";
    const auto at = r.out.find("  " + w.at("filename").get<std::string>() + "\n");
    ASSERT_NE(at, std::string::npos) << r.out;
    EXPECT_NE(r.out.find(line, at), std::string::npos) << line << r.out;
    ++skipped_lines;
  }
  std::stringstream lines(r.out);
  for (std::string l; std::getline(lines, l);) {
    if (contains(l, "not targeted:") || contains(l, " not targeted  ")) ++rows;
  }
  EXPECT_EQ(rows, 0u) << "no row for an image a wheel is not for:\n" << r.out;
  EXPECT_GT(skipped_lines, 0u);
}

// One wheel listed, one error: the summary line's nouns agree with their counts.
TEST_F(ScanCli, SummaryLineSaysOneWheelAndOneError) {
  const auto run1 = scan_run(m_work, "one");
  const auto r = wheelcheck("scan --index " + shell_quote(index().index_url(k_nvidia)) +
                            " --project flag-gems-cpp-cuda --image cuda13.0 " + run1.args());
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "scan: 1 wheel listed, 1 new, 1 checked, 0 errors\n")) << r.out;
  server().add_faults(json{{"path", "^" + index().file_path(k_nvidia, "flag-gems-cpp-cuda", k_gems) + "$"},
                           {"fault", "status"},
                           {"code", 404},
                           {"count", -1}});
  const auto run2 = scan_run(m_work, "one-error", "cache-one-error");
  const auto e = wheelcheck("scan --index " + shell_quote(index().index_url(k_nvidia)) +
                            " --project flag-gems-cpp-cuda --image cuda13.0 " + run2.args());
  EXPECT_EQ(e.exit_code, 2) << describe(e);
  EXPECT_TRUE(contains(e.out, "scan: 1 wheel listed, 1 new, 0 checked, 1 error\n")) << e.out;
}

// ---- wheels given as URLs ------------------------------------------------------------------------------

struct IndexedWheel {
  const char* index;
  const char* project;
  const char* filename;
};
const std::vector<IndexedWheel>& indexed_wheels() {
  static const std::vector<IndexedWheel> wheels = {
      {k_hosted, "flagtree", k_flagtree_061},   {k_hosted, "flagtree", k_flagtree_070},
      {k_nvidia, "flag-gems-cpp-cuda", k_gems}, {k_nvidia, "flagcx", k_cx_cu130},
      {k_nvidia, "flagcx", k_cx_cu124},         {k_ascend, "flagcx", k_cx_ascend},
  };
  return wheels;
}

using FindingKey = std::tuple<std::string, std::string, std::string, std::string>;
std::vector<FindingKey> finding_keys(const json& verdict) {
  std::vector<FindingKey> out;
  for (const auto& f : verdict.at("findings"))
    out.emplace_back(f.at("kind").get<std::string>(), f.at("member").get<std::string>(),
                     f.at("library").get<std::string>(), f.at("symbol").get<std::string>());
  return out;
}
std::map<std::string, std::string> route_gates(const json& verdict) {
  std::map<std::string, std::string> out;
  for (const auto& r : verdict.at("routes"))
    for (const auto& [k, v] : r.at("gates").items()) out[k] = v.get<std::string>();
  return out;
}
std::map<std::string, json> member_elves(const json& profile) {
  std::map<std::string, json> out;
  for (const auto& m : profile.at("members")) out[m.at("path").get<std::string>()] = m.value("elf", json());
  return out;
}

class RemoteCli : public ScanCli {
 protected:
  // A fresh cache folder per command, so that nothing is answered from an earlier command's profile.
  std::string cache() { return m_work.file("cache-" + std::to_string(++m_caches)); }
  std::string cache_arg() { return " --cache-dir " + shell_quote(cache()); }
  // A remote inspect read in full: integrity full, RECORD verified, the same members as the local file.
  void expect_full_like_local(const IndexedWheel& iw, const CommandResult& r) {
    const auto p = json::parse(r.out);
    EXPECT_EQ(p.at("integrity"), "full");
    EXPECT_TRUE(p.at("record").at("verified").get<bool>());
    const auto local = wheelcheck("inspect " + shell_quote(index().local(iw.index, iw.project, iw.filename)) +
                                  " --json -q" + cache_arg());
    EXPECT_EQ(member_elves(p), member_elves(json::parse(local.out)));
  }
  int m_caches = 0;
};

TEST_F(RemoteCli, UrlGivesTheSameVerdictAsTheLocalFile) {
  for (const auto& iw : indexed_wheels()) {
    const bool arm = contains(iw.filename, "aarch64");
    std::vector<std::string> images = {"cuda13.0"};
    if (arm) images.emplace_back("ascend-cann9");
    for (const auto& image : images) {
      SCOPED_TRACE(std::string(iw.filename) + " on " + image);
      const auto url = index().file_url(iw.index, iw.project, iw.filename);
      const auto remote = wheelcheck(shell_quote(url) + " --image " + image + " --json -q" + cache_arg());
      const auto local = wheelcheck(shell_quote(index().local(iw.index, iw.project, iw.filename)) + " --image " +
                                    image + " --json -q" + cache_arg());
      ASSERT_EQ(remote.exit_code, local.exit_code) << describe(remote) << describe(local);
      EXPECT_TRUE(remote.exit_code == 1 || remote.exit_code == 3 || remote.exit_code == 4) << describe(remote);
      const auto rv = json::parse(remote.out), lv = json::parse(local.out);
      EXPECT_EQ(rv.at("verdict"), lv.at("verdict"));
      EXPECT_EQ(finding_keys(rv), finding_keys(lv));
      EXPECT_EQ(route_gates(rv), route_gates(lv));
      EXPECT_EQ(rv.at("wheel").at("filename"), iw.filename);
    }
  }
  // The verdicts themselves, as the samples are known to be.
  const auto v = [&](const IndexedWheel& iw, const std::string& image) {
    const auto r = wheelcheck(shell_quote(index().file_url(iw.index, iw.project, iw.filename)) + " --image " + image +
                              " --json -q" + cache_arg());
    return json::parse(r.out).at("verdict").get<std::string>();
  };
  EXPECT_EQ(v(indexed_wheels()[0], "cuda13.0"), "degraded");
  EXPECT_EQ(v(indexed_wheels()[2], "cuda13.0"), "degraded");
  EXPECT_EQ(v(indexed_wheels()[3], "cuda13.0"), "unknown");
  EXPECT_EQ(v(indexed_wheels()[5], "ascend-cann9"), "incompatible");
}

// The publisher check of a URL (read headers-only) says what it says of the local file: everything it judges is in
// the ELF headers and tables, METADATA and WHEEL.
TEST_F(RemoteCli, LintOfAUrlGivesTheFindingsOfTheLocalFile) {
  for (const auto& iw : indexed_wheels()) {
    SCOPED_TRACE(iw.filename);
    const auto url = index().file_url(iw.index, iw.project, iw.filename);
    const auto remote = wheelcheck("lint " + shell_quote(url) + " --json -q --no-config" + cache_arg());
    const auto local = wheelcheck("lint " + shell_quote(index().local(iw.index, iw.project, iw.filename)) +
                                  " --json -q --no-config" + cache_arg());
    ASSERT_EQ(remote.exit_code, local.exit_code) << describe(remote) << describe(local);
    const auto rw = json::parse(remote.out).at("wheels").at(0), lw = json::parse(local.out).at("wheels").at(0);
    EXPECT_EQ(rw.at("integrity"), "headers-only");
    EXPECT_EQ(rw.at("source"), url.substr(0, url.find('#')));  // the fragment (#sha256=) is not the source
    EXPECT_EQ(rw.at("findings"), lw.at("findings"));
    EXPECT_EQ(rw.at("claims"), lw.at("claims"));
  }
}

TEST_F(RemoteCli, InspectUrlReadsHeadersOnlyAndMatchesTheLocalProfile) {
  for (const auto& iw : indexed_wheels()) {
    SCOPED_TRACE(iw.filename);
    server().clear_stats();
    const auto url = index().file_url(iw.index, iw.project, iw.filename);
    const auto local_path = index().local(iw.index, iw.project, iw.filename);
    const auto remote = wheelcheck("inspect " + shell_quote(url) + " --json -q" + cache_arg());
    ASSERT_EQ(remote.exit_code, 0) << describe(remote);
    const auto local = wheelcheck("inspect " + shell_quote(local_path) + " --json -q" + cache_arg());
    ASSERT_EQ(local.exit_code, 0) << describe(local);
    const auto rp = json::parse(remote.out), lp = json::parse(local.out);
    EXPECT_EQ(rp.at("integrity"), "headers-only");
    EXPECT_EQ(lp.at("integrity"), "full");
    EXPECT_EQ(rp.at("wheel"), lp.at("wheel"));
    EXPECT_EQ(rp.at("member_count"), lp.at("member_count"));
    const auto re = member_elves(rp), le = member_elves(lp);
    EXPECT_EQ(re, le);
    std::size_t elves = 0;
    for (const auto& [path, elf] : re) elves += elf.is_null() ? 0 : 1;
    EXPECT_GE(elves, 2u) << "each sample has native members";

    // What the server sent for the wheel: ranged reads only, never more than the file once over.
    const auto size = static_cast<long>(fs::file_size(local_path));
    const auto path = index().file_path(iw.index, iw.project, iw.filename);
    long sent = 0;
    std::size_t requests = 0;
    for (const auto& q : server().stats()) {
      if (q.at("path") != path) continue;
      ++requests;
      sent += q.at("bytes_sent").get<long>();
      EXPECT_TRUE(q.at("range").is_string()) << q.dump();
      EXPECT_EQ(q.at("status"), 206) << q.dump();
    }
    EXPECT_GE(requests, 1u);
    EXPECT_GT(sent, 0);
    EXPECT_LE(sent, size + 64) << "read more than the whole file";
    RecordProperty(std::string("bytes_sent:") + iw.filename, std::to_string(sent) + " of " + std::to_string(size));
    std::cout << "[  BYTES   ] " << iw.filename << ": " << sent << " of " << size << " bytes in " << requests
              << " requests\n";
  }
}

TEST_F(RemoteCli, VerifyFullGivesIntegrityFull) {
  const auto& iw = indexed_wheels()[2];
  const auto url = index().file_url(iw.index, iw.project, iw.filename);
  const auto r = wheelcheck("inspect " + shell_quote(url) + " --verify full --json -q" + cache_arg());
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  expect_full_like_local(iw, r);

  // And a wrong #sha256= fragment is refused.
  const auto bad_url = url.substr(0, url.find('#')) + "#sha256=" + std::string(64, '0');
  const auto bad = wheelcheck("inspect " + shell_quote(bad_url) + " --verify full --json -q" + cache_arg());
  EXPECT_EQ(bad.exit_code, 2) << describe(bad);
}

TEST_F(RemoteCli, NoRangesFallsBackToAFullDownload) {
  const auto& iw = indexed_wheels()[0];
  const auto path = index().file_path(iw.index, iw.project, iw.filename);
  server().add_faults(json{{"path", "^" + path + "$"}, {"fault", "no_ranges"}, {"count", -1}});
  const auto url = index().file_url(iw.index, iw.project, iw.filename);
  const auto r = wheelcheck("inspect " + shell_quote(url) + " --json -q" + cache_arg());
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  expect_full_like_local(iw, r);
  bool whole = false;
  for (const auto& q : server().stats())
    if (q.at("path") == path && q.at("status") == 200) whole = true;
  EXPECT_TRUE(whole) << "no full (200) answer for " << path;

  // The verdict through the fallback is the local one.
  const auto check = wheelcheck(shell_quote(url) + " --image cuda13.0 --json -q" + cache_arg());
  EXPECT_EQ(check.exit_code, 3) << describe(check);
  EXPECT_EQ(json::parse(check.out).at("verdict"), "degraded");
}

// A wheel of some megabytes: headers-only reads a small part of it over ranges, and says the same.
TEST_F(RemoteCli, LargeWheelIsReadInRanges) {
  if (!have_program("gcc")) GTEST_SKIP() << "gcc is not on PATH (the wheel's native member is built with it)";
  TempDir root;
  std::string error;
  const auto lib = build_shared(root, "libbig.so", "big.c", "int big_answer(void) { return 42; }\n", "", "gcc", &error);
  ASSERT_TRUE(lib.has_value()) << error;
  std::string blob(4u << 20, '\0');
  std::uint32_t x = 12345;
  for (auto& c : blob) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  const auto blob_path = root.write("blob.bin", blob);
  const std::string name = "big-1.0-cp312-cp312-linux_x86_64.whl";
  fs::create_directories(root.file("idx/big"));
  make_wheel(root, "idx/big/" + name, {{"big/data/blob.bin", blob_path}, {"big/libbig.so", *lib}});
  const auto local_path = root.file("idx/big/" + name);
  NetServer server(NetServer::index_server(root.path()));
  const auto path = "/idx/files/big/" + name;
  const auto url = server.url(path) + "#sha256=" + sha256_hex(read_file(local_path));

  const auto remote = wheelcheck("inspect " + shell_quote(url) + " --json -q" + cache_arg());
  ASSERT_EQ(remote.exit_code, 0) << describe(remote);
  const auto local = wheelcheck("inspect " + shell_quote(local_path) + " --json -q" + cache_arg());
  ASSERT_EQ(local.exit_code, 0) << describe(local);
  const auto rp = json::parse(remote.out);
  EXPECT_EQ(rp.at("integrity"), "headers-only");
  EXPECT_EQ(member_elves(rp), member_elves(json::parse(local.out)));
  const auto size = static_cast<long>(fs::file_size(local_path));
  long sent = 0;
  for (const auto& q : server.stats()) {
    if (q.at("path") != path) continue;
    sent += q.at("bytes_sent").get<long>();
    EXPECT_EQ(q.at("status"), 206) << q.dump();
  }
  EXPECT_GT(sent, 0);
  EXPECT_LT(sent, size / 2) << "headers-only read " << sent << " of " << size << " bytes";
  RecordProperty("bytes_sent:" + name, std::to_string(sent) + " of " + std::to_string(size));
  std::cout << "[  BYTES   ] " << name << ": " << sent << " of " << size << " bytes\n";

  // Without ranges the same wheel is downloaded once, whole, and verified.
  server.clear_stats();
  server.add_faults(json{{"path", "^" + path + "$"}, {"fault", "no_ranges"}, {"count", -1}});
  const auto whole = wheelcheck("inspect " + shell_quote(url) + " --json -q" + cache_arg());
  ASSERT_EQ(whole.exit_code, 0) << describe(whole);
  EXPECT_EQ(json::parse(whole.out).at("integrity"), "full");
  long full_sent = 0;
  for (const auto& q : server.stats())
    if (q.at("path") == path) full_sent += q.at("bytes_sent").get<long>();
  EXPECT_GE(full_sent, size);
  EXPECT_LT(full_sent, 2 * size) << "the wheel was downloaded more than once";
}

}  // namespace
}  // namespace wheelcheck::test
