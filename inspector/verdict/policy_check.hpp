// Internal to the verdict: the parts of a check shared by image checks (check.cpp) and packaging-target
// checks (policy_check.cpp).
#pragma once

#include <vector>

#include "wheelcheck/policy.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

// A report naming the wheel and the image, nothing judged yet.
Report report_for(const WheelProfile& wheel, const image::Image& image);

// The archive's own problems, RECORD's, and members that are not readable ELF.
std::vector<Finding> archive_findings(const WheelProfile& wheel);

// The wheel's platform tag claims more than its binaries deliver (policy::check_claim) as a finding:
// an error where the claim decides the answer (`decides`), a warning elsewhere.
Finding tag_claim_finding(const policy::Overclaim& claim, bool decides);

// A check against a packaging target (image.policy names its tag): the wheel judged as the policy does.
Report check_policy(const WheelProfile& wheel, const image::Image& target, const CheckOptions& options);

}  // namespace wheelcheck::verdict
