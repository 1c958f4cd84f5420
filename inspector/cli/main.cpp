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
