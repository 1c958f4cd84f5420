// What the two renderings of a scan report share (inspector/output/scan_markdown.cpp,
// inspector/output/scan_html.cpp), built from the typed report (include/wheelcheck/scan.hpp): a cell per wheel
// and image, the verdict styles, the columns and rows, the outcome in words, gates as shell lines, the pin grid.
#pragma once

#include <algorithm>
#include <cstdint>
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
  for (const auto& w : report.wheels)
    for (const auto& r : w.results)
      if (!r.cell.image.empty()) add_unique(images, r.cell.image);
  return images;
}

// New wheels first, then the rest, each group in report order.
inline std::vector<const Wheel*> ordered_wheels(const Report& report) {
  std::vector<const Wheel*> out;
  for (const auto& w : report.wheels)
    if (w.is_new) out.push_back(&w);
  for (const auto& w : report.wheels)
    if (!w.is_new) out.push_back(&w);
  return out;
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
};

inline PinGrid pin_grid(const Report& report) {
  PinGrid g;
  for (const auto& p : report.pins) {
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

inline const Pin* find_pin(const Report& report, const std::string& image, const std::string& project) {
  for (const auto& p : report.pins)
    if (p.image == image && p.project == project) return &p;
  return nullptr;
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

}  // namespace wheelcheck::scan::view
