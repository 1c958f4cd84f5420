// The cases of a run (check cells, environments, a scan report) and their SARIF 2.1.0 log
// (../shared/reference/sarif-schema-2.1.0.json; GitHub's code scanning reads it). Reasons for people are
// written in pip's words (pypa/pip#14281: "requires glibc 2.39+ (image: 2.35)").
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>

#include "wheelcheck/ci.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::ci {

namespace sarif_detail {

using ojson = nlohmann::ordered_json;
using verdict::FindingKind;
using verdict::Severity;

constexpr const char* k_docs = "https://github.com/flagos-ai/wheelcheck/blob/main/docs/verdict.md";
constexpr const char* k_sarif_schema = "https://json.schemastore.org/sarif-2.1.0.json";

// A fingerprint that stays the same from one run (and one release of the wheel) to the next: what the
// finding is about, not where the text of its message happens to be.
std::string fingerprint(const Case& c, const verdict::Finding& f) {
  const std::string project = c.wheel().substr(0, c.wheel().find('-'));
  Hasher h;
  for (const std::string& part : {rule_id(f), project, c.image(), f.member, f.object, f.library, f.symbol,
                                  f.required_version, verdict::severity_name(f.severity)}) {
    h.update(part.data(), part.size());
    h.update("\0", 1);
  }
  return to_hex(h.finish()).substr(0, 32);
}

ojson location_json(const Location& l) {
  ojson phys;
  phys["artifactLocation"] = {{"uri", l.uri}};
  if (l.line > 0) phys["region"] = {{"startLine", l.line}};
  return ojson{{"physicalLocation", phys}};
}

std::string level_of(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Condition:
    case Severity::Info: return "note";
  }
  return "note";
}

std::string message_of(const Case& c, const verdict::Finding& f) {
  std::string m = c.wheel() + (c.image() == k_publisher ? " (publisher check): " : " on " + c.image() + ": ");
  if (f.severity == Severity::Condition) m += "holds only if: ";
  std::string said = reason(f);
  const std::string& explanation = f.explanation;
  // A phrase cut from the explanation itself (tag findings) is not said twice.
  if (!explanation.empty() && ascii_lower(explanation).starts_with(ascii_lower(said))) said.clear();
  m += (f.member.empty() ? std::string() : f.member + ": ") + said;
  if (!explanation.empty()) m += (said.empty() ? "" : ". ") + explanation;
  if (!f.fix.empty()) m += (m.ends_with(".") ? " Fix: " : ". Fix: ") + f.fix;
  // The route it turns off, and what a setup script sets for it.
  for (const auto& r : c.cell.report.routes) {
    if (r.available || f.member.empty()) continue;
    const bool mine = std::any_of(r.reasons.begin(), r.reasons.end(),
                                  [&](const std::string& why) { return why.starts_with(f.member + ": "); });
    if (!mine) continue;
    std::vector<std::string> gates;
    for (const auto& [k, v] : r.gates) gates.push_back(k + "=" + v);
    m += " [route " + r.name + (r.optional ? " (optional)" : " (core)") + " is off" +
         (gates.empty() ? "" : "; set " + join(gates, " ")) + "]";
  }
  return m;
}

}  // namespace sarif_detail

using namespace sarif_detail;

Location location_of(const std::string& source) {
  const auto colon = source.rfind(':');
  if (colon != std::string::npos && colon + 1 < source.size() &&
      std::all_of(source.begin() + static_cast<std::ptrdiff_t>(colon) + 1, source.end(),
                  [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; })) {
    const auto line = small_number(std::string_view(source).substr(colon + 1));
    if (line && *line > 0) return {source.substr(0, colon), *line};
  }
  return {source, 0};
}

std::string rule_id(const verdict::Finding& f) {
  using verdict::Why;
  if (f.kind == FindingKind::MissingSymbol || f.kind == FindingKind::MissingVersion) {
    if (f.classification == Why::SignatureChanged || f.classification == Why::CxxAbiMismatch ||
        (f.classification == Why::VersionTooNew && f.kind == FindingKind::MissingSymbol))
      return verdict::why_name(f.classification);
  }
  return verdict::kind_name(f.kind);
}

