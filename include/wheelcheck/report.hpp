// Renderings of a `wheelcheck scan` report (docs/scan.schema.json): Markdown for a CI job summary
// ($GITHUB_STEP_SUMMARY) and one self-contained static HTML page (inline CSS, no JavaScript).
//
// Both read the report as untrusted: a missing or mistyped optional field renders as absent rather
// than throwing, every text from the report is escaped (HTML entities; Markdown punctuation, `|` and
// newlines in table cells), and links are only made for http(s) URLs. The output depends on nothing
// but the report, so the same report always renders byte for byte the same.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace wheelcheck::scan {

// GitHub-flavoured Markdown: outcome heading, counts, a wheels x images verdict table, a bullet per
// non-compatible targeted cell, the pins (image x project) with what was passed over, the warnings.
std::string report_markdown(const nlohmann::ordered_json& report);

// One HTML5 page: summary header, a wheels x images matrix whose cells are coloured by verdict and
// open their findings with <details>, a legend, the pins table, the warnings and a footer.
std::string report_html(const nlohmann::ordered_json& report);

}  // namespace wheelcheck::scan
