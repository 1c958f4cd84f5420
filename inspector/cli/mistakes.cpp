// Mistakes on the command line, named before CLI11 parses: a mistyped command (`wheelcheck inspct` ->
// did you mean `inspect`) or option (`--imgae` -> did you mean `--image`), which CLI11 would otherwise
// take for a wheel file or report without a suggestion. The closest name is the one at the smallest
// edit distance (insertions, deletions, substitutions and swaps of neighbours), offered only when it is
// close enough to be a typo.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cli {

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> out{"help"};
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) out.push_back(sub->get_name());
  return out;
}

const CLI::App* find_command(const CLI::App& app, std::string_view name) {
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

// The option of `app` named `arg` ("--image", "-i"), or null.
const CLI::Option* find_option(const CLI::App& app, std::string_view arg) {
  for (const auto* o : app.get_options()) {
    if (o->get_positional()) continue;
    if (arg.size() > 2 && arg.substr(0, 2) == "--") {
      for (const auto& n : o->get_lnames()) {
        if (arg.substr(2) == n) return o;
      }
    } else if (arg.size() == 2 && arg[0] == '-') {
      for (const auto& n : o->get_snames()) {
        if (arg.substr(1) == n) return o;
      }
    }
  }
  return nullptr;
}

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const auto* o : app.get_options()) {
    for (const auto& n : o->get_lnames()) out.push_back("--" + n);
  }
  return out;
}

bool exists(const std::string& path) {
  return is_file(path) || is_dir(path);
}

// The command chain up to `cmd`, as typed: "image".
std::string mistakes_command_path(const CLI::App& cmd) {
  std::string out;
  for (const CLI::App* a = &cmd; a != nullptr && a->get_parent() != nullptr; a = a->get_parent())
    out = a->get_name() + (out.empty() ? "" : " " + out);
  return out;
}

