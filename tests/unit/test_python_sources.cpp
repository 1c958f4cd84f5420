// The Python source reader (inspector/python/source.cpp): the loads and imports it finds, where they run,
// and what it refuses to guess. Whether CPython agrees is tests/loader/python_loads.py's job.
#include <gtest/gtest.h>

#include "wheelcheck/python.hpp"

namespace wheelcheck::python {
namespace {

const Load& only_load(const Module& m) {
  EXPECT_EQ(m.loads.size(), 1U) << m.file;
  static const Load none;
  return m.loads.empty() ? none : m.loads.front();
}

// The modules a module imports at its import, in order.
std::vector<std::string> imported(const Module& m) {
  std::vector<std::string> names;
  for (const auto& i : m.imports) names.push_back(i.module);
  return names;
}

TEST(PythonSources, ModuleNames) {
  EXPECT_EQ(module_name("triton/experimental/tle/__init__.py"), "triton.experimental.tle");
  EXPECT_EQ(module_name("triton/_C/x.py"), "triton._C.x");
  EXPECT_EQ(module_name("top.py"), "top");
  EXPECT_EQ(module_name("pkg-1.0.data/scripts/x.py"), "");
  EXPECT_EQ(module_name("pkg-1.0.dist-info/x.py"), "");
  EXPECT_EQ(module_name("pkg/lib.so"), "");
}

TEST(PythonSources, FlagTreeWrapperLoadsAtImport) {
  const std::string src = R"(# FlagTree's TLE wrapper, as FlagTree#1234 shipped it
import os
import ctypes

_here = os.path.dirname(os.path.abspath(__file__))
_lib_dir = os.path.join(_here, "..", "..", "..", "_C")
_lib = ctypes.CDLL(os.path.join(_lib_dir, "libflagcx.so"))
)";
  const Module m = read_module("triton/experimental/tle/language/flagcx_wrapper.py", src);
  EXPECT_EQ(m.name, "triton.experimental.tle.language.flagcx_wrapper");
  const Load& l = only_load(m);
  EXPECT_EQ(l.line, 7);
  EXPECT_EQ(l.call, "ctypes.CDLL");
  EXPECT_EQ(l.target, Load::Target::Wheel);
  EXPECT_EQ(l.path, "triton/_C/libflagcx.so");
  EXPECT_EQ(l.when, When::Import);
  EXPECT_FALSE(l.global);
  EXPECT_TRUE(l.caught.empty());
}

TEST(PythonSources, LazyLoadRunsWhenCalled) {
  const std::string src = R"(import os, ctypes
_lib = None

def load():
    global _lib
    if _lib is None:
        _lib = ctypes.CDLL(os.path.join(os.path.dirname(__file__), "libx.so"))
    return _lib

get = lambda: ctypes.cdll.LoadLibrary("liby.so.1")
)";
  const Module m = read_module("pkg/w.py", src);
  ASSERT_EQ(m.loads.size(), 2U);
  EXPECT_EQ(m.loads[0].when, When::Called);
  EXPECT_EQ(m.loads[0].path, "pkg/libx.so");
  EXPECT_EQ(m.loads[0].line, 7);
  EXPECT_EQ(m.loads[1].when, When::Called);  // a lambda's body
  EXPECT_EQ(m.loads[1].target, Load::Target::Name);
  EXPECT_EQ(m.loads[1].path, "liby.so.1");
}

TEST(PythonSources, ModesAliasesAndPathlib) {
  const std::string src = R"(from ctypes import CDLL, RTLD_GLOBAL
import ctypes as C
from pathlib import Path
import torch

CDLL(str(Path(__file__).parent / "lib" / "libdep.so"), mode=RTLD_GLOBAL)
C.CDLL("/usr/lib/x86_64-linux-gnu/libnuma.so.1", C.RTLD_GLOBAL)
torch.ops.load_library(Path(__file__).resolve().parent.joinpath("_ops.so"))
)";
  const Module m = read_module("pkg/__init__.py", src);
  ASSERT_EQ(m.loads.size(), 3U);
  EXPECT_EQ(m.loads[0].path, "pkg/lib/libdep.so");
  EXPECT_TRUE(m.loads[0].global);
  EXPECT_EQ(m.loads[1].target, Load::Target::Absolute);
  EXPECT_TRUE(m.loads[1].global);
  EXPECT_EQ(m.loads[2].call, "torch.ops.load_library");
  EXPECT_EQ(m.loads[2].path, "pkg/_ops.so");
  EXPECT_FALSE(m.loads[2].global);
}

