// The renderings of a `wheelcheck scan` report (inspector/output/scan_markdown.cpp,
// inspector/output/scan_html.cpp), each of the typed report read from its JSON (scan::report_from_json,
// inspector/output/report_json.cpp), and its schema (docs/scan.schema.json): Markdown table shapes, a cell for
// each verdict kind, escaping of `|`, newlines and HTML in both outputs, the pins section, a <details> in every
// HTML matrix cell, no script anywhere, a clear error for what is no report; the example report validates
// against the schema (Python's jsonschema) and a broken one does not; headless Chromium parses the page into
// the DOM expected and paints a screenshot.
#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/report.hpp"
#include "wheelcheck/scan.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_scan_report {

using namespace wheelcheck;
using namespace wheelcheck::test;
using Json = nlohmann::ordered_json;

namespace {

const std::string k_sha = std::string(64, 'a');

Json finding(const std::string& kind, const std::string& severity, const std::string& member,
             const std::string& library, const std::string& explanation) {
  return Json{
      {"kind", kind}, {"severity", severity}, {"member", member},           {"library", library},
      {"symbol", ""}, {"demangled", ""},      {"explanation", explanation}, {"fix", "install the CUDA 12 runtime"}};
}

Json result(const std::string& image, bool targeted, const std::string& verdict, const std::string& headline,
            Json gates = Json::object(), Json findings = Json::array(), Json conditions = Json::array()) {
  return Json{{"image", image}, {"targeted", targeted}, {"verdict", verdict},      {"headline", headline},
              {"gates", gates}, {"findings", findings}, {"conditions", conditions}};
}

Json wheel(const std::string& filename, const std::string& project, const std::string& version, bool is_new,
           Json results, Json error = nullptr) {
  return Json{{"filename", filename},
              {"project", project},
              {"version", version},
              {"url", "http://127.0.0.1:8123/flagos-pypi-hosted/packages/" + filename},
              {"sha256", k_sha},
              {"size", 12345},
              {"upload_time", "2026-11-29T10:00:00Z"},
              {"yanked", false},
              {"yanked_reason", ""},
              {"new", is_new},
              {"integrity", "headers-only"},
              {"error", error},
              {"results", results}};
}

// A list of one finding is written Json::array({...}): `{x}` for a Json x is an array in GCC but a copy of
// x in clang (the sanitizer build), as nlohmann/json's FAQ warns.
// Four wheels on two images: every verdict kind appears, one wheel failed, one was seen before (and
// is listed first in the report, so the renderings must reorder it).
Json example_report() {
  Json r;
  r["schema"] = "wheelcheck-scan/1";
  r["generated_at"] = "2026-11-30T23:00:00Z";
  r["wheelcheck_version"] = "0.1.0";
  r["indexes"] = {"http://127.0.0.1:8123/flagos-pypi-hosted/simple/"};
  r["projects"] = {"flagtree", "flag-gems-cpp-cuda", "flagcx"};
  r["images"] = {"cuda13.0", "ascend-cann9"};
  r["shard"] = {{"index", 1}, {"count", 1}};
  r["since"] = nullptr;
  r["exit_code"] = 1;
  r["summary"] = {
      {"wheels_seen", 7},
      {"new", 3},
      {"checked", 3},
      {"errors", 1},
      {"verdicts", {{"compatible", 2}, {"degraded", 1}, {"incompatible", 1}, {"unknown", 1}, {"not-targeted", 1}}}};
  r["wheels"] = Json::array();
  r["wheels"].push_back(
      wheel("flagcx-0.3.0-py3-none-linux_x86_64.whl", "flagcx", "0.3.0", false,
            {result("cuda13.0", true, "compatible", ""),
             result("ascend-cann9", true, "unknown", "holds only if the driver is new enough", Json::object(),
                    Json::array({finding("driver", "condition", "", "", "needs a driver >= 580.65.06")}),
                    {"holds only if the driver is >= 580.65.06"})}));
  r["wheels"].push_back(
      wheel("flagtree-0.6.1-cp312-cp312-linux_x86_64.whl", "flagtree", "0.6.1", true,
            {result("cuda13.0", true, "degraded",
                    "route flagtree-tle-dist (optional) is off: triton/_C/libflagcx.so needs libcudart.so.12",
                    {{"USE_TLE_DIST", "0"}},
                    Json::array({finding("missing-library", "error", "triton/_C/libflagcx.so", "libcudart.so.12",
                                         "libcudart.so.12 is not in the image")})),
             result("ascend-cann9", false, "incompatible", "tags target CUDA")}));
  r["wheels"].push_back(wheel(
      "flag_gems_cpp_cuda-1.2.0-cp312-cp312-linux_x86_64.whl", "flag-gems-cpp-cuda", "1.2.0", true,
      {result(
           "cuda13.0", true, "incompatible", "libfoo.so needs GLIBC_2.39", Json::object(),
           Json::array({finding("missing-version", "error", "flag_gems/libfoo.so", "libc.so.6", "glibc is too old")})),
       result("ascend-cann9", true, "compatible", "")}));
  r["wheels"].push_back(wheel("flagcx-0.4.0-py3-none-linux_x86_64.whl", "flagcx", "0.4.0", true, Json::array(),
                              "HTTP 404 fetching the wheel"));
  r["pins"] = Json::array();
  r["pins"].push_back({{"image", "cuda13.0"},
                       {"project", "flagtree"},
                       {"pick",
                        {{"filename", "flagtree-0.6.1-cp312-cp312-linux_x86_64.whl"},
                         {"version", "0.6.1"},
                         {"verdict", "degraded"},
                         {"gates", {{"USE_TLE_DIST", "0"}}}}},
                       {"passed_over",
                        {{{"filename", "flagtree-0.7.0-cp312-cp312-linux_x86_64.whl"},
                          {"version", "0.7.0"},
                          {"reason", "yanked: broken build"}}}}});
  r["pins"].push_back({{"image", "cuda13.0"},
                       {"project", "flag-gems-cpp-cuda"},
                       {"pick", nullptr},
                       {"passed_over",
                        {{{"filename", "flag_gems_cpp_cuda-1.2.0-cp312-cp312-linux_x86_64.whl"},
                          {"version", "1.2.0"},
                          {"reason", "incompatible: libfoo.so needs GLIBC_2.39"}}}}});
  r["pins"].push_back({{"image", "ascend-cann9"},
                       {"project", "flagcx"},
                       {"pick",
                        {{"filename", "flagcx-0.3.0-py3-none-linux_x86_64.whl"},
                         {"version", "0.3.0"},
                         {"verdict", "unknown"},
                         {"gates", Json::object()}}},
                       {"passed_over", Json::array()}});
  r["warnings"] = {"index http://127.0.0.1:8123/: api-version 1.4 is newer than 1.1; read as 1.1"};
  return r;
}

const std::string k_evil = "evil<script>alert(1)</script>\"&'|x";

// The example with hostile text in every place text comes from: file name, URL, headline (with a
// newline and pipes), finding fields, gate name and value, image name, warnings.
Json hostile_report() {
  Json r = example_report();
  Json& w = r["wheels"][1];
  w["filename"] = k_evil + ".whl";
  w["url"] = "javascript:alert(1)";
  w["yanked"] = true;
  w["yanked_reason"] = "<script>bad</script>";
  Json& res = w["results"][0];
  res["headline"] = "line one | a<script>x</script>\nline two | `tick`";
  res["gates"] = {{"USE_TLE_DIST", "it's"}, {"$(rm -rf /)", "<b>"}};
  res["findings"][0]["member"] = "<script>m</script>";
  res["findings"][0]["demangled"] = "std::vector<int, std::allocator<int> >::push_back(int&&)";
  res["findings"][0]["explanation"] = "<img src=x onerror=alert(1)>";
  res["conditions"] = {"<script>c</script>"};
  r["warnings"].push_back("<script>warn</script> & \"quotes\"");
  return r;
}

// The renderings of a report's JSON, read by the one reader.
std::string markdown_of(const Json& j) {
  return scan::report_markdown(scan::report_from_json(j));
}

std::string html_of(const Json& j) {
  return scan::report_html(scan::report_from_json(j));
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t nl = s.find('\n', start);
    if (nl == std::string::npos) {
      if (start < s.size()) out.push_back(s.substr(start));
      break;
    }
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

// The `|` that separate GFM table cells: those without a backslash before them.
std::size_t cell_pipes(const std::string& line) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < line.size(); ++i)
    if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++n;
  return n;
}

