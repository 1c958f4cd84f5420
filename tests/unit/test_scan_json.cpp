// The scan's typed report (scan::Report, include/wheelcheck/scan.hpp) and its one writer and reader
// (inspector/output/report_json.cpp): the whole report written and read back is the same report, byte for byte
// and fact for fact (a cell the wheel is not for keeps the gates its record says, though a record has no
// routes; the publisher check keeps its status and integrity; a pin its variant and what is undecided); the
// exit code and the worst verdict come from the cells; and every rendering of the report read back (Markdown,
// HTML, the text, the pins, SARIF, JUnit) is the one of the report it was written from.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "wheelcheck/ci.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/report.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/verdict.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_scan_json {

using namespace wheelcheck;
using Json = nlohmann::ordered_json;

namespace {

verdict::Finding finding(verdict::FindingKind kind, verdict::Severity severity, const std::string& member) {
  verdict::Finding f;
  f.kind = kind;
  f.severity = severity;
  f.member = member;
  f.explanation = "this member is built for CUDA 12";
  return f;
}

verdict::Route route_off(const std::string& name, const std::string& variable) {
  verdict::Route r;
  r.name = name;
  r.optional = true;
  r.available = false;
  r.reasons = {"triton/_C/libflagcx.so: missing library libcudart.so.12"};
  r.gates = {{variable, "0"}};
  return r;
}

// flagtree on cuda13.0: degraded, an optional route off (its gate), a missing library and a driver condition.
run::Cell degraded_on(const std::string& image) {
  run::Cell c;
  c.image = image;
  c.report.image = image;
  c.report.verdict = verdict::Verdict::Degraded;
  auto lib = finding(verdict::FindingKind::MissingLibrary, verdict::Severity::Error, "triton/_C/libflagcx.so");
  lib.library = "libcudart.so.12";
  c.report.findings.push_back(lib);
  auto driver = finding(verdict::FindingKind::Driver, verdict::Severity::Condition, "triton/_C/libflagcx.so");
  driver.required_version = "580.65.06";
  c.report.findings.push_back(driver);
  c.report.conditions = {"the driver is 580.65.06 or newer"};
  c.report.routes.push_back(route_off("flagtree-tle-dist", "USE_TLE_DIST"));
  c.headline = "route flagtree-tle-dist (optional) is off: triton/_C/libflagcx.so: missing library libcudart.so.12";
  return c;
}

// The same wheel on an image it is not for: its routes are off there too, and the record keeps only their gates.
run::Cell not_for(const std::string& image) {
  run::Cell c;
  c.image = image;
  c.report.image = image;
  c.targeted = false;
  c.not_targeted = "x86_64 wheel, aarch64 image";
  c.headline = "not targeted: x86_64 wheel, aarch64 image";
  c.report.verdict = verdict::Verdict::Incompatible;
  c.report.routes.push_back(route_off("flagtree-tle-dist", "USE_TLE_DIST"));
  return c;
}

run::Cell incompatible_on(const std::string& image) {
  run::Cell c;
  c.image = image;
  c.report.image = image;
  c.report.verdict = verdict::Verdict::Incompatible;
  auto v = finding(verdict::FindingKind::MissingVersion, verdict::Severity::Error, "flag_gems/libfoo.so");
  v.library = "libc.so.6";
  v.required_version = "GLIBC_2.39";
  c.report.findings.push_back(v);
  c.headline = "flag_gems/libfoo.so needs GLIBC_2.39";
  return c;
}

lint::Report publisher_of(const std::string& filename) {
  lint::Report r;
  r.wheel = filename;
  r.status = lint::Status::Warnings;
  r.claims.said = {"local version label +cu130: CUDA 13.0"};
  r.claims.shown = {"flagcx/lib/libflagcx.so needs libcudart.so.12 (CUDA 12)"};
  auto f = finding(verdict::FindingKind::LabelClaim, verdict::Severity::Warning, "flagcx/lib/libflagcx.so");
  f.explanation = "the label says CUDA 13.0; the member needs CUDA 12";
  r.findings.push_back(f);
  r.notes = {"no variants file"};
  return r;
}

scan::Wheel wheel_of(const std::string& filename, const std::string& project, const std::string& version) {
  scan::Wheel w;
  w.filename = filename;
  w.project = project;
  w.version = version;
  w.url = "http://127.0.0.1:8123/packages/" + filename;
  w.sha256 = std::string(64, 'a');
  w.size = 6266;
  w.upload_time = "2026-11-29T10:00:00Z";
  w.integrity = "headers-only";
  return w;
}

// A report with every part a scan writes: a degraded wheel with a cell it is not for and a publisher check, an
// incompatible one not counted, one that could not be read, pins with and without a pick. Its wheels as the scan
// holds them: as the report holds them (written and read back).
scan::Report example() {
  scan::Report r;
  r.generated_at = "2026-12-01T23:00:00Z";
  r.wheelcheck_version = "0.1.0";
  r.indexes = {"http://127.0.0.1:8123/simple/"};
  r.projects = {"flagtree", "flag-gems-cpp-cuda"};
  r.images = {"cuda13.0", "aarch64-image"};
  r.shard = {1, 2, false};
  r.since = "2026-11-01";
  r.environment = {"pylock.toml"};
  r.wheels_seen = 9;
  auto tree = wheel_of("flagtree-0.6.1-cp312-cp312-linux_x86_64.whl", "flagtree", "0.6.1");
  tree.results = {scan::Checked{degraded_on("cuda13.0"), run::cell_gates(degraded_on("cuda13.0")), true},
                  scan::Checked{not_for("aarch64-image"), run::cell_gates(not_for("aarch64-image")), false}};
  tree.publisher = publisher_of(tree.filename);
  auto gems =
      wheel_of("flag_gems_cpp_cuda-1.2.0+cu126-cp312-cp312-linux_x86_64.whl", "flag-gems-cpp-cuda", "1.2.0+cu126");
  gems.results = {scan::Checked{incompatible_on("cuda13.0"), {}, false}};  // its label names another build
  auto gone = wheel_of("flagtree-0.7.0-cp312-cp312-linux_x86_64.whl", "flagtree", "0.7.0");
  gone.size.reset();
  gone.upload_time.reset();
  gone.error = "HTTP 404 fetching the wheel";
  r.wheels = {tree, gems, gone};
  for (auto& w : r.wheels) w = scan::wheel_from_json(scan::to_json(w));
  scan::Pick pick{tree.filename,
                  "0.6.1",
                  verdict::Verdict::Degraded,
                  {{"USE_TLE_DIST", "0"}},
                  tree.url,
                  tree.sha256,
                  "cu130",
                  {"variant cu126: whether the image supports it is unknown (the driver)"}};
  r.pins = {
      scan::Pin{"cuda13.0", "flagtree", pick, {{gone.filename, "0.7.0", "yanked: broken build"}}},
      scan::Pin{"cuda13.0", "flag-gems-cpp-cuda", std::nullopt, {{gems.filename, "1.2.0+cu126", "incompatible"}}}};
  r.warnings = {"index http://127.0.0.1:8123/: api-version 1.4 is newer than 1.1; read as 1.1"};
  r.errors = {gone.filename + ": HTTP 404 fetching the wheel"};
  return r;
}

}  // namespace

