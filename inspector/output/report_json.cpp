// The scan's report as JSON and back (docs/scan.schema.json, "wheelcheck-scan/1"): the one writer of report.json
// and of the wheel entries a shard's record keeps (inspector/scan/state.hpp), and the one reader, which `scan
// --merge` reads those entries with and the pins read the state's records with (a record is a result's
// smaller size, run::Size::Record). The cells are run::to_json's (inspector/output/cell_json.cpp); the
// publisher check is lint::to_json's, less what the wheel's own entry says.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/error.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::scan {

namespace {

using Json = nlohmann::ordered_json;

// --- reading: a missing field reads as its default; a field of another type is an error naming it ---

// The fields of one object of a report (`what` names it in the errors).
class ReportFields {
 public:
  ReportFields(const Json& j, const char* what) : m_j(j), m_what(what) {
    if (!j.is_object()) throw bad_input(std::string("a scan report's ") + what + " is not an object");
  }

  const Json* field(const char* key) const {
    const auto it = m_j.find(key);
    return it == m_j.end() || it->is_null() ? nullptr : &*it;
  }
  std::string text(const char* key) const {
    const Json* v = field(key);
    if (v == nullptr) return {};
    if (!v->is_string()) wrong(key, "text");
    return v->get<std::string>();
  }
  std::optional<std::string> optional_text(const char* key) const {
    if (field(key) == nullptr) return std::nullopt;
    return text(key);
  }
  bool flag(const char* key, bool otherwise) const {
    const Json* v = field(key);
    if (v == nullptr) return otherwise;
    if (!v->is_boolean()) wrong(key, "true or false");
    return v->get<bool>();
  }
  std::uint64_t count(const char* key) const {
    const Json* v = field(key);
    if (v == nullptr) return 0;
    if (!v->is_number_integer() || (!v->is_number_unsigned() && v->get<std::int64_t>() < 0)) wrong(key, "a count");
    return v->get<std::uint64_t>();
  }
  const Json& list(const char* key) const {
    static const Json empty = Json::array();
    const Json* v = field(key);
    if (v == nullptr) return empty;
    if (!v->is_array()) wrong(key, "a list");
    return *v;
  }
  std::vector<std::string> texts(const char* key) const {
    std::vector<std::string> out;
    for (const auto& s : list(key)) {
      if (!s.is_string()) wrong(key, "a list of texts");
      out.push_back(s.get<std::string>());
    }
    return out;
  }
  Gates gates() const {
    Gates out;
    const Json* v = field("gates");
    if (v == nullptr) return out;
    if (!v->is_object()) wrong("gates", "an object");
    for (const auto& [name, value] : v->items()) {
      if (!value.is_string()) wrong("gates", "an object of texts");
      out.emplace_back(name, value.get<std::string>());
    }
    return out;
  }
  verdict::Verdict verdict(const char* key) const {
    const std::string word = text(key);
    for (auto v : {verdict::Verdict::Compatible, verdict::Verdict::Degraded, verdict::Verdict::Incompatible,
                   verdict::Verdict::Unknown}) {
      if (verdict::verdict_name(v) == word) return v;
    }
    throw bad_input(std::string("a scan report's ") + m_what + " has an unknown verdict '" + word + "'");
  }

