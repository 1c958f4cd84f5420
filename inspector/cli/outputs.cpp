// What check, gates and the environment check write beside their main output (issue 30): the --output
// files, the exit code with --exit-zero, GitHub step outputs, the settings file's values, and a run that
// could not be made at all as the SARIF or JUnit document a CI upload step expects.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "wheelcheck/ci.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cli {

std::vector<std::pair<output::Format, std::string>> parse_outputs(const std::vector<std::string>& values,
                                                                  output::Commands command) {
  const std::vector<std::string> known = output::written_by(command);
  std::vector<std::pair<output::Format, std::string>> out;
  for (const auto& v : values) {
    const auto eq = v.find('=');
    const std::string format = eq == std::string::npos ? v : v.substr(0, eq);
    if (eq == std::string::npos || eq + 1 == v.size())
      throw usage_error("--output " + v + ": FORMAT=FILE (" + join(known, ", ") + ")");
    if (std::find(known.begin(), known.end(), format) == known.end()) {
      const auto near = closest(format, known);
      throw usage_error("--output " + v + ": unknown format '" + format + "'" +
                        (near ? " (did you mean " + *near + "?)" : "") + "; formats: " + join(known, ", "));
    }
    out.emplace_back(*output::format_named(format), v.substr(eq + 1));
  }
  return out;
}

void append_to_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) throw io_error("cannot append to " + path);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw io_error("cannot write " + path);
}

std::string github_output_lines(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::string out;
  for (const auto& [k, v] : outputs) {
    if (v.find('\n') == std::string::npos && v.find('\r') == std::string::npos) {
      out += k + "=" + v + "\n";
      continue;
    }
    std::string delimiter = "WHEELCHECK_EOF";
    while (v.find(delimiter) != std::string::npos) delimiter += "_";
    out += k + "<<" + delimiter + "\n" + v + "\n" + delimiter + "\n";
  }
  return out;
}

int exit_with(const CheckArgs& a, int rc) {
  using verdict::Verdict;
  const bool verdict_code = rc == verdict::exit_code(Verdict::Incompatible) ||
                            rc == verdict::exit_code(Verdict::Degraded) || rc == verdict::exit_code(Verdict::Unknown);
  return a.exit_zero && verdict_code ? 0 : rc;
}

void write_outputs(const CheckArgs& a, const std::string& format, int rc,
                   const std::function<std::vector<ci::Case>()>& cases,
                   const std::function<nlohmann::ordered_json()>& json_doc,
                   const std::function<std::string()>& markdown) {
  // The one dispatcher of the output room; a format the run cannot write is refused by parse_outputs.
  const output::Run run{cases, rc, json_doc, markdown};
  auto render = [&](output::Format f) { return output::render(f, run); };
  for (const auto& [what, path] : parse_outputs(a.outputs, a.gates ? output::k_gates : output::k_check))
    write_file_atomic(path, render(what));
  if (format == "sarif" || format == "junit") print_out(render(*output::format_named(format)));
}

std::string dump_json(const nlohmann::ordered_json& j) {
  return output::dump(j);
}

void apply_settings(const Settings& s, CheckArgs& a) {
  if (a.images.empty() && s.images) a.images = s.images->values;
  if (a.assume.empty() && s.assume) a.assume = s.assume->values;
  if (a.rules.empty() && s.rules) a.rules = s.rules->values.front();
  if (a.verify.empty()) a.verify = s.verify ? s.verify->values.front() : "auto";
  if (a.format.empty() && !a.json && !a.gates && s.format) a.format = s.format->values.front();
  if (a.outputs.empty() && s.outputs) a.outputs = s.outputs->values;
  if (!a.exit_zero && !a.gates && s.exit_zero) a.exit_zero = s.exit_zero->values.front() == "true";
  a.accepted = s.accept;
  warn_expired(s);
}

// A run that could not be made at all, in the SARIF or JUnit the job expects (an upload step still finds a
// document that says why), on stdout and in each --output of those formats.
void print_failed_run(const CheckArgs& a, const std::string& format, const Error& e) {
  std::vector<ci::Case> none;
  const int rc = exit_code_of(e);
  const std::string image = a.images.size() == 1 ? a.images.front() : "";
  none.push_back(ci::failed_case(image.empty() ? "(run)" : image, "", {a.wheels.empty() ? "" : a.wheels.front(), 0},
                                 std::nullopt, e.what()));
  try {
    for (const auto& [what, path] : parse_outputs(a.outputs, a.gates ? output::k_gates : output::k_check)) {
      if (what == output::Format::Sarif) write_file_atomic(path, dump_json(ci::sarif(none, rc)));
      if (what == output::Format::Junit) write_file_atomic(path, ci::junit(none));
    }
  } catch (const Error&) {  // the first error is the one to report
  }
  if (format == "sarif") print_out(dump_json(ci::sarif(none, rc)));
  if (format == "junit") print_out(ci::junit(none));
}

}  // namespace wheelcheck::cli
