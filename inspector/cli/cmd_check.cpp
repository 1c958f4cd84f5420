// `wheelcheck WHEEL... --image NAME...` (also `wheelcheck check ...`): the verdict; with one wheel and a few
// images, the images side by side (a column each, then what changes between them); else a wheel x image
// matrix. --image takes a comma list as well as repeats.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "commands.hpp"
#include "wheelcheck/check_text.hpp"
#include "wheelcheck/ci.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/format.hpp"
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
  wheelcheck my.whl --image cuda13.0,cuda13.3   # side by side: today's image and the planned one
  wheelcheck my.whl --image all                 # a matrix against every image in the db
  wheelcheck my.whl --image ./rootfs --json     # an unpacked image, probed on the fly
  wheelcheck pylock.toml --image cuda13.0       # an environment: every wheel of the lock, installed together
  wheelcheck flag_gems.whl --with torch-2.14.1+cpu-cp312-cp312-manylinux_2_28_x86_64.whl -i cuda13.0
                                                # a wheel beside it replaces the image's torch, as pip does

What is checked: the wheel's tags and Requires-Python against the image's Pythons and C library; each
ELF member's machine; every DT_NEEDED resolved as glibc's loader would (RPATH, LD_LIBRARY_PATH, RUNPATH,
ld.so.cache, default folders; torch's libraries count as loaded when the wheel requires torch); every
undefined symbol bound against the export tables of its load scope, versions included; the CUDA
runtime and the driver it needs. Unknown facts of the image make conditions, not guesses.

Verdicts: compatible (0), incompatible (1), degraded (3: the core loads, optional parts cannot),
unknown (4: the answer depends on a fact the image description does not know; --assume FACT=VALUE states
it). A wheel for another machine, Python or accelerator toolkit is one line, and an image it is not for
does not count in the exit code of --image all. A file not named like a wheel is read by its .dist-info.

Lock files (PEP 751 pylock.toml, `pip install --dry-run --report`, pinned requirements.txt): each package's
wheel is the one an installer picks for the image (marker, tags, Python, Requires-Python), read headers-only
from its URL; the set is installed together (replacing the image's distributions of the same names) and has
one verdict and exit code. A distribution an image names as published (an index and a pin) has its export
tables read from that wheel when a check needs them; WHEELCHECK_OFFLINE=1 never fetches them.)";

namespace {

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

// Their DT_NEEDED entries that are absolute paths (a library linked by its path): read from the root too.
std::vector<std::string> needed_paths(const std::vector<WheelProfile>& a, const std::vector<WheelProfile>& b) {
  std::vector<std::string> paths;
  for (const auto* list : {&a, &b}) {
    for (const auto& w : *list) {
      for (const auto& m : w.members) {
        if (!m.elf) continue;
        for (const auto& n : m.elf->needed) {
          if (!n.empty() && n[0] == '/' && std::find(paths.begin(), paths.end(), n) == paths.end()) paths.push_back(n);
        }
      }
    }
  }
  return paths;
}

}  // namespace

namespace {

// Flags that cannot go together are refused, never silently ignored. Returns the output format.
output::Format output_format(const CheckArgs& a) {
  using output::Format;
  Format format = a.format.value_or(a.gates ? Format::Sh : Format::Text);
  if (a.json) {
    if (a.format && a.format != Format::Json)
      throw usage_error("--json and --format " + std::string(output::format_name(*a.format)) + " conflict");
    format = Format::Json;
  }
  if (a.gates && format == Format::Text)
    throw usage_error("gates --format text: gates are sh, json, github, sarif or junit");
  if ((!a.summary.empty() || !a.env_file.empty() || !a.github_output.empty()) && format != Format::Github) {
    throw usage_error(std::string(!a.summary.empty()    ? "--summary"
                                  : !a.env_file.empty() ? "--env-file"
                                                        : "--github-output") +
                      " needs --format github");
  }
  parse_outputs(a.outputs, a.gates ? output::k_gates : output::k_check);
  if (a.no_cache && !a.cache_dir.empty()) throw usage_error("--no-cache and --cache-dir conflict");
  return format;
}

}  // namespace

void add_check_options(CLI::App& c, CheckArgs& a, bool image_required) {
  auto* image = c.add_option(
      "--image,-i", a.images,
      "A db image name (`wheelcheck images`), a packaging target (manylinux_2_28_aarch64, "
      "manylinux2014), a pattern ('manylinux_2_*_aarch64'), a description file, a root folder "
      "(probed on the fly), a container image (docker://HOST/REPO:TAG, oci:DIR, oci-archive:FILE, "
      "docker-archive:FILE; docs/images.md), or all: the db's images. Repeatable, or a comma list (a,b; an "
      "existing path is never split): one wheel against up to 4 images prints them side by "
      "side, more make a matrix");
  if (image_required) image->required();
  c.add_option("--with", a.with,
               "Another wheel installed beside it in site-packages, replacing the image's distribution of the same "
               "name as pip does (repeatable); a lock file (pylock.toml, a pip report, requirements.txt) installs "
               "its whole set")
      ->check(wheel_file_or_url());
  c.add_option("--verify", a.verify, k_verify_help)->check(CLI::IsMember({"auto", "full", "headers"}));
  c.add_option("--assume", a.assume, k_assume_help);
  c.add_option("--image-env", a.image_env,
               "For an --image that is a root folder or container image: its environment, NAME=VALUE "
               "(repeatable; LD_LIBRARY_PATH counts for the loader)");
  add_platform_option(c, a.platform);
  c.add_flag("--json", a.json,
             a.gates ? "The same as --format json (schema: docs/gates.schema.json)"
                     : "JSON for machines (schema: docs/verdict.schema.json); an array for several checks");
  // The formats, their help and what -o writes: the one table (include/wheelcheck/format.hpp).
  const output::Commands command = a.gates ? output::k_gates : output::k_check;
  add_format_option(c, a.format, command);
  c.add_option("--output,-o", a.outputs,
               "FORMAT=FILE: also write " + join(output::written_by(command), ", ") +
                   " to FILE, whatever --format prints (repeatable; e.g. -o sarif=wheelcheck.sarif -o junit=junit.xml)")
      ->allow_extra_args(false);
  if (a.gates) {
    c.add_flag("--export-on", a.gate_options.export_on,
               "Also export the on value of every gate whose route a given wheel has and is on (1 for a gate whose "
               "off value is 0, ...), for a setup script under `set -u`; a route no given wheel has is never "
               "switched on (its gates stay unset, said in a comment)");
    c.add_flag("--conditions-off", a.gate_options.conditions_off,
               "Turn off a route that holds only under a condition an unknown fact leaves open (a driver floor, "
               "exports the db does not know): a cautious CI's choice");
  }
  if (!a.gates) {
    c.add_flag("--exit-zero", a.exit_zero,
               "Exit 0 whatever the verdicts, for a job that only wants the report (2 and 70 still mean the run "
               "itself failed)");
  }
  c.add_option("--github-output", a.github_output,
               "github format: append the step outputs (verdict, exit-code, gates as JSON, each gate) to this file "
               "(default: $GITHUB_OUTPUT)");
  add_settings_options(c, a.config, a.no_config);
  c.add_option("--rules", a.rules,
               "Routes and gates: a rule set of db/rules (flagos), a rules file, or none (default: the rule set whose "
               "applies_to names the wheel)");
  c.add_option("--summary", a.summary,
               "github format: append a Markdown table to this file (e.g. $GITHUB_STEP_SUMMARY)");
  c.add_option("--env-file", a.env_file, "github format: append VAR=value lines to this file (default: $GITHUB_ENV)");
  c.add_option("--db", a.db, "The db folder (default: $WHEELCHECK_DB, else the one installed with wheelcheck)");
  add_cache_options(c, a.no_cache, a.cache_dir, a.cache_max_size);
  c.add_flag("-q,--quiet", a.quiet, "No progress on stderr");
  add_limit_options(c, a.limits, true);
}

void require_images(const CheckArgs& a) {
  if (a.images.empty())
    throw usage_error(
        "no image given: --image NAME (`wheelcheck images` lists them), a file, a root folder, or all (or images = "
        "[...] in wheelcheck.toml)");
}

namespace {

int check_and_print(const CheckArgs& a, output::Format format, bool gates_output) {
  refuse_misnamed_locks(a);
  if (names_a_lock(a)) return check_environment(a, format, gates_output);
  if (a.wheels.empty()) throw usage_error("no wheel given (wheelcheck WHEEL --image NAME; see --help)");
  require_images(a);
  image::Db db(image::Db::locate(a.db));
  const std::optional<ProfileCache> cache = open_cache(a.no_cache, a.cache_dir, a.cache_max_size);
  std::unique_ptr<net::Client> client;
  const ProfileCache* cache_ptr = cache ? &*cache : nullptr;
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
      // Gates cannot be given for a wheel that was not read: the whole output fails closed.
      if (e.kind() == ErrorKind::Internal || e.kind() == ErrorKind::Usage || gates_output) throw;
      profiles.emplace_back();  // said with the run's problems
      failures.emplace_back(e);
    }
  }
  for (const auto& w : a.with)
    with.push_back(inspect_any(w, {}, a.verify, cache_ptr, client, progress, a.limits).profile);
  ImageRequest request;
  request.env = parse_env(a.image_env, "--image-env");
  request.platform = a.platform;
  request.wheel_machine = wheels_machine(profiles);
  request.cache_dir = a.cache_dir;
  request.quiet = a.quiet;
  request.progress = progress;
  request.limits = &a.limits;
  request.search_dirs = search_dirs(profiles, with);  // a wheel that could not be read is an empty profile
  request.needed_paths = needed_paths(profiles, with);
  auto images = resolve_images(a.images, db, request);
  apply_assumptions(images, a.assume);
  if (gates_output && images.size() != 1) throw usage_error("gates need exactly one --image");
  const run::RuleChoice rules(a.rules, db.dir() + "/rules");
  const run::Context context{{}, &rules, &db, &a.accepted};
  const run::Published published = published_of(a, cache_ptr, progress);
  // The one run (run::run): on each image, each wheel named alone with the --with wheels beside it (a
  // matrix of independent answers); each --with wheel judged on its own too (its routes that are off turn
  // their gates off and degrade the environment: FlagCX's libflagcx.so, which FlagTree's TLE loader loads).
  // A wheel that could not be read is a problem of the run: exit 2, and gates fail closed.
  std::vector<run::Package> packages;
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    packages.push_back(
        {failures[i] ? nullptr : &profiles[i], failures[i] ? failures[i]->what() : "", run::Role::Checked});
  }
  for (const auto& w : with) packages.push_back({&w, "", run::Role::Beside});
  run::Request asked{{}, context, run::Installed::Alone, &published};
  for (auto& t : images) asked.images.push_back({&t, packages, {}, {}});
  const run::Result result = run::run(asked);

  // The answer: the cells (wheel-major; none for a wheel that could not be read), the --with wheels' own
  // (image-major), the wheels that could not be read, and the gates: never failing open (a wheel that fails
  // its own integrity gives every gate at its off value).
  output::CheckAnswer answer;
  answer.wheels = a.wheels;
  answer.images = &images;
  for (std::size_t i = 0; i < packages.size(); ++i) {
    if (packages[i].role != run::Role::Checked) continue;
    answer.problems.push_back(failures[i] ? std::optional(problem_of(a.wheels[i], *failures[i])) : std::nullopt);
    if (packages[i].wheel == nullptr) continue;
    answer.names.push_back(packages[i].wheel->filename.filename);
    for (const auto& env : result.environments) answer.cells.push_back(*env.cell_of(i));
  }
  for (const auto& env : result.environments) {
    for (std::size_t c = 0; c < env.cells.size(); ++c) {
      if (env.roles[c] == run::Role::Beside) answer.beside.push_back(env.cells[c]);
    }
  }
  for (const auto& p : result.problems) std::fprintf(stderr, "wheelcheck: error: %s\n", p.text.c_str());
  answer.overall = result.verdict;
  // The same exit code in every format: check's is the verdict's (or 2), gates' 0 once it could evaluate.
  const int rc = a.gates ? result.exit_code(true) : exit_with(a, result.exit_code(false));
  answer.exit_code = rc;
  gates::Options o = a.gate_options;  // a vendor's path is set only on that vendor's image (one image here)
  if (images.size() == 1 && images.front().image.toolkit)
    o.image_toolkit = image::toolkit_kind_name(images.front().image.toolkit->kind);
  answer.as_gates = gates_output;
  const output::Sinks sinks = sinks_for(a);
  if (output::reads_gates(format, gates_output, sinks)) answer.gates = result.gates(fail_closed_sets(a.rules, a.db), o);
  output::print({std::move(answer)}, format, sinks);
  return rc;
}

}  // namespace

