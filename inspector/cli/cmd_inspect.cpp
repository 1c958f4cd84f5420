// `wheelcheck inspect`: a wheel's native profile, from the cache when it is warm.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "commands.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/process.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cli {

namespace {

struct InspectArgs {
  std::vector<std::string> wheels;
  bool json = false;
  std::string reader = "fast";
  bool no_cache = false;
  std::string cache_dir;
  std::string cache_max_size;
  unsigned threads = 0;
  LimitArgs limits;
  bool quiet = false;
  std::string verify = "auto";
  std::string db;
};

// The db's packaging policies, when there is one (inspect works without): their digest names the cached
// consistency head, so a warm run reads only the files' bytes; they are parsed only when a head is made.
class PolicySource {
 public:
  explicit PolicySource(const std::string& db_dir) {
    try {
      const std::string dir = image::Db::locate(db_dir) + "/policies";
      m_digest = policy::Policies::digest_of(dir);
      m_dir = dir;
    } catch (const Error&) {
      if (!db_dir.empty()) throw;
    }
  }
  bool present() const { return !m_dir.empty(); }
  const policy::Policies& get() const {
    if (!m_loaded) m_loaded = policy::Policies::load(m_dir);
    return *m_loaded;
  }
  // The cache's name for a profile's head: the policies' digest and this build's version.
  std::string head_name() const { return "policy-" + m_digest.substr(0, 16) + "-" + version() + ".json"; }

 private:
  std::string m_dir, m_digest;
  mutable std::shared_ptr<const policy::Policies> m_loaded;
};

// The consistency head of a profile's JSON: {"consistent_with": ..., "constrained_by": [...], ...}.
std::string policy_head(const WheelProfile& p, const policy::Policies& policies) {
  const auto c = policy::analyze(p, policies);
  return policy::to_json(c, policy::check_claim(p, c, policies)).dump();
}

void print_progress(const Progress& p) {
  const double pct =
      p.bytes_total != 0 ? 100.0 * static_cast<double>(p.bytes_done) / static_cast<double>(p.bytes_total) : 100.0;
  std::fprintf(stderr, "\r\x1b[Kinspect: %5.1f%%  %s / %s  %s", pct, format_size(p.bytes_done).c_str(),
               format_size(p.bytes_total).c_str(), p.current.c_str());
  std::fflush(stderr);
}

// Writes a cached JSON rendering (checked by its frame) to out; inside a JSON array, without its final
// newline. With a head, its members first: the document from after its '{'.
void write_rendering(std::string_view json, std::FILE* out, bool strip_newline, const std::string& head) {
  std::string_view body = json;
  if (strip_newline && !body.empty()) body.remove_suffix(1);  // the renderer ends the document with one newline
  if (head.size() > 2 && !body.empty()) {
    std::fwrite(head.data(), 1, head.size() - 1, out);
    std::fputc(',', out);
    body.remove_prefix(1);
  }
  std::fwrite(body.data(), 1, body.size(), out);
}

// One wheel's profile, printed; false when it fails its own integrity (the report lists why).
bool inspect_one(const InspectArgs& a, const std::string& path, const InspectOptions& options,
                 const ProfileCache* cache, const PolicySource& policies, std::unique_ptr<net::Client>& client,
                 bool progress, bool in_array) {
  const std::string reader = elf::reader_name(options.reader);
  // Warm path for JSON: stream the cached (full) rendering without decoding the profile at all.
  if (a.json && cache != nullptr && !net::is_url(path)) {
    if (auto sha = cache->known_sha256(path)) {
      auto cached = cache->load_json(*sha, reader);
      std::optional<std::string> head;
      if (cached && policies.present()) {
        head = cache->load_derived(*sha, reader, policies.head_name());
        if (!head) {
          if (auto p = cache->load(*sha, reader)) {
            head = policy_head(*p, policies.get());
            keep_in_cache([&] { cache->store_derived(*sha, reader, policies.head_name(), *head); },
                          "the policy summary of " + path);
          }
        }
      }
      if (cached && (head || !policies.present())) {
        write_rendering(cached->json, stdout, in_array, head.value_or(""));
        check_stdout();
        if (!cached->clean)
          std::fprintf(stderr, "wheelcheck: error: %s fails its own integrity check; the report lists why\n",
                       path.c_str());
        return cached->clean;
      }
    }
  }
  auto result = inspect_any(path, options, a.verify, cache, client, progress, a.limits);
  if (progress) std::fputs("\r\x1b[K", stderr);
  const bool clean = !result.profile.has_problems();
  if (!clean) {
    std::fprintf(stderr, "wheelcheck: error: %s fails its own integrity check: %zu problem(s); the report lists them\n",
                 path.c_str(), result.profile.problems.size() + result.profile.record_problems.size());
  }
  std::optional<policy::Consistency> consistency;
  std::optional<policy::Overclaim> claim;
  if (policies.present()) {
    consistency = policy::analyze(result.profile, policies.get());
    claim = policy::check_claim(result.profile, *consistency, policies.get());
  }
  if (a.json) {
    const std::string head = consistency ? policy::to_json(*consistency, claim).dump() : std::string();
    try {
      write_profile_json(result.profile, stdout, head);
    } catch (const Error&) {
      check_stdout();  // a closed pipe ends quietly; any other failure says why
      throw;
    }
    check_stdout();
    if (cache != nullptr && result.from_cache) {
      // The rendering was a miss (absent or damaged): made anew.
      keep_in_cache([&] { cache->store_json(result.profile); }, "the JSON of " + path);
    }
    if (cache != nullptr && consistency && !head.empty()) {
      keep_in_cache(
          [&] { cache->store_derived(result.profile.sha256, cache_key(result.profile), policies.head_name(), head); },
          "the policy summary of " + path);
    }
    return clean;
  }
  const bool color = use_color(stdout);
  std::string text = profile_to_text(result.profile, color);
  if (consistency) {
    // After the wheel's own lines (the first blank line ends them): what it is consistent with.
    const auto gap = text.find("\n\n");
    const std::string c = policy::render_text(*consistency, claim, color);
    std::string indented;
    for (std::size_t at = 0; at < c.size();) {
      const auto nl = c.find('\n', at);
      indented += "  " + c.substr(at, nl - at + 1);
      at = nl == std::string::npos ? c.size() : nl + 1;
    }
    text.insert(gap == std::string::npos ? text.size() : gap + 1, indented);
  }
  print_out(text);
  return clean;
}

int run_inspect(const InspectArgs& a) {
  if (a.no_cache && !a.cache_dir.empty()) throw usage_error("--no-cache and --cache-dir conflict");
  InspectOptions options;
  if (a.reader == "lief") options.reader = elf::ReaderKind::Lief;
  options.threads = a.threads;
  const bool progress = show_progress(a.quiet);
  if (progress) options.progress = print_progress;
  const std::optional<ProfileCache> cache = open_cache(a.no_cache, a.cache_dir, a.cache_max_size);
  const PolicySource policies(a.db);
  int rc = k_exit_ok;
  // With --json, stdout holds one complete document whatever fails: a wheel that cannot be read is an
  // entry carrying its error, and the array is always closed.
  const bool many = a.wheels.size() > 1;
  if (a.json && many) print_out("[");
  std::unique_ptr<net::Client> client;
  for (std::size_t i = 0; i < a.wheels.size(); ++i) {
    const std::string& path = a.wheels[i];
    if (i != 0) print_out(a.json ? "," : "\n");
    try {
      if (!inspect_one(a, path, options, cache ? &*cache : nullptr, policies, client, progress, many)) {
        rc = k_exit_bad_input;
      }
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Internal || std::ferror(stdout) != 0) throw;  // stdout broken: nothing more arrives
      if (progress) std::fputs("\r\x1b[K", stderr);
      std::fprintf(stderr, "wheelcheck: error: %s\n", e.what());
      if (a.json) print_out((error_entry(path, e).dump(2) + (many ? "" : "\n")));
      rc = exit_code_of(e);
    }
    flush_stdout();
  }
  if (a.json && many) print_out("]\n");
  return rc;
}
}  // namespace

