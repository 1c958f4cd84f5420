// The verdict through the library, on wheels and images built at test time from C/C++ sources: RPATH
// versus RUNPATH, a foreign machine, a Requires-Dist: torch extension, CUDA runtimes and the driver;
// resolution compared with libtree (Debian's package) on the same folders; reasons that are true (a
// library in the wheel off the search path, no sentence said twice, counts that agree with the verdict,
// integrity no route covers). The command line's verdict is in tests/cli/test_verdict_cli.cpp.
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "support.hpp"
#include "verdict_support.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/rules.hpp"
#include "wheelcheck/verdict.hpp"
#include "wheelcheck/wheel.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_verdict {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;
using nlohmann::json;

namespace {

image::Image load_image(const std::string& file) {
  return image::Db(source_dir() + "/db").resolve(file);
}

verdict::Report check(const std::string& wheel, const image::Image& im, const std::vector<std::string>& with = {}) {
  std::vector<WheelProfile> profiles;
  for (const auto& w : with) profiles.push_back(inspect_wheel(w));
  verdict::CheckOptions o;
  for (const auto& p : profiles) o.with.push_back(&p);
  return verdict::check(inspect_wheel(wheel), im, o);
}

std::vector<const verdict::Finding*> findings(const verdict::Report& r, const std::string& kind) {
  std::vector<const verdict::Finding*> out;
  for (const auto& f : r.findings) {
    if (verdict::kind_name(f.kind) == kind) out.push_back(&f);
  }
  return out;
}

std::string describe(const verdict::Report& r) {
  return verdict::render_text(r, false);
}

const char* const k_leaf = "int leaf(void) { return 1; }\n";
const char* const k_mid = "int leaf(void);\nint mid(void) { return leaf() + 1; }\n";
const char* const k_ext = "int mid(void);\nint ext(void) { return mid() + 1; }\n";

}  // namespace

// DT_RPATH applies to what the object's dependencies need too; DT_RUNPATH only to the object's own needs.
TEST(Verdict, RpathIsInheritedRunpathIsNot) {
  TempDir dir;
  const auto im = load_image(image_file(dir, "img"));
  auto wheel = [&](const std::string& name, const std::string& tag_flags) {
    TempDir d;
    const std::string leaf = build(d, "libleaf.so", k_leaf, "");
    const std::string mid = build(d, "libmid.so", k_mid, "-L" + d.path() + " -lleaf");
    const std::string ext =
        build(d, "ext.so", k_ext, "-L" + d.path() + " -lmid " + tag_flags + ",-rpath,'$ORIGIN/lib'");
    return make_wheel(dir, name, {{"pkg/ext.so", ext}, {"pkg/lib/libmid.so", mid}, {"pkg/lib/libleaf.so", leaf}});
  };
  const auto rpath = check(wheel("rp-1.0-py3-none-linux_x86_64.whl", "-Wl,--disable-new-dtags"), im);
  EXPECT_TRUE(findings(rpath, "missing-library").empty()) << describe(rpath);
  bool inherited = false;
  for (const auto& m : rpath.members) {
    for (const auto& n : m.needs) {
      if (m.path == "pkg/ext.so" && n.name == "libleaf.so") {
        EXPECT_TRUE(n.found);
        EXPECT_EQ(n.rule, resolve::How::Rpath);
        EXPECT_EQ(n.requester, "pkg/lib/libmid.so");
        inherited = true;
      }
    }
  }
  EXPECT_TRUE(inherited) << "libleaf.so must be found through ext.so's DT_RPATH, inherited by libmid.so";

  const auto runpath = check(wheel("rn-1.0-py3-none-linux_x86_64.whl", "-Wl,--enable-new-dtags"), im);
  EXPECT_EQ(runpath.verdict, verdict::Verdict::Incompatible) << describe(runpath);
  const auto missing = findings(runpath, "missing-library");
  ASSERT_EQ(missing.size(), 1U) << describe(runpath);
  EXPECT_EQ(missing[0]->member, "pkg/lib/libmid.so");
  EXPECT_EQ(missing[0]->library, "libleaf.so");
  EXPECT_FALSE(missing[0]->evidence.empty());
  // Every folder the loader would try is in the evidence, the default folders among them.
  bool tried_default = false;
  for (const auto& e : missing[0]->evidence)
    tried_default |= e.find("/usr/lib/x86_64-linux-gnu/libleaf.so (default path)") == 0;
  EXPECT_TRUE(tried_default) << describe(runpath);
  // The member that found its own library through its RUNPATH is fine.
  for (const auto& m : runpath.members) {
    if (m.path == "pkg/ext.so") {
      EXPECT_EQ(m.needs.front().rule, resolve::How::Runpath);
    }
  }
}

