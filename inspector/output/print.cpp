// The one printer (include/wheelcheck/answer.hpp): every answer in every format, through the format
// table's renderers. Each renderer reads the answer as the command filled it; nothing here decides a
// verdict, a gate or an exit code.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "wheelcheck/answer.hpp"
#include "wheelcheck/check_text.hpp"
#include "wheelcheck/ci.hpp"
#include "wheelcheck/environment.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/format.hpp"
#include "wheelcheck/gates.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/report.hpp"
#include "wheelcheck/scan.hpp"

namespace wheelcheck::output {

namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void no_rendering(const Answer& answer, Format format) {
  static constexpr const char* k_names[] = {"check", "environment", "lint", "scan", "failed run"};
  throw Error(ErrorKind::Internal,
              "no " + std::string(format_name(format)) + " rendering of a " + k_names[answer.value.index()]);
}

// The gates of a check or an environment; none for lint or a failed run.
const gates::Result* gates_in(const Answer& answer) {
  if (const auto* c = std::get_if<CheckAnswer>(&answer.value)) return &c->gates;
  if (const auto* e = std::get_if<EnvironmentAnswer>(&answer.value)) return &e->gates;
  return nullptr;
}

int exit_code_in(const Answer& answer) {
  return std::visit([](const auto& a) { return a.exit_code; }, answer.value);
}

// A check's wheels and images as SARIF and JUnit cases: for each wheel as given, a case per image.
std::vector<ci::Case> check_cases(const CheckAnswer& c) {
  std::vector<ci::Case> out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < c.wheels.size(); ++i) {
    const ci::Location where{c.wheels[i], 0};
    for (const auto& t : *c.images) {
      if (c.problems[i]) {
        const std::string name = c.wheels[i].substr(c.wheels[i].find_last_of('/') + 1);
        out.push_back(ci::failed_case(t.image.name, name, where, std::nullopt, c.problems[i]->text));
      } else {
        out.push_back(ci::case_of(c.cells[next++], where));
      }
    }
  }
  return out;
}

// Each checked wheel of an environment, and each package that has no wheel for the image or could not be
// read, located on the line of the lock that names it.
std::vector<ci::Case> environment_cases(const EnvironmentAnswer& a) {
  using environment::Entry;
  std::vector<ci::Case> out;
  for (const auto& env : *a.environments) {
    std::size_t next = 0;
    for (std::size_t i = 0; i < env.entries.size(); ++i) {
      const Entry& e = env.entries[i];
      const ci::Location where = ci::location_of(e.source.empty() ? e.file.where() : e.source);
      if (next < env.cell_entry.size() && env.cell_entry[next] == i) {
        if (!e.beside) out.push_back(ci::case_of(env.judged->cells[next], where));
        ++next;
      } else if (e.state != Entry::State::Checked && e.state != Entry::State::Skipped) {
        const std::string what = e.name + (e.version.empty() ? "" : " " + e.version) + ": " + e.reason;
        const std::optional<verdict::Verdict> v =
            e.state == Entry::State::NoWheel   ? std::optional(verdict::Verdict::Incompatible)
            : e.state == Entry::State::Unknown ? std::optional(verdict::Verdict::Unknown)
                                               : std::nullopt;
        out.push_back(ci::failed_case(env.image, e.file.filename.empty() ? e.name : e.file.filename, where, v, what));
      }
    }
  }
  return out;
}

// The answer a file holds: the run's document (gates' -o json is the check's JSON, not the gates').
Answer document_of(const Answer& answer) {
  Answer a = answer;
  if (auto* c = std::get_if<CheckAnswer>(&a.value)) c->as_gates = false;
  if (auto* e = std::get_if<EnvironmentAnswer>(&a.value)) e->as_gates = false;
  return a;
}

}  // namespace

