// Project pages of package indexes: PEP 691 JSON and PEP 503 HTML as real indexes serve them (PyPI,
// Sonatype Nexus, download.pytorch.org), and hostile pages that must fail cleanly.
#include <gtest/gtest.h>

#include <string>

#include "wheelcheck/error.hpp"
#include "wheelcheck/index.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_index_pages {

using namespace wheelcheck;
using index::parse_project_page;

namespace {

constexpr const char* k_json = "application/vnd.pypi.simple.v1+json";
constexpr const char* k_html = "text/html; charset=utf-8";

const std::string k_sha_a = "6c4f5b1e8d0b6a4d8e3a0f4b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d";
const std::string k_sha_b = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// The message of the bad_input that `parse` throws ("" when it throws nothing, which fails the test).
template <typename F>
std::string bad_input_message(F parse) {
  try {
    parse();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool any_contains(const std::vector<std::string>& texts, const std::string& part) {
  for (const auto& t : texts) {
    if (contains(t, part)) return true;
  }
  return false;
}

// A PyPI-style PEP 691 page (api-version 1.1, PEP 700 fields, PEP 714 core-metadata).
const std::string k_pypi_json = R"({
  "meta": {"_last-serial": 26543210, "api-version": "1.1"},
  "name": "flag-gems",
  "versions": ["5.3.0", "5.4.0"],
  "files": [
    {
      "core-metadata": {"sha256": "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"},
      "data-dist-info-metadata": {"sha256": "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"},
      "filename": "flag_gems-5.4.0-cp312-cp312-manylinux_2_28_x86_64.whl",
      "hashes": {"sha256": ")" + k_sha_a +
                                R"("},
      "requires-python": ">=3.10",
      "size": 1234567,
      "upload-time": "2025-06-01T10:20:30.123456Z",
      "url": "https://files.pythonhosted.org/packages/ab/cd/flag_gems-5.4.0-cp312-cp312-manylinux_2_28_x86_64.whl",
      "yanked": false
    },
    {
      "core-metadata": false,
      "filename": "flag_gems-5.3.0.tar.gz",
      "hashes": {},
      "requires-python": null,
      "size": 42,
      "upload-time": "2025-01-01T00:00:00Z",
      "url": "../../packages/flag_gems-5.3.0.tar.gz",
      "yanked": "broken build"
    },
    {
      "dist-info-metadata": true,
      "filename": "flag_gems-5.2.0-py3-none-any.whl",
      "hashes": {"sha256": ")" + k_sha_b +
                                R"("},
      "url": "https://files.example.org/flag_gems-5.2.0-py3-none-any.whl",
      "yanked": true
    }
  ]
})";

}  // namespace

