/*
 * Renderings of a `wheelcheck scan` report (docs/scan.schema.json, "wheelcheck-scan/1").
 *
 * report_markdown: GitHub-flavoured Markdown for $GITHUB_STEP_SUMMARY. report_html: one static page,
 * inline CSS only and no JavaScript; each matrix cell is a <details> that opens its findings.
 *
 * The report is read as untrusted input. Every access goes through the small readers below, which
 * turn a missing or mistyped field into "absent" instead of throwing; strings from the report are
 * escaped for the output (HTML entities, Markdown punctuation and table pipes, newlines folded to
 * spaces) and only http(s) URLs become links. Nothing here reads the clock or the environment, so a
 * report renders to the same bytes every time.
 */

#include "wheelcheck/report.hpp"

#include "inspector/scan/report_model.hpp"

namespace wheelcheck::scan {

using namespace detail;  // NOLINT: the shared model

namespace {

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
  return fmt::format("<summary><span class=\"g\" aria-hidden=\"true\">{}</span> {}</summary>", s.glyph, esc(c.word));
}

std::string gates_html(const Json& gates) {
  const auto lines = gate_lines(gates, true);
  if (lines.empty()) return {};
  std::string out = "<div class=\"label\">Gates</div><pre class=\"gates\">";
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" : "") + esc(lines[i]);
  return out + "</pre>";
}

std::string finding_html(const Json& f) {
  std::string out = fmt::format("<li class=\"finding sev-{}\"><span class=\"sev\">{}</span><code>{}</code>",
                                esc(one_line(str(f, "severity"))),
                                esc(str(f, "severity").empty() ? "finding" : str(f, "severity")), esc(str(f, "kind")));
  std::string dl;
  const char* k_fields[][2] = {{"member", "member"}, {"object", "image library"}, {"library", "library"},
                               {"symbol", "symbol"}, {"demangled", "demangled"},  {"required_version", "needs"}};
  for (const auto& kf : k_fields)
    if (auto v = str(f, kf[0]); !v.empty()) dl += fmt::format("<dt>{}</dt><dd><code>{}</code></dd>", kf[1], esc(v));
  if (!dl.empty()) out += "<dl class=\"f\">" + dl + "</dl>";
  if (auto v = str(f, "explanation"); !v.empty()) out += "<div>" + esc(v) + "</div>";
  if (auto v = str(f, "fix"); !v.empty()) out += "<div class=\"fix\"><b>Fix:</b> " + esc(v) + "</div>";
  return out + "</li>";
}

std::string cell_html(const Json& wheel, const Cell& c) {
  std::string body;
  switch (c.kind) {
    case CellKind::Error:
      body = "<p class=\"headline\">" + esc(str(wheel, "error")) +
             "</p><p>The wheel could not be fetched or read; no image was checked.</p>";
      break;
    case CellKind::Missing: body = "<p>The report has no result for this wheel on this image.</p>"; break;
    default: {
      const Json& r = *c.result;
      if (c.kind == CellKind::NotTargeted) {
        body += "<p>The wheel is not for this image (pip would not install it there).</p>";
      }
      if (auto h = str(r, "headline"); !h.empty()) body += "<p class=\"headline\">" + esc(h) + "</p>";
      const Json& findings = list(r, "findings");
      if (!findings.empty()) {
        body += "<div class=\"label\">Findings</div><ul class=\"findings\">";
        for (const auto& f : findings) body += finding_html(f);
        body += "</ul>";
      } else if (c.kind != CellKind::NotTargeted) {
        body += "<p>No findings.</p>";
      }
      if (auto conds = strings(r, "conditions"); !conds.empty()) {
        body += "<div class=\"label\">Conditions</div><ul class=\"conditions\">";
        for (const auto& s : conds) body += "<li>" + esc(s) + "</li>";
        body += "</ul>";
      }
      body += gates_html(field(r, "gates"));
    }
  }
  return fmt::format("<td class=\"{}\"><details>{}<div class=\"body\">{}</div></details></td>", style(c.kind).css,
                     summary_html(c), body);
}

std::string wheel_header_html(const Json& w) {
  const std::string name = wheel_name(w);
  const std::string url = str(w, "url");
  std::string out = "<th scope=\"row\">";
  if (http_url(url))
    out += fmt::format("<a href=\"{}\" rel=\"noreferrer\"><code>{}</code></a>", esc(url), esc(name));
  else
    out += "<code>" + esc(name) + "</code>";
  out += is_true(w, "new") ? "<span class=\"badge new\">new</span>" : "<span class=\"badge seen\">seen before</span>";
  if (is_true(w, "yanked")) out += "<span class=\"badge yanked\">yanked</span>";
  std::vector<std::string> sub;
  if (auto p = str(w, "project"); !p.empty()) sub.push_back(esc(p) + " " + esc(str(w, "version")));
  if (auto t = str(w, "upload_time"); !t.empty()) sub.push_back("uploaded " + esc(t));
  if (const Json& sz = field(w, "size"); sz.is_number_unsigned())
    sub.push_back(esc(format_size(sz.get<std::uint64_t>())));
  if (auto h = str(w, "sha256"); !h.empty())
    sub.push_back(fmt::format("sha256 <code title=\"{}\">{}</code>", esc(h), esc(h.substr(0, 12))));
  if (auto i = str(w, "integrity"); !i.empty()) sub.push_back("integrity " + esc(i));
  if (is_true(w, "yanked")) {
    const std::string reason = str(w, "yanked_reason");
    sub.push_back(reason.empty() ? std::string("yanked") : "yanked: " + esc(reason));
  }
  if (!sub.empty()) out += fmt::format("<div class=\"sub\">{}</div>", fmt::join(sub, " · "));
  return out + "</th>";
}

std::string pin_cell_html(const Json* pin) {
  if (pin == nullptr) return "<td class=\"v-missing\">—</td>";
  const Json& pick = field(*pin, "pick");
  std::string out;
  if (!pick.is_object()) {
    out = "<td class=\"pin-none\"><b>nothing usable</b>";
  } else {
    const std::string v = str(pick, "verdict");
    const Style s = style(verdict_kind(v));
    out = fmt::format("<td class=\"{}\"><b>{}</b> <span class=\"g\" aria-hidden=\"true\">{}</span> {}", s.css,
                      esc(str(pick, "version")), s.glyph, esc(v.empty() ? "unknown" : v));
    if (auto f = str(pick, "filename"); !f.empty()) out += "<div class=\"sub\"><code>" + esc(f) + "</code></div>";
    out += gates_html(field(pick, "gates"));
  }
  const Json& passed = list(*pin, "passed_over");
  if (!passed.empty()) {
    out += "<div class=\"label\">Passed over</div><ul class=\"passed\">";
    for (const auto& p : passed) {
      out += "<li><b>" + esc(str(p, "version")) + "</b>";
      if (auto f = str(p, "filename"); !f.empty()) out += " <code>" + esc(f) + "</code>";
      out += ": " + esc(str(p, "reason")) + "</li>";
    }
    out += "</ul>";
  }
  return out + "</td>";
}

}  // namespace

