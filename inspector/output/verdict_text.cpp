// The verdict for people (grouped by member, worst first, what is missing and what would fix it on the
// first screen, each finding headed by its summary, and counts that agree with the verdict) and for
// machines (JSON, docs/verdict.schema.json).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "inspector/verdict/routes.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

namespace {

std::string mark(Severity s, const Paint& p) {
  switch (s) {
    case Severity::Error: return p.red("x");
    case Severity::Condition: return p.yellow("?");
    case Severity::Warning: return p.yellow("!");
    case Severity::Info: return p.dim("i");
  }
  return "?";
}

std::string verdict_word(Verdict v, const Paint& p) {
  const std::string w = verdict_name(v);
  std::string upper;
  for (char c : w) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  switch (v) {
    case Verdict::Compatible: return p.green(upper);
    case Verdict::Incompatible: return p.red(upper);
    default: return p.yellow(upper);
  }
}

// "needs an NVIDIA driver >= 580.65.06 because of the CUDA 13 runtime (...); the image's is unknown",
// then the other floors, dimmed.
std::string driver_line(const DriverNeed& d, const Paint& p) {
  std::string verdict = !d.satisfied   ? "the image's driver is unknown"
                        : *d.satisfied ? p.green("the image's " + d.image_driver + " is enough")
                                       : p.red("the image's " + d.image_driver + " is older");
  std::string out =
      fmt::format("needs an NVIDIA driver >= {} because of {}; {}\n", p.bold(d.version), d.because, verdict);
  for (const auto& n : d.notes) out += "    " + p.dim(n) + "\n";
  out.pop_back();
  return out;
}

// The routes first, each on or off, with the member and reason that decided it, the extension modules
// Python imports that fail with it, the variables to set, and what would bring it back.
std::string routes_text(const Report& r, const Paint& p) {
  if (r.routes.empty()) return "";
  std::string out = "\n" + p.bold("Routes") + " (rule set " + r.routes.front().rule_set + ")\n";
  for (const auto& rt : r.routes) {
    const std::string kind = rt.optional ? "optional" : "core";
    if (rt.available) {
      out += fmt::format("  {} {} ({}) on{}\n", p.green("+"), rt.name, kind,
                         rt.conditions.empty() ? "" : " if what \"Holds only if\" lists holds");
      continue;
    }
    out += fmt::format("  {} {} ({}) is {}: {}\n", p.red("x"), rt.name, kind, p.red("off"),
                       rt.reasons.empty() ? "unavailable" : rt.reasons.front());
    for (std::size_t i = 1; i < rt.reasons.size() && i < 3; ++i) out += "      also: " + rt.reasons[i] + "\n";
    // What Python imports: the route's extension modules that do not load.
    std::vector<std::string> imports;
    for (const auto& m : r.members) {
      if (m.kind == "extension" && !m.loads &&
          std::find(rt.members.begin(), rt.members.end(), m.path) != rt.members.end())
        imports.push_back(m.path);
    }
    if (!imports.empty()) out += "      fails to import: " + join(imports, ", ") + "\n";
    if (!rt.gates.empty()) {
      std::vector<std::string> sets;
      for (const auto& [k, v] : rt.gates) sets.push_back(k + "=" + v);
      out += "      " + p.bold("set ") + join(sets, " ") + "   (eval \"$(wheelcheck gates ...)\" sets them)\n";
    }
    // What would bring it back: the fix of the first error that names one of its members.
    for (const auto& f : r.findings) {
      if (f.severity != Severity::Error || f.fix.empty()) continue;
      const bool mine = std::find(rt.members.begin(), rt.members.end(), f.member) != rt.members.end() ||
                        std::any_of(f.roots.begin(), f.roots.end(), [&](const std::string& m) {
                          return std::find(rt.members.begin(), rt.members.end(), m) != rt.members.end();
                        });
      if (!mine) continue;
      out += "      back on: " + f.fix + "\n";
      break;
    }
  }
  return out;
}

// One place the loader looked at, as data: the rule and its entry, the file, what it gave.
nlohmann::ordered_json attempt_json(const resolve::Attempt& a) {
  nlohmann::ordered_json j = {{"rule", resolve::how_name(a.rule)}};
  if (!a.entry.empty()) j["entry"] = a.entry;
  if (!a.owner.empty()) j["owner"] = a.owner;
  if (!a.platform.empty()) j["platform"] = a.platform;
  if (!a.path.empty()) j["path"] = a.path;
  j["result"] = resolve::result_name(a.result);
  if (!a.detail.empty()) j["detail"] = a.detail;
  return j;
}

}  // namespace

