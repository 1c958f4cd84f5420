// CPython's import rules (inspector/verdict/import_rules.cpp) against the real CPython: extension modules built
// here with gcc against Debian's Python 3.11 headers, imported by /usr/bin/python3.11 from a folder, and the same
// members packed into wheels that `check` and `lint` must judge as CPython did. And lint's unloadable symbols of a
// library with no DT_NEEDED at all (inspector/lint/symbols.cpp).
#include <filesystem>
#include <map>
#include <sstream>

#include "inspector/verdict/import_rules.hpp"
#include "support.hpp"
#include "verdict_support.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/verdict.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_import_rules {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;

namespace {

const char* const k_python = "/usr/bin/python3.11";
const char* const k_headers = "/usr/include/python3.11";

// An extension module whose init function is `init` (the module's name is `name`): single-phase
// (PyModule_Create), or multi-phase (PEP 489: PyModuleDef_Init from the same function), which CPython requires of
// a module whose name is not ASCII.
std::string module_source(const std::string& name, const std::string& init, bool multi_phase = false) {
  return "#include <Python.h>\nstatic struct PyModuleDef def = {PyModuleDef_HEAD_INIT, \"" + name + "\", NULL, " +
         (multi_phase ? "0" : "-1") + ", NULL};\nPyMODINIT_FUNC " + init + "(void) { return " +
         (multi_phase ? "PyModuleDef_Init(&def)" : "PyModule_Create(&def)") + "; }\n";
}

std::vector<const verdict::Finding*> of_kind(const std::vector<verdict::Finding>& findings, const std::string& kind,
                                             const std::string& member = "") {
  std::vector<const verdict::Finding*> out;
  for (const auto& f : findings)
    if (verdict::kind_name(f.kind) == kind && (member.empty() || f.member == member)) out.push_back(&f);
  return out;
}

std::string text_of(const std::vector<verdict::Finding>& findings) {
  std::string s;
  for (const auto& f : findings)
    s += verdict::kind_name(f.kind) + " " + verdict::severity_name(f.severity) + " " + f.member + ": " + f.explanation +
         "\n";
  return s;
}

lint::Report lint_of(const std::string& wheel) {
  static const image::Db db(source_dir() + "/db");
  lint::Options o;
  o.db = &db;
  return lint::lint(inspect_wheel(wheel), o);
}

// What CPython 3.11 says importing each of `modules` (dotted) with `folder` first on sys.path: "OK", or the
// exception's type and message.
std::map<std::string, std::string> cpython_imports(const TempDir& dir, const std::string& folder,
                                                   const std::vector<std::string>& modules) {
  std::string script =
      "import importlib, sys\nsys.path.insert(0, sys.argv[1])\nfor name in sys.argv[2:]:\n"
      "    try:\n        importlib.import_module(name)\n        print(name + '\\tOK')\n"
      "    except Exception as e:\n        print(name + '\\t' + type(e).__name__ + ': ' + str(e))\n";
  const std::string py = dir.write("try_imports.py", script);
  std::string cmd = std::string(k_python) + " " + shell_quote(py) + " " + shell_quote(folder);
  for (const auto& m : modules) cmd += " " + shell_quote(m);
  const auto r = test::run(cmd);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> out;
  std::size_t at = 0;
  while (at < r.out.size()) {
    const auto end = r.out.find('\n', at);
    const std::string line = r.out.substr(at, end - at);
    const auto tab = line.find('\t');
    if (tab != std::string::npos) out[line.substr(0, tab)] = line.substr(tab + 1);
    at = end == std::string::npos ? r.out.size() : end + 1;
  }
  return out;
}

// Why CPython's import cannot be asked here ("" when it can): Debian's python3.11, its headers and gcc.
std::string no_cpython() {
  if (fs::exists(k_python) && fs::exists(std::string(k_headers) + "/Python.h") && have_program("gcc")) return "";
  return std::string(k_python) + " or its headers (" + k_headers +
         "/Python.h: python3.11-dev) or gcc absent: CPython's import cannot be asked";
}

// The extension suffix of the CPython that is asked (".cpython-311-x86_64-linux-gnu.so"), "" when it cannot say.
std::string own_suffix() {
  const auto r =
      test::run(std::string(k_python) + " -c 'import sysconfig; print(sysconfig.get_config_var(\"EXT_SUFFIX\"))'");
  return r.exit_code == 0 ? r.out.substr(0, r.out.find('\n')) : "";
}

}  // namespace

