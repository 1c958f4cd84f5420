// Packaging policies through the library: consistent_with against auditwheel's own answers for its real
// test wheels (../shared/fixtures/auditwheel-show), the verdict on every packaging target of each wheel's
// architecture, and each policy rule on ELF files built here.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/verdict.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_policy {

using namespace wheelcheck;
using namespace wheelcheck::test;
namespace fs = std::filesystem;

namespace {

const image::Db& db() {
  static const image::Db d(source_dir() + "/db");
  return d;
}

const policy::Policies& policies() {
  return db().policies();
}

std::string dump(const policy::Consistency& c) {
  return policy::to_json(c, std::nullopt).dump(2);
}

std::string dump(const verdict::Report& r) {
  return verdict::to_json(r).dump(2);
}

}  // namespace

TEST(Policy, EveryArchitectureOfThePoliciesIsATarget) {
  const auto names = db().image_names();
  auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  for (const char* tag :
       {"manylinux_2_17_aarch64", "manylinux_2_28_ppc64le", "manylinux_2_17_ppc64", "manylinux_2_5_i686",
        "manylinux_2_31_riscv64", "manylinux_2_36_loongarch64", "manylinux_2_17_armv7l", "manylinux_2_41_s390x",
        "musllinux_1_2_aarch64", "musllinux_1_1_x86_64", "android_24_arm64_v8a", "android_27_x86_64"}) {
    EXPECT_TRUE(has(tag)) << tag;
  }
  EXPECT_FALSE(has("manylinux_2_5_aarch64")) << "manylinux1 was never defined for aarch64";
  EXPECT_FALSE(has("manylinux_2_31_ppc64")) << "only manylinux2014 covers big-endian ppc64";
  // Today's x86_64 names stay: aliases of the x86_64 targets; PEP 600 aliases name every arch.
  EXPECT_EQ(db().get("manylinux2014").name, "manylinux_2_17_x86_64");
  EXPECT_EQ(db().get("manylinux_2_28").name, "manylinux_2_28_x86_64");
  EXPECT_EQ(db().get("musllinux_1_2").name, "musllinux_1_2_x86_64");
  EXPECT_EQ(db().get("manylinux2014_aarch64").name, "manylinux_2_17_aarch64");
  EXPECT_EQ(db().get("manylinux1_i686").name, "manylinux_2_5_i686");
  const auto arm = db().get("manylinux_2_28_aarch64");
  EXPECT_EQ(arm.policy, "manylinux_2_28_aarch64");
  EXPECT_EQ(arm.group, "target");
  EXPECT_EQ(arm.arch.text(), "aarch64");
  EXPECT_EQ(arm.libc_version.text(), "2.28");
  bool libc = false;
  for (const auto& l : arm.libraries) {
    if (l.soname != "libc.so.6") continue;
    libc = true;
    EXPECT_EQ(l.machine, "aarch64");
    EXPECT_NE(std::find(l.versions.begin(), l.versions.end(), "GLIBC_2.17"), l.versions.end());
    EXPECT_EQ(std::find(l.versions.begin(), l.versions.end(), "GLIBC_2.29"), l.versions.end());
  }
  EXPECT_TRUE(libc);
  EXPECT_THROW(db().get("manylinux_2_17_sparc"), Error);
}

// The acceptance: every wheel auditwheel answered for, consistent_with equal to its overall_tag, and the
// verdict on each packaging target of that architecture agreeing with it.
TEST(Policy, ConsistentWithEqualsAuditwheelOnEveryFixture) {
  const auto wheels = find_files(shared_dir() + "/fixtures/auditwheel-wheels", ".whl");
  if (wheels.empty()) GTEST_SKIP() << "../shared/fixtures/auditwheel-wheels is absent";
  std::size_t compared = 0, targets_checked = 0;
  for (const auto& w : wheels) {
    SCOPED_TRACE(w);
    const auto expected = nlohmann::json::parse(read_file(auditwheel_show_file(w)));
    const auto profile = inspect_wheel(w);
    const auto c = policy::analyze(profile, policies());
    if (expected.contains("error")) continue;  // auditwheel refused it: nothing to compare
    ASSERT_FALSE(expected["pure"].get<bool>());
    EXPECT_EQ(c.tag, expected["overall_tag"].get<std::string>()) << dump(c);
    ++compared;
    // The verdict on every target of the same family and architecture.
    const std::string overall = expected["overall_tag"].get<std::string>();
    const policy::Policy* mine = policies().find(overall);
    for (const auto& p : policies().all()) {
      if (p.libc != c.libc || p.arch != c.arch) continue;
      const auto target = policy::target_image(p);
      verdict::CheckOptions options;
      options.policies = &policies();
      const auto r = verdict::check(profile, target, options);
      // Compatible exactly where auditwheel's tag is at least as compatible as the target; above it,
      // incompatible, except where the only reason is the musl release (no musl binary states it): unknown.
      const bool fits = mine != nullptr && mine->priority >= p.priority;
      const bool only_musl_release =
          c.libc == policy::Libc::Musl && std::all_of(c.constrained_by.begin(), c.constrained_by.end(),
                                                      [](const auto& k) { return k.rule == policy::Rule::Libc; });
      const auto want = fits                ? verdict::Verdict::Compatible
                        : only_musl_release ? verdict::Verdict::Unknown
                                            : verdict::Verdict::Incompatible;
      EXPECT_EQ(verdict::verdict_name(r.verdict), verdict::verdict_name(want)) << p.tag() << "\n" << dump(r);
      ++targets_checked;
    }
  }
  EXPECT_GE(compared, 15U);
  EXPECT_GE(targets_checked, 100U);
}