TEST(IndexPages, PypiJsonPage) {
  const auto page = parse_project_page(k_pypi_json, "application/vnd.pypi.simple.v1+json",
                                       "https://pypi.org/simple/flag-gems/", "Flag_Gems");
  EXPECT_EQ(page.format, "json");
  EXPECT_EQ(page.name, "flag-gems");
  EXPECT_EQ(page.url, "https://pypi.org/simple/flag-gems/");
  EXPECT_EQ(page.api_version, "1.1");
  EXPECT_TRUE(page.warnings.empty()) << page.warnings.front();
  EXPECT_EQ(page.versions, (std::vector<std::string>{"5.3.0", "5.4.0"}));
  ASSERT_EQ(page.files.size(), 3U);

  const auto& wheel = page.files[0];
  EXPECT_EQ(wheel.filename, "flag_gems-5.4.0-cp312-cp312-manylinux_2_28_x86_64.whl");
  EXPECT_EQ(wheel.url,
            "https://files.pythonhosted.org/packages/ab/cd/flag_gems-5.4.0-cp312-cp312-manylinux_2_28_x86_64.whl");
  EXPECT_EQ(wheel.sha256(), k_sha_a);
  ASSERT_TRUE(wheel.requires_python);
  EXPECT_EQ(*wheel.requires_python, ">=3.10");
  EXPECT_FALSE(wheel.yanked);
  EXPECT_TRUE(wheel.core_metadata);  // core-metadata wins over dist-info-metadata, and is lower-cased
  EXPECT_EQ(wheel.core_metadata_hashes.at("sha256"),
            "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789");
  ASSERT_TRUE(wheel.size);
  EXPECT_EQ(*wheel.size, 1234567U);
  ASSERT_TRUE(wheel.upload_time);
  EXPECT_EQ(*wheel.upload_time, "2025-06-01T10:20:30.123456Z");

  const auto& sdist = page.files[1];
  EXPECT_EQ(sdist.url, "https://pypi.org/packages/flag_gems-5.3.0.tar.gz");  // relative, against the final URL
  EXPECT_TRUE(sdist.hashes.empty());
  EXPECT_EQ(sdist.sha256(), "");
  EXPECT_FALSE(sdist.requires_python);
  EXPECT_TRUE(sdist.yanked);
  EXPECT_EQ(sdist.yanked_reason, "broken build");
  EXPECT_FALSE(sdist.core_metadata);

  const auto& old = page.files[2];
  EXPECT_TRUE(old.yanked);
  EXPECT_EQ(old.yanked_reason, "");
  EXPECT_TRUE(old.core_metadata);  // the older spelling, as a boolean
  EXPECT_TRUE(old.core_metadata_hashes.empty());
  EXPECT_FALSE(old.size);
}

TEST(IndexPages, JsonLatestTypeAndRelativeUrlAfterRedirect) {
  const std::string body =
      R"({"meta": {"api-version": "1.0"}, "name": "x", "files": [{"filename": "x-1.0-py3-none-any.whl",
          "url": "x-1.0-py3-none-any.whl", "hashes": {"sha256": ")" +
      k_sha_b + R"("}}]})";
  // The request went to /simple/X/ and was redirected to the normalized page: links resolve against it.
  const auto page =
      parse_project_page(body, "Application/Vnd.PyPI.Simple.Latest+JSON", "https://idx.example/simple/x/", "X");
  EXPECT_EQ(page.format, "json");
  ASSERT_EQ(page.files.size(), 1U);
  EXPECT_EQ(page.files[0].url, "https://idx.example/simple/x/x-1.0-py3-none-any.whl");
  EXPECT_TRUE(page.versions.empty());

  // A URL that cannot be resolved costs its file, with a warning, not the page.
  const auto bad_url = parse_project_page(
      R"({"files": [{"filename": "x-1.0.tar.gz", "url": "http://[x"}, {"filename": "x-1.1.tar.gz", "url": "x-1.1.tar.gz"}]})",
      k_json, "https://idx.example/simple/x/", "x");
  ASSERT_EQ(bad_url.files.size(), 1U);
  EXPECT_EQ(bad_url.files[0].filename, "x-1.1.tar.gz");
  EXPECT_TRUE(any_contains(bad_url.warnings, "files[0]")) << ::testing::PrintToString(bad_url.warnings);
}

TEST(IndexPages, JsonApiVersionDefaultsToOneZero) {
  const auto page = parse_project_page(R"({"name": "x", "files": []})", k_json, "https://idx.example/simple/x/", "x");
  EXPECT_EQ(page.api_version, "1.0");
  EXPECT_TRUE(page.files.empty());
  EXPECT_TRUE(page.warnings.empty());
}

TEST(IndexPages, NewerMinorApiVersionWarns) {
  const auto page =
      parse_project_page(R"({"meta": {"api-version": "1.4"}, "name": "x", "files": []})", k_json, "https://i/x/", "x");
  EXPECT_EQ(page.api_version, "1.4");
  EXPECT_TRUE(any_contains(page.warnings, "1.4")) << ::testing::PrintToString(page.warnings);

  const auto html = parse_project_page(
      R"(<html><head><meta name="pypi:repository-version" content="1.3"></head><body></body></html>)", k_html,
      "https://i/x/", "x");
  EXPECT_EQ(html.api_version, "1.3");
  EXPECT_TRUE(any_contains(html.warnings, "1.3"));
}