 private:
  [[noreturn]] void wrong(const char* key, const char* expected) const {
    throw bad_input(std::string("a scan report's ") + m_what + " has a \"" + key + "\" that is not " + expected);
  }
  const Json& m_j;
  const char* m_what;
};

Json gates_to_json(const Gates& gates) {
  Json out = Json::object();
  for (const auto& [name, value] : gates) out[name] = value;
  return out;
}

// --- the publisher check: lint::to_json less the wheel's own fields, with its headline ---

Json publisher_to_json(const lint::Report& r) {
  Json j = lint::to_json(r);
  j["headline"] = lint::headline(r);  // the worst finding's line, for the scan's stdout
  j.erase("wheel");                   // the wheel's own entry names it
  j.erase("source");
  j.erase("sha256");
  j.erase("integrity");
  return j;
}

lint::Report publisher_from_json(const Json& j, const Wheel& w) {
  const ReportFields f(j, "publisher check");
  lint::Report r;
  r.wheel = w.filename;
  r.sha256 = w.sha256;
  r.source = w.url;
  r.integrity = w.integrity;
  const std::string status = f.text("status");
  bool known = false;
  for (auto s : {lint::Status::Clean, lint::Status::Warnings, lint::Status::Errors}) {
    if (lint::status_name(s) == status) r.status = s, known = true;
  }
  if (!known) throw bad_input("a scan report's publisher check has an unknown status '" + status + "'");
  if (const Json* claims = f.field("claims")) {
    const ReportFields c(*claims, "publisher claims");
    r.claims = {c.texts("said"), c.texts("shown")};
  }
  for (const auto& finding : f.list("findings")) r.findings.push_back(verdict::finding_from_json(finding));
  r.notes = f.texts("notes");
  // Its exit code says what the status does not: 2, a wheel that fails its own integrity.
  if (const Json* rc = f.field("exit_code"); rc != nullptr && rc->is_number_integer())
    r.intact = rc->get<int>() != k_exit_bad_input;
  return r;
}

Pin read_pin(const Json& j) {
  const ReportFields f(j, "pin");
  Pin p{f.text("image"), f.text("project"), std::nullopt, {}};
  if (const Json* pj = f.field("pick")) {
    const ReportFields k(*pj, "pin's pick");
    p.pick = Pick{k.text("filename"), k.text("version"), k.verdict("verdict"),       k.gates(),
                  k.text("url"),      k.text("sha256"),  k.optional_text("variant"), k.texts("undecided")};
  }
  for (const auto& passed : f.list("passed_over")) {
    const ReportFields o(passed, "pin's passed_over entry");
    p.passed.push_back({o.text("filename"), o.text("version"), o.text("reason")});
  }
  return p;
}

Json summary_to_json(const Summary& s) {
  return Json{{"wheels_seen", s.wheels_seen},
              {"new", s.fresh},
              {"checked", s.checked},
              {"errors", s.errors},
              {"verdicts",
               {{"compatible", s.compatible},
                {"degraded", s.degraded},
                {"incompatible", s.incompatible},
                {"unknown", s.unknown},
                {"not-targeted", s.not_targeted}}}};
}

}  // namespace

Pin pin_from_json(const Json& j) {
  return read_pin(j);
}

Json to_json(const Checked& c) {
  Json j = run::to_json(c.cell, c.cell.targeted ? run::Size::Result : run::Size::Record);
  j["gates"] = gates_to_json(c.gates);
  if (c.cell.targeted) j["counted"] = c.counted;
  return j;
}

Checked checked_from_json(const Json& j) {
  Checked c;
  c.cell = run::cell_from_json(j);
  const ReportFields f(j, "result");
  c.gates = f.gates();
  c.counted = c.cell.targeted && f.flag("counted", true);
  return c;
}

Json to_json(const Wheel& w) {
  Json j = Json::object();
  j["filename"] = w.filename;
  j["project"] = w.project;
  j["version"] = w.version;
  j["url"] = w.url;
  j["sha256"] = w.sha256;
  j["size"] = w.size ? Json(*w.size) : Json(nullptr);
  j["upload_time"] = w.upload_time ? Json(*w.upload_time) : Json(nullptr);
  j["yanked"] = w.yanked;
  j["yanked_reason"] = w.yanked_reason;
  j["new"] = w.is_new;
  j["integrity"] = w.integrity;
  j["error"] = w.error ? Json(*w.error) : Json(nullptr);
  Json results = Json::array();
  for (const auto& c : w.results) results.push_back(to_json(c));
  j["results"] = std::move(results);
  if (w.publisher) j["publisher"] = publisher_to_json(*w.publisher);
  return j;
}

Wheel wheel_from_json(const Json& j) {
  const ReportFields f(j, "wheel");
  std::optional<std::uint64_t> size;
  if (f.field("size") != nullptr) size = f.count("size");
  Wheel w{.filename = f.text("filename"),
          .project = f.text("project"),
          .version = f.text("version"),
          .url = f.text("url"),
          .sha256 = f.text("sha256"),
          .size = size,
          .upload_time = f.optional_text("upload_time"),
          .yanked = f.flag("yanked", false),
          .yanked_reason = f.text("yanked_reason"),
          .is_new = f.flag("new", true),
          .integrity = f.text("integrity"),
          .error = f.optional_text("error"),
          .results = {},
          .publisher = std::nullopt};
  for (const auto& r : f.list("results")) w.results.push_back(checked_from_json(r));
  if (const Json* p = f.field("publisher")) w.publisher = publisher_from_json(*p, w);
  return w;
}