// libtree, run on the same files laid out on disk, finds the same libraries by the same rules.
TEST(Verdict, ResolutionAgreesWithLibtree) {
  if (!have_program("libtree")) GTEST_SKIP() << "libtree absent: run scripts/install-deps.sh";
  TempDir dir;
  const auto im = load_image(image_file(dir, "img"));
  for (const char* dtags : {"--disable-new-dtags", "--enable-new-dtags"}) {
    SCOPED_TRACE(dtags);
    TempDir d;
    const std::string site = d.file("site");
    fs::create_directories(site + "/pkg/lib");
    const std::string leaf = build(d, "libleaf.so", k_leaf, "");
    const std::string mid = build(d, "libmid.so", k_mid, "-L" + d.path() + " -lleaf");
    const std::string ext =
        build(d, "ext.so", k_ext, "-L" + d.path() + " -lmid -Wl," + std::string(dtags) + ",-rpath,'$ORIGIN/lib'");
    fs::copy_file(ext, site + "/pkg/ext.so");
    fs::copy_file(mid, site + "/pkg/lib/libmid.so");
    fs::copy_file(leaf, site + "/pkg/lib/libleaf.so");
    const std::string w = make_wheel(d, "t-1.0-py3-none-linux_x86_64.whl",
                                     {{"pkg/ext.so", ext}, {"pkg/lib/libmid.so", mid}, {"pkg/lib/libleaf.so", leaf}});
    const auto r = check(w, im);
    // libtree: "pkg/lib/libmid.so [runpath]", "libleaf.so not found", "... [rpath of 1]".
    const auto lt = run("cd " + shell_quote(site) + " && libtree pkg/ext.so");
    std::map<std::string, std::string> theirs;  // library -> rule or "not found"
    const std::regex found(R"(([\w./-]+\.so) \[(rpath|runpath|ld\.so\.conf|default path)[^\]]*\])");
    const std::regex missing(R"(([\w.-]+\.so) not found)");
    std::stringstream ss(lt.out);
    for (std::string line; std::getline(ss, line);) {
      std::smatch m;
      if (std::regex_search(line, m, found)) theirs[fs::path(m[1].str()).filename().string()] = m[2];
      if (std::regex_search(line, m, missing)) theirs[m[1]] = "not found";
    }
    std::map<std::string, std::string> ours;
    for (const auto& m : r.members) {
      if (m.path != "pkg/ext.so") continue;
      for (const auto& n : m.needs) {
        if (n.name == "libleaf.so" || n.name == "libmid.so")
          ours[n.name] = n.found ? resolve::how_name(n.rule) : "not found";
      }
    }
    EXPECT_EQ(ours, theirs) << lt.out << describe(r);
    EXPECT_EQ(theirs.size(), 2U) << lt.out;
  }
}

TEST(Verdict, ForeignMachineMemberIsWrongArch) {
  if (!have_program("aarch64-linux-gnu-gcc"))
    GTEST_SKIP() << "aarch64-linux-gnu-gcc absent: run scripts/install-deps.sh";
  TempDir w;
  const std::string wheel =
      wheel_of(w, "a-1.0-py3-none-any.whl",
               {{"a/liba.so", "int a(void) { return 1; }\n", "-nostdlib", "aarch64-linux-gnu-gcc"}});
  TempDir d;
  const auto r = check(wheel, load_image(image_file(d, "img")));
  EXPECT_EQ(r.verdict, verdict::Verdict::Incompatible) << describe(r);
  const auto wrong = findings(r, "wrong-arch");
  ASSERT_EQ(wrong.size(), 1U) << describe(r);
  EXPECT_EQ(wrong[0]->member, "a/liba.so");
  EXPECT_NE(wrong[0]->explanation.find("aarch64"), std::string::npos);
}