nlohmann::ordered_json driver_to_json(const DriverNeed& d) {
  nlohmann::ordered_json j;
  j["needs"] = d.version;
  j["because"] = d.because;
  j["image_driver"] = d.image_driver.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(d.image_driver);
  j["satisfied"] = d.satisfied ? nlohmann::ordered_json(*d.satisfied) : nlohmann::ordered_json();
  j["notes"] = d.notes;
  return j;
}

std::string render_text(const Report& r, bool color) {
  const Paint p{color};
  std::string out;
  out += fmt::format("{} on {}: {}\n", p.bold(r.wheel), p.bold(r.image), verdict_word(r.verdict, p));
  if (!r.image_summary.empty()) out += p.dim("  " + r.image_summary) + "\n";
  for (const auto& a : r.assumptions) out += "  " + p.yellow("assumed: ") + a + "\n";
  out += routes_text(r, p);
  for (const auto& n : r.notes) {
    // Where it is read from, and which Python it goes to where the image has several.
    const bool which_python = n.find(" Pythons)") != std::string::npos || n.find(" stands in)") != std::string::npos;
    // A runtime bound against another minor's table (docs/verdict.md): what the answer rests on.
    const bool lent = n.find(": its symbols are bound against ") != std::string::npos;
    if (n.rfind("read headers-only", 0) == 0 || which_python || lent) out += p.dim("  " + n) + "\n";
    // A condition a settings file accepts: said, with its reason and date, where the verdict is.
    if (n.rfind("accepted until ", 0) == 0) out += "  " + p.yellow("accepted") + n.substr(8) + "\n";
  }
  // Findings grouped by member, members in order of their worst finding.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Finding*>> by_member;
  for (const auto& f : r.findings) {
    if (f.severity == Severity::Info) continue;
    const std::string group = f.object.empty() ? f.member : "image: " + f.object;
    if (!by_member.count(group)) order.push_back(group);
    by_member[group].push_back(&f);
  }
  constexpr std::size_t k_per_member = 8;
  for (const auto& member : order) {
    const auto& list = by_member[member];
    // The wheel's own warnings (a local build's platform tag): one line each, nothing more.
    if (member.empty() && std::all_of(list.begin(), list.end(), [](const Finding* f) {
          return f->severity == Severity::Warning || f->severity == Severity::Info;
        })) {
      out += "\n";
      for (const Finding* f : list) out += mark(f->severity, p) + " the wheel: " + summary(*f) + "\n";
      continue;
    }
    out +=
        "\n" + mark(list.front()->severity, p) + " " + p.bold(member.empty() ? "the wheel" : printable(member)) + "\n";
    std::size_t shown = 0;
    for (const Finding* f : list) {
      if (shown == k_per_member) {
        out += p.dim(fmt::format("    ... and {} more (--json lists every one)", list.size() - shown)) + "\n";
        break;
      }
      ++shown;
      out += fmt::format("    {} {}\n", mark(f->severity, p), summary(*f));
      // The driver a wheel needs is said once, in its own block below.
      if (!(f->kind == FindingKind::Driver && r.driver)) out += "      " + f->explanation + "\n";
      std::vector<std::string> others;
      for (const auto& root : f->roots) {
        if (root != f->member) others.push_back(root);
      }
      if (!others.empty()) out += "      " + p.dim(fmt::format("fails with it: {}", fmt::join(others, ", "))) + "\n";
      if (!f->candidates.empty()) {
        out += "      " + p.dim("instead: ") + f->candidates.front();
        if (f->candidates.size() > 1) out += p.dim(fmt::format(" (+{} more)", f->candidates.size() - 1));
        out += "\n";
      }
      if (!f->fix.empty()) out += "      " + p.green("fix: ") + f->fix + "\n";
      if (f->kind == FindingKind::MissingLibrary && !f->evidence.empty()) {
        out += "      " + p.dim("tried: ");
        const std::size_t n = std::min<std::size_t>(f->evidence.size(), 4);
        for (std::size_t i = 0; i < n; ++i) out += (i ? p.dim("; ") : "") + p.dim(f->evidence[i]);
        if (f->evidence.size() > n) out += p.dim(fmt::format("; ... ({} places)", f->evidence.size()));
        out += "\n";
      }
    }
  }
  // Members that load.
  std::vector<std::string> fine;
  for (const auto& m : r.members) {
    if (m.loads && !by_member.count(m.path)) {
      fine.push_back(fmt::format("{} ({} needs resolved, {} symbols bound)", m.path, m.needs.size(), m.symbols_bound));
    }
  }
  if (!fine.empty()) {
    out += "\n" + p.green("ok") + "\n";
    for (const auto& s : fine) out += "    " + s + "\n";
  }
  if (r.driver) out += "\n" + driver_line(*r.driver, p) + "\n";
  if (!r.conditions.empty()) {
    // Each condition once: the findings above explain them; here, the list of what must hold.
    out += "\n" + p.yellow("Holds only if") + "\n";
    std::set<std::string> open(r.conditions.begin(), r.conditions.end()), said;
    for (const auto& f : r.findings) {
      if (f.severity != Severity::Condition || !open.count(f.explanation) || !said.insert(f.explanation).second)
        continue;
      out += "    - " + (f.member.empty() ? std::string() : f.member + ": ") + summary(f) +
             (f.fix.empty() ? "" : " (" + f.fix + ")") + "\n";
    }
    for (const auto& c : r.conditions) {
      if (!said.count(c)) out += "    - " + c + "\n";
    }
  }
  // The counts that decide the verdict: errors confined to optional routes that are off are counted
  // apart (they degrade, nothing more), and so are conditions within them (they decide nothing).
  const Tally t = tally(r);
  auto count = [](std::size_t n, const char* what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); };
  if (exit_code(r) != exit_code(r.verdict)) {
    // What failed, in each fault's own words (a sound RECORD over a broken member is not "not what RECORD says").
    std::vector<std::string> faults;
    for (const auto& f : r.findings) {
      const std::string s = summary(f);
      if (f.severity == Severity::Error && is_integrity(f.kind) &&
          std::find(faults.begin(), faults.end(), s) == faults.end())
        faults.push_back(s);
    }
    out += "\n" + p.red("The wheel fails its own integrity") + ": " + join(faults, "; ") + "; do not pin it.\n";
  }
  out += fmt::format(
      "\n{}: {}{}, {}, {}; exit {}\n", verdict_word(r.verdict, p), count(t.errors, "error"),
      t.route_errors == 0 ? "" : " (and " + count(t.route_errors, "error") + " in optional routes that are off)",
      count(t.conditions, "condition") + (t.route_conditions == 0 ? ""
                                                                  : " (and " + count(t.route_conditions, "condition") +
                                                                        " in optional routes that are off)"),
      count(t.warnings, "warning"), exit_code(r));
  return out;
}

