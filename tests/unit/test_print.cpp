// The one run and the one printer (issue 61), through the library on the build's sample wheels and the db's
// images: run::run's verdict, exit codes and problems; output::print in every format of every answer, each
// document read back where a reader exists (a cell's JSON through run::cell_from_json, SARIF and the gates'
// JSON through the JSON parser, JUnit through Python's XML parser), the files -o writes holding the run's
// document, github's lines in the files the sinks name, and a format refused where an answer has none.
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "wheelcheck/answer.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/format.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/report.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/scan.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_print {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;
using Json = nlohmann::ordered_json;

namespace {

std::string sample(const std::string& prefix) {
  for (const auto& f : find_files(build_samples_dir(), ".whl")) {
    if (fs::path(f).filename().string().rfind(prefix, 0) == 0) return f;
  }
  return "";
}

// What print wrote: stdout, stderr, and each file by path (written or appended).
struct Captured {
  std::string out, err;
  std::map<std::string, std::string> files;
};

output::Sinks capture(Captured& c) {
  output::Sinks s;
  s.out = [&c](std::string_view t) { c.out += t; };
  s.err = [&c](std::string_view t) { c.err += t; };
  s.write = [&c](const std::string& p, const std::string& t) { c.files[p] = t; };
  s.append = [&c](const std::string& p, const std::string& t) { c.files[p] += t; };
  s.wrap = [](const std::string& t) { return t; };
  return s;
}

std::string xml_error(const TempDir& dir, const std::string& xml) {
  const std::string file = dir.write("report.xml", xml);
  const auto r =
      test::run("python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' " + shell_quote(file));
  return r.exit_code == 0 ? "" : r.err;
}

// The flagtree sample (FlagOS's rule set: its TLE route needs FlagCX) and the hello sample, checked alone on
// cuda13.0 as `wheelcheck W1 W2 --image cuda13.0` does, plus a wheel that could not be read.
struct Fixture {
  image::Db db{source_dir() + "/db"};
  run::RuleChoice rules{"", source_dir() + "/db/rules"};
  std::vector<WheelProfile> profiles;
  std::vector<run::Target> targets;
  run::Result result;

  Fixture(const std::vector<std::string>& wheels, const std::vector<std::string>& images) {
    for (const auto& w : wheels) profiles.push_back(inspect_wheel(w));
    for (const auto& i : images) targets.push_back({db.resolve(i), nullptr});
    run::Request asked{{}, {{}, &rules, &db, nullptr}, run::Installed::Alone, nullptr};
    std::vector<run::Package> packages;
    for (const auto& p : profiles) packages.push_back({&p, "", run::Role::Checked});
    packages.push_back({nullptr, "missing.whl: no such file", run::Role::Checked});
    for (auto& t : targets) asked.images.push_back({&t, packages, {}, {}});
    result = run::run(asked);
  }

  output::CheckAnswer answer(const std::vector<std::string>& given) const {
    output::CheckAnswer a;
    a.wheels = given;
    a.wheels.push_back("/nowhere/missing.whl");
    a.images = &targets;
    for (std::size_t i = 0; i < profiles.size(); ++i) {
      a.problems.emplace_back();
      a.names.push_back(profiles[i].filename.filename);
      for (const auto& env : result.environments) a.cells.push_back(*env.cell_of(i));
    }
    a.problems.push_back(output::Problem{"bad-input", "/nowhere/missing.whl", "no such file", 2});
    a.overall = result.verdict;
    a.exit_code = result.exit_code(false);
    a.gates = result.gates({});
    return a;
  }
};

}  // namespace

// The run's one answer: the flagtree sample alone on cuda13.0 is degraded (its TLE route needs FlagCX, which
// is not there), the hello sample is for CPython 3.11 (not targeted on cuda13.0's 3.12), and a package that
// could not be read is a problem of the run: exit 2 for check and gates alike, the gates fail closed.
TEST(RunRun, OneAnswerForTheWheelsAndTheImages) {
  const std::string flagtree = sample("flagtree-"), hello = sample("hello_native-");
  if (flagtree.empty() || hello.empty())
    GTEST_SKIP() << "skipped: the build's samples are absent (cmake --build build --target samples)";
  const Fixture f({flagtree, hello}, {"cuda13.0"});
  ASSERT_EQ(f.result.environments.size(), 1u);
  const run::Environment& env = f.result.environments.front();
  ASSERT_NE(env.cell_of(0), nullptr);
  ASSERT_NE(env.cell_of(1), nullptr);
  EXPECT_EQ(env.cell_of(2), nullptr);  // not read: no cell
  EXPECT_EQ(env.cell_of(0)->report.verdict, verdict::Verdict::Degraded) << env.cell_of(0)->headline;
  EXPECT_FALSE(env.cell_of(1)->targeted);
  ASSERT_EQ(f.result.problems.size(), 1u);
  EXPECT_EQ(f.result.problems.front().text, "missing.whl: no such file");
  EXPECT_EQ(f.result.problems.front().kind, run::Problem::Kind::Unread);
  EXPECT_EQ(f.result.exit_code(false), 2);
  EXPECT_EQ(f.result.exit_code(true), 2);
  // The gates fail closed: the error says why, and every gate of the rule sets is at its off value.
  const auto sets = rules::load_all(source_dir() + "/db/rules");
  const gates::Result g = f.result.gates(sets);
  EXPECT_NE(g.error.find("missing.whl: no such file"), std::string::npos) << g.error;
  const gates::Result closed = gates::fail_closed(sets, "x");
  for (const auto& gate : closed.gates) {
    const auto it =
        std::find_if(g.gates.begin(), g.gates.end(), [&](const gates::Gate& x) { return x.variable == gate.variable; });
    ASSERT_NE(it, g.gates.end()) << gate.variable;
    EXPECT_EQ(it->value, gate.value) << gate.variable;
  }
}

