// Rule sets (db/rules, include/wheelcheck/rules.hpp): JSON in, validated; which routes a member belongs to. The
// data both checks read (the image check's routes and gates, the publisher check's own symbols) and the run chooses.
#include "wheelcheck/rules.hpp"

#include <dirent.h>
#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::rules {

namespace {

using json = nlohmann::ordered_json;  // gates keep their order in the file

[[noreturn]] void fail(const std::string& what, const std::string& where, const std::string& message) {
  throw bad_input(what + ": " + where + ": " + message);
}

std::string str(const json& j, const std::string& what, const std::string& where) {
  if (!j.is_string()) fail(what, where, "expected a string");
  return j.get<std::string>();
}

std::vector<std::string> strs(const json& obj, const char* key, const std::string& what, const std::string& where) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end()) return out;
  if (!it->is_array()) fail(what, where + "." + key, "expected a list of strings");
  for (std::size_t i = 0; i < it->size(); ++i)
    out.push_back(str((*it)[i], what, where + "." + key + "[" + std::to_string(i) + "]"));
  return out;
}

// fnmatch accepts almost anything; these are the mistakes it would silently take literally.
void check_glob(const std::string& glob, const std::string& what, const std::string& where) {
  if (glob.empty()) fail(what, where, "an empty glob matches nothing");
  int depth = 0;
  for (std::size_t i = 0; i < glob.size(); ++i) {
    const char c = glob[i];
    if (c == '\\') {
      if (i + 1 == glob.size()) fail(what, where, "glob \"" + glob + "\" ends with a lone backslash");
      ++i;
    } else if (c == '[') {
      if (depth > 0) continue;
      const auto close = glob.find(']', i + 2);
      if (close == std::string::npos) fail(what, where, "glob \"" + glob + "\" has a '[' without its ']'");
      i = close;
    } else if (c == ']') {
      fail(what, where, "glob \"" + glob + "\" has a ']' without its '['");
    }
  }
  if (glob.find("**") != std::string::npos) {
    fail(what, where, "glob \"" + glob + "\": '**' is not supported ('*' matches within one folder; list each folder)");
  }
  if (glob.front() == '/')
    fail(what, where, "glob \"" + glob + "\" must be relative to the wheel's root (no leading '/')");
}

bool shell_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text, bool path) {
  const std::string p(pattern), t(text);
  return ::fnmatch(p.c_str(), t.c_str(), path ? FNM_PATHNAME : 0) == 0;
}

bool route_has(const Route& route, std::string_view wheel_name, std::string_view member_path) {
  if (!route.wheels.empty()) {
    const std::string name = wheel::normalize_project_name(wheel_name);
    bool ok = false;
    for (const auto& w : route.wheels) ok = ok || glob_match(w, name, false);
    if (!ok) return false;
  }
  for (const auto& m : route.members) {
    if (glob_match(m, member_path, true)) return true;
  }
  return false;
}

bool core_for(const Route& route, std::string_view wheel_name) {
  if (!route.optional) return true;
  const std::string name = wheel::normalize_project_name(wheel_name);
  for (const auto& w : route.core_for) {
    if (glob_match(w, name, false)) return true;
  }
  return false;
}

