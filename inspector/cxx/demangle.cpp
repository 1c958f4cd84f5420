// The demangler: abi::__cxa_demangle from the C++ runtime, which reads the Itanium C++ ABI that GCC and
// Clang use on Linux.
#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "wheelcheck/cxx_names.hpp"

namespace wheelcheck::cxx {

std::optional<std::string> demangle(std::string_view mangled) {
  if (mangled.size() < 3 || mangled.substr(0, 2) != "_Z") return std::nullopt;
  const std::string name(mangled);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return std::nullopt;
  return std::string(out.get());
}

std::string demangle_or_self(std::string_view name) {
  auto d = demangle(name);
  return d ? *d : std::string(name);
}

}  // namespace wheelcheck::cxx
