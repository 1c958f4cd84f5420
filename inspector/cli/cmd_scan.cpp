// `wheelcheck scan`: the nightly scan of package indexes (inspector/scan/scan.cpp), its report files,
// pins, and `--merge` of a sharded scan's reports.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "wheelcheck/ci.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/format.hpp"
#include "wheelcheck/report.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::cli {

namespace {

struct ScanArgs {
  std::vector<std::string> indexes;
  std::vector<std::string> extra_indexes;
  std::vector<std::string> projects;
  std::vector<std::string> images;
  std::string platform;
  std::vector<std::string> assume;
  std::vector<std::string> with;
  std::string state;
  std::string report;
  std::string shard = "1/1";
  std::string since;
  std::string pins;
  std::string verify;  // "" = the settings', else auto
  std::string rules;
  std::string db;
  std::string cache_dir;
  std::string cache_max_size;
  bool no_cache = false;
  std::vector<std::string> merge;
  bool json = false;
  bool quiet = false;
  std::optional<output::Format> format;  // --format (default: text, or json with --json)
  std::vector<std::string> outputs;      // FORMAT=PATH
  bool exit_zero = false;
  std::string summary;        // report.md appended here ($GITHUB_STEP_SUMMARY)
  std::string github_output;  // verdict and exit-code step outputs (default: $GITHUB_OUTPUT)
  std::string config;
  bool no_config = false;
  LimitArgs limits;
  std::vector<std::string> projects_files;
  std::size_t jobs = 8;
  std::size_t per_host = 8;
};

// --projects-file: a name a line; blank lines and # comments skipped.
std::vector<std::string> read_projects_file(const std::string& path) {
  std::vector<std::string> out;
  std::string text;
  try {
    text = read_text_file(path, std::uint64_t{64} << 20);
  } catch (const Error& e) {
    throw usage_error("--projects-file " + path + ": " + e.what());
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const auto first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
    if (first != std::string::npos) out.push_back(line.substr(first, last - first + 1));
    start = end + 1;
  }
  if (out.empty()) throw usage_error("--projects-file " + path + ": no project names in it");
  return out;
}

const char* const k_scan_help = R"(Examples:
  wheelcheck scan --index https://resource.flagos.net/repository/flagos-pypi-hosted/simple \
      --project flagtree --project flag-gems --image cuda13.0 --report out/ --pins version-pins.env
  wheelcheck scan --index URL --project flagcx --shard 2/4 --state shard-2    # one job of a CI matrix
  wheelcheck scan --index URL --project flagcx --merge shard-1 shard-2 shard-3 shard-4 \
      --state state --report out/ --pins version-pins.env                       # the merge job

What it does: reads each project's page on each index (PEP 691 JSON, else PEP 503 HTML; conditional
requests against the pages kept in --state), finds the wheels not seen before (by file name and sha256),
checks each against the images (--image, else every db image its tags target) reading only the bytes the
check needs where the server answers ranges, and writes the report: report.json (docs/scan.schema.json),
report.md (for $GITHUB_STEP_SUMMARY) and report.html (a wheels x images matrix, no JavaScript). A wheel
seen before is never fetched again. Pins: for each image and project, the newest usable version, and why
each newer one was passed over; --pins writes them as shell assignments a setup script sources.

Shards: N jobs each run the scan with --shard K/N and its own --state folder, every one a copy of the same
starting state (the last merged one); each checks the new wheels whose file-name hash falls in shard K. The
merge job runs the scan with the same options and --merge DIR... --state OUT: from the shards' folders alone
(no network) it writes the report, pins and state one process would have written. A shard that is missing,
did not finish, started from another state or ran with other options is an error (exit 2) that names it;
nothing is written then. docs/scan.md has a GitHub Actions matrix and a Kubernetes Indexed Job.

Exit codes: 0 nothing new is incompatible; 1 a new wheel is incompatible with an image its tags target;
2 bad input, or an index or wheel unreadable after the retries (the report still lists the rest).

Environment: PIP_INDEX_URL / PIP_EXTRA_INDEX_URL when no --index is given; credentials from the URL or
~/.netrc ($NETRC), never sent to another host; proxies from http_proxy/https_proxy/no_proxy.)";