TEST(IndexPages, NewerMajorApiVersionIsAnError) {
  const auto json = bad_input_message([] {
    parse_project_page(R"({"meta": {"api-version": "2.0"}, "name": "x", "files": []})", k_json,
                       "https://idx.example/simple/x/", "x");
  });
  EXPECT_TRUE(contains(json, "api-version 2.0")) << json;
  EXPECT_TRUE(contains(json, "newer major than wheelcheck understands (1.x)")) << json;
  EXPECT_TRUE(contains(json, "https://idx.example/simple/x/")) << json;

  const auto html = bad_input_message([] {
    parse_project_page(R"(<meta name="pypi:repository-version" content="2.1"><a href="x-1.whl">x</a>)", k_html,
                       "https://i/x/", "x");
  });
  EXPECT_TRUE(contains(html, "api-version 2.1")) << html;
}

TEST(IndexPages, GarbageApiVersionIsAnError) {
  for (const char* version : {"one", "1", "1.x", "", "1.1.1", "-1.0"}) {
    const auto body = std::string(R"({"meta": {"api-version": ")") + version + R"("}, "files": []})";
    const auto message = bad_input_message([&] { parse_project_page(body, k_json, "https://i/x/", "x"); });
    EXPECT_TRUE(contains(message, "api-version")) << version << ": " << message;
  }
  const auto html = bad_input_message([] {
    parse_project_page(R"(<meta name="pypi:repository-version" content="latest">)", k_html, "https://i/x/", "x");
  });
  EXPECT_TRUE(contains(html, "latest")) << html;
}

TEST(IndexPages, JsonFieldOfWrongTypeNamesTheField) {
  struct Case {
    std::string body;
    std::string field;
  };
  const std::string file = R"("filename": "x-1.whl", "url": "x-1.whl")";
  const std::vector<Case> cases = {
      {R"({"meta": {"api-version": 1.1}, "files": []})", "meta.api-version"},
      {R"({"meta": [], "files": []})", "meta"},
      {R"({"name": 7, "files": []})", "name"},
      {R"({"files": {}})", "files"},
      {R"({"files": [7]})", "files[0]"},
      {R"({"files": [{"filename": 1, "url": "x-1.whl"}]})", "files[0].filename"},
      {R"({"files": [{"filename": "x-1.whl"}]})", "files[0].url"},
      {R"({"files": [{)" + file + R"(, "hashes": []}]})", "files[0].hashes"},
      {R"({"files": [{)" + file + R"(, "hashes": {"sha256": 5}}]})", "files[0].hashes"},
      {R"({"files": [{)" + file + R"(, "requires-python": 3}]})", "files[0].requires-python"},
      {R"({"files": [{)" + file + R"(, "yanked": 1}]})", "files[0].yanked"},
      {R"({"files": [{)" + file + R"(, "core-metadata": "yes"}]})", "files[0].core-metadata"},
      {R"({"files": [{)" + file + R"(, "dist-info-metadata": 1}]})", "files[0].dist-info-metadata"},
      {R"({"files": [{)" + file + R"(, "size": -1}]})", "files[0].size"},
      {R"({"files": [{)" + file + R"(, "size": "12"}]})", "files[0].size"},
      {R"({"files": [{)" + file + R"(, "size": 1.5}]})", "files[0].size"},
      {R"({"files": [{)" + file + R"(, "upload-time": 0}]})", "files[0].upload-time"},
      {R"({"files": [], "versions": [1]})", "versions"},
      {R"({"files": [], "versions": "1.0"})", "versions"},
  };
  for (const auto& c : cases) {
    const auto message =
        bad_input_message([&] { parse_project_page(c.body, k_json, "https://idx.example/simple/x/", "x"); });
    EXPECT_TRUE(contains(message, "\"" + c.field + "\"")) << c.body << " -> " << message;
    EXPECT_TRUE(contains(message, "https://idx.example/simple/x/")) << message;
  }
}

TEST(IndexPages, NotJsonIsAnError) {
  for (const char* body : {"", "<html></html>", R"({"files": [)", "[]", "null", R"({"files": []} trailing)"}) {
    const auto message = bad_input_message([&] { parse_project_page(body, k_json, "https://i/x/", "x"); });
    EXPECT_TRUE(contains(message, "https://i/x/")) << body << " -> " << message;
  }
  EXPECT_TRUE(contains(bad_input_message([] { parse_project_page("{}", k_json, "https://i/x/", "x"); }), "files"));
}

TEST(IndexPages, DeeplyNestedJsonFailsCleanly) {
  const std::string brackets(100000, '[');
  const auto message = bad_input_message([&] { parse_project_page(brackets, k_json, "https://i/x/", "x"); });
  EXPECT_TRUE(contains(message, "nested deeper than 64")) << message;

  // Brackets inside strings are not nesting; 64 real levels are still fine.
  const std::string in_string = R"({"files": [], "name": ")" + std::string(1000, '[') + R"(\"["})";
  EXPECT_EQ(parse_project_page(in_string, k_json, "https://i/x/", "x").name, std::string(1000, '[') + "\"[");
  // 64 levels in all are fine, 65 are not.
  const auto nested = [](int levels) {
    return R"({"files": [], "extra": )" + std::string(levels - 1, '[') + std::string(levels - 1, ']') + "}";
  };
  EXPECT_NO_THROW(parse_project_page(nested(64), k_json, "https://i/x/", "x"));
  EXPECT_TRUE(contains(bad_input_message([&] { parse_project_page(nested(65), k_json, "https://i/x/", "x"); }),
                       "nested deeper than 64"));
}

