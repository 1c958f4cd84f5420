// A cell of the run as JSON and back: one shape at three sizes (run::Size), written for check --json, an
// environment's packages, a scan report and the scan state, and read back where a file is read again (a
// scan report rendered as SARIF or JUnit, the state's records when pins are chosen, shards merged). The
// finding and route parts are the verdict document's own (verdict::finding_to_json, route_to_json).
#include <string>
#include <utility>
#include <vector>

#include "wheelcheck/error.hpp"
#include "wheelcheck/gates.hpp"
#include "wheelcheck/run.hpp"

namespace wheelcheck {

namespace {

using Json = nlohmann::ordered_json;

std::string string_of(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool bool_of(const Json& j, const char* key, bool otherwise) {
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : otherwise;
}

std::vector<std::string> strings(const Json& j, const char* key) {
  std::vector<std::string> out;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& s : *it) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

// j[key] when it is an array, else an empty one.
const Json& array_of(const Json& j, const char* key) {
  static const Json empty = Json::array();
  const auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

std::vector<std::pair<std::string, std::string>> pairs(const Json& j, const char* key) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return out;
  for (const auto& [k, v] : it->items()) {
    if (v.is_string()) out.emplace_back(k, v.get<std::string>());
  }
  return out;
}

template <typename E, typename Name>
E named(const std::string& name, const std::vector<E>& all, Name name_of, const char* what) {
  for (E e : all) {
    if (name_of(e) == name) return e;
  }
  throw bad_input(std::string("unknown ") + what + " '" + name + "'");
}

std::vector<verdict::FindingKind> every_kind() {
  std::vector<verdict::FindingKind> out;
  for (int k = 0; k <= static_cast<int>(verdict::k_last_finding_kind); ++k) {
    out.push_back(static_cast<verdict::FindingKind>(k));
  }
  return out;
}

Json gates_json(const run::Cell& c) {
  Json gates = Json::object();
  for (const auto& [variable, value] : run::cell_gates(c)) gates[variable] = value;
  return gates;
}

}  // namespace

namespace verdict {

Finding finding_from_json(const Json& j) {
  if (!j.is_object()) throw bad_input("a finding must be an object");
  Finding f;
  f.kind = named(string_of(j, "kind"), every_kind(), kind_name, "finding kind");
  f.severity = named<Severity>(string_of(j, "severity"),
                               {Severity::Info, Severity::Condition, Severity::Warning, Severity::Error}, severity_name,
                               "severity");
  f.member = string_of(j, "member");
  f.object = string_of(j, "object");
  f.library = string_of(j, "library");
  f.symbol = string_of(j, "symbol");
  f.demangled = string_of(j, "demangled");
  f.required_version = string_of(j, "required_version");
  const std::string why = string_of(j, "classification");
  f.classification = Why::None;
  for (Why w : {Why::LibraryMissing, Why::SignatureChanged, Why::CxxAbiMismatch, Why::VersionTooNew, Why::Absent,
                Why::UnknownExports}) {
    if (why_name(w) == why) f.classification = w;
  }
  f.explanation = string_of(j, "explanation");
  f.fix = string_of(j, "fix");
  f.candidates = strings(j, "candidates");
  f.symbols = strings(j, "symbols");
  if (const auto it = j.find("symbols_total"); it != j.end() && it->is_number_unsigned())
    f.symbols_total = it->get<std::size_t>();
  f.evidence = strings(j, "evidence");
  f.roots = strings(j, "loaded_by");
  return f;
}

Route route_from_json(const Json& j) {
  if (!j.is_object()) throw bad_input("a route must be an object");
  Route r;
  r.name = string_of(j, "name");
  r.rule_set = string_of(j, "rule_set");
  r.summary = string_of(j, "summary");
  r.optional = bool_of(j, "optional", false);
  r.available = bool_of(j, "available", true);
  r.members = strings(j, "members");
  r.reasons = strings(j, "reasons");
  r.conditions = strings(j, "conditions");
  r.gates = pairs(j, "gates");
  return r;
}

}  // namespace verdict

namespace run {

Json to_json(const Cell& c, Size size) {
  // A cell the wheel is not for is never usable there (pip would not install it): its verdict says so in
  // its own word, so that `--image all --json | jq` never counts it as a failure.
  const std::string word = c.targeted ? verdict::verdict_name(c.report.verdict) : k_not_targeted;
  if (size == Size::Document) {
    Json j = verdict::to_json(c.report);
    j["image"]["name"] = c.image;  // the run's name of it (a scan names a description by its file)
    j["verdict"] = word;
    j["targeted"] = c.targeted;
    j["not_targeted"] = c.not_targeted;
    j["headline"] = c.headline;
    j["gates"] = gates_json(c);
    return j;
  }
  Json findings = Json::array(), routes = Json::array();
  if (size == Size::Result) {
    for (const auto& f : c.report.findings) findings.push_back(verdict::finding_to_json(f));
    for (const auto& rt : c.report.routes) routes.push_back(verdict::route_to_json(rt));
  }
  return Json{{"image", c.image},
              {"targeted", c.targeted},
              {"verdict", word},
              {"headline", c.headline},
              {"gates", gates_json(c)},
              {"findings", std::move(findings)},
              {"conditions", c.report.conditions},
              {"routes", std::move(routes)}};
}

std::vector<std::pair<std::string, std::string>> cell_gates(const Cell& c) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::vector<verdict::Report> reports{c.report};
  for (const auto& g : gates::merge(reports).gates) out.emplace_back(g.variable, g.value);
  return out;
}

Cell cell_from_json(const Json& j) {
  if (!j.is_object()) throw bad_input("a result must be an object");
  Cell c;
  // A verdict document names its image {name, summary}; a scan result and a state record by name.
  const auto image = j.find("image");
  if (image != j.end() && image->is_object()) {
    c.image = string_of(*image, "name");
    c.report.image_summary = string_of(*image, "summary");
  } else {
    c.image = string_of(j, "image");
  }
  c.report.image = c.image;
  if (const auto wheel = j.find("wheel"); wheel != j.end() && wheel->is_object()) {
    c.report.wheel = string_of(*wheel, "filename");
    c.report.wheel_sha256 = string_of(*wheel, "sha256");
  }
  const std::string word = string_of(j, "verdict");
  c.targeted = bool_of(j, "targeted", word != k_not_targeted);
  if (!c.targeted || word == k_not_targeted) {
    c.targeted = false;
    c.report.verdict = verdict::Verdict::Incompatible;
  } else {
    c.report.verdict = named<verdict::Verdict>(word,
                                               {verdict::Verdict::Compatible, verdict::Verdict::Degraded,
                                                verdict::Verdict::Incompatible, verdict::Verdict::Unknown},
                                               verdict::verdict_name,
                                               "verdict (compatible, degraded, incompatible, unknown, not-targeted)");
  }
  c.headline = string_of(j, "headline");
  c.not_targeted = string_of(j, "not_targeted");
  // A result or a record says why in its headline ("not targeted: x86_64 wheel, aarch64 image").
  if (!c.targeted && c.not_targeted.empty()) {
    const std::string prefix = "not targeted: ";
    c.not_targeted = c.headline.starts_with(prefix) ? c.headline.substr(prefix.size()) : c.headline;
  }
  for (const auto& f : array_of(j, "findings")) c.report.findings.push_back(verdict::finding_from_json(f));
  c.report.conditions = strings(j, "conditions");
  for (const auto& r : array_of(j, "routes")) c.report.routes.push_back(verdict::route_from_json(r));
  return c;
}

}  // namespace run

}  // namespace wheelcheck