// Each file whole or not at all (and on the disk before the state that counts on them is saved). JSON from the
// network may hold invalid UTF-8 (an index that answers garbage): output::dump replaces it, never fatal.
// report.json is written as it is made, a wheel at a time; report.html of a large scan is a page per project.
void write_reports(const scan::Report& report, const std::string& dir) {
  make_dirs(dir);
  write_file_atomic_with(
      dir + "/report.json",
      [&](const std::function<void(std::string_view)>& write) { scan::write_json(report, write); }, true);
  write_file_atomic(dir + "/report.md", scan::report_markdown(report), true);
  // A page per project of a large scan: the folder swept once and synced once (syncfs), not per page (thousands).
  bool made_projects = false;
  scan::report_html_pages(report, [&](const std::string& path, const std::string& text) {
    if (path == "report.html") {
      write_file_atomic(dir + "/" + path, text, true);
      return;
    }
    if (!made_projects) {
      make_dirs(dir + "/projects");
      sweep_temporaries(dir + "/projects");
      made_projects = true;
    }
    write_file_atomic_with(
        dir + "/" + path, [&](const std::function<void(std::string_view)>& write) { write(text); }, false, false);
  });
  if (made_projects) {
    const int fd = ::open((dir + "/projects").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const bool synced = fd >= 0 && ::syncfs(fd) == 0 && ::fsync(fd) == 0;
    if (fd >= 0) ::close(fd);
    if (!synced) throw Error(ErrorKind::Io, "cannot write " + dir + "/projects: " + std::strerror(errno));
  }
}

int run_scan(const ScanArgs& given) {
  ScanArgs a = given;
  // The settings file: what the command line does not give (images, assume, rules, verify, outputs,
  // exit-zero, accepted conditions).
  const Settings settings = load_settings(a.config, a.no_config);
  if (a.images.empty() && settings.images) a.images = settings.images->values;
  if (a.assume.empty() && settings.assume) a.assume = settings.assume->values;
  if (a.rules.empty() && settings.rules) a.rules = settings.rules->values.front();
  if (a.verify.empty()) a.verify = settings.verify ? settings.verify->values.front() : "auto";
  if (a.outputs.empty() && settings.outputs) a.outputs = settings.outputs->values;
  if (!a.exit_zero && settings.exit_zero) a.exit_zero = settings.exit_zero->values.front() == "true";
  warn_expired(settings);
  if (a.json && a.format && a.format != output::Format::Json)
    throw usage_error("--json and --format " + std::string(output::format_name(*a.format)) + " conflict");
  const output::Format format = a.json ? output::Format::Json : a.format.value_or(output::Format::Text);
  output::Sinks sinks = stdout_sinks();
  sinks.files = parse_outputs(a.outputs, output::k_scan);
  // Each file whole and on the disk before the state that counts on it is saved.
  sinks.write = [](const std::string& path, const std::string& text) { write_file_atomic(path, text, true); };
  scan::Report report;
  std::function<void()> commit;
  {
    scan::Options o;
    o.indexes = a.indexes;
    o.indexes.insert(o.indexes.end(), a.extra_indexes.begin(), a.extra_indexes.end());
    if (a.indexes.empty()) {
      if (auto env = getenv_or("PIP_INDEX_URL", ""); !env.empty()) o.indexes.insert(o.indexes.begin(), env);
      if (auto extra = getenv_or("PIP_EXTRA_INDEX_URL", ""); !extra.empty()) {
        std::size_t start = 0;
        while (start < extra.size()) {
          auto end = extra.find_first_of(" \t\n", start);
          if (end == std::string::npos) end = extra.size();
          if (end > start) o.indexes.push_back(extra.substr(start, end - start));
          start = end + 1;
        }
      }
    }
    for (const auto& i : o.indexes) {
      if (!net::is_url(i)) throw usage_error("--index " + net::redact_url(i) + ": not an http(s) URL");
    }
    o.projects = a.projects;
    for (const auto& f : a.projects_files) {
      for (auto& p : read_projects_file(f)) o.projects.push_back(std::move(p));
    }
    o.jobs = a.jobs;
    o.per_host = a.per_host;
    const std::string cache_dir = a.cache_dir.empty() ? ProfileCache::default_dir() : a.cache_dir;
    const std::optional<ProfileCache> cache = open_cache(a.no_cache, a.cache_dir, a.cache_max_size);
    o.state_dir = !a.state.empty() ? a.state : cache_dir.empty() ? "" : cache_dir + "/scan-state";
    if (o.state_dir.empty()) {
      warn(
          "no scan state: none of --state, HOME, XDG_CACHE_HOME and WHEELCHECK_CACHE_DIR is set: every wheel "
          "is new and nothing is remembered");
    }
    std::tie(o.shard_index, o.shard_count) = scan::parse_shard(a.shard);
    if (o.shard_count > 1 && a.state.empty()) {
      throw usage_error("--shard " + a.shard +
                        " needs --state DIR: each shard keeps its results in its own state folder, a copy of the state "
                        "the shards start from, for `scan --merge`");
    }
    if (!a.merge.empty()) {
      if (a.state.empty()) {
        throw usage_error(
            "scan --merge needs --state OUT: the state the merged results are saved in (the one the "
            "shards started from, or an empty folder)");
      }
      if (o.shard_count > 1) throw usage_error("--merge and --shard conflict: the merge joins every shard");
      o.merge = a.merge;
    }
    if (!a.since.empty()) o.since = a.since;
    o.mode = a.verify == "full"      ? remote::Mode::Full
             : a.verify == "headers" ? remote::Mode::Headers
                                     : remote::Mode::Auto;
    o.rules = a.rules;
    apply_limits(a.limits, o.inspect);
    const bool progress = show_progress(a.quiet);
    if (progress) {
      o.progress = [](const std::string& line) {
        std::fprintf(stderr, "\r\x1b[K%s", line.c_str());
        std::fflush(stderr);
      };
    }
    image::Db db(image::Db::locate(a.db));
    // The one --image resolver of every command: db names, patterns, all, description files, root folders.
    ImageRequest request;
    request.platform = a.platform;
    request.cache_dir = a.cache_dir;
    request.quiet = a.quiet;
    request.progress = progress;
    request.limits = &a.limits;
    o.targets = resolve_images(a.images, db, request);
    o.assume = a.assume;
    net::Client client(client_options(a.quiet, a.limits));
    // The environment each new wheel is checked in: --with wheels and locks, as installed on each image.
    std::unique_ptr<net::Client> env_client;
    o.environment = installed_beside(a.with, a.verify, cache ? &*cache : nullptr, env_client, progress, a.limits);
    o.environment_args = a.with;
    o.accepted = settings.accept;
    auto result = scan::run(o, db, client, cache ? &*cache : nullptr);
    report = std::move(result.report);
    commit = std::move(result.commit);
    if (progress) {
      const auto& st = result.stats;
      std::fprintf(stderr, "\r\x1b[Kscan: %llu requests, %s received, %llu retries\n",
                   static_cast<unsigned long long>(st.requests), format_size(st.bytes_received).c_str(),
                   static_cast<unsigned long long>(st.retries));
    }
  }
  // The outputs first, each whole; the state last, once they are safe (a scan commits last).
  if (!a.report.empty()) write_reports(report, a.report);
  if (!a.pins.empty()) {
    write_file_atomic_with(
        a.pins, [&](const std::function<void(std::string_view)>& write) { scan::write_pins_env(report, write); }, true);
  }
  const int verdict_rc = report.exit_code();
  CheckArgs exit_args;
  exit_args.exit_zero = a.exit_zero;
  const int rc = exit_with(exit_args, verdict_rc);
  // The answer, through the one printer: -o files, then stdout; the step summary and outputs beside them.
  const output::Answer answer{output::ScanAnswer{&report, rc}};
  if (!a.summary.empty()) append_to_file(a.summary, output::render(answer, output::Format::Markdown, sinks));
  const std::string step_outputs = !a.github_output.empty() ? a.github_output : getenv_or("GITHUB_OUTPUT", "");
  if (!step_outputs.empty()) {
    append_to_file(
        step_outputs,
        github_output_lines(
            {{"verdict", verdict_rc == k_exit_bad_input ? "error" : verdict::verdict_name(report.worst_new_verdict())},
             {"exit-code", std::to_string(rc)}}));
  }
  output::print(answer, format, sinks);
  flush_stdout();
  for (const auto& e : report.errors) std::fprintf(stderr, "wheelcheck: error: %s\n", e.c_str());
  if (commit) commit();
  return rc;
}

}  // namespace

