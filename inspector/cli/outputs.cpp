// What check, gates and the environment check write beside their main output (issue 30): the --output
// files, the exit code with --exit-zero, GitHub step outputs, the settings file's values, and a run that
// could not be made at all as the SARIF or JUnit document a CI upload step expects.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "wheelcheck/answer.hpp"
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

int exit_with(const CheckArgs& a, int rc) {
  using verdict::Verdict;
  const bool verdict_code = rc == verdict::exit_code(Verdict::Incompatible) ||
                            rc == verdict::exit_code(Verdict::Degraded) || rc == verdict::exit_code(Verdict::Unknown);
  return a.exit_zero && verdict_code ? 0 : rc;
}

CLI::Option* add_format_option(CLI::App& app, std::optional<output::Format>& format, output::Commands command,
                               const std::string& help) {
  // The name becomes a Format here, once: the table's names for this command, nothing else compared.
  return app
      .add_option_function<std::string>(
          "--format", [&format](const std::string& name) { format = output::format_named(name); },
          help.empty() ? output::format_help(command) : help)
      ->check(CLI::IsMember(output::printed_by(command)));
}

std::optional<output::Format> format_in_args(const std::vector<std::string>& args) {
  std::optional<output::Format> found;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i].rfind("--format=", 0) == 0) found = output::format_named(std::string_view(args[i]).substr(9));
    if (args[i] == "--format" && i + 1 < args.size()) found = output::format_named(args[i + 1]);
  }
  return found;
}

output::Sinks sinks_for(const CheckArgs& a) {
  output::Sinks s = stdout_sinks();
  s.files = parse_outputs(a.outputs, a.gates ? output::k_gates : output::k_check);
  if (a.format == output::Format::Github) {
    s.env_file = !a.env_file.empty() ? a.env_file : getenv_or("GITHUB_ENV", "");
    s.summary = a.summary;
    s.github_output = !a.github_output.empty() ? a.github_output : getenv_or("GITHUB_OUTPUT", "");
  }
  return s;
}

std::string dump_json(const nlohmann::ordered_json& j) {
  return output::dump(j);
}

void apply_settings(const Settings& s, CheckArgs& a) {
  if (a.images.empty() && s.images) a.images = s.images->values;
  if (a.assume.empty() && s.assume) a.assume = s.assume->values;
  if (a.rules.empty() && s.rules) a.rules = s.rules->values.front();
  if (a.verify.empty()) a.verify = s.verify ? s.verify->values.front() : "auto";
  if (!a.format && !a.json && !a.gates && s.format) a.format = output::format_named(s.format->values.front());
  if (a.outputs.empty() && s.outputs) a.outputs = s.outputs->values;
  if (!a.exit_zero && !a.gates && s.exit_zero) a.exit_zero = s.exit_zero->values.front() == "true";
  a.accepted = s.accept;
  warn_expired(s);
}

// A run that could not be made at all, in the SARIF or JUnit the job expects (an upload step still finds a
// document that says why), on stdout and in each --output of those formats: the formats whose renderer has a
// document of a failed run.
void print_failed_run(const CheckArgs& a, const Error& e) {
  output::FailedRun failed;
  failed.exit_code = exit_code_of(e);
  const std::string image = a.images.size() == 1 ? a.images.front() : "";
  failed.cases.push_back(ci::failed_case(image.empty() ? "(run)" : image, "",
                                         {a.wheels.empty() ? "" : a.wheels.front(), 0}, std::nullopt, e.what()));
  const output::Answer answer{std::move(failed)};
  auto has_document = [](output::Format f) { return f == output::Format::Sarif || f == output::Format::Junit; };
  output::Sinks sinks = stdout_sinks();
  std::vector<std::pair<output::Format, std::string>> files;
  try {
    files = parse_outputs(a.outputs, a.gates ? output::k_gates : output::k_check);
  } catch (const Error& bad_output) {
    if (bad_output.kind() == ErrorKind::Internal) throw;
    files.clear();  // -o itself is what stopped the run: its error is the one reported, no file is named
  }
  try {
    for (const auto& [what, path] : files) {
      if (has_document(what)) sinks.write(path, output::render(answer, what, sinks));
    }
  } catch (const Error& write_error) {  // the run's own error is the one the exit code reports
    if (write_error.kind() == ErrorKind::Internal) throw;
    warn(std::string("the failed run's report was not written: ") + write_error.what());
  }
  if (a.format && has_document(*a.format)) sinks.out(output::render(answer, *a.format, sinks));
}

}  // namespace wheelcheck::cli
