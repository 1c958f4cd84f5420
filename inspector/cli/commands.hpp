// The subcommands: each file adds its own to the app and returns what runs it once parsed.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/answer.hpp"
#include "wheelcheck/ci.hpp"
#include "wheelcheck/container.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/format.hpp"
#include "wheelcheck/gates.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::cli {

// Runs the subcommand when it was the one parsed; returns the exit code.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

extern const char* const k_exit_codes;

// The manual page (roff) made from the command line's own definitions: `wheelcheck help --man`
// (inspector/cli/manpage.cpp).
std::string man_page(const CLI::App& app);

// Mistakes named before parsing (inspector/cli/mistakes.cpp): an unknown command or option, with the
// closest valid name. The message, or nullopt when the words are all known.
std::optional<std::string> find_mistake(const CLI::App& app, const std::vector<std::string>& args);
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates);
// The (sub)command the words name: `image show` -> the show app; the top level when none.
const CLI::App* command_of(const CLI::App& app, const std::vector<std::string>& args);
std::string usage_line(const CLI::App& app);  // "usage: wheelcheck inspect WHEEL... [OPTIONS] (...)"

// Output shared by the commands (inspector/cli/output.cpp). Colour and progress only on a terminal.
bool use_color(std::FILE* f);
bool show_progress(bool quiet);
// The terminal's columns when stdout is one (text is wrapped to it there); none off a terminal.
std::optional<std::size_t> terminal_columns();
std::size_t terminal_width();  // the same, else 120 (where a cell must be cut somewhere)
// Text wrapped at spaces to the terminal's width (continuation lines indented), on a terminal only.
std::string wrap_to_terminal(const std::string& text);
void warn(const std::string& message);                                   // "wheelcheck: warning: ..."
int usage_failure(const CLI::App& command, const std::string& message);  // error line + usage; returns 2
std::string error_kind_name(ErrorKind kind);                             // usage, bad-input, io, internal
int exit_code_of(const Error& e);                                        // 2, or 70 for a bug
// {"wheel": ..., "error": {"kind", "message", "exit_code"}}: a wheel that could not be read, as an entry
// of a JSON document that still parses (docs/*.schema.json: "failure").
nlohmann::ordered_json error_entry(const std::string& wheel, const Error& e);
// Flushes standard output and checks every write to it: a failure (a full disk, /dev/full) is an
// Error(Io) with the reason; a closed pipe (EPIPE) is StdoutClosed, which ends quietly, as other tools do.
// print_out writes to stdout and checks at once (errno is the write's own), check_stdout checks after a
// streamed write, flush_stdout flushes and checks (every command's output ends with it, in main).
struct StdoutClosed {};
void print_out(std::string_view text);
void check_stdout();
void flush_stdout();
void print_json(const nlohmann::ordered_json& j);

// Wheels given as a file or an http(s) URL (inspector/cli/wheels.cpp). `verify`: auto (files: full;
// URLs: headers-only where the server answers ranges), full, headers.
CLI::Validator wheel_file_or_url();

// The limits against hostile input (inspector/cli/limits.cpp): options in their own group of --help,
// the network ones only for the commands that may fetch.
struct LimitArgs {
  std::string max_member_size = "8G";
  std::string max_total_size = "32G";
  std::uint64_t max_members = 200000;
  std::uint64_t max_ratio = 100;
  std::string max_page_size = "64M";
  std::string max_download_size = "16G";
  long max_redirects = 10;
  int retries = 5;
  long low_speed_time = 30;
  bool no_python_sources = false;  // --no-python-sources
};
void add_limit_options(CLI::App& app, LimitArgs& a, bool network);
void apply_limits(const LimitArgs& a, InspectOptions& options);
void apply_limits(const LimitArgs& a, net::ClientOptions& options);

net::ClientOptions client_options(bool quiet, const LimitArgs& limits);
// The profile cache: none with --no-cache, nor without a folder to keep it in (no --cache-dir,
// $WHEELCHECK_CACHE_DIR, $XDG_CACHE_HOME or $HOME). A folder that cannot be written, or that is not
// private to the user (another owner, writable by others), is an error when --cache-dir names it, a
// warning (and no cache) when it is the default one. max_size: --cache-max-size ("" = the default).
std::optional<ProfileCache> open_cache(bool no_cache, const std::string& cache_dir, const std::string& max_size);
// --no-cache, --cache-dir and --cache-max-size, as every command with a cache has them.
void add_cache_options(CLI::App& app, bool& no_cache, std::string& cache_dir, std::string& max_size);
CachedInspect inspect_any(const std::string& where, InspectOptions options, const std::string& verify,
                          const ProfileCache* cache, std::unique_ptr<net::Client>& client, bool progress,
                          const LimitArgs& limits);
inline const char* const k_verify_help =
    "auto: a file is read whole and verified, a URL headers-only where the server answers byte ranges "
    "(else downloaded whole); full: every byte read, RECORD and sha256 verified; headers: only the ELF "
    "headers and tables of each member, nothing verified";

