// The publisher check's renderings (include/wheelcheck/lint.hpp): text for people, JSON for machines
// (docs/lint.schema.json), Markdown, GitHub annotations, and the cases SARIF and JUnit read (ci::Case, image
// "publisher").
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "wheelcheck/ci.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::lint {

using verdict::Severity;

nlohmann::ordered_json to_json(const Report& r) {
  nlohmann::ordered_json j;
  j["wheel"] = r.wheel;
  j["source"] = r.source.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.source);
  j["sha256"] = r.sha256;
  j["integrity"] = r.integrity;
  j["status"] = status_name(r.status);
  j["exit_code"] = exit_code(r);
  j["claims"] = {{"said", r.claims.said}, {"shown", r.claims.shown}};
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  for (const auto& f : r.findings) findings.push_back(verdict::finding_to_json(f));
  j["findings"] = std::move(findings);
  j["notes"] = r.notes;
  return j;
}

nlohmann::ordered_json document(const std::vector<nlohmann::ordered_json>& wheels, int exit_code) {
  nlohmann::ordered_json j;
  j["schema"] = k_lint_schema;
  j["tool"] = {{"name", "wheelcheck"}, {"version", WHEELCHECK_VERSION}};
  j["exit_code"] = exit_code;
  j["wheels"] = wheels;
  return j;
}

namespace {

struct Ink {
  bool color;
  std::string paint(const std::string& s, const char* code) const {
    return color ? std::string("\x1b[") + code + "m" + s + "\x1b[0m" : s;
  }
};

std::string severity_label(Severity s, const Ink& ink) {
  switch (s) {
    case Severity::Error: return ink.paint("error  ", "31;1");
    case Severity::Warning: return ink.paint("warning", "33;1");
    case Severity::Condition: return ink.paint("if     ", "33");
    case Severity::Info: return ink.paint("info   ", "36");
  }
  return "info   ";
}

std::size_t count_of(const Report& r, Severity s) {
  return static_cast<std::size_t>(
      std::count_if(r.findings.begin(), r.findings.end(), [&](const verdict::Finding& f) { return f.severity == s; }));
}

std::string tally(const Report& r) {
  const std::size_t e = count_of(r, Severity::Error), w = count_of(r, Severity::Warning),
                    i = count_of(r, Severity::Info);
  if (e + w + i == 0) return "clean: what it claims is what its binaries do";
  std::vector<std::string> parts;
  if (e != 0) parts.push_back(fmt::format("{} error{}", e, e == 1 ? "" : "s"));
  if (w != 0) parts.push_back(fmt::format("{} warning{}", w, w == 1 ? "" : "s"));
  if (i != 0) parts.push_back(fmt::format("{} note{}", i, i == 1 ? "" : "s"));
  return join(parts, ", ");
}

}  // namespace

std::string render_text(const Report& r, bool color) {
  const Ink ink{color};
  std::string out = ink.paint(r.wheel, "1") + ": " + tally(r) + "\n";
  for (const auto& s : r.claims.said) out += "  says   " + s + "\n";
  for (const auto& s : r.claims.shown) out += "  shows  " + s + "\n";
  for (const auto& f : r.findings) {
    out += "\n  " + severity_label(f.severity, ink) + "  " + ink.paint(verdict::kind_name(f.kind), "1") + "  " +
           (f.member.empty() ? "" : f.member + ": ") + verdict::summary(f) + "\n";
    if (!f.explanation.empty()) out += "           " + f.explanation + "\n";
    if (!f.symbols.empty())
      out +=
          "           symbols: " + join(f.symbols, ", ") +
          (f.symbols_total > f.symbols.size() ? fmt::format(" and {} more", f.symbols_total - f.symbols.size()) : "") +
          "\n";
    if (!f.fix.empty()) out += "           fix: " + f.fix + "\n";
  }
  for (const auto& n : r.notes) out += "  note: " + n + "\n";
  return out;
}

std::string render_markdown(const std::vector<Report>& reports) {
  std::string out = "## wheelcheck lint: what each wheel claims against its binaries\n\n";
  out += "| wheel | status | errors | warnings | notes |\n|---|---|---|---|---|\n";
  for (const auto& r : reports) {
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", r.wheel, status_name(r.status), count_of(r, Severity::Error),
                       count_of(r, Severity::Warning), count_of(r, Severity::Info));
  }
  for (const auto& r : reports) {
    if (r.findings.empty()) continue;
    out += "\n### `" + r.wheel + "`\n\n";
    for (const auto& f : r.findings) {
      out += fmt::format("- **{}** `{}`{}: {}. {}", verdict::severity_name(f.severity), verdict::kind_name(f.kind),
                         f.member.empty() ? "" : " `" + f.member + "`", verdict::summary(f), f.explanation);
      if (!f.fix.empty()) out += " *Fix:* " + f.fix;
      out += "\n";
    }
  }
  return out;
}