TEST(Policy, AuditwheelRefusedWheelsStillGetAnAnswer) {
  const auto wheels = find_files(shared_dir() + "/fixtures/auditwheel-wheels", ".whl");
  if (wheels.empty()) GTEST_SKIP() << "../shared/fixtures/auditwheel-wheels is absent";
  std::map<std::string, std::string> got;
  for (const auto& w : wheels) {
    const auto c = policy::analyze(inspect_wheel(w), policies());
    got[fs::path(w).parent_path().filename().string() + "/" + fs::path(w).filename().string()] =
        c.pure ? "pure" : c.tag;
  }
  // A pure wheel: no tag to compute (auditwheel: "not a platform wheel").
  EXPECT_EQ(got["auditwheel-wheels/plumbum-1.6.8-py2.py3-none-any.whl"], "pure");
  // Soft-float ARM and MIPS: no policy covers them, so the generic linux tag of their machine.
  EXPECT_EQ(got["glibc/testsimple-0.0.1-cp313-cp313-linux_armv5l.whl"], "linux_armv5l");
  EXPECT_EQ(got["glibc/testsimple-0.0.1-cp313-cp313-linux_mips64.whl"], "linux_mips64el");
}

namespace {

std::string build(const TempDir& dir, const std::string& name, const std::string& source,
                  const std::string& flags = "") {
  std::string err;
  auto so = build_shared(dir, name, name + ".c", source, flags, "gcc", &err);
  if (!so) ADD_FAILURE() << "building " << name << ": " << err;
  return so.value_or("");
}

const policy::Constraint* find_rule(const policy::Consistency& c, policy::Rule rule) {
  for (const auto& k : c.constrained_by) {
    if (k.rule == rule) return &k;
  }
  return nullptr;
}

verdict::Report check_on(const WheelProfile& w, const std::string& target) {
  verdict::CheckOptions o;
  o.policies = &policies();
  return verdict::check(w, db().get(target), o);
}

std::vector<std::string> kinds(const verdict::Report& r) {
  std::vector<std::string> out;
  for (const auto& f : r.findings) out.push_back(verdict::kind_name(f.kind));
  return out;
}

}  // namespace

TEST(Policy, PurePythonWheelIsCompatibleWithEveryTarget) {
  TempDir d;
  const auto py = d.write("mod.py", "print('hi')\n");
  std::vector<std::string> wheels = {make_wheel(d, "pure-1.0-py3-none-any.whl", {{"pure/mod.py", py}})};
  const auto plumbum = shared_dir() + "/fixtures/auditwheel-wheels/plumbum-1.6.8-py2.py3-none-any.whl";
  if (fs::exists(plumbum)) wheels.push_back(plumbum);
  for (const auto& w : wheels) {
    SCOPED_TRACE(w);
    const auto profile = inspect_wheel(w);
    const auto c = policy::analyze(profile, policies());
    EXPECT_TRUE(c.pure);
    EXPECT_EQ(policy::to_json(c, std::nullopt)["consistent_with"], nullptr);
    std::size_t n = 0;
    for (const auto& name : db().image_names()) {
      const auto im = db().get(name);
      if (im.policy.empty()) continue;
      verdict::CheckOptions o;
      o.policies = &policies();
      const auto r = verdict::check(profile, im, o);
      EXPECT_EQ(r.verdict, verdict::Verdict::Compatible) << name << "\n" << dump(r);
      ++n;
    }
    EXPECT_EQ(n, policies().all().size());
  }
}

