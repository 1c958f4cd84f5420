// The command line: parse arguments, call the library, print, and map the outcome to an exit code.
// Every failure arrives here as a wheelcheck::Error and leaves as one line on stderr.

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "commands.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/process.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cli {

const char* const k_exit_codes = R"(Exit codes:
  0  done (inspect, probe, images); compatible (verdict commands); nothing new incompatible (scan)
  1  incompatible (verdict commands); a new wheel incompatible with an image its tags target (scan)
  2  bad input or usage: a wheel that is not a readable zip, a malformed member, a wheel that fails
     its own RECORD (every command; the report, verdict or gates are still printed), a malformed
     description, an unknown image or file, a wrong or mistyped option, conflicting flags, a
     --cache-dir that cannot be written or is not private to you, a URL or index unreadable after
     the retries (a lock package's index: its answer is unknown, 4), a download or a lock's file
     that does not match its sha256 or --hash (an integrity failure), an input over a limit (the error names
     the option that raises it), a probed root with symlink loops or links above its /, output that
     could not be written (stdout, -o, --report, --pins, --env-file, --summary: a full disk; a closed
     pipe ends quietly), a scan state that could not be saved. Each has its "wheelcheck: error:" line
     on stderr. With --json, stdout still holds one complete JSON document. SECURITY.md lists the limits.
  3  degraded (verdict commands)
  4  unknown (verdict commands; an environment package whose index was not looked up, offline, or
     could not be read)
  70 internal error (a bug in wheelcheck: please report it)
The same code whatever --format prints (text, json, sh, github, sarif, junit); gates exit 0 once they
could evaluate, whatever the verdict; --exit-zero (check, scan) turns 1, 3 and 4 into 0.

Settings: wheelcheck.toml, or [tool.wheelcheck] in pyproject.toml, in the working folder or above it
(--config FILE, --no-config): images, assume, rules, verify, format, output, exit-zero and accepted
conditions with an expiry date; the command line overrides it. `wheelcheck config` shows what is used.

Environment:
  WHEELCHECK_DB         the image database folder (else installed beside the binary)
  WHEELCHECK_CACHE_DIR  profile cache folder (else $XDG_CACHE_HOME/wheelcheck, else $HOME/.cache/wheelcheck;
                        without HOME, no cache); it must be yours and writable by nobody else
  XDG_CACHE_HOME, HOME  where the profile cache goes when WHEELCHECK_CACHE_DIR is unset (HOME: ~/.netrc too)
  WHEELCHECK_OFFLINE    set, and not 0: the export tables of an image's published distributions (its torch,
                        from PyPI) are not downloaded; what they would say stays unknown
  NO_COLOR              no colour in text output, even on a terminal (TERM=dumb: none either)
  COLUMNS               the text width where the terminal does not say it (40 or more)
  SSL_CERT_FILE         the CA bundle for https (the static build, which has none compiled in, else
                        looks in the distributions' usual places)
  PIP_INDEX_URL         scan: the index when no --index is given (PIP_EXTRA_INDEX_URL: more)
  NETRC                 credentials for indexes (else ~/.netrc); never sent to another host
  http_proxy, https_proxy, no_proxy   proxies for URLs (libcurl's own rules)
  TMPDIR                where a wheel given by URL is downloaded (else /tmp)
  GITHUB_ENV            --format github: the file the gates' VAR=value lines go to (else --env-file)
  GITHUB_OUTPUT         --format github, scan: the step outputs file (else --github-output)
  WHEELCHECK_NVIDIA_SMI probe: the nvidia-smi to run for the driver and GPUs (set but empty: none), in
                        place of the one on PATH
  WHEELCHECK_PROC_NVIDIA  probe: the folder read in place of /proc/driver/nvidia
  LD_LIBRARY_PATH, LD_PRELOAD, PATH, PYTHONPATH, VIRTUAL_ENV, CONDA_PREFIX, CUDA_HOME, CUDA_PATH,
  ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME, MACA_PATH, ROCM_PATH, DTK_PATH, MUSA_HOME, MUSA_PATH, TOPS_HOME
                        probe --root / without --env (or with --env-from-process): the image's environment
  MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_, MALLOC_TOP_PAD_   glibc's allocator settings: one that is
                        set is kept in place of wheelcheck's own)";

namespace {

// `wheelcheck help [COMMAND...]`: the help of the top level or of that command.
int print_help(const CLI::App& app, const std::vector<std::string>& words) {
  const CLI::App* cmd = &app;
  for (const auto& w : words) {
    const CLI::App* sub = nullptr;
    for (const auto* s : cmd->get_subcommands([](const CLI::App*) { return true; })) {
      if (s->get_name() == w) sub = s;
    }
    if (sub == nullptr) {
      std::vector<std::string> names;
      for (const auto* s : cmd->get_subcommands([](const CLI::App*) { return true; })) names.push_back(s->get_name());
      const auto near = closest(w, names);
      return usage_failure(*cmd, "no command `" + w + "` to help with" +
                                     (near ? "; did you mean `" + *near + "`?" : " (wheelcheck --help lists them)"));
    }
    cmd = sub;
  }
  print_out(cmd->help());
  return k_exit_ok;
}

}  // namespace

// --json, or --format json: the output is a JSON document.
bool json_requested(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "--json") return true;
  }
  return format_in_args(args) == output::Format::Json;
}

