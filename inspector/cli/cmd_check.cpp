// `wheelcheck WHEEL... --image NAME...` (also `wheelcheck check ...`): the verdict, a wheel x image matrix
// when there are several of either.
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

// One row per image, one column per wheel ([1], [2], ... named below); with one wheel, the reason: the
// worst of the findings that decided the cell's verdict.
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
  if (wheels.size() == 1) out += "  reason";
  out += "\n";
  for (std::size_t k = 0; k < images.size(); ++k) {
    out += fmt::format("{:<{}}", images[k].image.name, width);
    for (std::size_t w = 0; w < wheels.size(); ++w) {
      const auto& r = reports[w * images.size() + k];
      out += "  " + paint(r.verdict, fmt::format("{:<13}", verdict::verdict_name(r.verdict)));
      const verdict::Finding* f = wheels.size() == 1 ? verdict::reason(r) : nullptr;
      if (f != nullptr) {
        std::string why = (f->member.empty() ? "" : f->member + ": ") + verdict::summary(*f);
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

// The gates of the reports, in the chosen format (a wheel that fails its own integrity is named in their
// comments, annotations or JSON by gates::merge).
void print_gates(const CheckArgs& a, const std::string& format, const gates::Result& g) {
  if (format == "json") {
    print_json(gates::to_json(g));
  } else if (format == "sh") {
    std::fputs(gates::to_sh(g).c_str(), stdout);
  } else {
    const std::string annotations = gates::github_annotations(g);
    const std::string env_file = !a.env_file.empty() ? a.env_file : getenv_or("GITHUB_ENV", "");
    if (env_file.empty()) {
      std::fputs(gates::github_env(g).c_str(), stdout);  // for `>> "$GITHUB_ENV"`
      std::fputs(annotations.c_str(), stderr);
    } else {
      append_file(env_file, gates::github_env(g));
      std::fputs(annotations.c_str(), stdout);  // the runner reads workflow commands on stdout
    }
    if (!a.summary.empty()) append_file(a.summary, gates::markdown_summary(g));
  }
}

// Flags that cannot go together are refused, never silently ignored. Returns the output format.
std::string output_format(const CheckArgs& a) {
  std::string format = a.format.empty() ? (a.gates ? "sh" : "text") : a.format;
  if (a.json) {
    if (!a.format.empty() && a.format != "json") throw usage_error("--json and --format " + a.format + " conflict");
    format = "json";
  }
  if (a.gates && format == "text") throw usage_error("gates --format text: gates are sh, json or github");
  if ((!a.summary.empty() || !a.env_file.empty()) && format != "github") {
    throw usage_error(std::string(!a.summary.empty() ? "--summary" : "--env-file") + " needs --format github");
  }
  if (a.no_cache && !a.cache_dir.empty()) throw usage_error("--no-cache and --cache-dir conflict");
  return format;
}

// Routes and gates: --rules (a rule set of db/rules, a rules file, or none), else the rule set whose
// applies_to names the wheel.
class RuleChoice {
 public:
  RuleChoice(const std::string& rules, const image::Db& db)
      : m_none(rules == "none"), m_sets(rules::load_all(db.dir() + "/rules")) {
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
      const auto near = closest(rules, names);
      throw usage_error("--rules " + rules + ": no such rule set in " + db.dir() + "/rules" +
                        (near ? "; did you mean " + *near + "?" : " (or give a file)"));
    }
  }
  const rules::RuleSet* for_wheel(const WheelProfile& w) const {
    if (m_none) return nullptr;
    if (m_chosen) return &*m_chosen;
    return rules::default_for(m_sets, w.filename.name);
  }

 private:
  bool m_none;
  std::vector<rules::RuleSet> m_sets;
  std::optional<rules::RuleSet> m_chosen;
};

}  // namespace

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
  c.add_flag("--json", a.json,
             a.gates ? "The same as --format json (schema: docs/gates.schema.json)"
                     : "JSON for machines (schema: docs/verdict.schema.json); an array for several checks");
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
  add_limit_options(c, a.limits, true);
}