Json to_json(const Pin& p) {
  Json pick = nullptr;
  if (p.pick) {
    pick = Json{{"filename", p.pick->filename},
                {"version", p.pick->version},
                {"verdict", verdict::verdict_name(p.pick->verdict)},
                {"gates", gates_to_json(p.pick->gates)},
                {"url", p.pick->url},
                {"sha256", p.pick->sha256}};
    if (p.pick->variant) pick["variant"] = *p.pick->variant;
    if (!p.pick->undecided.empty()) pick["undecided"] = p.pick->undecided;
  }
  Json passed = Json::array();
  for (const auto& o : p.passed)
    passed.push_back(Json{{"filename", o.filename}, {"version", o.version}, {"reason", o.reason}});
  return Json{
      {"image", p.image}, {"project", p.project}, {"pick", std::move(pick)}, {"passed_over", std::move(passed)}};
}

namespace {

// Every field of the document before its wheels.
Json report_head(const Report& r) {
  Json j = Json::object();
  j["schema"] = k_report_schema;
  j["generated_at"] = r.generated_at;
  j["wheelcheck_version"] = r.wheelcheck_version;
  j["indexes"] = r.indexes;
  j["projects"] = r.projects;
  j["images"] = r.images;
  j["shard"] = r.shard.merged ? Json{{"index", r.shard.index}, {"count", r.shard.count}, {"merged", true}}
                              : Json{{"index", r.shard.index}, {"count", r.shard.count}};
  j["since"] = r.since ? Json(*r.since) : Json(nullptr);
  j["environment"] = r.environment;
  j["exit_code"] = r.exit_code();
  j["summary"] = summary_to_json(r.summary());
  return j;
}

std::string report_dump(const Json& j) {
  return j.dump(2, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

Json to_json(const Report& r) {
  Json j = report_head(r);
  Json wheels = Json::array();
  r.each_wheel([&](const Wheel& w) { wheels.push_back(to_json(w)); });
  j["wheels"] = std::move(wheels);
  Json pins = Json::array();
  r.each_pin([&](const Pin& p) { pins.push_back(to_json(p)); });
  j["pins"] = std::move(pins);
  j["warnings"] = r.warnings;
  j["errors"] = r.errors;
  return j;
}

// The bytes output::dump(to_json(r)) would be, a wheel at a time: the head's object less its closing brace, each
// array's items dumped alone and indented two levels, then the tail's fields.
void write_json(const Report& r, const std::function<void(std::string_view)>& out) {
  std::string text = report_dump(report_head(r));
  text.resize(text.size() - 2);  // "\n}"
  out(text);
  const auto item = [&](bool& first, const Json& j) {
    std::string t = first ? "\n    " : ",\n    ";
    first = false;
    for (const char c : report_dump(j)) {
      t += c;
      if (c == '\n') t += "    ";
    }
    out(t);
  };
  bool first = true;
  out(",\n  \"wheels\": [");
  r.each_wheel([&](const Wheel& w) { item(first, to_json(w)); });
  out(first ? "]" : "\n  ]");
  first = true;
  out(",\n  \"pins\": [");
  r.each_pin([&](const Pin& p) { item(first, to_json(p)); });
  out(first ? "]" : "\n  ]");
  Json tail = Json::object();
  tail["warnings"] = r.warnings;
  tail["errors"] = r.errors;
  out(",\n" + report_dump(tail).substr(2) + "\n");
}

Report report_from_json(const Json& j) {
  if (!j.is_object()) throw bad_input("a scan report must be a JSON object");
  const ReportFields f(j, "document");
  if (const std::string schema = f.text("schema"); schema != k_report_schema) {
    throw bad_input("not a wheelcheck scan report (" + std::string(k_report_schema) + "): its schema is '" + schema +
                    "'");
  }
  Report r;
  r.generated_at = f.text("generated_at");
  r.wheelcheck_version = f.text("wheelcheck_version");
  r.indexes = f.texts("indexes");
  r.projects = f.texts("projects");
  r.images = f.texts("images");
  if (const Json* shard = f.field("shard")) {
    const ReportFields s(*shard, "shard");
    r.shard = {static_cast<int>(s.count("index")), static_cast<int>(s.count("count")), s.flag("merged", false)};
  }
  r.since = f.optional_text("since");
  r.environment = f.texts("environment");
  if (const Json* summary = f.field("summary")) r.wheels_seen = ReportFields(*summary, "summary").count("wheels_seen");
  for (const auto& w : f.list("wheels")) r.wheels.push_back(wheel_from_json(w));
  for (const auto& p : f.list("pins")) r.pins.push_back(read_pin(p));
  r.warnings = f.texts("warnings");
  r.errors = f.texts("errors");
  return r;
}

}  // namespace wheelcheck::scan