TEST(IndexPages, NexusHtmlPage) {
  // Sonatype Nexus: links two levels up from /repository/pypi-proxy/simple/flagtree/.
  const std::string body = R"(<html lang="en">
<head><title>Links for flagtree</title>
  <meta name="api-version" value="2"/>
</head>
<body><h1>Links for flagtree</h1>
<a href="../../packages/flagtree/0.6.1/flagtree-0.6.1-cp312-cp312-linux_x86_64.whl#sha256=)" +
                           k_sha_a + R"(" rel="internal">flagtree-0.6.1-cp312-cp312-linux_x86_64.whl</a><br/>
<a href="../../packages/flagtree/0.6.0/flagtree-0.6.0-cp311-cp311-linux_x86_64.whl#md5=0123456789ABCDEF0123456789abcdef" data-requires-python="&gt;=3.8" rel="internal">flagtree-0.6.0-cp311-cp311-linux_x86_64.whl</a><br/>
</body>
</html>
)";
  // Asked for /simple/FlagTree, redirected to the normalized page.
  const auto page =
      parse_project_page(body, "text/html", "https://nexus.example/repository/pypi-proxy/simple/flagtree/", "FlagTree");
  EXPECT_EQ(page.format, "html");
  EXPECT_EQ(page.name, "FlagTree");
  EXPECT_EQ(page.api_version, "1.0");
  EXPECT_TRUE(page.warnings.empty()) << ::testing::PrintToString(page.warnings);
  ASSERT_EQ(page.files.size(), 2U);
  EXPECT_EQ(page.files[0].filename, "flagtree-0.6.1-cp312-cp312-linux_x86_64.whl");
  EXPECT_EQ(page.files[0].url,
            "https://nexus.example/repository/pypi-proxy/packages/flagtree/0.6.1/"
            "flagtree-0.6.1-cp312-cp312-linux_x86_64.whl");
  EXPECT_EQ(page.files[0].sha256(), k_sha_a);
  EXPECT_FALSE(page.files[0].requires_python);
  EXPECT_FALSE(page.files[0].yanked);
  EXPECT_FALSE(page.files[0].core_metadata);
  EXPECT_EQ(page.files[1].sha256(), "");
  EXPECT_EQ(page.files[1].hashes.at("md5"), "0123456789abcdef0123456789abcdef");
  ASSERT_TRUE(page.files[1].requires_python);
  EXPECT_EQ(*page.files[1].requires_python, ">=3.8");
}