// What the model says CPython 3.11 imports is what /usr/bin/python3.11 (and the pyenv Pythons here) print.
TEST(ImportRules, SuffixesAreCpythonsOwn) {
  std::vector<std::string> pythons;
  for (const char* p : {k_python, "python3"})
    if (have_program(p)) pythons.push_back(p);
  if (pythons.empty()) GTEST_SKIP() << "no python3.11 or python3 here: nothing to compare EXTENSION_SUFFIXES with";
  for (const auto& py : pythons) {
    const auto r = test::run(py +
                             " -c 'import importlib.machinery as m, sys, sysconfig; print(sys.version_info[1], "
                             "sysconfig.get_config_var(\"MULTIARCH\"), bool(sysconfig.get_config_var(\"Py_GIL_"
                             "DISABLED\")), repr(m.EXTENSION_SUFFIXES))'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream in(r.out);
    int minor = 0;
    std::string multiarch, free_threaded, printed;
    in >> minor >> multiarch >> free_threaded;
    std::getline(in >> std::ws, printed);
    std::vector<std::string> quoted;
    for (const auto& s : verdict::extension_suffixes({minor, free_threaded == "True"}, multiarch))
      quoted.push_back("'" + s + "'");
    std::string mine = "[";
    for (std::size_t i = 0; i < quoted.size(); ++i) mine += (i ? ", " : "") + quoted[i];
    EXPECT_EQ(mine + "]", printed) << py;
  }
  EXPECT_EQ(verdict::multiarch_of("x86_64", false), "x86_64-linux-gnu");
  EXPECT_EQ(verdict::multiarch_of("i686", false), "i386-linux-gnu");
  EXPECT_EQ(verdict::multiarch_of("aarch64", true), "aarch64-linux-musl");
  const auto n = verdict::extension_name("foo.cpython-313t-aarch64-linux-gnu.so");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->module, "foo");
  EXPECT_EQ(n->soabi, "313t");
  EXPECT_EQ(n->multiarch, "aarch64-linux-gnu");
  EXPECT_FALSE(verdict::extension_name("foo.pypy39-pp73-x86_64-linux-gnu.so"));
  EXPECT_FALSE(verdict::extension_name("libfoo.so.1"));
}

