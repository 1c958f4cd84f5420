// The renderings of an environment (include/wheelcheck/environment.hpp): its text and its JSON.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

#include "wheelcheck/environment.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/gates.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::environment {

std::string state_name(Entry::State s) {
  switch (s) {
    case Entry::State::Checked: return "checked";
    case Entry::State::Skipped: return "skipped";
    case Entry::State::NoWheel: return "no-wheel";
    case Entry::State::Unknown: return "unknown";
    case Entry::State::Integrity: return "integrity";
    case Entry::State::Error: return "error";
  }
  return "error";
}

namespace {

std::string read_words(const Entry& e, const ReadWheel& w) {
  if (!w.profile) return "";
  const WheelProfile& p = *w.profile;
  if (w.from_cache) return "from the cache";
  if (p.source.empty()) return p.integrity == k_integrity_headers ? "file, headers-only" : "file";
  if (w.whole) return "downloaded whole, verified";
  const double pct = p.size == 0 ? 0.0 : 100.0 * static_cast<double>(w.bytes_fetched) / static_cast<double>(p.size);
  (void)e;
  return fmt::format("headers-only, {} of {} ({:.1f}%)", format_size(w.bytes_fetched), format_size(p.size), pct);
}

// The members of a wheel, by path: what makes a route or a finding that wheel's own in an environment (each
// wheel's check also loads the members of the others that a route names).
std::set<std::string> member_paths(const WheelProfile& w) {
  std::set<std::string> out;
  for (const auto& m : w.members) out.insert(m.path);
  for (const auto& m : w.python.modules) out.insert(m.file);  // a failing import is its module's
  return out;
}

// A route that is off because of the wheel's own members (the members its reasons are about).
bool own_route(const verdict::Route& r, const std::set<std::string>& mine) {
  return std::any_of(r.reason_members.begin(), r.reason_members.end(),
                     [&](const std::string& who) { return mine.count(who) != 0; });
}

// A finding of the wheel's own: about one of its members, or a provider's failure that fails one of them.
bool own_finding(const verdict::Finding& f, const std::set<std::string>& mine) {
  if (!f.member.empty()) return mine.count(f.member) != 0;
  return std::any_of(f.roots.begin(), f.roots.end(), [&](const std::string& r) { return mine.count(r) != 0; }) ||
         (f.object.empty() && f.roots.empty());
}

std::string finding_words(const verdict::Finding& f) {
  return (f.member.empty() ? (f.object.empty() ? "" : f.object + ": ") : f.member + ": ") + verdict::summary(f);
}

}  // namespace

nlohmann::ordered_json to_json(const Environment& env, const std::vector<ReadWheel>& wheels,
                               const std::vector<std::string>& locks) {
  nlohmann::ordered_json j;
  j["schema"] = "wheelcheck-environment/1";
  j["locks"] = locks;
  j["image"] = env.image;
  j["verdict"] = verdict::verdict_name(env.verdict);
  j["exit_code"] = env.bad_input ? k_exit_bad_input : verdict::exit_code(env.verdict);
  nlohmann::ordered_json packages = nlohmann::ordered_json::array();
  std::map<std::size_t, const run::Cell*> cell_of;
  for (std::size_t i = 0; i < env.judged->cells.size(); ++i) cell_of[env.cell_entry[i]] = &env.judged->cells[i];
  for (std::size_t i = 0; i < env.entries.size(); ++i) {
    const Entry& e = env.entries[i];
    nlohmann::ordered_json p;
    p["name"] = e.name;
    p["version"] = e.version;
    p["source"] = e.source;
    p["state"] = e.beside && e.state == Entry::State::Checked ? "installed" : state_name(e.state);
    p["reason"] = e.reason;
    if (!e.lookup_note.empty()) p["lookup"] = e.lookup_note;
    if (e.state == Entry::State::Integrity) {
      p["file"] = e.file.filename;
      p["url"] = e.file.url;
      p["path"] = e.file.path;
    }
    if (e.state == Entry::State::Checked) {
      const ReadWheel& w = wheels[e.wheel];
      p["file"] = e.file.filename;
      p["url"] = e.file.url;
      p["path"] = e.file.path;
      if (!e.variant.empty() || !e.variant_note.empty() || !e.without_variants.empty()) {
        p["variant"] = {
            {"label", e.variant.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(e.variant)},
            {"note", e.variant_note},
            {"depends_on", e.depends_on},
            {"without_variants", e.without_variants.empty() ? e.file.filename : e.without_variants}};
      }
      if (w.profile) {
        p["sha256"] = w.profile->sha256;
        p["size"] = w.profile->size;
        p["integrity"] = w.profile->integrity;
      }
      p["bytes_fetched"] = w.bytes_fetched;
      p["from_cache"] = w.from_cache;
    }
    if (auto it = cell_of.find(i); it != cell_of.end()) {
      p["verdict"] = verdict::verdict_name(it->second->report.verdict);
      p["headline"] = it->second->headline;
      p["report"] = run::to_json(*it->second, run::Size::Document);
    }
    packages.push_back(std::move(p));
  }
  j["packages"] = std::move(packages);
  j["gates"] = gates::to_json(env.gates)["gates"];
  return j;
}

