// Internal to the verdict: routes and the verdict they decide (inspector/verdict/routes.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "wheelcheck/profile.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/rules.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

// The routes of `rules` found in these wheels, into report.routes: the members each covers, whether it is
// available (no error names one of its members, and the routes it depends on are available), why not,
// and the gates that turn it off.
void evaluate_routes(Report& report, const rules::RuleSet& rules, const resolve::Space& space,
                     const WheelProfile& wheel);

// What decides the verdict, counted: errors outside unavailable optional routes, errors inside them
// (never an integrity error), conditions outside them, and warnings.
struct Tally {
  std::size_t errors = 0;
  std::size_t route_errors = 0;
  std::size_t conditions = 0;
  std::size_t route_conditions = 0;  // conditions within optional routes that are off: they decide nothing
  std::size_t warnings = 0;
};
Tally tally(const Report& report);
// Errors -> incompatible; else conditions -> unknown; else errors confined to optional routes that are
// off -> degraded; else compatible.
Verdict verdict_of(const Tally& tally);

// The vendor's own fixes (rules' "known") added to the findings they match, after the check's own fix.
void apply_known(Report& report, const rules::RuleSet& rules, const std::string& wheel_name);

// The verdict of a report whose findings and routes are in, with its conditions (each once).
void decide(Report& report);

// The conditions `accepted` covers (inspector/verdict/accept.cpp), for `wheel` (a file name) on `image`:
// information saying who accepted them; the verdict decided again when one was.
void apply_acceptances(Report& report, const std::string& wheel, const std::string& image,
                       const std::vector<Acceptance>& accepted);

}  // namespace wheelcheck::verdict
