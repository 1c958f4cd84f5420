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

const Json* report_json_field(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] void report_json_wrong(const char* what, const char* key, const char* expected) {
  throw bad_input(std::string("a scan report's ") + what + " has a \"" + key + "\" that is not " + expected);
}

std::string report_json_string(const Json& j, const char* what, const char* key) {
  const Json* v = report_json_field(j, key);
  if (v == nullptr) return {};
  if (!v->is_string()) report_json_wrong(what, key, "text");
  return v->get<std::string>();
}

std::optional<std::string> report_json_optional(const Json& j, const char* what, const char* key) {
  if (report_json_field(j, key) == nullptr) return std::nullopt;
  return report_json_string(j, what, key);
}

bool report_json_bool(const Json& j, const char* what, const char* key, bool otherwise) {
  const Json* v = report_json_field(j, key);
  if (v == nullptr) return otherwise;
  if (!v->is_boolean()) report_json_wrong(what, key, "true or false");
  return v->get<bool>();
}

std::uint64_t report_json_count(const Json& j, const char* what, const char* key) {
  const Json* v = report_json_field(j, key);
  if (v == nullptr) return 0;
  if (!v->is_number_integer() || (!v->is_number_unsigned() && v->get<std::int64_t>() < 0))
    report_json_wrong(what, key, "a count");
  return v->get<std::uint64_t>();
}

const Json& report_json_array(const Json& j, const char* what, const char* key) {
  static const Json empty = Json::array();
  const Json* v = report_json_field(j, key);
  if (v == nullptr) return empty;
  if (!v->is_array()) report_json_wrong(what, key, "a list");
  return *v;
}

std::vector<std::string> report_json_strings(const Json& j, const char* what, const char* key) {
  std::vector<std::string> out;
  for (const auto& s : report_json_array(j, what, key)) {
    if (!s.is_string()) report_json_wrong(what, key, "a list of texts");
    out.push_back(s.get<std::string>());
  }
  return out;
}

const Json& report_json_object(const Json& j, const char* what) {
  if (!j.is_object()) throw bad_input(std::string("a scan report's ") + what + " is not an object");
  return j;
}

Gates report_json_gates(const Json& j, const char* what) {
  Gates out;
  const Json* v = report_json_field(j, "gates");
  if (v == nullptr) return out;
  if (!v->is_object()) report_json_wrong(what, "gates", "an object");
  for (const auto& [name, value] : v->items()) {
    if (!value.is_string()) report_json_wrong(what, "gates", "an object of texts");
    out.emplace_back(name, value.get<std::string>());
  }
  return out;
}

Json gates_to_json(const Gates& gates) {
  Json out = Json::object();
  for (const auto& [name, value] : gates) out[name] = value;
  return out;
}

verdict::Verdict report_json_verdict(const std::string& word, const char* what) {
  for (auto v : {verdict::Verdict::Compatible, verdict::Verdict::Degraded, verdict::Verdict::Incompatible,
                 verdict::Verdict::Unknown}) {
    if (verdict::verdict_name(v) == word) return v;
  }
  throw bad_input(std::string("a scan report's ") + what + " has an unknown verdict '" + word + "'");
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
  const char* what = "publisher check";
  report_json_object(j, what);
  lint::Report r;
  r.wheel = w.filename;
  r.sha256 = w.sha256;
  r.source = w.url;
  r.integrity = w.integrity;
  const std::string status = report_json_string(j, what, "status");
  bool known = false;
  for (auto s : {lint::Status::Clean, lint::Status::Warnings, lint::Status::Errors}) {
    if (lint::status_name(s) == status) r.status = s, known = true;
  }
  if (!known) throw bad_input("a scan report's publisher check has an unknown status '" + status + "'");
  if (const Json* claims = report_json_field(j, "claims")) {
    report_json_object(*claims, "publisher claims");
    r.claims.said = report_json_strings(*claims, "publisher claims", "said");
    r.claims.shown = report_json_strings(*claims, "publisher claims", "shown");
  }
  for (const auto& f : report_json_array(j, what, "findings")) r.findings.push_back(verdict::finding_from_json(f));
  r.notes = report_json_strings(j, what, "notes");
  // Its exit code says what the status does not: 2, a wheel that fails its own integrity.
  if (const Json* rc = report_json_field(j, "exit_code"); rc != nullptr && rc->is_number_integer())
    r.intact = rc->get<int>() != k_exit_bad_input;
  return r;
}

Passed passed_from_json(const Json& j) {
  const char* what = "pin's passed_over entry";
  report_json_object(j, what);
  return {report_json_string(j, what, "filename"), report_json_string(j, what, "version"),
          report_json_string(j, what, "reason")};
}

