// What the two renderings of a scan report share (inspector/output/scan_markdown.cpp,
// inspector/output/scan_html.cpp), built from the typed report (include/wheelcheck/scan.hpp): a cell per wheel
// and image, the verdict styles, the columns and rows, the outcome in words, gates as shell lines, the pin grid.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelcheck/gates.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::scan::view {

enum class CellKind { Compatible, Degraded, Incompatible, Unknown, NotTargeted, Error, Missing };

struct Style {
  const char* css;
  const char* emoji;  // Markdown
  const char* glyph;  // HTML, beside the word (the word itself is always shown)
  const char* word;
  const char* meaning;
};

inline Style style(CellKind k) {
  switch (k) {
    case CellKind::Compatible: return {"v-compatible", "✅", "✓", "compatible", "every member loads"};
    case CellKind::Degraded:
      return {"v-degraded", "🟡", "◐", "degraded", "only optional routes fail; gates turn them off"};
    case CellKind::Incompatible: return {"v-incompatible", "❌", "✗", "incompatible", "a member will not load"};
    case CellKind::Unknown:
      return {"v-unknown", "❔", "?", "unknown", "no error found, but it rests on a fact wheelcheck cannot know"};
    case CellKind::NotTargeted:
      return {"v-not-targeted", "➖", "–", "not targeted", "the wheel's tags do not target this image"};
    case CellKind::Error: return {"v-error", "⚠️", "!", "error", "the wheel could not be fetched or read"};
    case CellKind::Missing: return {"v-missing", "▫️", "·", "no result", "the report has no result for this image"};
  }
  return {"v-unknown", "❔", "?", "unknown", ""};
}

inline CellKind kind_of(verdict::Verdict v) {
  switch (v) {
    case verdict::Verdict::Compatible: return CellKind::Compatible;
    case verdict::Verdict::Degraded: return CellKind::Degraded;
    case verdict::Verdict::Incompatible: return CellKind::Incompatible;
    case verdict::Verdict::Unknown: return CellKind::Unknown;
  }
  return CellKind::Unknown;
}

// A wheel on an image, as a matrix cell.
struct Cell {
  CellKind kind = CellKind::Missing;
  const Checked* result = nullptr;  // set for a verdict or not targeted
  const char* word() const { return style(kind).word; }
};

inline bool has_error(const Wheel& w) {
  return w.error && !w.error->empty();
}

inline Cell cell_for(const Wheel& w, const std::string& image) {
  Cell c;
  if (has_error(w)) {
    c.kind = CellKind::Error;
    return c;
  }
  for (const auto& r : w.results) {
    if (r.cell.image == image) {
      c.result = &r;
      break;
    }
  }
  if (c.result == nullptr) {
    c.kind = CellKind::Missing;
  } else if (!c.result->cell.targeted) {
    c.kind = CellKind::NotTargeted;
  } else {
    c.kind = kind_of(c.result->cell.report.verdict);
  }
  return c;
}

// Newlines, tabs and other control characters become single spaces (one table row, one list item).
inline std::string one_line(std::string_view s) {
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      if (out.empty() || out.back() != ' ') out += ' ';
    } else {
      out += ch;
    }
  }
  return out;
}

inline bool needs_detail(CellKind k) {
  return k == CellKind::Degraded || k == CellKind::Incompatible || k == CellKind::Unknown;
}

inline void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

// The columns: the report's images in order, then any image a result names that the list lacks.
inline std::vector<std::string> image_columns(const Report& report) {
  std::vector<std::string> images;
  for (const auto& s : report.images)
    if (!s.empty()) add_unique(images, s);
  report.each_wheel([&](const Wheel& w) {
    for (const auto& r : w.results)
      if (!r.cell.image.empty()) add_unique(images, r.cell.image);
  });
  return images;
}

