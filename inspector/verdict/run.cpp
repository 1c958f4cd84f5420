// One run of the check for every command (check, gates, the matrix, side by side, the scan).
//
// A cell is one wheel against one image:
// 1. Is the image one the wheel is for at all? Its tags, Requires-Python and ELF machine (as pip and the
//    loader judge them) and its accelerator toolkit (its local label and the runtimes its members need)
//    against the image's. An image it is not for gives a one-line answer, in words, and does not count in
//    the exit code of a command over many images.
// 2. The check itself (verdict::check), with the rule set chosen for the wheel and the packaging
//    policies where the wheel claims one or the image is a packaging target.
// 3. The headline: the route that is off, else the deciding finding, in one line.
#include "wheelcheck/run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "wheelcheck/error.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/variant.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::run {

RuleChoice::RuleChoice(const std::string& rules, const std::string& rules_dir)
    : m_none(rules == "none"), m_sets(rules::load_all(rules_dir)) {
  if (rules.empty() || m_none) return;
  if (rules.find('/') != std::string::npos || rules.ends_with(".json")) {
    m_chosen = rules::load(rules);
    return;
  }
  std::vector<std::string> names;
  for (const auto& rs : m_sets) {
    if (rs.name == rules) m_chosen = rs;
    names.push_back(rs.name);
  }
  if (!m_chosen) {
    throw usage_error("--rules " + rules + ": no such rule set in " + rules_dir +
                      (names.empty() ? std::string(" (give a file)") : " (there are: " + join(names, ", ") + ")"));
  }
}

const rules::RuleSet* RuleChoice::for_wheel(const WheelProfile& w) const {
  if (m_none) return nullptr;
  if (m_chosen) return &*m_chosen;
  return rules::default_for(m_sets, w.filename.name);
}

namespace {

std::string pythons_of(const image::Image& im) {
  std::vector<std::string> v;
  for (const auto& p : im.pythons) {
    if (std::find(v.begin(), v.end(), p.version) == v.end()) v.push_back(p.version);
  }
  if (v.empty() && im.python.known()) v.push_back(*im.python.value);
  return v.empty() ? "unknown" : join(v, ", ");
}

std::string first_sentence(const std::string& s) {
  const auto dot = s.find(". ");
  return dot == std::string::npos ? (s.ends_with(".") ? s.substr(0, s.size() - 1) : s) : s.substr(0, dot);
}

std::string python_tags(const WheelProfile& w) {
  std::vector<std::string> v;
  for (const auto& t : w.filename.tags) {
    if (std::find(v.begin(), v.end(), t.python) == v.end()) v.push_back(t.python);
  }
  return join(v, ".");
}

}  // namespace

namespace {

// Why pip would not install the wheel on the image, from the tag findings a check made (its own, or
// check_wheel_tags'): its platform tag (machine, OS, manylinux/musllinux floor against the image's C
// library), its Python and ABI tags against the image's Pythons, its Requires-Python. Nothing else: a
// member's machine, a local version label and a project name are no part of an installer's choice (pip
// ignores local version labels), so they never make a wheel "not targeted"; what they claim is a finding
// beside the loader's verdict (label_claim).
std::string not_targeted_by(const WheelProfile& w, const image::Image& im,
                            const std::vector<verdict::Finding>& findings) {
  using verdict::FindingKind;
  const std::string image_arch = im.arch.known() ? *im.arch.value : "";
  for (const auto& f : findings) {
    if (f.severity != verdict::Severity::Error) continue;
    switch (f.kind) {
      case FindingKind::TagPlatform: {
        std::vector<std::string> archs;
        bool foreign = false;
        for (const auto& t : w.filename.tags) {
          const auto p = wheel::parse_platform(t.platform);
          if (p.kind == wheel::Platform::Kind::Foreign) foreign = true;
          if (!p.arch.empty() && std::find(archs.begin(), archs.end(), p.arch) == archs.end()) archs.push_back(p.arch);
        }
        const bool other_arch =
            !image_arch.empty() && !archs.empty() &&
            std::none_of(archs.begin(), archs.end(), [&](const auto& a) { return wheel::arch_matches(a, image_arch); });
        if (other_arch) return join(archs, ".") + " wheel, " + image_arch + " image";
        if (foreign) return "not a Linux wheel (" + w.filename.tags.front().platform + ")";
        return first_sentence(f.explanation);
      }
      case FindingKind::TagPython: return python_tags(w) + " wheel, the image's Python is " + pythons_of(im);
      case FindingKind::TagAbi: return first_sentence(f.explanation);
      case FindingKind::RequiresPython:
        return "Requires-Python " + f.required_version + ", the image's Python is " + pythons_of(im);
      default: break;
    }
  }
  return "";
}

}  // namespace

