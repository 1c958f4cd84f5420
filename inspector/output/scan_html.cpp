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

}  // namespace

std::string report_html(const Report& report) {
  const std::string outcome = outcome_words(report, nullptr);
  const int exit_code = report.exit_code();
  const std::string outcome_class =
      exit_code >= 0 && exit_code <= 2 ? "outcome-" + std::to_string(exit_code) : "outcome-other";

  std::string out;
  out += "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>wheelcheck scan: " + esc(outcome) + "</title>\n<style>" + std::string(k_css) + "</style>\n";
  out += "</head>\n<body>\n";

  // Header: the outcome, the counts, what was scanned.
  // Plain glyphs rather than the Markdown's emoji: they need no emoji font (headless browsers, CI boxes).
  const char* glyph = outcome_class == "outcome-0"   ? "✓"
                      : outcome_class == "outcome-1" ? "✗"
                      : outcome_class == "outcome-2" ? "!"
                                                     : "?";
  out += fmt::format("<header class=\"{}\">\n<h1><span aria-hidden=\"true\">{}</span> wheelcheck scan: {}</h1>\n",
                     outcome_class, glyph, esc(outcome));
  const Summary summary = summary_of(report.wheels, report.wheels_seen);
  out += "<ul class=\"counts\">";
  for (const auto& k : counts_of(summary)) out += fmt::format("<li><b>{}</b> {}</li>", k.n, k.words);
  out += "<li class=\"sep\">verdicts:</li>";
  for (const auto& k : verdict_counts_of(summary)) out += fmt::format("<li><b>{}</b> {}</li>", k.n, k.words);
  out += "</ul>\n<dl class=\"meta\">";
  auto meta = [&](const char* label, const std::vector<std::string>& values) {
    if (values.empty()) return;
    std::vector<std::string> e;
    for (const auto& v : values) e.push_back("<code>" + esc(v) + "</code>");
    out += fmt::format("<dt>{}</dt><dd>{}</dd>", label, fmt::join(e, ", "));
  };
  const std::vector<std::string> images = image_columns(report);
  meta("Images", images);
  meta("Projects", report.projects);
  meta("Indexes", report.indexes);
  out += "<dt>Shard</dt><dd>" + esc(shard_text(report)) + "</dd>";
  out += "<dt>Since</dt><dd>" + esc(report.since && !report.since->empty() ? *report.since : "the beginning") + "</dd>";
  out += "</dl>\n</header>\n<main>\n";

  // The matrix.
  out += "<section id=\"matrix\">\n<h2>Wheels × images</h2>\n<ul class=\"legend\">";
  for (CellKind k : {CellKind::Compatible, CellKind::Degraded, CellKind::Incompatible, CellKind::Unknown,
                     CellKind::NotTargeted, CellKind::Error}) {
    const Style s = style(k);
    out += fmt::format("<li class=\"{}\"><span aria-hidden=\"true\">{}</span> <b>{}</b>: {}</li>", s.css, s.glyph,
                       s.word, s.meaning);
  }
  out += "</ul>\n";
  const std::vector<const Wheel*> wheels = ordered_wheels(report);
  if (wheels.empty()) {
    out += "<p>No wheels in this report.</p>\n";
  } else {
    out += "<div class=\"scroll\">\n<table class=\"matrix\">\n<thead><tr><th scope=\"col\">Wheel</th>";
    for (const auto& img : images) out += "<th scope=\"col\"><code>" + esc(img) + "</code></th>";
    out += "</tr></thead>\n<tbody>\n";
    for (const Wheel* w : wheels) {
      out += w->is_new ? "<tr class=\"new\">" : "<tr class=\"seen\">";
      out += wheel_header_html(*w);
      for (const auto& img : images) out += cell_html(*w, cell_for(*w, img));
      out += "</tr>\n";
    }
    out += "</tbody>\n</table>\n</div>\n";
  }
  out += "</section>\n";

  // The publisher check of each new wheel, once (not per image).
  {
    std::string items;
    for (const auto& w : report.wheels) {
      if (!w.publisher) continue;
      std::string lines;
      for (const auto& f : w.publisher->findings) {
        if (f.severity != verdict::Severity::Error && f.severity != verdict::Severity::Warning) continue;
        lines += "<li><strong>" + esc(verdict::severity_name(f.severity)) + "</strong> <code>" +
                 esc(verdict::kind_name(f.kind)) + "</code>: " + esc(f.explanation) + "</li>";
      }
      if (lines.empty()) continue;
      items += "<li><code>" + esc(w.filename) + "</code> (" + esc(lint::status_name(w.publisher->status)) + ")<ul>" +
               lines + "</ul></li>\n";
    }
    if (!items.empty()) {
      out +=
          "<section id=\"publisher\">\n<h2>Publisher findings</h2>\n<p>What each new wheel claims against its "
          "binaries (<code>wheelcheck lint</code>), once per wheel.</p>\n<ul class=\"warnings\">" +
          items + "</ul>\n</section>\n";
    }
  }

  // Pins.
  out += "<section id=\"pins\">\n<h2>Pins</h2>\n";
  const PinGrid g = pin_grid(report);
  if (g.images.empty()) {
    out += "<p>No pins.</p>\n";
  } else {
    out += "<div class=\"scroll\">\n<table class=\"pins\">\n<thead><tr><th scope=\"col\">Image</th>";
    for (const auto& p : g.projects) out += "<th scope=\"col\"><code>" + esc(p) + "</code></th>";
    out += "</tr></thead>\n<tbody>\n";
    for (const auto& img : g.images) {
      out += "<tr><th scope=\"row\"><code>" + esc(img) + "</code></th>";
      for (const auto& proj : g.projects) out += pin_cell_html(find_pin(report, img, proj));
      out += "</tr>\n";
    }
    out += "</tbody>\n</table>\n</div>\n";
  }
  out += "</section>\n";

  if (!report.warnings.empty()) {
    out += "<section id=\"warnings\">\n<h2>Warnings</h2>\n<ul class=\"warnings\">";
    for (const auto& w : report.warnings) out += "<li>" + esc(w) + "</li>";
    out += "</ul>\n</section>\n";
  }

  out += fmt::format(
      "</main>\n<footer>wheelcheck {} · report format <code>{}</code> · generated <time>{}</time></footer>\n"
      "</body>\n</html>\n",
      esc(report.wheelcheck_version.empty() ? "?" : report.wheelcheck_version), esc(k_report_schema),
      esc(report.generated_at.empty() ? "?" : report.generated_at));
  return out;
}

}  // namespace wheelcheck::scan
