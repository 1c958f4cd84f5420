// Renderings of a `wheelcheck scan` report (scan::Report, include/wheelcheck/scan.hpp): Markdown for a CI job
// summary ($GITHUB_STEP_SUMMARY), one self-contained static HTML page (inline CSS, no JavaScript), and the text
// the scan prints for people.
//
// Every text of the report is escaped (HTML entities; Markdown punctuation, `|` and newlines in table cells),
// and links are only made for http(s) URLs. The output depends on nothing but the report, so the same report
// always renders byte for byte the same.
#pragma once

#include <functional>
#include <string>

namespace wheelcheck::scan {

struct Report;

// GitHub-flavoured Markdown: outcome heading, counts, a wheels x images verdict table, a bullet per
// non-compatible targeted cell, the pins (image x project) with what was passed over, the warnings.
std::string report_markdown(const Report& report);

// One HTML5 page: summary header, a wheels x images matrix whose cells are coloured by verdict and
// open their findings with <details>, a legend, the pins table, the warnings and a footer.
std::string report_html(const Report& report);
// report.html and, for a report too large for one page (more than 300 wheels), a page per project with new wheels
// ("projects/N-NAME.html", linked from the first page's rows): each page's path under the report folder and its text,
// made one at a time (a project's wheels are held, never the report's).
void report_html_pages(const Report& report,
                       const std::function<void(const std::string& path, const std::string& text)>& page);

// The scan's standard output for people (--format text): the counts, a row per new wheel's targeted cell, its
// publisher check's worst finding, the pins (a shard's are left to its merge) and the warnings.
std::string report_text(const Report& report);

}  // namespace wheelcheck::scan