std::string label_elsewhere(const WheelProfile& w, const image::Image& im) {
  std::vector<toolkit::WheelToolkit> claimed;
  if (auto label = toolkit::of_label(w.filename.version)) claimed.push_back(std::move(*label));
  if (auto named = toolkit::of_name(w.filename.name)) {
    if (claimed.empty() || claimed.front().kind != named->kind) claimed.push_back(std::move(*named));
  }
  // A +cpu build claims no toolkit.
  if (toolkit::cpu_label(w.filename.version)) return "";
  if (claimed.empty()) return "";
  for (const auto& t : claimed) {
    if (!im.toolkit || t.kind != im.toolkit->kind) continue;
    // The label's SDK release and chip.
    if (t.from_label) {
      if (std::string why = toolkit::mismatch(t, im); !why.empty()) return why;
    }
    // A build on another Triton line than the image's own build of the project (FlagTree's +ascend3.5 is for
    // the CANN 9 images, whose FlagTree is 0.7.0+ascend3.5; the CANN 8.5 images run 0.6.0+ascend3.2).
    if (!t.line.empty()) {
      if (const auto* d = im.distribution(w.filename.name)) {
        const auto mine = toolkit::of_label(d->version);
        if (mine && mine->kind == t.kind && !mine->line.empty() && mine->line != t.line) {
          return fmt::format("{} build on the Triton {} line; the image's {} {} is on the {} line",
                             toolkit::with_article(toolkit::display_name(t.kind)), t.line, d->name, d->version,
                             mine->line);
        }
      }
    }
    return "";
  }
  std::vector<std::string> kinds;
  for (const auto& t : claimed) kinds.push_back(toolkit::display_name(t.kind));
  return toolkit::with_article(join(kinds, "/")) + " build, " +
         (im.toolkit ? toolkit::with_article(toolkit::display_name(im.toolkit->kind)) + " image"
                     : std::string("an image without an accelerator toolkit"));
}

namespace {

// The claim a label or name makes against the image, as a warning beside the verdict: what the label says,
// that pip installs the wheel all the same, and that what its members load decides.
std::optional<verdict::Finding> label_claim(const WheelProfile& w, const image::Image& im) {
  const std::string why = label_elsewhere(w, im);
  if (why.empty()) return std::nullopt;
  const auto label = toolkit::of_label(w.filename.version);
  const std::string source = label ? label->because : "project name " + w.filename.name;
  verdict::Finding f;
  f.kind = verdict::FindingKind::LabelClaim;
  f.severity = verdict::Severity::Warning;
  f.required_version = why;
  f.explanation = fmt::format(
      "Its {} says {}. That is a claim, not a fact an installer acts on: pip ignores local version labels and "
      "project names when it picks a wheel, so it installs this one here, and what its members load here decides "
      "the verdict.",
      source, why);
  f.fix = "pin the build made for this image's toolkit, or label this build as what it is";
  f.evidence.push_back(source);
  return f;
}

}  // namespace

std::string not_targeted(const WheelProfile& w, const image::Image& im) {
  return not_targeted_by(w, im, verdict::check_wheel_tags(w, im));
}

std::string headline(const verdict::Report& r) {
  return headline(r, nullptr);
}

