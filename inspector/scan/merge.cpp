// Joining the shards of one scan (`scan --merge`), and the pins as shell assignments (`scan --pins`).
//
// Shards check disjoint sets of wheels, so their wheel lists concatenate (a wheel listed twice keeps
// its first entry); the summary is recounted; the exit code is the worst; for each image and project
// the pin is the newest usable pick of any shard, with what newer files any shard passed over.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "wheelcheck/error.hpp"
#include "wheelcheck/gates.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::scan {

namespace {

using Json = nlohmann::ordered_json;

void append_unique(Json& into, const Json& from) {
  for (const auto& v : from) {
    if (std::find(into.begin(), into.end(), v) == into.end()) into.push_back(v);
  }
}

bool newer(const std::string& a, const std::string& b) {
  const auto c = wheel::compare_versions(a, b);
  return c ? *c > 0 : a > b;
}

}  // namespace

Json summary_of(const Json& wheels, std::uint64_t seen) {
  Json verdicts{{"compatible", 0}, {"degraded", 0}, {"incompatible", 0}, {"unknown", 0}, {"not-targeted", 0}};
  int errors = 0;
  for (const auto& w : wheels) {
    if (!w["error"].is_null()) ++errors;
    for (const auto& r : w["results"]) {
      const std::string key = r["targeted"].get<bool>() ? r["verdict"].get<std::string>() : "not-targeted";
      verdicts[key] = verdicts[key].get<int>() + 1;
    }
  }
  return Json{{"wheels_seen", seen},
              {"new", wheels.size()},
              {"checked", wheels.size() - static_cast<std::size_t>(errors)},
              {"errors", errors},
              {"verdicts", verdicts}};
}

namespace {

Json merge_pin(const Json& a, const Json& b) {
  Json out = a;
  const Json* best = &a;
  if (a["pick"].is_null() || (!b["pick"].is_null() && newer(b["pick"]["version"], a["pick"]["version"]))) best = &b;
  out["pick"] = (*best)["pick"];
  // What was passed over, newer than the pick (or everything when nothing was picked), once per file.
  Json passed = Json::array();
  std::set<std::string> seen;
  for (const auto* p : {&a, &b}) {
    for (const auto& item : (*p)["passed_over"]) {
      const std::string file = item["filename"];
      if (!out["pick"].is_null() && !newer(item["version"], out["pick"]["version"])) continue;
      // A shard that did not check a file says so; the shard that did has the real reason.
      if (item["reason"].get<std::string>().rfind("not checked yet", 0) == 0) continue;
      if (seen.insert(file).second) passed.push_back(item);
    }
  }
  out["passed_over"] = passed;
  return out;
}

std::string env_name(std::string s) {
  for (char& c : s) c = std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_';
  return s;
}

}  // namespace

Json merge(const std::vector<Json>& shards) {
  if (shards.empty()) throw usage_error("scan --merge: no shard reports given");
  Json out = shards.front();
  Json wheels = Json::array();
  std::set<std::string> keys;
  Json pins = Json::array();
  std::uint64_t seen = 0;
  int exit_code = 0;
  for (const auto& s : shards) {
    if (!s.is_object() || s.value("schema", "") != "wheelcheck-scan/1") {
      throw bad_input("scan --merge: not a wheelcheck scan report (wheelcheck-scan/1)");
    }
    append_unique(out["indexes"], s["indexes"]);
    append_unique(out["projects"], s["projects"]);
    append_unique(out["images"], s["images"]);
    append_unique(out["warnings"], s["warnings"]);
    if (s.contains("errors") && s["errors"].is_array()) {
      if (!out.contains("errors") || !out["errors"].is_array()) out["errors"] = Json::array();
      append_unique(out["errors"], s["errors"]);
    }
    for (const auto& w : s["wheels"]) {
      if (keys.insert(w["filename"].get<std::string>() + "#" + w["sha256"].get<std::string>()).second) {
        wheels.push_back(w);
      }
    }
    for (const auto& p : s["pins"]) {
      auto same = std::find_if(pins.begin(), pins.end(),
                               [&](const Json& q) { return q["image"] == p["image"] && q["project"] == p["project"]; });
      if (same == pins.end())
        pins.push_back(p);
      else
        *same = merge_pin(*same, p);
    }
    seen = std::max<std::uint64_t>(seen, s["summary"]["wheels_seen"].get<std::uint64_t>());
    const int e = s["exit_code"].get<int>();
    exit_code = (e == 2 || exit_code == 2) ? 2 : std::max(exit_code, e);
  }
  out["shard"] = Json{{"index", 0}, {"count", shards.size()}, {"merged", true}};
  out["exit_code"] = exit_code;
  out["summary"] = summary_of(wheels, seen);
  out["wheels"] = wheels;
  out["pins"] = pins;
  return out;
}

std::string pins_env(const Json& report) {
  std::string out = fmt::format("# wheelcheck scan pins ({}), generated {}\n", report.value("schema", ""),
                                report.value("generated_at", ""));
  out += "# <PROJECT>_VERSION_<IMAGE>, <PROJECT>_WHEEL_<IMAGE>, <PROJECT>_URL_<IMAGE>, <PROJECT>_SHA256_<IMAGE>\n";
  out += "# (<PROJECT>_VARIANT_<IMAGE>: the wheel variant's label, for a variant)\n";
  out +=
      "# (for pip install --require-hashes \"$URL\" --hash=sha256:$SHA256) and <PROJECT>_GATES_<IMAGE> (the gates it "
      "needs)\n";
  std::set<std::string> images;
  for (const auto& p : report["pins"]) images.insert(p["image"].get<std::string>());
  for (const auto& p : report["pins"]) {
    const std::string project = env_name(p["project"]);
    const std::string image = env_name(p["image"]);
    if (p["pick"].is_null()) {
      out += fmt::format("# {} on {}: nothing usable ({} file{} passed over; the report's pins say why): no pin\n",
                         p["project"].get<std::string>(), p["image"].get<std::string>(), p["passed_over"].size(),
                         p["passed_over"].size() == 1 ? "" : "s");
      continue;
    }
    const auto& pick = p["pick"];
    std::string gates;
    for (const auto& [k, v] : pick["gates"].items())
      gates += (gates.empty() ? "" : " ") + k + "=" + v.get<std::string>();
    out += fmt::format("# {} on {}: {} ({}{})\n", p["project"].get<std::string>(), p["image"].get<std::string>(),
                       pick["filename"].get<std::string>(), pick["verdict"].get<std::string>(),
                       pick.contains("variant") ? ", variant " + pick["variant"].get<std::string>() : std::string());
    const std::string suffix = images.size() == 1 ? "" : "_" + image;
    out += fmt::format("{}_VERSION{}={}\n", project, suffix,
                       gates::shell_single_quote(pick["version"].get<std::string>()));
    out +=
        fmt::format("{}_WHEEL{}={}\n", project, suffix, gates::shell_single_quote(pick["filename"].get<std::string>()));
    out += fmt::format("{}_URL{}={}\n", project, suffix, gates::shell_single_quote(pick.value("url", std::string())));
    out += fmt::format("{}_SHA256{}={}\n", project, suffix,
                       gates::shell_single_quote(pick.value("sha256", std::string())));
    out += fmt::format("{}_GATES{}={}\n", project, suffix, gates::shell_single_quote(gates));
    if (pick.contains("variant")) {
      out += fmt::format("{}_VARIANT{}={}\n", project, suffix,
                         gates::shell_single_quote(pick["variant"].get<std::string>()));
    }
  }
  return out;
}

}  // namespace wheelcheck::scan
