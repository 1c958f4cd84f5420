// `wheelcheck WHEEL... --image NAME...` (also `wheelcheck check ...`): the verdict, a wheel x image matrix
// when there are several of either.
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>

#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/gates.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/probe.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/rules.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::cli {

const char* const k_check_help = R"(Examples:
  wheelcheck flag_gems_cpp-5.4.0-cp312-cp312-linux_x86_64.whl --image cuda13.0
  wheelcheck flagtree-0.6.1-cp312-cp312-linux_x86_64.whl --with flagcx-0.9-cp312-cp312-linux_x86_64.whl -i cuda13.0
  wheelcheck my.whl --image all                 # a matrix against every image in the db
  wheelcheck my.whl --image ./rootfs --json     # an unpacked image, probed on the fly

What is checked: the wheel's tags and Requires-Python against the image's Pythons and C library; each
ELF member's machine; every DT_NEEDED resolved as glibc's loader would (RPATH, LD_LIBRARY_PATH, RUNPATH,
ld.so.cache, default folders; torch's libraries count as loaded when the wheel requires torch); every
undefined symbol bound against the export tables of its load scope, versions included; the CUDA
runtime and the driver it needs. Unknown facts of the image make conditions, not guesses.

Verdicts: compatible (0), incompatible (1), degraded (3: the core loads, optional parts cannot),
unknown (4: the answer depends on a fact the image description does not know).)";

namespace {

void append_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) throw io_error("cannot append to " + path);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw io_error("cannot write " + path);
}

// An image to check against, with the tables of an on-the-fly probe kept alive beside it.
struct Target {
  image::Image image;
  std::shared_ptr<std::map<std::string, exports::Table>> tables;
};

