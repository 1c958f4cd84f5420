// The table of output formats (include/wheelcheck/format.hpp).
#include "wheelcheck/format.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "wheelcheck/answer.hpp"
#include "wheelcheck/ci.hpp"
#include "wheelcheck/error.hpp"

namespace wheelcheck::output {

const std::vector<FormatRow>& formats() {
  static const std::vector<FormatRow> rows = {
      {Format::Text, "text", "for people; the default", k_check | k_scan | k_lint, 0, render_text},
      {Format::Json, "json", "for machines, as --json; docs/*.schema.json", k_check | k_gates | k_scan | k_lint,
       k_check | k_gates | k_scan | k_lint, render_json},
      {Format::Sh, "sh", "export lines for eval; gates' default", k_check | k_gates, 0, render_sh},
      {Format::Github, "github", "$GITHUB_ENV lines, annotations, step outputs", k_check | k_gates | k_lint, 0,
       render_github},
      {Format::Sarif, "sarif", "SARIF 2.1.0 for code scanning", k_check | k_gates | k_scan | k_lint,
       k_check | k_gates | k_scan | k_lint, render_sarif},
      {Format::Junit, "junit", "JUnit XML for test reports", k_check | k_gates | k_scan | k_lint,
       k_check | k_gates | k_scan | k_lint, render_junit},
      {Format::Markdown, "markdown", "a Markdown summary", k_lint, k_check | k_gates | k_scan | k_lint,
       render_markdown},
      {Format::Html, "html", "the scan's HTML report", 0, 0, nullptr},
#ifdef WHEELCHECK_TOY_FORMAT
      {Format::Toy, "toy", "a toy format (its test)", k_check | k_gates | k_scan | k_lint,
       k_check | k_gates | k_scan | k_lint, render_toy},
#endif
  };
  return rows;
}

const FormatRow& row(Format format) {
  for (const auto& r : formats()) {
    if (r.format == format) return r;
  }
  return formats().front();
}

std::string_view format_name(Format format) {
  return row(format).name;
}

std::optional<Format> format_named(std::string_view name) {
  for (const auto& r : formats()) {
    if (r.name == name) return r.format;
  }
  return std::nullopt;
}

namespace {
std::vector<std::string> names_where(unsigned FormatRow::*field, Commands command) {
  std::vector<std::string> out;
  for (const auto& r : formats()) {
    if ((r.*field & command) != 0) out.emplace_back(r.name);
  }
  return out;
}
}  // namespace

std::vector<std::string> printed_by(Commands command) {
  return names_where(&FormatRow::prints, command);
}

std::vector<std::string> written_by(Commands command) {
  return names_where(&FormatRow::files, command);
}

std::string format_help(Commands command) {
  std::string out;
  for (const auto& r : formats()) {
    if ((r.prints & command) == 0) continue;
    out += (out.empty() ? "" : ", ") + std::string(r.name) + " (" + std::string(r.help) + ")";
  }
  return out;
}

std::string dump(const nlohmann::ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace wheelcheck::output
