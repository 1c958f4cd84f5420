// The CI renderings (inspector/ci): JUnit XML that every parser reads whatever the names hold (hostile
// member and symbol names, invalid UTF-8, control characters), SARIF whose rule ids, levels, locations and
// fingerprints follow the findings, a finding read back from its JSON, the lock-line locations, and the
// reasons in pip's words.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "wheelcheck/ci.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/verdict.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_ci {

using namespace wheelcheck;
using namespace wheelcheck::test;

namespace {

verdict::Finding make_finding(verdict::FindingKind kind, verdict::Severity severity, const std::string& member) {
  verdict::Finding f;
  f.kind = kind;
  f.severity = severity;
  f.member = member;
  return f;
}

ci::Case sample_case() {
  ci::Case c;
  c.cell.image = "cuda13.0";
  c.cell.report.wheel = "flagtree-0.6.1-cp312-cp312-linux_x86_64.whl";
  c.location = {"pylock.toml", 12};
  c.cell.report.verdict = verdict::Verdict::Degraded;
  auto f = make_finding(verdict::FindingKind::MissingLibrary, verdict::Severity::Error, "triton/_C/libflagcx.so");
  f.library = "libcudart.so.12";
  f.explanation = "this member is built for CUDA 12";
  c.cell.report.findings.push_back(f);
  auto g = make_finding(verdict::FindingKind::Driver, verdict::Severity::Condition, "triton/_C/libflagcx.so");
  g.required_version = "580.65.06";
  c.cell.report.findings.push_back(g);
  verdict::Route tle;
  tle.name = "flagtree-tle-dist";
  tle.optional = true;
  tle.available = false;
  tle.reasons = {"triton/_C/libflagcx.so: missing library libcudart.so.12"};
  tle.gates = {{"USE_TLE_DIST", "0"}};
  c.cell.report.routes.push_back(tle);
  return c;
}

// Parses XML with Python's xml.etree (the parser CI report readers are closest to): "" when it parses, else
// the parser's message.
std::string xml_error(const TempDir& dir, const std::string& xml) {
  const std::string file = dir.write("report.xml", xml);
  const auto r =
      test::run("python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' " + shell_quote(file));
  return r.exit_code == 0 ? "" : r.err;
}

}  // namespace

TEST(CiLocation, LockLinesAndWholeFiles) {
  EXPECT_EQ(ci::location_of("pylock.toml:12").uri, "pylock.toml");
  EXPECT_EQ(ci::location_of("pylock.toml:12").line, 12);
  EXPECT_EQ(ci::location_of("reqs/a.txt").line, 0);
  EXPECT_EQ(ci::location_of("https://host:8443/x.whl").uri, "https://host:8443/x.whl") << "a port is not a line";
  EXPECT_EQ(ci::location_of("https://host:8443/x.whl").line, 0);
  EXPECT_EQ(ci::location_of("a.txt:").line, 0);
  EXPECT_EQ(ci::location_of("a.txt:0").line, 0);
  EXPECT_EQ(ci::location_of("a.txt:99999999999").line, 0) << "not a line number";
}

TEST(CiRules, ClassificationsThatSayMoreAreTheirOwnRule) {
  auto f = make_finding(verdict::FindingKind::MissingSymbol, verdict::Severity::Error, "m.so");
  f.classification = verdict::Why::CxxAbiMismatch;
  EXPECT_EQ(ci::rule_id(f), "cxx-abi-mismatch");
  f.classification = verdict::Why::SignatureChanged;
  EXPECT_EQ(ci::rule_id(f), "signature-changed");
  f.classification = verdict::Why::Absent;
  EXPECT_EQ(ci::rule_id(f), "missing-symbol");
  f.classification = verdict::Why::UnknownExports;
  EXPECT_EQ(ci::rule_id(f), "missing-symbol");
  f.kind = verdict::FindingKind::DriverTooOld;
  f.classification = verdict::Why::None;
  EXPECT_EQ(ci::rule_id(f), "driver-too-old");
  // Every kind the verdict makes has a rule, with a name and help text.
  std::vector<std::string> ids;
  for (const auto& r : ci::rules()) {
    EXPECT_FALSE(r.name.empty() || r.short_text.empty() || r.help.empty()) << r.id;
    ids.push_back(r.id);
  }
  for (int k = 0; k <= static_cast<int>(verdict::FindingKind::PolicyUnknown); ++k) {
    const auto name = verdict::kind_name(static_cast<verdict::FindingKind>(k));
    EXPECT_NE(std::find(ids.begin(), ids.end(), name), ids.end()) << name << " has no SARIF rule";
  }
}