// A symbol version sets the floor; the tag that claims less is an error on the targets it fails and in an
// image too old for the real need, a warning where the wheel loads anyway.
TEST(Policy, SymbolVersionsSetTheFloorAndATagClaimingMoreIsCalledOut) {
  TempDir d;
  // arc4random is GLIBC_2.36 (this machine's glibc): the oldest policy with it is manylinux_2_36.
  const auto ext = build(d, "rnd.cpython-311-x86_64-linux-gnu",
                         "#include <stdlib.h>\nunsigned f(void) { return arc4random(); }\n"
                         "void* PyInit_rnd(void) { return 0; }\n");
  const auto w =
      make_wheel(d, "rnd-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", {{"rnd.cpython-311-x86_64-linux-gnu.so", ext}});
  const auto p = inspect_wheel(w);
  const auto c = policy::analyze(p, policies());
  EXPECT_EQ(c.tag, "manylinux_2_36_x86_64") << dump(c);
  EXPECT_EQ(c.newest_versions.at("GLIBC"), "2.36");
  const auto* k = find_rule(c, policy::Rule::SymbolVersion);
  ASSERT_NE(k, nullptr) << dump(c);
  EXPECT_EQ(k->version, "GLIBC_2.36");
  EXPECT_EQ(k->library, "libc.so.6");
  const auto claim = policy::check_claim(p, c, policies());
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->tag, "manylinux_2_17_x86_64");
  EXPECT_EQ(claim->consistent_with, "manylinux_2_36_x86_64");
  // Targets: below the need, incompatible with the version named; at or above it, compatible.
  const auto old = check_on(p, "manylinux_2_34");
  EXPECT_EQ(old.verdict, verdict::Verdict::Incompatible);
  bool version = false, tag = false;
  for (const auto& f : old.findings) {
    if (f.kind == verdict::FindingKind::PolicySymbolVersion) version = f.required_version == "GLIBC_2.36";
    if (f.kind == verdict::FindingKind::TagClaim) tag = f.severity == verdict::Severity::Error;
  }
  EXPECT_TRUE(version && tag) << dump(old);
  const auto fits = check_on(p, "manylinux_2_39_x86_64");
  EXPECT_EQ(fits.verdict, verdict::Verdict::Compatible) << dump(fits);
  ASSERT_EQ(kinds(fits), std::vector<std::string>{"tag-claim"}) << dump(fits);
  EXPECT_EQ(fits.findings[0].severity, verdict::Severity::Warning);
  // An image: debian12 has glibc 2.36, so the wheel loads: the claim is a warning there.
  verdict::CheckOptions o;
  o.policies = &policies();
  const auto in_image = verdict::check(p, db().get("debian12"), o);
  bool warned = false;
  for (const auto& f : in_image.findings) {
    if (f.kind == verdict::FindingKind::TagClaim) warned = f.severity == verdict::Severity::Warning;
  }
  EXPECT_TRUE(warned) << dump(in_image);
}

// Libraries: one the loader finds in the wheel (RUNPATH $ORIGIN) is the wheel's; one it would not find
// (no RUNPATH) is external, and the finding says what `auditwheel repair` would graft.
TEST(Policy, ExternalLibrariesAreWhatTheLoaderCannotFindInTheWheel) {
  TempDir d;
  const auto lib = build(d, "libhelper.so.1", "int helper(void) { return 1; }\n", "-Wl,-soname,libhelper.so.1");
  const std::string src = "int helper(void);\nint f(void) { return helper(); }\nvoid* PyInit_ext(void) { return 0; }\n";
  const auto with_runpath =
      build(d, "ext.cpython-311-x86_64-linux-gnu", src,
            "-L" + d.path() + " -l:libhelper.so.1 -Wl,-rpath,'$ORIGIN/lib' -Wl,--enable-new-dtags");
  const auto inside = make_wheel(d, "good-1.0-cp311-cp311-linux_x86_64.whl",
                                 {{"ext.cpython-311-x86_64-linux-gnu.so", with_runpath}, {"lib/libhelper.so.1", lib}});
  const auto c1 = policy::analyze(inspect_wheel(inside), policies());
  EXPECT_EQ(find_rule(c1, policy::Rule::Library), nullptr) << dump(c1);
  EXPECT_EQ(c1.tag.rfind("manylinux_", 0), 0U) << dump(c1);

  fs::create_directories(d.file("plain"));
  const auto no_runpath =
      build(d, "plain/ext.cpython-311-x86_64-linux-gnu", src, "-L" + d.path() + " -l:libhelper.so.1");
  const auto outside = make_wheel(d, "bad-1.0-cp311-cp311-linux_x86_64.whl",
                                  {{"ext.cpython-311-x86_64-linux-gnu.so", no_runpath}, {"lib/libhelper.so.1", lib}});
  const auto p2 = inspect_wheel(outside);
  const auto c2 = policy::analyze(p2, policies());
  EXPECT_EQ(c2.tag, "linux_x86_64") << dump(c2);
  const auto* k = find_rule(c2, policy::Rule::Library);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->library, "libhelper.so.1");
  const auto r = check_on(p2, "manylinux_2_28_x86_64");
  EXPECT_EQ(r.verdict, verdict::Verdict::Incompatible);
  ASSERT_EQ(kinds(r), std::vector<std::string>{"policy-library"}) << dump(r);
  const auto& f = r.findings[0];
  EXPECT_NE(f.fix.find("auditwheel repair --plat manylinux_2_28_x86_64"), std::string::npos) << f.fix;
  EXPECT_NE(f.fix.find("would be consistent with manylinux_"), std::string::npos) << f.fix;
  // The loader's search is the evidence: where it looked.
  EXPECT_FALSE(f.evidence.size() < 2) << dump(r);
}

