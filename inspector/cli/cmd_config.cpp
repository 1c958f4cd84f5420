// `wheelcheck config`: the settings a check would run with, and where each came from (the command line,
// the settings file's line, or the default), with the accepted conditions in force and those expired.
#include <fmt/format.h>

#include <memory>

#include "commands.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cli {

namespace config_cmd {

struct ConfigArgs {
  CheckArgs check;
  bool json = false;
};

struct Row {
  std::string key;
  std::vector<std::string> values;
  std::string source;
};

std::vector<Row> effective(const CheckArgs& flags, const Settings& s) {
  auto pick = [](const char* key, const std::vector<std::string>& given, const char* flag,
                 const std::optional<Setting>& file, std::vector<std::string> fallback) {
    if (!given.empty()) return Row{key, given, flag};
    if (file) return Row{key, file->values, file->source};
    return Row{key, std::move(fallback), "default"};
  };
  auto one = [](const std::string& v) { return v.empty() ? std::vector<std::string>{} : std::vector<std::string>{v}; };
  return {
      pick("images", flags.images, "--image", s.images, {}),
      pick("assume", flags.assume, "--assume", s.assume, {}),
      pick("rules", one(flags.rules), "--rules", s.rules, {"the rule set whose applies_to names the wheel"}),
      pick("verify", one(flags.verify), "--verify", s.verify, {"auto"}),
      pick("format", one(flags.format ? std::string(output::format_name(*flags.format)) : ""), "--format", s.format,
           {std::string(output::format_name(output::Format::Text))}),
      pick("output", flags.outputs, "--output", s.outputs, {}),
      pick("exit-zero", flags.exit_zero ? std::vector<std::string>{"true"} : std::vector<std::string>{}, "--exit-zero",
           s.exit_zero, {"false"}),
  };
}

nlohmann::ordered_json acceptance_json(const verdict::Acceptance& a) {
  return {{"rule", a.rule},     {"wheel", a.wheel},     {"image", a.image},  {"match", a.match},
          {"reason", a.reason}, {"expires", a.expires}, {"source", a.source}};
}

std::string acceptance_text(const verdict::Acceptance& a) {
  std::string what = a.rule.empty() ? "any condition" : a.rule;
  if (!a.match.empty()) what += " matching '" + a.match + "'";
  if (!a.wheel.empty()) what += " of " + a.wheel;
  if (!a.image.empty()) what += " on " + a.image;
  return fmt::format("  {} until {}: {}  ({})\n", what, a.expires, a.reason, a.source);
}

int run_config(const ConfigArgs& a) {
  const Settings s = load_settings(a.check.config, a.check.no_config);
  parse_outputs(a.check.outputs);
  const std::vector<Row> rows = effective(a.check, s);
  if (a.json) {
    nlohmann::ordered_json j;
    j["schema"] = "wheelcheck-config/1";
    j["file"] = s.file.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s.file);
    j["found"] = s.found;
    nlohmann::ordered_json settings = nlohmann::ordered_json::object();
    for (const auto& r : rows) settings[r.key] = {{"value", r.values}, {"source", r.source}};
    j["settings"] = settings;
    j["accepted"] = nlohmann::ordered_json::array();
    for (const auto& x : s.accept) j["accepted"].push_back(acceptance_json(x));
    j["expired"] = nlohmann::ordered_json::array();
    for (const auto& x : s.expired) j["expired"].push_back(acceptance_json(x));
    print_json(j);
    return k_exit_ok;
  }
  std::string out = s.file.empty() ? std::string(
                                         "settings file: none (no wheelcheck.toml, nor a pyproject.toml with "
                                         "[tool.wheelcheck], here or above)\n")
                                   : "settings file: " + s.file + " (" + s.found + ")\n";
  out += "\n";
  for (const auto& r : rows) {
    out += fmt::format("  {:<10} {:<44} {}\n", r.key, r.values.empty() ? "(none)" : join(r.values, ", "), r.source);
  }
  out += "\naccepted conditions" + std::string(s.accept.empty() ? ": none\n" : ":\n");
  for (const auto& x : s.accept) out += acceptance_text(x);
  if (!s.expired.empty()) {
    out += "expired (they count again):\n";
    for (const auto& x : s.expired) out += acceptance_text(x);
  }
  out += "\nThe command line overrides the file, setting by setting.\n";
  print_out(out);
  return k_exit_ok;
}

}  // namespace config_cmd

Command add_config(CLI::App& app) {
  auto a = std::make_shared<config_cmd::ConfigArgs>();
  auto* c = app.add_subcommand("config", "The settings a check runs with, and where each comes from");
  c->add_option("--image,-i", a->check.images, "As check's --image: shown as given on the command line");
  c->add_option("--assume", a->check.assume, "As check's --assume");
  c->add_option("--rules", a->check.rules, "As check's --rules");
  c->add_option("--verify", a->check.verify, "As check's --verify")->check(CLI::IsMember({"auto", "full", "headers"}));
  add_format_option(*c, a->check.format, output::k_check, "As check's --format");
  c->add_option("--output,-o", a->check.outputs, "As check's --output")->allow_extra_args(false);
  c->add_flag("--exit-zero", a->check.exit_zero, "As check's --exit-zero");
  c->add_flag("--json", a->json, "JSON for machines (schema wheelcheck-config/1)");
  add_settings_options(*c, a->check.config, a->check.no_config);
  c->footer(R"C(The settings file is wheelcheck.toml (its top level) or pyproject.toml's [tool.wheelcheck], in the
working folder or the nearest folder above it that has one (wheelcheck.toml first), or --config FILE:

  images = ["cuda13.0", "ascend-cann9"]     # --image when the command line gives none
  assume = ["driver=580.95.05"]             # --assume
  rules = "flagos"                          # --rules
  verify = "auto"                           # --verify
  format = "text"                           # check's --format (never the gates': they stay sh for eval)
  exit-zero = false                         # --exit-zero
  [output]                                  # --output FORMAT=PATH, paths relative to the file
  sarif = "wheelcheck.sarif"
  junit = "wheelcheck-junit.xml"
  [[accept]]                                # a condition accepted until a date: not counted as unknown
  rule = "driver"                           # a finding kind or classification (docs/verdict.md)
  wheel = "flagcx-*"                        # optional: a glob on the wheel's file name
  image = "cuda13.0"                        # optional
  match = "580.65.06"                       # optional: a part of the finding's explanation
  reason = "the runners' driver is 580.95 (nvidia-smi, 2026-11-30)"
  expires = 2027-03-31                      # after it, a warning, and the condition counts again

check, gates and scan read it; the command line overrides it, setting by setting; --no-config ignores it.
Exit 0, or 2 for a settings file with errors (each names FILE:LINE).)C");
  return {c, [a] { return config_cmd::run_config(*a); }};
}

}  // namespace wheelcheck::cli