namespace {

// An image whose torch 2.6.0 distribution ships torch/lib/libc10.so (built here) with its export table.
std::string torch_image(const TempDir& dir, const std::string& c10_source) {
  const std::string c10 = build(dir, "libc10.so", c10_source, "-Wl,-soname,libc10.so", "g++");
  fs::create_directories(dir.file("exports"));
  exports::write_table(exports::Table::from_binary(elf::read_elf_file(c10), "libc10.so", "torch/lib/libc10.so"),
                       dir.file("exports/libc10.so.exports.gz"));
  return image_file(dir, "torchimg",
                    R"(, "exports_dir": "exports", "distributions": [{"name": "torch", "version": "2.6.0",
        "location": "{site-packages}", "libraries": [{"path": "torch/lib/libc10.so", "soname": "libc10.so",
        "machine": "x86_64", "class": 64, "exports": "libc10.so.exports.gz"}]}])");
}

const char* const k_c10_now =
    "namespace c10 { struct SourceLocation { const char* f; int l; };\n"
    "struct MessageLogger { MessageLogger(SourceLocation, int, bool); };\n"
    "MessageLogger::MessageLogger(SourceLocation, int, bool) {} }\n";
const char* const k_c10_old =
    "namespace c10 { struct MessageLogger { MessageLogger(const char*, int, int); };\n"
    "MessageLogger::MessageLogger(const char*, int, int) {} }\n";
const char* const k_ext_old =
    "namespace c10 { struct MessageLogger { MessageLogger(const char*, int, int); }; }\n"
    "extern \"C\" int PyInit__ops(void) { c10::MessageLogger m(\"f\", 1, 2); (void)m; return 0; }\n";

}  // namespace

TEST(Verdict, RequiresDistTorchResolvesIntoTorchLib) {
  TempDir img;
  const auto im = load_image(torch_image(img, k_c10_old));
  TempDir w;
  build(w, "libc10.so", k_c10_old, "-Wl,-soname,libc10.so", "g++");
  const std::vector<Member> members = {{"ops/_ops.cpython-312-x86_64-linux-gnu.so", k_ext_old, "-lc10", "g++"}};
  // Without Requires-Dist: torch, nothing puts torch/lib on the search path.
  const auto alone = check(wheel_of(w, "ops-1.0-cp312-cp312-linux_x86_64.whl", members), im);
  ASSERT_EQ(findings(alone, "missing-library").size(), 1U) << describe(alone);
  EXPECT_EQ(findings(alone, "missing-library")[0]->library, "libc10.so");
  // With it, `import torch` has loaded torch/lib/libc10.so: reused by soname, and its symbols bind.
  TempDir w2;
  build(w2, "libc10.so", k_c10_old, "-Wl,-soname,libc10.so", "g++");
  const auto with =
      check(wheel_of(w2, "ops-1.0-cp312-cp312-linux_x86_64.whl", members, {"--requires-dist", "torch>=2.6"}), im);
  EXPECT_EQ(with.verdict, verdict::Verdict::Compatible) << describe(with);
  ASSERT_FALSE(with.members.empty());
  EXPECT_EQ(with.members[0].needs[0].rule, resolve::How::AlreadyLoaded);
  EXPECT_EQ(with.members[0].needs[0].where, "/opt/venv/lib/python3.12/site-packages/torch/lib/libc10.so");
  EXPECT_EQ(with.members[0].symbols_bound, 1U);
}

TEST(Verdict, TorchExtensionBuiltAgainstOtherHeadersIsASignatureChange) {
  TempDir img;
  const auto im = load_image(torch_image(img, k_c10_now));
  TempDir w;
  build(w, "libc10.so", k_c10_old, "-Wl,-soname,libc10.so", "g++");
  const auto r = check(
      wheel_of(w, "ops-1.0-cp312-cp312-linux_x86_64.whl",
               {{"ops/_ops.cpython-312-x86_64-linux-gnu.so", k_ext_old, "-lc10", "g++"}}, {"--requires-dist", "torch"}),
      im);
  EXPECT_EQ(r.verdict, verdict::Verdict::Incompatible);
  const auto missing = findings(r, "missing-symbol");
  ASSERT_EQ(missing.size(), 1U) << describe(r);
  EXPECT_EQ(missing[0]->demangled, "c10::MessageLogger::MessageLogger(char const*, int, int)");
  EXPECT_EQ(missing[0]->classification, verdict::Why::SignatureChanged);
  EXPECT_EQ(missing[0]->candidates.at(0), "c10::MessageLogger::MessageLogger(c10::SourceLocation, int, bool)");
  EXPECT_EQ(missing[0]->library, "libc10.so");
}