// The images an --image list names (inspector/cli/targets.cpp), with the tables of a root probed on the
// fly kept alive beside its description.
using Target = run::Target;
struct ImageRequest {
  std::map<std::string, std::string> env;  // the environment of a root folder probed on the fly
  std::vector<std::string> search_dirs;    // absolute RPATH/RUNPATH folders of the wheels: probed too
  std::vector<std::string> needed_paths;   // absolute DT_NEEDED entries of the wheels: probed too
  // A container image reference (docker://, oci:, oci-archive:, docker-archive:; docs/images.md): the
  // platform --platform names ("" = none), the wheels' machine (elf::machine_name, "" = unknown) an index
  // picks otherwise, the folder its root is cached under ("" = the profile cache's default), progress lines.
  std::string platform;
  std::string wheel_machine;
  std::string cache_dir;
  bool quiet = false;                 // -q: not even the line saying which image and platform was read
  bool progress = false;              // a line per stage of reading the image (stderr is a terminal)
  const LimitArgs* limits = nullptr;  // --low-speed-time, --max-redirects, --retries for a registry
};
// What pulling a container image takes from a request (--platform, the wheels' machine, the cache folder, the
// registry limits), with progress lines under `label` ("image", "probe") when request.progress.
container::PullOptions pull_options(const ImageRequest& request, const char* label);
// The machine most of the wheels' ELF members are built for ("" when none has one).
std::string wheels_machine(const std::vector<WheelProfile>& profiles);
// --platform, as every command that takes --image has it.
void add_platform_option(CLI::App& app, std::string& platform);
std::vector<Target> resolve_images(const std::vector<std::string>& names, const image::Db& db,
                                   const ImageRequest& request);
std::map<std::string, std::string> parse_env(const std::vector<std::string>& assignments, const std::string& flag);
// --assume FACT=VALUE, applied to every image (image::assume); the help text of the option.
void apply_assumptions(std::vector<Target>& targets, const std::vector<std::string>& assume);
extern const char* const k_assume_help;

Command add_inspect(CLI::App& app);
Command add_probe(CLI::App& app);
Command add_images(CLI::App& app);
Command add_image(CLI::App& app);  // `image show NAME`
Command add_exports(CLI::App& app);
Command add_scan(CLI::App& app);
Command add_lint(CLI::App& app);    // `wheelcheck lint`: the publisher check (inspector/cli/cmd_lint.cpp)
Command add_config(CLI::App& app);  // `wheelcheck config`: the effective settings (inspector/cli/cmd_config.cpp)

// The verdict: `wheelcheck check WHEEL --image NAME`, and the same at the top level (`wheelcheck WHEEL ...`).
struct CheckArgs;
// A gates command whose own words could not be parsed still fails closed: every gate off,
// WHEELCHECK_VERDICT=error and an eval that fails (in the format the words ask for). Returns 2.
int gates_parse_failure(const std::vector<std::string>& args, const std::string& message);

// The settings file (inspector/cli/settings.cpp): wheelcheck.toml, or [tool.wheelcheck] of pyproject.toml.
struct Setting {
  std::vector<std::string> values;
  std::string source;  // "wheelcheck.toml:3"
};
struct Settings {
  std::string file;   // the file read; "" when none
  std::string found;  // how: "--config", "found from the working folder"
  std::optional<Setting> images, assume, rules, verify, format, exit_zero, outputs;  // outputs: FORMAT=PATH
  std::vector<verdict::Acceptance> accept;                                           // accepted conditions in force
  std::vector<verdict::Acceptance> expired;  // past their date: they count again (a warning says so)
};
// The settings: the file --config names, none with --no-config, else the first wheelcheck.toml or
// pyproject.toml with [tool.wheelcheck] in the working folder or above it. Throws Error(BadInput) naming
// FILE:LINE for a malformed one (an unknown key, with the closest known one).
Settings load_settings(const std::string& explicit_path, bool no_config);
void warn_expired(const Settings& s);
void add_settings_options(CLI::App& app, std::string& config, bool& no_config);

// --output FORMAT=PATH (check, gates, scan): FORMAT=PATH values checked against the formats `command` writes
// (the format table, include/wheelcheck/format.hpp): (format, path) pairs; Error(Usage) otherwise.
std::vector<std::pair<output::Format, std::string>> parse_outputs(const std::vector<std::string>& values,
                                                                  output::Commands command = output::k_check);
// Appends text to a file (created when absent); every write checked.
void append_to_file(const std::string& path, const std::string& text);
using output::github_output_lines;
// --format, parsed into a Format once (the names the table lets `command` print; `help` "" for the
// table's help); the format named in words not yet parsed (a usage failure's), nullopt when none or unknown.
CLI::Option* add_format_option(CLI::App& app, std::optional<output::Format>& format, output::Commands command,
                               const std::string& help = "");
std::optional<output::Format> format_in_args(const std::vector<std::string>& args);
// Where an answer goes on the command line (inspector/cli/output.cpp): stdout and stderr checked, files
// written atomically, text wrapped and coloured on a terminal only.
output::Sinks stdout_sinks();
// Runs `store` (a write to the profile cache): an Error is a warning that says `what` was not kept (a cache
// that cannot be written costs speed, never the answer); a bug still throws.
void keep_in_cache(const std::function<void()>& store, const std::string& what);
// A wheel that could not be read, as the answer says it.
output::Problem problem_of(const std::string& wheel, const Error& e);

