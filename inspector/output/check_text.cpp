// The check's text renderings (include/wheelcheck/check_text.hpp): one cell, what the wheels beside it
// add, side by side, and the matrix.
#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "wheelcheck/check_text.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::output {

using Target = run::Target;

// A cell as text: a wheel for another machine, Python or toolkit is one line; else the whole report.
std::string cell_text(const run::Cell& c, bool color) {
  if (c.targeted) return verdict::render_text(c.report, color);
  const Paint p{color};
  // The wheel's own integrity first: a damaged wheel is exit 2 (bad input) wherever pip would put it.
  std::string out = fmt::format("{} on {}: {} ({}: pip would not install it here); exit {}\n", c.report.wheel, c.image,
                                p.red("NOT TARGETED"), c.not_targeted, verdict::exit_code(c.report));
  for (const auto& line : verdict::integrity_problems(c.report)) out += "  " + p.red("x") + " " + line + "\n";
  return out;
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

}  // namespace

// One row per image, one column per wheel ([1], [2], ... named below); with one wheel, the reason in words
// (run::Cell::headline): the route that is off, the finding that decided, or why the image is not the
// wheel's at all.
std::string matrix_text(const std::vector<run::Cell>& cells, const std::vector<std::string>& wheels,
                        const std::vector<Target>& images, bool color, std::size_t columns) {
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
  const std::size_t reason_width = std::max<std::size_t>(40, columns - std::min(columns, width + 17));
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

}  // namespace wheelcheck::output