Decided decided(const verdict::Report& r, const WheelProfile* wheel) {
  using verdict::Verdict;
  Decided d;
  if (r.verdict == Verdict::Compatible) return d;
  if (r.verdict == Verdict::Degraded || r.verdict == Verdict::Incompatible) {
    // A route the wheel's own members turn off before one a wheel beside it does (the members its reasons
    // are about); a core route that is off decides an incompatible wheel; else the first route off.
    auto own = [&](const verdict::Route& route) {
      if (wheel == nullptr) return true;
      return std::any_of(route.reason_members.begin(), route.reason_members.end(), [&](const std::string& who) {
        return std::any_of(wheel->members.begin(), wheel->members.end(),
                           [&](const MemberProfile& m) { return m.path == who; }) ||
               std::any_of(wheel->python.modules.begin(), wheel->python.modules.end(),
                           [&](const python::Module& m) { return m.file == who; });
      });
    };
    for (const auto& route : r.routes) {
      if (route.available || route.reasons.empty()) continue;
      if (d.route == nullptr || (!own(*d.route) && own(route)) ||
          (own(*d.route) == own(route) && d.route->optional && !route.optional && r.verdict == Verdict::Incompatible))
        d.route = &route;
    }
    if (d.route != nullptr) return d;
  }
  d.finding = verdict::reason(r);
  if (d.finding == nullptr && !r.conditions.empty()) d.condition = r.conditions.front();
  return d;
}

namespace {

// "route flaggems-cpp (optional) is off: MEMBER: why": a route that is off, in one line.
std::string route_off_line(const verdict::Route& route) {
  return fmt::format("route {} ({}) is off: {}", route.name, route.optional ? "optional" : "core",
                     route.reasons.empty() ? std::string("unavailable") : route.reasons.front());
}

}  // namespace

std::string headline(const verdict::Report& r, const WheelProfile* wheel) {
  const Decided d = decided(r, wheel);
  if (d.route != nullptr) return route_off_line(*d.route);
  if (d.finding != nullptr) {
    const std::string what = verdict::summary(*d.finding);
    return d.finding->member.empty() ? what : d.finding->member + ": " + what;
  }
  return d.condition;
}

Cell check(const WheelProfile& w, const Target& t, const Context& c) {
  Cell cell;
  cell.image = t.image.name;
  verdict::CheckOptions co;
  co.with = c.with;
  co.memory_tables = t.tables.get();
  co.accepted = c.accepted;
  co.rules = c.rules != nullptr ? c.rules->for_wheel(w) : nullptr;
  co.policies = c.db != nullptr && (policy::claims_a_policy(w) || !t.image.policy.empty()) ? c.db->policies_if_present()
                                                                                           : nullptr;
  if (c.db != nullptr) co.providers = &toolkit::cached_providers(*c.db);
  cell.report = verdict::check(w, t.image, co);
  // A packaging target's policy check judges the wheel on its own terms; an image's check has made the
  // tag findings that say whether pip would install the wheel there at all.
  cell.not_targeted = t.image.policy.empty() ? not_targeted_by(w, t.image, cell.report.findings) : "";
  cell.targeted = cell.not_targeted.empty();
  if (!cell.targeted && cell.report.verdict != verdict::Verdict::Incompatible) {
    // pip would not install it here: never usable there.
    cell.report.verdict = verdict::Verdict::Incompatible;
  }
  // What its label or name claims against the image: a warning beside the loader's verdict, never one.
  if (t.image.policy.empty() && cell.targeted) {
    if (auto claim = label_claim(w, t.image)) {
      auto& f = cell.report.findings;
      const auto at = std::find_if(f.begin(), f.end(), [](const verdict::Finding& o) {
        return static_cast<int>(o.severity) < static_cast<int>(verdict::Severity::Warning);
      });
      f.insert(at, std::move(*claim));
    }
    // A variant's properties against the image's facts: whether an installer with variant support would
    // select it here (pip ignores variants), beside the verdict likewise.
    for (auto& v : variant::against_image(w, t.image)) {
      auto& f = cell.report.findings;
      f.insert(std::find_if(f.begin(), f.end(), [&](const verdict::Finding& o) { return o.severity < v.severity; }),
               std::move(v));
    }
  }
  cell.headline = cell.targeted ? headline(cell.report, &w) : "not targeted: " + cell.not_targeted;
  return cell;
}

