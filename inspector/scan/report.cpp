// What the scan's typed report says of itself (include/wheelcheck/scan.hpp): its cells (checked_of), its exit code
// and worst verdict, computed from them, and its counts (summary_of).
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "wheelcheck/error.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::scan {

Checked checked_of(const run::Cell& cell, bool counted) {
  return {cell, run::cell_gates(cell), cell.targeted && counted};
}

void Report::each_wheel(const std::function<void(const Wheel&)>& fn) const {
  for (const auto& w : wheels) fn(w);
  if (stored) stored->each_wheel(fn);
}

void Report::each_pin(const std::function<void(const Pin&)>& fn) const {
  for (const auto& p : pins) fn(p);
  if (stored) stored->each_pin(fn);
}

void Report::each_pin_of(const std::string& project, const std::function<void(const Pin&)>& fn) const {
  for (const auto& p : pins) {
    if (p.project == project) fn(p);
  }
  if (stored) stored->each_pin_of(project, fn);
}

namespace {

void count_wheel(Tally& t, const Wheel& w) {
  ++t.summary.fresh;
  if (w.failed()) {
    ++t.summary.errors;
    t.failed = true;
  }
  for (const auto& c : w.results) {
    if (c.counted && c.cell.report.verdict == verdict::Verdict::Incompatible) t.incompatible = true;
    if (c.counted && w.is_new) t.worst = verdict::worst(t.worst, c.cell.report.verdict);  // as the exit code counts
    if (!c.cell.targeted) {
      ++t.summary.not_targeted;
      continue;
    }
    switch (c.cell.report.verdict) {
      case verdict::Verdict::Compatible: ++t.summary.compatible; break;
      case verdict::Verdict::Degraded: ++t.summary.degraded; break;
      case verdict::Verdict::Incompatible: ++t.summary.incompatible; break;
      case verdict::Verdict::Unknown: ++t.summary.unknown; break;
    }
  }
}

}  // namespace

Tally Report::tally() const {
  if (m_tally) return *m_tally;
  Tally t;
  t.summary.wheels_seen = wheels_seen;
  each_wheel([&](const Wheel& w) { count_wheel(t, w); });
  t.summary.checked = t.summary.fresh - t.summary.errors;
  // Each index or wheel that could not be read is an error of the report (a wheel's is also its "error").
  t.failed = t.failed || !errors.empty();
  if (stored) m_tally = std::make_shared<const Tally>(t);  // held wheels may change; stored ones do not
  return t;
}

int Report::exit_code() const {
  const Tally t = tally();
  if (t.failed) return k_exit_bad_input;
  return t.incompatible ? 1 : 0;
}

verdict::Verdict Report::worst_new_verdict() const {
  return tally().worst;
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