TEST(ScanReportJson, TheWholeReportReadsBack) {
  const scan::Report report = example();
  const Json j = scan::to_json(report);
  // The document's shape: its keys in the order docs/scan.schema.json lists them, absent facts as null, a
  // record-size cell (the image the wheel is not for) without "counted".
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"schema", "generated_at", "wheelcheck_version", "indexes", "projects",
                                            "images", "shard", "since", "environment", "exit_code", "summary", "wheels",
                                            "pins", "warnings", "errors"}));
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_EQ(j["summary"]["new"], 3);
  EXPECT_EQ(j["summary"]["checked"], 2);
  EXPECT_EQ(j["summary"]["verdicts"]["not-targeted"], 1);
  EXPECT_TRUE(j["wheels"][2]["size"].is_null());
  EXPECT_TRUE(j["wheels"][0]["results"][0]["counted"].get<bool>());
  EXPECT_FALSE(j["wheels"][0]["results"][1].contains("counted"));
  EXPECT_TRUE(j["wheels"][0]["results"][1]["routes"].empty());
  EXPECT_EQ(j["wheels"][0]["results"][1]["gates"], (Json{{"USE_TLE_DIST", "0"}}));
  EXPECT_FALSE(j["wheels"][0]["publisher"].contains("wheel"));
  EXPECT_EQ(j["wheels"][0]["publisher"]["headline"], lint::headline(*report.wheels[0].publisher));
  EXPECT_TRUE(j["pins"][1]["pick"].is_null());
  EXPECT_EQ(j["pins"][0]["pick"]["variant"], "cu130");

  const scan::Report back = scan::report_from_json(j);
  EXPECT_EQ(scan::to_json(back).dump(), j.dump());
  // The facts, typed.
  ASSERT_EQ(back.wheels.size(), 3U);
  const auto& elsewhere = back.wheels[0].results[1];
  EXPECT_FALSE(elsewhere.cell.targeted);
  EXPECT_FALSE(elsewhere.counted);
  EXPECT_EQ(elsewhere.cell.not_targeted, "x86_64 wheel, aarch64 image");
  EXPECT_EQ(elsewhere.gates, (scan::Gates{{"USE_TLE_DIST", "0"}}));
  EXPECT_EQ(back.wheels[0].results[0].cell.report.routes.size(), 1U);
  ASSERT_TRUE(back.wheels[0].publisher.has_value());
  EXPECT_EQ(back.wheels[0].publisher->status, lint::Status::Warnings);
  EXPECT_TRUE(back.wheels[0].publisher->intact);
  EXPECT_EQ(back.wheels[0].publisher->claims.shown, report.wheels[0].publisher->claims.shown);
  EXPECT_EQ(back.wheels[2].error, "HTTP 404 fetching the wheel");
  EXPECT_FALSE(back.wheels[2].size.has_value());
  ASSERT_TRUE(back.pins[0].pick.has_value());
  EXPECT_EQ(back.pins[0].pick->verdict, verdict::Verdict::Degraded);
  EXPECT_EQ(back.pins[0].pick->undecided, report.pins[0].pick->undecided);
  EXPECT_FALSE(back.pins[1].pick.has_value());
  EXPECT_EQ(back.shard.index, 1);
  EXPECT_EQ(back.since, "2026-11-01");
  EXPECT_EQ(back.wheels_seen, 9U);
  EXPECT_EQ(back.errors, report.errors);
}