// New wheels first, then the rest, each group in report order (two passes: a stored report is read, not held).
inline void each_ordered_wheel(const Report& report, const std::function<void(const Wheel&)>& fn) {
  report.each_wheel([&](const Wheel& w) {
    if (w.is_new) fn(w);
  });
  report.each_wheel([&](const Wheel& w) {
    if (!w.is_new) fn(w);
  });
}

inline std::string wheel_name(const Wheel& w) {
  if (!w.filename.empty()) return w.filename;
  if (!w.url.empty()) return w.url;
  return "(unnamed wheel)";
}

// The exit outcome in words; *emoji (when asked for) gets the Markdown's symbol for it.
inline std::string outcome_words(const Report& report, const char** emoji) {
  const int code = report.exit_code();
  const char* symbol = "❔";
  std::string words;
  switch (code) {
    case 0: symbol = "✅", words = "nothing new is incompatible"; break;
    case 1: symbol = "❌", words = "a new wheel is incompatible with an image its tags target"; break;
    case 2: symbol = "⛔", words = "bad input or an unreadable index"; break;
    default: words = "outcome unknown (exit code " + std::to_string(code) + ")";
  }
  if (emoji != nullptr) *emoji = symbol;
  return words;
}

inline bool shell_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  });
}

// `export NAME='value'` lines; a name that is not a shell variable becomes a comment, never code.
inline std::vector<std::string> gate_lines(const Gates& gates, bool with_export) {
  std::vector<std::string> out;
  for (const auto& [name, raw] : gates) {
    const std::string value = gates::shell_single_quote(raw);
    if (shell_name(name))
      out.push_back((with_export ? "export " : "") + name + "=" + value);
    else
      out.push_back("# not a shell variable name: " + gates::shell_single_quote(name) + "=" + value);
  }
  return out;
}

inline std::string shard_text(const Report& report) {
  if (report.shard.merged) return "merged from " + std::to_string(report.shard.count) + " shards";
  return "shard " + std::to_string(report.shard.index) + " of " + std::to_string(report.shard.count);
}

// The counts in the order both renderings show them, with their words.
struct Count {
  std::uint64_t n;
  const char* words;
};
inline std::vector<Count> counts_of(const Summary& s) {
  return {{s.wheels_seen, "wheels seen"}, {s.fresh, "new"}, {s.checked, "checked"}, {s.errors, "errors"}};
}
inline std::vector<Count> verdict_counts_of(const Summary& s) {
  return {{s.compatible, "compatible"},
          {s.degraded, "degraded"},
          {s.incompatible, "incompatible"},
          {s.unknown, "unknown"},
          {s.not_targeted, "not targeted"}};
}

// Pins: rows are images, columns projects (the report's lists first, then any the pins add).
struct PinGrid {
  std::vector<std::string> images;
  std::vector<std::string> projects;
  std::vector<Pin> pins;  // every pin when there are at most k_inline_pins (held), else none
  std::size_t count = 0;  // the report's pins
  bool held() const { return count <= pins.size(); }
};

// How large a report still shows everything on its first page (the matrix, the pin grid); a larger one leads with
// what broke and each project's row, and puts each project's matrix on a page of its own (report.html) or leaves it
// to report.json and report.html (report.md).
inline constexpr std::uint64_t k_inline_wheels = 300;
inline constexpr std::uint64_t k_inline_pins = 400;
inline bool inline_matrix(const Report& report) {
  return report.wheel_count() <= k_inline_wheels;
}

inline PinGrid pin_grid(const Report& report) {
  PinGrid g;
  // A grid of at most k_inline_pins pins (more would not be read as a grid): those are held, a larger report's are
  // counted and read again where each is shown.
  report.each_pin([&](const Pin& p) {
    if (++g.count <= k_inline_pins) g.pins.push_back(p);
  });
  if (!g.held()) g.pins.clear();
  for (const auto& p : g.pins) {
    if (p.image.empty() || p.project.empty()) continue;  // cannot be placed in the grid
    add_unique(g.images, p.image);
    add_unique(g.projects, p.project);
  }
  // Keep the report's orders for the ones that appear.
  auto reorder = [](std::vector<std::string>& v, const std::vector<std::string>& order) {
    std::vector<std::string> out;
    for (const auto& s : order)
      if (std::find(v.begin(), v.end(), s) != v.end()) add_unique(out, s);
    for (const auto& s : v) add_unique(out, s);
    v = std::move(out);
  };
  reorder(g.images, image_columns(report));
  reorder(g.projects, report.projects);
  return g;
}

