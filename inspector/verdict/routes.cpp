// Routes and the verdict. A route is a set of members (db/rules), core or optional for the wheel
// checked. It is unavailable when an error names one of its members, or when a route it depends on is
// unavailable (to a fixed point, in rule order); its reasons are the summaries of those errors.
// The verdict then counts what is left: an error outside the members of unavailable optional routes (or
// of a member that a core route holds too) is incompatible; a condition outside them is unknown; errors confined to
// them are degraded. A wheel that fails its own integrity (archive, record, unreadable-member) is never covered by a
// route.
#include "inspector/verdict/routes.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::verdict {

namespace {

using resolve::Object;

// The route's members in the checked wheel (a route over several wheels is merged over their reports: run.cpp).
Route route_of(const rules::Route& route, const resolve::Space& space, const WheelProfile& wheel,
               const std::string& main_wheel) {
  Route rt;
  rt.name = route.name;
  rt.rule_set = route.rule_set;
  rt.summary = route.summary;
  rt.optional = !rules::core_for(route, main_wheel);
  for (const auto& o : space.objects()) {
    if (o->binary == nullptr || o->source != Object::Source::Wheel) continue;
    if (rules::route_has(route, o->wheel, o->member)) rt.members.push_back(o->member);
  }
  // The Python modules its globs name (a module whose import fails takes the route with it).
  for (const auto& m : wheel.python.modules) {
    if (rules::route_has(route, main_wheel, m.file)) rt.members.push_back(m.file);
  }
  // Device code that is not ELF (FlagCX's libflagcx_device.bc) belongs to a route its globs name, too.
  for (const auto& path : wheel.device_code) {
    if (rules::route_has(route, main_wheel, path)) rt.members.push_back(path);
  }
  return rt;
}

// The findings that name a member of the route: errors make it unavailable, conditions it depends on.
void judge(Route& rt, const std::vector<Finding>& findings) {
  const std::set<std::string> mine(rt.members.begin(), rt.members.end());
  std::set<std::string> said;
  for (const auto& f : findings) {
    std::string who = mine.count(f.member) ? f.member : "";
    for (const auto& root : f.roots) {
      if (who.empty() && mine.count(root)) who = root;
    }
    if (who.empty()) continue;
    if (f.severity == Severity::Error) {
      rt.available = false;
      const std::string what = summary(f);
      if (said.insert(who + what).second) {
        rt.reasons.push_back(who + ": " + what);
        rt.reason_members.push_back(who);
      }
    } else if (f.severity == Severity::Condition) {
      if (said.insert(f.explanation).second) rt.conditions.push_back(who + ": " + f.explanation);
    }
  }
}

// The members of the unavailable optional routes that no core route holds: errors confined to them
// degrade the wheel. A member's failure counts against every route that holds it, so a member of a core
// route (flagcx/libflagcx.so, core for the FlagCX wheel and also in FlagTree's optional TLE route) is
// never covered: its failure makes the wheel incompatible.
std::set<std::string> off_members(const Report& r) {
  std::set<std::string> off, core;
  for (const auto& rt : r.routes) {
    if (!rt.optional) core.insert(rt.members.begin(), rt.members.end());
    if (rt.optional && !rt.available) off.insert(rt.members.begin(), rt.members.end());
  }
  for (const auto& m : core) off.erase(m);
  return off;
}

bool covered(const Finding& f, const std::set<std::string>& off) {
  if (is_integrity(f.kind) || f.provider) return false;
  if (!f.member.empty() && off.count(f.member)) return true;
  // A failing Python import (python-load) is its member's: the modules and extension modules it takes down
  // with it (loaded_by) do not confine it to their routes.
  if (f.kind == FindingKind::PythonLoad) return false;
  return std::any_of(f.roots.begin(), f.roots.end(), [&](const std::string& m) { return off.count(m) != 0; });
}

}  // namespace

