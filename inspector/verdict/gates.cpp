// Gates: merged over wheels, failed closed when they cannot vouch for them. Their renderings (sh, GitHub
// Actions, Markdown, JSON) are in inspector/output/gates.cpp.
#include "wheelcheck/gates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "wheelcheck/error.hpp"

namespace wheelcheck::gates {

Result merge(const std::vector<verdict::Report>& reports, const Options& options) {
  Result r;
  std::map<std::string, std::size_t> index;
  std::set<std::string> integrity_said;
  for (const auto& rep : reports) {
    r.reports.push_back(&rep);
    for (auto& line : verdict::integrity_problems(rep)) {
      if (integrity_said.insert(line).second) r.integrity.push_back(std::move(line));
    }
    r.verdict = verdict::worst(r.verdict, rep.verdict);
    if (r.image.empty()) r.image = rep.image;
    for (const auto& route : rep.routes) {
      // A route on only if an unknown fact turns out right is off for a cautious CI (--conditions-off).
      const bool cautious = options.conditions_off && route.available && !route.conditions.empty();
      if (route.available && !cautious) continue;
      if (cautious) {
        r.cautious.push_back(fmt::format("route {} ({}) of {} is off (--conditions-off): holds only if {}", route.name,
                                         route.optional ? "optional" : "core", rep.wheel, route.conditions.front()));
      }
      for (const auto& [var, value] : route.gates) {
        auto it = index.find(var);
        if (it == index.end()) {
          index[var] = r.gates.size();
          r.gates.push_back({var, value, route.name, route.rule_set, rep.wheel});
          continue;
        }
        const Gate& first = r.gates[it->second];
        if (first.value != value) {
          throw bad_input(fmt::format(
              "conflicting gates: route {} of rule set {} ({}) sets {}='{}', route {} of rule set {} ({}) sets "
              "{}='{}'; fix one of the rule sets",
              first.route, first.rule_set, first.wheel, var, first.value, route.name, route.rule_set, rep.wheel, var,
              value));
        }
      }
    }
  }
  return r;
}

std::string on_value(const std::string& off) {
  static const std::pair<const char*, const char*> k_pairs[] = {
      {"0", "1"},    {"1", "0"},    {"true", "false"}, {"false", "true"}, {"yes", "no"},
      {"no", "yes"}, {"on", "off"}, {"off", "on"},     {"TRUE", "FALSE"}, {"FALSE", "TRUE"}};
  for (const auto& [a, b] : k_pairs) {
    if (off == a) return b;
  }
  return "";
}

void add_on_values(Result& result, const std::vector<rules::RuleSet>& sets) {
  std::set<std::string> seen;
  for (const auto& g : result.gates) seen.insert(g.variable);
  for (const auto& set : sets) {
    for (const auto& route : set.routes) {
      for (const auto& [var, value] : route.gates) {
        if (!seen.insert(var).second) continue;
        result.on.push_back({var, on_value(value), route.name, set.name, ""});
      }
    }
  }
}

Result fail_closed(const std::vector<rules::RuleSet>& sets, const std::string& error) {
  Result r;
  r.error = error.empty() ? std::string("the wheels could not be evaluated") : error;
  std::set<std::string> seen;
  for (const auto& set : sets) {
    for (const auto& route : set.routes) {
      for (const auto& [var, value] : route.gates) {
        if (seen.insert(var).second) r.gates.push_back({var, value, route.name, set.name, ""});
      }
    }
  }
  return r;
}

void close(Result& merged, const std::vector<rules::RuleSet>& sets, const std::vector<std::string>& problems) {
  std::vector<std::string> said;
  for (const auto& p : problems) {
    if (std::find(said.begin(), said.end(), p) == said.end()) said.push_back(p);
  }
  merged.error = said.empty() ? std::string("the wheels could not be vouched for") : said.front();
  if (said.size() > 1)
    merged.error += fmt::format(" (and {} more problem{})", said.size() - 1, said.size() == 2 ? "" : "s");
  std::set<std::string> seen;
  for (const auto& g : merged.gates) seen.insert(g.variable);
  for (const auto& off : fail_closed(sets, merged.error).gates) {
    if (seen.insert(off.variable).second) merged.gates.push_back(off);
  }
}

}  // namespace wheelcheck::gates