verdict::Verdict overall(const std::vector<const Cell*>& cells) {
  verdict::Verdict targeted = verdict::Verdict::Compatible, all = verdict::Verdict::Compatible;
  bool any = false;
  for (const auto* c : cells) {
    all = verdict::worst(all, c->report.verdict);
    if (!c->targeted) continue;
    any = true;
    targeted = verdict::worst(targeted, c->report.verdict);
  }
  return any ? targeted : all;
}

verdict::Verdict environment_verdict(const std::vector<const Cell*>& checked, const std::vector<const Cell*>& beside) {
  verdict::Verdict v = verdict::Verdict::Compatible;
  for (const Cell* c : checked) v = verdict::worst(v, c->report.verdict);
  for (const Cell* c : beside) {
    if (c->targeted && !routes_off(*c).empty()) v = verdict::worst(v, verdict::Verdict::Degraded);
  }
  return v;
}

std::vector<std::string> routes_off(const Cell& cell) {
  std::vector<std::string> out;
  for (const auto& route : cell.report.routes) {
    if (route.available) continue;
    out.push_back(route_off_line(route));
  }
  return out;
}

// --- the one loop ----------------------------------------------------------------------------------------

void fill_published(Target& t, const std::vector<const WheelProfile*>& wheels, const Published& p) {
  const bool wanted = std::any_of(t.image.distributions.begin(), t.image.distributions.end(), [&](const auto& d) {
    return d.published && published::lacks_tables(d) && published::needed_by(d, wheels);
  });
  if (!wanted) return;
  net::ClientOptions co = p.client;
  co.max_attempts = std::min(co.max_attempts, 2);
  co.connect_timeout_s = std::min<long>(co.connect_timeout_s, 5);
  net::Client client(co);
  if (!t.tables) t.tables = std::make_shared<std::map<std::string, exports::Table>>();
  for (const auto& outcome : published::fill(t.image, *t.tables, wheels, client, p.options)) {
    if (!outcome.error.empty() && !outcome.offline && p.warn) {
      p.warn(fmt::format("{} on {}: the export tables of its published wheel ({}) could not be read: {}",
                         outcome.distribution, t.image.name, net::redact_url(outcome.where), outcome.error));
    }
  }
}

const Cell* Environment::cell_of(std::size_t package) const {
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (package_of[i] == package) return &cells[i];
  }
  return nullptr;
}

Environment judge(const std::vector<Package>& packages, Target& target, const Context& context, Installed how,
                  const Published* published) {
  Environment env;
  env.image = target.image.name;
  std::vector<const WheelProfile*> read;
  for (const auto& p : packages) {
    if (p.wheel != nullptr) read.push_back(p.wheel);
  }
  if (published != nullptr) fill_published(target, read, *published);
  std::vector<Problem> unread;
  for (std::size_t i = 0; i < packages.size(); ++i) {
    const Package& p = packages[i];
    if (p.wheel == nullptr) {
      unread.push_back({Problem::Kind::Unread, p.error});
      continue;
    }
    if (p.role == Role::Provider) continue;
    // Its providers: every other package installed with it. Alone, an asked-about package has only those
    // beside it; a package beside them has all the others.
    Context c = context;
    c.with.clear();
    for (const auto& o : packages) {
      if (o.wheel == nullptr || o.wheel == p.wheel) continue;
      if (how == Installed::Alone && p.role == Role::Checked && o.role == Role::Checked) continue;
      c.with.push_back(o.wheel);
    }
    c.with.insert(c.with.end(), context.with.begin(), context.with.end());
    env.cells.push_back(check(*p.wheel, target, c));
    env.package_of.push_back(i);
    env.roles.push_back(p.role);
    for (auto& line : verdict::integrity_problems(env.cells.back().report)) {
      Problem problem{Problem::Kind::OwnIntegrity, std::move(line)};
      if (std::find(env.problems.begin(), env.problems.end(), problem) == env.problems.end())
        env.problems.push_back(std::move(problem));
    }
  }
  env.problems.insert(env.problems.end(), unread.begin(), unread.end());
  std::vector<const Cell*> checked, beside;
  for (std::size_t i = 0; i < env.cells.size(); ++i)
    (env.roles[i] == Role::Checked ? checked : beside).push_back(&env.cells[i]);
  env.verdict = environment_verdict(checked, beside);
  return env;
}