TEST(Verdict, CudaRuntimeMajorsAndTheUnknownDriver) {
  TempDir w;
  // Stand-ins for the runtimes, only to link against: the image's real CUDA 13.0 tables decide.
  build(w, "libcudart.so.13", "int cudaGetDeviceCount(int* n) { *n = 0; return 0; }\n", "-Wl,-soname,libcudart.so.13");
  build(w, "libcudart.so.12", "int cudaGetDeviceCount(int* n) { *n = 0; return 0; }\n", "-Wl,-soname,libcudart.so.12");
  fs::create_symlink(w.file("libcudart.so.13"), w.file("libcudart13.so"));
  fs::create_symlink(w.file("libcudart.so.12"), w.file("libcudart12.so"));
  const auto db = image::Db(source_dir() + "/db");
  const auto cuda13 = db.get("cuda13.0");
  const char* const src = "int cudaGetDeviceCount(int*);\nint use(void) { int n; return cudaGetDeviceCount(&n); }\n";
  const auto ok = check(wheel_of(w, "k13-1.0-py3-none-linux_x86_64.whl", {{"k/libk.so", src, "-lcudart13"}}), cuda13);
  EXPECT_TRUE(findings(ok, "missing-library").empty()) << describe(ok);
  EXPECT_TRUE(findings(ok, "missing-symbol").empty()) << describe(ok);
  const auto driver = findings(ok, "driver");
  ASSERT_EQ(driver.size(), 1U) << describe(ok);
  EXPECT_EQ(driver[0]->severity, verdict::Severity::Condition);
  EXPECT_EQ(driver[0]->required_version, "580.65.06");
  EXPECT_EQ(ok.verdict, verdict::Verdict::Unknown) << describe(ok);
  ASSERT_FALSE(ok.conditions.empty());
  EXPECT_NE(ok.conditions.front().find(">= 580.65.06"), std::string::npos);

  TempDir w2;
  build(w2, "libcudart.so.12", "int cudaGetDeviceCount(int* n) { *n = 0; return 0; }\n", "-Wl,-soname,libcudart.so.12");
  fs::create_symlink(w2.file("libcudart.so.12"), w2.file("libcudart12.so"));
  const auto r12 =
      check(wheel_of(w2, "k12-1.0-py3-none-linux_x86_64.whl", {{"k/libflagcx.so", src, "-lcudart12"}}), cuda13);
  EXPECT_EQ(r12.verdict, verdict::Verdict::Incompatible);
  const auto missing = findings(r12, "missing-library");
  ASSERT_EQ(missing.size(), 1U) << describe(r12);
  EXPECT_EQ(missing[0]->library, "libcudart.so.12");
  EXPECT_EQ(missing[0]->required_version, "12");
  EXPECT_NE(missing[0]->explanation.find("CUDA 12"), std::string::npos) << missing[0]->explanation;
  EXPECT_NE(missing[0]->explanation.find("CUDA 13.0"), std::string::npos) << missing[0]->explanation;
}

// Python imports extension modules RTLD_LOCAL: torch's libraries being loaded does not put their
// symbols in reach of a member that does not need them (no DT_NEEDED libc10.so).
TEST(Verdict, ImportedLibrariesAreOutOfReachWithoutANeed) {
  TempDir img;
  const auto im = load_image(torch_image(img, k_c10_old));
  TempDir w;
  const auto r = check(
      wheel_of(w, "ops-1.0-cp312-cp312-linux_x86_64.whl",
               {{"ops/_ops.cpython-312-x86_64-linux-gnu.so", k_ext_old, "", "g++"}}, {"--requires-dist", "torch"}),
      im);
  const auto missing = findings(r, "missing-symbol");
  ASSERT_EQ(missing.size(), 1U) << describe(r);
  EXPECT_EQ(missing[0]->classification, verdict::Why::Absent) << describe(r);
  EXPECT_EQ(r.verdict, verdict::Verdict::Incompatible);
}

