// `wheelcheck inspect`: a wheel's native profile, from the cache when it is warm.
#include <fcntl.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "commands.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/policy.hpp"
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
  unsigned threads = 0;
  std::string max_member_size = "8G";
  std::string max_total_size = "32G";
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
  std::string head_name() const { return "policy-" + m_digest.substr(0, 16) + "-" + WHEELCHECK_VERSION + ".json"; }

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

// Copies a cached JSON file to out (sendfile where the kernel allows, else in chunks); inside a JSON
// array, without its final newline. With a head, its members first: the file from after its '{'.
void copy_file_to(const std::string& path, std::FILE* out, bool strip_newline, const std::string& head) {
  FileSource source(path);
  std::uint64_t left = source.size();
  if (strip_newline && left > 0) --left;  // the renderer always ends the document with one newline
  off_t offset = 0;
  if (head.size() > 2 && left > 0) {
    std::fwrite(head.data(), 1, head.size() - 1, out);
    std::fputc(',', out);
    offset = 1;
    --left;
  }
  std::fflush(out);
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw io_error("cannot read " + path);
  if (offset != 0 && ::lseek(in, offset, SEEK_SET) != offset) {
    ::close(in);
    throw io_error("cannot read " + path);
  }
  while (left > 0) {
    const auto n =
        ::sendfile(::fileno(out), in, nullptr, static_cast<std::size_t>(std::min<std::uint64_t>(left, 1U << 30)));
    if (n <= 0) break;
    left -= static_cast<std::uint64_t>(n);
  }
  std::vector<char> buf(std::size_t{1} << 20);
  while (left > 0) {  // sendfile refused (an old kernel, an odd output): plain reads and writes
    const auto n = ::read(in, buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(left, buf.size())));
    if (n <= 0) break;
    std::fwrite(buf.data(), 1, static_cast<std::size_t>(n), out);
    left -= static_cast<std::uint64_t>(n);
  }
  ::close(in);
}

int run_inspect(const InspectArgs& a) {
  InspectOptions options;
  if (a.reader == "lief") options.reader = elf::ReaderKind::Lief;
  options.threads = a.threads;
  options.limits.max_member_size = parse_size(a.max_member_size);
  options.limits.max_total_size = parse_size(a.max_total_size);
  const bool progress = show_progress(a.quiet);
  if (progress) options.progress = print_progress;
  std::optional<ProfileCache> cache;
  if (!a.no_cache) cache.emplace(a.cache_dir.empty() ? ProfileCache::default_dir() : a.cache_dir);
  const PolicySource policies(a.db);
  int rc = k_exit_ok;
  const bool many = a.wheels.size() > 1;
  if (a.json && many) std::fputs("[", stdout);
  bool first = true;
  std::unique_ptr<net::Client> client;
  for (const auto& path : a.wheels) {
    const std::string reader = elf::reader_name(options.reader);
    // Warm path for JSON: stream the cached (full) rendering without decoding the profile at all.
    if (a.json && cache && !net::is_url(path)) {
      if (auto sha = cache->known_sha256(path)) {
        auto json_file = cache->json_path(*sha, reader);
        auto clean = json_file ? cache->load_clean_flag(*sha, reader) : std::nullopt;
        std::optional<std::string> head;
        if (clean && policies.present()) {
          head = cache->load_derived(*sha, reader, policies.head_name());
          if (!head) {
            if (auto p = cache->load(*sha, reader)) {
              head = policy_head(*p, policies.get());
              try {
                cache->store_derived(*sha, reader, policies.head_name(), *head);
              } catch (const Error&) {
              }
            }
          }
        }
        if (clean && (head || !policies.present())) {
          if (!first) std::fputs(",", stdout);
          copy_file_to(*json_file, stdout, many, head.value_or(""));
          first = false;
          if (!*clean) rc = k_exit_bad_input;
          continue;
        }
      }
    }
    auto result = inspect_any(path, options, a.verify, cache ? &*cache : nullptr, client, progress);
    if (progress) std::fputs("\r\x1b[K", stderr);
    if (result.profile.has_problems()) {
      rc = k_exit_bad_input;
      std::fprintf(stderr, "wheelcheck: %s: %zu problem(s) found; the report lists them\n", path.c_str(),
                   result.profile.problems.size() + result.profile.record_problems.size());
    }
    std::optional<policy::Consistency> consistency;
    std::optional<policy::Overclaim> claim;
    if (policies.present()) {
      consistency = policy::analyze(result.profile, policies.get());
      claim = policy::check_claim(result.profile, *consistency, policies.get());
    }
    if (a.json) {
      if (!first) std::fputs(",", stdout);
      const std::string head = consistency ? policy::to_json(*consistency, claim).dump() : std::string();
      write_profile_json(result.profile, stdout, head);
      if (cache && consistency && !head.empty()) {
        try {
          cache->store_derived(result.profile.sha256, cache_key(result.profile), policies.head_name(), head);
        } catch (const Error&) {
        }
      }
    } else {
      if (!first) std::fputs("\n", stdout);
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
      std::fputs(text.c_str(), stdout);
    }
    first = false;
  }
  if (a.json && many) std::fputs("]\n", stdout);
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
  inspect->add_flag("--no-cache", a->no_cache, "Neither read nor write the profile cache");
  inspect->add_option("--cache-dir", a->cache_dir,
                      "Profile cache folder (default: $WHEELCHECK_CACHE_DIR, "
                      "$XDG_CACHE_HOME/wheelcheck, ~/.cache/wheelcheck)");
  inspect->add_option("-j,--threads", a->threads, "Worker threads (default: one per core)");
  inspect->add_option("--max-member-size", a->max_member_size, "Largest uncompressed member read (default 8G)");
  inspect->add_option("--max-total-size", a->max_total_size, "Largest uncompressed total (default 32G)");
  inspect->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
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
