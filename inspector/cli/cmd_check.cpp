// `wheelcheck WHEEL... --image NAME...` (also `wheelcheck check ...`): the verdict; with one wheel and a few
// images, the images side by side (a column each, then what changes between them); else a wheel x image
// matrix. --image takes a comma list as well as repeats.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "commands.hpp"
#include "wheelcheck/ci.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/format.hpp"
#include "wheelcheck/gates.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/probe.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/rules.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::cli {

const char* const k_check_help = R"(Examples:
  wheelcheck flag_gems_cpp-5.4.0-cp312-cp312-linux_x86_64.whl --image cuda13.0
  wheelcheck flagtree-0.6.1-cp312-cp312-linux_x86_64.whl --with flagcx-0.9-cp312-cp312-linux_x86_64.whl -i cuda13.0
  wheelcheck my.whl --image cuda13.0,cuda13.3   # side by side: today's image and the planned one
  wheelcheck my.whl --image all                 # a matrix against every image in the db
  wheelcheck my.whl --image ./rootfs --json     # an unpacked image, probed on the fly
  wheelcheck pylock.toml --image cuda13.0       # an environment: every wheel of the lock, installed together
  wheelcheck flag_gems.whl --with torch-2.14.1+cpu-cp312-cp312-manylinux_2_28_x86_64.whl -i cuda13.0
                                                # a wheel beside it replaces the image's torch, as pip does