// Without the unreadable package the exit code is the verdict's: degraded (3) for check, 0 for gates.
TEST(RunRun, ExitCodeIsTheVerdictsWithoutProblems) {
  const std::string flagtree = sample("flagtree-");
  if (flagtree.empty())
    GTEST_SKIP() << "skipped: the build's samples are absent (cmake --build build --target samples)";
  image::Db db(source_dir() + "/db");
  run::RuleChoice rules("", source_dir() + "/db/rules");
  const WheelProfile p = inspect_wheel(flagtree);
  std::vector<run::Target> targets{{db.resolve("cuda13.0"), nullptr}, {db.resolve("ascend-cann9"), nullptr}};
  run::Request asked{{}, {{}, &rules, &db, nullptr}, run::Installed::Alone, nullptr};
  for (auto& t : targets) asked.images.push_back({&t, {{&p, "", run::Role::Checked}}, {}, {}});
  const run::Result r = run::run(asked);
  ASSERT_EQ(r.environments.size(), 2u);
  EXPECT_TRUE(r.problems.empty());
  EXPECT_EQ(r.exit_code(true), 0);
  EXPECT_EQ(r.exit_code(false), verdict::exit_code(r.verdict));
  EXPECT_NE(r.verdict, verdict::Verdict::Compatible);
}

// Every format check prints or writes, from one answer: each document read back.
TEST(Print, EveryFormatOfACheckReadsBack) {
  const std::string flagtree = sample("flagtree-"), hello = sample("hello_native-");
  if (flagtree.empty() || hello.empty())
    GTEST_SKIP() << "skipped: the build's samples are absent (cmake --build build --target samples)";
  TempDir dir;
  const Fixture f({flagtree, hello}, {"cuda13.0"});
  const output::Answer answer{f.answer({flagtree, hello})};
  const auto& check = std::get<output::CheckAnswer>(answer.value);
  for (const auto& row : output::formats()) {
    if ((row.prints & output::k_check) == 0 && (row.files & output::k_check) == 0) continue;
    SCOPED_TRACE(std::string(row.name));
    Captured c;
    output::Sinks sinks = capture(c);
    if (row.format == output::Format::Sh || row.format == output::Format::Github) {
      // sh and github are the gates' formats: check prints them as gates.
      output::CheckAnswer gated = check;
      gated.as_gates = true;
      sinks.env_file = "env";
      sinks.summary = "summary.md";
      sinks.github_output = "outputs";
      output::print({gated}, row.format, sinks);
      if (row.format == output::Format::Sh) {
        EXPECT_EQ(c.out, gates::to_sh(check.gates));
      } else {
        EXPECT_EQ(c.files["env"], gates::github_env(check.gates));
        EXPECT_EQ(c.files["summary.md"], gates::markdown_summary(check.gates));
        EXPECT_NE(c.files["outputs"].find("exit-code=2\n"), std::string::npos) << c.files["outputs"];
        EXPECT_EQ(c.out, gates::github_annotations(check.gates));
      }
      continue;
    }
    output::print(answer, row.format, sinks);
    const std::string& out = c.out;
    switch (row.format) {
      case output::Format::Json: {
        const Json doc = Json::parse(out);
        ASSERT_TRUE(doc.is_array());
        ASSERT_EQ(doc.size(), 3u);  // two cells and the wheel that could not be read
        for (std::size_t i = 0; i < 2; ++i) {
          EXPECT_EQ(doc[i], run::to_json(check.cells[i], run::Size::Document));
          // Its reader (the scan's) keeps a result's size: the verdict, findings, routes and gates.
          EXPECT_EQ(run::to_json(run::cell_from_json(doc[i]), run::Size::Result),
                    run::to_json(check.cells[i], run::Size::Result));
        }
        EXPECT_EQ(doc[2]["error"]["exit_code"], 2);
        EXPECT_EQ(doc[2]["wheel"]["filename"], "missing.whl");
        break;
      }
      case output::Format::Sarif: {
        const Json log = Json::parse(out);
        EXPECT_EQ(log["version"], "2.1.0");
        EXPECT_FALSE(log["runs"].empty());
        EXPECT_NE(out.find("missing.whl"), std::string::npos);
        break;
      }
      case output::Format::Junit:
        EXPECT_EQ(xml_error(dir, out), "");
        EXPECT_NE(out.find("flagtree"), std::string::npos);
        EXPECT_NE(out.find("missing.whl"), std::string::npos);
        break;
      case output::Format::Markdown: EXPECT_EQ(out, gates::markdown_summary(check.gates)); break;
      case output::Format::Text:
        EXPECT_NE(out.find("flagtree"), std::string::npos);
        EXPECT_NE(out.find("hello_native"), std::string::npos);
        break;
      default: ADD_FAILURE() << "a format check prints that this test does not read: " << row.name;
    }
  }
}

