// The limits against hostile input, one set of options shared by every command that reads a wheel or an
// index (inspect, check, gates, scan). Each limit's error message names the option that raises it.
#include "commands.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cli {

namespace {

// A size is checked when the command line is parsed, so that a bad one fails before any work.
CLI::Validator size_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        try {
          parse_size(s);
        } catch (const Error& e) {
          return std::string(e.what()) + " (a number with an optional K, M, G or T suffix)";
        }
        return "";
      },
      "SIZE");
}

}  // namespace

void add_limit_options(CLI::App& app, LimitArgs& a, bool network) {
  const char* group = "Limits (against hostile wheels and indexes; an input over one exits 2)";
  app.add_option("--max-member-size", a.max_member_size, "Largest uncompressed member read (default 8G)")
      ->check(size_check())
      ->group(group);
  app.add_option("--max-total-size", a.max_total_size, "Largest uncompressed total of a wheel (default 32G)")
      ->check(size_check())
      ->group(group);
  app.add_option("--max-members", a.max_members, "Most members a wheel may have (default 200000)")->group(group);
  app.add_flag("--no-python-sources", a.no_python_sources,
               "Do not read the wheel's .py members for the native files they load (ctypes.CDLL, "
               "torch.ops.load_library): a headers-only read of a URL moves less, and the check says what they "
               "load is not known (a condition). Such a profile is never cached")
      ->group(group);
  app.add_option("--max-ratio", a.max_ratio,
                 "Highest compression ratio of a member over 16 MiB (default 100; real libraries have 2-5, "
                 "a zip bomb about 1000)")
      ->group(group);
  if (!network) return;
  app.add_option("--max-page-size", a.max_page_size, "Largest index page read (default 64M)")
      ->check(size_check())
      ->group(group);
  app.add_option("--max-download-size", a.max_download_size, "Largest wheel downloaded (default 16G)")
      ->check(size_check())
      ->group(group);
  app.add_option("--max-redirects", a.max_redirects, "Most redirects followed by one request (default 10)")
      ->group(group);
  app.add_option("--retries", a.retries, "Retries of a request after a timeout or a server error (default 5)")
      ->group(group);
  app.add_option("--low-speed-time", a.low_speed_time,
                 "Seconds a transfer may stay under 1 KiB/s before it fails, so that a body that never ends "
                 "cannot hold a scan (default 30)")
      ->group(group);
}

void apply_limits(const LimitArgs& a, InspectOptions& options) {
  options.python_sources = !a.no_python_sources;
  options.limits.max_member_size = parse_size(a.max_member_size);
  options.limits.max_total_size = parse_size(a.max_total_size);
  options.limits.max_members = a.max_members;
  options.limits.max_ratio = a.max_ratio;
}

void apply_limits(const LimitArgs& a, net::ClientOptions& options) {
  options.max_page_bytes = parse_size(a.max_page_size);
  options.max_download_bytes = parse_size(a.max_download_size);
  options.max_redirects = a.max_redirects;
  options.max_attempts = a.retries + 1;
  options.low_speed_time_s = a.low_speed_time;
}

}  // namespace wheelcheck::cli