namespace {

// GitHub's workflow commands escape %, CR and LF in messages (and also : and , in properties).
std::string gh_escape(const std::string& s, bool property) {
  std::string out;
  for (char c : s) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else if (property && c == ':')
      out += "%3A";
    else if (property && c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string render_github(const std::vector<Report>& reports) {
  std::string out;
  for (const auto& r : reports) {
    for (const auto& f : r.findings) {
      if (f.severity != Severity::Error && f.severity != Severity::Warning) continue;
      const std::string file = r.source.empty() ? r.wheel : r.source;
      out += fmt::format(
          "::{} file={},title={}::{}\n", f.severity == Severity::Error ? "error" : "warning", gh_escape(file, true),
          gh_escape("wheelcheck lint: " + verdict::kind_name(f.kind) + ": " + verdict::summary(f), true),
          gh_escape((f.member.empty() ? "" : f.member + ": ") + f.explanation + (f.fix.empty() ? "" : " Fix: " + f.fix),
                    false));
    }
  }
  return out;
}

std::string headline(const Report& r) {
  if (r.findings.empty() || r.findings.front().severity == verdict::Severity::Info) return "";  // worst first
  const auto& f = r.findings.front();
  return (f.member.empty() ? "" : f.member + ": ") + verdict::summary(f) + "  [" + verdict::kind_name(f.kind) + "]";
}

ci::Case publisher_case(const Report& r, const std::string& where) {
  run::Cell cell;
  cell.image = ci::k_publisher;
  cell.report.wheel = r.wheel;
  cell.report.wheel_sha256 = r.sha256;
  cell.report.image = ci::k_publisher;
  cell.report.image_summary = "the wheel on its own: what it claims against what its binaries do";
  cell.report.findings = r.findings;
  cell.report.notes = r.notes;
  cell.report.verdict = r.status == Status::Errors     ? verdict::Verdict::Incompatible
                        : r.status == Status::Warnings ? verdict::Verdict::Degraded
                                                       : verdict::Verdict::Compatible;
  cell.headline = r.findings.empty() ? "" : verdict::summary(r.findings.front());
  return ci::case_of(cell, ci::location_of(where.empty() ? r.wheel : where));
}

// --- the lint cache's form: JSON arrays in Report's and Finding's field order, enums by name --------------------

namespace {

using CacheJson = nlohmann::json;

CacheJson lint_cache_finding(const verdict::Finding& f) {
  return CacheJson::array({verdict::kind_name(f.kind), verdict::severity_name(f.severity), f.member, f.library,
                           f.symbol, f.demangled, f.required_version, verdict::why_name(f.classification),
                           f.explanation, f.fix, f.candidates, f.symbols, f.symbols_total, f.evidence, f.object,
                           f.roots, f.provider});
}

template <typename E, typename NameOf>
std::optional<E> lint_cache_enum(const std::string& name, int last, NameOf name_of) {
  for (int i = 0; i <= last; ++i) {
    if (name_of(static_cast<E>(i)) == name) return static_cast<E>(i);
  }
  return std::nullopt;
}

std::optional<verdict::Finding> lint_cache_finding_of(const CacheJson& j) {
  if (!j.is_array() || j.size() != 17) return std::nullopt;
  verdict::Finding f;
  const auto kind =
      lint_cache_enum<verdict::FindingKind>(j[0].get<std::string>(), static_cast<int>(verdict::k_last_finding_kind),
                                            [](verdict::FindingKind k) { return verdict::kind_name(k); });
  const auto severity = lint_cache_enum<Severity>(j[1].get<std::string>(), static_cast<int>(Severity::Error),
                                                  [](Severity s) { return verdict::severity_name(s); });
  const auto why =
      lint_cache_enum<verdict::Why>(j[7].get<std::string>(), static_cast<int>(verdict::Why::UnknownExports),
                                    [](verdict::Why w) { return verdict::why_name(w); });
  if (!kind || !severity || !why) return std::nullopt;
  f.kind = *kind;
  f.severity = *severity;
  f.classification = *why;
  f.member = j[2].get<std::string>();
  f.library = j[3].get<std::string>();
  f.symbol = j[4].get<std::string>();
  f.demangled = j[5].get<std::string>();
  f.required_version = j[6].get<std::string>();
  f.explanation = j[8].get<std::string>();
  f.fix = j[9].get<std::string>();
  f.candidates = j[10].get<std::vector<std::string>>();
  f.symbols = j[11].get<std::vector<std::string>>();
  f.symbols_total = j[12].get<std::size_t>();
  f.evidence = j[13].get<std::vector<std::string>>();
  f.object = j[14].get<std::string>();
  f.roots = j[15].get<std::vector<std::string>>();
  f.provider = j[16].get<bool>();
  return f;
}

}  // namespace

std::string report_to_cache(const Report& r) {
  CacheJson findings = CacheJson::array();
  for (const auto& f : r.findings) findings.push_back(lint_cache_finding(f));
  return CacheJson::array({k_lint_cache_format, r.wheel, r.sha256, r.source, r.integrity, r.claims.said, r.claims.shown,
                           std::move(findings), r.notes, status_name(r.status), r.intact})
      .dump();
}

std::optional<Report> report_from_cache(std::string_view text) {
  try {
    const auto j = CacheJson::parse(text);
    if (!j.is_array() || j.size() != 11 || j[0] != k_lint_cache_format) return std::nullopt;
    Report r;
    r.wheel = j[1].get<std::string>();
    r.sha256 = j[2].get<std::string>();
    r.source = j[3].get<std::string>();
    r.integrity = j[4].get<std::string>();
    r.claims.said = j[5].get<std::vector<std::string>>();
    r.claims.shown = j[6].get<std::vector<std::string>>();
    for (const auto& fj : j[7]) {
      auto f = lint_cache_finding_of(fj);
      if (!f) return std::nullopt;
      r.findings.push_back(std::move(*f));
    }
    r.notes = j[8].get<std::vector<std::string>>();
    const auto status = lint_cache_enum<Status>(j[9].get<std::string>(), static_cast<int>(Status::Errors),
                                                [](Status s) { return status_name(s); });
    if (!status) return std::nullopt;
    r.status = *status;
    r.intact = j[10].get<bool>();
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace wheelcheck::lint
