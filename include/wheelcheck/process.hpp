// Process set-up before any command runs, and what the build is (inspector/util/process.cpp).
#pragma once

#include <string>

namespace wheelcheck {

// OpenSSL never loads a configuration file, and a static glibc resolves host names with its built-in
// modules only. Call first thing in main(); false when OpenSSL cannot be initialised.
[[nodiscard]] bool prepare_process();
// wheelcheck's version ("0.1.0"): the project's, set where the core library is built (the command line's files
// ask for it here rather than read the core's compile definition).
std::string version();
// What `wheelcheck --version` says after the version: "static, x86_64; glibc 2.36, ..., LIEF 0.9.0".
std::string build_description();

}  // namespace wheelcheck
