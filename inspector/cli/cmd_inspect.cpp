// `wheelcheck inspect`: a wheel's native profile, from the cache when it is warm.
#include <fcntl.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "commands.hpp"
#include "wheelcheck/error.hpp"
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
};

void print_progress(const Progress& p) {
  const double pct =
      p.bytes_total != 0 ? 100.0 * static_cast<double>(p.bytes_done) / static_cast<double>(p.bytes_total) : 100.0;
  std::fprintf(stderr, "\r\x1b[Kinspect: %5.1f%%  %s / %s  %s", pct, format_size(p.bytes_done).c_str(),
               format_size(p.bytes_total).c_str(), p.current.c_str());
  std::fflush(stderr);
}

// Copies a cached JSON file to out (sendfile where the kernel allows, else in chunks); inside a JSON
// array, without its final newline.
void copy_file_to(const std::string& path, std::FILE* out, bool strip_newline) {
  FileSource source(path);
  std::uint64_t left = source.size();
  if (strip_newline && left > 0) --left;  // the renderer always ends the document with one newline
  std::fflush(out);
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw io_error("cannot read " + path);
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
        if (clean) {
          if (!first) std::fputs(",", stdout);
          copy_file_to(*json_file, stdout, many);
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
    if (a.json) {
      if (!first) std::fputs(",", stdout);
      write_profile_json(result.profile, stdout);
    } else {
      if (!first) std::fputs("\n", stdout);
      std::fputs(profile_to_text(result.profile, use_color(stdout)).c_str(), stdout);
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
  inspect->footer(
      "Example:\n  wheelcheck inspect flag_gems-5.4.0-cp312-cp312-linux_x86_64.whl\n"
      "  wheelcheck inspect --json torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl | jq "
      "'.members[].elf.needed'\n\n" +
      std::string(k_exit_codes));
  return {inspect, [a] { return run_inspect(*a); }};
}

}  // namespace wheelcheck::cli
