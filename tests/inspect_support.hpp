// The wheel that the tests of inspect pack: an extension module, the library it needs (in .data/platlib,
// found through its RUNPATH), an executable script, a Python file and a ".so" that is no ELF; and the
// "kind:path" form of a profile's problems.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "support.hpp"
#include "wheelcheck/profile.hpp"

namespace wheelcheck::test {

struct Built {
  std::string ext, helper, tool, init, fake;
};

inline Built build_members(const TempDir& dir) {
  Built b;
  std::string error;
  auto helper = build_shared(dir, "libhelper.so", "helper.c", "int helper(int x) { return x + 1; }\n",
                             "-Wl,-soname,libhelper.so", "gcc", &error);
  if (!helper) throw std::runtime_error(error);
  b.helper = *helper;
  auto ext =
      build_shared(dir, "ext.so", "ext.c", "int helper(int);\nint PyInit_ext(void) { return helper(1); }\n",
                   "-L" + dir.path() + " -lhelper -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/lib'", "gcc", &error);
  if (!ext) throw std::runtime_error(error);
  b.ext = *ext;
  const auto src = dir.write("tool.c", "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n");
  b.tool = dir.file("tool");
  const auto r = run("gcc -o " + shell_quote(b.tool) + " " + shell_quote(src));
  if (r.exit_code != 0) throw std::runtime_error(r.err);
  b.init = dir.write("__init__.py", "from .ext import *\n");
  b.fake = dir.write("fake.so", "not an ELF, whatever the name says\n");
  return b;
}

inline std::vector<std::pair<std::string, std::string>> layout(const Built& b) {
  return {{"pkg/__init__.py", b.init},
          {"pkg/ext.cpython-312-x86_64-linux-gnu.so", b.ext},
          {"pkg/fake.so", b.fake},
          {"pkg-1.0.data/platlib/pkg/lib/libhelper.so", b.helper},
          {"pkg-1.0.data/scripts/tool", b.tool}};
}

inline const std::string k_name = "pkg-1.0-cp312-cp312-linux_x86_64.whl";

inline std::vector<std::string> kinds(const std::vector<wheel::Problem>& problems) {
  std::vector<std::string> out;
  for (const auto& p : problems) out.push_back(p.kind + ":" + p.path);
  return out;
}

}  // namespace wheelcheck::test
