// Wheel file names: the grammar of the binary distribution format, with compressed tag sets.
#include <gtest/gtest.h>

#include "wheelcheck/error.hpp"
#include "wheelcheck/wheel.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_filename {

using namespace wheelcheck;

TEST(Filename, PlainWheel) {
  const auto f = wheel::parse_filename("flag_gems-5.4.0-cp312-cp312-linux_x86_64.whl");
  EXPECT_EQ(f.name, "flag_gems");
  EXPECT_EQ(f.normalized_name(), "flag-gems");
  EXPECT_EQ(f.version, "5.4.0");
  EXPECT_FALSE(f.build);
  ASSERT_EQ(f.tags.size(), 1U);
  EXPECT_EQ(f.tags[0], (wheel::Tag{"cp312", "cp312", "linux_x86_64"}));
}

TEST(Filename, LocalLabelPercentEncodedAndBuildTag) {
  const auto f = wheel::parse_filename("/downloads/flagtree-0.6.1%2Bmetax3.6-1abc-cp312-cp312-linux_x86_64.whl");
  EXPECT_EQ(f.filename, "flagtree-0.6.1+metax3.6-1abc-cp312-cp312-linux_x86_64.whl");
  EXPECT_EQ(f.version, "0.6.1+metax3.6");
  ASSERT_TRUE(f.build);
  EXPECT_EQ(*f.build, "1abc");
}

TEST(Filename, CompressedTagSetsExpand) {
  const auto f = wheel::parse_filename("plumbum-1.6.8-py2.py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
  ASSERT_EQ(f.tags.size(), 4U);
  EXPECT_EQ(f.tags[0], (wheel::Tag{"py2", "none", "manylinux_2_17_x86_64"}));
  EXPECT_EQ(f.tags[1], (wheel::Tag{"py2", "none", "manylinux2014_x86_64"}));
  EXPECT_EQ(f.tags[3], (wheel::Tag{"py3", "none", "manylinux2014_x86_64"}));
}

TEST(Filename, RejectsWhatIsNotAWheelName) {
  for (const char* bad : {"foo.zip", "foo-1.0.whl", "foo-1.0-py3-none.whl", "foo-1.0-1-2-py3-none-any.whl",
                          "foo-1.0-py3--any.whl", "-1.0-py3-none-any.whl", "foo-1.0-py3-none-any-CUDA.whl",
                          "foo-1.0-1-py3-none-any-cu+1.whl", "foo-1.0-1-py3-none-any-x-y.whl"}) {
    try {
      wheel::parse_filename(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput) << bad;
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

// PEP 825's variant label: a last part after the platform tag. A six-part name is a build tag when its third
// part starts with a digit, else a label; seven parts are both.
TEST(Filename, VariantLabels) {
  const auto v = wheel::parse_filename("torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda13.0.whl");
  EXPECT_EQ(v.version, "2.10.0");
  EXPECT_FALSE(v.build);
  ASSERT_TRUE(v.variant);
  EXPECT_EQ(*v.variant, "cuda13.0");
  ASSERT_EQ(v.tags.size(), 1U);
  EXPECT_EQ(v.tags[0], (wheel::Tag{"cp312", "cp312", "manylinux_2_28_x86_64"}));
  const auto both = wheel::parse_filename("torch-2.10.0-1-cp312-cp312-linux_x86_64-null.whl");
  ASSERT_TRUE(both.build && both.variant);
  EXPECT_EQ(*both.build, "1");
  EXPECT_EQ(*both.variant, "null");
  const auto build = wheel::parse_filename("torch-2.10.0-1-cp312-cp312-linux_x86_64.whl");
  EXPECT_TRUE(build.build);
  EXPECT_FALSE(build.variant);
  // The file name an installer should see, label kept.
  EXPECT_EQ(wheel::canonical_filename("torch", "2.10.0", std::nullopt, {"cp312-cp312-linux_x86_64"}, "rocm7.1"),
            "torch-2.10.0-cp312-cp312-linux_x86_64-rocm7.1.whl");
}

}  // namespace unity_test_filename
