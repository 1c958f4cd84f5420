// `wheelcheck lint WHEEL...`: the publisher check, a wheel on its own (include/wheelcheck/lint.hpp).
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/format.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/process.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/variant.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::cli {

namespace {

struct LintArgs {
  std::vector<std::string> wheels;
  std::optional<output::Format> format;  // --format (default: text)
  bool json = false;
  std::vector<std::string> outputs;
  std::string rules;
  std::string db;
  std::string verify;
  bool no_cache = false;
  std::string cache_dir;
  std::string cache_max_size;
  bool quiet = false;
  std::string config;
  bool no_config = false;
  std::string variants;
  LimitArgs limits;
};

// The lint cache's name for a wheel's report (ProfileCache::store_derived, beside the wheel's profile, which is
// keyed by the wheel's sha256 and the reader): "lint-" and a digest of everything else the report depends on --
// this build (its version and its executable file) and the cache's form, the db's files (providers, images and layers,
// policies, rule sets, system tables: their names and bytes), the rule set asked for (a file's bytes), the [[accept]]
// entries, and the release's -variants.json. The verify mode is not in it: a hashed profile is the same whether read
// `auto` or `full`, and a headers-only one is never cached.
std::string lint_entry_name(const image::Db& db, const LintArgs& a, const Settings& settings,
                            const std::string& release_text) {
  Hasher h;
  auto part = [&h](std::string_view s) {
    const std::string size = std::to_string(s.size()) + ":";
    h.update(size.data(), size.size());
    h.update(s.data(), s.size());
  };
  part(version());
  part(std::to_string(lint::k_lint_cache_format));
  // This very executable (its size, nanosecond mtime, inode and device): a rebuild with the same version, whose
  // checks may say otherwise, never reads a report an earlier build made.
  struct stat self {};
  if (::stat("/proc/self/exe", &self) == 0) {
    part(std::to_string(self.st_size) + " " + std::to_string(self.st_mtim.tv_sec) + "." +
         std::to_string(self.st_mtim.tv_nsec) + " " + std::to_string(self.st_ino) + " " + std::to_string(self.st_dev));
  }
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(db.dir(), ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    part(std::filesystem::relative(f, db.dir(), ec).string());
    part(read_text_file(f.string(), std::uint64_t{256} << 20));
  }
  part(a.rules);
  if (a.rules.find('/') != std::string::npos || a.rules.ends_with(".json"))
    part(is_file(a.rules) ? read_text_file(a.rules, std::uint64_t{64} << 20) : "");
  for (const auto& acc : settings.accept) {
    for (const auto* field : {&acc.rule, &acc.wheel, &acc.image, &acc.match, &acc.reason, &acc.expires, &acc.source})
      part(*field);
  }
  part(release_text);
  return "lint-" + to_hex(h.finish()).substr(0, 32);
}

// A report from the lint cache for a local wheel the profile cache has hashed, unchanged since; nullopt on a miss.
std::optional<lint::Report> lint_cached_report(const ProfileCache* cache, const std::string& path,
                                               const std::string& reader, const std::string& entry) {
  if (cache == nullptr || net::is_url(path)) return std::nullopt;
  const auto sha = cache->known_sha256(path);
  if (!sha) return std::nullopt;
  const auto text = cache->load_derived(*sha, reader, entry);
  if (!text) return std::nullopt;
  auto report = lint::report_from_cache(*text);
  if (!report || report->sha256 != *sha) return std::nullopt;
  // What inspect_any says of a file renamed from its wheel's name, said again (the read it spares said it).
  const std::string given = path.substr(path.find_last_of('/') + 1);
  if (given != report->wheel) {
    try {
      wheel::parse_filename(given);
    } catch (const Error&) {
      warn(given + " is not a wheel file name: read as " + report->wheel +
           " by its .dist-info (pip installs it only under that name)");
    }
  }
  return report;
}

int run_lint(LintArgs a) {
  if (a.json) a.format = output::Format::Json;
  const output::Format format = a.format.value_or(output::Format::Text);
  if (a.no_cache && !a.cache_dir.empty()) throw usage_error("--no-cache and --cache-dir conflict");
  output::Sinks sinks = stdout_sinks();
  sinks.files = parse_outputs(a.outputs, output::k_lint);
  const Settings settings = load_settings(a.config, a.no_config);
  warn_expired(settings);
  if (a.verify.empty() && settings.verify && !settings.verify->values.empty())
    a.verify = settings.verify->values.front();
  if (a.verify.empty()) a.verify = "auto";
  if (a.rules.empty() && settings.rules && !settings.rules->values.empty()) a.rules = settings.rules->values.front();
  const image::Db db(image::Db::locate(a.db));
  const run::RuleChoice rule_choice(a.rules, db.dir() + "/rules");
  const std::vector<toolkit::Provider> providers = toolkit::load_providers(db);
  const policy::Policies* policies = db.policies_if_present();
  const bool progress = show_progress(a.quiet);
  const std::optional<ProfileCache> cache = open_cache(a.no_cache, a.cache_dir, a.cache_max_size);
  std::unique_ptr<net::Client> client;
  // The release's -variants.json (a file or URL): each variant's own copy is compared with it.
  std::optional<variant::File> release;
  std::string release_text;
  if (!a.variants.empty()) {
    std::string text;
    if (net::is_url(a.variants)) {
      if (!client) client = std::make_unique<net::Client>(client_options(!progress, a.limits));
      text = client->get(a.variants, "application/json").body;
    } else {
      text = read_text_file(a.variants, variant::k_max_file_size);
    }
    release = variant::parse(text, a.variants.substr(a.variants.find_last_of('/') + 1));
    release_text = std::move(text);
  }
  // The lint cache: a report kept beside its wheel's profile (the profile cache's folder and rules).
  const std::string reader = elf::reader_name(InspectOptions{}.reader);
  const std::string entry = cache && a.verify != "headers" ? lint_entry_name(db, a, settings, release_text) : "";

  std::vector<lint::Report> reports;
  std::vector<std::string> where;  // how each report's wheel was named
  std::vector<nlohmann::ordered_json> entries;
  int rc = 0;
  for (const auto& path : a.wheels) {
    try {
      std::optional<lint::Report> hit = entry.empty() ? std::nullopt : lint_cached_report(&*cache, path, reader, entry);
      lint::Report report;
      if (hit) {
        report = std::move(*hit);
      } else {
        InspectOptions options;
        const auto read = inspect_any(path, options, a.verify, cache ? &*cache : nullptr, client, progress, a.limits);
        if (progress) std::fputs("\r\x1b[K", stderr);
        lint::Options o;
        o.providers = &providers;
        o.policies = policies;
        o.rules = rule_choice.for_wheel(read.profile);
        o.db = &db;
        o.accepted = &settings.accept;
        o.release = release ? &*release : nullptr;
        report = lint::lint(read.profile, o);
        // Kept for the next run: a hashed local file's report (a URL's source is part of its report).
        if (!entry.empty() && report.source.empty() && !net::is_url(path) &&
            read.profile.integrity != k_integrity_headers && cache_key(read.profile) == reader) {
          keep_in_cache(
              [&] { cache->store_derived(read.profile.sha256, reader, entry, lint::report_to_cache(report)); },
              "the lint report of " + path);
        }
      }
      if (report.source.empty()) report.source = path;
      entries.push_back(lint::to_json(report));
      reports.push_back(std::move(report));
      where.push_back(path);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Internal) throw;
      if (progress) std::fputs("\r\x1b[K", stderr);
      std::fprintf(stderr, "wheelcheck: error: %s\n", e.what());
      entries.push_back(error_entry(path, e));
      rc = exit_code_of(e);
    }
  }
  const int lint_rc = lint::exit_code(reports);
  if (rc == 0 || lint_rc == k_exit_bad_input) rc = rc == 0 ? lint_rc : rc;
  if (rc != k_exit_bad_input && rc != 0 && lint_rc == k_exit_bad_input) rc = lint_rc;
  output::print({output::LintAnswer{&reports, &where, &entries, rc}}, format, sinks);
  return rc;
}

}  // namespace

