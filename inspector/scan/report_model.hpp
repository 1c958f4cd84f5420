// The model the two renderings of a scan report share (report_markdown.cpp, report_html.cpp): tolerant
// readers of the report (a missing or mistyped field reads as absent, never throws), a cell per wheel and
// image, the verdict styles, the pin grid.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/gates.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::scan::detail {

using Json = nlohmann::ordered_json;

// ---- Tolerant readers -------------------------------------------------------------------------

inline const Json& null_json() {
  static const Json k_null;
  return k_null;
}

inline const Json& empty_array() {
  static const Json k_empty = Json::array();
  return k_empty;
}

inline const Json& field(const Json& j, const char* key) {
  if (!j.is_object()) return null_json();
  auto it = j.find(key);
  return it == j.end() ? null_json() : *it;
}

// A value as text: strings as they are, numbers and booleans as JSON writes them, null as "".
inline std::string text(const Json& v) {
  if (v.is_string()) return v.get_ref<const std::string&>();
  if (v.is_null()) return {};
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

inline std::string str(const Json& j, const char* key) {
  return text(field(j, key));
}

inline const Json& list(const Json& j, const char* key) {
  const Json& v = field(j, key);
  return v.is_array() ? v : empty_array();
}

inline bool is_true(const Json& j, const char* key) {
  const Json& v = field(j, key);
  return v.is_boolean() && v.get<bool>();
}

// The strings of an array field, each element as text.
inline std::vector<std::string> strings(const Json& j, const char* key) {
  std::vector<std::string> out;
  for (const auto& v : list(j, key)) out.push_back(text(v));
  return out;
}

inline void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

// ---- The model the two renderings share ---------------------------------------------------------

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

struct Cell {
  CellKind kind = CellKind::Missing;
  std::string word;  // the verdict as shown: style(kind).word, or the report's own word for an odd verdict
  const Json* result = nullptr;
};

inline bool has_error(const Json& wheel) {
  const Json& e = field(wheel, "error");
  return !e.is_null() && !(e.is_string() && e.get_ref<const std::string&>().empty());
}

inline CellKind verdict_kind(const std::string& v) {
  if (v == "compatible") return CellKind::Compatible;
  if (v == "degraded") return CellKind::Degraded;
  if (v == "incompatible") return CellKind::Incompatible;
  return CellKind::Unknown;
}

inline Cell cell_for(const Json& wheel, const std::string& image) {
  Cell c;
  if (has_error(wheel)) {
    c.kind = CellKind::Error;
  } else {
    for (const auto& r : list(wheel, "results")) {
      if (str(r, "image") == image) {
        c.result = &r;
        break;
      }
    }
    if (c.result == nullptr) {
      c.kind = CellKind::Missing;
    } else if (field(*c.result, "targeted").is_boolean() && !field(*c.result, "targeted").get<bool>()) {
      c.kind = CellKind::NotTargeted;
    } else {
      const std::string v = str(*c.result, "verdict");
      c.kind = verdict_kind(v);
      if (c.kind == CellKind::Unknown && !v.empty() && v != "unknown") {
        c.word = v;  // an unexpected word: shown as it is (escaped), styled as unknown
        return c;
      }
    }
  }
  c.word = style(c.kind).word;
  return c;
}

inline bool needs_detail(CellKind k) {
  return k == CellKind::Degraded || k == CellKind::Incompatible || k == CellKind::Unknown;
}

// The columns: the report's images in order, then any image a result names that the list lacks.
inline std::vector<std::string> image_columns(const Json& report) {
  std::vector<std::string> images;
  for (const auto& s : strings(report, "images"))
    if (!s.empty()) add_unique(images, s);
  for (const auto& w : list(report, "wheels"))
    for (const auto& r : list(w, "results"))
      if (auto s = str(r, "image"); !s.empty()) add_unique(images, s);
  return images;
}

// New wheels first, then the rest, each group in report order.
inline std::vector<const Json*> ordered_wheels(const Json& report) {
  std::vector<const Json*> out;
  for (const auto& w : list(report, "wheels"))
    if (is_true(w, "new")) out.push_back(&w);
  for (const auto& w : list(report, "wheels"))
    if (!is_true(w, "new")) out.push_back(&w);
  return out;
}

inline std::string wheel_name(const Json& wheel) {
  std::string name = str(wheel, "filename");
  if (name.empty()) name = str(wheel, "url");
  if (name.empty()) name = "(unnamed wheel)";
  return name;
}

// The exit outcome in words; *emoji (when asked for) gets the Markdown's symbol for it.
inline std::string outcome_words(const Json& report, const char** emoji) {
  const Json& e = field(report, "exit_code");
  const std::int64_t code = e.is_number_integer() ? e.get<std::int64_t>() : -1;
  const char* symbol = "❔";
  std::string words;
  switch (code) {
    case 0: symbol = "✅", words = "nothing new is incompatible"; break;
    case 1: symbol = "❌", words = "a new wheel is incompatible with an image its tags target"; break;
    case 2: symbol = "⛔", words = "bad input or an unreadable index"; break;
    default:
      words =
          e.is_null() ? std::string("outcome unknown (no exit code)") : "outcome unknown (exit code " + text(e) + ")";
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
inline std::vector<std::string> gate_lines(const Json& gates, bool with_export) {
  std::vector<std::string> out;
  if (!gates.is_object()) return out;
  for (auto it = gates.begin(); it != gates.end(); ++it) {
    const std::string name = it.key();
    const std::string value = gates::shell_single_quote(text(it.value()));
    if (shell_name(name))
      out.push_back((with_export ? "export " : "") + name + "=" + value);
    else
      out.push_back("# not a shell variable name: " + gates::shell_single_quote(name) + "=" + value);
  }
  return out;
}

inline std::string shard_text(const Json& report) {
  const Json& shard = field(report, "shard");
  if (!shard.is_object()) return {};
  if (is_true(shard, "merged")) return "merged from " + str(shard, "count") + " shards";
  return "shard " + str(shard, "index") + " of " + str(shard, "count");
}

inline const char* k_count_keys[][2] = {
    {"wheels_seen", "wheels seen"}, {"new", "new"}, {"checked", "checked"}, {"errors", "errors"}};
inline const char* k_verdict_keys[][2] = {{"compatible", "compatible"},
                                          {"degraded", "degraded"},
                                          {"incompatible", "incompatible"},
                                          {"unknown", "unknown"},
                                          {"not-targeted", "not targeted"}};

inline std::string count_text(const Json& summary, const char* key) {
  const Json& v = field(summary, key);
  return v.is_null() ? std::string("?") : text(v);
}

// Pins: rows are images, columns projects (the report's lists first, then any the pins add).
struct PinGrid {
  std::vector<std::string> images;
  std::vector<std::string> projects;
};

inline PinGrid pin_grid(const Json& report) {
  PinGrid g;
  for (const auto& p : list(report, "pins")) {
    if (str(p, "image").empty() || str(p, "project").empty()) continue;  // cannot be placed in the grid
    add_unique(g.images, str(p, "image"));
    add_unique(g.projects, str(p, "project"));
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
  reorder(g.projects, strings(report, "projects"));
  return g;
}

inline const Json* find_pin(const Json& report, const std::string& image, const std::string& project) {
  for (const auto& p : list(report, "pins"))
    if (str(p, "image") == image && str(p, "project") == project) return &p;
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

}  // namespace wheelcheck::scan::detail
