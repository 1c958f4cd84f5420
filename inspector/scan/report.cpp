// What the scan's typed report says of itself (include/wheelcheck/scan.hpp): its cells (checked_of), its exit code
// and worst verdict, computed from them, and its counts (summary_of).
#include <cstdint>
#include <vector>

#include "wheelcheck/error.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::scan {

Checked checked_of(const run::Cell& cell, bool counted) {
  return {cell, run::cell_gates(cell), cell.targeted && counted};
}

int Report::exit_code() const {
  // Each index or wheel that could not be read is an error of the report (a wheel's is also its "error").
  bool failed = !errors.empty();
  bool incompatible = false;
  for (const auto& w : wheels) {
    failed = failed || w.failed();
    for (const auto& c : w.results) {
      if (c.counted && c.cell.report.verdict == verdict::Verdict::Incompatible) incompatible = true;
    }
  }
  if (failed) return k_exit_bad_input;
  return incompatible ? 1 : 0;
}

verdict::Verdict Report::worst_new_verdict() const {
  verdict::Verdict worst = verdict::Verdict::Compatible;
  for (const auto& w : wheels) {
    if (!w.is_new) continue;
    for (const auto& c : w.results) {
      if (c.counted) worst = verdict::worst(worst, c.cell.report.verdict);  // as the exit code counts them
    }
  }
  return worst;
}

Summary summary_of(const std::vector<Wheel>& wheels, std::uint64_t wheels_seen) {
  Summary s;
  s.wheels_seen = wheels_seen;
  s.fresh = wheels.size();
  for (const auto& w : wheels) {
    if (w.failed()) ++s.errors;
    for (const auto& c : w.results) {
      if (!c.cell.targeted) {
        ++s.not_targeted;
        continue;
      }
      switch (c.cell.report.verdict) {
        case verdict::Verdict::Compatible: ++s.compatible; break;
        case verdict::Verdict::Degraded: ++s.degraded; break;
        case verdict::Verdict::Incompatible: ++s.incompatible; break;
        case verdict::Verdict::Unknown: ++s.unknown; break;
      }
    }
  }
  s.checked = s.fresh - s.errors;
  return s;
}

}  // namespace wheelcheck::scan