void apply_known(Report& r, const rules::RuleSet& rules, const std::string& wheel_name) {
  const std::string name = wheel::normalize_project_name(wheel_name);
  for (const auto& k : rules.known) {
    if (!k.wheels.empty() && std::none_of(k.wheels.begin(), k.wheels.end(),
                                          [&](const std::string& g) { return rules::glob_match(g, name, false); }))
      continue;
    for (auto& f : r.findings) {
      if (!k.kinds.empty() && std::find(k.kinds.begin(), k.kinds.end(), kind_name(f.kind)) == k.kinds.end()) continue;
      if (!k.match.empty()) {
        const std::string* fields[] = {&f.required_version, &f.library, &f.symbol, &f.demangled, &f.explanation};
        const bool hit = std::any_of(std::begin(fields), std::end(fields), [&](const std::string* field) {
          return field->find(k.match) != std::string::npos;
        });
        const bool in_symbols = std::any_of(f.symbols.begin(), f.symbols.end(),
                                            [&](const std::string& s) { return s.find(k.match) != std::string::npos; });
        if (!hit && !in_symbols) continue;
      }
      const std::string said = "known (" + k.id + "): " + k.fix;
      if (f.fix.find(said) != std::string::npos) continue;
      f.fix += (f.fix.empty() ? "" : "; ") + said;
      f.evidence.push_back(k.id + (k.source.empty() ? "" : " (" + k.source + ")"));
    }
  }
}

void evaluate_routes(Report& r, const rules::RuleSet& rules, const resolve::Space& space, const WheelProfile& wheel) {
  const std::string main_wheel = wheel::normalize_project_name(wheel.filename.name);
  std::map<std::string, std::size_t> index;
  // The rule set writes a toolkit's kind as image::toolkit_kind_name does ("musa").
  std::vector<std::string> kinds;
  for (const auto& t : toolkit::wheel_toolkits(wheel)) kinds.push_back(image::toolkit_kind_name(t.kind));
  for (const auto& route : rules.routes) {
    // A route of one vendor's builds (FlagCX's MUSA path) is not in another vendor's build of the project.
    if (!route.toolkits.empty() &&
        std::none_of(route.toolkits.begin(), route.toolkits.end(),
                     [&](const std::string& k) { return std::find(kinds.begin(), kinds.end(), k) != kinds.end(); }))
      continue;
    Route rt = route_of(route, space, wheel, main_wheel);
    if (rt.members.empty()) continue;  // the route is not in these wheels
    judge(rt, r.findings);
    index[rt.name] = r.routes.size();
    r.routes.push_back(std::move(rt));
  }
  // A route whose dependency is unavailable is unavailable too (in rule order, to a fixed point).
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& route : rules.routes) {
      auto me = index.find(route.name);
      if (me == index.end() || !r.routes[me->second].available) continue;
      for (const auto& dep : route.depends_on) {
        auto d = index.find(dep);
        if (d != index.end() && !r.routes[d->second].available) {
          r.routes[me->second].available = false;
          r.routes[me->second].reasons.push_back("needs route " + dep + ", which is unavailable");
          r.routes[me->second].reason_members.emplace_back();  // about a route, no member
          changed = true;
          break;
        }
      }
    }
  }
  // The gates of a route that is off, and of one that holds only under a condition (what --conditions-off
  // turns off).
  for (auto& rt : r.routes) {
    if (rt.available && rt.conditions.empty()) continue;
    for (const auto& route : rules.routes) {
      if (route.name == rt.name) rt.gates = route.gates;
    }
  }
}

Tally tally(const Report& r) {
  const std::set<std::string> off = off_members(r);
  Tally t;
  for (const auto& f : r.findings) {
    switch (f.severity) {
      case Severity::Error: ++(covered(f, off) ? t.route_errors : t.errors); break;
      case Severity::Condition: ++(covered(f, off) ? t.route_conditions : t.conditions); break;
      case Severity::Warning: ++t.warnings; break;
      case Severity::Info: break;
    }
  }
  return t;
}

const Finding* reason(const Report& r) {
  const std::set<std::string> off = off_members(r);
  // Findings are worst first: the first of the kind that decided the verdict.
  for (const auto& f : r.findings) {
    const bool decides = r.verdict == Verdict::Incompatible ? f.severity == Severity::Error && !covered(f, off)
                         : r.verdict == Verdict::Unknown    ? f.severity == Severity::Condition && !covered(f, off)
                         : r.verdict == Verdict::Degraded   ? f.severity == Severity::Error
                                                            : false;
    if (decides) return &f;
  }
  return nullptr;
}

Verdict verdict_of(const Tally& t) {
  return t.errors > 0         ? Verdict::Incompatible
         : t.conditions > 0   ? Verdict::Unknown
         : t.route_errors > 0 ? Verdict::Degraded
                              : Verdict::Compatible;
}

void decide(Report& r) {
  const std::set<std::string> off = off_members(r);
  std::set<std::string> seen;
  for (const auto& f : r.findings) {
    if (f.severity == Severity::Condition && !covered(f, off) && seen.insert(f.explanation).second)
      r.conditions.push_back(f.explanation);
  }
  r.verdict = verdict_of(tally(r));
}

}  // namespace wheelcheck::verdict