// The absolute DT_RPATH/DT_RUNPATH folders of the wheels' members ("/opt/tok/$LIB"): a root probed
// on the fly reads the libraries there too, since the loader will look there.
std::vector<std::string> search_dirs(const std::vector<WheelProfile>& a, const std::vector<WheelProfile>& b) {
  std::vector<std::string> dirs;
  for (const auto* list : {&a, &b}) {
    for (const auto& w : *list) {
      for (const auto& m : w.members) {
        if (!m.elf) continue;
        for (const auto* paths : {&m.elf->rpath, &m.elf->runpath}) {
          for (const auto& d : *paths) {
            if (!d.empty() && d[0] == '/' && std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
          }
        }
      }
    }
  }
  return dirs;
}

std::vector<Target> targets(const CheckArgs& a, const image::Db& db, const std::vector<std::string>& search_dirs) {
  std::vector<Target> out;
  for (const auto& name : a.images) {
    if (name == "all") {  // the db's images; the packaging targets are named, or matched by a pattern
      for (const auto& n : db.file_image_names()) out.push_back({db.get(n), nullptr});
      continue;
    }
    if (name.find_first_of("*?[") != std::string::npos) {  // a pattern: 'manylinux_2_*_aarch64'
      const std::size_t before = out.size();
      for (const auto& n : db.image_names()) {
        if (::fnmatch(name.c_str(), n.c_str(), 0) == 0) out.push_back({db.get(n), nullptr});
      }
      if (out.size() == before) throw usage_error("--image " + name + ": matches no image (`wheelcheck images`)");
      continue;
    }
    if (is_dir(name)) {
      probe::ProbeOptions o;
      o.root = name;
      o.extra_dirs = search_dirs;
      for (const auto& kv : a.image_env) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) throw usage_error("--image-env " + kv + ": expected NAME=VALUE");
        o.env[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
      auto result = probe::probe_root(o);
      auto tables = std::make_shared<std::map<std::string, exports::Table>>();
      for (auto& [key, table] : result.tables) tables->emplace(key, std::move(table));
      for (auto& l : result.image.libraries) {
        if (!l.exports.empty()) l.exports_file = "mem:" + l.exports;
      }
      for (auto& d : result.image.distributions) {
        for (auto& l : d.libraries) {
          if (!l.exports.empty()) l.exports_file = "mem:" + l.exports;
        }
      }
      for (auto& p : result.image.pythons) {
        if (!p.exports.empty()) p.exports_file = "mem:" + p.exports;
      }
      out.push_back({std::move(result.image), tables});
      continue;
    }
    out.push_back({db.resolve(name), nullptr});
  }
  return out;
}

// One row per image, one column per wheel ([1], [2], ... named below); with one wheel, the first reason.
std::string matrix_text(const std::vector<verdict::Report>& reports, const std::vector<std::string>& wheels,
                        const std::vector<Target>& images, bool color) {
  const Paint p{color};
  auto paint = [&](verdict::Verdict v, const std::string& text) {
    return v == verdict::Verdict::Compatible     ? p.green(text)
           : v == verdict::Verdict::Incompatible ? p.red(text)
                                                 : p.yellow(text);
  };
  std::size_t width = 5;
  for (const auto& t : images) width = std::max(width, t.image.name.size());
  std::string out = fmt::format("{:<{}}", "image", width);
  for (std::size_t w = 0; w < wheels.size(); ++w) out += fmt::format("  {:<13}", fmt::format("[{}]", w + 1));
  if (wheels.size() == 1) out += "  first reason";
  out += "\n";
  for (std::size_t k = 0; k < images.size(); ++k) {
    out += fmt::format("{:<{}}", images[k].image.name, width);
    for (std::size_t w = 0; w < wheels.size(); ++w) {
      const auto& r = reports[w * images.size() + k];
      out += "  " + paint(r.verdict, fmt::format("{:<13}", verdict::verdict_name(r.verdict)));
      if (wheels.size() == 1 && !r.findings.empty() && r.verdict != verdict::Verdict::Compatible) {
        const auto& f = r.findings.front();
        std::string why = (f.member.empty() ? "" : f.member + ": ") + verdict::kind_name(f.kind) +
                          (f.library.empty() ? "" : " " + f.library) +
                          (f.symbol.empty() ? "" : " " + (f.demangled.empty() ? f.symbol : f.demangled));
        if (why.size() > 70) why = why.substr(0, 67) + "...";
        out += "  " + why;
      }
    }
    out += "\n";
  }
  out += "\n";
  for (std::size_t w = 0; w < wheels.size(); ++w) out += fmt::format("[{}] {}\n", w + 1, wheels[w]);
  out += "Details of one cell: wheelcheck WHEEL --image NAME (or --json for all of them).\n";
  return out;
}

}  // namespace

// The gates of the reports, in the chosen format; exit 0 whenever they could be evaluated.
int print_gates(const CheckArgs& a, const std::vector<verdict::Report>& reports) {
  const gates::Result g = gates::merge(reports);
  const std::string format = a.format == "text" ? "sh" : a.format;
  if (format == "json") {
    std::fputs((gates::to_json(g).dump(2) + "\n").c_str(), stdout);
  } else if (format == "sh") {
    std::fputs(gates::to_sh(g).c_str(), stdout);
  } else {
    const std::string env_file = !a.env_file.empty() ? a.env_file : getenv_or("GITHUB_ENV", "");
    if (env_file.empty()) {
      std::fputs(gates::github_env(g).c_str(), stdout);  // for `>> "$GITHUB_ENV"`
      std::fputs(gates::github_annotations(g).c_str(), stderr);
    } else {
      append_file(env_file, gates::github_env(g));
      std::fputs(gates::github_annotations(g).c_str(), stdout);  // the runner reads workflow commands on stdout
    }
    if (!a.summary.empty()) append_file(a.summary, gates::markdown_summary(g));
  }
  return k_exit_ok;
}

