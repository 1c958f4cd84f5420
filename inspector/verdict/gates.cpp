// Gates: merged over wheels, rendered for sh, GitHub Actions and JSON.
#include "wheelcheck/gates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "wheelcheck/error.hpp"

namespace wheelcheck::gates {

namespace {

// A comment line never spans lines.
std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

// Workflow command data: % \r \n escaped; properties also : and ,.
std::string escape_data(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '%') {
      out += "%25";
    } else if (c == '\r') {
      out += "%0D";
    } else if (c == '\n') {
      out += "%0A";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escape_property(std::string_view s) {
  std::string out;
  for (char c : escape_data(s)) {
    if (c == ':') {
      out += "%3A";
    } else if (c == ',') {
      out += "%2C";
    } else {
      out += c;
    }
  }
  return out;
}

std::string md(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += "<br>";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string shell_single_quote(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

Result merge(const std::vector<verdict::Report>& reports) {
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
      if (route.available) continue;
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

namespace {
std::string verdict_word(const Result& r) {
  return r.error.empty() ? verdict::verdict_name(r.verdict) : "error";
}
}  // namespace

std::string to_sh(const Result& r) {
  std::string out = fmt::format("# wheelcheck {} gates for image {}: eval \"$(wheelcheck gates ...)\"\n",
                                WHEELCHECK_VERSION, r.image.empty() ? "?" : one_line(r.image));
  if (!r.error.empty()) {
    out += "# ERROR: " + one_line(r.error) + "\n";
    out += "# every gate is set to off (fail closed), and this eval returns 2: under `set -e` the script stops\n";
  }
  for (const auto& w : r.integrity) {
    if (!r.error.starts_with(w)) out += "# WARNING: " + one_line(w) + "\n";  // said once, as the error
  }
  for (const auto* rep : r.reports) {
    out += fmt::format("# {}: {}\n", one_line(rep->wheel), verdict::verdict_name(rep->verdict));
    for (const auto& route : rep->routes) {
      if (route.available) continue;
      out += fmt::format("#   route {} ({}) is off: {}\n", one_line(route.name), route.optional ? "optional" : "core",
                         one_line(route.reasons.empty() ? "unavailable" : route.reasons.front()));
      for (std::size_t i = 1; i < route.reasons.size() && i < 5; ++i)
        out += "#     also: " + one_line(route.reasons[i]) + "\n";
    }
  }
  for (const auto& g : r.gates) out += fmt::format("export {}={}\n", g.variable, shell_single_quote(g.value));
  out += fmt::format("export WHEELCHECK_VERDICT={}\n", shell_single_quote(verdict_word(r)));
  if (!r.error.empty()) out += "(exit 2)\n";
  return out;
}

std::string github_env(const Result& r) {
  std::string out;
  auto line = [&](const std::string& var, const std::string& value) {
    if (value.find('\n') == std::string::npos) {
      out += var + "=" + value + "\n";
    } else {
      std::string delim = "WHEELCHECK_EOF";
      while (value.find(delim) != std::string::npos) delim += "_";
      out += var + "<<" + delim + "\n" + value + "\n" + delim + "\n";
    }
  };
  for (const auto& g : r.gates) line(g.variable, g.value);
  line("WHEELCHECK_VERDICT", verdict_word(r));
  return out;
}

std::string github_annotations(const Result& r) {
  std::string out;
  if (!r.error.empty()) {
    out += "::error title=wheelcheck: gates not evaluated::" +
           escape_data(r.error + " (every gate is set to off; the step fails)") + "\n";
  }
  for (const auto& w : r.integrity) out += "::error::" + escape_data(w) + "\n";
  for (const auto* rep : r.reports) {
    const bool bad = rep->verdict == verdict::Verdict::Incompatible;
    for (const auto& route : rep->routes) {
      if (route.available) continue;
      std::string gates;
      for (const auto& [k, v] : route.gates) gates += (gates.empty() ? "" : " ") + k + "=" + v;
      out += fmt::format("::{} title={}::{}\n", route.optional && !bad ? "warning" : "error",
                         escape_property("wheelcheck: " + route.name + " off (" + rep->wheel + ")"),
                         escape_data(fmt::format("{} on {}: {}{}", rep->wheel, rep->image,
                                                 route.reasons.empty() ? "unavailable" : route.reasons.front(),
                                                 gates.empty() ? "" : "; gates " + gates)));
    }
    if (bad && std::none_of(rep->routes.begin(), rep->routes.end(), [](const auto& rt) { return !rt.available; })) {
      const std::string why = rep->findings.empty() ? "" : rep->findings.front().explanation;
      out += fmt::format("::error title={}::{}\n", escape_property("wheelcheck: " + rep->wheel + " incompatible"),
                         escape_data(fmt::format("{} on {}: {}", rep->wheel, rep->image, why)));
    }
    if (rep->verdict == verdict::Verdict::Unknown) {
      for (const auto& c : rep->conditions) {
        out += fmt::format("::notice title={}::{}\n", escape_property("wheelcheck: " + rep->wheel + " holds only if"),
                           escape_data(c));
      }
    }
  }
  return out;
}

std::string markdown_summary(const Result& r) {
  std::string out = fmt::format("### wheelcheck on `{}`: {}\n\n", md(r.image), verdict_word(r));
  if (!r.error.empty()) out += "**The gates could not be evaluated**: " + md(r.error) + ". Every gate is off.\n\n";
  out += "| wheel | verdict | route | available | why | gates |\n| --- | --- | --- | --- | --- | --- |\n";
  // Why, in pip's words (verdict::requirement): the finding that decided, or the first error of a route's
  // members; the route's own reason where none is the route's.
  auto said = [](const verdict::Finding& f) {
    return (f.member.empty() ? "" : f.member + ": ") + verdict::requirement(f);
  };
  auto route_why = [&](const verdict::Report& rep, const verdict::Route& route) -> std::string {
    if (route.reasons.empty()) return route.conditions.empty() ? "" : "holds only if: " + route.conditions.front();
    auto in_route = [&](const std::string& m) {
      return std::find(route.members.begin(), route.members.end(), m) != route.members.end();
    };
    for (const auto& f : rep.findings) {
      if (f.severity == verdict::Severity::Error &&
          (in_route(f.member) || std::any_of(f.roots.begin(), f.roots.end(), in_route)))
        return said(f);
    }
    return route.reasons.front();
  };
  for (const auto* rep : r.reports) {
    if (rep->routes.empty()) {
      const verdict::Finding* why = verdict::reason(*rep);
      out += fmt::format("| {} | {} | | | {} | |\n", md(rep->wheel), verdict::verdict_name(rep->verdict),
                         md(why != nullptr          ? said(*why)
                            : rep->findings.empty() ? ""
                                                    : rep->findings.front().explanation));
    }
    for (const auto& route : rep->routes) {
      std::string gates;
      for (const auto& [k, v] : route.gates) gates += (gates.empty() ? "" : " ") + ("`" + k + "=" + v + "`");
      out += fmt::format("| {} | {} | {}{} | {} | {} | {} |\n", md(rep->wheel), verdict::verdict_name(rep->verdict),
                         md(route.name), route.optional ? " (optional)" : "", route.available ? "yes" : "**no**",
                         md(route_why(*rep, route)), gates);
    }
  }
  if (!r.gates.empty()) {
    out += "\nGates set: ";
    for (std::size_t i = 0; i < r.gates.size(); ++i)
      out += (i ? ", " : "") + ("`" + r.gates[i].variable + "=" + r.gates[i].value + "`");
    out += "\n";
  }
  return out;
}

nlohmann::ordered_json to_json(const Result& r) {
  using ojson = nlohmann::ordered_json;
  ojson j;
  j["schema"] = k_gates_schema;
  j["verdict"] = verdict_word(r);
  j["image"] = r.image;
  if (!r.error.empty()) j["error"] = r.error;
  ojson wheels = ojson::array();
  ojson routes = ojson::array();
  for (const auto* rep : r.reports) {
    ojson w;
    w["wheel"] = rep->wheel;
    w["verdict"] = verdict::verdict_name(rep->verdict);
    w["conditions"] = rep->conditions;
    wheels.push_back(w);
    for (const auto& rt : rep->routes) {
      ojson route = {{"wheel", rep->wheel}};
      route.update(verdict::route_to_json(rt));
      routes.push_back(std::move(route));
    }
  }
  j["wheels"] = wheels;
  j["routes"] = routes;
  ojson gates = ojson::object();
  for (const auto& g : r.gates) gates[g.variable] = g.value;
  j["gates"] = gates;
  j["integrity"] = r.integrity;
  return j;
}

}  // namespace wheelcheck::gates