RuleSet parse(std::string_view text, const std::string& what) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number that overflows
    throw bad_input(what + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) fail(what, "(document)", "expected an object");
  RuleSet rs;
  for (auto it = j.begin(); it != j.end(); ++it) {
    static const std::set<std::string> k_keys = {"schema",       "name",          "summary",       "applies_to",
                                                 "sources",      "routes",        "known",         "own_symbols",
                                                 "requires_env", "imports_first", "symbol_owners", "$comment"};
    if (!k_keys.count(it.key())) fail(what, it.key(), "unknown field");
  }
  if (!j.contains("schema") || str(j["schema"], what, "schema") != k_rules_schema) {
    fail(what, "schema", "expected \"" + std::string(k_rules_schema) + "\"");
  }
  rs.name = j.contains("name") ? str(j["name"], what, "name") : "";
  if (rs.name.empty()) fail(what, "name", "missing");
  rs.summary = j.contains("summary") ? str(j["summary"], what, "summary") : "";
  rs.applies_to = strs(j, "applies_to", what, "");
  for (std::size_t i = 0; i < rs.applies_to.size(); ++i)
    check_glob(rs.applies_to[i], what, "applies_to[" + std::to_string(i) + "]");
  rs.sources = strs(j, "sources", what, "");
  if (!j.contains("routes") || !j["routes"].is_array() || j["routes"].empty())
    fail(what, "routes", "expected a non-empty list");
  std::set<std::string> names;
  std::map<std::string, std::pair<std::string, std::string>> gate_owner;  // variable -> (value, route)
  for (std::size_t i = 0; i < j["routes"].size(); ++i) {
    const json& r = j["routes"][i];
    std::string where = "routes[" + std::to_string(i) + "]";
    if (!r.is_object()) fail(what, where, "expected an object");
    for (auto it = r.begin(); it != r.end(); ++it) {
      static const std::set<std::string> k_keys = {"name",    "summary", "optional",   "core_for",  "wheels",
                                                   "members", "gates",   "depends_on", "tolerated", "toolkits"};
      if (!k_keys.count(it.key())) fail(what, where + "." + it.key(), "unknown field");
    }
    Route route;
    route.rule_set = rs.name;
    route.name = r.contains("name") ? str(r["name"], what, where + ".name") : "";
    if (route.name.empty()) fail(what, where + ".name", "missing");
    where += " (" + route.name + ")";
    if (!names.insert(route.name).second) fail(what, where, "a second route named \"" + route.name + "\"");
    route.summary = r.contains("summary") ? str(r["summary"], what, where + ".summary") : "";
    if (r.contains("optional")) {
      if (!r["optional"].is_boolean()) fail(what, where + ".optional", "expected true or false");
      route.optional = r["optional"].get<bool>();
    }
    route.core_for = strs(r, "core_for", what, where);
    route.wheels = strs(r, "wheels", what, where);
    route.members = strs(r, "members", what, where);
    route.depends_on = strs(r, "depends_on", what, where);
    route.toolkits = strs(r, "toolkits", what, where);
    if (route.members.empty()) fail(what, where + ".members", "a route needs at least one member glob");
    for (const auto* list : {&route.core_for, &route.wheels, &route.members}) {
      for (const auto& g : *list) check_glob(g, what, where);
    }
    if (r.contains("gates")) {
      if (!r["gates"].is_object()) fail(what, where + ".gates", "expected an object of VARIABLE: \"value\"");
      for (auto g = r["gates"].begin(); g != r["gates"].end(); ++g) {
        if (!shell_name(g.key())) fail(what, where + ".gates", "\"" + g.key() + "\" is not a shell variable name");
        const std::string value = str(g.value(), what, where + ".gates." + g.key());
        auto [it, fresh] = gate_owner.emplace(g.key(), std::make_pair(value, route.name));
        if (!fresh && it->second.first != value) {
          fail(what, where + ".gates." + g.key(),
               "conflicts with route \"" + it->second.second + "\", which sets " + g.key() + "='" + it->second.first +
                   "' (here '" + value + "')");
        }
        route.gates.emplace_back(g.key(), value);
      }
    }
    route.tolerated = r.contains("tolerated") ? str(r["tolerated"], what, where + ".tolerated") : "";
    if (!route.tolerated.empty() && !route.optional)
      fail(what, where + ".tolerated", "only an optional route is tolerated");
    if (route.optional && route.gates.empty() && route.tolerated.empty()) {
      fail(what, where + ".gates",
           "an optional route needs the gates that turn it off (or \"tolerated\": why nothing needs to be set)");
    }
    rs.routes.push_back(std::move(route));
  }
  // A member glob in a core route and in an optional one: the rule set contradicts itself (a failure of
  // that member turns the optional route off, but can never leave the wheel merely degraded). An optional
  // route that is core for some wheels (core_for) may share members: for those wheels the core route
  // decides (routes.cpp), for the others both are optional.
  for (const auto& a : rs.routes) {
    if (a.optional) continue;
    for (const auto& b : rs.routes) {
      if (!b.optional) continue;
      for (const auto& g : a.members) {
        for (const auto& h : b.members) {
          if (g == h || glob_match(g, h, true) || glob_match(h, g, true)) {
            fail(what, "route " + b.name + ".members",
                 "\"" + h + "\" is also a member of the core route \"" + a.name +
                     "\": a member's failure counts against every route that holds it, so this optional route could "
                     "never leave the wheel degraded; list it in one route, or make the routes' kinds agree");
          }
        }
      }
    }
  }
  // The lists beside the routes: each entry an object of known fields, read by `read`.
  auto entries = [&](const char* key, std::initializer_list<const char*> keys, auto read) {
    if (!j.contains(key)) return;
    if (!j[key].is_array()) fail(what, key, "expected a list");
    for (std::size_t i = 0; i < j[key].size(); ++i) {
      const json& k = j[key][i];
      const std::string where = std::string(key) + "[" + std::to_string(i) + "]";
      if (!k.is_object()) fail(what, where, "expected an object");
      for (auto it = k.begin(); it != k.end(); ++it) {
        if (std::none_of(keys.begin(), keys.end(), [&](const char* f) { return it.key() == f; }))
          fail(what, where + "." + it.key(), "unknown field");
      }
      auto field_text = [&](const char* field) {
        return k.contains(field) ? str(k[field], what, where + "." + field) : "";
      };
      auto globs = [&](const char* field) {
        auto v = strs(k, field, what, where);
        for (const auto& g : v) check_glob(g, what, where + "." + field);
        return v;
      };
      read(k, where, field_text, globs);
    }
  };
  entries("known", {"id", "wheels", "kinds", "match", "fix", "source"},
          [&](const json& k, const std::string& where, auto get, auto globs) {
            Known known{get("id"),    globs("wheels"), strs(k, "kinds", what, where),
                        get("match"), get("fix"),      get("source")};
            if (known.id.empty() || known.fix.empty()) fail(what, where, "needs an \"id\" and a \"fix\"");
            rs.known.push_back(std::move(known));
          });
  entries("own_symbols", {"wheels", "symbols", "why"},
          [&](const json&, const std::string& where, auto get, auto globs) {
            OwnSymbols own{globs("wheels"), globs("symbols"), get("why")};
            if (own.wheels.empty() || own.symbols.empty()) fail(what, where, "needs \"wheels\" and \"symbols\"");
            rs.own_symbols.push_back(std::move(own));
          });
  entries("requires_env", {"id", "wheels", "members", "beside", "variable", "why", "source"},
          [&](const json& k, const std::string& where, auto get, auto globs) {
            RequiresEnv req{get("id"),       globs("wheels"), globs("members"), strs(k, "beside", what, where),
                            get("variable"), get("why"),      get("source")};
            if (req.id.empty() || !shell_name(req.variable) || req.members.empty())
              fail(what, where, "needs an \"id\", \"members\" and a \"variable\" that is a shell variable name");
            rs.requires_env.push_back(std::move(req));
          });
  entries("imports_first", {"wheels", "imports", "why"},
          [&](const json& k, const std::string& where, auto get, auto globs) {
            ImportsFirst f{globs("wheels"), strs(k, "imports", what, where), get("why")};
            if (f.wheels.empty() || f.imports.empty() || f.why.empty())
              fail(what, where, "needs \"wheels\", \"imports\" and \"why\"");
            rs.imports_first.push_back(std::move(f));
          });
  entries("symbol_owners", {"symbols", "distributions", "why"},
          [&](const json& k, const std::string& where, auto get, auto globs) {
            SymbolOwners o{globs("symbols"), {}, get("why")};
            for (const auto& d : strs(k, "distributions", what, where))
              o.distributions.push_back(wheel::normalize_project_name(d));
            if (o.symbols.empty() || o.distributions.empty())
              fail(what, where, "needs \"symbols\" and \"distributions\"");
            rs.symbol_owners.push_back(std::move(o));
          });
  for (const auto& route : rs.routes) {
    for (const auto& dep : route.depends_on) {
      if (!names.count(dep)) fail(what, "route " + route.name + ".depends_on", "unknown route \"" + dep + "\"");
      if (dep == route.name) fail(what, "route " + route.name + ".depends_on", "a route cannot depend on itself");
    }
  }
  return rs;
}