TEST(CiReason, PipsWords) {
  auto f = make_finding(verdict::FindingKind::MissingVersion, verdict::Severity::Error, "m.so");
  f.library = "libc.so.6";
  f.required_version = "GLIBC_2.39";
  f.candidates = {"GLIBC_2.35"};
  EXPECT_EQ(ci::reason(f), "requires glibc 2.39+ (image: 2.35)");
  f.library = "libstdc++.so.6";
  f.required_version = "GLIBCXX_3.4.32";
  f.candidates = {"GLIBCXX_3.4.30"};
  EXPECT_EQ(ci::reason(f), "requires libstdc++ GLIBCXX_3.4.32+ (image: GLIBCXX_3.4.30)");
  auto d = make_finding(verdict::FindingKind::DriverTooOld, verdict::Severity::Error, "m.so");
  d.required_version = "580.65.06";
  d.explanation = "the CUDA 13 runtime needs an NVIDIA driver >= 580.65.06; the image's driver is 535.104.05.";
  // The image's driver is a fact of its own (candidates), never cut from the explanation's words.
  EXPECT_EQ(ci::reason(d), "requires NVIDIA driver 580.65.06+ (image: older)");
  d.candidates = {"535.104.05"};
  EXPECT_EQ(ci::reason(d), "requires NVIDIA driver 580.65.06+ (image: 535.104.05)");
  auto l = make_finding(verdict::FindingKind::MissingLibrary, verdict::Severity::Error, "m.so");
  l.library = "libcudart.so.12";
  EXPECT_EQ(ci::reason(l), "requires libcudart.so.12 (not found)");
}

TEST(CiFinding, ReadBackFromItsJson) {
  verdict::Report r;
  r.wheel = "w.whl";
  auto f = make_finding(verdict::FindingKind::MissingSymbol, verdict::Severity::Condition, "lib/a.so");
  f.symbol = "_ZN3c1013MessageLoggerC1EPKcii";
  f.demangled = "c10::MessageLogger::MessageLogger(char const*, int, int)";
  f.classification = verdict::Why::UnknownExports;
  f.candidates = {"x"};
  f.roots = {"lib/b.so"};
  r.findings.push_back(f);
  const auto back = verdict::finding_from_json(verdict::to_json(r)["findings"][0]);
  EXPECT_EQ(back.kind, f.kind);
  EXPECT_EQ(back.severity, f.severity);
  EXPECT_EQ(back.symbol, f.symbol);
  EXPECT_EQ(back.classification, f.classification);
  EXPECT_EQ(back.roots, f.roots);
  EXPECT_THROW(verdict::finding_from_json(nlohmann::ordered_json{{"kind", "no-such-kind"}, {"severity", "error"}}),
               wheelcheck::Error);
}