TEST(PythonSources, WhatItCannotEvaluateIsSaidNotGuessed) {
  const std::string src = R"(import ctypes, ctypes.util, os
ctypes.CDLL(ctypes.util.find_library("cudart"))
name = os.environ.get("LIB", "libz.so.1")
ctypes.CDLL(name)
ctypes.CDLL(f"lib{name}.so")
ctypes.CDLL("build/libx.so")
)";
  const Module m = read_module("pkg/m.py", src);
  ASSERT_EQ(m.loads.size(), 4U);
  for (const auto& l : m.loads) EXPECT_EQ(l.target, Load::Target::Unresolved) << l.expression;
  EXPECT_NE(m.loads[0].unresolved.find("find_library"), std::string::npos);
  EXPECT_NE(m.loads[3].unresolved.find("working directory"), std::string::npos);
}

TEST(PythonSources, ContextsOfImportsAndLoads) {
  const std::string src = R"(import sys
try:
    import triton.experimental.tle as tle
    HAS_TLE = True
except ImportError:
    HAS_TLE = False
from . import ops
from .runtime import backend as be
if sys.platform == "linux":
    import ctypes
    ctypes.CDLL("libnuma.so.1")
else:
    pass
if __name__ == "__main__":
    import ctypes
    ctypes.CDLL("libmain.so")
try:
    import ctypes
    ctypes.CDLL("libopt.so")
except (OSError, ImportError):
    pass
s = """ctypes.CDLL("libinstring.so")  # not code"""
)";
  const Module m = read_module("flag_gems/__init__.py", src);
  ASSERT_FALSE(m.imports.empty());
  auto find = [&](const std::string& name) -> const Import* {
    for (const auto& i : m.imports)
      if (i.module == name) return &i;
    return nullptr;
  };
  const Import* tle = find("triton.experimental.tle");
  ASSERT_NE(tle, nullptr);
  EXPECT_EQ(tle->line, 3);
  EXPECT_EQ(tle->caught, std::vector<std::string>{"ImportError"});
  EXPECT_FALSE(catches(tle->caught, "OSError"));
  EXPECT_TRUE(catches(tle->caught, "ImportError"));
  EXPECT_NE(find("flag_gems.ops"), nullptr);
  EXPECT_NE(find("flag_gems.runtime.backend"), nullptr);
  ASSERT_EQ(m.loads.size(), 3U);
  EXPECT_EQ(m.loads[0].when, When::Conditional);
  EXPECT_NE(m.loads[0].condition.find("line 9"), std::string::npos);
  EXPECT_EQ(m.loads[1].when, When::Never);
  EXPECT_EQ(m.loads[2].when, When::Import);
  EXPECT_TRUE(catches(m.loads[2].caught, "OSError"));
}

// Headers whose body is on the same line, and a file whose only loader sits in a plain statement (found on the
// first pass, which keeps imports and headers only, and read again whole).
TEST(PythonSources, InlineBodiesAndALoaderInAPlainStatement) {
  const Module m = read_module("pkg/__init__.py",
                               "from typing import TYPE_CHECKING\n"
                               "if TYPE_CHECKING: import never_at_import\n"
                               "try: import fast_path\n"
                               "except ImportError: fast_path = None\n"
                               "x = {'a': 1}\n"
                               "_lib = __import__('ctypes').PyDLL('libpy.so')\n"
                               "lib = ctypes.PyDLL('libpy.so')\n");
  EXPECT_EQ(imported(m), (std::vector<std::string>{"typing", "typing.TYPE_CHECKING", "fast_path"}));
  ASSERT_EQ(m.imports.size(), 3U);
  EXPECT_EQ(m.imports[2].caught, std::vector<std::string>{"ImportError"});
  // `ctypes` is never imported here, so `ctypes.PyDLL` is taken at its word: the name is the loader's.
  ASSERT_EQ(m.loads.size(), 1U);
  EXPECT_EQ(m.loads[0].call, "ctypes.PyDLL");
  EXPECT_EQ(m.loads[0].line, 7);
  EXPECT_EQ(m.loads[0].path, "libpy.so");
}