// Three modules and a non-ASCII one, imported by CPython 3.11 from a folder and checked by wheelcheck in a wheel:
// each answer is the one CPython gave.
TEST(ImportRules, CheckAndLintSayWhatCpythonDoes) {
  if (const std::string why = no_cpython(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string own = own_suffix();
  ASSERT_FALSE(own.empty()) << "sysconfig's EXT_SUFFIX";  // .cpython-311-x86_64-linux-gnu.so
  ASSERT_NE(own.find("311"), std::string::npos) << own;
  std::string other = own;
  other.replace(other.find("311"), 3, "312");
  const std::string accented = "mod\xc3\xa9";  // "modé": CPython looks up PyInitU_<punycode>
  struct Module {
    std::string name, file, init;
    bool multi_phase = false;
  };
  const std::vector<Module> modules = {
      {"good", "good" + own, "PyInit_good"},
      {"wrongsfx", "wrongsfx" + other, "PyInit_wrongsfx"},
      {"badinit", "badinit" + own, "PyInit_other"},
      {accented, accented + own, verdict::init_function(accented), true},
  };
  const std::string site = dir.file("site");
  fs::create_directories(site + "/pkg");
  dir.write("site/pkg/__init__.py", "");
  std::vector<std::pair<std::string, std::string>> members = {{"pkg/__init__.py", site + "/pkg/__init__.py"}};
  std::vector<std::string> dotted;
  for (const auto& m : modules) {
    const std::string so =
        build(dir, "site/pkg/" + m.file, module_source(m.name, m.init, m.multi_phase), std::string("-I") + k_headers);
    ASSERT_FALSE(so.empty());
    members.emplace_back("pkg/" + m.file, so);
    dotted.push_back("pkg." + m.name);
  }
  // What CPython does.
  auto said = cpython_imports(dir, site, dotted);
  EXPECT_EQ(said["pkg.good"], "OK");
  EXPECT_EQ(said["pkg." + accented], "OK") << "PyInitU_ + punycode, as init_function names it";
  EXPECT_EQ(said["pkg.wrongsfx"], "ModuleNotFoundError: No module named 'pkg.wrongsfx'");
  EXPECT_EQ(said["pkg.badinit"], "ImportError: dynamic module does not define module export function (PyInit_badinit)");

  // What wheelcheck says, on an image with Debian's CPython 3.11.
  const std::string wheel = make_wheel(dir, "imp-1.0-cp311-cp311-linux_x86_64.whl", members);
  write_binary(dir.file("py311.json"), R"({"schema": "wheelcheck-image/1", "name": "py311", "summary": "test image",
                                          "layers": ["debian12", "python3.11-debian"]})");
  const auto im = image::Db(source_dir() + "/db").resolve(dir.file("py311.json"));
  const auto profile = inspect_wheel(wheel);
  const auto r = verdict::check(profile, im);
  const std::string text = text_of(r.findings);
  const auto suffix = of_kind(r.findings, "extension-suffix");
  ASSERT_EQ(suffix.size(), 1u) << text;
  EXPECT_EQ(suffix[0]->member, "pkg/wrongsfx" + other);
  EXPECT_EQ(suffix[0]->severity, verdict::Severity::Error);
  EXPECT_NE(suffix[0]->explanation.find(said["pkg.wrongsfx"]), std::string::npos) << text;
  EXPECT_NE(join(suffix[0]->evidence, "\n").find("'" + own + "', '.abi3.so', '.so'"), std::string::npos) << text;
  const auto init = of_kind(r.findings, "module-init");
  ASSERT_EQ(init.size(), 1u) << text;
  EXPECT_EQ(init[0]->member, "pkg/badinit" + own);
  EXPECT_EQ(init[0]->symbol, "PyInit_badinit");
  EXPECT_NE(init[0]->explanation.find(said["pkg.badinit"].substr(std::string("ImportError: ").size())),
            std::string::npos)
      << text;
  EXPECT_EQ(init[0]->candidates, std::vector<std::string>{"PyInit_other"});
  for (const auto& m : r.members) {
    const bool fails = m.path == "pkg/wrongsfx" + other || m.path == "pkg/badinit" + own;
    EXPECT_EQ(m.loads, !fails) << m.path << "\n" << text;
  }
  EXPECT_EQ(r.verdict, verdict::Verdict::Incompatible) << text;

  // The image's Python unknown: a condition on the suffix the tags contradict, never an error; PyInit_ still is.
  write_binary(dir.file("nopy.json"), R"({"schema": "wheelcheck-image/1", "name": "nopy", "summary": "test image",
                                         "layers": ["debian12"]})");
  const auto nopy = verdict::check(profile, image::Db(source_dir() + "/db").resolve(dir.file("nopy.json")));
  ASSERT_FALSE(nopy.python) << "debian12 describes no Python";
  const auto cond = of_kind(nopy.findings, "extension-suffix");
  ASSERT_EQ(cond.size(), 1u) << text_of(nopy.findings);
  EXPECT_EQ(cond[0]->severity, verdict::Severity::Condition);
  EXPECT_EQ(of_kind(nopy.findings, "module-init").size(), 1u) << text_of(nopy.findings);

  // lint, with no image: against the wheel's own tags.
  const auto l = lint_of(wheel);
  EXPECT_EQ(of_kind(l.findings, "extension-suffix").size(), 1u) << text_of(l.findings);
  EXPECT_EQ(of_kind(l.findings, "extension-suffix", "pkg/wrongsfx" + other).size(), 1u) << text_of(l.findings);
  EXPECT_EQ(of_kind(l.findings, "module-init", "pkg/badinit" + own).size(), 1u) << text_of(l.findings);
  EXPECT_EQ(of_kind(l.findings, "module-init").size(), 1u) << text_of(l.findings);

  // The correct twins alone: CPython imports them, and neither check has a word to say.
  const std::string clean =
      make_wheel(dir, "imp-1.1-cp311-cp311-linux_x86_64.whl", {members[0], members[1], members[4]});
  const auto rc = verdict::check(inspect_wheel(clean), im);
  EXPECT_TRUE(of_kind(rc.findings, "extension-suffix").empty() && of_kind(rc.findings, "module-init").empty())
      << text_of(rc.findings);
  const auto lc = lint_of(clean);
  EXPECT_TRUE(of_kind(lc.findings, "extension-suffix").empty() && of_kind(lc.findings, "module-init").empty())
      << text_of(lc.findings);

  // The 3.11 module in a wheel tagged cp312 only: lint says no Python its tags install it on imports it.
  const std::string retagged = make_wheel(dir, "imp-1.2-cp312-cp312-linux_x86_64.whl", {members[0], members[1]});
  const auto lr = lint_of(retagged);
  const auto wrong = of_kind(lr.findings, "extension-suffix", "pkg/good" + own);
  ASSERT_EQ(wrong.size(), 1u) << text_of(lr.findings);
  EXPECT_EQ(wrong[0]->severity, verdict::Severity::Error);
  EXPECT_EQ(wrong[0]->required_version, "CPython 3.12");
}