What is checked: the wheel's tags and Requires-Python against the image's Pythons and C library; each
ELF member's machine; every DT_NEEDED resolved as glibc's loader would (RPATH, LD_LIBRARY_PATH, RUNPATH,
ld.so.cache, default folders; torch's libraries count as loaded when the wheel requires torch); every
undefined symbol bound against the export tables of its load scope, versions included; the CUDA
runtime and the driver it needs. Unknown facts of the image make conditions, not guesses.

Verdicts: compatible (0), incompatible (1), degraded (3: the core loads, optional parts cannot),
unknown (4: the answer depends on a fact the image description does not know; --assume FACT=VALUE states
it). A wheel for another machine, Python or accelerator toolkit is one line, and an image it is not for
does not count in the exit code of --image all. A file not named like a wheel is read by its .dist-info.

Lock files (PEP 751 pylock.toml, `pip install --dry-run --report`, pinned requirements.txt): each package's
wheel is the one an installer picks for the image (marker, tags, Python, Requires-Python), read headers-only
from its URL; the set is installed together (replacing the image's distributions of the same names) and has
one verdict and exit code. A distribution an image names as published (an index and a pin) has its export
tables read from that wheel when a check needs them; WHEELCHECK_OFFLINE=1 never fetches them.)";

namespace {

// The absolute DT_RPATH/DT_RUNPATH folders of the wheels' members ("/opt/tok/$LIB"): a root probed
// on the fly reads the libraries there too, since the loader will look there.
std::vector<std::string> search_dirs(const std::vector<WheelProfile>& a, const std::vector<WheelProfile>& b) {
  std::vector<std::string> dirs;
  for (const auto* list : {&a, &b}) {
    for (const auto& w : *list) {
      for (const auto& m : w.members) {
        if (!m.elf) continue;
        for (const auto* paths : {&m.elf->rpath, &m.elf->runpath}) {
          for (const auto& d : *paths) {
            if (!d.empty() && d[0] == '/' && std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
          }
        }
      }
    }
  }
  return dirs;
}

// Their DT_NEEDED entries that are absolute paths (a library linked by its path): read from the root too.
std::vector<std::string> needed_paths(const std::vector<WheelProfile>& a, const std::vector<WheelProfile>& b) {
  std::vector<std::string> paths;
  for (const auto* list : {&a, &b}) {
    for (const auto& w : *list) {
      for (const auto& m : w.members) {
        if (!m.elf) continue;
        for (const auto& n : m.elf->needed) {
          if (!n.empty() && n[0] == '/' && std::find(paths.begin(), paths.end(), n) == paths.end()) paths.push_back(n);
        }
      }
    }
  }
  return paths;
}

// One row per image, one column per wheel ([1], [2], ... named below); with one wheel, the reason in words
// (run::Cell::headline): the route that is off, the finding that decided, or why the image is not the
// wheel's at all.
std::string matrix_text(const std::vector<run::Cell>& cells, const std::vector<std::string>& wheels,
                        const std::vector<Target>& images, bool color) {
  const Paint p{color};
  auto paint = [&](const run::Cell& c, const std::string& text) {
    const auto v = c.report.verdict;
    return !c.targeted                           ? text
           : v == verdict::Verdict::Compatible   ? p.green(text)
           : v == verdict::Verdict::Incompatible ? p.red(text)
                                                 : p.yellow(text);
  };
  std::size_t width = 5;
  for (const auto& t : images) width = std::max(width, t.image.name.size());
  std::string out = fmt::format("{:<{}}", "image", width);
  for (std::size_t w = 0; w < wheels.size(); ++w) out += fmt::format("  {:<13}", fmt::format("[{}]", w + 1));
  if (wheels.size() == 1) out += "  reason";
  out += "\n";
  const std::size_t reason_width = std::max<std::size_t>(40, terminal_width() - width - 17);
  for (std::size_t k = 0; k < images.size(); ++k) {
    out += fmt::format("{:<{}}", images[k].image.name, width);
    for (std::size_t w = 0; w < wheels.size(); ++w) {
      const auto& c = cells[w * images.size() + k];
      const std::string word = c.targeted ? verdict::verdict_name(c.report.verdict) : "not for it";
      out += "  " + paint(c, fmt::format("{:<13}", word));
      if (wheels.size() == 1 && !c.headline.empty()) {
        std::string why = c.targeted ? c.headline : c.not_targeted;
        if (why.size() > reason_width) why = why.substr(0, reason_width - 3) + "...";
        out += "  " + why;
      }
    }
    out += "\n";
  }
  out += "\n";
  for (std::size_t w = 0; w < wheels.size(); ++w) out += fmt::format("[{}] {}\n", w + 1, wheels[w]);
  out += "Details of one cell: wheelcheck WHEEL --image NAME (or --json for all of them).\n";
  return out;
}

// The most images printed side by side (a column each); more make the matrix.
constexpr std::size_t k_side_by_side_max = 4;

// The columns a cell's UTF-8 text takes ("—" is one).
std::size_t text_width(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// The byte offset of the first `columns` columns of UTF-8 text (never inside a character).
std::size_t byte_offset(std::string_view s, std::size_t columns) {
  std::size_t i = 0;
  for (std::size_t seen = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && seen++ == columns) break;
  }
  return i;
}

// A cell's text over lines of at most `width` columns, broken at spaces (a longer word is cut).
std::vector<std::string> wrap_cell(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  for (std::string word : split(text, " ", false)) {
    while (text_width(word) > width) {
      if (!line.empty()) lines.push_back(std::exchange(line, {}));
      const std::size_t cut = byte_offset(word, width);
      lines.push_back(word.substr(0, cut));
      word = word.substr(cut);
    }
    if (!line.empty() && text_width(line) + 1 + text_width(word) > width) lines.push_back(std::exchange(line, {}));
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::string pad(const std::string& s, std::size_t width) {
  const std::size_t w = text_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

// What one image's report says that another's may not: a finding as a line, a route's state, a gate.
std::string finding_line(const verdict::Finding& f) {
  return fmt::format("{:<10} {}{}", verdict::severity_name(f.severity), f.member.empty() ? "" : f.member + ": ",
                     verdict::summary(f));
}

// "only in cuda13.0" or "in cuda13.0, musa5.2; not in cuda13.3": where a line of the differences holds.
std::string where_text(const std::vector<bool>& in, const std::vector<Target>& images) {
  std::vector<std::string> yes, no;
  for (std::size_t k = 0; k < images.size(); ++k) (in[k] ? yes : no).push_back(images[k].image.name);
  if (yes.size() == 1) return "only in " + yes.front();
  return "in " + join(yes, ", ") + "; not in " + join(no, ", ");
}

// Lines present in some images' reports and not in all, grouped by where they hold, in first-seen order.
using Presence = std::vector<std::pair<std::vector<bool>, std::vector<std::string>>>;
Presence differences(const std::vector<std::vector<std::string>>& per_image) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<bool>> in;
  for (std::size_t k = 0; k < per_image.size(); ++k) {
    for (const auto& line : per_image[k]) {
      auto [it, added] = in.try_emplace(line, std::vector<bool>(per_image.size(), false));
      if (added) order.push_back(line);
      it->second[k] = true;
    }
  }
  Presence out;
  for (const auto& line : order) {
    const auto& mask = in.at(line);
    if (std::all_of(mask.begin(), mask.end(), [](bool b) { return b; })) continue;
    auto group = std::find_if(out.begin(), out.end(), [&](const auto& g) { return g.first == mask; });
    if (group == out.end()) group = out.insert(out.end(), {mask, {}});
    group->second.push_back(line);
  }
  return out;
}

// One wheel against a few images, a column each: the verdict, the reason, the toolkit, the driver the wheel
// needs there (from the verdict's driver need; "—" when it needs none) and the image's; then what changes
// between them: the findings, routes and gates present in one image and not another.
std::string side_by_side_text(const std::vector<run::Cell>& cells, const std::string& wheel,
                              const std::vector<Target>& images, bool color) {
  std::vector<verdict::Report> reports;
  for (const auto& c : cells) reports.push_back(c.report);
  const Paint p{color};
  const std::string none = "—";
  std::size_t width = 28;
  for (const auto& t : images) width = std::max(width, t.image.name.size() + 10);
  struct Row {
    std::string label;
    std::vector<std::string> cells;
  };
  std::vector<Row> rows;
  auto row = [&](std::string label, auto cell) {
    Row r{std::move(label), {}};
    for (std::size_t k = 0; k < images.size(); ++k) r.cells.push_back(cell(reports[k], images[k].image));
    rows.push_back(std::move(r));
  };
  using Report = verdict::Report;
  using Image = image::Image;
  row("status", [](const Report&, const Image& im) { return image::image_status_name(im.status); });
  row("verdict", [](const Report& r, const Image&) { return verdict::verdict_name(r.verdict); });
  std::size_t column = 0;
  row("reason", [&](const Report&, const Image&) {
    const run::Cell& c = cells[column++];
    return c.headline.empty() ? none : c.headline;
  });
  row("toolkit", [&](const Report&, const Image& im) {
    return im.toolkit ? image::toolkit_kind_name(im.toolkit->kind) + " " + im.toolkit->version.text() : none;
  });
  row("toolkit driver floor", [&](const Report&, const Image& im) {
    return im.toolkit && im.toolkit->driver_floor.set ? im.toolkit->driver_floor.text() : none;
  });
  row("driver needed", [&](const Report& r, const Image&) {
    return r.driver && !r.driver->version.empty() ? ">= " + r.driver->version : none;
  });
  row("  because",
      [&](const Report& r, const Image&) { return r.driver && !r.driver->because.empty() ? r.driver->because : none; });
  row("image's driver", [](const Report&, const Image& im) { return im.driver.text(); });
  row("driver satisfied", [&](const Report& r, const Image&) {
    if (!r.driver) return none;
    return r.driver->satisfied ? std::string(*r.driver->satisfied ? "yes" : "no") : std::string("unknown");
  });

  constexpr std::size_t k_label = 22;
  std::string out = "wheel: " + wheel + "\n\n" + std::string(k_label, ' ');
  for (const auto& t : images) {
    const std::string head = t.image.name + (t.image.status == image::ImageStatus::Planned ? " (planned)" : "");
    out += p.bold(head) + pad("", width - std::min(width, text_width(head))) + "  ";
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += "\n";
  for (const auto& r : rows) {
    std::vector<std::vector<std::string>> lines;
    std::size_t height = 1;
    for (const auto& c : r.cells) {
      lines.push_back(wrap_cell(c, width));
      height = std::max(height, lines.back().size());
    }
    for (std::size_t i = 0; i < height; ++i) {
      out += pad(i == 0 ? r.label : "", k_label);
      for (std::size_t k = 0; k < lines.size(); ++k) {
        const std::string cell = pad(i < lines[k].size() ? lines[k][i] : "", width);
        const auto v = reports[k].verdict;
        out += (r.label != "verdict"                  ? cell
                : v == verdict::Verdict::Compatible   ? p.green(cell)
                : v == verdict::Verdict::Incompatible ? p.red(cell)
                                                      : p.yellow(cell)) +
               "  ";
      }
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out += "\n";
    }
  }
  bool planned = false;
  for (const auto& t : images) {
    if (t.image.status != image::ImageStatus::Planned) continue;
    out += (std::exchange(planned, true) ? "" : "\n") + p.yellow(t.image.name + " is planned") +
           (t.image.planned_note.empty() ? "" : ": " + t.image.planned_note) + "\n";
  }

  out += "\n" + p.bold("What changes between them") + "\n";
  // The gates a report sets and its findings, as lines; those not in every image, grouped by where they hold.
  std::vector<std::vector<std::string>> lines(reports.size());
  for (std::size_t k = 0; k < reports.size(); ++k) {
    for (const auto& route : reports[k].routes) {
      if (route.available) continue;
      for (const auto& [var, value] : route.gates) lines[k].push_back(fmt::format("{:<10} {}={}", "gate", var, value));
    }
    for (const auto& f : reports[k].findings) lines[k].push_back(finding_line(f));
  }
  constexpr std::size_t k_most = 12;  // lines of one group; the rest are counted
  const Presence changes = differences(lines);
  for (const auto& [mask, group] : changes) {
    out += "  " + where_text(mask, images) + ":\n";
    for (std::size_t i = 0; i < group.size() && i < k_most; ++i) out += "    " + group[i] + "\n";
    if (group.size() > k_most) out += fmt::format("    ... and {} more\n", group.size() - k_most);
  }
  // Routes on in some images and off (or not there) in others: one line each.
  std::vector<std::string> route_names;
  for (const auto& r : reports) {
    for (const auto& route : r.routes) {
      if (std::find(route_names.begin(), route_names.end(), route.name) == route_names.end())
        route_names.push_back(route.name);
    }
  }
  bool routes_differ = false;
  for (const auto& name : route_names) {
    std::vector<std::pair<std::string, std::vector<std::string>>> states;  // state -> images, in image order
    std::string why;
    for (std::size_t k = 0; k < reports.size(); ++k) {
      const auto& routes = reports[k].routes;
      const auto it = std::find_if(routes.begin(), routes.end(), [&](const auto& r) { return r.name == name; });
      const std::string state = it == routes.end() ? "not there" : it->available ? "on" : "off";
      if (it != routes.end() && !it->available && why.empty() && !it->reasons.empty()) why = it->reasons.front();
      auto s = std::find_if(states.begin(), states.end(), [&](const auto& e) { return e.first == state; });
      if (s == states.end()) s = states.insert(states.end(), {state, {}});
      s->second.push_back(images[k].image.name);
    }
    if (states.size() < 2) continue;
    routes_differ = true;
    std::vector<std::string> parts;
    for (const auto& [state, where] : states) parts.push_back(state + " in " + join(where, ", "));
    out += "  route " + name + ": " + join(parts, "; ") + (why.empty() ? "" : " (" + why + ")") + "\n";
  }
  if (changes.empty() && !routes_differ) out += "  nothing: the same findings, routes and gates in each\n";
  out += "\nDetails of one image: wheelcheck WHEEL --image NAME (or --json for all of them).\n";
  return out;
}

}  // namespace

// The gates of the reports, in the chosen format (a wheel that fails its own integrity is named in their
// comments, annotations or JSON by gates::merge).
void print_gates(const CheckArgs& a, const std::string& format, const gates::Result& g, int exit_code) {
  if (format == "json") {
    print_json(gates::to_json(g));
  } else if (format == "sh") {
    print_out(gates::to_sh(g));
  } else {
    const std::string annotations = gates::github_annotations(g);
    const std::string env_file = !a.env_file.empty() ? a.env_file : getenv_or("GITHUB_ENV", "");
    if (env_file.empty()) {
      print_out(gates::github_env(g));  // for `>> "$GITHUB_ENV"`
      std::fputs(annotations.c_str(), stderr);
    } else {
      append_to_file(env_file, gates::github_env(g));
      print_out(annotations);  // the runner reads workflow commands on stdout
    }
    if (!a.summary.empty()) append_to_file(a.summary, gates::markdown_summary(g));
    const std::string outputs = !a.github_output.empty() ? a.github_output : getenv_or("GITHUB_OUTPUT", "");
    if (!outputs.empty()) {
      nlohmann::ordered_json gates = nlohmann::ordered_json::object();
      std::vector<std::pair<std::string, std::string>> lines = {
          {"verdict", g.error.empty() ? verdict::verdict_name(g.verdict) : "error"},
          {"exit-code", std::to_string(exit_code)}};
      for (const auto& gate : g.gates) gates[gate.variable] = gate.value;
      lines.emplace_back("gates", gates.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
      for (const auto& gate : g.gates) lines.emplace_back(gate.variable, gate.value);
      append_to_file(outputs, github_output_lines(lines));
    }
  }
}

namespace {

// Flags that cannot go together are refused, never silently ignored. Returns the output format.
std::string output_format(const CheckArgs& a) {
  std::string format = a.format.empty() ? (a.gates ? "sh" : "text") : a.format;
  if (a.json) {
    if (!a.format.empty() && a.format != "json") throw usage_error("--json and --format " + a.format + " conflict");
    format = "json";
  }
  if (a.gates && format == "text") throw usage_error("gates --format text: gates are sh, json, github, sarif or junit");
  if ((!a.summary.empty() || !a.env_file.empty() || !a.github_output.empty()) && format != "github") {
    throw usage_error(std::string(!a.summary.empty()    ? "--summary"
                                  : !a.env_file.empty() ? "--env-file"
                                                        : "--github-output") +
                      " needs --format github");
  }
  parse_outputs(a.outputs, a.gates ? output::k_gates : output::k_check);
  if (a.no_cache && !a.cache_dir.empty()) throw usage_error("--no-cache and --cache-dir conflict");
  return format;
}

}  // namespace

void add_check_options(CLI::App& c, CheckArgs& a, bool image_required) {
  auto* image = c.add_option("--image,-i", a.images,
                             "A db image name (`wheelcheck images`), a packaging target (manylinux_2_28_aarch64, "
                             "manylinux2014), a pattern ('manylinux_2_*_aarch64'), a description file, a root folder "
                             "(probed on the fly), or all: the db's images. Repeatable, or a comma list (a,b; an "
                             "existing path is never split): one wheel against up to 4 images prints them side by "
                             "side, more make a matrix");
  if (image_required) image->required();
  c.add_option("--with", a.with,
               "Another wheel installed beside it in site-packages, replacing the image's distribution of the same "
               "name as pip does (repeatable); a lock file (pylock.toml, a pip report, requirements.txt) installs "
               "its whole set")
      ->check(wheel_file_or_url());
  c.add_option("--verify", a.verify, k_verify_help)->check(CLI::IsMember({"auto", "full", "headers"}));
  c.add_option("--assume", a.assume, k_assume_help);
  c.add_option("--image-env", a.image_env,
               "For an --image that is a root folder: its environment, NAME=VALUE (repeatable; "
               "LD_LIBRARY_PATH counts for the loader)");
  c.add_flag("--json", a.json,
             a.gates ? "The same as --format json (schema: docs/gates.schema.json)"
                     : "JSON for machines (schema: docs/verdict.schema.json); an array for several checks");
  // The formats, their help and what -o writes: the one table (include/wheelcheck/format.hpp).
  const output::Commands command = a.gates ? output::k_gates : output::k_check;
  c.add_option("--format", a.format, output::format_help(command))->check(CLI::IsMember(output::printed_by(command)));
  c.add_option("--output,-o", a.outputs,
               "FORMAT=FILE: also write " + join(output::written_by(command), ", ") +
                   " to FILE, whatever --format prints (repeatable; e.g. -o sarif=wheelcheck.sarif -o junit=junit.xml)")
      ->allow_extra_args(false);
  if (a.gates) {
    c.add_flag("--export-on", a.gate_options.export_on,
               "Also export the on value of every gate whose route is on (1 for a gate whose off value is 0, ...), "
               "for a setup script under `set -u`");
    c.add_flag("--conditions-off", a.gate_options.conditions_off,
               "Turn off a route that holds only under a condition an unknown fact leaves open (a driver floor, "
               "exports the db does not know): a cautious CI's choice");
  }
  if (!a.gates) {
    c.add_flag("--exit-zero", a.exit_zero,
               "Exit 0 whatever the verdicts, for a job that only wants the report (2 and 70 still mean the run "
               "itself failed)");
  }
  c.add_option("--github-output", a.github_output,
               "github format: append the step outputs (verdict, exit-code, gates as JSON, each gate) to this file "
               "(default: $GITHUB_OUTPUT)");
  add_settings_options(c, a.config, a.no_config);
  c.add_option("--rules", a.rules,
               "Routes and gates: a rule set of db/rules (flagos), a rules file, or none (default: the rule set whose "
               "applies_to names the wheel)");
  c.add_option("--summary", a.summary,
               "github format: append a Markdown table to this file (e.g. $GITHUB_STEP_SUMMARY)");
  c.add_option("--env-file", a.env_file, "github format: append VAR=value lines to this file (default: $GITHUB_ENV)");
  c.add_option("--db", a.db, "The db folder (default: $WHEELCHECK_DB, else the one installed with wheelcheck)");
  add_cache_options(c, a.no_cache, a.cache_dir, a.cache_max_size);
  c.add_flag("-q,--quiet", a.quiet, "No progress on stderr");
  add_limit_options(c, a.limits, true);
}

// A cell's JSON: the verdict document, and whether the image is one the wheel is for at all.
nlohmann::ordered_json cell_json(const run::Cell& c) {
  auto j = verdict::to_json(c.report);
  j["targeted"] = c.targeted;
  j["not_targeted"] = c.not_targeted;
  j["headline"] = c.headline;
  return j;
}

// A cell as text: a wheel for another machine, Python or toolkit is one line; else the whole report.
std::string cell_text(const run::Cell& c, bool color) {
  if (c.targeted) return verdict::render_text(c.report, color);
  const Paint p{color};
  return fmt::format("{} on {}: {} (not for this image: {}); exit {}\n", c.report.wheel, c.image, p.red("INCOMPATIBLE"),
                     c.not_targeted, verdict::exit_code(c.report.verdict));
}

// What the wheels beside a checked one (--with) add to its answer: their routes that are off, and the
// environment's verdict when it is not the wheel's own.
std::string beside_text(const std::vector<run::Cell>& beside, verdict::Verdict overall, int rc) {
  std::string out;
  for (const auto& c : beside) {
    for (const auto& line : run::routes_off(c)) {
      out += fmt::format("beside it (--with) {}: {}\n", c.report.wheel, line);
    }
  }
  if (!out.empty()) {
    out = "\n" + out +
          fmt::format("The environment (the wheel and those beside it): {}; exit {}\n", verdict::verdict_name(overall),
                      rc);
  }
  return out;
}

namespace {

int check_and_print(const CheckArgs& a, const std::string& format, bool gates_output) {
  refuse_misnamed_locks(a);
  if (names_a_lock(a)) return check_environment(a, format, gates_output);
  const bool json = format == "json";
  if (a.wheels.empty()) throw usage_error("no wheel given (wheelcheck WHEEL --image NAME; see --help)");
  if (a.images.empty())
    throw usage_error(
        "no image given: --image NAME (`wheelcheck images` lists them), a file, a root folder, or all (or images = "
        "[...] in wheelcheck.toml)");
  image::Db db(image::Db::locate(a.db));
  const std::optional<ProfileCache> cache = open_cache(a.no_cache, a.cache_dir, a.cache_max_size);
  const ProfileCache* cache_ptr = cache ? &*cache : nullptr;
  std::unique_ptr<net::Client> client;
  const bool progress = show_progress(a.quiet);
  // Each wheel is read on its own: one that cannot be read is reported (an entry of the JSON that
  // carries its error) and the others are still checked. A --with wheel is part of every check.
  std::vector<WheelProfile> profiles, with;
  std::vector<std::optional<Error>> failures;
  for (const auto& w : a.wheels) {
    try {
      profiles.push_back(inspect_any(w, {}, a.verify, cache_ptr, client, progress, a.limits).profile);
      failures.emplace_back();
    } catch (const Error& e) {
      // Gates cannot be given for a wheel that was not read: the whole output fails closed.
      if (e.kind() == ErrorKind::Internal || e.kind() == ErrorKind::Usage || gates_output) throw;
      std::fprintf(stderr, "wheelcheck: error: %s\n", e.what());
      profiles.emplace_back();
      failures.emplace_back(e);
    }
  }
  for (const auto& w : a.with)
    with.push_back(inspect_any(w, {}, a.verify, cache_ptr, client, progress, a.limits).profile);
  ImageRequest request;
  request.env = parse_env(a.image_env, "--image-env");
  request.search_dirs = search_dirs(profiles, with);  // a wheel that could not be read is an empty profile
  request.needed_paths = needed_paths(profiles, with);
  auto images = resolve_images(a.images, db, request);
  apply_assumptions(images, a.assume);
  if (gates_output && images.size() != 1) throw usage_error("gates need exactly one --image");
  const run::RuleChoice rules(a.rules, db.dir() + "/rules");
  const run::Context context{{}, &rules, &db, &a.accepted};
  const run::Published published = published_of(a, cache_ptr, progress);
  // The one run (run::judge): on each image, each wheel named alone with the --with wheels beside it (a
  // matrix of independent answers); each --with wheel judged on its own too (its routes that are off turn
  // their gates off and degrade the environment: FlagCX's libflagcx.so, which FlagTree's TLE loader loads).
  std::vector<run::Package> packages;
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    if (!failures[i]) packages.push_back({&profiles[i], "", run::Role::Checked});
  }
  for (const auto& w : with) packages.push_back({&w, "", run::Role::Beside});
  std::vector<run::Environment> envs;
  for (auto& t : images) envs.push_back(run::judge(packages, t, context, run::Installed::Alone, &published));

  std::vector<run::Cell> cells;               // wheel-major; none for a wheel that could not be read
  std::vector<run::Cell> beside;              // image-major
  std::vector<std::string> names, integrity;  // integrity: each problem of each wheel, once
  verdict::Verdict overall = verdict::Verdict::Compatible;
  for (std::size_t i = 0; i < packages.size(); ++i) {
    if (packages[i].role != run::Role::Checked) continue;
    names.push_back(packages[i].wheel->filename.filename);
    std::vector<const run::Cell*> mine;
    const std::size_t first = cells.size();
    for (const auto& env : envs) cells.push_back(*env.cell_of(i));
    for (std::size_t k = first; k < cells.size(); ++k) mine.push_back(&cells[k]);
    // An image the wheel is not for does not make a run over many images fail (--image all).
    overall = verdict::worst(overall, run::overall(mine));
  }
  for (const auto& env : envs) {
    for (std::size_t c = 0; c < env.cells.size(); ++c) {
      if (env.roles[c] == run::Role::Beside) beside.push_back(env.cells[c]);
    }
    // A wheel beside them whose routes are off degrades the environment.
    if (env.verdict == verdict::Verdict::Degraded) overall = verdict::worst(overall, env.verdict);
    for (const auto& line : env.problems) {
      if (std::find(integrity.begin(), integrity.end(), line) == integrity.end()) integrity.push_back(line);
    }
  }
  for (const auto& w : integrity) std::fprintf(stderr, "wheelcheck: error: %s\n", w.c_str());
  const bool bad_input =
      !integrity.empty() || std::any_of(failures.begin(), failures.end(), [](const auto& f) { return f.has_value(); });
  // The same exit code in every format: check's is the verdict's (or 2), gates' 0 once it could evaluate.
  const int verdict_rc = bad_input ? k_exit_bad_input : verdict::exit_code(overall);
  const int rc = a.gates ? (bad_input ? k_exit_bad_input : k_exit_ok) : exit_with(a, verdict_rc);
  std::vector<ci::Case> cases;
  {
    std::size_t next = 0;
    for (std::size_t i = 0; i < profiles.size(); ++i) {
      const ci::Location where{a.wheels[i], 0};
      for (const auto& t : images) {
        if (failures[i]) {
          const std::string name = a.wheels[i].substr(a.wheels[i].find_last_of('/') + 1);
          cases.push_back(ci::failed_case(t.image.name, name, where, std::nullopt, failures[i]->what()));
        } else {
          cases.push_back(ci::case_of(cells[next++], where));
        }
      }
    }
  }
  // Gates never fail open: a wheel that fails its own integrity gives every gate at its off value.
  auto gates_of = [&] {
    std::vector<const run::Environment*> all;
    for (const auto& env : envs) all.push_back(&env);
    gates::Result g = run::gates_of(all, fail_closed_sets(a.rules, a.db), a.gate_options);
    g.verdict = overall;
    return g;
  };
  auto json_doc = [&] {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    std::size_t next = 0;
    for (std::size_t i = 0; i < profiles.size(); ++i) {
      if (failures[i]) {
        arr.push_back(error_entry(a.wheels[i], *failures[i]));
        continue;
      }
      for (std::size_t k = 0; k < images.size(); ++k) arr.push_back(cell_json(cells[next++]));
    }
    return arr.size() == 1 ? arr.front() : arr;
  };
  write_outputs(a, format, rc, cases, json_doc, [&] { return gates::markdown_summary(gates_of()); });
  if (format == "sarif" || format == "junit") return rc;
  if (gates_output) {
    print_gates(a, format, gates_of(), rc);
    return rc;
  }
  if (json) {
    print_json(json_doc());
  } else if (cells.size() == 1) {
    print_out(wrap_to_terminal(cell_text(cells.front(), use_color(stdout)) + beside_text(beside, overall, rc)));
  } else if (names.size() == 1 && images.size() <= k_side_by_side_max) {
    print_out(side_by_side_text(cells, names.front(), images, use_color(stdout)));
  } else if (!cells.empty()) {
    print_out(matrix_text(cells, names, images, use_color(stdout)));
  }
  return rc;
}

}  // namespace

std::vector<rules::RuleSet> fail_closed_sets(const std::string& rules_arg, const std::string& db_arg) {
  try {
    if (rules_arg == "none") return {};
    if (rules_arg.find('/') != std::string::npos || rules_arg.ends_with(".json")) return {rules::load(rules_arg)};
    auto sets = rules::load_all(image::Db(image::Db::locate(db_arg)).dir() + "/rules");
    if (!rules_arg.empty()) {
      std::erase_if(sets, [&](const rules::RuleSet& rs) { return rs.name != rules_arg; });
    }
    return sets;
  } catch (const Error&) {
    return {};
  }
}

namespace {

void print_fail_closed(const CheckArgs& a, const std::string& message) {
  const std::string format = a.json || a.format == "json" ? "json" : a.format == "github" ? "github" : "sh";
  gates::Result g = gates::fail_closed(fail_closed_sets(a.rules, a.db), message);
  if (a.images.size() == 1) g.image = a.images.front();
  CheckArgs b = a;
  try {
    print_gates(b, format, g, k_exit_bad_input);
  } catch (const Error& e) {
    // $GITHUB_ENV cannot be written: the gates go to stdout, where the log shows them.
    std::fprintf(stderr, "wheelcheck: error: %s\n", e.what());
    print_out(gates::github_env(g));
  }
}

}  // namespace

int run_check(const CheckArgs& given) {
  CheckArgs a = given;
  const bool gates_like = a.gates || a.format == "sh" || a.format == "github";
  if (!gates_like) {
    try {
      apply_settings(load_settings(a.config, a.no_config), a);
      const std::string format = output_format(a);
      return check_and_print(a, format, a.format == "sh" || a.format == "github");
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Internal && (a.format == "sarif" || a.format == "junit" || !a.outputs.empty()))
        print_failed_run(a, a.format, e);
      throw;
    }
  }
  // Gates fail closed: whatever stops the check (a wheel that cannot be read, an unknown image, a bad
  // option, a settings file with errors), every gate is printed at its off value, the verdict is "error"
  // and the eval fails.
  try {
    apply_settings(load_settings(a.config, a.no_config), a);
    const std::string format = output_format(a);
    return check_and_print(a, format, true);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Internal) throw;
    std::fprintf(stderr, "wheelcheck: error: %s\n", e.what());
    if (a.format == "sarif" || a.format == "junit") {
      print_failed_run(a, a.format, e);  // a document for the upload step; no eval reads it
    } else {
      print_fail_closed(a, e.what());
    }
    return exit_code_of(e);
  }
}

int gates_parse_failure(const std::vector<std::string>& args, const std::string& message) {
  CheckArgs a;
  a.gates = true;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (w == "--") break;
    if (w == "--json") a.json = true;
    for (auto [flag, slot] : {std::pair<const char*, std::string*>{"--format", &a.format},
                              {"--rules", &a.rules},
                              {"--db", &a.db},
                              {"--env-file", &a.env_file},
                              {"--summary", &a.summary},
                              {"--image", nullptr},
                              {"-i", nullptr}}) {
      const std::string f(flag);
      std::string value;
      if (w == f && i + 1 < args.size()) {
        value = args[i + 1];
      } else if (w.rfind(f + "=", 0) == 0) {
        value = w.substr(f.size() + 1);
      } else {
        continue;
      }
      if (slot != nullptr) {
        *slot = value;
      } else {
        a.images.push_back(value);
      }
    }
  }
  if (a.format != "github" && a.format != "json") a.format = a.json ? "json" : "sh";
  print_fail_closed(a, message);
  return k_exit_bad_input;
}

Command add_gates(CLI::App& app) {
  auto a = std::make_shared<CheckArgs>();
  a->gates = true;
  auto* c = app.add_subcommand("gates", "The variables a setup script sets to turn off what cannot work in the image");
  // Not checked by the parser: a wheel that is not there is that wheel's error (each entry of a batch
  // stands on its own; gates fail closed).
  c->add_option("wheels", a->wheels,
                "Wheel files (.whl) or URLs, or lock files (pylock.toml, a pip report, requirements.txt): their "
                "gates are merged")
      ->required();
  add_check_options(*c, *a, false);  // --image may come from the settings file
  c->footer(R"G(Examples:
  eval "$(wheelcheck gates flagtree.whl flag_gems_cpp.whl --with flagcx.whl --image cuda13.0)"
  eval "$(wheelcheck gates pylock.toml --image cuda13.0)"     # the gates of a whole locked environment
  wheelcheck gates *.whl --image cuda13.0 --format github --summary "$GITHUB_STEP_SUMMARY"
  wheelcheck gates *.whl --image cuda13.0 --format json | jq .gates

Each wheel is checked as `wheelcheck WHEEL --image I` does; the routes of its rule set (db/rules, docs/rules.md)
that cannot work give their gates, merged over the wheels. Formats:
  sh      export VAR='value' lines safe to eval, WHEELCHECK_VERDICT, a comment per disabled route (default)
  github  VAR=value lines to --env-file or $GITHUB_ENV (else stdout), ::error::/::warning:: annotations,
          and a Markdown table appended to --summary FILE
  json    the verdicts, every route with its reasons, and the merged gates
Exit 0 whenever the wheels could be evaluated, whatever the verdict (WHEELCHECK_VERDICT says it).
Gates fail closed: when they cannot evaluate or vouch for the wheels (a wheel that is not there or cannot
be read, one that fails its own RECORD or hash, a lock entry whose hash is not the lock's, an unknown
image, a mistyped option, a rule file with errors), every gate of the rule set is printed at its off value,
WHEELCHECK_VERDICT='error', and a last line `(exit 2)` makes the eval itself return 2 (under `set -e` the
script stops); github writes them to $GITHUB_ENV and fails the step. Exit 2 then.
What gates accept: wheels (files or URLs) and lock files (pylock.toml, a pip report, requirements.txt), with
--with wheels installed beside them; each wheel is judged on its own (its own members), the others only
provide, and a --with wheel's routes that are off turn their gates off too.)G");
  return {c, [a] { return run_check(*a); }};
}

Command add_check(CLI::App& app) {
  auto a = std::make_shared<CheckArgs>();
  auto* c =
      app.add_subcommand("check", "Will this wheel's native code load and work in that image? (the default command)");
  c->add_option("wheels", a->wheels,
                "Wheel files (.whl) or http(s) URLs, or lock files (pylock.toml, a pip report .json, a requirements "
                ".txt): an environment, checked as installed")
      ->required();
  add_check_options(*c, *a, false);  // --image may come from the settings file
  c->footer(std::string(k_check_help) + "\n" + k_exit_codes);
  return {c, [a] { return run_check(*a); }};
}

}  // namespace wheelcheck::cli
