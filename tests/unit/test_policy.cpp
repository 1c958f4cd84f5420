// Packaging policies: consistent_with against auditwheel's own answers for its real test wheels
// (../shared/fixtures/auditwheel-show), the verdict on every packaging target of each wheel's
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

// The auditwheel-show file for a wheel: its folder below auditwheel-wheels names the prefix.
std::string show_file(const std::string& wheel) {
  const fs::path p(wheel);
  const std::string folder = p.parent_path().filename().string();
  std::string prefix;
  if (folder == "glibc" || folder == "musllinux_1_2" || folder == "android") prefix = folder + "_";
  return shared_dir() + "/fixtures/auditwheel-show/" + prefix + p.stem().string() + ".json";
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
    const auto expected = nlohmann::json::parse(read_file(show_file(w)));
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
