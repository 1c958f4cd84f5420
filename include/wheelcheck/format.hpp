// The output formats: one enum and one table that the command line (--format, -o FORMAT=FILE, --help), the
// settings file (format, [output]) and the writers read. A new format is one row here and one renderer in
// inspector/output/ (where every renderer lives: text, matrix and side by side, JSON, gates for sh and
// GitHub, SARIF, JUnit, Markdown, HTML); what check, gates and the scan write to a file (-o FORMAT=FILE, and
// --format sarif/junit on stdout) goes through the one dispatcher, render() (inspector/output/format.cpp).
// bloaty's OutputOptions and RollupOutput::Print are the model: the run makes a typed result, the format
// only renders it. A new format: a row of formats(), its renderer in inspector/output/, a case of render().
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace wheelcheck::ci {
struct Case;
}

namespace wheelcheck::output {

enum class Format { Text, Json, Sh, Github, Sarif, Junit, Markdown, Html };

// The commands that print or write a format, as a set of bits.
enum Commands : unsigned { k_check = 1, k_gates = 2, k_scan = 4, k_lint = 8 };

struct FormatRow {
  Format format;
  std::string_view name;  // as --format and -o spell it
  std::string_view help;  // one line for --help
  unsigned prints;        // the commands whose --format prints it on stdout
  unsigned files;         // the commands whose -o FORMAT=FILE writes it (and [output] in the settings file)
};

// Every format, in the order --help lists them.
const std::vector<FormatRow>& formats();
const FormatRow& row(Format format);
std::string_view format_name(Format format);
std::optional<Format> format_named(std::string_view name);
// The names a command prints (--format) or writes (-o), in table order: what its validators accept.
std::vector<std::string> printed_by(Commands command);
std::vector<std::string> written_by(Commands command);
// "text (people), json (...), ...": the --format help of a command, from the rows' help.
std::string format_help(Commands command);

// What a run hands the file renderers: its cases (SARIF, JUnit), its exit code (each SARIF invocation's), and
// its JSON document and Markdown summary, made only when a format asks for them.
struct Run {
  std::function<std::vector<ci::Case>()> cases;  // made when SARIF or JUnit asks (each holds its cell whole)
  int exit_code = 0;
  std::function<nlohmann::ordered_json()> json;
  std::function<std::string()> markdown;
};
// The text of `format` for a file (-o FORMAT=FILE) or for stdout (--format sarif, junit); Error(Internal) for
// a format that is never written whole (text, sh, github, html: their commands print them).
std::string render(Format format, const Run& run);
// JSON as wheelcheck writes it: two-space indents, invalid UTF-8 from the network replaced, a final newline.
std::string dump(const nlohmann::ordered_json& j);

}  // namespace wheelcheck::output