// One shape of a cell at three sizes, read back into the same typed cell: what a scan report, a state
// record and a verdict document hold of it survives, and a cell the wheel is not for is "not-targeted".
TEST(CellJson, EachSizeReadsBack) {
  run::Cell cell = sample_case().cell;
  cell.headline = "route flagtree-tle-dist (optional) is off: triton/_C/libflagcx.so: missing library libcudart.so.12";
  cell.report.conditions = {"the driver is 580.65.06 or newer"};
  for (auto size : {run::Size::Record, run::Size::Result, run::Size::Document}) {
    const auto j = run::to_json(cell, size);
    EXPECT_EQ(j["verdict"], "degraded");
    EXPECT_EQ(j["gates"], (nlohmann::ordered_json{{"USE_TLE_DIST", "0"}})) << j.dump();
    const run::Cell back = run::cell_from_json(j);
    EXPECT_EQ(back.image, "cuda13.0") << j.dump();
    EXPECT_TRUE(back.targeted);
    EXPECT_EQ(back.report.verdict, verdict::Verdict::Degraded);
    EXPECT_EQ(back.headline, cell.headline);
    EXPECT_EQ(back.report.conditions, cell.report.conditions);
    const bool whole = size != run::Size::Record;
    ASSERT_EQ(back.report.findings.size(), whole ? 2U : 0U);
    ASSERT_EQ(back.report.routes.size(), whole ? 1U : 0U);
    if (!whole) continue;
    EXPECT_EQ(back.report.findings[0].library, "libcudart.so.12");
    EXPECT_EQ(back.report.findings[1].required_version, "580.65.06");
    EXPECT_EQ(back.report.routes[0].gates, cell.report.routes[0].gates);
    EXPECT_FALSE(back.report.routes[0].available);
    // The same SARIF from the cell and from its JSON read back (a scan report rendered later).
    run::Cell named = back;  // a result sits under its wheel in a report (cases_of_scan names it so)
    named.report.wheel = cell.report.wheel;
    EXPECT_TRUE(ci::sarif({ci::case_of(named, {"w", 0})}, 3) == ci::sarif({ci::case_of(cell, {"w", 0})}, 3));
  }
  // Not for the image: "not-targeted", in every size, and why.
  cell.targeted = false;
  cell.not_targeted = "aarch64 wheel, x86_64 image";
  cell.headline = "not targeted: aarch64 wheel, x86_64 image";
  cell.report.verdict = verdict::Verdict::Incompatible;
  for (auto size : {run::Size::Record, run::Size::Result, run::Size::Document}) {
    const auto j = run::to_json(cell, size);
    EXPECT_EQ(j["verdict"], "not-targeted") << j.dump();
    const run::Cell back = run::cell_from_json(j);
    EXPECT_FALSE(back.targeted);
    EXPECT_EQ(back.not_targeted, "aarch64 wheel, x86_64 image");
  }
  EXPECT_THROW(run::cell_from_json(nlohmann::ordered_json{{"image", "x"}, {"verdict", "fine"}}), wheelcheck::Error);
  EXPECT_THROW(run::cell_from_json(nlohmann::ordered_json::array()), wheelcheck::Error);
}