// The lines of the Markdown table whose header starts with `first`: header, separator, rows.
std::vector<std::string> md_table(const std::string& md, const std::string& first) {
  std::vector<std::string> out;
  bool in = false;
  for (const auto& line : lines_of(md)) {
    if (!in && line.rfind(first, 0) == 0) in = true;
    if (in) {
      if (line.empty() || line[0] != '|') break;
      out.push_back(line);
    }
  }
  return out;
}

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string section(const std::string& html, const std::string& id) {
  const std::size_t b = html.find("<section id=\"" + id + "\">");
  if (b == std::string::npos) return {};
  return html.substr(b, html.find("</section>", b) - b);
}

}  // namespace

TEST(ScanReport, MarkdownHeadingAndCounts) {
  // The outcome is the exit code the cells and errors make: a wheel that could not be read, 2.
  const std::string md = markdown_of(example_report());
  EXPECT_EQ(md.rfind("## ⛔ wheelcheck scan: bad input or an unreadable index\n", 0), 0U) << md;
  // The counts are the wheels': four listed in the report, one of them failed.
  EXPECT_NE(md.find("**7** wheels seen · **4** new · **3** checked · **1** errors"), std::string::npos) << md;
  EXPECT_NE(md.find("🟡 1 degraded"), std::string::npos) << md;
  Json incompatible = example_report();
  incompatible["wheels"].erase(3);  // the wheel that failed
  EXPECT_EQ(markdown_of(incompatible)
                .rfind("## ❌ wheelcheck scan: a new wheel is incompatible with an image its tags target\n", 0),
            0U);
  // An incompatible cell the scan does not count (a label names another image's build) fails nothing.
  Json ok = incompatible;
  ok["wheels"][2]["results"][0]["counted"] = false;
  EXPECT_EQ(markdown_of(ok).rfind("## ✅ wheelcheck scan: nothing new is incompatible", 0), 0U);
  ok["errors"] = {"http://127.0.0.1:8123/: flagcx unreadable: HTTP 503"};
  EXPECT_EQ(markdown_of(ok).rfind("## ⛔ wheelcheck scan: bad input or an unreadable index", 0), 0U);
}

