// A command's answer as one typed value, and the one printer of every answer in every format (issue 61):
// check and gates (run::run's cells, the wheels that could not be read, the gates), an environment
// (a lock's packages per image), the publisher check (lint's reports) and a run that could not be made at
// all. The command fills the answer; output::print writes it to stdout in the format the command line
// parsed (output::Format) and to each -o FORMAT=FILE, through the row of the format table
// (include/wheelcheck/format.hpp) that holds the format's renderer. Renderers only read the answer.
// bloaty's RollupOutput::Print is the model: the run makes a typed result, the format only renders it.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "wheelcheck/ci.hpp"
#include "wheelcheck/environment.hpp"
#include "wheelcheck/format.hpp"
#include "wheelcheck/gates.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/rules.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::scan {
struct Report;
}

namespace wheelcheck::output {

// A wheel that could not be read: its entry in the JSON ({"wheel", "error": {kind, message, exit_code}})
// and its case in SARIF and JUnit.
struct Problem {
  std::string kind;   // usage, bad-input, io, internal (cli's error_kind_name)
  std::string wheel;  // as given
  std::string text;
  int exit_code = 2;
};

// check and gates: one wheel or several against one image or several (wheel-major cells), the --with
// wheels' own cells (image-major), the wheels that could not be read (`problems[i]` for `wheels[i]`), the
// gates of them all, and the exit code every format reports.
struct CheckAnswer {
  std::vector<std::string> wheels;               // as given, one per argument
  std::vector<std::optional<Problem>> problems;  // one per argument: set when it could not be read
  std::vector<std::string> names;                // the file names of the wheels read
  const std::vector<run::Target>* images = nullptr;
  std::vector<run::Cell> cells;   // wheel-major: for each wheel read, a cell per image
  std::vector<run::Cell> beside;  // the --with wheels' cells, image-major
  verdict::Verdict overall = verdict::Verdict::Compatible;
  gates::Result gates;
  bool as_gates = false;  // the gates command, or check --format sh/github: stdout is the gates
  int exit_code = 0;
};

// An environment: a lock (and wheels named with it) installed together, per image.
struct EnvironmentAnswer {
  const std::vector<environment::Environment>* environments = nullptr;
  const std::vector<environment::ReadWheel>* wheels = nullptr;
  const std::vector<std::string>* locks = nullptr;
  const std::vector<run::Target>* images = nullptr;
  gates::Result gates;
  bool as_gates = false;
  int exit_code = 0;
};

// The publisher check: a report per wheel read, the JSON entry of every wheel (a report or an error).
struct LintAnswer {
  const std::vector<lint::Report>* reports = nullptr;
  const std::vector<std::string>* where = nullptr;  // how each report's wheel was named
  const std::vector<nlohmann::ordered_json>* entries = nullptr;
  int exit_code = 0;
};

// The nightly scan: its typed report (include/wheelcheck/scan.hpp) and the exit code (--exit-zero applied).
struct ScanAnswer {
  const scan::Report* report = nullptr;
  int exit_code = 0;
};

// A run that could not be made at all (an unknown image, a settings file with errors): its one failed
// case, for the SARIF or JUnit document an upload step expects; no other format has a document of it.
struct FailedRun {
  std::vector<ci::Case> cases;
  int exit_code = 2;
};

struct Answer {
  std::variant<CheckAnswer, EnvironmentAnswer, LintAnswer, ScanAnswer, FailedRun> value;
};

// Where an answer goes: standard output and error, the files, the terminal's traits. The command line fills
// it (inspector/cli/output.cpp: sinks_for); a test fills it with strings.
struct Sinks {
  std::function<void(std::string_view)> out;                           // standard output, every write checked
  std::function<void(std::string_view)> err;                           // standard error
  std::function<void(const std::string&, const std::string&)> write;   // a whole file, atomically
  std::function<void(const std::string&, const std::string&)> append;  // appended to a file
  std::function<std::string(const std::string&)> wrap;                 // text wrapped to a terminal, or as is
  bool color = false;
  std::size_t width = 120;                            // where a matrix cell must be cut
  std::vector<std::pair<Format, std::string>> files;  // -o FORMAT=FILE
  // github: the files the annotations, gate lines and step outputs go to ("" for none: the lines go to stdout).
  std::string env_file, summary, github_output;
};

// The answer on stdout in `format` and in each of sinks.files in its own (a file holds the run's
// document: for gates, the check's, not the gates). A format a command does not print is refused when the
// command line is parsed (the table's `prints`); here it is Error(Internal).
void print(const Answer& answer, Format format, const Sinks& sinks);
// The text of `format` for a file or a test: what print writes to one -o FORMAT=FILE.
std::string render(const Answer& answer, Format format, const Sinks& sinks);

// The renderers of the table (inspector/output/print.cpp): each reads every kind of answer.
std::string render_text(const Answer& answer, const Sinks& sinks);
std::string render_json(const Answer& answer, const Sinks& sinks);
std::string render_sh(const Answer& answer, const Sinks& sinks);
std::string render_github(const Answer& answer, const Sinks& sinks);
std::string render_sarif(const Answer& answer, const Sinks& sinks);
std::string render_junit(const Answer& answer, const Sinks& sinks);
std::string render_markdown(const Answer& answer, const Sinks& sinks);
#ifdef WHEELCHECK_TOY_FORMAT
std::string render_toy(const Answer& answer, const Sinks& sinks);  // defined by the toy format's test
#endif

// Whether printing in `format` and to sinks.files reads an answer's gates (sh, github, markdown; json when the
// answer is printed as gates): a command fills the answer's gates only then (merging them copies every report
// of the run: 40 images' worth for --image all).
bool reads_gates(Format format, bool as_gates, const Sinks& sinks);

// The cases SARIF and JUnit render, for any answer (each holds its cell whole).
std::vector<ci::Case> cases_of(const Answer& answer);
// A wheel that could not be read as an entry of a JSON document that still parses (docs/*.schema.json:
// "failure"): {"wheel": {"filename", "given"}, "error": {"kind", "message", "exit_code"}}.
nlohmann::ordered_json problem_json(const Problem& problem);
// key=value lines for $GITHUB_OUTPUT (a value with a newline in the key<<DELIMITER form).
std::string github_output_lines(const std::vector<std::pair<std::string, std::string>>& outputs);

}  // namespace wheelcheck::output
