// The command line: parse arguments, call the library, print, and map the outcome to an exit code.
// Every failure arrives here as a wheelcheck::Error and leaves as one line on stderr.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <new>

#include "commands.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cli {

const char* const k_exit_codes = R"(Exit codes:
  0  done (inspect, probe, images); compatible (verdict commands); nothing new incompatible (scan)
  1  incompatible (verdict commands); a new wheel incompatible with an image its tags target (scan)
  2  bad input or usage: a wheel that is not a readable zip, a malformed member, RECORD problems
     (the report still lists them), a malformed description, an unknown image, a wrong option, a
     URL or index unreadable after the retries, a download that does not match its sha256
  3  degraded (verdict commands)
  4  unknown (verdict commands)
  70 internal error (a bug in wheelcheck: please report it)

Environment:
  WHEELCHECK_DB         the image database folder (else installed beside the binary)
  WHEELCHECK_CACHE_DIR  profile cache folder (else $XDG_CACHE_HOME/wheelcheck, else ~/.cache/wheelcheck)
  NO_COLOR              no colour in text output, even on a terminal
  PIP_INDEX_URL         scan: the index when no --index is given (PIP_EXTRA_INDEX_URL: more)
  NETRC                 credentials for indexes (else ~/.netrc); never sent to another host
  http_proxy, https_proxy, no_proxy   proxies for URLs (libcurl's own rules))";

bool use_color(std::FILE* f) {
  return ::isatty(::fileno(f)) != 0 && getenv_or("NO_COLOR", "").empty() && getenv_or("TERM", "") != "dumb";
}

bool show_progress(bool quiet) {
  return !quiet && ::isatty(STDERR_FILENO) != 0;
}

}  // namespace wheelcheck::cli

int main(int argc, char** argv) {
  using namespace wheelcheck;
  CLI::App app{
      "wheelcheck: will this wheel's native code load and work in that image?\n\n"
      "Reads a wheel's ELF members (dynamic section, symbols, versions) straight out of the zip and\n"
      "describes target images (probed from real roots, or declared in the bundled db)."};
  app.set_version_flag("--version", std::string("wheelcheck ") + WHEELCHECK_VERSION);
  app.require_subcommand(0, 1);
  // `wheelcheck WHEEL --image NAME`: the check is the default command.
  auto top = std::make_shared<cli::CheckArgs>();
  app.add_option("wheels", top->wheels,
                 "Wheel files or URLs to check (the default command; same as `wheelcheck check`)")
      ->check(cli::wheel_file_or_url());
  cli::add_check_options(app, *top, false);
  app.footer(std::string(cli::k_check_help) + "\n\n" + cli::k_exit_codes);

  const cli::Command commands[] = {cli::add_check(app),   cli::add_gates(app),  cli::add_inspect(app),
                                   cli::add_probe(app),   cli::add_images(app), cli::add_image(app),
                                   cli::add_exports(app), cli::add_scan(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : k_exit_bad_input;
  }
  try {
    for (const auto& c : commands) {
      if (c.app->parsed()) return c.run();
    }
    if (top->wheels.empty()) {
      std::fputs(app.help().c_str(), stdout);
      return top->images.empty() ? k_exit_ok : k_exit_bad_input;
    }
    return cli::run_check(*top);
  } catch (const Error& e) {
    std::fprintf(stderr, "wheelcheck: error: %s\n", e.what());
    return e.kind() == ErrorKind::Internal ? 70 : k_exit_bad_input;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "wheelcheck: error: out of memory\n");
    return k_exit_bad_input;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wheelcheck: internal error: %s\n", e.what());
    return 70;
  }
  return k_exit_ok;
}