TEST(ScanReport, MarkdownTableShapeAndOrder) {
  const Json report = example_report();
  const std::string md = markdown_of(report);
  const auto table = md_table(md, "| Wheel |");
  ASSERT_EQ(table.size(), 2U + report["wheels"].size()) << md;
  EXPECT_EQ(table[0], "| Wheel | `cuda13.0` | `ascend-cann9` |");
  EXPECT_EQ(table[1], "|---|---|---|");
  for (const auto& line : table) EXPECT_EQ(cell_pipes(line), 4U) << line;
  // New wheels first in report order, then the one seen before, marked.
  EXPECT_NE(table[2].find("flagtree-0.6.1"), std::string::npos);
  EXPECT_NE(table[3].find("flag_gems_cpp_cuda-1.2.0"), std::string::npos);
  EXPECT_NE(table[4].find("flagcx-0.4.0"), std::string::npos);
  EXPECT_NE(table[5].find("flagcx-0.3.0"), std::string::npos);
  EXPECT_NE(table[5].find("_(seen before)_"), std::string::npos);
  for (int i = 2; i < 5; ++i) EXPECT_EQ(table[i].find("seen before"), std::string::npos) << table[i];
}

TEST(ScanReport, MarkdownCellForEachVerdictKind) {
  const auto table = md_table(markdown_of(example_report()), "| Wheel |");
  ASSERT_EQ(table.size(), 6U);
  EXPECT_NE(table[2].find("| 🟡 degraded | ➖ not targeted |"), std::string::npos) << table[2];
  EXPECT_NE(table[3].find("| ❌ incompatible | ✅ compatible |"), std::string::npos) << table[3];
  EXPECT_NE(table[4].find("| ⚠️ error | ⚠️ error |"), std::string::npos) << table[4];
  EXPECT_NE(table[5].find("| ✅ compatible | ❔ unknown |"), std::string::npos) << table[5];
}