Command add_lint(CLI::App& app) {
  auto a = std::make_shared<LintArgs>();
  auto* c = app.add_subcommand(
      "lint", "Check what a wheel claims (label, name, tags, Requires-Dist, METADATA) against its binaries: no image");
  c->add_option("wheels", a->wheels, "Wheel files (.whl) or http(s) URLs (#sha256= honoured)")
      ->required()
      ->check(wheel_file_or_url());
  add_format_option(*c, a->format, output::k_lint);
  c->add_flag("--json", a->json, "The same as --format json (schema: docs/lint.schema.json)");
  c->add_option("--output,-o", a->outputs,
                "FORMAT=FILE: also write " + join(output::written_by(output::k_lint), ", ") +
                    " to FILE (repeatable; e.g. -o sarif=lint.sarif for code scanning)")
      ->allow_extra_args(false);
  c->add_option("--rules", a->rules,
                "The rule set whose own_symbols name a wheel's own symbols (default: the one whose applies_to names "
                "the wheel; none for none)");
  c->add_option("--verify", a->verify, k_verify_help)->check(CLI::IsMember({"auto", "full", "headers"}));
  c->add_option("--db", a->db,
                "The db: its providers.json, packaging policies and system tables (default: $WHEELCHECK_DB, else the "
                "one installed with wheelcheck)");
  add_settings_options(*c, a->config, a->no_config);
  add_cache_options(*c, a->no_cache, a->cache_dir, a->cache_max_size);
  c->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  c->add_option("--variants", a->variants,
                "FILE or URL: the release's NAME-VERSION-variants.json from the index, which each variant wheel's own "
                "variant.json must agree with");
  add_limit_options(*c, a->limits, true);
  c->footer(R"(What it checks, with no image (docs/lint.md):
  label-claim            the toolkit (+cu130, +cuda13.3, +cann9.0.0, -cuda, ...) or torch (+torch2.7.1) the label or
                         name claims, against the runtimes the members need (libcudart.so.12 is CUDA 12's)
  undeclared-dependency  a library or C++ symbols (c10d::) only a distribution the wheel does not declare ships
  unpinned-dependency    torch's C++ ABI bound with no pin on its release; unused-dependency: a declared runtime
                         wheel nothing links (information)
  metadata               METADATA as installers read it: a blank line inside the headers, duplicated fields, an
                         unknown Metadata-Version, a Requires-Dist that does not parse, Name/Version vs the file
  root-is-purelib, tag-pure-binary   WHEEL and the tags against native members
  tag-floor, tag-claim   a linux_* tag's true floor and the symbols that set it; a manylinux tag above it
  unloadable-symbol      an undefined symbol none of the object's needs can define: dlopen(RTLD_NOW) fails anywhere
  extension-suffix, module-init   CPython's import: a module named for a Python the tags do not install it on
                         (.cpython-311- in a cp312 wheel), one without the PyInit_ function its file name asks for
  variant-claim          a wheel variant's properties (PEP 825) against its label and binaries: nvidia :: sm_arch vs
                         the fatbins, the CUDA bounds vs libcudart.so.N, amd :: rocm_version vs the label and HIP
  variant-metadata       variant.json as uv validates it, and against the index's -variants.json (--variants)
[[accept]] entries of wheelcheck.toml (rule, wheel, match; no image) turn a finding into information.

Example:
  wheelcheck lint dist/*.whl
  wheelcheck lint flagcx-0.14.0+cuda13.3-cp312-cp312-linux_x86_64.whl --format sarif > lint.sarif
  wheelcheck lint dist/torch-2.10.0-*-cuda13.0.whl --variants dist/torch-2.10.0-variants.json

Exit codes:
  0  clean (information only)
  1  an error-level finding in some wheel
  2  a wheel that cannot be read or fails its own integrity (archive, RECORD); usage errors
  3  warnings only
  70 internal error (a bug in wheelcheck: please report it)
)");
  return {c, [a] { return run_lint(*a); }};
}

}  // namespace wheelcheck::cli