std::string report_html(const nlohmann::ordered_json& report) {
  const std::string outcome = outcome_words(report, nullptr);
  const Json& exit_code = field(report, "exit_code");
  const std::string outcome_class =
      exit_code.is_number_integer() && exit_code.get<std::int64_t>() >= 0 && exit_code.get<std::int64_t>() <= 2
          ? "outcome-" + text(exit_code)
          : "outcome-other";

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
  const Json& summary = field(report, "summary");
  out += "<ul class=\"counts\">";
  for (const auto& k : k_count_keys) out += fmt::format("<li><b>{}</b> {}</li>", esc(count_text(summary, k[0])), k[1]);
  const Json& verdicts = field(summary, "verdicts");
  out += "<li class=\"sep\">verdicts:</li>";
  for (const auto& k : k_verdict_keys)
    out += fmt::format("<li><b>{}</b> {}</li>", esc(count_text(verdicts, k[0])), k[1]);
  out += "</ul>\n<dl class=\"meta\">";
  auto meta = [&](const char* label, const std::vector<std::string>& values) {
    if (values.empty()) return;
    std::vector<std::string> e;
    for (const auto& v : values) e.push_back("<code>" + esc(v) + "</code>");
    out += fmt::format("<dt>{}</dt><dd>{}</dd>", label, fmt::join(e, ", "));
  };
  const std::vector<std::string> images = image_columns(report);
  meta("Images", images);
  meta("Projects", strings(report, "projects"));
  meta("Indexes", strings(report, "indexes"));
  if (auto s = shard_text(report); !s.empty()) out += "<dt>Shard</dt><dd>" + esc(s) + "</dd>";
  out += "<dt>Since</dt><dd>" + esc(str(report, "since").empty() ? "the beginning" : str(report, "since")) + "</dd>";
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
  const std::vector<const Json*> wheels = ordered_wheels(report);
  if (wheels.empty()) {
    out += "<p>No wheels in this report.</p>\n";
  } else {
    out += "<div class=\"scroll\">\n<table class=\"matrix\">\n<thead><tr><th scope=\"col\">Wheel</th>";
    for (const auto& img : images) out += "<th scope=\"col\"><code>" + esc(img) + "</code></th>";
    out += "</tr></thead>\n<tbody>\n";
    for (const Json* w : wheels) {
      out += is_true(*w, "new") ? "<tr class=\"new\">" : "<tr class=\"seen\">";
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
    for (const auto& w : list(report, "wheels")) {
      const Json& p = field(w, "publisher");
      std::string lines;
      for (const auto& f : list(p, "findings")) {
        const std::string sev = str(f, "severity");
        if (sev != "error" && sev != "warning") continue;
        lines += "<li><strong>" + esc(sev) + "</strong> <code>" + esc(str(f, "kind")) +
                 "</code>: " + esc(str(f, "explanation")) + "</li>";
      }
      if (lines.empty()) continue;
      items += "<li><code>" + esc(str(w, "filename")) + "</code> (" + esc(str(p, "status")) + ")<ul>" + lines +
               "</ul></li>\n";
    }
    if (!items.empty()) {
      out +=
          "<section id=\"publisher\">\n<h2>Publisher findings</h2>\n<p>What each new wheel claims against its "
          "binaries (<code>wheelcheck lint</code>), once per wheel.</p>\n<ul class=\"warnings\">" +
          items + "</ul>\n</section>\n";
    }
  }

  // Pins.
  if (field(report, "pins").is_array()) {
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
  }

  if (auto warnings = strings(report, "warnings"); !warnings.empty()) {
    out += "<section id=\"warnings\">\n<h2>Warnings</h2>\n<ul class=\"warnings\">";
    for (const auto& w : warnings) out += "<li>" + esc(w) + "</li>";
    out += "</ul>\n</section>\n";
  }

  const std::string version = str(report, "wheelcheck_version");
  const std::string generated = str(report, "generated_at");
  out += fmt::format(
      "</main>\n<footer>wheelcheck {} · report format <code>{}</code> · generated <time>{}</time></footer>\n"
      "</body>\n</html>\n",
      esc(version.empty() ? "?" : version), esc(str(report, "schema")), esc(generated.empty() ? "?" : generated));
  return out;
}

}  // namespace wheelcheck::scan