Command add_scan(CLI::App& app) {
  auto a = std::make_shared<ScanArgs>();
  auto* c = app.add_subcommand("scan", "Check the new wheels of projects on package indexes; report and pin advice");
  c->add_option("--index,--index-url", a->indexes, "A simple index URL (PEP 503/691; repeatable; else $PIP_INDEX_URL)");
  c->add_option("--extra-index-url", a->extra_indexes, "Another index, read after --index (repeatable)");
  c->add_option("--project", a->projects, "A project name (repeatable)");
  c->add_option("--projects-file", a->projects_files,
                "A file of project names, one a line (# comments): a nightly list of thousands");
  c->add_option("--jobs,-j", a->jobs,
                "Wheels and pages fetched and read ahead at once, by this many threads (default 8; 0: one at a time)")
      ->check(CLI::Range(0, 256));
  c->add_option("--per-host", a->per_host, "At most this many requests at once to one host (default 8)")
      ->check(CLI::Range(1, 256));
  c->add_option("--image,-i", a->images,
                "An image to check against, as `check --image` takes it: a db name, a pattern, all, a description "
                "file, a root folder or a container image (repeatable, or a comma list; default: every FlagOS image of "
                "the db each wheel is for)");
  add_platform_option(*c, a->platform);
  c->add_option("--assume", a->assume, k_assume_help);
  c->add_option("--with", a->with,
                "Check every new wheel with these installed beside it: wheels, URLs or a lock file (pylock.toml, a pip "
                "report, requirements.txt) resolved for each image; the new wheel replaces its own project's entry, "
                "so the pins say what works with the rest of the set (repeatable)");
  c->add_option("--state", a->state, "Scan state folder (default: <cache>/scan-state)");
  c->add_option("--report", a->report, "Write report.json, report.md and report.html here");
  c->add_option("--shard", a->shard,
                "K/N: check only the new wheels of shard K of N (a CI matrix job), keeping the results in --state "
                "for `scan --merge`");
  c->add_option("--since", a->since, "YYYY-MM-DD: only files uploaded on or after this date are new");
  c->add_option("--pins", a->pins, "Write the pins as shell assignments to this file");
  c->add_option("--verify", a->verify, k_verify_help)->check(CLI::IsMember({"auto", "full", "headers"}));
  c->add_option("--rules", a->rules, "Routes and gates (as `check --rules`)");
  c->add_option("--db", a->db, "The db folder");
  add_cache_options(*c, a->no_cache, a->cache_dir, a->cache_max_size);
  c->add_option("--merge", a->merge,
                "Join the --state folders of the shard runs of one scan (every shard 1..N) into the report, pins and "
                "--state one process would write; nothing is fetched. Give it the shard runs' other options");
  c->add_flag("--json", a->json, "Print the report JSON on stdout (the same as --format json)");
  add_format_option(*c, a->format, output::k_scan, "What stdout gets: " + output::format_help(output::k_scan));
  c->add_option("--output,-o", a->outputs,
                "FORMAT=FILE: also write " + join(output::written_by(output::k_scan), ", ") + " to FILE (repeatable)")
      ->allow_extra_args(false);
  c->add_flag("--exit-zero", a->exit_zero,
              "Exit 0 whatever the verdicts (2, an index or wheel that could not be read, stays)");
  c->add_option("--summary", a->summary, "Append report.md's Markdown to this file (e.g. $GITHUB_STEP_SUMMARY)");
  c->add_option("--github-output", a->github_output,
                "Append the step outputs verdict and exit-code to this file (default: $GITHUB_OUTPUT)");
  add_settings_options(*c, a->config, a->no_config);
  c->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  add_limit_options(*c, a->limits, true);
  c->footer(k_scan_help);
  return {c, [a] { return run_scan(*a); }};
}

}  // namespace wheelcheck::cli
