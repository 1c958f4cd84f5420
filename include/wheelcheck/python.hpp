// The wheel's Python sources, read without running them (inspector/python/source.cpp): the native files
// each module loads (ctypes.CDLL, torch.ops.load_library, cffi's ffi.dlopen, ...) and the modules it
// imports, each with whether it runs at the module's import or later (inside a function), and the
// exceptions a surrounding `try` catches. The check (inspector/verdict/python_loads.cpp) turns a load that
// fails at import into the imports it breaks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wheelcheck::python {

// Where the code runs: at the module's import, at import only under a condition (an `if`, an `else`),
// or only when a function is called (a `def` body, a lambda), or never at import (`if __name__ ==
// "__main__":`, `if TYPE_CHECKING:`).
enum class When { Import, Conditional, Called, Never };
std::string_view when_name(When when);  // "import", "conditional", "called", "never"

// A load of a native file.
struct Load {
  int line = 0;
  std::string call;  // as the code names it, canonical: "ctypes.CDLL", "torch.ops.load_library", "ffi.dlopen"
  // What the argument evaluates to, statically: a path inside the wheel, relative to where it is installed
  // (built from __file__: "triton/_C/libflagcx.so"); a path of the image ("/usr/lib/libx.so"); a bare name
  // the loader searches for ("libcudart.so.12"); or nothing (Target::Unresolved: `expression` says what).
  enum class Target { Wheel, Absolute, Name, Unresolved };
  Target target = Target::Unresolved;
  std::string path;
  std::string expression;  // the argument as written (shortened), for the evidence
  std::string unresolved;  // why it could not be resolved ("ctypes.util.find_library asks ldconfig at run time")
  bool global = false;     // RTLD_GLOBAL
  When when = When::Import;
  std::string condition;  // the `if` it runs under (When::Conditional): "line 12: if sys.platform == 'linux'"
  // What the `try` blocks around it catch, innermost first ("ImportError", "OSError", "*" for a bare
  // `except:`); empty when none does.
  std::vector<std::string> caught;
};
std::string_view target_name(Load::Target target);  // "wheel", "absolute", "name", "unresolved"

// An import statement of a module that runs at its import (imports inside functions are not kept).
struct Import {
  int line = 0;
  std::string module;  // absolute dotted name: "triton.experimental.tle" (a relative import resolved)
  When when = When::Import;
  std::vector<std::string> caught;
};

struct Module {
  std::string file;  // the member: "triton/experimental/tle/language/flagcx_wrapper.py"
  std::string name;  // "triton.experimental.tle.language.flagcx_wrapper" ("" for a file outside a package)
  std::vector<Import> imports;
  std::vector<Load> loads;
  std::string error;  // why the file could not be read (not UTF-8, too large); nothing else is then known
};

// What was read of a wheel's Python sources.
struct Sources {
  bool read = false;            // false: not read (a headers-only read told to skip them)
  std::uint64_t files = 0;      // .py members
  std::uint64_t bytes = 0;      // their uncompressed size
  std::vector<Module> modules;  // those with an import or a load kept (archive order)
  std::string skipped;          // why they were not read (read == false)
};

// The dotted module name a member's path gives ("a/b/__init__.py" -> "a.b", "a/b/c.py" -> "a.b.c"); "" for
// what no import reaches (.data/, .dist-info/, a name that is not an identifier).
std::string module_name(std::string_view file);

// Reads one source file. Never throws on bad source: what it cannot parse it passes over.
Module read_module(std::string_view file, std::string_view text);

// Whether an exception of `type` raised there is caught by one of `caught` ("OSError" is caught by OSError,
// EnvironmentError, IOError, Exception, BaseException and a bare except).
bool catches(const std::vector<std::string>& caught, std::string_view type);

// The largest .py member that is read (a larger one is listed with an error).
inline constexpr std::uint64_t k_max_source = std::uint64_t{8} << 20;

}  // namespace wheelcheck::python
