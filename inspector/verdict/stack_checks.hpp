// Internal to the verdict: what a wheel and an image's stack say beyond the loader's search
// (inspector/verdict/stack_checks.cpp).
#pragma once

#include <string>
#include <vector>

#include "wheelcheck/checks.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/rules.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

// Members built against NumPy 1.x's C API where numpy 2 is installed (a wheel beside it, else the image's).
std::vector<Finding> check_numpy_abi(const WheelProfile& wheel, const image::Image& image,
                                     const std::vector<const WheelProfile*>& with);

// The rule set's requires_env: an environment error where a variable is unset, a note where only bash has it.
struct EnvChecks {
  std::vector<Finding> findings;
  std::vector<std::string> notes;
};
EnvChecks check_required_env(const WheelProfile& wheel, const image::Image& image, const rules::RuleSet& rules,
                             const std::vector<const WheelProfile*>& with);

// The note an answer needs when the need was met from the host or through bash-only LD_LIBRARY_PATH; "" else.
std::string environment_note(const resolve::Need& need, const image::Image& image);

// The wheel's own symbol (rules' own_symbols), left undefined: an error whatever unknown tables are in scope.
Finding own_symbol_finding(const WheelProfile& wheel, const resolve::Unbound& u, const rules::OwnSymbols& own);

}  // namespace wheelcheck::verdict
