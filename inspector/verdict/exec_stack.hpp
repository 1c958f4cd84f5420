// Executable stacks (finding kind exec-stack): a library whose PT_GNU_STACK asks for an executable stack, or
// that has none where the machine's default is one (elf::Binary::executable_stack). glibc 2.41 and later
// refuse to dlopen it ("cannot enable executable stack as shared object requires: Invalid argument"); older
// ones load it and make the stack of every thread executable. A program's own DT_NEEDED, loaded as it starts,
// still may. tests/loader/execstack.py checks each sentence with Debian's loaders of 2.36 and 2.41.
#pragma once

#include <string>
#include <vector>

#include "wheelcheck/elf.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

// The first glibc that refuses to dlopen a library asking for an executable stack.
inline constexpr const char* k_exec_stack_refused_from = "2.41";

// What the file says, in readelf's words: "PT_GNU_STACK RWE", "no PT_GNU_STACK (an executable stack on x86_64)".
std::string exec_stack_words(const elf::Binary& binary);

// The check's (inspector/verdict/check.cpp, after every root's load): each member of the checked wheel that asks
// for an executable stack and that a root's load maps by dlopen (an extension module's import, a library
// loaded on its own), against the image's glibc: an error from 2.41 on (loaded_by: every such root), a
// warning before, a condition where the version is not stated; info where only a program's start loads it.
std::vector<Finding> exec_stack_findings(const resolve::Space& space, const image::Image& image,
                                         const std::vector<const resolve::Object*>& roots);

// The publisher check's (inspector/lint/lint.cpp), with no image: a warning on each shared-object member
// that asks for an executable stack.
std::vector<Finding> exec_stack_lint(const WheelProfile& wheel);

}  // namespace wheelcheck::verdict