TEST(IndexPages, PytorchHtmlPage) {
  const std::string body = R"(<!DOCTYPE html>
<html>
  <body>
    <h1>Links for torch</h1>
    <a href="/whl/cu124/torch-2.6.0%2Bcu124-cp312-cp312-linux_x86_64.whl#sha256=)" +
                           k_sha_b + R"(" data-dist-info-metadata="sha256=)" + k_sha_a +
                           R"(" data-core-metadata="sha256=)" + k_sha_a +
                           R"(">torch-2.6.0+cu124-cp312-cp312-linux_x86_64.whl</a><br/>
    <a href="/whl/cu124/torch-2.5.1%2Bcu124-cp312-cp312-linux_x86_64.whl" data-dist-info-metadata="true" data-requires-python="&gt;=3.9.0">torch-2.5.1+cu124-cp312-cp312-linux_x86_64.whl</a><br/>
    <a href="/whl/cu124/torch-2.4.0%2Bcu124-cp312-cp312-linux_x86_64.whl" data-core-metadata>torch-2.4.0+cu124</a><br/>
  </body>
</html>
<!--TIMESTAMP 1740000000-->
)";
  const auto page = parse_project_page(body, "text/html", "https://download.pytorch.org/whl/cu124/torch/", "torch");
  ASSERT_EQ(page.files.size(), 3U);
  EXPECT_TRUE(page.warnings.empty()) << ::testing::PrintToString(page.warnings);
  EXPECT_EQ(page.files[0].filename, "torch-2.6.0+cu124-cp312-cp312-linux_x86_64.whl");
  EXPECT_EQ(page.files[0].url,
            "https://download.pytorch.org/whl/cu124/torch-2.6.0%2Bcu124-cp312-cp312-linux_x86_64.whl");
  EXPECT_EQ(page.files[0].sha256(), k_sha_b);
  EXPECT_TRUE(page.files[0].core_metadata);
  EXPECT_EQ(page.files[0].core_metadata_hashes.at("sha256"), k_sha_a);
  EXPECT_TRUE(page.files[1].core_metadata);
  EXPECT_TRUE(page.files[1].core_metadata_hashes.empty());
  ASSERT_TRUE(page.files[1].requires_python);
  EXPECT_EQ(*page.files[1].requires_python, ">=3.9.0");
  EXPECT_TRUE(page.files[2].core_metadata);  // present without a value
  EXPECT_TRUE(page.files[2].core_metadata_hashes.empty());
}

TEST(IndexPages, BaseHrefChangesTheBase) {
  const std::string body = R"(<html><head>
<base href="https://mirror.example/files/">
<base href="https://ignored.example/">
</head><body>
<a href="pkg/x-1.0-py3-none-any.whl">x</a>
<a href="/root/x-0.9-py3-none-any.whl">x</a>
</body></html>)";
  const auto page = parse_project_page(body, k_html, "https://idx.example/simple/x/", "x");
  ASSERT_EQ(page.files.size(), 2U);
  EXPECT_EQ(page.files[0].url, "https://mirror.example/files/pkg/x-1.0-py3-none-any.whl");
  EXPECT_EQ(page.files[1].url, "https://mirror.example/root/x-0.9-py3-none-any.whl");

  // A relative base resolves against the final URL first.
  const auto relative = parse_project_page(R"(<base href="../../packages/"><a href="x/x-1.0.tar.gz">x</a>)", k_html,
                                           "https://idx.example/repo/simple/x/", "x");
  ASSERT_EQ(relative.files.size(), 1U);
  EXPECT_EQ(relative.files[0].url, "https://idx.example/repo/packages/x/x-1.0.tar.gz");
  EXPECT_EQ(relative.files[0].filename, "x-1.0.tar.gz");
}