TEST(ScanReportJson, EveryRenderingOfTheReportReadBackIsTheSame) {
  const scan::Report report = example();
  const scan::Report back = scan::report_from_json(scan::to_json(report));
  EXPECT_EQ(scan::report_markdown(back), scan::report_markdown(report));
  EXPECT_EQ(scan::report_html(back), scan::report_html(report));
  EXPECT_EQ(scan::report_text(back), scan::report_text(report));
  EXPECT_EQ(scan::pins_env(back), scan::pins_env(report));
  EXPECT_EQ(ci::sarif(ci::cases_of_scan(back), 2).dump(), ci::sarif(ci::cases_of_scan(report), 2).dump());
  EXPECT_EQ(ci::junit(ci::cases_of_scan(back)), ci::junit(ci::cases_of_scan(report)));
  // What they say: the gate of the cell the wheel is not for, the publisher's line, the pin's variant.
  EXPECT_NE(scan::report_html(back).find("<pre class=\"gates\">export USE_TLE_DIST=&#39;0&#39;</pre>"),
            std::string::npos);
  const std::string text = scan::report_text(back);
  EXPECT_NE(text.find("    publisher        warnings       flagcx/lib/libflagcx.so: "), std::string::npos) << text;
  // A shard's text leaves the pins to its merge.
  EXPECT_NE(text.find("pins: shard 1 of 2 checks a share of the new wheels"), std::string::npos) << text;
  EXPECT_EQ(text.find("pin flagtree on cuda13.0"), std::string::npos) << text;
  EXPECT_NE(scan::pins_env(back).find("FLAGTREE_VARIANT='cu130'"), std::string::npos) << scan::pins_env(back);
}

TEST(ScanReportJson, ExitCodeAndVerdictComeFromTheCells) {
  scan::Report report = example();
  EXPECT_EQ(report.exit_code(), 2);  // an error, and a wheel that could not be read
  report.errors.clear();
  EXPECT_EQ(report.exit_code(), 2);  // the wheel that could not be read
  report.wheels.pop_back();
  // The incompatible cell is not counted (its label names another image's build): degraded at worst.
  EXPECT_EQ(report.exit_code(), 0);
  EXPECT_EQ(report.worst_new_verdict(), verdict::Verdict::Degraded);
  report.wheels[1].results[0].counted = true;
  EXPECT_EQ(report.exit_code(), 1);
  EXPECT_EQ(report.worst_new_verdict(), verdict::Verdict::Incompatible);
  // A cell the wheel is not for is never counted, whatever its verdict.
  report.wheels.pop_back();
  EXPECT_EQ(report.wheels[0].results[1].cell.report.verdict, verdict::Verdict::Incompatible);
  EXPECT_EQ(report.exit_code(), 0);
  const auto summary = scan::summary_of(report.wheels, report.wheels_seen);
  EXPECT_EQ(summary.degraded, 1U);
  EXPECT_EQ(summary.not_targeted, 1U);
  EXPECT_EQ(summary.incompatible, 0U);
}

TEST(ScanReportJson, AWheelEntryThatIsNoEntryIsAnError) {
  EXPECT_THROW(scan::wheel_from_json(Json::array()), Error);
  EXPECT_THROW(scan::wheel_from_json(Json{{"filename", 7}}), Error);
  EXPECT_THROW(scan::wheel_from_json(Json{{"results", {{{"image", "x"}, {"verdict", "fine"}}}}}), Error);
  EXPECT_THROW(scan::wheel_from_json(Json{{"publisher", {{"status", "spotless"}}}}), Error);
  EXPECT_THROW(scan::checked_from_json(Json{{"image", "x"}, {"verdict", "compatible"}, {"counted", "yes"}}), Error);
  // A record of an earlier release (no "counted", no routes) reads, its gates kept.
  const auto record = scan::checked_from_json(
      Json{{"image", "cuda13.0"}, {"targeted", true}, {"verdict", "degraded"}, {"gates", {{"USE_TLE_DIST", "0"}}}});
  EXPECT_TRUE(record.counted);
  EXPECT_EQ(record.gates, (scan::Gates{{"USE_TLE_DIST", "0"}}));
}

}  // namespace unity_test_scan_json
