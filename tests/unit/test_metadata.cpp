// The .dist-info files: WHEEL and METADATA headers, RECORD as CSV.
#include <gtest/gtest.h>

#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_metadata {

using namespace wheelcheck;

TEST(Metadata, HeadersWithContinuationAndBody) {
  const auto m = wheel::parse_metadata(
      "Metadata-Version: 2.1\nName: flag-gems\nVersion: 5.4.0\nRequires-Dist: torch (>=2.6)\n"
      "Requires-Dist: triton; extra == \"jit\"\nrequires-python: >=3.10\nLicense: Apache\n  second line\n\n"
      "Name: not-a-header\nRequires-Dist: in-the-body\n");
  EXPECT_EQ(m.name, "flag-gems");
  EXPECT_EQ(m.version, "5.4.0");
  ASSERT_EQ(m.requires_dist.size(), 2U);
  EXPECT_EQ(m.requires_dist[0], "torch (>=2.6)");
  EXPECT_EQ(m.requires_dist[1], "triton; extra == \"jit\"");
  ASSERT_TRUE(m.requires_python);
  EXPECT_EQ(*m.requires_python, ">=3.10");
}

// FlagOS's vllm repack: a blank line inside the headers; every field after it is the description to installers.
TEST(Metadata, FieldsAfterABlankLineInsideTheHeadersAreIssues) {
  const auto m = wheel::parse_metadata(
      "Metadata-Version: 2.1\nName: vllm\nVersion: 0.24.0\n\nRequires-Dist: a\nRequires-Dist: b\nRequires-Dist: c\n"
      "Requires-Python: >=3.10\n\n# vLLM\n\nVersion: 2 of the API is prose here.\n");
  EXPECT_TRUE(m.requires_dist.empty());
  ASSERT_EQ(m.issues.size(), 2U);
  EXPECT_EQ(m.issues[0].kind, wheel::MetadataIssue::Kind::AfterHeaders);
  EXPECT_EQ(m.issues[0].field, "Requires-Dist");
  EXPECT_EQ(m.issues[0].count, 3U);
  EXPECT_EQ(m.issues[0].line, 5U);
  EXPECT_EQ(m.issues[0].end_line, 4U);
  EXPECT_EQ(m.issues[1].field, "Requires-Python");
  EXPECT_NE(wheel::metadata_issue_text(m.issues[0]).find("3 lines (from line 5) after the blank line 4"),
            std::string::npos)
      << wheel::metadata_issue_text(m.issues[0]);
}

TEST(Metadata, ADescriptionIsNotAnIssueButARequiresDistInItIs) {
  const auto clean = wheel::parse_metadata(
      "Metadata-Version: 2.1\nName: x\nVersion: 1\n\n# x\n\nLicense: see below\nVersion: 2 of the API\n");
  EXPECT_TRUE(clean.issues.empty());
  const auto lost = wheel::parse_metadata("Name: x\nVersion: 1\n\n# x\n\nRequires-Dist: torch\n");
  ASSERT_EQ(lost.issues.size(), 1U);
  EXPECT_EQ(lost.issues[0].field, "Requires-Dist");
}

TEST(Metadata, ASingleFieldWrittenTwiceIsAnIssueAMultipleOneIsNot) {
  const auto m = wheel::parse_metadata(
      "Metadata-Version: 2.1\nName: x\nVersion: 1.0\nversion: 1.1\nClassifier: a\nClassifier: b\n"
      "Requires-Dist: a\nRequires-Dist: b\nSummary: one\nSummary: two\nSummary: three\n");
  ASSERT_EQ(m.issues.size(), 2U);
  EXPECT_EQ(m.issues[0].kind, wheel::MetadataIssue::Kind::Duplicate);
  EXPECT_EQ(m.issues[0].field, "version");
  EXPECT_EQ(m.issues[0].line, 3U);
  EXPECT_EQ(m.issues[0].count, 2U);
  EXPECT_EQ(m.issues[1].field, "Summary");
  EXPECT_EQ(m.issues[1].count, 3U);
  EXPECT_TRUE(wheel::metadata_field_single("requires-python"));
  EXPECT_FALSE(wheel::metadata_field_single("requires-dist"));
  EXPECT_FALSE(wheel::metadata_field_known("x-custom"));
}

TEST(Metadata, WheelFile) {
  const auto w = wheel::parse_wheel_file(
      "Wheel-Version: 1.0\r\nGenerator: bdist_wheel (0.41)\r\n"
      "Root-Is-Purelib: false\r\nTag: cp312-cp312-linux_x86_64\r\nTag: cp312-cp312-manylinux_2_28_x86_64\r\n");
  EXPECT_EQ(w.wheel_version, "1.0");
  ASSERT_TRUE(w.root_is_purelib);
  EXPECT_FALSE(*w.root_is_purelib);
  EXPECT_EQ(w.tags, (std::vector<std::string>{"cp312-cp312-linux_x86_64", "cp312-cp312-manylinux_2_28_x86_64"}));
}

TEST(Record, CsvWithQuotesAndEmptyFields) {
  const auto r = wheel::parse_record(
      "pkg/a.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
      "\"pkg/with,comma \"\"q\"\".py\",sha256=abc,12\r\n"
      "pkg-1.0.dist-info/RECORD,,\n\n");
  ASSERT_EQ(r.size(), 3U);
  EXPECT_EQ(r[0].algorithm, "sha256");
  EXPECT_EQ(r[0].digest, "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
  EXPECT_EQ(r[0].size, 0U);
  EXPECT_EQ(r[1].path, "pkg/with,comma \"q\".py");
  EXPECT_EQ(r[1].size, 12U);
  EXPECT_TRUE(r[2].algorithm.empty());
  EXPECT_FALSE(r[2].size);
}

TEST(Record, MalformedLinesAreErrors) {
  for (const char* bad : {"a,b\n", "a,sha256=x,1,extra\n", "a,nohash,1\n", "a,sha256=x,12z\n", "\"open,sha256=x,1\n"}) {
    EXPECT_THROW(wheel::parse_record(bad), Error) << bad;
  }
}

TEST(Encoding, Base64UrlWithoutPaddingMatchesRecordDigests) {
  // sha256 of the empty string, as pip writes it in RECORD.
  Hasher h;
  EXPECT_EQ(base64url_nopad(h.finish()), "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
  const std::vector<std::uint8_t> bytes{0xfb, 0xff};
  EXPECT_EQ(base64url_nopad(bytes), "-_8");
}

TEST(Encoding, JsonStringsStayValidForAnyBytes) {
  std::string out;
  append_json_string(out, std::string("a\"b\\c\n\x01\xff\xc3\xa9", 10));
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\u0001\xEF\xBF\xBD\xc3\xa9\"");
}

TEST(Sizes, ParseAndFormat) {
  EXPECT_EQ(parse_size("8G"), std::uint64_t{8} << 30);
  EXPECT_EQ(parse_size("100k"), 102400U);
  EXPECT_EQ(parse_size("123"), 123U);
  EXPECT_THROW(parse_size("12Q"), Error);
  EXPECT_THROW(parse_size("99999999999999T"), Error);
  EXPECT_EQ(format_size(1536), "1.5 KiB");
}

}  // namespace unity_test_metadata
