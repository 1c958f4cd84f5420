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
  // An optional route whose failure its users tolerate with nothing to set (vLLM runs without its _C
  // kernels under FlagOS's plugin): why. Such a route needs no gates.
  std::string tolerated;
  // The toolkits of the builds it is in (toolkit::wheel_toolkits' kinds, as image::toolkit_kind_name writes them:
  // "musa"); empty: every build.
  std::vector<std::string> toolkits;
};

// A failure the vendor has met and fixed, and how: a finding of one of `kinds` (finding kind names) in a
// wheel matching `wheels`, whose version, library, symbol or explanation contains `match`, gets the
// vendor's fix, with its source, after the check's own (FlagTree #1225: rebuilt on Ubuntu 22.04).
struct Known {
  std::string id;                   // the vendor's reference ("FlagTree #1225")
  std::vector<std::string> wheels;  // wheel-name globs; empty: any
  std::vector<std::string> kinds;   // finding kinds (missing-version, missing-library, ...); empty: any
  std::string match;                // a part of the finding's version, library, symbol or explanation; "" any
  std::string fix;                  // what the vendor did ("rebuilt ... on Ubuntu 22.04")
  std::string source;               // where it is written
};

// Symbols only the wheel itself defines (its own API, FlagCX's devApiBackend): one that it leaves
// undefined is missing, whatever libraries without export tables the image has, since no other project's
// library would define it.
struct OwnSymbols {
  std::vector<std::string> wheels;   // wheel-name globs
  std::vector<std::string> symbols;  // symbol globs (mangled names)
  std::string why;                   // whose they are, with the source
};

// A variable a member needs when another distribution is installed beside the wheel (FlagOS I12: FlagCX's
// libflagcx_device.bc beside FlagTree, whose inductor then needs FLAGCX_BITCODE_PATH to name FlagTree's own).
struct RequiresEnv {
  std::string id;                    // the vendor's reference
  std::vector<std::string> wheels;   // wheel-name globs
  std::vector<std::string> members;  // member globs: the wheel has one of them
  std::vector<std::string> beside;   // distributions (normalized names): the image or a --with wheel has one
  std::string variable;              // what must be set
  std::string why;                   // what fails without it
  std::string source;
};

// Distributions a wheel's package imports before its extension modules load, without declaring them
// (FlagCX's __init__ imports torch, and its wheel has no Requires-Dist): their libraries are loaded first,
// as a Requires-Dist's would be.
struct ImportsFirst {
  std::vector<std::string> wheels;   // wheel-name globs
  std::vector<std::string> imports;  // distribution names
  std::string why;                   // with its source
};

// Symbols only some distributions define (c10::, c10d::, at::, torch:: come from torch's libraries): a
// library without export tables outside them is no candidate, so where their tables are known a symbol they
// lack is missing, not a condition on the vendor libraries in scope.
struct SymbolOwners {
  std::vector<std::string> symbols;        // mangled-name globs
  std::vector<std::string> distributions;  // normalized names
  std::string why;
};

struct RuleSet {
  std::string schema{k_rules_schema};
  std::string name;
  std::string summary;
  std::vector<std::string> applies_to;  // wheel-name globs this rule set is the default for
  std::vector<std::string> sources;
  std::vector<Route> routes;
  std::vector<Known> known;
  std::vector<OwnSymbols> own_symbols;
  std::vector<RequiresEnv> requires_env;
  std::vector<ImportsFirst> imports_first;
  std::vector<SymbolOwners> symbol_owners;
  std::string file;
};
// The distributions `wheel_name` imports first (imports_first), each with why; empty when none.
std::vector<std::pair<std::string, std::string>> imports_first(const RuleSet& rules, std::string_view wheel_name);
// The entry of `rules.symbol_owners` whose globs match `symbol`; null when none does.
const SymbolOwners* symbol_owner(const RuleSet& rules, std::string_view symbol);
// The entry of `rules.own_symbols` that says `symbol` is `wheel_name`'s own; null when none does.
const OwnSymbols* own_symbol(const RuleSet& rules, std::string_view wheel_name, std::string_view symbol);

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