std::string text(const Environment& env, const std::vector<ReadWheel>& wheels, const std::vector<std::string>& locks,
                 const image::Image& image, bool color) {
  const Paint p{color};
  auto paint = [&](verdict::Verdict v) {
    const std::string name = verdict::verdict_name(v);
    std::string upper = name;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return v == verdict::Verdict::Compatible ? p.green(name)
           : v == verdict::Verdict::Degraded ? p.yellow(upper)
                                             : p.red(upper);
  };
  // Counted by what is true of them: installed beside (--with), checked, skipped by a marker, without a
  // wheel for the image (nothing installs them there), unknown (not looked up, or not read offline), not the
  // file the lock's hash says (integrity), not readable.
  std::size_t checked = 0, skipped = 0, missing = 0, beside = 0, unknown = 0, integrity = 0, unread = 0;
  for (const auto& e : env.entries) {
    if (e.beside && e.state == Entry::State::Checked) {
      ++beside;
    } else if (e.state == Entry::State::Checked) {
      ++checked;
    } else if (e.state == Entry::State::Skipped) {
      ++skipped;
    } else if (e.state == Entry::State::NoWheel) {
      ++missing;
    } else if (e.state == Entry::State::Unknown) {
      ++unknown;
    } else if (e.state == Entry::State::Integrity) {
      ++integrity;
    } else {
      ++unread;
    }
  }
  auto not_judged = [&] {
    std::string s;
    auto packages = [](std::size_t n) { return fmt::format("{} package{}", n, n == 1 ? "" : "s"); };
    if (unknown != 0) s += ", " + packages(unknown) + " whose wheel is unknown (not looked up or not read)";
    if (integrity != 0) s += ", " + packages(integrity) + " whose file is not what the lock's hash says";
    if (unread != 0) s += ", " + packages(unread) + " whose wheel could not be read";
    return s;
  };
  std::string out = fmt::format("{} on {}: {}\n", locks.empty() ? std::string("the set") : join(locks, " + "),
                                env.image, paint(env.verdict));
  if (!image.summary.empty()) out += "  " + image.summary + "\n";
  out += fmt::format("  {} wheel{} installed together and checked{}{}{}", checked, checked == 1 ? "" : "s",
                     beside != 0 ? fmt::format(", {} beside them (--with)", beside) : "",
                     skipped != 0 ? fmt::format(", {} skipped by their markers", skipped) : "",
                     missing != 0 ? fmt::format(", {} without a wheel for the image", missing) : "") +
         not_judged() + "\n\n";
  std::map<std::size_t, const run::Cell*> cell_of;
  for (std::size_t i = 0; i < env.judged->cells.size(); ++i) cell_of[env.cell_entry[i]] = &env.judged->cells[i];
  std::size_t wn = 7, wv = 7;
  for (const auto& e : env.entries) {
    wn = std::max(wn, e.name.size());
    wv = std::max(wv, e.version.size());
  }
  const std::string indent(wn + wv + 6, ' ');
  out += "  " + p.bold(fmt::format("{:<{}}  {:<{}}  {}", "package", wn, "version", wv, "verdict: reason") + "\n") +
         indent + p.dim("wheel (how it was read)") + "\n";
  std::vector<std::string> sections;
  for (std::size_t i = 0; i < env.entries.size(); ++i) {
    const Entry& e = env.entries[i];
    std::string what;
    if (e.beside && e.state == Entry::State::Checked) {
      what = "installed beside (--with)";
      if (auto it = cell_of.find(i); it != cell_of.end()) {
        const auto off = run::routes_off(*it->second);
        if (!off.empty())
          what += ": " + off.front() + (off.size() > 1 ? fmt::format(" (and {} more)", off.size() - 1) : "");
      }
      what += "\n" + indent + p.dim(e.file.filename + " (" + read_words(e, wheels[e.wheel]) + ")");
    } else if (auto it = cell_of.find(i); it != cell_of.end()) {
      const run::Cell& c = *it->second;
      const auto mine = member_paths(*wheels[e.wheel].profile);
      const std::string why = c.headline;
      what = paint(c.report.verdict) + (why.empty() ? "" : ": " + why);
      what += "\n" + indent + p.dim(e.file.filename + " (" + read_words(e, wheels[e.wheel]) + ")");
      if (!e.variant_note.empty()) what += "\n" + indent + p.dim(e.variant_note);
      if (!e.lookup_note.empty()) what += "\n" + indent + p.dim(e.lookup_note);
      if (!e.without_variants.empty()) {
        what += "\n" + indent + p.dim("without variant support (pip): " + e.without_variants);
      }
      // Its own routes that are off and its own findings, once each (the full report: --format json).
      std::string sec;
      std::set<std::string> said;
      for (const auto& r : c.report.routes) {
        if (r.available || !own_route(r, mine)) continue;
        sec += fmt::format("  {} {} ({}) is off: {}\n", p.red("x"), r.name, r.optional ? "optional" : "core",
                           r.reasons.empty() ? "" : r.reasons.front());
        for (std::size_t k = 1; k < r.reasons.size(); ++k) sec += "      also: " + r.reasons[k] + "\n";
        said.insert(r.reasons.begin(), r.reasons.end());
        std::vector<std::string> sets;
        for (const auto& [var, value] : r.gates) sets.push_back(var + "=" + value);
        if (!sets.empty()) sec += "      set " + join(sets, " ") + "\n";
      }
      for (const auto& f : c.report.findings) {
        if (f.severity == verdict::Severity::Info || f.severity == verdict::Severity::Warning) continue;
        if (!own_finding(f, mine)) continue;
        const std::string words = finding_words(f);
        if (!said.insert(words).second) continue;  // a route above says it
        sec += fmt::format("  {} {}\n", f.severity == verdict::Severity::Error ? p.red("x") : p.yellow("?"), words);
      }
      if (!sec.empty()) sections.push_back(p.bold(e.name + " " + e.version) + " (" + e.file.filename + ")\n" + sec);
    } else if (e.state == Entry::State::Skipped) {
      what = p.dim("skipped: " + e.reason);
    } else {
      const std::string word = e.state == Entry::State::NoWheel     ? p.red("NO WHEEL")
                               : e.state == Entry::State::Unknown   ? p.red("UNKNOWN")
                               : e.state == Entry::State::Integrity ? p.red("INTEGRITY FAILURE")
                                                                    : p.red("ERROR");
      what = word + ": " + e.reason;
    }
    out += fmt::format("  {:<{}}  {:<{}}  {}\n", e.name, wn, e.version, wv, what);
  }
  for (const auto& sec : sections) out += "\n" + sec;
  const gates::Result& g = env.gates;
  std::vector<std::string> sets;
  for (const auto& gate : g.gates) sets.push_back(gate.variable + "=" + gate.value);
  if (!sets.empty())
    out += "\nGates for the environment: " + join(sets, " ") + "   (eval \"$(wheelcheck gates ...)\")\n";
  const int rc = env.bad_input ? k_exit_bad_input : verdict::exit_code(env.verdict);
  out += fmt::format(
      "\n{}: the environment of {} wheel{}{}; exit {}\n", paint(env.verdict), checked, checked == 1 ? "" : "s",
      missing != 0 ? fmt::format(" and {} package{} without one", missing, missing == 1 ? "" : "s") + not_judged()
                   : not_judged(),
      rc);
  out += p.dim("Each wheel's whole report, with the others installed beside it: --format json (packages[].report).") +
         "\n";
  return out;
}

}  // namespace wheelcheck::environment