namespace {

// CLI11's words for a missing argument, in ours.
std::string parse_message(const CLI::ParseError& e) {
  const std::string what = e.what();
  if (what == "wheels is required") return "no wheel given";
  if (what.rfind("--image", 0) == 0 && what.find("required") != std::string::npos) {
    return "no image given: --image NAME (`wheelcheck images` lists them), a description file, a root folder, or all";
  }
  if (what.rfind("wheels: ", 0) == 0) return what.substr(8);
  return what;
}

// The words ask for gates (`gates`, or a check with --format sh|github): a failure must fail closed.
bool gates_requested(const CLI::App& command, const std::vector<std::string>& args) {
  if (command.get_name() == "gates") return true;
  if (command.get_name() != "check" && command.get_parent() != nullptr) return false;
  const std::optional<output::Format> format = format_in_args(args);
  return format == output::Format::Sh || format == output::Format::Github;
}

// A usage failure before the command ran: with --json, the JSON error object on stdout; for gates, the
// fail-closed gates; then the error and the usage line on stderr.
int early_failure(const CLI::App& app, const std::vector<std::string>& args, const std::string& message) {
  const CLI::App& command = *command_of(app, args);
  if (gates_requested(command, args)) {
    gates_parse_failure(args, message);
  } else if (json_requested(args)) {
    print_json({{"error", error_entry("", usage_error(message))["error"]}});
  }
  return usage_failure(command, message);
}

}  // namespace

}  // namespace wheelcheck::cli

int main(int argc, char** argv) {
  using namespace wheelcheck;
  if (!prepare_process()) {
    std::fprintf(stderr, "wheelcheck: error: internal: OpenSSL could not be initialised\n");
    return k_exit_internal;
  }
  CLI::App app{
      "wheelcheck: will this wheel's native code load and work in that image?\n\n"
      "Reads a wheel's ELF members (dynamic section, symbols, versions) straight out of the zip and\n"
      "describes target images (probed from real roots, or declared in the bundled db)."};
  app.set_version_flag("--version", "wheelcheck " + version() + " (" + build_description() + ")");
  app.require_subcommand(0, 1);
  // `wheelcheck WHEEL --image NAME`: the check is the default command.
  auto top = std::make_shared<cli::CheckArgs>();
  app.add_option("wheels", top->wheels,
                 "Wheel files or URLs, or lock files (pylock.toml, a pip report, requirements.txt), to check (the "
                 "default command; same as `wheelcheck check`)");
  cli::add_check_options(app, *top, false);
  app.footer(std::string(cli::k_check_help) + "\n\n" + cli::k_exit_codes);

  const cli::Command commands[] = {
      cli::add_check(app), cli::add_gates(app),   cli::add_inspect(app), cli::add_probe(app), cli::add_images(app),
      cli::add_image(app), cli::add_exports(app), cli::add_scan(app),    cli::add_lint(app),  cli::add_config(app)};
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args.front() == "help") {
    if (args.size() == 2 && args[1] == "--man") {
      cli::print_out(cli::man_page(app));
      cli::flush_stdout();
      return k_exit_ok;
    }
    return cli::print_help(app, {args.begin() + 1, args.end()});
  }
  if (auto mistake = cli::find_mistake(app, args)) return cli::early_failure(app, args, *mistake);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return cli::early_failure(app, args, cli::parse_message(e));
  }
  try {
    const int rc = [&] {
      for (const auto& c : commands) {
        if (c.app->parsed()) return c.run();
      }
      if (top->wheels.empty()) {
        if (args.empty()) {
          // One line, as other tools answer a bare call; --help teaches.
          std::fprintf(stderr,
                       "usage: wheelcheck WHEEL... --image NAME [OPTIONS]   (wheelcheck --help: commands and "
                       "examples)\n");
          return static_cast<int>(k_exit_bad_input);  // 2: usage, as every option error
        }
        return cli::usage_failure(app, "no wheel given");
      }
      return cli::run_check(*top);
    }();
    // Every write to stdout checked: output that did not arrive (a full disk, /dev/full) is an error.
    cli::flush_stdout();
    return rc;
  } catch (const cli::StdoutClosed&) {
    return 128 + SIGPIPE;  // the reader went away (`| head`): quietly, as a shell reports SIGPIPE
  } catch (const Error& e) {
    // With --json, stdout holds a complete document even when the command fails before its output.
    if (cli::json_requested(args)) cli::print_json({{"error", cli::error_entry("", e)["error"]}});
    std::fprintf(stderr, "wheelcheck: error: %s\n", e.what());
    return cli::exit_code_of(e);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "wheelcheck: error: out of memory\n");
    return k_exit_bad_input;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wheelcheck: error: internal: %s (a bug in wheelcheck: please report it)\n", e.what());
    return k_exit_internal;
  }
  return k_exit_ok;
}
