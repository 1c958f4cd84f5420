// A new output format costs one enum value, one table row and one renderer (issue 61). This test's build
// compiles the format table and the printer (inspector/output/format.cpp, print.cpp) with
// WHEELCHECK_TOY_FORMAT: Format::Toy, its row ("toy", printed and written by every command) and the renderer
// below. The commands are the very objects the wheelcheck binary is linked from (the wheelcheck_cli
// library, compiled without the definition): their --format and -o accept "toy" and print it, with no line
// of theirs changed.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "inspector/cli/commands.hpp"
#include "support.hpp"
#include "wheelcheck/answer.hpp"
#include "wheelcheck/format.hpp"
#include "wheelcheck/scan.hpp"

namespace wheelcheck::output {

// The toy renderer: which answer, how many cells or reports, and its exit code.
std::string render_toy(const Answer& answer, const Sinks&) {
  if (const auto* c = std::get_if<CheckAnswer>(&answer.value))
    return "toy check: " + std::to_string(c->cells.size()) + " cells" + (c->as_gates ? ", gates" : "") + ", exit " +
           std::to_string(c->exit_code) + "\n";
  if (const auto* e = std::get_if<EnvironmentAnswer>(&answer.value))
    return "toy environment: " + std::to_string(e->environments->size()) + " images, exit " +
           std::to_string(e->exit_code) + "\n";
  if (const auto* l = std::get_if<LintAnswer>(&answer.value))
    return "toy lint: " + std::to_string(l->reports->size()) + " reports, exit " + std::to_string(l->exit_code) + "\n";
  if (const auto* s = std::get_if<ScanAnswer>(&answer.value))
    return "toy scan: " + std::to_string(s->report->wheels.size()) + " wheels, exit " + std::to_string(s->exit_code) +
           "\n";
  return "toy failed run, exit " + std::to_string(std::get<FailedRun>(answer.value).exit_code) + "\n";
}

}  // namespace wheelcheck::output

namespace unity_test_toy_format {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;

namespace {

std::string sample(const std::string& prefix) {
  for (const auto& f : find_files(build_samples_dir(), ".whl")) {
    if (fs::path(f).filename().string().rfind(prefix, 0) == 0) return f;
  }
  return "";
}

// Runs one command as main does once the words are parsed: its stdout and exit code.
std::pair<std::string, int> run_command(const std::vector<std::string>& words) {
  CLI::App app("wheelcheck");
  std::vector<cli::Command> commands = {cli::add_check(app), cli::add_gates(app), cli::add_lint(app)};
  std::vector<std::string> reversed(words.rbegin(), words.rend());
  app.parse(reversed);
  testing::internal::CaptureStdout();
  int rc = -1;
  for (const auto& c : commands) {
    if (c.app->parsed()) rc = c.run();
  }
  cli::flush_stdout();
  return {testing::internal::GetCapturedStdout(), rc};
}

}  // namespace

TEST(ToyFormat, TheTableOffersItToEveryCommand) {
  const auto toy = output::format_named("toy");
  ASSERT_TRUE(toy);
  EXPECT_EQ(*toy, output::Format::Toy);
  for (const auto command : {output::k_check, output::k_gates, output::k_scan, output::k_lint}) {
    const auto printed = output::printed_by(command);
    EXPECT_NE(std::find(printed.begin(), printed.end(), "toy"), printed.end()) << command;
    EXPECT_NE(output::format_help(command).find("toy (a toy format"), std::string::npos) << command;
  }
}

// check, gates and lint print it, and check writes it with -o, through the unchanged command objects.
TEST(ToyFormat, EveryCommandPrintsIt) {
  const std::string flagtree = sample("flagtree-");
  if (flagtree.empty())
    GTEST_SKIP() << "skipped: the build's samples are absent (cmake --build build --target samples)";
  TempDir dir;
  const std::string db = source_dir() + "/db";
  const std::string file = dir.file("out.toy");
  const auto check = run_command({"check", flagtree, "--image", "cuda13.0", "--db", db, "--no-cache", "--no-config",
                                  "-q", "--format", "toy", "-o", "toy=" + file});
  EXPECT_EQ(check.first, "toy check: 1 cells, exit 3\n");
  EXPECT_EQ(check.second, 3);
  EXPECT_EQ(read_file(file), "toy check: 1 cells, exit 3\n");
  const auto gates = run_command(
      {"gates", flagtree, "--image", "cuda13.0", "--db", db, "--no-cache", "--no-config", "-q", "--format", "toy"});
  EXPECT_EQ(gates.first, "toy check: 1 cells, gates, exit 0\n");
  EXPECT_EQ(gates.second, 0);
  const auto lint = run_command({"lint", flagtree, "--db", db, "--no-cache", "--no-config", "-q", "--format", "toy"});
  EXPECT_EQ(lint.first.rfind("toy lint: 1 reports, exit ", 0), 0u) << lint.first;
}

// The scan's answer and a failed run's go through the same row (the scan itself needs an index: its command
// line is tests/cli/test_scan.cpp's).
TEST(ToyFormat, ScanAndFailedRunAnswers) {
  scan::Report report;
  std::string out;
  output::Sinks sinks;
  sinks.out = [&out](std::string_view t) { out += t; };
  output::print({output::ScanAnswer{&report, 1}}, output::Format::Toy, sinks);
  EXPECT_EQ(out, "toy scan: 0 wheels, exit 1\n");
  out.clear();
  output::print({output::FailedRun{{}, 2}}, output::Format::Toy, sinks);
  EXPECT_EQ(out, "toy failed run, exit 2\n");
}

}  // namespace unity_test_toy_format