// -o writes the run's document: for gates, the check's JSON (its cells), while stdout has the gates' JSON.
TEST(Print, FilesHoldTheRunsDocument) {
  const std::string flagtree = sample("flagtree-");
  if (flagtree.empty())
    GTEST_SKIP() << "skipped: the build's samples are absent (cmake --build build --target samples)";
  const Fixture f({flagtree}, {"cuda13.0"});
  output::CheckAnswer gated = f.answer({flagtree});
  gated.as_gates = true;
  Captured c;
  output::Sinks sinks = capture(c);
  sinks.files = {{output::Format::Json, "doc.json"}, {output::Format::Sarif, "log.sarif"}};
  output::print({gated}, output::Format::Json, sinks);
  EXPECT_EQ(Json::parse(c.out), gates::to_json(gated.gates));
  const Json doc = Json::parse(c.files.at("doc.json"));
  ASSERT_TRUE(doc.is_array());
  EXPECT_EQ(doc[0], run::to_json(gated.cells[0], run::Size::Document));
  EXPECT_EQ(Json::parse(c.files.at("log.sarif"))["version"], "2.1.0");
}

// The publisher check's answer in each of its formats; a format with no document of an answer is refused
// (Error(Internal): the command line never asks for it).
TEST(Print, LintAndFailedRun) {
  const std::string flagtree = sample("flagtree-");
  if (flagtree.empty())
    GTEST_SKIP() << "skipped: the build's samples are absent (cmake --build build --target samples)";
  TempDir dir;
  const WheelProfile p = inspect_wheel(flagtree);
  const std::vector<lint::Report> reports{lint::lint(p, {})};
  const std::vector<std::string> where{flagtree};
  const std::vector<Json> entries{lint::to_json(reports[0])};
  const output::Answer answer{output::LintAnswer{&reports, &where, &entries, lint::exit_code(reports[0])}};
  for (const auto& row : output::formats()) {
    if ((row.prints & output::k_lint) == 0) continue;
    SCOPED_TRACE(std::string(row.name));
    Captured c;
    output::print(answer, row.format, capture(c));
    if (row.format != output::Format::Github) EXPECT_FALSE(c.out.empty());
    if (row.format == output::Format::Github) EXPECT_EQ(c.out, lint::render_github(reports));
    if (row.format == output::Format::Json)
      EXPECT_EQ(Json::parse(c.out), lint::document(entries, lint::exit_code(reports[0])));
    if (row.format == output::Format::Text) EXPECT_EQ(c.out, lint::render_text(reports[0], false));
    if (row.format == output::Format::Markdown) EXPECT_EQ(c.out, lint::render_markdown(reports));
    if (row.format == output::Format::Junit) EXPECT_EQ(xml_error(dir, c.out), "");
  }
  Captured c;
  EXPECT_THROW(output::print(answer, output::Format::Sh, capture(c)), Error);
  output::FailedRun failed;
  failed.cases.push_back(ci::failed_case("cuda13.0", "", {"w.whl", 0}, std::nullopt, "no image named cuda99"));
  const output::Answer none{failed};
  Captured s;
  output::print(none, output::Format::Sarif, capture(s));
  EXPECT_NE(s.out.find("no image named cuda99"), std::string::npos);
  EXPECT_EQ(Json::parse(s.out)["runs"][0]["invocations"][0]["exitCode"], 2);
  EXPECT_THROW(output::render(none, output::Format::Json, capture(s)), Error);
}

// The scan's answer: each format the scan prints or writes is its typed report's rendering.
TEST(Print, ScanAnswerIsItsReportsRenderings) {
  scan::Report report;
  report.errors.push_back("https://example.invalid/simple/x/: unreadable after 5 retries");
  const output::Answer answer{output::ScanAnswer{&report, 2}};
  for (const auto& row : output::formats()) {
    if ((row.prints & output::k_scan) == 0 && (row.files & output::k_scan) == 0) continue;
    SCOPED_TRACE(std::string(row.name));
    Captured c;
    output::print(answer, row.format, capture(c));
    if (row.format == output::Format::Json) EXPECT_EQ(c.out, output::dump(scan::to_json(report)));
    if (row.format == output::Format::Text) EXPECT_EQ(c.out, scan::report_text(report));
    if (row.format == output::Format::Markdown) EXPECT_EQ(c.out, scan::report_markdown(report));
    if (row.format == output::Format::Sarif) EXPECT_EQ(Json::parse(c.out), ci::sarif(ci::cases_of_scan(report), 2));
  }
}

}  // namespace unity_test_print
