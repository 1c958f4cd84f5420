// The subcommands: each file adds its own to the app and returns what runs it once parsed.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace wheelcheck::cli {

// Runs the subcommand when it was the one parsed; returns the exit code.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

extern const char* const k_exit_codes;

bool use_color(std::FILE* f);
bool show_progress(bool quiet);

Command add_inspect(CLI::App& app);
Command add_probe(CLI::App& app);
Command add_images(CLI::App& app);
Command add_image(CLI::App& app);  // `image show NAME`
Command add_exports(CLI::App& app);

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
};
extern const char* const k_check_help;
void add_check_options(CLI::App& app, CheckArgs& args, bool image_required);
int run_check(const CheckArgs& args);
Command add_check(CLI::App& app);
Command add_gates(CLI::App& app);

}  // namespace wheelcheck::cli