// The blacklist (libz's internal symbols), UCS2 and PyFPE: each makes the wheel linux_<arch>.
TEST(Policy, BlacklistUcs2AndPyFpeSymbols) {
  TempDir d;
  const auto z = build(d, "zx.cpython-311-x86_64-linux-gnu",
                       "void* zcalloc(void*, unsigned, unsigned);\nvoid* g(void) { return zcalloc(0, 1, 1); }\n"
                       "void* PyInit_zx(void) { return 0; }\n",
                       "-Wl,--no-as-needed -lz");
  const auto u = build(d, "u",
                       "int PyUnicodeUCS2_GetSize(void*);\nint g(void) { return PyUnicodeUCS2_GetSize(0); }\n"
                       "void initu(void) {}\n");
  const auto fpe =
      build(d, "fp.cpython-311-x86_64-linux-gnu",
            "extern char PyFPE_jbuf[];\nchar* g(void) { return PyFPE_jbuf; }\nvoid* PyInit_fp(void) { return 0; }\n");
  struct Case {
    std::string wheel, member, built;
    policy::Rule rule;
    std::string symbol;
  } cases[] = {{"zx-1.0-cp311-cp311-linux_x86_64.whl", "zx.cpython-311-x86_64-linux-gnu.so", z, policy::Rule::Blacklist,
                "zcalloc"},
               {"u-1.0-cp27-cp27m-linux_x86_64.whl", "u.so", u, policy::Rule::Ucs2, "PyUnicodeUCS2_GetSize"},
               {"fp-1.0-cp311-cp311-linux_x86_64.whl", "fp.cpython-311-x86_64-linux-gnu.so", fpe, policy::Rule::PyFpe,
                "PyFPE_jbuf"}};
  for (const auto& cs : cases) {
    SCOPED_TRACE(cs.wheel);
    const auto p = inspect_wheel(make_wheel(d, cs.wheel, {{cs.member, cs.built}}));
    const auto c = policy::analyze(p, policies());
    EXPECT_EQ(c.tag, "linux_x86_64") << dump(c);
    const auto* k = find_rule(c, cs.rule);
    ASSERT_NE(k, nullptr) << dump(c);
    EXPECT_NE(std::find(k->symbols.begin(), k->symbols.end(), cs.symbol), k->symbols.end()) << dump(c);
    const auto r = check_on(p, "manylinux_2_41_x86_64");
    EXPECT_EQ(r.verdict, verdict::Verdict::Incompatible);
    EXPECT_EQ(kinds(r), std::vector<std::string>{"policy-" + policy::rule_name(cs.rule)}) << dump(r);
  }
}