nlohmann::ordered_json route_to_json(const Route& rt) {
  nlohmann::ordered_json g = nlohmann::ordered_json::object();
  for (const auto& [k, v] : rt.gates) g[k] = v;
  return {{"name", rt.name},         {"rule_set", rt.rule_set},     {"summary", rt.summary},
          {"optional", rt.optional}, {"available", rt.available},   {"members", rt.members},
          {"reasons", rt.reasons},   {"conditions", rt.conditions}, {"gates", g}};
}

nlohmann::ordered_json finding_to_json(const Finding& f) {
  using ojson = nlohmann::ordered_json;
  ojson fj;
  fj["kind"] = kind_name(f.kind);
  fj["severity"] = severity_name(f.severity);
  fj["member"] = f.member;
  if (!f.object.empty()) fj["object"] = f.object;
  fj["loaded_by"] = f.roots;
  fj["library"] = f.library;
  fj["symbol"] = f.symbol;
  fj["demangled"] = f.demangled;
  fj["required_version"] = f.required_version;
  fj["classification"] = why_name(f.classification);
  fj["explanation"] = f.explanation;
  fj["fix"] = f.fix;
  fj["candidates"] = f.candidates;
  if (!f.symbols.empty()) {
    fj["symbols"] = f.symbols;
    fj["symbols_total"] = std::max(f.symbols_total, f.symbols.size());
  }
  fj["evidence"] = f.evidence;
  return fj;
}