Json problem_json(const Problem& p) {
  Json j;
  // The same shape as a verdict's "wheel": an object, with the file name and the argument as given.
  const auto slash = p.wheel.find_last_of('/');
  j["wheel"] = {{"filename", slash == std::string::npos ? p.wheel : p.wheel.substr(slash + 1)}, {"given", p.wheel}};
  j["error"] = {{"kind", p.kind}, {"message", p.text}, {"exit_code", p.exit_code}};
  return j;
}

std::vector<ci::Case> cases_of(const Answer& answer) {
  if (const auto* c = std::get_if<CheckAnswer>(&answer.value)) return check_cases(*c);
  if (const auto* e = std::get_if<EnvironmentAnswer>(&answer.value)) return environment_cases(*e);
  if (const auto* l = std::get_if<LintAnswer>(&answer.value)) {
    std::vector<ci::Case> out;
    for (std::size_t i = 0; i < l->reports->size(); ++i)
      out.push_back(lint::publisher_case((*l->reports)[i], (*l->where)[i]));
    return out;
  }
  if (const auto* s = std::get_if<ScanAnswer>(&answer.value)) return ci::cases_of_scan(*s->report);
  return std::get<FailedRun>(answer.value).cases;
}

std::string render_text(const Answer& answer, const Sinks& sinks) {
  if (const auto* c = std::get_if<CheckAnswer>(&answer.value)) {
    if (c->as_gates) no_rendering(answer, Format::Text);
    if (c->cells.size() == 1)
      return sinks.wrap(cell_text(c->cells.front(), sinks.color) + beside_text(c->beside, c->overall, c->exit_code));
    if (c->names.size() == 1 && c->images->size() <= k_side_by_side_max)
      return side_by_side_text(c->cells, c->names.front(), *c->images, sinks.color);
    if (!c->cells.empty()) return matrix_text(c->cells, c->names, *c->images, sinks.color, sinks.width);
    return "";
  }
  if (const auto* e = std::get_if<EnvironmentAnswer>(&answer.value)) {
    if (e->as_gates) no_rendering(answer, Format::Text);
    std::string out;
    for (std::size_t k = 0; k < e->environments->size(); ++k) {
      if (k != 0) out += "\n";
      out += sinks.wrap(
          environment::text((*e->environments)[k], *e->wheels, *e->locks, (*e->images)[k].image, sinks.color));
    }
    return out;
  }
  if (const auto* l = std::get_if<LintAnswer>(&answer.value)) {
    std::string out;
    for (std::size_t i = 0; i < l->reports->size(); ++i)
      out += (i == 0 ? "" : "\n") + lint::render_text((*l->reports)[i], sinks.color);
    return out;
  }
  if (const auto* s = std::get_if<ScanAnswer>(&answer.value)) return scan::report_text(*s->report);
  return "";  // a failed run: its error is on stderr
}

std::string render_json(const Answer& answer, const Sinks&) {
  if (const auto* c = std::get_if<CheckAnswer>(&answer.value)) {
    if (c->as_gates) return dump(gates::to_json(c->gates));
    Json arr = Json::array();
    std::size_t next = 0;
    for (std::size_t i = 0; i < c->wheels.size(); ++i) {
      if (c->problems[i]) {
        arr.push_back(problem_json(*c->problems[i]));
        continue;
      }
      for (std::size_t k = 0; k < c->images->size(); ++k)
        arr.push_back(run::to_json(c->cells[next++], run::Size::Document));
    }
    return dump(arr.size() == 1 ? arr.front() : arr);
  }
  if (const auto* e = std::get_if<EnvironmentAnswer>(&answer.value)) {
    if (e->as_gates) return dump(gates::to_json(e->gates));
    Json arr = Json::array();
    for (const auto& env : *e->environments) arr.push_back(environment::to_json(env, *e->wheels, *e->locks));
    return dump(arr.size() == 1 ? arr.front() : arr);
  }
  if (const auto* l = std::get_if<LintAnswer>(&answer.value)) return dump(lint::document(*l->entries, l->exit_code));
  if (const auto* s = std::get_if<ScanAnswer>(&answer.value)) {
    std::string text;  // output::dump's bytes, written a wheel at a time (no JSON tree of the whole report)
    scan::write_json(*s->report, [&](std::string_view piece) { text.append(piece); });
    return text;
  }
  no_rendering(answer, Format::Json);
}