std::vector<rules::RuleSet> fail_closed_sets(const std::string& rules_arg, const std::string& db_arg) {
  try {
    if (rules_arg == "none") return {};
    if (rules_arg.find('/') != std::string::npos || rules_arg.ends_with(".json")) return {rules::load(rules_arg)};
    auto sets = rules::load_all(image::Db(image::Db::locate(db_arg)).dir() + "/rules");
    if (!rules_arg.empty()) {
      std::erase_if(sets, [&](const rules::RuleSet& rs) { return rs.name != rules_arg; });
    }
    return sets;
  } catch (const Error&) {
    return {};
  }
}

namespace {

void print_fail_closed(const CheckArgs& a, const std::string& message) {
  using output::Format;
  CheckArgs b = a;
  b.format = a.json || a.format == Format::Json ? Format::Json
             : a.format == Format::Github       ? Format::Github
                                                : Format::Sh;
  // The image's toolkit where the image is known: a vendor's path is set only on that vendor's image.
  std::string toolkit;
  if (a.images.size() == 1) {
    try {
      const image::Db db(image::Db::locate(a.db));
      const image::Image im = db.resolve(a.images.front());
      if (im.toolkit) toolkit = image::toolkit_kind_name(im.toolkit->kind);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Internal) throw;  // else unknown: no vendor's path
    }
  }
  output::CheckAnswer answer;
  answer.gates = gates::fail_closed(fail_closed_sets(a.rules, a.db), message, toolkit);
  if (a.images.size() == 1) answer.gates.image = a.images.front();
  answer.as_gates = true;
  answer.exit_code = k_exit_bad_input;
  const gates::Result closed = answer.gates;
  output::Sinks sinks = sinks_for(b);
  sinks.files.clear();  // a failed run's documents are print_failed_run's
  try {
    output::print({std::move(answer)}, *b.format, sinks);
  } catch (const Error& e) {
    // $GITHUB_ENV cannot be written: the gates go to stdout, where the log shows them.
    std::fprintf(stderr, "wheelcheck: error: %s\n", e.what());
    print_out(gates::github_env(closed));
  }
}

}  // namespace

