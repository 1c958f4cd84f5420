// PEP 440 versions and specifier sets (inspector/wheel/version.cpp). The expected answers are those of
// pip's vendored packaging, comparing the Python as X.Y.Z as pip does.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wheelcheck/wheel.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_wheel_version {

using namespace wheelcheck;

struct SpecifierCase {
  const char* specifiers;
  const char* version;
  bool expected;
};

TEST(PythonSpecifier, TableAgreesWithPipsPackaging) {
  const SpecifierCase cases[] = {
      {">=3.8", "3.12", true},
      {">=3.13", "3.12", false},
      {">=3.8,<3.13", "3.12", true},
      {">=3.8,<3.12", "3.12", false},
      {"<3.12.5", "3.12", true},  // "3.12" compares as 3.12.0
      {"<3.12.5", "3.12.5", false},
      {"<3.12.5", "3.12.4", true},
      {">3.12", "3.12", false},
      {">3.12", "3.12.1", true},
      {"<=3.12", "3.12.0", true},
      {"<=3.12", "3.12.1", false},
      {"==3.12", "3.12.0", true},
      {"==3.12", "3.12.3", false},
      {"==3.12.*", "3.12.7", true},
      {"==3.12.*", "3.13.0", false},
      {"==3.*", "3.12", true},
      {"!=3.12.*", "3.12.1", false},
      {"!=3.12.*", "3.11.9", true},
      {"!=3.13.0", "3.13.0", false},
      {"!=3.13.0", "3.13.1", true},
      {"~=3.11", "3.12", true},
      {"~=3.11", "4.0", false},
      {"~=3.11.2", "3.11.5", true},
      {"~=3.11.2", "3.12.0", false},
      {"~=3.11.2", "3.11.1", false},
      {"  >= 3.8 ,  < 4  ", "3.12", true},
      {">=3.8, ,<4", "3.12", true},
      {"", "3.12", true},
      {">=2.7,!=3.0.*,!=3.1.*,!=3.2.*,!=3.3.*,!=3.4.*", "3.12", true},
      {">=2.7,!=3.0.*,!=3.1.*,!=3.2.*,!=3.3.*,!=3.4.*", "3.3.7", false},
      {"===3.12", "3.12", true},
      {"===3.12.0", "3.12", false},
      {"<3.13.0rc1", "3.13.0", false},
      {"<3.13", "3.13.0", false},
      {">=3.13.0rc1", "3.13.0", true},
      {">=3.9.0a1", "3.9", true},
      {">3.12.post1", "3.12.1", true},
      {"==3.12.0+local", "3.12.0", false},
      {">=v3.8", "3.12", true},
      {">=3.8", "v3.12", true},
      {">=1!3.0", "3.12", false},
      {"<4", "3.12.99", true},
      {">=3.10.0.dev0", "3.10", true},
      {">3", "3.0", false},
      {">3", "3.12", true},
      {">=3.8", "3.12.0rc1", true},  // pip compares sys.version_info[:3]: the suffix is dropped
      {"==3.12", "3.12.0.0", true},
      {">=3.12", "3.12.4.1", true},
      {">= 3.9 , != 3.9.7 , < 3.14", "3.9.7", false},
      {">=3.6.0-1", "3.6.0", false},  // 3.6.0-1 is the post release 3.6.0.post1
      {">=3.6.0-1", "3.6.1", true},
      {">=3.10.0B2", "3.10.0", true},
      {"==3.12.*, !=3.12.2", "3.12.2", false},
  };
  ASSERT_GE(sizeof(cases) / sizeof(cases[0]), 30U);
  for (const auto& c : cases) {
    const auto got = wheel::python_satisfies(c.specifiers, c.version);
    ASSERT_TRUE(got.has_value()) << "'" << c.specifiers << "' against " << c.version << " did not parse";
    EXPECT_EQ(*got, c.expected) << "'" << c.specifiers << "' against " << c.version;
  }
}

TEST(PythonSpecifier, GarbageIsNullopt) {
  const char* const garbage[] = {
      ">=3.6.*",    "3.8",     ">=",     ">= 3.8 3.9",  "=>3.8",       "~=3",
      "<3.8+local", "~=3.8.*", ">=3.8;", "python>=3.8", ">=3.8 or <2", "==3.x",
      ">=3..8",     "!=",      ">=a.b",  "==3.12.*.*",  ">=3.8,<",     ">=99999999999999999999999"};
  for (const char* g : garbage) EXPECT_FALSE(wheel::python_satisfies(g, "3.12").has_value()) << g;
  EXPECT_FALSE(wheel::python_satisfies(">=3.8", "three").has_value());
  EXPECT_FALSE(wheel::python_satisfies(">=3.8", "").has_value());
}

TEST(PythonSpecifier, VersionWithoutPatchIsTheZeroPatch) {
  // Documented: "3.12" is 3.12.0 (PEP 440 pads the release segment); check_wheel_tags asks every patch.
  EXPECT_EQ(wheel::python_satisfies(">=3.12", "3.12"), true);
  EXPECT_EQ(wheel::python_satisfies("<3.12.5", "3.12"), true);
  EXPECT_EQ(wheel::python_satisfies(">3.12", "3.12"), false);
  EXPECT_EQ(wheel::python_satisfies("==3.12.0", "3.12"), true);
  EXPECT_EQ(wheel::python_satisfies("==3.12.4", "3.12"), false);
}