void add_check_options(CLI::App& c, CheckArgs& a, bool image_required) {
  auto* image = c.add_option("--image,-i", a.images,
                             "A db image name (`wheelcheck images`), a packaging target (manylinux_2_28_aarch64, "
                             "manylinux2014), a pattern ('manylinux_2_*_aarch64'), a description file, a root folder "
                             "(probed on the fly), or all: the db's images (repeatable: a matrix)");
  if (image_required) image->required();
  c.add_option("--with", a.with, "Another wheel installed beside it in site-packages (repeatable)")
      ->check(wheel_file_or_url());
  c.add_option("--verify", a.verify, k_verify_help)->check(CLI::IsMember({"auto", "full", "headers"}));
  c.add_option("--image-env", a.image_env,
               "For an --image that is a root folder: its environment, NAME=VALUE (repeatable; "
               "LD_LIBRARY_PATH counts for the loader)");
  c.add_flag("--json", a.json, "JSON for machines (schema: docs/verdict.schema.json); an array for several checks");
  c.add_option("--format", a.format,
               "text (people), json (--json), sh (export lines for eval), github ($GITHUB_ENV lines and annotations)")
      ->check(CLI::IsMember({"text", "json", "sh", "github"}));
  c.add_option("--rules", a.rules,
               "Routes and gates: a rule set of db/rules (flagos), a rules file, or none (default: the rule set whose "
               "applies_to names the wheel)");
  c.add_option("--summary", a.summary,
               "github format: append a Markdown table to this file (e.g. $GITHUB_STEP_SUMMARY)");
  c.add_option("--env-file", a.env_file, "github format: append VAR=value lines to this file (default: $GITHUB_ENV)");
  c.add_option("--db", a.db, "The db folder (default: $WHEELCHECK_DB, else the one installed with wheelcheck)");
  c.add_flag("--no-cache", a.no_cache, "Read the wheel again instead of its cached profile");
  c.add_option("--cache-dir", a.cache_dir, "Profile cache folder");
  c.add_flag("-q,--quiet", a.quiet, "No progress on stderr");
}

int run_check(const CheckArgs& a) {
  if (a.wheels.empty()) throw usage_error("no wheel given (wheelcheck WHEEL --image NAME; see --help)");
  if (a.images.empty())
    throw usage_error("no image given: --image NAME (`wheelcheck images` lists them), a file, a root folder, or all");
  image::Db db(image::Db::locate(a.db));
  InspectOptions io;
  std::optional<ProfileCache> cache;
  if (!a.no_cache) cache.emplace(a.cache_dir.empty() ? ProfileCache::default_dir() : a.cache_dir);
  std::vector<WheelProfile> profiles, with;
  std::unique_ptr<net::Client> client;
  const bool progress = show_progress(a.quiet);
  for (const auto& w : a.wheels)
    profiles.push_back(inspect_any(w, io, a.verify, cache ? &*cache : nullptr, client, progress).profile);
  for (const auto& w : a.with)
    with.push_back(inspect_any(w, io, a.verify, cache ? &*cache : nullptr, client, progress).profile);
  const auto images = targets(a, db, search_dirs(profiles, with));
  std::vector<const WheelProfile*> with_ptrs;
  for (const auto& w : with) with_ptrs.push_back(&w);
  // Rule sets: --rules, else the one db/rules says applies to each wheel.
  std::vector<rules::RuleSet> rule_sets = rules::load_all(db.dir() + "/rules");
  std::optional<rules::RuleSet> chosen;
  if (!a.rules.empty() && a.rules != "none") {
    if (a.rules.find('/') != std::string::npos ||
        (a.rules.size() > 5 && a.rules.compare(a.rules.size() - 5, 5, ".json") == 0)) {
      chosen = rules::load(a.rules);
    } else {
      for (const auto& rs : rule_sets) {
        if (rs.name == a.rules) chosen = rs;
      }
      if (!chosen)
        throw usage_error("--rules " + a.rules + ": no such rule set in " + db.dir() + "/rules (or give a file)");
    }
  }
  auto rules_for = [&](const WheelProfile& w) -> const rules::RuleSet* {
    if (a.rules == "none") return nullptr;
    if (chosen) return &*chosen;
    return rules::default_for(rule_sets, w.filename.name);
  };
  const bool gates_output = a.gates || a.format == "sh" || a.format == "github";
  if (gates_output && images.size() != 1) throw usage_error("gates need exactly one --image");
  std::vector<verdict::Report> reports;
  std::vector<std::string> names;
  verdict::Verdict overall = verdict::Verdict::Compatible;
  for (const auto& profile : profiles) {
    names.push_back(profile.filename.filename);
    for (const auto& t : images) {
      verdict::CheckOptions co;
      co.with = with_ptrs;
      co.memory_tables = t.tables.get();
      co.rules = rules_for(profile);
      co.policies = policy::claims_a_policy(profile) || !t.image.policy.empty() ? db.policies_if_present() : nullptr;
      reports.push_back(verdict::check(profile, t.image, co));
      overall = verdict::worst(overall, reports.back().verdict);
    }
  }
  if (gates_output) return print_gates(a, reports);
  if (a.json || a.format == "json") {
    if (reports.size() == 1) {
      std::fputs((verdict::to_json(reports.front()).dump(2) + "\n").c_str(), stdout);
    } else {
      nlohmann::ordered_json arr = nlohmann::ordered_json::array();
      for (const auto& r : reports) arr.push_back(verdict::to_json(r));
      std::fputs((arr.dump(2) + "\n").c_str(), stdout);
    }
  } else if (reports.size() == 1) {
    std::fputs(verdict::render_text(reports.front(), use_color(stdout)).c_str(), stdout);
  } else {
    std::fputs(matrix_text(reports, names, images, use_color(stdout)).c_str(), stdout);
  }
  return verdict::exit_code(overall);
}