TEST(IndexPages, BadHashHexWarnsAndDropsTheHash) {
  const std::string body = R"(
<a href="x-1.0-py3-none-any.whl#sha256=zz34">bad chars</a>
<a href="x-1.1-py3-none-any.whl#sha256=0123abcd">too short</a>
<a href="x-1.2-py3-none-any.whl#sha256=)" +
                           k_sha_a + R"(" data-core-metadata="sha256=nothex">bad metadata hash</a>
<a href="x-1.3-py3-none-any.whl#SHA256=)" +
                           [] {
                             std::string upper = k_sha_b;
                             for (auto& c : upper) c = static_cast<char>(std::toupper(c));
                             return upper;
                           }() +
                           R"(">upper case</a>)";
  const auto page = parse_project_page(body, k_html, "https://i/simple/x/", "x");
  ASSERT_EQ(page.files.size(), 4U);
  EXPECT_TRUE(page.files[0].hashes.empty());
  EXPECT_TRUE(page.files[1].hashes.empty());
  EXPECT_EQ(page.files[0].url, "https://i/simple/x/x-1.0-py3-none-any.whl");  // the fragment is gone anyway
  EXPECT_EQ(page.files[2].sha256(), k_sha_a);
  EXPECT_TRUE(page.files[2].core_metadata);
  EXPECT_TRUE(page.files[2].core_metadata_hashes.empty());
  EXPECT_EQ(page.files[3].sha256(), k_sha_b);  // lower-cased
  EXPECT_EQ(page.warnings.size(), 3U) << ::testing::PrintToString(page.warnings);
  EXPECT_TRUE(any_contains(page.warnings, "zz34"));
  EXPECT_TRUE(any_contains(page.warnings, "0123abcd"));
  EXPECT_TRUE(any_contains(page.warnings, "nothex"));
}

TEST(IndexPages, YankedInHtml) {
  const std::string body = R"(
<a href="x-1.0.tar.gz" data-yanked="">x</a>
<a href="x-1.1.tar.gz" data-yanked>x</a>
<a href="x-1.2.tar.gz" data-yanked="bad &quot;release&quot; &amp; more">x</a>
<a href="x-1.3.tar.gz">x</a>)";
  const auto page = parse_project_page(body, "", "https://i/simple/x/", "x");  // no type: HTML
  EXPECT_EQ(page.format, "html");
  ASSERT_EQ(page.files.size(), 4U);
  EXPECT_TRUE(page.files[0].yanked);
  EXPECT_EQ(page.files[0].yanked_reason, "");
  EXPECT_TRUE(page.files[1].yanked);
  EXPECT_EQ(page.files[1].yanked_reason, "");
  EXPECT_TRUE(page.files[2].yanked);
  EXPECT_EQ(page.files[2].yanked_reason, "bad \"release\" & more");
  EXPECT_FALSE(page.files[3].yanked);
}

TEST(IndexPages, UnquotedAttributesEntitiesAndBrokenMarkup) {
  const std::string body = R"(<html><body><p><table><tr><td>
<A HREF=x-1.0-py3-none-any.whl#sha256=)" +
                           k_sha_a + R"( DATA-REQUIRES-PYTHON=&gt;=3.8,&lt;4>one</a>
<a href="x-2.0-py3-none-any.whl?token=a&amp;b=c#sha256=)" +
                           k_sha_b + R"(" data-requires-python='&gt;=3.9'>two
<a href='x%2D3.0.tar.gz'>three</a>
<a>no href</a>
<a href="">empty</a>
<a href="https://i/simple/x/">a folder</a>
<a href="http://[bad">unparseable</a>
)";
  const auto page = parse_project_page(body, "application/vnd.pypi.simple.v1+html", "https://i/simple/x/", "x");
  ASSERT_EQ(page.files.size(), 3U) << ::testing::PrintToString(page.warnings);
  EXPECT_EQ(page.files[0].filename, "x-1.0-py3-none-any.whl");
  EXPECT_EQ(page.files[0].sha256(), k_sha_a);
  ASSERT_TRUE(page.files[0].requires_python);
  EXPECT_EQ(*page.files[0].requires_python, ">=3.8,<4");
  EXPECT_EQ(page.files[1].url, "https://i/simple/x/x-2.0-py3-none-any.whl?token=a&b=c");
  EXPECT_EQ(page.files[1].filename, "x-2.0-py3-none-any.whl");
  EXPECT_EQ(page.files[1].sha256(), k_sha_b);
  EXPECT_EQ(*page.files[1].requires_python, ">=3.9");
  EXPECT_EQ(page.files[2].filename, "x-3.0.tar.gz");
  // The empty href, the link naming no file and the unparseable URL: skipped with warnings.
  EXPECT_EQ(page.warnings.size(), 3U) << ::testing::PrintToString(page.warnings);
  EXPECT_TRUE(any_contains(page.warnings, "empty href"));
  EXPECT_TRUE(any_contains(page.warnings, "names no file"));
}