nlohmann::ordered_json to_json(const Report& r) {
  using ojson = nlohmann::ordered_json;
  ojson j;
  j["schema"] = r.schema;
  j["verdict"] = verdict_name(r.verdict);
  j["exit_code"] = exit_code(r);
  j["wheel"] = {{"filename", r.wheel}, {"sha256", r.wheel_sha256}};
  j["image"] = {{"name", r.image}, {"summary", r.image_summary}};
  ojson findings = ojson::array();
  for (const auto& f : r.findings) findings.push_back(finding_to_json(f));
  j["findings"] = std::move(findings);
  j["conditions"] = r.conditions;
  ojson routes = ojson::array();
  for (const auto& rt : r.routes) routes.push_back(route_to_json(rt));
  j["routes"] = std::move(routes);
  ojson members = ojson::array();
  for (const auto& m : r.members) {
    ojson needs = ojson::array();
    for (const auto& n : m.needs) {
      ojson tried = ojson::array();
      for (const auto& a : n.tried) tried.push_back(attempt_json(a));
      ojson need = {{"requester", n.requester},
                    {"name", n.name},
                    {"found", n.found},
                    {"rule", resolve::how_name(n.rule)},
                    {"where", n.where}};
      if (n.found) need["by"] = attempt_json(n.by);
      need["tried"] = std::move(tried);
      needs.push_back(std::move(need));
    }
    ojson unresolved = ojson::array();
    for (const auto& u : m.unresolved) {
      unresolved.push_back(
          {{"object", u.object}, {"symbol", u.symbol}, {"version", u.version}, {"because", u.because}});
    }
    members.push_back(
        {{"path", m.path},
         {"kind", m.kind},
         {"loads", m.loads},
         {"symbols",
          {{"bound", m.symbols_bound}, {"unbound", m.symbols_unbound}, {"interpreter", m.symbols_interpreter}}},
         {"missing_libraries", m.missing_libraries},
         {"missing_versions", m.missing_versions},
         {"unresolved", unresolved},
         {"needs", needs}});
  }
  j["members"] = std::move(members);
  j["notes"] = r.notes;
  j["assumptions"] = r.assumptions;
  j["python"] = r.python ? nlohmann::ordered_json{{"version", r.python->version},
                                                  {"executable", r.python->executable},
                                                  {"site_packages", r.python->site_packages}}
                         : nlohmann::ordered_json(nullptr);
  j["driver"] = r.driver ? driver_to_json(*r.driver) : nlohmann::ordered_json();
  return j;
}

}  // namespace wheelcheck::verdict
