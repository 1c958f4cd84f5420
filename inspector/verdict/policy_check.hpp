// Internal to the verdict: the parts of a check shared by image checks (check.cpp) and packaging-target
// checks (policy_check.cpp); those the publisher check shares too are in include/wheelcheck/checks.hpp.
#pragma once

#include <vector>

#include "wheelcheck/checks.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

// A report naming the wheel and the image, nothing judged yet.
Report report_for(const WheelProfile& wheel, const image::Image& image);

// A check against a packaging target (image.policy names its tag): the wheel judged as the policy does.
Report check_policy(const WheelProfile& wheel, const image::Image& target, const CheckOptions& options);

}  // namespace wheelcheck::verdict
