// The output formats: one enum and one table that the command line (--format, -o FORMAT=FILE, --help: the
// format is parsed into a Format once, by inspector/cli/outputs.cpp's format_option), the settings file
// (format, [output]) and the printer read (output::print, include/wheelcheck/answer.hpp). A new format is
// one enum value, one row of formats() (inspector/output/format.cpp) and one renderer that reads every
// kind of answer; every command then prints it where its row says (tests/unit/test_toy_format.cpp builds
// one). bloaty's OutputOptions and RollupOutput::Print are the model: the run makes a typed result, the
// format only renders it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace wheelcheck::output {

enum class Format {
  Text,
  Json,
  Sh,
  Github,
  Sarif,
  Junit,
  Markdown,
  Html,
#ifdef WHEELCHECK_TOY_FORMAT
  Toy,  // only in the toy format's test build (tests/unit/test_toy_format.cpp)
#endif
};

struct Answer;
struct Sinks;
// A format's renderer: the text of an answer (and, for github, the lines it appends to the sinks' files).
using Renderer = std::string (*)(const Answer& answer, const Sinks& sinks);

// The commands that print or write a format, as a set of bits.
enum Commands : unsigned { k_check = 1, k_gates = 2, k_scan = 4, k_lint = 8 };

struct FormatRow {
  Format format;
  std::string_view name;  // as --format and -o spell it
  std::string_view help;  // one line for --help
  unsigned prints;        // the commands whose --format prints it on stdout
  unsigned files;         // the commands whose -o FORMAT=FILE writes it (and [output] in the settings file)
  Renderer render;        // null: no command prints or writes it (html: the scan's --report writes it)
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

// JSON as wheelcheck writes it: two-space indents, invalid UTF-8 from the network replaced, a final newline.
std::string dump(const nlohmann::ordered_json& j);

}  // namespace wheelcheck::output
