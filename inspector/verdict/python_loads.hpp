// Internal to the verdict: the loads the wheel's Python code makes (include/wheelcheck/python.hpp), judged
// as glibc would judge them, and the imports a load that fails at import breaks (python_loads.cpp).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "wheelcheck/profile.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

// The members of the wheel its Python code loads by path (they are loads of their own, whoever else needs them).
std::set<std::string> python_loaded_members(const WheelProfile& wheel);

// The members the wheel's Python code loads with RTLD_GLOBAL at import (resolve::Space::python_globals).
std::vector<const resolve::Object*> python_global_loads(const WheelProfile& wheel, const resolve::Space& space);

// One finding per load of the checked wheel's Python code (and per load in a wheel beside it that breaks
// one of its imports): an error where it fails at import for certain, naming every import it breaks, a
// condition where that depends on what the image does not state (or on an `if`), info where it loads, runs
// only when called, or cannot be resolved statically. `findings` are the check's so far: a member with an
// error of its own (an executable stack on glibc 2.41) fails its load too.
std::vector<Finding> python_load_findings(const WheelProfile& wheel, const std::vector<const WheelProfile*>& with,
                                          const resolve::Space& space, const image::Image& image,
                                          const std::vector<toolkit::Provider>* providers,
                                          const std::vector<Finding>& findings);

}  // namespace wheelcheck::verdict