int run_check(const CheckArgs& given) {
  CheckArgs a = given;
  const bool gates_like = a.gates || a.format == output::Format::Sh || a.format == output::Format::Github;
  if (!gates_like) {
    try {
      apply_settings(load_settings(a.config, a.no_config), a);
      const output::Format format = output_format(a);
      return check_and_print(a, format, a.format == output::Format::Sh || a.format == output::Format::Github);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Internal) print_failed_run(a, e);
      throw;
    }
  }
  // Gates fail closed: whatever stops the check (a wheel that cannot be read, an unknown image, a bad
  // option, a settings file with errors), every gate is printed at its off value, the verdict is "error"
  // and the eval fails.
  try {
    apply_settings(load_settings(a.config, a.no_config), a);
    return check_and_print(a, output_format(a), true);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Internal) throw;
    std::fprintf(stderr, "wheelcheck: error: %s\n", e.what());
    if (a.format == output::Format::Sarif || a.format == output::Format::Junit) {
      print_failed_run(a, e);  // a document for the upload step; no eval reads it
    } else {
      print_fail_closed(a, e.what());
    }
    return exit_code_of(e);
  }
}

int gates_parse_failure(const std::vector<std::string>& args, const std::string& message) {
  CheckArgs a;
  a.gates = true;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (w == "--") break;
    if (w == "--json") a.json = true;
    for (auto [flag, slot] : {std::pair<const char*, std::string*>{"--rules", &a.rules},
                              {"--db", &a.db},
                              {"--env-file", &a.env_file},
                              {"--summary", &a.summary},
                              {"--image", nullptr},
                              {"-i", nullptr}}) {
      const std::string f(flag);
      std::string value;
      if (w == f && i + 1 < args.size()) {
        value = args[i + 1];
      } else if (w.rfind(f + "=", 0) == 0) {
        value = w.substr(f.size() + 1);
      } else {
        continue;
      }
      if (slot != nullptr) {
        *slot = value;
      } else {
        a.images.push_back(value);
      }
    }
  }
  a.format = format_in_args(args);
  print_fail_closed(a, message);
  return k_exit_bad_input;
}

