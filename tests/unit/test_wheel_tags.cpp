// What the parts of a wheel tag say (inspector/wheel/tags.cpp): Python tags, platform tags with their C
// library floors and the legacy manylinux aliases, and the spellings of an arch.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "wheelcheck/wheel.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_wheel_tags {

using namespace wheelcheck;
using Kind = wheel::Platform::Kind;

TEST(WheelTags, PythonTags) {
  const auto cp = wheel::parse_interpreter("cp312");
  EXPECT_TRUE(cp.valid);
  EXPECT_EQ(cp.impl, "cp");
  EXPECT_EQ(cp.major, 3);
  EXPECT_EQ(cp.minor, 12);
  const auto py = wheel::parse_interpreter("py3");
  EXPECT_TRUE(py.valid);
  EXPECT_EQ(py.impl, "py");
  EXPECT_EQ(py.minor, -1);
  EXPECT_EQ(wheel::parse_interpreter("pp310").impl, "pp");
  EXPECT_FALSE(wheel::parse_interpreter("cp").valid);
  EXPECT_FALSE(wheel::parse_interpreter("312").valid);
  EXPECT_FALSE(wheel::parse_interpreter("cp3x").valid);
  EXPECT_EQ(wheel::tag_text({"cp312", "abi3", "manylinux_2_28_x86_64"}), "cp312-abi3-manylinux_2_28_x86_64");
}

TEST(WheelTags, PlatformTags) {
  const auto m = wheel::parse_platform("manylinux_2_28_x86_64");
  EXPECT_EQ(m.kind, Kind::Manylinux);
  EXPECT_EQ(m.floor, (std::vector<std::uint64_t>{2, 28}));
  EXPECT_EQ(m.arch, "x86_64");
  EXPECT_EQ(m.policy, "manylinux_2_28");
  const auto legacy = wheel::parse_platform("manylinux2014_aarch64");
  EXPECT_EQ(legacy.kind, Kind::Manylinux);
  EXPECT_EQ(legacy.floor, (std::vector<std::uint64_t>{2, 17}));
  EXPECT_EQ(legacy.arch, "aarch64");
  EXPECT_EQ(legacy.policy, "manylinux2014 = manylinux_2_17");
  EXPECT_EQ(wheel::parse_platform("manylinux1_i686").floor, (std::vector<std::uint64_t>{2, 5}));
  EXPECT_EQ(wheel::parse_platform("manylinux2010_x86_64").floor, (std::vector<std::uint64_t>{2, 12}));
  const auto musl = wheel::parse_platform("musllinux_1_2_armv7l");
  EXPECT_EQ(musl.kind, Kind::Musllinux);
  EXPECT_EQ(musl.floor, (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(musl.arch, "armv7l");
  EXPECT_EQ(musl.policy, "musllinux_1_2");
  const auto local = wheel::parse_platform("linux_x86_64");
  EXPECT_EQ(local.kind, Kind::Linux);
  EXPECT_EQ(local.arch, "x86_64");
  EXPECT_EQ(wheel::parse_platform("any").kind, Kind::Any);
  EXPECT_EQ(wheel::parse_platform("macosx_11_0_arm64").os, "macOS");
  EXPECT_EQ(wheel::parse_platform("win_amd64").kind, Kind::Foreign);
  EXPECT_EQ(wheel::parse_platform("win32").os, "Windows");
  EXPECT_EQ(wheel::parse_platform("manylinux_2_x86_64").kind, Kind::Unknown);
  EXPECT_EQ(wheel::parse_platform("linux_").kind, Kind::Unknown);
  EXPECT_EQ(wheel::parse_platform("solaris_2_11").kind, Kind::Unknown);
}

TEST(WheelTags, ArchSpellings) {
  EXPECT_EQ(wheel::normalize_arch("amd64"), "x86_64");
  EXPECT_EQ(wheel::normalize_arch("ARM64"), "aarch64");
  EXPECT_EQ(wheel::normalize_arch("armv7l"), "armhf");
  EXPECT_EQ(wheel::normalize_arch("i386"), "i686");
  EXPECT_EQ(wheel::normalize_arch("ppc64le"), "ppc64le");
  EXPECT_TRUE(wheel::arch_matches("x86_64", "amd64"));
  EXPECT_TRUE(wheel::arch_matches("mips64", "mips64el"));
  EXPECT_FALSE(wheel::arch_matches("aarch64", "x86_64"));
  EXPECT_EQ(wheel::tag_arch_of("armhf"), "armv7l");
  EXPECT_EQ(wheel::tag_arch_of("armel"), "armv5l");
  EXPECT_EQ(wheel::tag_arch_of("x86_64"), "x86_64");
}

}  // namespace unity_test_wheel_tags