TEST(ScanReport, MarkdownBulletsForNonCompatibleTargetedCells) {
  const std::string md = markdown_of(example_report());
  const std::size_t at = md.find("### Not compatible\n");
  ASSERT_NE(at, std::string::npos) << md;
  const std::string part = md.substr(at, md.find("### Pins") - at);
  EXPECT_NE(part.find("- 🟡 **degraded** · `flagtree-0.6.1-cp312-cp312-linux_x86_64.whl` on `cuda13.0`: route "
                      "flagtree-tle-dist (optional) is off: triton/\\_C/libflagcx.so needs libcudart.so.12 — "
                      "gates: `USE_TLE_DIST='0'`"),
            std::string::npos)
      << part;
  EXPECT_NE(part.find("- ❌ **incompatible** · `flag_gems_cpp_cuda-1.2.0"), std::string::npos) << part;
  EXPECT_NE(part.find("- ❔ **unknown** · `flagcx-0.3.0"), std::string::npos) << part;
  EXPECT_NE(part.find("  - condition: holds only if the driver is \\>= 580.65.06"), std::string::npos) << part;
  EXPECT_NE(part.find("- ⚠️ **error** · `flagcx-0.4.0-py3-none-linux_x86_64.whl`: HTTP 404"), std::string::npos);
  // Compatible and not-targeted cells get no bullet: 3 verdict bullets and 1 error bullet in all.
  std::size_t bullets = 0;
  for (const auto& line : lines_of(part))
    if (line.rfind("- ", 0) == 0) ++bullets;
  EXPECT_EQ(bullets, 4U) << part;
  EXPECT_EQ(part.find("not targeted"), std::string::npos);
}

TEST(ScanReport, MarkdownEscapesPipesNewlinesAndHtml) {
  const std::string md = markdown_of(hostile_report());
  const auto table = md_table(md, "| Wheel |");
  ASSERT_EQ(table.size(), 6U) << md;
  for (const auto& line : table) EXPECT_EQ(cell_pipes(line), 4U) << line;
  // The hostile file name is a code span in the table, its `|` escaped for the table.
  EXPECT_NE(table[2].find("`evil<script>alert(1)</script>\"&'\\|x.whl`"), std::string::npos) << table[2];
  // The headline stays on one bullet line; HTML and pipes in prose are backslash-escaped.
  const std::string bullet = "- 🟡 **degraded** · `evil";
  const std::size_t at = md.find(bullet);
  ASSERT_NE(at, std::string::npos) << md;
  const std::string line = md.substr(at, md.find('\n', at) - at);
  EXPECT_NE(line.find("line one \\| a\\<script\\>x\\</script\\> line two \\| \\`tick\\`"), std::string::npos) << line;
  // A gate name that is not a shell variable is shown as a comment, never as an assignment.
  EXPECT_NE(line.find("`# not a shell variable name: '$(rm -rf /)'='<b>'`"), std::string::npos) << line;
  EXPECT_NE(line.find("`USE_TLE_DIST='it'\\''s'`"), std::string::npos) << line;
  EXPECT_NE(md.find("- ⚠️ \\<script\\>warn\\</script\\> \\& \"quotes\""), std::string::npos) << md;
  // Outside code spans no `<` is left unescaped.
  const std::regex code_span("`+[^`]*`+");
  const std::string prose = std::regex_replace(md, code_span, "");
  for (std::size_t p = prose.find('<'); p != std::string::npos; p = prose.find('<', p + 1))
    EXPECT_EQ(prose[p - 1], '\\') << prose.substr(p > 40 ? p - 40 : 0, 80);
}

