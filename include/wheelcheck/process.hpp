// Process set-up before any command runs, and what the build is (inspector/util/process.cpp).
#pragma once

#include <string>

namespace wheelcheck {

// OpenSSL never loads a configuration file, and a static glibc resolves host names with its built-in
// modules only. Call first thing in main(); false when OpenSSL cannot be initialised.
[[nodiscard]] bool prepare_process();
// What `wheelcheck --version` says after the version: "static, x86_64; glibc 2.36, ..., LIEF 0.9.0".
std::string build_description();

}  // namespace wheelcheck