RuleSet load(const std::string& path) {
  RuleSet rs = parse(read_text_file(path, std::uint64_t{4} << 20), path);
  rs.file = path;
  return rs;
}

std::vector<RuleSet> load_all(const std::string& rules_dir) {
  std::vector<std::string> files;
  if (DIR* d = ::opendir(rules_dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0 && n[0] != '.') files.push_back(rules_dir + "/" + n);
    }
    ::closedir(d);
  }
  std::sort(files.begin(), files.end());
  std::vector<RuleSet> out;
  for (const auto& f : files) out.push_back(load(f));
  return out;
}

std::vector<std::pair<std::string, std::string>> imports_first(const RuleSet& rules, std::string_view wheel_name) {
  const std::string name = wheel::normalize_project_name(wheel_name);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : rules.imports_first) {
    if (std::none_of(f.wheels.begin(), f.wheels.end(),
                     [&](const std::string& g) { return glob_match(g, name, false); }))
      continue;
    for (const auto& d : f.imports) out.emplace_back(wheel::normalize_project_name(d), f.why);
  }
  return out;
}

const SymbolOwners* symbol_owner(const RuleSet& rules, std::string_view symbol) {
  for (const auto& o : rules.symbol_owners) {
    for (const auto& g : o.symbols) {
      if (glob_match(g, symbol, false)) return &o;
    }
  }
  return nullptr;
}

const OwnSymbols* own_symbol(const RuleSet& rules, std::string_view wheel_name, std::string_view symbol) {
  const std::string name = wheel::normalize_project_name(wheel_name);
  for (const auto& own : rules.own_symbols) {
    const bool wheel_ok = std::any_of(own.wheels.begin(), own.wheels.end(),
                                      [&](const std::string& g) { return glob_match(g, name, false); });
    if (!wheel_ok) continue;
    for (const auto& g : own.symbols) {
      if (glob_match(g, symbol, false)) return &own;
    }
  }
  return nullptr;
}

const RuleSet* default_for(const std::vector<RuleSet>& sets, std::string_view wheel_name) {
  const std::string name = wheel::normalize_project_name(wheel_name);
  for (const auto& s : sets) {
    for (const auto& g : s.applies_to) {
      if (glob_match(g, name, false)) return &s;
    }
  }
  return nullptr;
}

}  // namespace wheelcheck::rules