TEST(IndexPages, DeeplyNestedHtmlFailsCleanly) {
  std::string body;
  for (int i = 0; i < 100000; ++i) body += "<div>";
  body += R"(<a href="x-1.0-py3-none-any.whl">x</a>)";
  const auto message = bad_input_message([&] { parse_project_page(body, k_html, "https://i/simple/x/", "x"); });
  EXPECT_TRUE(contains(message, "nested deeper than 256")) << message;

  // Formatting elements closed by another element's end tag are reopened by HTML before the next text
  // (20,000 of these take gumbo minutes): they count too.
  std::string formatting;
  for (int i = 0; i < 20000; ++i) formatting += "<div><b id=" + std::to_string(i) + "></div>";
  formatting += "x";
  const auto hidden = bad_input_message([&] { parse_project_page(formatting, k_html, "https://i/simple/x/", "x"); });
  EXPECT_TRUE(contains(hidden, "nested deeper than 256")) << hidden;
}

TEST(IndexPages, ManyUnclosedElementsAreNotDeep) {
  // Markup that HTML closes implicitly, tags in comments and scripts: none of it nests, none is refused.
  std::string body = "<!DOCTYPE html><html><head><script>var s = '";
  for (int i = 0; i < 1000; ++i) body += "<div>";
  body += "';</script><!-- ";
  for (int i = 0; i < 1000; ++i) body += "<span>";
  body += " --></head><body><ul>";
  for (int i = 0; i < 1000; ++i) body += "<li><a href=\"x-" + std::to_string(i) + ".tar.gz\" title='a>b'>x</a><p>x";
  body += "</ul><table>";
  for (int i = 0; i < 1000; ++i) body += "<tr><td><a href=y-" + std::to_string(i) + ".tar.gz>y<td>z";
  body += "</table>";
  for (int i = 0; i < 1000; ++i) body += "<div></div><br><a href=z-" + std::to_string(i) + ".tar.gz>z";
  const auto page = parse_project_page(body, k_html, "https://i/simple/x/", "x");
  ASSERT_EQ(page.files.size(), 3000U);
  EXPECT_EQ(page.files[0].filename, "x-0.tar.gz");
  EXPECT_EQ(page.files[1999].filename, "y-999.tar.gz");
  EXPECT_EQ(page.files[2999].filename, "z-999.tar.gz");
}

TEST(IndexPages, UnknownContentTypeIsAnError) {
  for (const char* type : {"application/json", "text/plain", "application/vnd.pypi.simple.v2+json"}) {
    const auto message =
        bad_input_message([&] { parse_project_page("{}", type, "https://user:secret@i/simple/x/", "x"); });
    EXPECT_TRUE(contains(message, type)) << message;
    EXPECT_TRUE(contains(message, "https://***@i/simple/x/")) << message;
    EXPECT_FALSE(contains(message, "secret")) << message;
  }
}

TEST(IndexPages, ProjectUrlNormalizesTheName) {
  EXPECT_EQ(index::project_url("https://pypi.org/simple", "Flag_Gems"), "https://pypi.org/simple/flag-gems/");
  EXPECT_EQ(index::project_url("https://pypi.org/simple/", "Flag_Gems"), "https://pypi.org/simple/flag-gems/");
  EXPECT_EQ(index::project_url("https://nexus.example/repository/pypi//", "zope.Interface--x"),
            "https://nexus.example/repository/pypi/zope-interface-x/");
}

}  // namespace unity_test_index_pages
