// What `wheelcheck lint` says of a wheel's policy and loads, held to the referees (issue 60): wheels built here with
// gcc, judged by lint, by auditwheel itself (../shared/peers/auditwheel-show) where it runs, by Debian's CPython's
// import with LD_BIND_NOW=1 and by glibc's loader.
//   - a library a declared Requires-Dist distribution ships, reached by RUNPATH into that distribution's folder
//     (PyTorch's layout), is no tag-claim;
//   - a weak reference to a symbol a policy forbids is no reason (auditwheel leaves weak references out);
//   - a musllinux wheel's libc.musl-x86_64.so.1 is the policy's own;
//   - the kernel rule names manylinux1's own kernel (CentOS 5, Linux 2.6.18);
//   - unloadable-symbol counts the interpreter's global scope (libc, libm) for what Python loads, never for a
//     program.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "support.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/verdict.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_lint_truth {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;

namespace {

const image::Db& truth_db() {
  static const image::Db d(source_dir() + "/db");
  return d;
}

lint::Report truth_lint(const std::string& wheel) {
  static const std::vector<toolkit::Provider> providers = toolkit::load_providers(truth_db());
  lint::Options o;
  o.providers = &providers;
  o.policies = &truth_db().policies();
  o.db = &truth_db();
  return lint::lint(inspect_wheel(wheel), o);
}

std::vector<const verdict::Finding*> truth_of_kind(const lint::Report& r, verdict::FindingKind kind) {
  std::vector<const verdict::Finding*> out;
  for (const auto& f : r.findings)
    if (f.kind == kind) out.push_back(&f);
  return out;
}

std::string truth_text(const lint::Report& r) {
  return lint::render_text(r, false);
}

std::string truth_build(const TempDir& d, const std::string& name, const std::string& source_name,
                        const std::string& source, const std::string& flags) {
  std::string err;
  const auto built = build_shared(d, name, source_name, source, flags, "gcc", &err);
  EXPECT_TRUE(built) << err;
  return built.value_or("");
}

// auditwheel 6.8.1 as ../shared/peers/auditwheel-show runs it (Debian's python3 with pyelftools): its
// overall_tag for the wheel, or "" with the reason in `why` where it cannot run here.
std::string auditwheel_overall_tag(const std::string& wheel, std::string& why) {
  const std::string peer = shared_dir() + "/peers/auditwheel-show";
  if (!fs::exists(peer)) {
    why = peer + " is absent";
    return "";
  }
  if (test::run("/usr/bin/python3 -c 'import elftools, packaging'").exit_code != 0) {
    why = "Debian's python3 lacks pyelftools or packaging (apt-get install python3-pyelftools python3-packaging)";
    return "";
  }
  const auto r = test::run(shell_quote(peer) + " " + shell_quote(wheel) + " --json");
  if (r.exit_code != 0) {
    why = "auditwheel show failed: " + r.err;
    return "";
  }
  return nlohmann::json::parse(r.out).value("overall_tag", "");
}

const char* const k_truth_python = "/usr/bin/python3.11";

// Debian's CPython 3.11 importing `module` from `folder` with LD_BIND_NOW=1: "OK" or the exception's text.
std::string truth_import(const std::string& folder, const std::string& module) {
  const auto r =
      test::run("cd " + shell_quote(folder) + " && LD_BIND_NOW=1 " + k_truth_python +
                " -c 'import sys; sys.path.insert(0, \".\")\ntry:\n    import " + module +
                "\n    print(\"OK\")\nexcept Exception as e:\n    print(type(e).__name__ + \": \" + str(e))'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out.substr(0, r.out.find('\n'));
}

std::string truth_no_cpython() {
  if (fs::exists(k_truth_python) && fs::exists("/usr/include/python3.11/Python.h") && have_program("gcc")) return "";
  return std::string(k_truth_python) +
         " or its headers (python3.11-dev) or gcc absent: CPython's import cannot be asked";
}

}  // namespace

// PyTorch's own layout: torch/lib/libtorch_cuda.so needs libcudart.so.12 with RUNPATH $ORIGIN/../../nvidia/
// cuda_runtime/lib, and the wheel declares Requires-Dist: nvidia-cuda-runtime-cu12, which installs it there. lint
// gives no tag-claim (and never "tag the wheel linux_x86_64"); without the declaration, or without the RUNPATH, the
// library is the wheel's to bring and the tag-claim stands. The check of the same wheel with the runtime wheel beside
// it finds libcudart.so.12 in the runtime's folder.
TEST(LintTruth, DeclaredDependencysLibraryByRunpathIsNoTagClaim) {
  TempDir d;
  const auto cudart =
      truth_build(d, "libcudart.so.12", "cudart.c", "int cudaGetDeviceCount(int* n) { *n = 0; return 0; }\n",
                  "-Wl,-soname,libcudart.so.12");
  ASSERT_FALSE(cudart.empty());
  const std::string user =
      "int cudaGetDeviceCount(int*);\nint torch_count(void) { int n; cudaGetDeviceCount(&n); "
      "return n; }\n";
  const auto torch = truth_build(d, "libtorch_cuda.so", "tc.c", user,
                                 "-Wl,-soname,libtorch_cuda.so " + shell_quote(cudart) +
                                     " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../../nvidia/cuda_runtime/lib'");
  const auto bare =
      truth_build(d, "libtorch_bare.so", "tb.c", user, "-Wl,-soname,libtorch_bare.so " + shell_quote(cudart));
  ASSERT_FALSE(torch.empty());
  ASSERT_FALSE(bare.empty());
  const std::string req = "nvidia-cuda-runtime-cu12==12.4.127; platform_system == \"Linux\"";
  const auto declared = make_wheel(d, "torchlike-2.6.0-cp311-cp311-manylinux_2_28_x86_64.whl",
                                   {{"torchlike/lib/libtorch_cuda.so", torch}}, {"--requires-dist", req});
  const auto r = truth_lint(declared);
  EXPECT_TRUE(truth_of_kind(r, verdict::FindingKind::TagClaim).empty()) << truth_text(r);
  EXPECT_EQ(truth_text(r).find("linux_x86_64 ("), std::string::npos) << truth_text(r);
  EXPECT_EQ(lint::exit_code(r), 0) << truth_text(r);
  const std::string shown = nlohmann::json(r.claims.shown).dump();
  EXPECT_NE(shown.find("consistent with manylinux_2_5_x86_64 with libcudart.so.12 from nvidia-cuda-runtime-cu12"),
            std::string::npos)
      << shown;
  // The policy's own answer keeps auditwheel's (the wheel alone), and the reason says whose library it is.
  const auto c = policy::analyze(inspect_wheel(declared), truth_db().policies(),
                                 {{"libcudart.so.12", "nvidia-cuda-runtime-cu12", req}});
  EXPECT_EQ(c.tag, "linux_x86_64");
  EXPECT_EQ(c.tag_with_dependencies, "manylinux_2_5_x86_64");
  ASSERT_EQ(c.constrained_by.size(), 1u);
  EXPECT_EQ(c.constrained_by[0].dependency, "nvidia-cuda-runtime-cu12");
  EXPECT_FALSE(c.constrained_by[0].auditwheel_judges);
  EXPECT_NE(c.constrained_by[0].detail.find("installs it in nvidia/cuda_runtime/lib"), std::string::npos)
      << c.constrained_by[0].detail;
  EXPECT_EQ(toolkit::dependency_libraries(inspect_wheel(declared), toolkit::load_providers(truth_db())).size(), 1u);

  // Undeclared: the tag claims what the wheel alone does not deliver.
  const auto undeclared = truth_lint(make_wheel(d, "torchnodep-2.6.0-cp311-cp311-manylinux_2_28_x86_64.whl",
                                                {{"torchlike/lib/libtorch_cuda.so", torch}}));
  EXPECT_EQ(truth_of_kind(undeclared, verdict::FindingKind::TagClaim).size(), 1u) << truth_text(undeclared);
  // Declared, but no RUNPATH into its folder: the loader does not look there.
  const auto unreached = truth_lint(make_wheel(d, "torchbare-2.6.0-cp311-cp311-manylinux_2_28_x86_64.whl",
                                               {{"torchlike/lib/libtorch_cuda.so", bare}}, {"--requires-dist", req}));
  EXPECT_EQ(truth_of_kind(unreached, verdict::FindingKind::TagClaim).size(), 1u) << truth_text(unreached);

  // The check with the runtime wheel beside it: libcudart.so.12 is found by the RUNPATH, nothing is missing.
  const auto runtime = make_wheel(d, "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl",
                                  {{"nvidia/cuda_runtime/lib/libcudart.so.12", cudart}});
  const auto check =
      test::run(shell_quote(binary_path()) + " " + shell_quote(declared) + " --with " + shell_quote(runtime) +
                " --image debian12 --json -q --no-cache --db " + shell_quote(source_dir() + "/db"));
  const auto j = nlohmann::json::parse(check.out);
  const std::string verdict_json = j.dump();
  EXPECT_EQ(verdict_json.find("\"missing_libraries\":[\"libcudart.so.12\"]"), std::string::npos) << verdict_json;
  EXPECT_NE(j.value("verdict", ""), "INCOMPATIBLE") << verdict_json;
}

// A weak undefined reference to __cxa_thread_atexit_impl, which manylinux_2_5 to _2_17 forbid (blacklist), left
// unversioned as a Rust build on an old glibc leaves it: no reason against manylinux_2_5, as auditwheel says (its
// blacklist reads only non-weak undefined symbols). The same reference bound to GLIBC_2.18 at link time is a
// version need the loader checks: manylinux_2_24, for both.
TEST(LintTruth, WeakReferenceToAForbiddenSymbolIsNoFloor) {
  TempDir d;
  // A stand-in libc.so.6 without __cxa_thread_atexit_impl, so that the reference stays unversioned.
  const auto stub =
      truth_build(d, "libc.so.6", "stubc.c",
                  "unsigned long strlen(const char* s) { unsigned long n = 0; while (s[n]) ++n; return n; }\n",
                  "-nostdlib -Wl,-soname,libc.so.6");
  ASSERT_FALSE(stub.empty());
  const std::string source =
      "unsigned long strlen(const char*);\n"
      "extern int __cxa_thread_atexit_impl(void (*)(void*), void*, void*) __attribute__((weak));\n"
      "int PyInit_weakmod(void) { return (__cxa_thread_atexit_impl ? 1 : 0) + (int)strlen(\"x\"); }\n";
  const auto unversioned = truth_build(d, "weak_unversioned.so", "weak1.c", source, "-nostdlib -fno-builtin " + stub);
  ASSERT_FALSE(unversioned.empty());
  const auto wheel = make_wheel(d, "weakmod-1.0-cp311-cp311-manylinux_2_5_x86_64.whl",
                                {{"weakmod.cpython-311-x86_64-linux-gnu.so", unversioned}});
  const auto c = policy::analyze(inspect_wheel(wheel), truth_db().policies());
  EXPECT_EQ(c.tag, "manylinux_2_5_x86_64") << policy::to_json(c, std::nullopt).dump(2);
  const auto r = truth_lint(wheel);
  EXPECT_TRUE(truth_of_kind(r, verdict::FindingKind::TagClaim).empty()) << truth_text(r);
  std::string why;
  if (const auto peer = auditwheel_overall_tag(wheel, why); !peer.empty()) {
    EXPECT_EQ(c.tag, peer) << "auditwheel show said " << peer;
  } else {
    std::cout << "[ note ] auditwheel not compared: " << why << "\n";
  }

  // Bound to GLIBC_2.18 by the real libc: a version need, which both count.
  const auto versioned = truth_build(d, "weak_versioned.so", "weak2.c", source, "-fno-builtin");
  ASSERT_FALSE(versioned.empty());
  const auto wheel2 = make_wheel(d, "weakver-1.0-cp311-cp311-manylinux_2_5_x86_64.whl",
                                 {{"weakmod.cpython-311-x86_64-linux-gnu.so", versioned}});
  const auto c2 = policy::analyze(inspect_wheel(wheel2), truth_db().policies());
  EXPECT_EQ(c2.tag, "manylinux_2_24_x86_64") << policy::to_json(c2, std::nullopt).dump(2);
  const auto claim = policy::check_claim(inspect_wheel(wheel2), c2, truth_db().policies());
  ASSERT_TRUE(claim);
  EXPECT_TRUE(claim->auditwheel_agrees);
  if (const auto peer = auditwheel_overall_tag(wheel2, why); !peer.empty()) EXPECT_EQ(c2.tag, peer);
}

// A correct musllinux wheel (its member needs libc.musl-x86_64.so.1, Alpine's soname of musl's libc and loader):
// lint says nothing is missing, and no false "no packaging policy provides" it.
TEST(LintTruth, MuslsCLibraryIsThePolicys) {
  TempDir d;
  // No musl-gcc here: a stand-in named as Alpine's musl so that the member's DT_NEEDED is what Alpine's gcc writes.
  const auto musl =
      truth_build(d, "libc.musl-x86_64.so.1", "musl.c",
                  "unsigned long strlen(const char* s) { unsigned long n = 0; while (s[n]) ++n; return n; }\n",
                  "-nostdlib -Wl,-soname,libc.musl-x86_64.so.1");
  ASSERT_FALSE(musl.empty());
  const auto member = truth_build(
      d, "mm.so", "mm.c", "unsigned long strlen(const char*);\nint PyInit_mm(void) { return (int)strlen(\"x\"); }\n",
      "-nostdlib -fno-builtin " + musl);
  ASSERT_FALSE(member.empty());
  const auto wheel =
      make_wheel(d, "mm-1.0-cp311-cp311-musllinux_1_2_x86_64.whl", {{"mm.cpython-311-x86_64-linux-musl.so", member}});
  const auto r = truth_lint(wheel);
  const std::string all = truth_text(r);
  EXPECT_EQ(all.find("provides libc.musl"), std::string::npos) << all;
  EXPECT_EQ(all.find("no packaging policy provides"), std::string::npos) << all;
  EXPECT_EQ(r.status, lint::Status::Clean) << all;
  const auto c = policy::analyze(inspect_wheel(wheel), truth_db().policies());
  EXPECT_EQ(c.tag, "musllinux_1_2_x86_64");
  EXPECT_TRUE(policy::c_library_of(policy::Libc::Musl, "libc.musl-x86_64.so.1"));
  EXPECT_FALSE(policy::c_library_of(policy::Libc::Glibc, "libc.musl-x86_64.so.1"));
}

// manylinux1 is manylinux_2_5: CentOS 5, Linux 2.6.18 (PEP 513). A statically linked program in a manylinux1 wheel
// whose glibc needs a newer kernel gets a tag-claim that names manylinux1's own kernel first, and auditwheel (which
// has no kernel rule) is not said to agree.
TEST(LintTruth, Manylinux1KernelIsCentos5s) {
  TempDir d;
  const std::string src = d.write("tool.c", "int main(void) { return 0; }\n");
  const auto built = test::run("gcc -static -O1 -o " + shell_quote(d.file("tool")) + " " + shell_quote(src));
  if (built.exit_code != 0) GTEST_SKIP() << "no static libc here: " << built.err;
  const auto wheel = make_wheel(d, "tool-1.0-py3-none-manylinux1_x86_64.whl", {{"tool/bin/tool", d.file("tool")}});
  const auto p = inspect_wheel(wheel);
  const auto c = policy::analyze(p, truth_db().policies());
  const auto claim = policy::check_claim(p, c, truth_db().policies());
  ASSERT_TRUE(claim) << policy::to_json(c, std::nullopt).dump(2);
  ASSERT_EQ(claim->because.size(), 1u);
  const auto* k = claim->because[0];
  ASSERT_EQ(k->rule, policy::Rule::Kernel);
  EXPECT_FALSE(claim->auditwheel_agrees);
  EXPECT_FALSE(k->auditwheel_judges);
  // glibc 2.36's static start needs Linux 3.2.0: above CentOS 5's and CentOS 6's, within CentOS 7's.
  EXPECT_EQ(k->version, "Linux 3.2.0");
  EXPECT_EQ(
      k->detail,
      "tool/bin/tool is statically linked, and the glibc inside it needs Linux 3.2.0 or newer (its NT_GNU_ABI_TAG "
      "note); manylinux_2_5_x86_64 is for Linux 2.6.18, CentOS 5 (manylinux1, PEP 513); manylinux_2_12_x86_64 is "
      "for Linux 2.6.32, CentOS 6 (manylinux2010, PEP 571)");
  EXPECT_EQ(claim->detail, "tagged manylinux1_x86_64, but its binaries are consistent only with manylinux_2_17_x86_64");
}

// An extension module that leaves sqrt unversioned and undefined with no DT_NEEDED on libm (as 30 members of Debian's
// numpy, pandas, PIL, ... do): Python's global scope has libm, CPython imports it with LD_BIND_NOW=1, and lint gives
// no unloadable-symbol. A symbol nothing defines: CPython refuses it, and lint says so. A program in the wheel
// leaving sqrt undefined has no interpreter: glibc's loader refuses it, and lint says so.
TEST(LintTruth, InterpretersScopeCompletesExtensionModulesOnly) {
  if (const auto why = truth_no_cpython(); !why.empty()) GTEST_SKIP() << why;
  TempDir d;
  auto module = [&](const std::string& name, const std::string& call) {
    // strlen from libc.so.6 as well: the module needs libc.so.6 (DT_NEEDED), as Debian's numpy members do.
    return "#include <Python.h>\n#include <string.h>\ndouble " + call +
           "(double);\nstatic PyObject* f(PyObject* s, PyObject* a) { (void)s; return "
           "PyFloat_FromDouble(" +
           call +
           "(PyFloat_AsDouble(a)) + (double)strlen(\"x\")); }\nstatic PyMethodDef m[] = {{\"f\", f, METH_O, NULL}, "
           "{NULL, NULL, 0, "
           "NULL}};\nstatic struct PyModuleDef def = {PyModuleDef_HEAD_INIT, \"" +
           name + "\", NULL, -1, m, NULL, NULL, NULL, NULL};\nPyMODINIT_FUNC PyInit_" + name +
           "(void) { return PyModule_Create(&def); }\n";
  };
  const std::string suffix = ".cpython-311-x86_64-linux-gnu.so";
  // No -lm, and -fno-builtin so that the call to sqrt stays a call.
  const auto good =
      truth_build(d, "sq" + suffix, "sq.c", module("sq", "sqrt"), "-fno-builtin -O1 -I/usr/include/python3.11");
  const auto bad = truth_build(d, "nowhere" + suffix, "nowhere.c", module("nowhere", "wheelcheck_truth_nowhere"),
                               "-fno-builtin -O1 -I/usr/include/python3.11");
  ASSERT_FALSE(good.empty());
  ASSERT_FALSE(bad.empty());
  const std::string dynamic = test::run("readelf -d " + shell_quote(good)).out;
  EXPECT_NE(dynamic.find("[libc.so.6]"), std::string::npos) << dynamic;
  EXPECT_EQ(dynamic.find("[libm.so.6]"), std::string::npos) << dynamic;
  // The referee: Debian's CPython, every symbol bound at load.
  EXPECT_EQ(truth_import(d.path(), "sq"), "OK");
  EXPECT_NE(truth_import(d.path(), "nowhere").find("undefined symbol: wheelcheck_truth_nowhere"), std::string::npos);
  const auto good_lint =
      truth_lint(make_wheel(d, "sq-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", {{"sq" + suffix, good}}));
  EXPECT_TRUE(truth_of_kind(good_lint, verdict::FindingKind::UnloadableSymbol).empty()) << truth_text(good_lint);
  const auto bad_lint =
      truth_lint(make_wheel(d, "nowhere-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", {{"nowhere" + suffix, bad}}));
  const auto unloadable = truth_of_kind(bad_lint, verdict::FindingKind::UnloadableSymbol);
  ASSERT_EQ(unloadable.size(), 1u) << truth_text(bad_lint);
  EXPECT_EQ(unloadable[0]->symbol, "wheelcheck_truth_nowhere");
  EXPECT_EQ(unloadable[0]->severity, verdict::Severity::Error);

  // A program: needs libc.so.6 (a stand-in at link time, so that sqrt stays undefined), has no interpreter.
  const auto stub = truth_build(d, "libc.so.6", "pstub.c",
                                "double sqrt(double x) { return x; }\nvoid _exit(int c) { (void)c; for (;;) {} }\n",
                                "-nostdlib -Wl,-soname,libc.so.6");
  ASSERT_FALSE(stub.empty());
  const std::string prog_src =
      d.write("prog.c", "double sqrt(double);\nvoid _exit(int);\nvoid _start(void) { _exit((int)sqrt(4.0)); }\n");
  const auto linked = test::run("gcc -nostdlib -fno-builtin -O1 -o " + shell_quote(d.file("prog")) + " " +
                                shell_quote(prog_src) + " " + shell_quote(stub));
  ASSERT_EQ(linked.exit_code, 0) << linked.err;
  const auto ran = test::run("LD_BIND_NOW=1 " + shell_quote(d.file("prog")));
  EXPECT_EQ(ran.exit_code, 127);
  EXPECT_NE(ran.err.find("undefined symbol: sqrt"), std::string::npos) << ran.err;
  const auto prog_lint = truth_lint(
      make_wheel(d, "progwheel-1.0-py3-none-manylinux_2_17_x86_64.whl", {{"progwheel/bin/prog", d.file("prog")}}));
  const auto refused = truth_of_kind(prog_lint, verdict::FindingKind::UnloadableSymbol);
  ASSERT_EQ(refused.size(), 1u) << truth_text(prog_lint);
  EXPECT_EQ(refused[0]->symbol, "sqrt");
}

}  // namespace unity_test_lint_truth
