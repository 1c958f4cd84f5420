// The output formats: one enum and one table that the command line (--format, -o FORMAT=FILE, --help), the
// settings file (format, [output]) and the writers read. A new format is one row here and one renderer in
// inspector/output/ (where every renderer lives: text, matrix and side by side, JSON, gates for sh and
// GitHub, SARIF, JUnit, Markdown, HTML), dispatched in inspector/output/write.cpp. bloaty's OutputOptions
// and RollupOutput::Print are the model: the run makes a typed result, the format only renders it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelcheck::output {

enum class Format { Text, Json, Sh, Github, Sarif, Junit, Markdown, Html };

// The commands that print or write a format, as a set of bits.
enum Commands : unsigned { k_check = 1, k_gates = 2, k_scan = 4 };

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

}  // namespace wheelcheck::output
