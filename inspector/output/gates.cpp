// Gates rendered: sh for eval, GitHub Actions ($GITHUB_ENV lines, annotations), a Markdown table and JSON
// (include/wheelcheck/gates.hpp). The merge itself is inspector/verdict/gates.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "wheelcheck/gates.hpp"

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
  for (std::size_t i = 0; i < r.reports.size(); ++i) {
    const auto* rep = r.reports[i];
    const bool beside = i < r.beside.size() && r.beside[i];
    out += fmt::format("# {}{}: {}\n", one_line(rep->wheel), beside ? " (installed beside, --with)" : "",
                       verdict::verdict_name(rep->verdict));
    for (const auto& route : rep->routes) {
      if (route.available) continue;
      out += fmt::format("#   route {} ({}) is off: {}\n", one_line(route.name), route.optional ? "optional" : "core",
                         one_line(route.reasons.empty() ? "unavailable" : route.reasons.front()));
      for (std::size_t k = 1; k < route.reasons.size() && k < 5; ++k)
        out += "#     also: " + one_line(route.reasons[k]) + "\n";
    }
  }
  for (const auto& c : r.cautious) out += "# " + one_line(c) + "\n";
  for (const auto& u : r.unset) out += "# " + one_line(u) + "\n";
  for (const auto& g : r.gates) out += fmt::format("export {}={}\n", g.variable, shell_single_quote(g.value));
  for (const auto& g : r.on) {
    if (g.value.empty()) {
      out += fmt::format("# {} (route {} of rule set {}) is on; its off value has no known opposite\n", g.variable,
                         g.route, g.rule_set);
    } else {
      out += fmt::format("export {}={}\n", g.variable, shell_single_quote(g.value));
    }
  }
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
  for (const auto& g : r.on) {
    if (!g.value.empty()) line(g.variable, g.value);
  }
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
      if (!route.available) {
        for (const auto& [k, v] : route.gates) gates += (gates.empty() ? "" : " ") + ("`" + k + "=" + v + "`");
      }
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
  if (!r.on.empty()) {
    ojson on = ojson::object();
    for (const auto& g : r.on) {
      if (!g.value.empty()) on[g.variable] = g.value;
    }
    j["on"] = on;
  }
  if (!r.cautious.empty()) j["cautious"] = r.cautious;
  if (!r.unset.empty()) j["unset"] = r.unset;
  j["integrity"] = r.integrity;
  return j;
}

}  // namespace wheelcheck::gates