TEST(CiSarif, ResultsFollowTheFindings) {
  const auto c = sample_case();
  const auto doc = ci::sarif({c}, 3);
  ASSERT_EQ(doc["runs"].size(), 1U);
  const auto& run = doc["runs"][0];
  EXPECT_EQ(run["automationDetails"]["id"], "wheelcheck/cuda13.0/");
  EXPECT_EQ(run["invocations"][0]["exitCode"], 3);
  ASSERT_EQ(run["results"].size(), 2U);
  const auto& lib = run["results"][0];
  EXPECT_EQ(lib["ruleId"], "missing-library");
  EXPECT_EQ(lib["level"], "error");
  EXPECT_EQ(run["tool"]["driver"]["rules"][lib["ruleIndex"].get<std::size_t>()]["id"], "missing-library");
  EXPECT_EQ(lib["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "pylock.toml");
  EXPECT_EQ(lib["locations"][0]["physicalLocation"]["region"]["startLine"], 12);
  const std::string text = lib["message"]["text"];
  EXPECT_NE(text.find("requires libcudart.so.12 (not found)"), std::string::npos) << text;
  EXPECT_NE(text.find("set USE_TLE_DIST=0"), std::string::npos) << text;
  const auto& cond = run["results"][1];
  EXPECT_EQ(cond["level"], "note");
  EXPECT_NE(cond["message"]["text"].get<std::string>().find("holds only if"), std::string::npos);
  // The fingerprint is the finding's, not the release's nor the message's.
  auto other = c;
  other.cell.report.wheel = "flagtree-0.7.0-cp312-cp312-linux_x86_64.whl";
  other.cell.report.findings[0].explanation = "other words";
  const auto again = ci::sarif({other}, 1);
  EXPECT_EQ(again["runs"][0]["results"][0]["partialFingerprints"], lib["partialFingerprints"]);
  EXPECT_NE(run["results"][1]["partialFingerprints"], lib["partialFingerprints"]);
  // Not for the image: no alert; a wheel that could not be read: one not-checked error.
  auto not_for = c;
  not_for.cell.targeted = false;
  EXPECT_TRUE(ci::sarif({not_for}, 0)["runs"][0]["results"].empty());
  const auto failed = ci::sarif({ci::failed_case("cuda13.0", "x.whl", {"x.whl", 0}, std::nullopt, "not a zip")}, 2);
  EXPECT_EQ(failed["runs"][0]["results"][0]["ruleId"], "not-checked");
  EXPECT_EQ(failed["runs"][0]["invocations"][0]["executionSuccessful"], false);
}

TEST(CiJunit, HostileNamesStillParse) {
  TempDir dir;
  auto c = sample_case();
  c.cell.report.verdict = verdict::Verdict::Incompatible;
  auto& f = c.cell.report.findings[0];
  f.member = std::string("a\x01<b>&\"'\n\x7f/\xff\xfe\xc3(\xed\xa0\x80 x.so");
  f.symbol = "]]><![CDATA[";
  f.explanation = "ends with a lone \xe2\x82";
  c.cell.report.wheel = "evil\"'<>&.whl";
  c.cell.report.routes[0].reasons = {"\x1b[31mred"};
  const std::string xml = ci::junit({c});
  EXPECT_EQ(xml_error(dir, xml), "") << xml;
  EXPECT_NE(xml.find("<failure type=\"incompatible\""), std::string::npos) << xml;
  // Valid UTF-8 stays as it is.
  f.member = "libé—✓.so";
  EXPECT_NE(ci::junit({c}).find("libé—✓.so"), std::string::npos);
}

TEST(CiJunit, OutcomesAndCounts) {
  TempDir dir;
  auto degraded = sample_case();
  auto unknown = sample_case();
  unknown.cell.report.wheel = "u.whl";
  unknown.cell.report.verdict = verdict::Verdict::Unknown;
  unknown.cell.report.routes.clear();
  auto not_for = sample_case();
  not_for.cell.report.wheel = "n.whl";
  not_for.cell.targeted = false;
  not_for.cell.not_targeted = "x86_64 wheel, aarch64 image";
  auto core_off = sample_case();
  core_off.cell.report.wheel = "c.whl";
  core_off.cell.report.verdict = verdict::Verdict::Incompatible;
  core_off.cell.report.routes[0].optional = false;
  const std::string xml = ci::junit({degraded, unknown, not_for, core_off});
  ASSERT_EQ(xml_error(dir, xml), "") << xml;
  // degraded: passes, its optional route skipped; unknown: an error; not for it: skipped; incompatible with
  // a core route off: two failures.
  EXPECT_NE(xml.find("<testsuites name=\"wheelcheck\" tests=\"6\" failures=\"2\" errors=\"1\" skipped=\"2\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<skipped message=\"not for this image: x86_64 wheel, aarch64 image\"/>"), std::string::npos);
  EXPECT_NE(xml.find("set USE_TLE_DIST=0"), std::string::npos);
  EXPECT_NE(xml.find("file=\"pylock.toml\" line=\"12\""), std::string::npos);
}

}  // namespace unity_test_ci
