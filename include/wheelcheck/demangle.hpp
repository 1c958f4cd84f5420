// C++ names for people: `_ZN3c1013MessageLoggerC1EPKcii` -> `c10::MessageLogger::MessageLogger(char const*, int, int)`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace wheelcheck {

// The demangled name (abi::__cxa_demangle, the Itanium C++ ABI that GCC and Clang use on Linux), or
// nullopt when `mangled` is not a mangled C++ name.
std::optional<std::string> demangle(std::string_view mangled);
// The demangled name when there is one, else `name` itself.
std::string demangle_or_self(std::string_view name);

}  // namespace wheelcheck
