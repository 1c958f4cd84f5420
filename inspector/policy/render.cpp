// The consistency of a wheel with the packaging policies, for machines (inspect's JSON) and people.
#include <fmt/format.h>

#include "wheelcheck/policy.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::policy {

nlohmann::ordered_json to_json(const Constraint& c) {
  nlohmann::ordered_json j;
  j["rule"] = rule_name(c.rule);
  j["ceiling"] = c.ceiling;
  if (!c.member.empty()) j["member"] = c.member;
  if (!c.library.empty()) j["library"] = c.library;
  if (!c.version.empty()) j["version"] = c.version;
  if (!c.symbols.empty()) j["symbols"] = c.symbols;
  j["detail"] = c.detail;
  return j;
}

nlohmann::ordered_json to_json(const Consistency& c, const std::optional<Overclaim>& claim) {
  nlohmann::ordered_json j;
  j["consistent_with"] = c.pure || c.tag.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.tag);
  j["constrained_by"] = nlohmann::ordered_json::array();
  for (const auto& k : c.constrained_by) j["constrained_by"].push_back(to_json(k));
  if (c.pure) {
    j["libc"] = nullptr;
  } else {
    j["libc"] = {{"kind", libc_name(c.libc)}, {"evidence", c.libc_evidence}};
  }
  j["newest_versions"] = nlohmann::ordered_json::object();
  for (const auto& [family, v] : c.newest_versions) j["newest_versions"][family] = v;
  if (claim) {
    nlohmann::ordered_json because = nlohmann::ordered_json::array();
    for (const auto* k : claim->because) because.push_back(k->detail);
    j["tag_claim"] = {{"severity", "error"},
                      {"tag", claim->tag},
                      {"consistent_with", claim->consistent_with},
                      {"detail", claim->detail},
                      {"because", because}};
  } else {
    j["tag_claim"] = nullptr;
  }
  return j;
}

std::string render_text(const Consistency& c, const std::optional<Overclaim>& claim, bool color) {
  const Paint paint{color};
  std::string out;
  if (c.pure) return "consistent with: any platform (no native code)\n";
  out += "consistent with: " + paint.bold(c.tag.empty() ? "unknown" : c.tag) + "   (" + libc_name(c.libc) + ": " +
         c.libc_evidence + ")\n";
  if (!c.newest_versions.empty()) {
    std::string v;
    for (const auto& [family, version] : c.newest_versions) v += (v.empty() ? "" : ", ") + family + "_" + version;
    out += "  newest symbol versions: " + v + "\n";
  }
  for (const auto& k : c.constrained_by) {
    out += fmt::format("  limited to {} by {}: {}\n", k.ceiling, rule_name(k.rule), k.detail);
  }
  if (claim) {
    out += paint.red("  error: ") + claim->detail + (claim->because.empty() ? "" : " (the reasons above)") + "\n";
  }
  return out;
}

}  // namespace wheelcheck::policy
