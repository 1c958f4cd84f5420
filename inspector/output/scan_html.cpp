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

#include <cctype>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "inspector/output/scan_view.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/report.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::scan {

namespace {

using namespace view;  // NOLINT: the shared model

// Text and attribute values alike: the five significant characters become entities; control
// characters other than newline and tab are dropped (they are not allowed in HTML text).
std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 16);
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: {
        const auto c = static_cast<unsigned char>(ch);
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) break;
        out += ch;
      }
    }
  }
  return out;
}

bool http_url(std::string_view url) {
  auto starts = [&](std::string_view p) {
    if (url.size() < p.size()) return false;
    for (std::size_t i = 0; i < p.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(url[i])) != p[i]) return false;
    return true;
  };
  return starts("http://") || starts("https://");
}

constexpr std::string_view k_css = R"css(
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--head:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:var(--fg);background:#fff;margin:0;padding:1rem 1.5rem}
h1{font-size:1.45rem;margin:.2rem 0 .5rem}
h2{font-size:1.15rem;margin:1.6rem 0 .5rem}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
code{overflow-wrap:anywhere}
a{color:#0550ae}
header{border-bottom:1px solid var(--line);padding-bottom:.6rem}
header.outcome-0 h1{color:#116329}
header.outcome-1 h1{color:#a40e26}
header.outcome-2 h1{color:#953800}
ul.counts{list-style:none;padding:0;margin:.3rem 0;display:flex;flex-wrap:wrap;gap:.3rem 1.1rem}
ul.counts b{font-size:1.05rem}
ul.counts li.sep{color:var(--muted)}
table.pins tbody th code{white-space:nowrap;overflow-wrap:normal}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.15rem .9rem;margin:.6rem 0 0}
dl.meta dt{color:var(--muted)}
dl.meta dd{margin:0}
.legend{list-style:none;padding:0;margin:.4rem 0 .8rem;display:flex;flex-wrap:wrap;gap:.4rem}
.legend li{padding:.15rem .55rem;border-radius:4px;border-left:4px solid currentColor}
.scroll{max-height:80vh;overflow:auto;border:1px solid var(--line);border-radius:6px}
table{border-collapse:separate;border-spacing:0}
th,td{border-right:1px solid var(--line);border-bottom:1px solid var(--line);padding:.35rem .5rem;text-align:left;vertical-align:top}
thead th{position:sticky;top:0;z-index:2;background:var(--head);white-space:nowrap}
table.matrix tbody th{position:sticky;left:0;z-index:1;background:#fff;min-width:16rem;max-width:30rem;font-weight:normal}
table.matrix thead th:first-child{left:0;z-index:3}
table.matrix td{min-width:9rem}
tr.seen tbody th,tr.seen th{background:#fafbfc}
.badge{display:inline-block;font-size:11px;line-height:1.5;padding:0 .4rem;border-radius:8px;border:1px solid currentColor;margin-left:.3rem;vertical-align:1px}
.badge.new{color:#0550ae}
.badge.seen,.badge.yanked{color:var(--muted)}
.sub{color:var(--muted);font-size:12px;margin-top:.15rem}
.v-compatible{background:#dafbe1;color:#0b3d1b}
.v-degraded{background:#fff3b0;color:#4d3800}
.v-incompatible{background:#ffd8d3;color:#6f0d0d}
.v-unknown{background:#e8e1fb;color:#35206e}
.v-not-targeted{background:#eff1f3;color:#59636e}
.v-error{background:#ffe1c4;color:#6b2c00}
.v-missing{background:#fff;color:#59636e}
.pin-none{background:#ffd8d3;color:#6f0d0d}
td.v-compatible,td.v-degraded,td.v-incompatible,td.v-unknown,td.v-error{border-left:4px solid currentColor}
td.v-not-targeted{background-image:repeating-linear-gradient(135deg,transparent 0 6px,rgba(0,0,0,.035) 6px 12px)}
summary{cursor:pointer;font-weight:600;white-space:nowrap}
summary .g{display:inline-block;width:1.1em;text-align:center}
details[open]{min-width:22rem}
details .body{color:var(--fg);margin-top:.35rem}
.headline{margin:.2rem 0 .4rem;font-weight:600}
.label{font-size:11px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin:.45rem 0 .15rem}
ul.findings,ul.conditions,ul.passed{margin:.1rem 0;padding-left:1.1rem}
li.finding{margin:.25rem 0 .45rem}
.sev{display:inline-block;font-size:11px;padding:0 .35rem;border-radius:3px;background:#fff;border:1px solid currentColor;margin-right:.3rem}
li.sev-error .sev{color:#a40e26}
li.sev-condition .sev{color:#5a32a3}
li.sev-warning .sev{color:#7d4e00}
dl.f{display:grid;grid-template-columns:max-content 1fr;gap:0 .6rem;margin:.15rem 0}
dl.f dt{color:var(--muted)}
dl.f dd{margin:0}
.fix{margin:.15rem 0}
pre.gates{background:#fff;color:var(--fg);border:1px solid var(--line);border-radius:4px;padding:.3rem .45rem;margin:.15rem 0;white-space:pre-wrap;overflow-wrap:anywhere}
ul.warnings li{margin:.2rem 0}
span.chip{display:inline-block;padding:0 .35rem;margin:0 .2rem .1rem 0;border-radius:3px;white-space:nowrap}
ul.broke li{margin:.15rem 0}
table.projects td{min-width:7rem}
footer{margin-top:2rem;border-top:1px solid var(--line);padding-top:.5rem;color:var(--muted);font-size:12px}
@media print{.scroll{max-height:none;overflow:visible}details .body{display:block}}
)css";

std::string summary_html(const Cell& c) {
  const Style s = style(c.kind);
  return fmt::format("<summary><span class=\"g\" aria-hidden=\"true\">{}</span> {}</summary>", s.glyph, esc(c.word()));
}

std::string gates_html(const Gates& gates) {
  const auto lines = gate_lines(gates, true);
  if (lines.empty()) return {};
  std::string out = "<div class=\"label\">Gates</div><pre class=\"gates\">";
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" : "") + esc(lines[i]);
  return out + "</pre>";
}

std::string finding_html(const verdict::Finding& f) {
  const std::string severity = verdict::severity_name(f.severity);
  std::string out =
      fmt::format("<li class=\"finding sev-{}\"><span class=\"sev\">{}</span><code>{}</code>", esc(one_line(severity)),
                  esc(severity.empty() ? "finding" : severity), esc(verdict::kind_name(f.kind)));
  std::string dl;
  const std::pair<const std::string*, const char*> k_fields[] = {
      {&f.member, "member"}, {&f.object, "image library"}, {&f.library, "library"},
      {&f.symbol, "symbol"}, {&f.demangled, "demangled"},  {&f.required_version, "needs"}};
  for (const auto& [v, label] : k_fields)
    if (!v->empty()) dl += fmt::format("<dt>{}</dt><dd><code>{}</code></dd>", label, esc(*v));
  if (!dl.empty()) out += "<dl class=\"f\">" + dl + "</dl>";
  if (!f.explanation.empty()) out += "<div>" + esc(f.explanation) + "</div>";
  if (!f.fix.empty()) out += "<div class=\"fix\"><b>Fix:</b> " + esc(f.fix) + "</div>";
  return out + "</li>";
}

std::string cell_html(const Wheel& wheel, const Cell& c) {
  std::string body;
  switch (c.kind) {
    case CellKind::Error:
      body = "<p class=\"headline\">" + esc(wheel.error.value_or("")) +
             "</p><p>The wheel could not be fetched or read; no image was checked.</p>";
      break;
    case CellKind::Missing: body = "<p>The report has no result for this wheel on this image.</p>"; break;
    default: {
      const run::Cell& r = c.result->cell;
      if (c.kind == CellKind::NotTargeted) {
        body += "<p>The wheel is not for this image (pip would not install it there).</p>";
      }
      if (!r.headline.empty()) body += "<p class=\"headline\">" + esc(r.headline) + "</p>";
      const auto& findings = r.report.findings;
      if (!findings.empty()) {
        body += "<div class=\"label\">Findings</div><ul class=\"findings\">";
        for (const auto& f : findings) body += finding_html(f);
        body += "</ul>";
      } else if (c.kind != CellKind::NotTargeted) {
        body += "<p>No findings.</p>";
      }
      if (const auto& conds = r.report.conditions; !conds.empty()) {
        body += "<div class=\"label\">Conditions</div><ul class=\"conditions\">";
        for (const auto& s : conds) body += "<li>" + esc(s) + "</li>";
        body += "</ul>";
      }
      body += gates_html(c.result->gates);
    }
  }
  return fmt::format("<td class=\"{}\"><details>{}<div class=\"body\">{}</div></details></td>", style(c.kind).css,
                     summary_html(c), body);
}

std::string wheel_header_html(const Wheel& w) {
  const std::string name = wheel_name(w);
  std::string out = "<th scope=\"row\">";
  if (http_url(w.url))
    out += fmt::format("<a href=\"{}\" rel=\"noreferrer\"><code>{}</code></a>", esc(w.url), esc(name));
  else
    out += "<code>" + esc(name) + "</code>";
  out += w.is_new ? "<span class=\"badge new\">new</span>" : "<span class=\"badge seen\">seen before</span>";
  if (w.yanked) out += "<span class=\"badge yanked\">yanked</span>";
  std::vector<std::string> sub;
  if (!w.project.empty()) sub.push_back(esc(w.project) + " " + esc(w.version));
  if (w.upload_time && !w.upload_time->empty()) sub.push_back("uploaded " + esc(*w.upload_time));
  if (w.size) sub.push_back(esc(format_size(*w.size)));
  if (!w.sha256.empty())
    sub.push_back(fmt::format("sha256 <code title=\"{}\">{}</code>", esc(w.sha256), esc(w.sha256.substr(0, 12))));
  if (!w.integrity.empty()) sub.push_back("integrity " + esc(w.integrity));
  if (w.yanked) sub.push_back(w.yanked_reason.empty() ? std::string("yanked") : "yanked: " + esc(w.yanked_reason));
  if (!sub.empty()) out += fmt::format("<div class=\"sub\">{}</div>", fmt::join(sub, " · "));
  return out + "</th>";
}

std::string pin_cell_html(const Pin* pin) {
  if (pin == nullptr) return "<td class=\"v-missing\">—</td>";
  std::string out;
  if (!pin->pick) {
    out = "<td class=\"pin-none\"><b>nothing usable</b>";
  } else {
    const Pick& pick = *pin->pick;
    const std::string v = verdict::verdict_name(pick.verdict);
    const Style s = style(kind_of(pick.verdict));
    out = fmt::format("<td class=\"{}\"><b>{}</b> <span class=\"g\" aria-hidden=\"true\">{}</span> {}", s.css,
                      esc(pick.version), s.glyph, esc(v));
    if (!pick.filename.empty()) out += "<div class=\"sub\"><code>" + esc(pick.filename) + "</code></div>";
    out += gates_html(pick.gates);
  }
  if (!pin->passed.empty()) {
    out += "<div class=\"label\">Passed over</div><ul class=\"passed\">";
    for (const auto& p : pin->passed) {
      out += "<li><b>" + esc(p.version) + "</b>";
      if (!p.filename.empty()) out += " <code>" + esc(p.filename) + "</code>";
      out += ": " + esc(p.reason) + "</li>";
    }
    out += "</ul>";
  }
  return out + "</td>";
}

// Cell counts as chips: "✓ 12 ✗ 1", the kinds present only.
std::string chips_html(const std::map<CellKind, std::uint64_t>& counts) {
  std::string out;
  for (CellKind k :
       {CellKind::Compatible, CellKind::Degraded, CellKind::Incompatible, CellKind::Unknown, CellKind::NotTargeted}) {
    const auto it = counts.find(k);
    if (it == counts.end() || it->second == 0) continue;
    const Style s = style(k);
    out += fmt::format("<span class=\"chip {}\" title=\"{}\"><span aria-hidden=\"true\">{}</span> {}</span>", s.css,
                       s.word, s.glyph, it->second);
  }
  return out.empty() ? "—" : out;
}

std::string page_start(const std::string& title) {
  return "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
         esc(title) + "</title>\n<style>" + std::string(k_css) + "</style>\n</head>\n<body>\n";
}

std::string page_end(const Report& report) {
  return fmt::format(
      "</main>\n<footer>wheelcheck {} · report format <code>{}</code> · generated <time>{}</time></footer>\n"
      "</body>\n</html>\n",
      esc(report.wheelcheck_version.empty() ? "?" : report.wheelcheck_version), esc(k_report_schema),
      esc(report.generated_at.empty() ? "?" : report.generated_at));
}

std::string legend_html() {
  std::string out = "<ul class=\"legend\">";
  for (CellKind k : {CellKind::Compatible, CellKind::Degraded, CellKind::Incompatible, CellKind::Unknown,
                     CellKind::NotTargeted, CellKind::Error}) {
    const Style s = style(k);
    out += fmt::format("<li class=\"{}\"><span aria-hidden=\"true\">{}</span> <b>{}</b>: {}</li>", s.css, s.glyph,
                       s.word, s.meaning);
  }
  return out + "</ul>\n";
}

// The wheels x images table of the wheels `each` gives.
std::string matrix_html(const std::vector<std::string>& images,
                        const std::function<void(const std::function<void(const Wheel&)>&)>& each) {
  std::string rows;
  each([&](const Wheel& w) {
    rows += w.is_new ? "<tr class=\"new\">" : "<tr class=\"seen\">";
    rows += wheel_header_html(w);
    for (const auto& img : images) rows += cell_html(w, cell_for(w, img));
    rows += "</tr>\n";
  });
  if (rows.empty()) return "<p>No wheels in this report.</p>\n";
  std::string out = "<div class=\"scroll\">\n<table class=\"matrix\">\n<thead><tr><th scope=\"col\">Wheel</th>";
  for (const auto& img : images) out += "<th scope=\"col\"><code>" + esc(img) + "</code></th>";
  return out + "</tr></thead>\n<tbody>\n" + rows + "</tbody>\n</table>\n</div>\n";
}

std::string pins_grid_html(const PinGrid& g) {
  if (g.images.empty()) return "<p>No pins.</p>\n";
  std::string out = "<div class=\"scroll\">\n<table class=\"pins\">\n<thead><tr><th scope=\"col\">Image</th>";
  for (const auto& p : g.projects) out += "<th scope=\"col\"><code>" + esc(p) + "</code></th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& img : g.images) {
    out += "<tr><th scope=\"row\"><code>" + esc(img) + "</code></th>";
    for (const auto& proj : g.projects) out += pin_cell_html(find_pin(g, img, proj));
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n</div>\n";
}

// The first screen: the outcome and counts (#summary), what was scanned.
std::string header_html(const Report& report, const std::vector<std::string>& images) {
  const std::string outcome = outcome_words(report, nullptr);
  const int exit_code = report.exit_code();
  const std::string outcome_class =
      exit_code >= 0 && exit_code <= 2 ? "outcome-" + std::to_string(exit_code) : "outcome-other";
  // Plain glyphs rather than the Markdown's emoji: they need no emoji font (headless browsers, CI boxes).
  const char* glyph = outcome_class == "outcome-0"   ? "✓"
                      : outcome_class == "outcome-1" ? "✗"
                      : outcome_class == "outcome-2" ? "!"
                                                     : "?";
  std::string out = fmt::format(
      "<header id=\"summary\" class=\"{}\">\n<h1><span aria-hidden=\"true\">{}</span> wheelcheck scan: {}</h1>\n",
      outcome_class, glyph, esc(outcome));
  const Summary summary = report.summary();
  out += "<ul class=\"counts\">";
  for (const auto& k : counts_of(summary)) out += fmt::format("<li><b>{}</b> {}</li>", k.n, k.words);
  out += "<li class=\"sep\">verdicts:</li>";
  for (const auto& k : verdict_counts_of(summary)) out += fmt::format("<li><b>{}</b> {}</li>", k.n, k.words);
  out += "</ul>\n<dl class=\"meta\">";
  auto meta = [&](const char* label, const std::vector<std::string>& values) {
    if (values.empty()) return;
    std::vector<std::string> e;
    for (std::size_t i = 0; i < values.size() && i < 50; ++i) e.push_back("<code>" + esc(values[i]) + "</code>");
    if (values.size() > 50) e.push_back(fmt::format("and {} more", values.size() - 50));
    out += fmt::format("<dt>{}</dt><dd>{}</dd>", label, fmt::join(e, ", "));
  };
  meta("Images", images);
  meta("Projects", report.projects);
  meta("Indexes", report.indexes);
  out += "<dt>Shard</dt><dd>" + esc(shard_text(report)) + "</dd>";
  out += "<dt>Since</dt><dd>" + esc(report.since && !report.since->empty() ? *report.since : "the beginning") + "</dd>";
  return out + "</dl>\n</header>\n";
}

// What broke tonight (first) and every project's row: its new wheels by image, its picks.
std::string projects_html(const std::vector<ProjectRow>& rows, const std::vector<std::string>& images, bool split) {
  const auto name = [&](std::size_t i) {
    const std::string code = "<code>" + esc(rows[i].project) + "</code>";
    return split && rows[i].wheels != 0
               ? fmt::format("<a href=\"{}\">{}</a>", esc(project_page(rows[i].project, i)), code)
               : code;
  };
  std::string broke;
  std::size_t broke_projects = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].broke_total == 0) continue;
    if (++broke_projects > 100) continue;
    broke += "<li>" + name(i) + fmt::format(": {} broke", rows[i].broke_total) + "<ul>";
    for (const auto& line : rows[i].broke) broke += "<li>" + esc(line) + "</li>";
    if (rows[i].broke_total > rows[i].broke.size())
      broke += fmt::format("<li>and {} more</li>", rows[i].broke_total - rows[i].broke.size());
    broke += "</ul></li>\n";
  }
  std::string out = "<section id=\"broke\">\n<h2>What broke</h2>\n";
  if (broke_projects == 0) {
    out += "<p>Nothing: no new wheel is incompatible with an image it is for, and every one could be read.</p>\n";
  } else {
    out += "<ul class=\"broke\">" + broke + "</ul>\n";
    if (broke_projects > 100)
      out += fmt::format("<p>and {} more projects (report.json lists every wheel).</p>\n", broke_projects - 100);
  }
  out += "</section>\n<section id=\"projects\">\n<h2>By project</h2>\n";
  out +=
      "<div class=\"scroll\">\n<table class=\"projects\">\n<thead><tr><th scope=\"col\">Project</th>"
      "<th scope=\"col\">New</th><th scope=\"col\">Errors</th>";
  for (const auto& img : images) out += "<th scope=\"col\"><code>" + esc(img) + "</code></th>";
  out += "</tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ProjectRow& r = rows[i];
    out += fmt::format("<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td>", name(i), r.wheels, r.errors);
    for (const auto& img : images) {
      const auto cells = r.cells.find(img);
      out += "<td>" + (cells == r.cells.end() ? std::string("—") : chips_html(cells->second));
      if (const auto pick = r.picks.find(img); pick != r.picks.end()) {
        const ProjectRow::Pick& p = pick->second;
        out += p.usable ? fmt::format("<div class=\"sub\">pin <b>{}</b> ({})</div>", esc(p.version),
                                      esc(verdict::verdict_name(p.verdict)))
                        : std::string("<div class=\"sub\">pin: nothing usable</div>");
      }
      out += "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n</div>\n</section>\n";
}

std::string publisher_html(const Report& report) {
  std::string items;
  std::size_t shown = 0, more = 0;
  report.each_wheel([&](const Wheel& w) {
    if (!w.publisher) return;
    std::string lines;
    for (const auto& f : w.publisher->findings) {
      if (f.severity != verdict::Severity::Error && f.severity != verdict::Severity::Warning) continue;
      lines += "<li><strong>" + esc(verdict::severity_name(f.severity)) + "</strong> <code>" +
               esc(verdict::kind_name(f.kind)) + "</code>: " + esc(f.explanation) + "</li>";
    }
    if (lines.empty()) return;
    if (++shown > 100) {
      ++more;
      return;
    }
    items += "<li><code>" + esc(w.filename) + "</code> (" + esc(lint::status_name(w.publisher->status)) + ")<ul>" +
             lines + "</ul></li>\n";
  });
  if (items.empty()) return "";
  return "<section id=\"publisher\">\n<h2>Publisher findings</h2>\n<p>What each new wheel claims against its "
         "binaries (<code>wheelcheck lint</code>), once per wheel.</p>\n<ul class=\"warnings\">" +
         items + "</ul>\n" +
         (more != 0 ? fmt::format("<p>and {} more wheels (report.json has them).</p>\n", more) : "") + "</section>\n";
}

}  // namespace

void report_html_pages(const Report& report, const std::function<void(const std::string&, const std::string&)>& page) {
  const std::vector<std::string> images = image_columns(report);
  const bool whole = inline_matrix(report);
  const PinGrid grid = pin_grid(report);
  const std::vector<ProjectRow> rows = project_rows(report);

  std::string out = page_start("wheelcheck scan: " + outcome_words(report, nullptr));
  out += header_html(report, images);
  out += "<main>\n" + projects_html(rows, images, !whole);
  out += "<section id=\"matrix\">\n<h2>Wheels × images</h2>\n" + legend_html();
  if (whole) {
    out += matrix_html(images, [&](const auto& fn) { each_ordered_wheel(report, fn); });
  } else {
    out += fmt::format(
        "<p>{} wheels: each project's matrix is on a page of its own (follow its name above); report.json has every "
        "cell.</p>\n",
        report.wheel_count());
  }
  out += "</section>\n" + publisher_html(report);
  out += "<section id=\"pins\">\n<h2>Pins</h2>\n";
  if (grid.held()) {
    out += pins_grid_html(grid);
  } else {
    out += fmt::format(
        "<p>{} pins: each project's row above names its pick per image; its page says what was passed over, and "
        "why.</p>\n",
        grid.count);
  }
  out += "</section>\n";
  if (!report.warnings.empty()) {
    out += "<section id=\"warnings\">\n<h2>Warnings</h2>\n<ul class=\"warnings\">";
    for (const auto& w : report.warnings) out += "<li>" + esc(w) + "</li>";
    out += "</ul>\n</section>\n";
  }
  page("report.html", out + page_end(report));
  if (whole) return;

  // A page per project with new wheels: its matrix, its pins with what they passed over. The wheels come in the
  // report's order, a project's together: one project is held at a time.
  std::map<std::string, std::size_t> place;
  for (std::size_t i = 0; i < rows.size(); ++i) place.emplace(rows[i].project, i);
  std::vector<Wheel> held;
  const auto flush = [&] {
    if (held.empty()) return;
    const std::string project = held.front().project;
    const std::size_t i = place.at(project);
    std::string text = page_start(project + ": wheelcheck scan");
    text += fmt::format(
        "<header id=\"summary\">\n<h1><code>{}</code>: {} new wheels</h1>\n<p><a href=\"../report.html\">the "
        "whole scan</a></p>\n</header>\n<main>\n<section id=\"matrix\">\n<h2>Wheels × images</h2>\n",
        esc(project), held.size());
    text += legend_html() + matrix_html(images, [&](const auto& fn) {
              for (const auto& w : held)
                if (w.is_new) fn(w);
              for (const auto& w : held)
                if (!w.is_new) fn(w);
            });
    PinGrid mine;
    report.each_pin_of(project, [&](const Pin& p) {
      mine.pins.push_back(p);
      add_unique(mine.images, p.image);
    });
    mine.count = mine.pins.size();
    if (!mine.pins.empty()) mine.projects.push_back(project);
    text += "</section>\n<section id=\"pins\">\n<h2>Pins</h2>\n" + pins_grid_html(mine) + "</section>\n";
    page(project_page(project, i), text + page_end(report));
    held.clear();
  };
  report.each_wheel([&](const Wheel& w) {
    if (!held.empty() && held.front().project != w.project) flush();
    if (place.count(w.project) != 0) held.push_back(w);
  });
  flush();
}

std::string report_html(const Report& report) {
  std::string front;
  report_html_pages(report, [&](const std::string& path, const std::string& text) {
    if (path == "report.html") front = text;
  });
  return front;
}

}  // namespace wheelcheck::scan