TEST(PythonSources, RelativeImportsClimbPackages) {
  const Module m = read_module("a/b/c.py", "from ..x import y\nfrom ... import z\nfrom .... import w\n");
  EXPECT_EQ(imported(m), (std::vector<std::string>{"a.x", "a.x.y"}));  // "..." from a.b.c is above the top package
}

TEST(PythonSources, CffiAndNumpyLoaders) {
  const std::string src = R"(import os
import numpy as np
from cffi import FFI
ffi = FFI()
lib = ffi.dlopen(os.path.join(os.path.dirname(__file__), "_native.so"))
other = ffi.dlopen("libm.so.6")
_np = np.ctypeslib.load_library("libkernels", os.path.dirname(__file__))
)";
  const Module m = read_module("pkg/native.py", src);
  ASSERT_EQ(m.loads.size(), 3U);
  EXPECT_EQ(m.loads[0].call, "ffi.dlopen");
  EXPECT_EQ(m.loads[0].path, "pkg/_native.so");
  EXPECT_EQ(m.loads[1].target, Load::Target::Unresolved);  // cffi falls back to find_library
  EXPECT_EQ(m.loads[2].path, "pkg/libkernels.so");
}

// The first pass looks for a loader's name sixteen bytes at a time, and the last bytes one at a time: a name at
// every offset from a 16-byte boundary, and at the very end of the file, is found and read whole.
TEST(PythonSources, ALoaderNameAtEveryOffsetIsFound) {
  const std::vector<std::string> calls = {"ctypes.CDLL('libx.so')", "ctypes.PyDLL('libx.so')", "ffi.dlopen('libx.so')",
                                          "ctypes.cdll.LoadLibrary('libx.so')", "torch.ops.load_library('libx.so')"};
  for (const auto& call : calls) {
    for (std::size_t pad = 0; pad < 40; ++pad) {
      for (const std::string tail : {"", "\n", "\nx = 1\n"}) {
        const std::string src = "import ctypes\nimport torch\nfrom cffi import FFI\nffi = FFI()\n" +
                                std::string(pad + 1, 'a') + " = 1\n" + call + tail;
        const Module m = read_module("pkg/m.py", src);
        ASSERT_EQ(m.loads.size(), 1U) << call << " after " << pad << " bytes, tail " << tail.size();
        EXPECT_EQ(m.loads[0].line, 6);
        EXPECT_EQ(m.loads[0].expression, "\"libx.so\"") << call;  // (cffi then asks find_library: unresolved)
      }
    }
  }
}

// A loader's name in a string or a comment is no load, and the lines after a long string still count.
TEST(PythonSources, NamesInStringsAndCommentsAreNoLoads) {
  const Module m = read_module("pkg/doc.py",
                               "'''Calls ctypes.CDLL('x') and ffi.dlopen\n"
                               "over two lines'''\n"
                               "# cdll.LoadLibrary('y')\n"
                               "s = \"torch.ops.load_library('z')\"  # and (brackets [ in { strings\n"
                               "import after_them\n");
  EXPECT_TRUE(m.loads.empty());
  ASSERT_EQ(m.imports.size(), 1U);
  EXPECT_EQ(m.imports[0].module, "after_them");
  EXPECT_EQ(m.imports[0].line, 5);
}

// Imports inside a function never run at import, and a statement Python refuses ("import a b") ends where it
// refuses it: its names are not run together into one module.
TEST(PythonSources, ImportsInFunctionsAndImportsPythonRefuses) {
  const Module m = read_module("pkg/m.py",
                               "def f():\n"
                               "    if x:\n"
                               "        import lazy\n"
                               "import a b c\n"
                               "from x import (\n    y,\n    z as w)\n"
                               "import p.q as r, s\n");
  EXPECT_EQ(imported(m), (std::vector<std::string>{"a", "x", "x.y", "x.z", "p.q", "s"}));
}

TEST(PythonSources, BadSourceIsPassedOver) {
  const Module m = read_module("pkg/bad.py", "def f(:\n  ((( \"unterminated\n\x01\x02 import\n'''");
  EXPECT_TRUE(m.loads.empty());
}

}  // namespace
}  // namespace wheelcheck::python