const std::vector<Rule>& rules() {
  static const std::vector<Rule> all = [] {
    // Each finding kind's rule from its row (verdict::kind_texts); after missing-symbol, the classifications
    // that get rules of their own (rule_id), and last the rules of an environment's and a scan's cases.
    const std::vector<std::array<const char*, 4>> why_rules = {
        {"signature-changed", "SignatureChanged", "A C++ function's signature changed in the provider",
         "The same qualified C++ name is exported with other parameters: the wheel was built against another "
         "release of the library (a PyTorch pin that moved). Rebuild against the image's release or pin the "
         "matching one."},
        {"cxx-abi-mismatch", "CxxAbiMismatch", "Built with the other libstdc++ string ABI",
         "The symbol differs only by the pre-C++11 std::string/std::list ABI: rebuild with the "
         "_GLIBCXX_USE_CXX11_ABI value of the library it links against."},
        {"version-too-new", "VersionTooNew", "A symbol is exported, but not at the needed version",
         "The provider exports the name at an older version than the one the wheel was linked against."},
    };
    const std::vector<std::array<const char*, 4>> case_rules = {
        {"no-wheel", "NoWheel", "No wheel of the locked package fits the image",
         "The lock names no file an installer would pick for the image: the environment cannot be installed."},
        {"not-checked", "NotChecked", "The wheel could not be checked",
         "The wheel could not be read or fetched: the run's exit code is 2."},
    };
    std::vector<Rule> out;
    for (const auto& k : verdict::kind_texts()) {
      out.push_back({std::string(k.name), std::string(k.rule), std::string(k.title), std::string(k.meaning)});
      if (k.kind == FindingKind::MissingSymbol) {
        for (const auto& [id, name, short_text, help] : why_rules) out.push_back({id, name, short_text, help});
      }
    }
    for (const auto& [id, name, short_text, help] : case_rules) out.push_back({id, name, short_text, help});
    return out;
  }();
  return all;
}

std::string reason(const verdict::Finding& f) {
  return verdict::requirement(f);
}

std::string verdict_word(const Case& c) {
  if (!c.checked) return "error";
  if (c.image() == k_publisher) {
    switch (c.cell.report.verdict) {
      case verdict::Verdict::Incompatible: return "errors";
      case verdict::Verdict::Degraded: return "warnings";
      default: return "clean";
    }
  }
  return verdict::verdict_name(c.cell.report.verdict);
}

std::vector<std::pair<std::string, std::string>> Case::gates() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& rt : cell.report.routes) {
    if (!rt.available) out.insert(out.end(), rt.gates.begin(), rt.gates.end());
  }
  return out;
}

namespace {

// run::decided's pick, in pip's words.
std::string pip_headline(const verdict::Report& r) {
  const run::Decided d = run::decided(r);
  if (d.route != nullptr) {
    return "route " + d.route->name + (d.route->optional ? " (optional)" : " (core)") +
           " is off: " + d.route->reasons.front();
  }
  if (d.finding != nullptr)
    return (d.finding->member.empty() ? std::string() : d.finding->member + ": ") + reason(*d.finding);
  return d.condition;
}

}  // namespace

std::string headline(const Case& c) {
  if (!c.checked) return "not checked: " + c.error;
  if (!c.cell.targeted) return "not for this image: " + c.cell.not_targeted;
  if (c.cell.report.verdict == verdict::Verdict::Compatible) return "";
  if (!c.error.empty() && c.cell.report.findings.empty()) return c.error;
  return pip_headline(c.cell.report);
}

Case case_of(const run::Cell& cell, const Location& where) {
  return Case{cell, where, true, ""};
}

Case failed_case(const std::string& image, const std::string& wheel, const Location& where,
                 std::optional<verdict::Verdict> verdict, const std::string& why) {
  Case c;
  c.cell.image = image;
  c.cell.report.image = image;
  c.cell.report.wheel = wheel;
  c.cell.report.verdict = verdict.value_or(verdict::Verdict::Incompatible);
  c.cell.headline = why;
  c.location = where;
  c.checked = verdict.has_value();
  c.error = why;
  return c;
}

std::vector<Case> cases_of_scan(const scan::Report& report) {
  std::vector<Case> out;
  report.each_wheel([&](const scan::Wheel& w) {
    const Location where{w.url.empty() ? w.filename : w.url, 0};
    if (w.error && !w.error->empty()) {
      for (const auto& image : report.images)
        out.push_back(failed_case(image, w.filename, where, std::nullopt, *w.error));
      return;
    }
    // The wheel on its own, once (the publisher check): its findings as a case of the image "publisher".
    if (w.publisher) {
      run::Cell cell;
      cell.image = k_publisher;
      cell.report.image = k_publisher;
      cell.report.wheel = w.filename;
      cell.report.findings = w.publisher->findings;
      cell.report.verdict = w.publisher->status == lint::Status::Errors     ? verdict::Verdict::Incompatible
                            : w.publisher->status == lint::Status::Warnings ? verdict::Verdict::Degraded
                                                                            : verdict::Verdict::Compatible;
      out.push_back(Case{std::move(cell), where, true, ""});
    }
    for (const auto& r : w.results) {
      Case c{r.cell, where, true, ""};
      c.cell.report.wheel = w.filename;
      out.push_back(std::move(c));
    }
  });
  return out;
}

