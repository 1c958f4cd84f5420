/*
 * Renderings of a `wheelcheck scan` report (docs/scan.schema.json, "wheelcheck-scan/1").
 *
 * report_markdown: GitHub-flavoured Markdown for $GITHUB_STEP_SUMMARY. report_html: one static page,
 * inline CSS only and no JavaScript; each matrix cell is a <details> that opens its findings.
 *
 * Both render the typed report (scan::Report; inspector/output/scan_view.hpp holds what they share). Its
 * text came from indexes and wheels, so it is untrusted: every string is escaped for the output (HTML
 * entities, Markdown punctuation and table pipes, newlines folded to spaces) and only http(s) URLs become
 * links. Nothing here reads the clock or the environment, so a report renders to the same bytes every time.
 */

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "inspector/output/scan_view.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/report.hpp"
#include "wheelcheck/scan.hpp"

namespace wheelcheck::scan {

namespace {

using namespace view;  // NOLINT: the shared model

// ---- Markdown -----------------------------------------------------------------------------------

// Text: backslash before the punctuation Markdown or GFM could read as markup (so `<script>` shows
// as text, `|` cannot end a table cell, `*`/`_` emphasise nothing, `&amp;` shows as written).
std::string md_text(std::string_view s) {
  std::string out;
  for (char ch : one_line(s)) {
    if (std::string_view("\\`*_[]<>|~&#!").find(ch) != std::string_view::npos) out += '\\';
    out += ch;
  }
  return out;
}

// A code span fenced by one more backtick than the longest run inside. In a table cell `|` still
// needs its backslash (GFM splits cells before it reads code spans, and drops the backslash).
std::string md_code(std::string_view s, bool in_table) {
  std::string body = one_line(s);
  if (body.empty()) return "\"\"";
  std::size_t longest = 0, run = 0;
  for (char ch : body) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  if (in_table) {
    std::string escaped;
    for (char ch : body) {
      if (ch == '|') escaped += '\\';
      escaped += ch;
    }
    body = std::move(escaped);
  }
  const std::string fence(longest + 1, '`');
  const bool pad = body.front() == '`' || body.back() == '`' || body.front() == ' ';
  return pad ? fence + " " + body + " " + fence : fence + body + fence;
}

std::string md_gates(const Gates& gates, bool in_table) {
  std::string out;
  for (const auto& line : gate_lines(gates, false)) {
    if (!out.empty()) out += ' ';
    out += md_code(line, in_table);
  }
  return out;
}

std::string md_cell(const Cell& c) {
  return std::string(style(c.kind).emoji) + " " + md_text(c.word());
}

}  // namespace

std::string report_markdown(const Report& report) {
  std::string out;
  const char* symbol = "";
  const std::string outcome = outcome_words(report, &symbol);
  out += fmt::format("## {} wheelcheck scan: {}\n\n", symbol, md_text(outcome));

  const Summary summary = report.summary();
  {
    std::vector<std::string> parts;
    for (const auto& k : counts_of(summary)) parts.push_back("**" + md_text(std::to_string(k.n)) + "** " + k.words);
    std::string verdicts;
    const auto v = verdict_counts_of(summary);
    const CellKind kinds[] = {CellKind::Compatible, CellKind::Degraded, CellKind::Incompatible, CellKind::Unknown,
                              CellKind::NotTargeted};
    for (std::size_t i = 0; i < std::size(kinds); ++i) {
      if (!verdicts.empty()) verdicts += ", ";
      verdicts += fmt::format("{} {} {}", style(kinds[i]).emoji, md_text(std::to_string(v[i].n)), v[i].words);
    }
    out += fmt::format("{} · verdicts: {}\n\n", fmt::join(parts, " · "), verdicts);
  }

  const std::vector<std::string> images = image_columns(report);
  {
    std::vector<std::string> meta;
    auto code_list = [](const std::vector<std::string>& v) {  // the first 50 (a nightly list has thousands)
      std::vector<std::string> c;
      for (std::size_t i = 0; i < v.size() && i < 50; ++i) c.push_back(md_code(v[i], false));
      if (v.size() > 50) c.push_back(fmt::format("and {} more", v.size() - 50));
      return fmt::format("{}", fmt::join(c, ", "));
    };
    if (!images.empty()) meta.push_back("Images: " + code_list(images));
    if (!report.projects.empty()) meta.push_back("Projects: " + code_list(report.projects));
    if (!report.indexes.empty()) meta.push_back("Indexes: " + code_list(report.indexes));
    meta.push_back(md_text(shard_text(report)));
    if (report.since && !report.since->empty()) meta.push_back("Since " + md_text(*report.since));
    out += fmt::format("{}\n\n", fmt::join(meta, " · "));
  }

  // What broke, and every project's row (the first this summary says: what a person opens it for).
  const PinGrid g = pin_grid(report);
  const std::vector<ProjectRow> rows = project_rows(report);
  {
    std::string broke;
    std::size_t shown = 0, more = 0;
    for (const auto& r : rows) {
      if (r.broke_total == 0) continue;
      if (++shown > 50) {
        ++more;
        continue;
      }
      broke += fmt::format("- {}: {} broke\n", md_code(r.project, false), r.broke_total);
      for (const auto& line : r.broke) broke += "  - " + md_text(line) + "\n";
      if (r.broke_total > r.broke.size()) broke += fmt::format("  - and {} more\n", r.broke_total - r.broke.size());
    }
    out += "### What broke\n\n";
    out += broke.empty()
               ? "Nothing: no new wheel is incompatible with an image it is for, and every one could be read.\n\n"
               : broke + (more != 0 ? fmt::format("- and {} more projects (report.html)\n", more) : "") + "\n";
  }
  if (!inline_matrix(report)) {
    // A large scan: a row per project (those that broke first), capped so that a CI summary stays small.
    std::vector<const ProjectRow*> order;
    for (const auto& r : rows)
      if (r.broke_total != 0) order.push_back(&r);
    for (const auto& r : rows)
      if (r.broke_total == 0) order.push_back(&r);
    out += "### By project\n\n| Project | New | Errors |";
    for (const auto& img : images) out += " " + md_code(img, true) + " |";
    out += "\n|---|---|---|";
    for (std::size_t i = 0; i < images.size(); ++i) out += "---|";
    out += "\n";
    std::size_t n = 0;
    for (const ProjectRow* r : order) {
      if (++n > 200) break;
      out += fmt::format("| {} | {} | {} |", md_code(r->project, true), r->wheels, r->errors);
      for (const auto& img : images) {
        std::string cell;
        if (const auto c = r->cells.find(img); c != r->cells.end()) {
          for (const auto& [kind, count] : c->second) cell += fmt::format("{} {} ", style(kind).emoji, count);
        }
        if (const auto pick = r->picks.find(img); pick != r->picks.end())
          cell += pick->second.usable ? "pin **" + md_text(pick->second.version) + "**" : "no pin";
        out += " " + (cell.empty() ? std::string("—") : cell) + " |";
      }
      out += "\n";
    }
    out += "\n";
    if (order.size() > 200)
      out += fmt::format("_and {} more projects: report.html has every one._\n\n", order.size() - 200);
    out += fmt::format(
        "_{} wheels: the matrix and each cell's findings are in report.html (a page per project) and "
        "report.json._\n\n",
        report.wheel_count());
  } else if (report.wheel_count() == 0) {
    out += "_No wheels in this report._\n\n";
  } else {
    out += "| Wheel |";
    for (const auto& img : images) out += " " + md_code(img, true) + " |";
    out += "\n|---|";
    for (std::size_t i = 0; i < images.size(); ++i) out += "---|";
    out += "\n";
    each_ordered_wheel(report, [&](const Wheel& w) {
      out += "| " + md_code(wheel_name(w), true);
      if (!w.is_new) out += " _(seen before)_";
      if (w.yanked) out += " _(yanked)_";
      out += " |";
      for (const auto& img : images) out += " " + md_cell(cell_for(w, img)) + " |";
      out += "\n";
    });
    out += "\n";

    // A bullet for every targeted cell that is not compatible, and for every wheel that failed.
    std::string details;
    each_ordered_wheel(report, [&](const Wheel& w) {
      if (has_error(w)) {
        details += fmt::format("- {} **error** · {}: {}\n", style(CellKind::Error).emoji, md_code(wheel_name(w), false),
                               md_text(*w.error));
        return;
      }
      for (const auto& img : images) {
        const Cell c = cell_for(w, img);
        if (!needs_detail(c.kind)) continue;
        details += fmt::format("- {} **{}** · {} on {}", style(c.kind).emoji, md_text(c.word()),
                               md_code(wheel_name(w), false), md_code(img, false));
        if (const auto& h = c.result->cell.headline; !h.empty()) details += ": " + md_text(h);
        if (auto gl = md_gates(c.result->gates, false); !gl.empty()) details += " — gates: " + gl;
        details += "\n";
        for (const auto& cond : c.result->cell.report.conditions) details += "  - condition: " + md_text(cond) + "\n";
      }
    });
    if (!details.empty()) out += "### Not compatible\n\n" + details + "\n";
  }

  // The publisher check of each new wheel, once (not per image).
  {
    std::string publisher;
    std::size_t shown = 0;
    report.each_wheel([&](const Wheel& w) {
      if (!w.publisher || w.publisher->findings.empty() || shown >= 100) return;
      std::string lines;
      for (const auto& f : w.publisher->findings) {
        if (f.severity != verdict::Severity::Error && f.severity != verdict::Severity::Warning) continue;
        lines += fmt::format("  - {} {}: {}\n", f.severity == verdict::Severity::Error ? "⛔" : "⚠️",
                             md_code(verdict::kind_name(f.kind), false), md_text(f.explanation));
      }
      if (lines.empty()) return;
      ++shown;
      publisher +=
          fmt::format("- {} ({})\n", md_code(w.filename, false), md_text(lint::status_name(w.publisher->status))) +
          lines;
    });
    if (!publisher.empty())
      out +=
          "### Publisher findings\n\nWhat each new wheel claims against its binaries (`wheelcheck lint`), once "
          "per wheel:\n\n" +
          publisher + "\n";
  }

  // Pins.
  out += "### Pins\n\n";
  if (!g.held()) {
    out +=
        fmt::format("_{} pins: \"By project\" names each pick; report.html says what each passed over._\n\n", g.count);
  } else if (g.images.empty()) {
    out += "_No pins._\n\n";
  } else {
    out += "| Image |";
    for (const auto& p : g.projects) out += " " + md_code(p, true) + " |";
    out += "\n|---|";
    for (std::size_t i = 0; i < g.projects.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& img : g.images) {
      out += "| " + md_code(img, true) + " |";
      for (const auto& proj : g.projects) {
        const Pin* pin = find_pin(g, img, proj);
        if (pin == nullptr) {
          out += " — |";
        } else if (!pin->pick) {
          out += " ⛔ nothing usable |";
        } else {
          const std::string v = verdict::verdict_name(pin->pick->verdict);
          std::string inner = std::string(style(kind_of(pin->pick->verdict)).emoji) + " " + md_text(v);
          if (auto gl = md_gates(pin->pick->gates, true); !gl.empty()) inner += "; " + gl;
          out += " **" + md_text(pin->pick->version) + "** (" + inner + ") |";
        }
      }
      out += "\n";
    }
    out += "\n";
    std::string passed;
    for (const auto& img : g.images) {
      for (const auto& proj : g.projects) {
        const Pin* pin = find_pin(g, img, proj);
        if (pin == nullptr || pin->passed.empty()) continue;
        passed += fmt::format("- {} · {}: {}\n", md_code(img, false), md_code(proj, false),
                              pin->pick ? "picked " + md_text(pin->pick->version) : "nothing usable");
        for (const auto& p : pin->passed)
          passed += fmt::format("  - passed over {} ({}): {}\n", md_text(p.version), md_code(p.filename, false),
                                md_text(p.reason));
      }
    }
    if (!passed.empty()) out += passed + "\n";
  }

  if (!report.warnings.empty()) {
    out += "### Warnings\n\n";
    for (const auto& w : report.warnings) out += "- ⚠️ " + md_text(w) + "\n";
    out += "\n";
  }

  out += fmt::format("_Generated {} by wheelcheck {}; report format {}._\n",
                     md_text(report.generated_at.empty() ? "(no date)" : report.generated_at),
                     md_text(report.wheelcheck_version.empty() ? "?" : report.wheelcheck_version),
                     md_code(k_report_schema, false));
  return out;
}

}  // namespace wheelcheck::scan
