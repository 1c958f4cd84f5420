// Wheels named on the command line: a file, or an http(s) URL read through the index client.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "commands.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/remote.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::cli {

namespace {
std::string not_a_wheel_file(const std::string& s) {
  if (net::is_url(s)) return "";
  struct stat st {};
  if (::stat(s.c_str(), &st) != 0) return "no such file: " + s + " (a wheel file or an http(s) URL)";
  if (S_ISDIR(st.st_mode)) return s + " is a folder, not a wheel";
  return "";
}
}  // namespace

CLI::Validator wheel_file_or_url() {
  return CLI::Validator([](std::string& s) { return not_a_wheel_file(s); }, "FILE|URL");
}

net::ClientOptions client_options(bool quiet, const LimitArgs& limits) {
  net::ClientOptions o;
  apply_limits(limits, o);
  if (!quiet) {
    o.log = [](const std::string& line) { std::fprintf(stderr, "wheelcheck: %s\n", line.c_str()); };
  }
  return o;
}

void print_download(const net::DownloadProgress& p) {
  std::fprintf(stderr, "\r\x1b[Kdownload: %s / %s  %s/s  %s", format_size(p.done).c_str(),
               p.total != 0 ? format_size(p.total).c_str() : "?",
               format_size(static_cast<std::uint64_t>(p.bytes_per_second)).c_str(), p.what.c_str());
  std::fflush(stderr);
}

std::optional<ProfileCache> open_cache(bool no_cache, const std::string& cache_dir, const std::string& max_size) {
  if (no_cache) return std::nullopt;
  const std::uint64_t cap = max_size.empty() ? k_default_cache_max_size : parse_size(max_size);
  if (!max_size.empty() && cap == 0) throw usage_error("--cache-max-size " + max_size + ": must be more than 0");
  const std::string dir = cache_dir.empty() ? ProfileCache::default_dir() : cache_dir;
  if (dir.empty()) {
    warn(
        "no profile cache: none of HOME, XDG_CACHE_HOME and WHEELCHECK_CACHE_DIR is set (--cache-dir names "
        "one): every wheel is read in full");
    return std::nullopt;
  }
  try {
    return ProfileCache(dir, cap);
  } catch (const Error& e) {
    if (!cache_dir.empty()) throw usage_error("--cache-dir " + cache_dir + ": " + e.what() + " (or --no-cache)");
    warn(std::string("the profile cache cannot be used (") + e.what() + "): every wheel is read in full");
    return std::nullopt;
  }
}

void add_cache_options(CLI::App& app, bool& no_cache, std::string& cache_dir, std::string& max_size) {
  app.add_flag("--no-cache", no_cache, "Neither read nor write the profile cache");
  app.add_option("--cache-dir", cache_dir,
                 "Profile cache folder, private to you (default: $WHEELCHECK_CACHE_DIR, $XDG_CACHE_HOME/wheelcheck, "
                 "~/.cache/wheelcheck; none without HOME)");
  app.add_option("--cache-max-size", max_size,
                 "Cap of the profile cache (e.g. 512M, 8G; default 4G): the least recently used entries go");
}

CachedInspect inspect_any(const std::string& where, InspectOptions options, const std::string& verify,
                          const ProfileCache* cache, std::unique_ptr<net::Client>& client, bool progress,
                          const LimitArgs& limits) {
  apply_limits(limits, options);
  // A profile without its Python sources is never cached: a later read with them would take it for theirs.
  if (!options.python_sources) cache = nullptr;
  if (const std::string why = not_a_wheel_file(where); !why.empty()) throw bad_input(why);
  if (!net::is_url(where)) {
    if (verify == "headers") {
      options.verify = Verify::Headers;
      options.read_whole_below = k_read_whole_below;  // a small wheel costs less read whole
    }
    auto r = inspect_cached(where, options, cache);
    const std::string given = where.substr(where.find_last_of('/') + 1);
    if (given != r.profile.filename.filename) {
      try {
        wheel::parse_filename(given);  // a wheel file name of its own: kept as it is
      } catch (const Error&) {
        warn(given + " is not a wheel file name: read as " + r.profile.filename.filename +
             " by its .dist-info (pip installs it only under that name)");
      }
    }
    return r;
  }
  if (!client) client = std::make_unique<net::Client>(client_options(!progress, limits));
  remote::Fetch fetch;
  fetch.mode = verify == "full" ? remote::Mode::Full : verify == "headers" ? remote::Mode::Headers : remote::Mode::Auto;
  if (progress) fetch.progress = print_download;
  auto fetched = remote::inspect_url(where, fetch, options, cache, *client);
  if (progress) std::fputs("\r\x1b[K", stderr);
  return {std::move(fetched.profile), fetched.from_cache};
}

}  // namespace wheelcheck::cli
