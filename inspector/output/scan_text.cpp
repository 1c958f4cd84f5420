// The scan's standard output for people (`scan`, `scan --format text`): the counts, a row per new wheel's
// targeted cell, the publisher check's worst finding, the pins and the warnings, from the typed report.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wheelcheck/lint.hpp"
#include "wheelcheck/report.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::scan {

namespace {

// "1 wheel", "2 wheels", "0 errors".
std::string scan_text_count(std::uint64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

std::string report_text(const Report& r) {
  const Summary s = r.summary();
  std::string out =
      fmt::format("scan: {} listed, {} new, {} checked, {}\n", scan_text_count(s.wheels_seen, "wheel", "wheels"),
                  s.fresh, s.checked, scan_text_count(s.errors, "error", "errors"));
  // A large scan lists the wheels that need a look (an error, a targeted cell that is not compatible, a publisher
  // finding); the rest are counted (report.json, .md and .html have every one).
  const bool all = r.wheel_count() <= 300;
  std::uint64_t quiet = 0;
  r.each_wheel([&](const Wheel& w) {
    if (!all && !w.error && (!w.publisher || lint::headline(*w.publisher).empty()) &&
        std::none_of(w.results.begin(), w.results.end(), [](const Checked& c) {
          return c.cell.targeted && c.cell.report.verdict != verdict::Verdict::Compatible;
        })) {
      ++quiet;
      return;
    }
    out += "  " + w.filename + "\n";
    if (w.error) out += "    error: " + *w.error + "\n";
    // What was checked, a row each; the images the wheel is not for (its tags, Requires-Python) only counted:
    // report.json, .md and .html keep every cell, with why.
    std::vector<std::string> skipped;
    for (const auto& c : w.results) {
      if (!c.cell.targeted) {
        skipped.push_back(c.cell.image);
        continue;
      }
      out += fmt::format("    {:<16} {:<13}{}{}\n", c.cell.image, verdict::verdict_name(c.cell.report.verdict),
                         c.cell.headline.empty() ? "" : "  ", c.cell.headline);
    }
    if (!skipped.empty()) {
      out += fmt::format("    not targeted on {}{} (the report says why)\n",
                         scan_text_count(skipped.size(), "image", "images"),
                         skipped.size() <= 3 ? ": " + join(skipped, ", ") : std::string());
    }
    // The wheel on its own (`wheelcheck lint`), once: its worst finding, when it has one above information.
    if (w.publisher) {
      if (const std::string headline = lint::headline(*w.publisher); !headline.empty()) {
        std::size_t more = 0;
        for (const auto& f : w.publisher->findings) more += f.severity != verdict::Severity::Info ? 1 : 0;
        out += fmt::format("    {:<16} {:<13}  {}{}\n", "publisher", lint::status_name(w.publisher->status), headline,
                           more > 1 ? fmt::format(" (+{} more in the report)", more - 1) : "");
      }
    }
  });
  if (quiet != 0)
    out += fmt::format("  ... and {} wheels compatible wherever they are for (the report lists them)\n", quiet);
  // A shard's pins see only its own share of the new wheels: a project another shard checks would read
  // "nothing usable". The merge pins from every shard's results; a shard says so once.
  if (r.a_shard()) {
    out += fmt::format(
        "pins: shard {} of {} checks a share of the new wheels; `scan --merge` pins from every shard's results\n",
        r.shard.index, r.shard.count);
  } else {
    r.each_pin([&](const Pin& p) {
      out += fmt::format("pin {} on {}: {}\n", p.project, p.image,
                         !p.pick ? std::string("nothing usable")
                                 : p.pick->version + (p.pick->variant ? ", variant " + *p.pick->variant : "") + " (" +
                                       verdict::verdict_name(p.pick->verdict) + ")");
      // A variant whose support waits on a fact the image leaves unknown (driver, GPUs): said beside the pin.
      if (p.pick) {
        for (const auto& why : p.pick->undecided) out += "    it depends: " + why + "\n";
      }
    });
  }
  for (const auto& w : r.warnings) out += "wheelcheck: warning: " + w + "\n";
  return out;
}

}  // namespace wheelcheck::scan