inline const Pin* find_pin(const PinGrid& grid, const std::string& image, const std::string& project) {
  for (const auto& p : grid.pins)
    if (p.image == image && p.project == project) return &p;
  return nullptr;
}

// A project's row on the first page: its new wheels by image and kind, the first few that broke, its picks.
struct ProjectRow {
  std::string project;
  std::uint64_t wheels = 0, errors = 0;
  std::map<std::string, std::map<CellKind, std::uint64_t>> cells;  // image -> kind -> count (targeted or not)
  std::vector<std::string> broke;  // "FILE on IMAGE: headline", "FILE: error" (the first k_broke_shown)
  std::uint64_t broke_total = 0;   // counted incompatible cells and errors
  struct Pick {
    bool usable = false;  // nothing usable when false
    std::string version;
    verdict::Verdict verdict = verdict::Verdict::Compatible;
  };
  std::map<std::string, Pick> picks;  // image -> its pin
};
inline constexpr std::size_t k_broke_shown = 5;

// Every project of the report in the report's order (the asked ones, then any a wheel names), from one pass over the
// wheels and one over the pins.
inline std::vector<ProjectRow> project_rows(const Report& report) {
  std::vector<ProjectRow> rows;
  std::map<std::string, std::size_t> at;
  const auto row = [&](const std::string& project) -> ProjectRow& {
    auto [it, added] = at.try_emplace(project, rows.size());
    if (added) rows.push_back(ProjectRow{project, 0, 0, {}, {}, 0, {}});
    return rows[it->second];
  };
  for (const auto& p : report.projects) row(p);
  report.each_wheel([&](const Wheel& w) {
    ProjectRow& r = row(w.project);
    ++r.wheels;
    if (has_error(w)) {
      ++r.errors;
      if (r.broke.size() < k_broke_shown) r.broke.push_back(wheel_name(w) + ": " + one_line(*w.error));
      ++r.broke_total;
      return;
    }
    for (const auto& c : w.results) {
      const CellKind kind = c.cell.targeted ? kind_of(c.cell.report.verdict) : CellKind::NotTargeted;
      ++r.cells[c.cell.image][kind];
      if (kind == CellKind::Incompatible && c.counted) {
        if (r.broke.size() < k_broke_shown)
          r.broke.push_back(wheel_name(w) + " on " + c.cell.image + ": " + one_line(c.cell.headline));
        ++r.broke_total;
      }
    }
  });
  report.each_pin([&](const Pin& p) {
    if (p.project.empty()) return;
    ProjectRow::Pick& pick = row(p.project).picks[p.image];
    pick.usable = p.pick.has_value();
    if (p.pick) {
      pick.version = p.pick->version;
      pick.verdict = p.pick->verdict;
    }
  });
  return rows;
}

// The page of a project's matrix (report.html of a large report): "projects/NAME.html", NAME its letters and
// digits (PEP 503's normalized name, anything else '_') and its place among the report's projects, so that two
// names never share a page and none leaves the folder.
inline std::string project_page(const std::string& project, std::size_t place) {
  std::string name;
  for (const char ch : project) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) != 0)
      name += static_cast<char>(std::tolower(c));
    else if ((ch == '-' || ch == '_' || ch == '.') && !name.empty() && name.back() != '-')
      name += '-';
    else if (ch != '-' && ch != '_' && ch != '.')
      name += '_';
    if (name.size() >= 64) break;
  }
  return "projects/" + std::to_string(place + 1) + "-" + (name.empty() ? "project" : name) + ".html";
}

}  // namespace wheelcheck::scan::view