TEST(WheelVersion, OrderAgreesWithPipsPackaging) {
  // Each version is older than the next one.
  const char* const ordered[] = {"1.0.dev0",  "1.0a1",     "1.0a2.dev1", "1.0a2", "1.0b1",  "1.0rc1",       "1.0",
                                 "1.0+local", "1.0.post1", "1.0.1",      "1.1",   "2.10.0", "2.10.0+cu130", "1!0.1"};
  for (std::size_t i = 0; i + 1 < sizeof(ordered) / sizeof(ordered[0]); ++i) {
    EXPECT_EQ(wheel::compare_versions(ordered[i], ordered[i + 1]), -1) << ordered[i] << " < " << ordered[i + 1];
    EXPECT_EQ(wheel::compare_versions(ordered[i + 1], ordered[i]), 1) << ordered[i + 1] << " > " << ordered[i];
  }
  // Spellings of the same version.
  EXPECT_EQ(wheel::compare_versions("1.0", "1.0.0"), 0);
  EXPECT_EQ(wheel::compare_versions("v1.0", "1.0"), 0);
  EXPECT_EQ(wheel::compare_versions("1.0-1", "1.0.post1"), 0);
  EXPECT_EQ(wheel::compare_versions("1.0.ALPHA1", "1.0a1"), 0);
  EXPECT_EQ(wheel::compare_versions("1.0-preview.2", "1.0rc2"), 0);
  // Local segments: numbers above words, compared as numbers.
  EXPECT_EQ(wheel::compare_versions("1.0+abc", "1.0+5"), -1);
  EXPECT_EQ(wheel::compare_versions("1.0+9", "1.0+10"), -1);
  // Not versions.
  EXPECT_FALSE(wheel::compare_versions("1.0", "one").has_value());
  EXPECT_FALSE(wheel::compare_versions("", "1.0").has_value());
  EXPECT_FALSE(wheel::compare_versions("1..0", "1.0").has_value());
}

TEST(WheelVersion, SpecifierSetsParse) {
  const auto set = wheel::parse_specifier_set(" >=3.8, ,!=3.9.*, ===foo ");
  ASSERT_TRUE(set.has_value());
  ASSERT_EQ(set->size(), 3u);
  EXPECT_EQ((*set)[0].op, ">=");
  EXPECT_EQ((*set)[0].version.release, (std::vector<std::uint64_t>{3, 8}));
  EXPECT_EQ((*set)[1].op, "!=");
  EXPECT_TRUE((*set)[1].wildcard);
  EXPECT_EQ((*set)[2].op, "===");
  EXPECT_EQ((*set)[2].arbitrary, "foo");
  EXPECT_TRUE(wheel::parse_specifier_set("")->empty());
  EXPECT_FALSE(wheel::parse_specifier_set(">=3.8,<").has_value());
}

TEST(WheelVersion, VersionInASpecifierSetAdmitsPreReleases) {
  // As packaging's Specifier.contains(version, prereleases=True), which PEP 508 markers use.
  EXPECT_EQ(wheel::version_in("==2.10.0", "2.10.0+cpu"), true);  // a local label ignored...
  EXPECT_EQ(wheel::version_in("==2.10.0+cpu", "2.10.0+cpu"), true);
  EXPECT_EQ(wheel::version_in("==2.10.0+cpu", "2.10.0"), false);  // ...unless the clause has one
  EXPECT_EQ(wheel::version_in("==2.10.0+cpu", "2.10.0+cu130"), false);
  EXPECT_EQ(wheel::version_in(">=3.10,<3.13", "3.12.4"), true);
  EXPECT_EQ(wheel::version_in(">=3.13", "3.13.0rc1"), false);
  EXPECT_EQ(wheel::version_in(">=3.13.0a1", "3.13.0rc1"), true);  // pre-releases admitted
  EXPECT_EQ(wheel::version_in("<3.13", "3.13.0rc1"), false);      // < excludes the named version's
  EXPECT_EQ(wheel::version_in(">3.12", "3.12.0.post1"), false);   // > its post releases
  EXPECT_EQ(wheel::version_in("==3.12.*", "3.12.4.1"), true);     // the whole version: no [:3]
  EXPECT_EQ(wheel::version_in("==3.12.4", "3.12.4.1"), false);
  EXPECT_EQ(wheel::version_in("~=2.2", "2.3"), true);
  EXPECT_EQ(wheel::version_in("", "anything"), true);
  // === is text equality, case aside; a version that does not parse still compares there.
  EXPECT_EQ(wheel::version_in("===2.10.0+CPU", "2.10.0+cpu"), true);
  EXPECT_EQ(wheel::version_in("===2.10.0", "2.10"), false);
  EXPECT_EQ(wheel::version_in("===foo", "FOO"), true);
  EXPECT_EQ(wheel::version_in("===foo,===bar", "foo"), false);
  // nullopt: a set that does not parse, or a version another clause needs that does not.
  EXPECT_EQ(wheel::version_in(">=1", "not a version"), std::nullopt);
  EXPECT_EQ(wheel::version_in("===foo,>=1", "foo"), std::nullopt);
  EXPECT_EQ(wheel::version_in("=>1", "1.0"), std::nullopt);
  // Where python_satisfies drops what follows X.Y.Z, version_in does not.
  EXPECT_EQ(wheel::python_satisfies(">=3.13", "3.13.0rc1"), true);
  EXPECT_EQ(wheel::version_in(">=3.13", "3.13.0rc1"), false);
}

}  // namespace unity_test_wheel_version