namespace {

// Sentences said twice in one explanation ("" when none is).
std::string repeated_sentence(const std::string& text) {
  std::set<std::string> seen;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(". ", start);
    const std::string sentence = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!sentence.empty() && !seen.insert(sentence).second) return sentence;
    if (end == std::string::npos) break;
    start = end + 2;
  }
  return "";
}

// An optional route over pkg/_opt*, off with USE_OPT=0.
rules::RuleSet optional_route() {
  return rules::parse(R"({"schema": "wheelcheck-rules/1", "name": "t", "routes": [{"name": "opt", "optional": true,
      "members": ["pkg/_opt*"], "gates": {"USE_OPT": "0"}}]})",
                      "test rules");
}

// The last line of the text report: "UNKNOWN: 0 errors ..., 1 condition, 0 warnings; exit 4".
std::string headline(const verdict::Report& r) {
  std::string text = verdict::render_text(r, false);
  text.pop_back();
  return text.substr(text.find_last_of('\n') + 1);
}

const char* const k_needs_gone = "int gone(void);\nint PyInit__opt(void) { return gone(); }\n";
const char* const k_needs_python_fpe = "extern int PyFPE_jbuf[];\nint PyInit__core(void) { return PyFPE_jbuf[0]; }\n";

}  // namespace

// A library in the wheel that no search path of its requester reaches is said to be there, with the
// RUNPATH that would reach it; "not in the image, the wheel, or the distributions" only when true.
TEST(Verdict, MissingLibraryInTheWheelButOffThePathSaysSo) {
  TempDir w;
  const std::string foo = build(w, "libfoo.so", "int foo(void) { return 1; }\n", "-Wl,-soname,libfoo.so");
  build(w, "libnowhere.so", "int nowhere(void) { return 1; }\n", "-Wl,-soname,libnowhere.so");
  const std::string ext =
      build(w, "_ext.cpython-312-x86_64-linux-gnu.so",
            "int foo(void);\nint nowhere(void);\nint PyInit__ext(void) { return foo() + nowhere(); }\n",
            "-L" + w.path() + " -lfoo -lnowhere");
  const std::string whl = make_wheel(w, "f-1.0-cp312-cp312-linux_x86_64.whl",
                                     {{"pkg/_ext.cpython-312-x86_64-linux-gnu.so", ext}, {"pkg/lib/libfoo.so", foo}});
  TempDir d;
  const auto r = check(whl, load_image(image_file(d, "img")));
  std::map<std::string, const verdict::Finding*> by_library;
  for (const auto* f : findings(r, "missing-library")) by_library[f->library] = f;
  ASSERT_EQ(by_library.size(), 2U) << describe(r);
  const auto& in_wheel = *by_library.at("libfoo.so");
  EXPECT_EQ(in_wheel.explanation.rfind("libfoo.so is in the wheel at pkg/lib/libfoo.so, but no search path of "
                                       "pkg/_ext.cpython-312-x86_64-linux-gnu.so reaches it.",
                                       0),
            0U)
      << describe(r);
  EXPECT_NE(in_wheel.fix.find("-Wl,-rpath,'$ORIGIN/lib'"), std::string::npos) << in_wheel.fix;
  EXPECT_EQ(in_wheel.explanation.find("not in the image"), std::string::npos);
  const auto& nowhere = *by_library.at("libnowhere.so");
  EXPECT_NE(nowhere.explanation.find("which is not in the image, the wheel, or the distributions"), std::string::npos)
      << nowhere.explanation;
}