Command add_gates(CLI::App& app) {
  auto a = std::make_shared<CheckArgs>();
  a->gates = true;
  auto* c = app.add_subcommand("gates", "The variables a setup script sets to turn off what cannot work in the image");
  // Not checked by the parser: a wheel that is not there is that wheel's error (each entry of a batch
  // stands on its own; gates fail closed).
  c->add_option("wheels", a->wheels,
                "Wheel files (.whl) or URLs, or lock files (pylock.toml, a pip report, requirements.txt): their "
                "gates are merged")
      ->required();
  add_check_options(*c, *a, false);  // --image may come from the settings file
  c->footer(R"G(Examples:
  eval "$(wheelcheck gates flagtree.whl flag_gems_cpp.whl --with flagcx.whl --image cuda13.0)"
  eval "$(wheelcheck gates pylock.toml --image cuda13.0)"     # the gates of a whole locked environment
  wheelcheck gates *.whl --image cuda13.0 --format github --summary "$GITHUB_STEP_SUMMARY"
  wheelcheck gates *.whl --image cuda13.0 --format json | jq .gates

Each wheel is checked as `wheelcheck WHEEL --image I` does; the routes of its rule set (db/rules, docs/rules.md)
that cannot work give their gates, merged over the wheels. Formats:
  sh      export VAR='value' lines safe to eval, WHEELCHECK_VERDICT, a comment per disabled route (default)
  github  VAR=value lines to --env-file or $GITHUB_ENV (else stdout), ::error::/::warning:: annotations,
          and a Markdown table appended to --summary FILE
  json    the verdicts, every route with its reasons, and the merged gates
Exit 0 whenever the wheels could be evaluated, whatever the verdict (WHEELCHECK_VERDICT says it).
Gates fail closed: when they cannot evaluate or vouch for the wheels (a wheel that is not there or cannot
be read, one that fails its own RECORD or hash, a lock entry whose hash is not the lock's, an unknown
image, a mistyped option, a rule file with errors), every gate of the rule set is printed at its off value,
WHEELCHECK_VERDICT='error', and a last line `(exit 2)` makes the eval itself return 2 (under `set -e` the
script stops); github writes them to $GITHUB_ENV and fails the step. Exit 2 then.
What gates accept: wheels (files or URLs) and lock files (pylock.toml, a pip report, requirements.txt), with
--with wheels installed beside them; each wheel is judged on its own (its own members), the others only
provide, and a --with wheel's routes that are off turn their gates off too.)G");
  return {c, [a] { return run_check(*a); }};
}

Command add_check(CLI::App& app) {
  auto a = std::make_shared<CheckArgs>();
  auto* c =
      app.add_subcommand("check", "Will this wheel's native code load and work in that image? (the default command)");
  c->add_option("wheels", a->wheels,
                "Wheel files (.whl) or http(s) URLs, or lock files (pylock.toml, a pip report .json, a requirements "
                ".txt): an environment, checked as installed")
      ->required();
  add_check_options(*c, *a, false);  // --image may come from the settings file
  c->footer(std::string(k_check_help) + "\n" + k_exit_codes);
  return {c, [a] { return run_check(*a); }};
}

}  // namespace wheelcheck::cli