struct CheckArgs {
  std::vector<std::string> wheels;
  std::vector<std::string> images;
  std::vector<std::string> with;
  bool json = false;
  std::string db;
  bool no_cache = false;
  std::string cache_dir;
  std::string cache_max_size;
  bool quiet = false;
  std::vector<std::string> assume;            // FACT=VALUE, for every image
  std::optional<output::Format> format;       // --format (default: text; gates: sh)
  std::string rules;                          // a rule set name, a file, or "none"; default: the one for the wheel
  std::string summary;                        // github: the Markdown table is appended here
  std::string env_file;                       // github: VAR=value lines go here (default $GITHUB_ENV)
  bool gates = false;                         // the gates command
  std::vector<std::string> image_env;         // NAME=VALUE: the environment of a root folder probed on the fly
  std::string platform;                       // --platform: a container image index's entry
  std::string verify;                         // auto, full, headers (see k_verify_help); "" = the settings', else auto
  std::vector<std::string> outputs;           // FORMAT=PATH: also written there (json, sarif, junit, markdown)
  bool exit_zero = false;                     // check: exit 0 whatever the verdicts (2 and 70 stay)
  std::string github_output;                  // github format: step outputs here (default: $GITHUB_OUTPUT)
  std::string config;                         // --config FILE
  bool no_config = false;                     // --no-config
  std::vector<verdict::Acceptance> accepted;  // from the settings file
  gates::Options gate_options;                // gates: --export-on, --conditions-off
  LimitArgs limits;
};
// The settings file's values where the command line gave none (images, assume, rules, verify, format
// for check only, outputs, exit-zero) and its accepted conditions; warns about expired acceptances.
void apply_settings(const Settings& s, CheckArgs& a);
extern const char* const k_check_help;
void add_check_options(CLI::App& app, CheckArgs& args, bool image_required);
int run_check(const CheckArgs& args);
Command add_check(CLI::App& app);
Command add_gates(CLI::App& app);

// Shared by check, gates and the environment check (inspector/cli/cmd_check.cpp).
// Error(Usage) saying how to name an image when --image (or the settings' images) names none.
void require_images(const CheckArgs& a);
// The rule sets whose gates a failed gates run turns off: the one --rules names, else every rule set of
// the db (a setup script reads only the variables it knows); none when even they cannot be read.
std::vector<rules::RuleSet> fail_closed_sets(const std::string& rules_arg, const std::string& db_arg);
// The exit code with --exit-zero applied: a verdict's code (1, 3, 4) becomes 0; 2 and 70 stay.
int exit_with(const CheckArgs& a, int rc);
// Where check's, gates' and an environment's answer goes: stdout, the --output files, and for --format
// github the env file, summary and step outputs (the command line's, else $GITHUB_ENV, $GITHUB_OUTPUT).
output::Sinks sinks_for(const CheckArgs& a);
// A run that could not be made at all (an unknown image, a settings file with errors), as the SARIF or
// JUnit document --format and the --output files of those formats ask for.
void print_failed_run(const CheckArgs& a, const Error& e);
// JSON as the output files and the scan write it: two-space indent, invalid UTF-8 replaced, a final newline.
std::string dump_json(const nlohmann::ordered_json& j);

// `wheelcheck image fill NAME` (inspector/cli/cmd_fill.cpp): published wheels' tables as a db layer.
struct FillArgs {
  std::string name, output, db;
  std::string verify = "auto";
  bool json = false, quiet = false, no_cache = false;
  std::string cache_dir, cache_max_size;
  LimitArgs limits;
};
void add_fill_options(CLI::App& fill, FillArgs& a);
int run_fill(const FillArgs& a);

// Environments (inspector/cli/cmd_env.cpp): a lock file wherever a wheel goes (positional or --with).
bool names_a_lock(const CheckArgs& a);
// A .toml argument that is not named pylock.toml or pylock.NAME.toml: Error(Usage) saying how to name it.
void refuse_misnamed_locks(const CheckArgs& a);
int check_environment(const CheckArgs& a, output::Format format, bool gates_output);
// The wheels of --with arguments (wheels, URLs, lock files) as installed in an image: each lock resolved for
// it, each wheel read once across images; what is not usable there is warned about and left out (the scan's
// environment, issue 28). Empty when `with` is; the client is created when needed and must outlive the result.
std::function<std::vector<const WheelProfile*>(const image::Image&)> installed_beside(
    const std::vector<std::string>& with, const std::string& verify, const ProfileCache* cache,
    std::unique_ptr<net::Client>& client, bool progress, const LimitArgs& limits);
// How a run of check or gates reads the export tables an image's published distributions lack
// (run::fill_published): the command's client options, --verify, its limits and cache; progress and
// warnings on stderr.
run::Published published_of(const CheckArgs& a, const ProfileCache* cache, bool progress);

}  // namespace wheelcheck::cli