gates::Result gates_of(const std::vector<const Environment*>& environments,
                       const std::vector<rules::RuleSet>& fail_closed_sets, const gates::Options& options) {
  std::vector<verdict::Report> reports;
  std::vector<bool> beside;
  std::vector<Problem> problems;
  verdict::Verdict v = verdict::Verdict::Compatible;
  for (const Environment* e : environments) {
    for (std::size_t i = 0; i < e->cells.size(); ++i) {
      reports.push_back(e->cells[i].report);
      beside.push_back(e->roles[i] == Role::Beside);
    }
    problems.insert(problems.end(), e->problems.begin(), e->problems.end());
    v = verdict::worst(v, e->verdict);
  }
  gates::Result g = gates::merge(reports, options);
  // The reports live in `reports`, gone when this returns: the result keeps its own copies.
  g.owned = std::make_shared<std::vector<verdict::Report>>(std::move(reports));
  g.reports.clear();
  for (const auto& r : *g.owned) g.reports.push_back(&r);
  g.beside = std::move(beside);
  g.verdict = v;
  if (!problems.empty()) {
    gates::close(g, fail_closed_sets, texts_of(problems));
  } else if (options.export_on) {
    gates::add_on_values(g, fail_closed_sets);
  }
  return g;
}

// --- the run ---------------------------------------------------------------------------------------------

Result run(const Request& request) {
  Result out;
  for (const auto& on : request.images) {
    out.environments.push_back(judge(on.packages, *on.target, request.context, request.how, request.published));
    Environment& env = out.environments.back();
    if (!on.missing.empty()) env.verdict = verdict::worst(env.verdict, verdict::Verdict::Incompatible);
    for (const auto& p : on.problems) {
      if (std::find(env.problems.begin(), env.problems.end(), p) == env.problems.end()) env.problems.push_back(p);
    }
    for (const auto& p : env.problems) {
      if (std::find(out.problems.begin(), out.problems.end(), p) == out.problems.end()) out.problems.push_back(p);
    }
  }
  if (request.how == Installed::Together) {
    for (const auto& env : out.environments) out.verdict = verdict::worst(out.verdict, env.verdict);
    return out;
  }
  // Alone: each asked-about package over the images (its cells, by package), and the packages beside them.
  std::map<std::size_t, std::vector<const Cell*>> of_package;
  for (const auto& env : out.environments) {
    for (std::size_t c = 0; c < env.cells.size(); ++c) {
      if (env.roles[c] == Role::Checked) {
        of_package[env.package_of[c]].push_back(&env.cells[c]);
      } else if (env.roles[c] == Role::Beside && env.cells[c].targeted && !routes_off(env.cells[c]).empty()) {
        out.verdict = verdict::worst(out.verdict, verdict::Verdict::Degraded);
      }
    }
  }
  for (const auto& [package, cells] : of_package) out.verdict = verdict::worst(out.verdict, overall(cells));
  return out;
}

std::vector<std::string> texts_of(const std::vector<Problem>& problems) {
  std::vector<std::string> out;
  for (const auto& p : problems) out.push_back(p.text);
  return out;
}

int Result::exit_code(bool gates) const {
  if (!problems.empty()) return k_exit_bad_input;
  return gates ? k_exit_ok : verdict::exit_code(verdict);
}

gates::Result Result::gates(const std::vector<rules::RuleSet>& fail_closed_sets, const gates::Options& options) const {
  std::vector<const Environment*> all;
  for (const auto& env : environments) all.push_back(&env);
  gates::Result g = gates_of(all, fail_closed_sets, options);
  g.verdict = verdict;
  return g;
}

}  // namespace wheelcheck::run