// Another machine is one reason, not a cascade; another C library too. musl wheels are told by their
// suffix when nothing else says it, and the musl release is a condition (no binary states it).
TEST(Policy, MachineAndCLibraryMismatchesAreOneFindingEach) {
  TempDir d;
  const auto arm = shared_dir() + "/fixtures/auditwheel-wheels/glibc/testsimple-0.0.1-cp313-cp313-linux_aarch64.whl";
  if (fs::exists(arm)) {
    const auto r = check_on(inspect_wheel(arm), "manylinux2014");
    EXPECT_EQ(kinds(r), std::vector<std::string>{"policy-machine"}) << dump(r);
    EXPECT_EQ(r.verdict, verdict::Verdict::Incompatible);
  }
  const auto m = build(d, "m.cpython-312-x86_64-linux-musl", "void* PyInit_m(void) { return 0; }\n", "-nostdlib");
  const auto p =
      inspect_wheel(make_wheel(d, "m-1.0-cp312-cp312-linux_x86_64.whl", {{"m.cpython-312-x86_64-linux-musl.so", m}}));
  const auto c = policy::analyze(p, policies());
  EXPECT_EQ(c.libc, policy::Libc::Musl) << dump(c);
  EXPECT_EQ(c.tag, "musllinux_1_2_x86_64") << dump(c);
  const auto glibc = check_on(p, "manylinux_2_17_x86_64");
  EXPECT_EQ(kinds(glibc), std::vector<std::string>{"policy-libc"}) << dump(glibc);
  EXPECT_EQ(check_on(p, "musllinux_1_2").verdict, verdict::Verdict::Compatible);
  const auto older = check_on(p, "musllinux_1_1_x86_64");
  EXPECT_EQ(older.verdict, verdict::Verdict::Unknown) << dump(older);
}

TEST(Policy, IsaLevelAboveTheBaselineIsLinuxOnly) {
  TempDir d;
  std::string err;
  const auto v3 = build_shared(d, "v3.cpython-311-x86_64-linux-gnu", "v3.c", "void* PyInit_v3(void) { return 0; }\n",
                               "-march=x86-64-v3 -Wl,-z,x86-64-v3", "gcc", &err);
  if (!v3) GTEST_SKIP() << "this linker cannot mark x86-64-v3: " << err;
  const auto p = inspect_wheel(
      make_wheel(d, "v3-1.0-cp311-cp311-linux_x86_64.whl", {{"v3.cpython-311-x86_64-linux-gnu.so", *v3}}));
  const auto c = policy::analyze(p, policies());
  EXPECT_EQ(c.tag, "linux_x86_64") << dump(c);
  const auto* k = find_rule(c, policy::Rule::IsaLevel);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->version, "x86-64-v3");
}

// A policy document of the wrong shape is a malformed input with a typed error naming where the wrong
// value is (what `fuzz_image` found: an "aliases" list holding a number threw a json type_error).
TEST(Policy, WrongTypesInAPolicyAreTypedErrors) {
  const auto load = [](const char* text) {
    return policy::Policies::from_json(policy::Libc::Glibc, nlohmann::json::parse(text), "p.json");
  };
  const std::pair<const char*, const char*> cases[] = {
      {R"([{"name":"manylinux_2_17","priority":80,"aliases":[1],"symbol_versions":{"x86_64":{}}}])",
       "manylinux_2_17: aliases holds number, not a string"},
      {R"([{"name":"manylinux_2_17","priority":80,"aliases":"manylinux2014","symbol_versions":{}}])",
       "manylinux_2_17: aliases is not a list of strings"},
      {R"([{"name":"manylinux_2_17","priority":80,"symbol_versions":{"x86_64":{"GLIBC":[2.17]}}}])",
       "symbol_versions.GLIBC holds number"},
      {R"([{"name":"manylinux_2_17","priority":80,"symbol_versions":{"x86_64":{"GLIBC":"2.17"}}}])",
       "symbol_versions.GLIBC is not a list of strings"},
      {R"([{"name":"manylinux_2_17","priority":80,"lib_whitelist":[null],"symbol_versions":{}}])",
       "lib_whitelist holds null"},
      {R"([{"name":"manylinux_2_17","priority":80,"blacklist":[],"symbol_versions":{}}])",
       "blacklist is not an object"},
      {R"([{"name":"manylinux_2_17","priority":80,"blacklist":{"libz.so.1":[{}]},"symbol_versions":{}}])",
       "blacklist.libz.so.1 holds object"},
      {R"([{"name":"manylinux_2_17","priority":99999999999,"symbol_versions":{}}])", "out of range"},
  };
  for (const auto& [text, message] : cases) {
    try {
      (void)load(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput) << text;
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("p.json: "), std::string::npos) << e.what();
    }
  }
  // The right shapes still load.
  const auto good = load(R"([{"name":"manylinux_2_17","priority":80,"aliases":["manylinux2014"],
      "symbol_versions":{"x86_64":{"GLIBC":["2.17"]}},"lib_whitelist":["libc.so.6"],"blacklist":{"libz.so.1":["x"]}}])");
  ASSERT_NE(good.find("manylinux2014_x86_64"), nullptr);
  EXPECT_EQ(good.find("manylinux2014_x86_64")->whitelist.count("libc.so.6"), 1u);
}

}  // namespace unity_test_policy