nlohmann::ordered_json sarif(const std::vector<Case>& cases, int exit_code) {
  std::vector<std::string> images;
  for (const auto& c : cases) {
    if (std::find(images.begin(), images.end(), c.image()) == images.end()) images.push_back(c.image());
  }
  std::map<std::string, std::size_t> index;
  ojson rule_list = ojson::array();
  for (const auto& r : rules()) {
    index[r.id] = rule_list.size();
    rule_list.push_back({{"id", r.id},
                         {"name", r.name},
                         {"shortDescription", {{"text", r.short_text}}},
                         {"fullDescription", {{"text", r.help}}},
                         {"help", {{"text", r.help}, {"markdown", r.help + " See [docs/verdict.md](" + k_docs + ")."}}},
                         {"helpUri", std::string(k_docs) + "#finding-kinds"}});
  }
  ojson runs = ojson::array();
  for (const auto& image : images) {
    ojson results = ojson::array();
    ojson verdicts = ojson::object();
    ojson gates = ojson::object();
    for (const auto& c : cases) {
      if (c.image() != image) continue;
      verdicts[c.wheel().empty() ? c.location.uri : c.wheel()] = c.cell.targeted ? verdict_word(c) : "not targeted";
      for (const auto& [k, v] : c.gates()) gates[k] = v;
      auto add = [&](const std::string& id, const std::string& level, const std::string& text, const std::string& print,
                     ojson props) {
        ojson r;
        r["ruleId"] = id;
        r["ruleIndex"] = index.at(id);
        r["level"] = level;
        r["message"] = {{"text", text}};
        r["locations"] = ojson::array({location_json(c.location)});
        r["partialFingerprints"] = {{"wheelcheckFinding/v1", print}};
        props["wheel"] = c.wheel();
        props["image"] = c.image();
        props["verdict"] = verdict_word(c);
        r["properties"] = std::move(props);
        results.push_back(std::move(r));
      };
      if (!c.error.empty()) {
        const std::string id = !c.checked ? "not-checked" : "no-wheel";
        Hasher h;
        const std::string key = id + '\0' + c.image() + '\0' + c.location.uri;
        h.update(key.data(), key.size());
        add(id, "error", (c.wheel().empty() ? c.location.uri : c.wheel()) + " on " + c.image() + ": " + c.error,
            to_hex(h.finish()).substr(0, 32), ojson::object());
        continue;
      }
      if (!c.cell.targeted) continue;  // not for this image: no alert (pip would not install it there)
      for (const auto& f : c.cell.report.findings) {
        ojson props;
        props["severity"] = verdict::severity_name(f.severity);
        props["kind"] = verdict::kind_name(f.kind);
        if (!f.member.empty()) props["member"] = f.member;
        if (!f.library.empty()) props["library"] = f.library;
        if (!f.symbol.empty()) props["symbol"] = f.symbol;
        add(rule_id(f), level_of(f.severity), message_of(c, f), fingerprint(c, f), std::move(props));
      }
    }
    ojson run;
    run["tool"] = {{"driver",
                    {{"name", "wheelcheck"},
                     {"version", WHEELCHECK_VERSION},
                     {"semanticVersion", WHEELCHECK_VERSION},
                     {"informationUri", "https://github.com/flagos-ai/wheelcheck"},
                     {"rules", rule_list}}}};
    run["automationDetails"] = {{"id", "wheelcheck/" + image + "/"}};
    run["invocations"] =
        ojson::array({{{"executionSuccessful", exit_code != 2 && exit_code != 70}, {"exitCode", exit_code}}});
    run["results"] = std::move(results);
    run["properties"] = {{"image", image}, {"verdicts", verdicts}, {"gates", gates}};
    runs.push_back(std::move(run));
  }
  return ojson{{"$schema", k_sarif_schema}, {"version", "2.1.0"}, {"runs", runs}};
}

}  // namespace wheelcheck::ci