// A package whose __init__ is an extension (apsw ships itself so): `import pkg` loads pkg/__init__.<suffix> and
// looks up PyInit_pkg, the package's name, never PyInit___init__. Checked against CPython 3.11.
TEST(ImportRules, APackagesInitExtensionIsInitialisedUnderThePackagesName) {
  if (const std::string why = no_cpython(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string own = own_suffix();
  ASSERT_FALSE(own.empty()) << "sysconfig's EXT_SUFFIX";
  write_binary(dir.file("py311.json"), R"({"schema": "wheelcheck-image/1", "name": "py311", "summary": "test image",
                                          "layers": ["debian12", "python3.11-debian"]})");
  const auto im = image::Db(source_dir() + "/db").resolve(dir.file("py311.json"));
  for (const std::string pkg : {"goodpkg", "badpkg"}) {
    const std::string init = pkg == "goodpkg" ? "PyInit_goodpkg" : "PyInit___init__";
    fs::create_directories(dir.file("site/" + pkg));
    const std::string so =
        build(dir, "site/" + pkg + "/__init__" + own, module_source(pkg, init), std::string("-I") + k_headers);
    ASSERT_FALSE(so.empty());
    const auto said = cpython_imports(dir, dir.file("site"), {pkg});
    const auto r = verdict::check(
        inspect_wheel(make_wheel(dir, pkg + "-1.0-cp311-cp311-linux_x86_64.whl", {{pkg + "/__init__" + own, so}})), im);
    const auto found = of_kind(r.findings, "module-init");
    if (pkg == "goodpkg") {
      EXPECT_EQ(said.at(pkg), "OK");
      EXPECT_TRUE(found.empty()) << text_of(r.findings);
    } else {
      EXPECT_EQ(said.at(pkg), "ImportError: dynamic module does not define module export function (PyInit_badpkg)");
      ASSERT_EQ(found.size(), 1u) << text_of(r.findings);
      EXPECT_EQ(found[0]->symbol, "PyInit_badpkg");
    }
  }
}

// A library with no DT_NEEDED at all still binds against the interpreter's global scope: an undefined
// devApiBackend nothing defines is unloadable; Py* and libc symbols are the interpreter's.
TEST(ImportRules, UnloadableSymbolWithoutNeeded) {
  if (!have_program("gcc")) GTEST_SKIP() << "gcc absent";
  TempDir dir;
  const std::string bad = build(dir, "bad/libflagcx.so",
                                "extern int devApiBackend(int);\nextern void* malloc(unsigned long);\n"
                                "int flagcxInit(int x) { return malloc(8) != 0 ? devApiBackend(x) : 0; }\n",
                                "-nostdlib");
  const std::string good = build(dir, "good/libflagcx.so",
                                 "extern void* PyLong_FromLong(long);\nextern void* malloc(unsigned long);\n"
                                 "void* flagcxInit(long x) { return malloc(8) != 0 ? PyLong_FromLong(x) : 0; }\n",
                                 "-nostdlib");
  ASSERT_FALSE(bad.empty() || good.empty());
  const auto w_bad = make_wheel(dir, "flagcx-0.14.0-cp311-cp311-linux_x86_64.whl", {{"flagcx/lib/libflagcx.so", bad}});
  const auto w_good =
      make_wheel(dir, "flagcx-0.14.1-cp311-cp311-linux_x86_64.whl", {{"flagcx/lib/libflagcx.so", good}});
  const auto p = inspect_wheel(w_bad);
  ASSERT_EQ(p.members.size(), 1u);
  ASSERT_TRUE(p.members[0].elf);
  ASSERT_TRUE(p.members[0].elf->needed.empty()) << "the case needs a library with no DT_NEEDED";
  const auto l = lint_of(w_bad);
  const auto found = of_kind(l.findings, "unloadable-symbol", "flagcx/lib/libflagcx.so");
  ASSERT_EQ(found.size(), 1u) << text_of(l.findings);
  EXPECT_EQ(found[0]->symbol, "devApiBackend");
  EXPECT_EQ(found[0]->symbols, std::vector<std::string>{"devApiBackend"}) << "malloc is libc's, in every process";
  EXPECT_EQ(found[0]->severity, verdict::Severity::Error);
  const auto lg = lint_of(w_good);
  EXPECT_TRUE(of_kind(lg.findings, "unloadable-symbol").empty()) << text_of(lg.findings);
}

}  // namespace unity_test_import_rules