// Two members share a library whose own dependency is missing: the one finding counts the symbols it
// would have provided once, however many members load it.
TEST(Verdict, NoExplanationRepeatsASentence) {
  TempDir w;
  build(w, "libgone.so", "int gone(void) { return 1; }\n", "-Wl,-soname,libgone.so");
  const std::string common = build(w, "libcommon.so", "int gone(void);\nint common(void) { return gone(); }\n",
                                   "-L" + w.path() + " -lgone -Wl,-soname,libcommon.so");
  const std::string src = "int common(void);\nint f(void) { return common(); }\n";
  const std::string flags = "-L" + w.path() + " -lcommon -Wl,-rpath,'$ORIGIN'";
  const std::string a = build(w, "_a.cpython-312-x86_64-linux-gnu.so", src, flags);
  const std::string b = build(w, "_b.cpython-312-x86_64-linux-gnu.so", src, flags);
  const std::string whl = make_wheel(w, "two-1.0-cp312-cp312-linux_x86_64.whl",
                                     {{"two/libcommon.so", common},
                                      {"two/_a.cpython-312-x86_64-linux-gnu.so", a},
                                      {"two/_b.cpython-312-x86_64-linux-gnu.so", b}});
  TempDir d;
  const auto r = check(whl, load_image(image_file(d, "img")));
  const auto missing = findings(r, "missing-library");
  ASSERT_EQ(missing.size(), 1U) << describe(r);
  EXPECT_EQ(missing[0]->roots.size(), 2U);
  const std::string& e = missing[0]->explanation;
  EXPECT_EQ(e.find("would have come from it"), e.rfind("would have come from it")) << e;
  for (const auto& f : r.findings) EXPECT_EQ(repeated_sentence(f.explanation), "") << f.explanation;
}

// The text report's counts agree with the verdict: an error confined to an optional route that is off is
// counted apart, so an unknown (or degraded) verdict never reads "1 error".
TEST(Verdict, HeadlineCountsWhatDecidesTheVerdict) {
  TempDir w;
  build(w, "libgone.so", "int gone(void) { return 1; }\n", "-Wl,-soname,libgone.so");
  const std::string opt = build(w, "_opt.cpython-312-x86_64-linux-gnu.so", k_needs_gone, "-L" + w.path() + " -lgone");
  const std::string core = build(w, "_core.cpython-312-x86_64-linux-gnu.so", k_needs_python_fpe, "");
  TempDir d;
  const auto im = load_image(image_file(d, "img"));
  const auto rules = optional_route();
  verdict::CheckOptions o;
  o.rules = &rules;
  // The core member's PyFPE_jbuf may come from the interpreter, whose exports are unknown: a condition.
  const auto unknown = verdict::check(inspect_wheel(make_wheel(w, "u-1.0-cp312-cp312-linux_x86_64.whl",
                                                               {{"pkg/_core.cpython-312-x86_64-linux-gnu.so", core},
                                                                {"pkg/_opt.cpython-312-x86_64-linux-gnu.so", opt}})),
                                      im, o);
  EXPECT_EQ(unknown.verdict, verdict::Verdict::Unknown) << describe(unknown);
  EXPECT_EQ(headline(unknown),
            "UNKNOWN: 0 errors (and 1 error in optional routes that are off), 1 condition, 1 warning; exit 4");
  const auto degraded = verdict::check(inspect_wheel(make_wheel(w, "g-1.0-cp312-cp312-linux_x86_64.whl",
                                                                {{"pkg/_opt.cpython-312-x86_64-linux-gnu.so", opt}})),
                                       im, o);
  EXPECT_EQ(degraded.verdict, verdict::Verdict::Degraded) << describe(degraded);
  EXPECT_EQ(headline(degraded),
            "DEGRADED: 0 errors (and 1 error in optional routes that are off), 0 conditions, 1 warning; exit 3");
  // The reason a matrix cell shows is the worst finding that decided the verdict: for unknown the
  // condition, not the (worse) error inside the optional route that is off; for degraded that error.
  ASSERT_NE(verdict::reason(unknown), nullptr);
  EXPECT_EQ(verdict::reason(unknown)->severity, verdict::Severity::Condition) << describe(unknown);
  EXPECT_EQ(unknown.findings.front().severity, verdict::Severity::Error) << "the error is the worst finding";
  ASSERT_NE(verdict::reason(degraded), nullptr);
  EXPECT_EQ(verdict::reason(degraded)->kind, verdict::FindingKind::MissingLibrary) << describe(degraded);
  EXPECT_EQ(verdict::reason(degraded)->library, "libgone.so");
}