TEST(ScanReport, MarkdownPinsSection) {
  const std::string md = markdown_of(example_report());
  const auto table = md_table(md, "| Image |");
  ASSERT_EQ(table.size(), 4U) << md;  // header, separator, cuda13.0, ascend-cann9
  EXPECT_EQ(table[0], "| Image | `flagtree` | `flag-gems-cpp-cuda` | `flagcx` |");
  for (const auto& line : table) EXPECT_EQ(cell_pipes(line), 5U) << line;
  EXPECT_EQ(table[2], "| `cuda13.0` | **0.6.1** (🟡 degraded; `USE_TLE_DIST='0'`) | ⛔ nothing usable | — |");
  EXPECT_EQ(table[3], "| `ascend-cann9` | — | — | **0.3.0** (❔ unknown) |");
  EXPECT_NE(md.find("- `cuda13.0` · `flagtree`: picked 0.6.1\n  - passed over 0.7.0 "
                    "(`flagtree-0.7.0-cp312-cp312-linux_x86_64.whl`): yanked: broken build\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- `cuda13.0` · `flag-gems-cpp-cuda`: nothing usable\n  - passed over 1.2.0"), std::string::npos);
  EXPECT_LT(md.find("### Pins"), md.find("### Warnings"));
  EXPECT_NE(md.find("_Generated 2026-11-30T23:00:00Z by wheelcheck 0.1.0; report format `wheelcheck-scan/1`._"),
            std::string::npos);
}