namespace {

int check_and_print(const CheckArgs& a, const std::string& format, bool gates_output) {
  const bool json = format == "json";
  if (a.wheels.empty()) throw usage_error("no wheel given (wheelcheck WHEEL --image NAME; see --help)");
  if (a.images.empty())
    throw usage_error("no image given: --image NAME (`wheelcheck images` lists them), a file, a root folder, or all");
  image::Db db(image::Db::locate(a.db));
  const std::optional<ProfileCache> cache = open_cache(a.no_cache, a.cache_dir);
  const ProfileCache* cache_ptr = cache ? &*cache : nullptr;
  std::unique_ptr<net::Client> client;
  const bool progress = show_progress(a.quiet);
  // Each wheel is read on its own: one that cannot be read is reported (an entry of the JSON that
  // carries its error) and the others are still checked. A --with wheel is part of every check.
  std::vector<WheelProfile> profiles, with;
  std::vector<std::optional<Error>> failures;
  for (const auto& w : a.wheels) {
    try {
      profiles.push_back(inspect_any(w, {}, a.verify, cache_ptr, client, progress, a.limits).profile);
      failures.emplace_back();
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Internal || e.kind() == ErrorKind::Usage) throw;
      std::fprintf(stderr, "wheelcheck: error: %s\n", e.what());
      profiles.emplace_back();
      failures.emplace_back(e);
    }
  }
  for (const auto& w : a.with)
    with.push_back(inspect_any(w, {}, a.verify, cache_ptr, client, progress, a.limits).profile);
  ImageRequest request;
  request.env = parse_env(a.image_env, "--image-env");
  request.search_dirs = search_dirs(profiles, with);  // a wheel that could not be read is an empty profile
  const auto images = resolve_images(a.images, db, request);
  if (gates_output && images.size() != 1) throw usage_error("gates need exactly one --image");
  std::vector<const WheelProfile*> with_ptrs;
  for (const auto& w : with) with_ptrs.push_back(&w);
  const RuleChoice rules(a.rules, db);

  std::vector<verdict::Report> reports;       // wheel-major; none for a wheel that could not be read
  std::vector<std::string> names, integrity;  // integrity: each problem of each wheel, once
  verdict::Verdict overall = verdict::Verdict::Compatible;
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    if (failures[i]) continue;
    const WheelProfile& profile = profiles[i];
    names.push_back(profile.filename.filename);
    for (const auto& t : images) {
      verdict::CheckOptions co;
      co.with = with_ptrs;
      co.memory_tables = t.tables.get();
      co.rules = rules.for_wheel(profile);
      co.policies = policy::claims_a_policy(profile) || !t.image.policy.empty() ? db.policies_if_present() : nullptr;
      reports.push_back(verdict::check(profile, t.image, co));
      overall = verdict::worst(overall, reports.back().verdict);
    }
    // The same for every image: the wheel's own.
    if (!images.empty()) {
      for (auto& line : verdict::integrity_problems(reports.back())) integrity.push_back(std::move(line));
    }
  }
  for (const auto& w : integrity) {
    if (gates_output) {
      warn(w);  // the gates are still printed, for a setup script that evals them
    } else {
      std::fprintf(stderr, "wheelcheck: error: %s\n", w.c_str());
    }
  }
  const bool bad_input =
      !integrity.empty() || std::any_of(failures.begin(), failures.end(), [](const auto& f) { return f.has_value(); });
  const int rc = bad_input ? k_exit_bad_input : verdict::exit_code(overall);
  if (gates_output) {
    print_gates(a, format, gates::merge(reports));
    return bad_input ? k_exit_bad_input : k_exit_ok;
  }
  if (json) {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    std::size_t next = 0;
    for (std::size_t i = 0; i < profiles.size(); ++i) {
      if (failures[i]) {
        arr.push_back(error_entry(a.wheels[i], *failures[i]));
        continue;
      }
      for (std::size_t k = 0; k < images.size(); ++k) arr.push_back(verdict::to_json(reports[next++]));
    }
    print_json(arr.size() == 1 ? arr.front() : arr);
  } else if (reports.size() == 1) {
    std::fputs(verdict::render_text(reports.front(), use_color(stdout)).c_str(), stdout);
  } else if (!reports.empty()) {
    std::fputs(matrix_text(reports, names, images, use_color(stdout)).c_str(), stdout);
  }
  return rc;
}

}  // namespace

int run_check(const CheckArgs& a) {
  const std::string format = output_format(a);
  return check_and_print(a, format, a.gates || format == "sh" || format == "github");
}

Command add_gates(CLI::App& app) {
  auto a = std::make_shared<CheckArgs>();
  a->gates = true;
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
2 on bad input (an unreadable wheel, a wheel that fails its own RECORD: the gates are still printed, with
a warning on stderr and in their comments; an unknown image, a rule file with errors, conflicting gates).)G");
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