// A wheel that fails its own integrity is incompatible, even where the member concerned belongs to an
// optional route that is off: a RECORD mismatch is an error no route covers.
TEST(Verdict, IntegrityIsNeverCoveredByAnOptionalRoute) {
  TempDir w;
  build(w, "libgone.so", "int gone(void) { return 1; }\n", "-Wl,-soname,libgone.so");
  const std::string opt = build(w, "_opt.cpython-312-x86_64-linux-gnu.so", k_needs_gone, "-L" + w.path() + " -lgone");
  const std::string whl =
      make_wheel(w, "i-1.0-cp312-cp312-linux_x86_64.whl", {{"pkg/_opt.cpython-312-x86_64-linux-gnu.so", opt}},
                 {"--tamper", "pkg/_opt.cpython-312-x86_64-linux-gnu.so"});
  TempDir d;
  const auto rules = optional_route();
  verdict::CheckOptions o;
  o.rules = &rules;
  const auto r = verdict::check(inspect_wheel(whl), load_image(image_file(d, "img")), o);
  const auto record = findings(r, "record");
  ASSERT_EQ(record.size(), 1U) << describe(r);
  EXPECT_EQ(record[0]->severity, verdict::Severity::Error);
  EXPECT_NE(record[0]->explanation.find("not what its RECORD says"), std::string::npos) << record[0]->explanation;
  EXPECT_NE(record[0]->fix.find("re-download"), std::string::npos) << record[0]->fix;
  EXPECT_EQ(r.verdict, verdict::Verdict::Incompatible) << describe(r);
  EXPECT_EQ(headline(r).rfind("INCOMPATIBLE: 1 error (and 1 error in optional routes that are off)", 0), 0U)
      << headline(r);
}

// Requires-Dist against what is installed: a pin the image's torch does not admit is a warning; a marker is
// evaluated for the image's Python; an extra is not requested; a wheel beside it (as pip installs it) is what
// the pin is compared with; a distribution the image does not have is no pin to judge.
TEST(VerdictChecks, RequiresDistPinsAgainstTheImageAndTheWheelsBesideIt) {
  const image::Image im = image::Db(source_dir() + "/db").get("cuda13.0");  // torch 2.10.0+cpu, Python 3.12
  WheelProfile w;
  w.filename = wheel::parse_filename("flag_gems_cpp_cuda-5.4.2-cp312-cp312-linux_x86_64.whl");
  auto kinds = [&](const std::vector<const WheelProfile*>& with = {}) {
    std::vector<std::string> out;
    for (const auto& f : verdict::check_requires_dist(w, im, nullptr, with))
      out.push_back(f.library + " " + f.required_version + " vs " + f.candidates.front());
    return out;
  };
  w.metadata.requires_dist = {"torch==2.9.0"};
  EXPECT_EQ(kinds(), (std::vector<std::string>{"torch ==2.9.0 vs 2.10.0+cpu"}));
  const auto f = verdict::check_requires_dist(w, im, nullptr, {}).front();
  EXPECT_EQ(f.kind, verdict::FindingKind::RequiresDist);
  EXPECT_EQ(f.severity, verdict::Severity::Warning);
  EXPECT_NE(f.explanation.find("--no-deps"), std::string::npos) << f.explanation;
  w.metadata.requires_dist = {"torch (>=2.10)", "torch>=2.0,<3", "torch[opt]>=2.10; python_version >= '3.9'"};
  EXPECT_TRUE(kinds().empty()) << "2.10.0+cpu admitted, parenthesised and with extras and a true marker";
  w.metadata.requires_dist = {"torch==2.9.0; python_version < '3.10'", "torch==2.9.0; extra == 'old'", "numpy>=9",
                              "torch @ https://example.invalid/torch.whl", "torch"};
  EXPECT_TRUE(kinds().empty()) << "a false marker, an extra not requested, a distribution the image lacks, a URL";
  w.metadata.requires_dist = {"Torch (<2.10)"};
  EXPECT_EQ(kinds().size(), 1U) << "names are normalised";
  // A torch 2.9 wheel beside it is what pip installs: the pin holds.
  WheelProfile torch29;
  torch29.filename = wheel::parse_filename("torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64.whl");
  w.metadata.requires_dist = {"torch==2.9.0"};
  EXPECT_TRUE(kinds({&torch29}).empty());
}

}  // namespace unity_test_verdict