// The first word after a command that has subcommands and no arguments of its own, when it is none of its
// subcommands: "unknown command `image shwo`; did you mean `image show`?", else the list of them.
std::optional<std::string> mistyped_subcommand(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* cmd = &app;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return std::nullopt;
    if (!a.empty() && a[0] == '-') {
      // An option's value is not a command word.
      const CLI::Option* o = find_option(*cmd, a.substr(0, a.find('=')));
      if (o != nullptr && o->get_items_expected_max() > 0 && a.find('=') == std::string::npos) ++i;
      continue;
    }
    if (const CLI::App* sub = find_command(*cmd, a); sub != nullptr) {
      cmd = sub;
      continue;
    }
    if (cmd == &app) return std::nullopt;  // the top level: a wheel or lock file, said above
    const auto subs = cmd->get_subcommands([](const CLI::App*) { return true; });
    const auto options = cmd->get_options();
    const bool has_positionals =
        std::any_of(options.begin(), options.end(), [](const CLI::Option* o) { return o->get_positional(); });
    if (subs.empty() || has_positionals) return std::nullopt;
    std::vector<std::string> names;
    for (const auto* s : subs) names.push_back(s->get_name());
    const std::string path = mistakes_command_path(*cmd);
    if (auto c = closest(a, names))
      return "unknown command `" + path + " " + a + "`; did you mean `" + path + " " + *c + "`?";
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    return "unknown command `" + path + " " + a + "` (the commands of `wheelcheck " + path + "`: " + list + ")";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (!best || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  // A typo, not another word: at most a third of the word wrong (and at least one letter allowed).
  const std::size_t allowed = std::max<std::size_t>(1, std::min<std::size_t>(3, word.size() / 3));
  if (!best || best_distance > allowed) return std::nullopt;
  return best;
}

const CLI::App* command_of(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* cmd = &app;
  for (const auto& a : args) {
    if (a == "--") break;
    if (!a.empty() && a[0] == '-') continue;
    const CLI::App* sub = find_command(*cmd, a);
    if (sub == nullptr) break;
    cmd = sub;
  }
  return cmd;
}

std::optional<std::string> find_mistake(const CLI::App& app, const std::vector<std::string>& args) {
  // The first word: a command, or (the default command) a wheel file or URL.
  if (!args.empty() && !args[0].empty() && args[0][0] != '-' && find_command(app, args[0]) == nullptr &&
      args[0] != "help" && !net::is_url(args[0]) && !exists(args[0])) {
    if (auto c = closest(args[0], command_names(app))) {
      return "unknown command `" + args[0] + "`; did you mean `" + *c + "`?";
    }
    if (args[0].find(".whl") == std::string::npos && args[0].find('/') == std::string::npos) {
      std::string list;
      for (const auto& n : command_names(app)) list += (list.empty() ? "" : ", ") + n;
      // A name a lock file would have (pylock.toml, requirements.txt, report.json): it is not there.
      if (lock::is_lock_path(args[0]))
        return "no such file: " + args[0] + " (a lock file: pylock.toml, a pip report, requirements.txt)";
      return "`" + args[0] + "` is neither a command (" + list + ") nor a wheel or lock file";
    }
  }
  // A command made of commands (`image show`, `image fill`) takes no other word: a word that is none of them
  // is a mistyped one (`image shwo` -> did you mean `image show`), as a top-level command is.
  if (auto m = mistyped_subcommand(app, args)) return m;
  // Options: each must belong to the command it follows (or to the top level: --help, --version).
  const CLI::App* cmd = &app;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (a.size() < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9')) {
      if (const CLI::App* sub = find_command(*cmd, a); sub != nullptr) cmd = sub;
      continue;
    }
    const std::string name = a.substr(0, a.find('='));
    if (a[1] != '-' && a.size() > 2) continue;  // -j4, -qi: CLI11 splits short options itself
    const CLI::Option* o = find_option(*cmd, name);
    if (o == nullptr) {
      const std::string where = cmd == &app ? "" : " for `" + cmd->get_name() + "`";
      std::string msg = "unknown option `" + name + "`" + where;
      if (name.size() > 2 && name[1] == '-') {
        if (auto c = closest(name, option_names(*cmd))) {
          msg += "; did you mean `" + *c + "`?";
        } else {
          for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
            if (find_option(*sub, name) != nullptr && cmd == &app) {
              msg += " (it is an option of `wheelcheck " + sub->get_name() + "`)";
              break;
            }
          }
        }
      }
      return msg;
    }
    // A value after an option that takes one is not a command name.
    if (o->get_items_expected_max() > 0 && a.find('=') == std::string::npos) ++i;
  }
  return std::nullopt;
}

std::string usage_line(const CLI::App& app) {
  std::string name = "wheelcheck";
  std::vector<const CLI::App*> chain;
  for (const CLI::App* a = &app; a != nullptr && a->get_parent() != nullptr; a = a->get_parent()) chain.push_back(a);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) name += " " + (*it)->get_name();
  if (app.get_parent() == nullptr) {
    return "usage: wheelcheck [check] WHEEL... --image NAME   or   wheelcheck COMMAND ...   (wheelcheck --help)";
  }
  std::string positionals;
  for (const auto* o : app.get_options()) {
    if (!o->get_positional()) continue;
    std::string n = o->get_name();
    std::transform(n.begin(), n.end(), n.begin(), [](char c) { return static_cast<char>(std::toupper(c)); });
    if (n == "WHEELS") n = "WHEEL...";
    positionals += " " + (o->get_required() ? n : "[" + n + "]");
  }
  std::string required;
  for (const auto* o : app.get_options()) {
    if (o->get_positional() || !o->get_required()) continue;
    std::string v = o->get_lnames().empty() ? "" : o->get_lnames().front();
    std::string upper = v;
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](char c) { return static_cast<char>(std::toupper(c)); });
    required += " --" + v + " " + upper;
  }
  const bool has_subcommands = !app.get_subcommands([](const CLI::App*) { return true; }).empty();
  return "usage: " + name + (has_subcommands ? " COMMAND" : "") + positionals + required + " [OPTIONS]   (" + name +
         " --help)";
}

}  // namespace wheelcheck::cli