std::string render_sh(const Answer& answer, const Sinks&) {
  if (const gates::Result* g = gates_in(answer)) return gates::to_sh(*g);
  no_rendering(answer, Format::Sh);
}

std::string render_github(const Answer& answer, const Sinks& sinks) {
  if (const auto* l = std::get_if<LintAnswer>(&answer.value)) return lint::render_github(*l->reports);
  const gates::Result* g = gates_in(answer);
  if (g == nullptr) no_rendering(answer, Format::Github);
  // Gate lines to --env-file or $GITHUB_ENV (else stdout, for `>> "$GITHUB_ENV"`, with the annotations on
  // stderr); the runner reads workflow commands on stdout.
  std::string out;
  const std::string annotations = gates::github_annotations(*g);
  if (sinks.env_file.empty()) {
    out = gates::github_env(*g);
    sinks.err(annotations);
  } else {
    sinks.append(sinks.env_file, gates::github_env(*g));
    out = annotations;
  }
  if (!sinks.summary.empty()) sinks.append(sinks.summary, gates::markdown_summary(*g));
  if (!sinks.github_output.empty()) {
    Json gate_values = Json::object();
    std::vector<std::pair<std::string, std::string>> lines = {
        {"verdict", g->error.empty() ? verdict::verdict_name(g->verdict) : "error"},
        {"exit-code", std::to_string(exit_code_in(answer))}};
    for (const auto& gate : g->gates) gate_values[gate.variable] = gate.value;
    lines.emplace_back("gates", gate_values.dump(-1, ' ', false, Json::error_handler_t::replace));
    for (const auto& gate : g->gates) lines.emplace_back(gate.variable, gate.value);
    sinks.append(sinks.github_output, github_output_lines(lines));
  }
  return out;
}

std::string render_sarif(const Answer& answer, const Sinks&) {
  return dump(ci::sarif(cases_of(answer), exit_code_in(answer)));
}

std::string render_junit(const Answer& answer, const Sinks&) {
  return ci::junit(cases_of(answer));
}

std::string render_markdown(const Answer& answer, const Sinks&) {
  if (const gates::Result* g = gates_in(answer)) return gates::markdown_summary(*g);
  if (const auto* l = std::get_if<LintAnswer>(&answer.value)) return lint::render_markdown(*l->reports);
  if (const auto* s = std::get_if<ScanAnswer>(&answer.value)) return scan::report_markdown(*s->report);
  no_rendering(answer, Format::Markdown);
}

bool reads_gates(Format format, bool as_gates, const Sinks& sinks) {
  auto reads = [](Format f) { return f == Format::Sh || f == Format::Github || f == Format::Markdown; };
  if (reads(format) || (as_gates && format == Format::Json)) return true;
  return std::any_of(sinks.files.begin(), sinks.files.end(), [&](const auto& file) { return reads(file.first); });
}

std::string render(const Answer& answer, Format format, const Sinks& sinks) {
  const Renderer r = row(format).render;
  if (r == nullptr) throw Error(ErrorKind::Internal, "no renderer for format " + std::string(format_name(format)));
  return r(answer, sinks);
}

void print(const Answer& answer, Format format, const Sinks& sinks) {
  if (!sinks.files.empty()) {
    const Answer document = document_of(answer);
    for (const auto& [what, path] : sinks.files) sinks.write(path, render(document, what, sinks));
  }
  sinks.out(render(answer, format, sinks));
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

}  // namespace wheelcheck::output
