// Internal to the verdict: the draft findings are made from (include/wheelcheck/checks.hpp, which the
// publisher check shares), and a classification read back by name (inspector/verdict/findings.cpp).
#pragma once

#include <string_view>

#include "wheelcheck/checks.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

// The Why a name of why_name stands for (classify_missing_symbol reports its answer by name); None
// for "" or a name it does not know.
Why why_of(std::string_view name);

}  // namespace wheelcheck::verdict
