// Internal to the verdict (the publisher check asks lint_import_rules, include/wheelcheck/checks.hpp): CPython's
// import of an extension module (inspector/verdict/import_rules.cpp). `import pkg.foo` finds pkg/foo<suffix> for the
// suffixes of importlib.machinery.EXTENSION_SUFFIXES only ('.cpython-312-x86_64-linux-gnu.so', '.abi3.so', '.so'), then
// looks up PyInit_foo in it; a member named for another Python is never imported, one without that function
// is refused.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelcheck/checks.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

// One CPython 3.X: its minor version and whether it is a free-threaded build (3.13t).
struct Cpython {
  int minor = 0;
  bool free_threaded = false;
};

// What a member's file name asks of the importer: "foo.cpython-311-x86_64-linux-gnu.so" is module "foo" with
// the suffix ".cpython-311-x86_64-linux-gnu.so" (soabi "311", multiarch "x86_64-linux-gnu").
struct ExtensionName {
  enum class Kind { Versioned, Abi3, Plain };
  Kind kind = Kind::Plain;
  std::string module;     // "foo": the last component of the dotted name
  std::string suffix;     // ".cpython-311-x86_64-linux-gnu.so", ".abi3.so", ".so"
  std::string soabi;      // "311", "313t", "37m" (Versioned only)
  std::string multiarch;  // "x86_64-linux-gnu" (Versioned only; "" when the suffix names none)
};
// nullopt for a name no CPython imports as an extension (not ending in .so, a PyPy suffix, no module name).
std::optional<ExtensionName> extension_name(std::string_view file_name);

// The multiarch triplet CPython's configure gives a machine (elf::machine_name's or a platform tag's arch)
// with glibc or musl: "x86_64-linux-gnu", "i386-linux-gnu", "aarch64-linux-musl"; "" when unknown.
std::string multiarch_of(const std::string& machine, bool musl);

// importlib.machinery.EXTENSION_SUFFIXES of CPython 3.X on `multiarch` (a free-threaded build has no .abi3.so).
std::vector<std::string> extension_suffixes(const Cpython& python, const std::string& multiarch);

// The function CPython looks up for a module named `module` (UTF-8): PyInit_foo, or PyInitU_<punycode> for a
// name that is not ASCII (with '-' written '_').
std::string init_function(std::string_view module);

// The image check: each extension member whose suffix the image's Python does not import (an error unless a
// sibling serves the same module; a condition when the image's Python is unknown and the suffix contradicts the
// wheel's own tags), and each one it imports that does not export its PyInit_ function (an error). `python` is
// the Python the wheel's tags select (null: none is described).
std::vector<Finding> check_import_rules(const WheelProfile& wheel, const image::Image& image,
                                        const image::Python* python);

}  // namespace wheelcheck::verdict