Command add_inspect(CLI::App& app) {
  auto a = std::make_shared<InspectArgs>();
  auto* inspect =
      app.add_subcommand("inspect", "Print a wheel's native profile: what each ELF member needs and provides");
  inspect->add_option("wheels", a->wheels, "Wheel files (.whl) or http(s) URLs (#sha256= honoured)")
      ->required()
      ->check(wheel_file_or_url());
  inspect->add_flag("--json", a->json, "JSON for machines (schema: docs/inspect.schema.json)");
  inspect->add_option("--elf-reader", a->reader, "ELF reader: fast (streaming, default) or lief (the reference)")
      ->check(CLI::IsMember({"fast", "lief"}));
  add_cache_options(*inspect, a->no_cache, a->cache_dir, a->cache_max_size);
  inspect->add_option("-j,--threads", a->threads, "Worker threads (default: one per core)");
  inspect->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  add_limit_options(*inspect, a->limits, true);
  inspect->add_option("--verify", a->verify, k_verify_help)->check(CLI::IsMember({"auto", "full", "headers"}));
  inspect->add_option("--db", a->db,
                      "The db whose packaging policies give consistent_with (default: $WHEELCHECK_DB, else the one "
                      "installed with wheelcheck)");
  inspect->footer(
      "Example:\n  wheelcheck inspect flag_gems-5.4.0-cp312-cp312-linux_x86_64.whl\n"
      "  wheelcheck inspect --json torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl | jq "
      "'.members[].elf.needed'\n\n" +
      std::string(k_exit_codes));
  return {inspect, [a] { return run_inspect(*a); }};
}

}  // namespace wheelcheck::cli