Pin pin_from_json(const Json& j) {
  const char* what = "pin";
  report_json_object(j, what);
  Pin p;
  p.image = report_json_string(j, what, "image");
  p.project = report_json_string(j, what, "project");
  if (const Json* pj = report_json_field(j, "pick")) {
    const char* pick_what = "pin's pick";
    report_json_object(*pj, pick_what);
    Pick pick;
    pick.filename = report_json_string(*pj, pick_what, "filename");
    pick.version = report_json_string(*pj, pick_what, "version");
    pick.verdict = report_json_verdict(report_json_string(*pj, pick_what, "verdict"), pick_what);
    pick.gates = report_json_gates(*pj, pick_what);
    pick.url = report_json_string(*pj, pick_what, "url");
    pick.sha256 = report_json_string(*pj, pick_what, "sha256");
    pick.variant = report_json_optional(*pj, pick_what, "variant");
    pick.undecided = report_json_strings(*pj, pick_what, "undecided");
    p.pick = std::move(pick);
  }
  for (const auto& passed : report_json_array(j, what, "passed_over")) p.passed.push_back(passed_from_json(passed));
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

Checked checked_of(const run::Cell& cell, bool counted) {
  // The cell as the report holds it, written and read back by the one writer and reader: a scan's report, its
  // record for a merge and the merge's report all say the same of it.
  Checked c{cell, run::cell_gates(cell), counted};
  return checked_from_json(to_json(c));
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
  c.gates = report_json_gates(j, "result");
  c.counted = c.cell.targeted && report_json_bool(j, "result", "counted", true);
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
  const char* what = "wheel";
  report_json_object(j, what);
  Wheel w;
  w.filename = report_json_string(j, what, "filename");
  w.project = report_json_string(j, what, "project");
  w.version = report_json_string(j, what, "version");
  w.url = report_json_string(j, what, "url");
  w.sha256 = report_json_string(j, what, "sha256");
  if (report_json_field(j, "size") != nullptr) w.size = report_json_count(j, what, "size");
  w.upload_time = report_json_optional(j, what, "upload_time");
  w.yanked = report_json_bool(j, what, "yanked", false);
  w.yanked_reason = report_json_string(j, what, "yanked_reason");
  w.is_new = report_json_bool(j, what, "new", true);
  w.integrity = report_json_string(j, what, "integrity");
  w.error = report_json_optional(j, what, "error");
  for (const auto& r : report_json_array(j, what, "results")) w.results.push_back(checked_from_json(r));
  if (const Json* p = report_json_field(j, "publisher")) w.publisher = publisher_from_json(*p, w);
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

Json to_json(const Report& r) {
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
  j["summary"] = summary_to_json(summary_of(r.wheels, r.wheels_seen));
  Json wheels = Json::array();
  for (const auto& w : r.wheels) wheels.push_back(to_json(w));
  j["wheels"] = std::move(wheels);
  Json pins = Json::array();
  for (const auto& p : r.pins) pins.push_back(to_json(p));
  j["pins"] = std::move(pins);
  j["warnings"] = r.warnings;
  j["errors"] = r.errors;
  return j;
}

Report report_from_json(const Json& j) {
  const char* what = "document";
  if (!j.is_object()) throw bad_input("a scan report must be a JSON object");
  if (const std::string schema = report_json_string(j, what, "schema"); schema != k_report_schema)
    throw bad_input("not a wheelcheck scan report (" + std::string(k_report_schema) + "): its schema is '" + schema +
                    "'");
  Report r;
  r.generated_at = report_json_string(j, what, "generated_at");
  r.wheelcheck_version = report_json_string(j, what, "wheelcheck_version");
  r.indexes = report_json_strings(j, what, "indexes");
  r.projects = report_json_strings(j, what, "projects");
  r.images = report_json_strings(j, what, "images");
  if (const Json* shard = report_json_field(j, "shard")) {
    report_json_object(*shard, "shard");
    r.shard.merged = report_json_bool(*shard, "shard", "merged", false);
    r.shard.index = static_cast<int>(report_json_count(*shard, "shard", "index"));
    r.shard.count = static_cast<int>(report_json_count(*shard, "shard", "count"));
  }
  r.since = report_json_optional(j, what, "since");
  r.environment = report_json_strings(j, what, "environment");
  if (const Json* summary = report_json_field(j, "summary")) {
    report_json_object(*summary, "summary");
    r.wheels_seen = report_json_count(*summary, "summary", "wheels_seen");
  }
  for (const auto& w : report_json_array(j, what, "wheels")) r.wheels.push_back(wheel_from_json(w));
  for (const auto& p : report_json_array(j, what, "pins")) r.pins.push_back(pin_from_json(p));
  r.warnings = report_json_strings(j, what, "warnings");
  r.errors = report_json_strings(j, what, "errors");
  return r;
}

}  // namespace wheelcheck::scan
