// Routes and gates: rule sets (db/rules/*.json, docs/rules.md) name the routes of a wheel (sets of its
// members, core or optional) and the gates (environment variable -> value) a setup script sets to turn
// an unavailable route off.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace wheelcheck::rules {

inline constexpr std::string_view k_rules_schema = "wheelcheck-rules/1";

struct Route {
  std::string name;
  std::string summary;
  bool optional = false;
  std::vector<std::string> core_for;  // wheel-name globs for which this optional route is core
  std::vector<std::string> wheels;    // wheel-name globs (normalized names: flag-gems-cpp-*); empty: any
  std::vector<std::string> members;   // member-path globs (fnmatch, '*' stays within a folder)
  std::vector<std::pair<std::string, std::string>> gates;  // in file order
  std::vector<std::string> depends_on;                     // routes that must be available for this one to be
  std::string rule_set;                                    // the rule set it came from (for messages)
};

struct RuleSet {
  std::string schema{k_rules_schema};
  std::string name;
  std::string summary;
  std::vector<std::string> applies_to;  // wheel-name globs this rule set is the default for
  std::vector<std::string> sources;
  std::vector<Route> routes;
  std::string file;
};

// Parses and validates: globs that fnmatch cannot take, routes without members, duplicate route
// names, depends_on naming an unknown route, gate names that are not shell variable names, the same
// variable given two values by two routes: each an Error(BadInput) naming the file and the route(s).
RuleSet load(const std::string& path);
RuleSet parse(std::string_view json_text, const std::string& what);

// The rule sets of db/rules (sorted by name), and the one that applies by default to a wheel name
// (normalized, PEP 503), or none.
std::vector<RuleSet> load_all(const std::string& rules_dir);
const RuleSet* default_for(const std::vector<RuleSet>& sets, std::string_view wheel_name);

bool glob_match(std::string_view pattern, std::string_view text, bool path);  // fnmatch (FNM_PATHNAME if path)
// Whether a member of a wheel belongs to a route.
bool route_has(const Route& route, std::string_view wheel_name, std::string_view member_path);
bool core_for(const Route& route, std::string_view wheel_name);

}  // namespace wheelcheck::rules