Command add_gates(CLI::App& app) {
  auto a = std::make_shared<CheckArgs>();
  a->gates = true;
  a->format = "sh";
  auto* c = app.add_subcommand("gates", "The variables a setup script sets to turn off what cannot work in the image");
  c->add_option("wheels", a->wheels, "Wheel files (.whl) or URLs: their gates are merged")
      ->required()
      ->check(wheel_file_or_url());
  add_check_options(*c, *a, true);
  c->footer(R"G(Examples:
  eval "$(wheelcheck gates flagtree.whl flag_gems_cpp.whl --with flagcx.whl --image cuda13.0)"
  wheelcheck gates *.whl --image cuda13.0 --format github --summary "$GITHUB_STEP_SUMMARY"
  wheelcheck gates *.whl --image cuda13.0 --format json | jq .gates

Each wheel is checked as `wheelcheck WHEEL --image I` does; the routes of its rule set (db/rules, docs/rules.md)
that cannot work give their gates, merged over the wheels. Formats:
  sh      export VAR='value' lines safe to eval, WHEELCHECK_VERDICT, a comment per disabled route (default)
  github  VAR=value lines to --env-file or $GITHUB_ENV (else stdout), ::error::/::warning:: annotations,
          and a Markdown table appended to --summary FILE
  json    the verdicts, every route with its reasons, and the merged gates
Exit 0 whenever the wheels could be evaluated, whatever the verdict (WHEELCHECK_VERDICT says it);
2 on bad input (an unreadable wheel, an unknown image, a rule file with errors, conflicting gates).)G");
  return {c, [a] { return run_check(*a); }};
}

Command add_check(CLI::App& app) {
  auto a = std::make_shared<CheckArgs>();
  auto* c =
      app.add_subcommand("check", "Will this wheel's native code load and work in that image? (the default command)");
  c->add_option("wheels", a->wheels, "Wheel files (.whl) or http(s) URLs")->required()->check(wheel_file_or_url());
  add_check_options(*c, *a, true);
  c->footer(std::string(k_check_help) + "\n" + k_exit_codes);
  return {c, [a] { return run_check(*a); }};
}

}  // namespace wheelcheck::cli
