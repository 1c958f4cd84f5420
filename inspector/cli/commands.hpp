// The subcommands: each file adds its own to the app and returns what runs it once parsed.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "wheelcheck/net.hpp"
#include "wheelcheck/profile.hpp"

namespace wheelcheck::cli {

// Runs the subcommand when it was the one parsed; returns the exit code.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

extern const char* const k_exit_codes;

bool use_color(std::FILE* f);
bool show_progress(bool quiet);

// Wheels given as a file or an http(s) URL (inspector/cli/wheels.cpp). `verify`: auto (files: full;
// URLs: headers-only where the server answers ranges), full, headers.
CLI::Validator wheel_file_or_url();
net::ClientOptions client_options(bool quiet);
CachedInspect inspect_any(const std::string& where, InspectOptions options, const std::string& verify,
                          const ProfileCache* cache, std::unique_ptr<net::Client>& client, bool progress);
inline const char* const k_verify_help =
    "auto: a file is read whole and verified, a URL headers-only where the server answers byte ranges "
    "(else downloaded whole); full: every byte read, RECORD and sha256 verified; headers: only the ELF "
    "headers and tables of each member, nothing verified";

Command add_inspect(CLI::App& app);
Command add_probe(CLI::App& app);
Command add_images(CLI::App& app);
Command add_image(CLI::App& app);  // `image show NAME`
Command add_exports(CLI::App& app);
Command add_scan(CLI::App& app);

// The verdict: `wheelcheck check WHEEL --image NAME`, and the same at the top level (`wheelcheck WHEEL ...`).
struct CheckArgs {
  std::vector<std::string> wheels;
  std::vector<std::string> images;
  std::vector<std::string> with;
  bool json = false;
  std::string db;
  bool no_cache = false;
  std::string cache_dir;
  bool quiet = false;
  std::string format = "text";         // text, json, sh, github (gates: sh by default)
  std::string rules;                   // a rule set name, a file, or "none"; default: the one for the wheel
  std::string summary;                 // github: the Markdown table is appended here
  std::string env_file;                // github: VAR=value lines go here (default $GITHUB_ENV)
  bool gates = false;                  // the gates command
  std::vector<std::string> image_env;  // NAME=VALUE: the environment of a root folder probed on the fly
  std::string verify = "auto";         // auto, full, headers (see k_verify_help)
};
extern const char* const k_check_help;
void add_check_options(CLI::App& app, CheckArgs& args, bool image_required);
int run_check(const CheckArgs& args);
Command add_check(CLI::App& app);
Command add_gates(CLI::App& app);

}  // namespace wheelcheck::cli
