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
  r.image_toolkit = options.image_toolkit;
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

bool vendor_bound(const rules::Route& route, const std::string& value, const std::string& image_toolkit) {
  if (route.toolkits.empty() || !on_value(value).empty()) return false;
  return std::find(route.toolkits.begin(), route.toolkits.end(), image_toolkit) == route.toolkits.end();
}

namespace {

std::string gates_withheld_line(const rules::Route& route, const std::string& set, const std::string& var,
                                const std::string& value, const std::string& image_toolkit) {
  std::string kinds;
  for (const auto& k : route.toolkits) kinds += (kinds.empty() ? "" : " or ") + k;
  return fmt::format(
      "{} not set: its value {} is a path of route {} (rule set {}), which only {} builds have, and the image's "
      "toolkit is {}",
      var, value, route.name, set, kinds, image_toolkit.empty() ? std::string("unknown or none") : image_toolkit);
}

}  // namespace

void add_on_values(Result& result, const std::vector<rules::RuleSet>& sets) {
  std::set<std::string> seen;
  for (const auto& g : result.gates) seen.insert(g.variable);
  // The routes a given wheel has and that are on: only these are switched on.
  std::map<std::pair<std::string, std::string>, std::string> on_in;  // (rule set, route) -> the wheel
  for (const auto* rep : result.reports) {
    for (const auto& rt : rep->routes) {
      if (rt.available) on_in.emplace(std::make_pair(rt.rule_set, rt.name), rep->wheel);
    }
  }
  for (const auto& set : sets) {
    for (const auto& route : set.routes) {
      auto wheel = on_in.find({set.name, route.name});
      for (const auto& [var, value] : route.gates) {
        if (!seen.insert(var).second) continue;
        if (wheel == on_in.end()) {
          result.unset.push_back(fmt::format(
              "{} not set: no given wheel has route {} of rule set {}, so it is not "
              "switched on{}",
              var, route.name, set.name, on_value(value).empty() ? "" : " (its off value is " + value + ")"));
          continue;
        }
        result.on.push_back({var, on_value(value), route.name, set.name, wheel->second});
      }
    }
  }
}

Result fail_closed(const std::vector<rules::RuleSet>& sets, const std::string& error,
                   const std::string& image_toolkit) {
  Result r;
  r.error = error.empty() ? std::string("the wheels could not be evaluated") : error;
  r.image_toolkit = image_toolkit;
  std::set<std::string> seen;
  for (const auto& set : sets) {
    for (const auto& route : set.routes) {
      for (const auto& [var, value] : route.gates) {
        if (!seen.insert(var).second) continue;
        if (vendor_bound(route, value, image_toolkit)) {
          r.unset.push_back(gates_withheld_line(route, set.name, var, value, image_toolkit));
          continue;
        }
        r.gates.push_back({var, value, route.name, set.name, ""});
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
  const Result closed = fail_closed(sets, merged.error, merged.image_toolkit);
  for (const auto& off : closed.gates) {
    if (seen.insert(off.variable).second) merged.gates.push_back(off);
  }
  for (const auto& line : closed.unset) {
    if (!seen.count(line.substr(0, line.find(' ')))) merged.unset.push_back(line);
  }
}

}  // namespace wheelcheck::gates