TEST(ScanReport, DeterministicAndRefusesWhatIsNoReport) {
  EXPECT_EQ(markdown_of(example_report()), markdown_of(example_report()));
  EXPECT_EQ(html_of(example_report()), html_of(example_report()));
  // What is no report, or a report with a field of another type or an unknown word, is a clear error
  // (Error(BadInput) naming it), never a crash nor a page that guesses.
  const auto refused = [](const Json& j, const std::string& says) {
    try {
      scan::report_from_json(j);
      ADD_FAILURE() << "read: " << j.dump();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused(Json(), "must be a JSON object");
  refused(Json::array(), "must be a JSON object");
  refused(Json("text"), "must be a JSON object");
  refused(Json::object(), "not a wheelcheck scan report");
  Json odd = example_report();
  odd["wheels"].push_back(42);
  refused(odd, "wheel is not an object");
  odd = example_report();
  odd["wheels"][0]["results"][1]["verdict"] = "<maybe>";
  refused(odd, "'<maybe>'");
  odd = example_report();
  odd["wheels"][1]["results"][0]["gates"] = {{"N", 3}};
  refused(odd, "\"gates\" that is not an object of texts");
  odd = example_report();
  odd["images"].push_back(nullptr);
  refused(odd, "\"images\" that is not a list of texts");
  odd = example_report();
  odd["pins"][0]["pick"]["verdict"] = "fine";
  refused(odd, "pin's pick has an unknown verdict 'fine'");
  // The least report: no wheels, no pins.
  const Json least{{"schema", "wheelcheck-scan/1"}};
  const std::string md = markdown_of(least), html = html_of(least);
  EXPECT_NE(md.find("_No wheels in this report._"), std::string::npos) << md;
  EXPECT_NE(md.find("_No pins._"), std::string::npos) << md;
  EXPECT_EQ(html.rfind("<!doctype html>", 0), 0U);
  EXPECT_EQ(lower(html).find("<script"), std::string::npos);
}

TEST(ScanReport, HtmlDocumentShape) {
  const std::string html = html_of(example_report());
  EXPECT_EQ(html.rfind("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">", 0), 0U);
  EXPECT_NE(html.find("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"), std::string::npos);
  EXPECT_NE(html.find("<title>wheelcheck scan: bad input or an unreadable index"), std::string::npos);
  EXPECT_EQ(lower(html).find("<script"), std::string::npos);
  EXPECT_EQ(count(html, "<style>"), 1U);
  EXPECT_EQ(html.find("<link"), std::string::npos);  // self-contained: no external stylesheet
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_NE(html.find("position:sticky;top:0"), std::string::npos);
  EXPECT_NE(html.find("<ul class=\"legend\">"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"pins\">"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"warnings\">"), std::string::npos);
  EXPECT_NE(html.find("<footer>wheelcheck 0.1.0 · report format <code>wheelcheck-scan/1</code> · generated "
                      "<time>2026-11-30T23:00:00Z</time></footer>"),
            std::string::npos);
  EXPECT_TRUE(html.ends_with("</body>\n</html>\n"));
}

TEST(ScanReport, HtmlEveryMatrixCellHasDetails) {
  const Json report = example_report();
  const std::string html = html_of(report);
  const std::string matrix = section(html, "matrix");
  ASSERT_FALSE(matrix.empty());
  const std::size_t cells = report["wheels"].size() * report["images"].size();
  EXPECT_EQ(count(matrix, "<td "), cells);
  EXPECT_EQ(count(matrix, "<details>"), cells);
  EXPECT_EQ(count(matrix, "</details></td>"), cells);
  const std::regex cell("<td class=\"(v-[a-z-]+)\"><details><summary>");
  std::map<std::string, int> by_class;
  for (auto it = std::sregex_iterator(matrix.begin(), matrix.end(), cell); it != std::sregex_iterator(); ++it)
    ++by_class[(*it)[1]];
  EXPECT_EQ(by_class["v-compatible"], 2);
  EXPECT_EQ(by_class["v-degraded"], 1);
  EXPECT_EQ(by_class["v-incompatible"], 1);
  EXPECT_EQ(by_class["v-unknown"], 1);
  EXPECT_EQ(by_class["v-not-targeted"], 1);
  EXPECT_EQ(by_class["v-error"], 2);
  // Each class is styled, and the word is in the summary, not colour alone.
  for (const char* c : {"v-compatible", "v-degraded", "v-incompatible", "v-unknown", "v-not-targeted", "v-error"})
    EXPECT_NE(html.find(std::string(".") + c + "{background:"), std::string::npos) << c;
  EXPECT_NE(
      matrix.find("<td class=\"v-not-targeted\"><details><summary><span class=\"g\" aria-hidden=\"true\">–</span> "
                  "not targeted</summary>"),
      std::string::npos);
  // The degraded cell opens its finding, the gates as export lines.
  EXPECT_NE(matrix.find("<code>missing-library</code><dl class=\"f\"><dt>member</dt><dd><code>triton/_C/libflagcx.so"
                        "</code></dd><dt>library</dt><dd><code>libcudart.so.12</code></dd></dl>"),
            std::string::npos)
      << matrix;
  EXPECT_NE(matrix.find("<pre class=\"gates\">export USE_TLE_DIST=&#39;0&#39;</pre>"), std::string::npos);
  EXPECT_NE(matrix.find("<li>holds only if the driver is &gt;= 580.65.06</li>"), std::string::npos);
  // New rows first; the wheel seen before is last and marked.
  EXPECT_LT(matrix.find("flagcx-0.4.0"), matrix.find("flagcx-0.3.0"));
  EXPECT_NE(matrix.find("<tr class=\"seen\">"), std::string::npos);
}

TEST(ScanReport, HtmlEscapesEverything) {
  const std::string html = html_of(hostile_report());
  EXPECT_EQ(lower(html).find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>\n"), std::string::npos);
  EXPECT_NE(html.find("evil&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;&#39;|x.whl"), std::string::npos);
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_NE(html.find("std::vector&lt;int, std::allocator&lt;int&gt; &gt;::push_back(int&amp;&amp;)"),
            std::string::npos);
  EXPECT_NE(html.find("yanked: &lt;script&gt;bad&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("<li>&lt;script&gt;warn&lt;/script&gt; &amp; &quot;quotes&quot;</li>"), std::string::npos);
  // No javascript: link; the real http URLs still are links.
  EXPECT_EQ(lower(html).find("href=\"javascript"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"http://127.0.0.1:8123/flagos-pypi-hosted/packages/flagcx-0.3.0"), std::string::npos);
  // Gates: quoted for the shell, then escaped for HTML; a bad name only as a comment.
  EXPECT_NE(html.find("export USE_TLE_DIST=&#39;it&#39;\\&#39;&#39;s&#39;\n# not a shell variable name: "
                      "&#39;$(rm -rf /)&#39;=&#39;&lt;b&gt;&#39;</pre>"),
            std::string::npos)
      << section(html, "matrix");
}

TEST(ScanReport, SchemaValidatesTheExampleAndRejectsBrokenReports) {
  SKIP_WITHOUT_JSONSCHEMA();
  TempDir dir;
  const std::string schema = source_dir() + "/docs/scan.schema.json";
  Json merged = example_report();
  merged["shard"] = {{"index", 0}, {"count", 4}, {"merged", true}};
  merged["since"] = "2026-11-01";
  const std::string good = dir.write("good.json", example_report().dump(2));
  const std::string good_merged = dir.write("merged.json", merged.dump(2));
  auto r = validate_json(schema, {good, good_merged});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;

  // Each break on its own must be caught, at the place it is.
  struct Break {
    const char* name;
    void (*apply)(Json&);
    const char* pointer;
  };
  const Break breaks[] = {
      {"verdict", [](Json& j) { j["wheels"][1]["results"][0]["verdict"] = "maybe"; }, "/wheels/1/results/0/verdict: "},
      {"summary", [](Json& j) { j.erase("summary"); }, "/: 'summary' is a required property"},
      {"exit", [](Json& j) { j["exit_code"] = 3; }, "/exit_code: "},
      {"severity", [](Json& j) { j["wheels"][1]["results"][0]["findings"][0]["severity"] = "fatal"; },
       "/wheels/1/results/0/findings/0/severity: "},
      {"pick", [](Json& j) { j["pins"][0]["pick"]["verdict"] = "incompatible"; }, "/pins/0/pick: "},
      {"extra", [](Json& j) { j["wheels"][0]["colour"] = "red"; }, "/wheels/0: Additional properties"},
      {"gate",
       [](Json& j) {
         j["wheels"][1]["results"][0]["gates"] = {{"NOT A NAME", "0"}};
       },
       "/wheels/1/results/0/gates: "},
  };
  for (const auto& b : breaks) {
    Json j = example_report();
    b.apply(j);
    const std::string f = dir.write(std::string("bad-") + b.name + ".json", j.dump(2));
    r = validate_json(schema, {f});
    EXPECT_EQ(r.exit_code, 1) << b.name << ": " << r.out << r.err;
    EXPECT_NE(r.out.find(b.pointer), std::string::npos) << b.name << ": " << r.out << r.err;
  }
}

TEST(ScanReport, ChromiumParsesTheDomAsWritten) {
  if (chromium().empty()) GTEST_SKIP() << "chromium not installed: apt-get install chromium";
  TempDir dir;
  const Json report = hostile_report();
  const std::string page = dir.write("report.html", html_of(report));
  const auto r = run_chromium(dir, "--dump-dom", page);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string& dom = r.out;
  ASSERT_NE(dom.find("</html>"), std::string::npos) << r.err;
  // The parser kept the structure: one <details> per matrix cell, each directly in its <td>, and the
  // rows and pins tables as written (a stray tag from the data would have restructured them).
  const std::string matrix = section(dom, "matrix");
  const std::size_t cells = report["wheels"].size() * report["images"].size();
  EXPECT_EQ(count(matrix, "<details>"), cells) << matrix;
  EXPECT_EQ(count(matrix, "\"><details><summary>"), cells);
  EXPECT_EQ(count(matrix, "<tr class="), report["wheels"].size());
  EXPECT_EQ(count(section(dom, "pins"), "<td class="), 6U);
  EXPECT_EQ(count(dom, "<details>"), cells);
  EXPECT_EQ(lower(dom).find("<script"), std::string::npos);
  EXPECT_EQ(dom.find("<img"), std::string::npos);
  EXPECT_NE(dom.find("evil&lt;script&gt;alert(1)&lt;/script&gt;\"&amp;'|x.whl"), std::string::npos);
  EXPECT_NE(dom.find("<footer>"), std::string::npos);
}

TEST(ScanReport, ChromiumPaintsAScreenshot) {
  if (chromium().empty()) GTEST_SKIP() << "chromium not installed: apt-get install chromium";
  TempDir dir;
  const std::string page = dir.write("report.html", html_of(example_report()));
  const std::string png = dir.file("report.png");
  const auto r = run_chromium(dir, "--screenshot=" + shell_quote(png) + " --window-size=1280,900", page);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string bytes = read_file(png);
  ASSERT_GE(bytes.size(), 8U);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // A blank 1280x900 page compresses to a few kB; the coloured matrix and text make it far larger.
  EXPECT_GT(bytes.size(), 30000U) << "screenshot suspiciously small: " << bytes.size() << " bytes";
}

}  // namespace unity_test_scan_report
