// Sentences held to their sources (issue 60): the image facts `image show` states against
// ../shared/reference/flagos-release.md (the SDK a MACA image holds, 24.04's inferred GLIBCXX, an Ascend
// image's NPU driver), the article before a toolkit's name, a mistyped subcommand's did-you-mean, the
// --assume key for the runner's x86-64 level, and the man page's ENVIRONMENT against every variable the
// program reads.
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/toolkit.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_words_cli {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;
using nlohmann::json;
using wheelcheck::test::run;  // not the namespace wheelcheck::run

namespace {

std::string wc(const std::string& args) {
  return shell_quote(binary_path()) + " " + args;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string reference() {
  const std::string path = shared_dir() + "/reference/flagos-release.md";
  return fs::exists(path) ? read_file(path) : "";
}

// The cell of §2a's row for `backend` in the column "SDK in image" (the last one).
std::string sdk_in_image(const std::string& md, const std::string& backend) {
  std::stringstream ss(md);
  for (std::string line; std::getline(ss, line);) {
    if (line.rfind("| " + backend + " |", 0) != 0) continue;
    line = line.substr(0, line.find_last_of('|'));
    return line.substr(line.find_last_of('|') + 2);
  }
  return "";
}

image::Image db_image(const std::string& name) {
  return image::Db(source_dir() + "/db").get(name);
}

}  // namespace

// The MACA 3.7.2.1 images hold MACA 3.7.2.0 (§2a "SDK in image"): their toolkit is that SDK's version, and the
// backend key's 3.7.2.1 is said in the note.
TEST(ImageFacts, MacaToolkitIsTheSdkTheImageHolds) {
  const std::string md = reference();
  if (md.empty()) GTEST_SKIP() << "no ../shared/reference/flagos-release.md";
  const std::string sdk = sdk_in_image(md, "metax-maca3.7.2.1");
  ASSERT_EQ(sdk.rfind("MACA 3.7.2.0;", 0), 0U) << "the reference's cell: " << sdk;
  for (const char* name : {"flagos-base-metax-maca3.7.2.1", "flagos-runtime-metax-maca3.7.2.1"}) {
    SCOPED_TRACE(name);
    const auto im = db_image(name);
    ASSERT_TRUE(im.toolkit.has_value());
    ASSERT_TRUE(im.toolkit->version.known());
    EXPECT_EQ(*im.toolkit->version.value, "3.7.2.0");
    EXPECT_TRUE(has(im.toolkit->version.note, "the backend key metax-maca3.7.2.1 says 3.7.2.1"))
        << im.toolkit->version.note;
    const std::string text = image::render_text(im);
    EXPECT_TRUE(std::regex_search(text, std::regex("maca toolkit +3\\.7\\.2\\.0 "))) << text;
  }
  // Where the key and the SDK agree, nothing changes.
  EXPECT_EQ(sdk_in_image(md, "metax-maca3.8.1.3").rfind("MACA 3.8.1.3;", 0), 0U);
  EXPECT_EQ(*db_image("flagos-base-metax-maca3.8.1.3").toolkit->version.value, "3.8.1.3");
}

// "Ubuntu 24.04 means glibc 2.39; its GLIBCXX_3.4.33 is inferred": derived, with why, never "declared".
TEST(ImageFacts, Ubuntu2404GlibcxxIsInferredNotDeclared) {
  const std::string md = reference();
  if (md.empty()) GTEST_SKIP() << "no ../shared/reference/flagos-release.md";
  ASSERT_TRUE(has(md, "its\n  GLIBCXX_3.4.33 is inferred") || has(md, "its GLIBCXX_3.4.33 is inferred")) << "reference";
  for (const char* name : {"flagos-base-nvidia-cuda13.3", "flagos-runtime-ascend-cann9.0.0"}) {
    SCOPED_TRACE(name);
    const auto im = db_image(name);
    ASSERT_TRUE(im.glibcxx.known());
    EXPECT_EQ(*im.glibcxx.value, "3.4.33");
    EXPECT_EQ(im.glibcxx.origin, image::Origin::Derived);
    EXPECT_EQ(im.glibcxx.note.rfind("inferred: libgfortran5 is 14.2.0", 0), 0U) << im.glibcxx.note;
    const std::string text = image::render_text(im);
    EXPECT_TRUE(std::regex_search(text, std::regex("libstdc\\+\\+ GLIBCXX +3\\.4\\.33 +derived in ubuntu24\\.04")))
        << text;
    EXPECT_FALSE(std::regex_search(text, std::regex("GLIBCXX +3\\.4\\.33 +declared"))) << text;
  }
  // 22.04's GLIBCXX_3.4.30 the reference states ("Ubuntu 22.04 means glibc 2.35 and GLIBCXX up to 3.4.30").
  EXPECT_TRUE(has(md, "GLIBCXX up to 3.4.30"));
}

// The driver in the vendor's word: an Ascend image's is an NPU driver, a Cambricon one's an MLU driver.
TEST(ImageFacts, DriverLabelIsTheVendorsWord) {
  const std::string md = reference();
  if (md.empty()) GTEST_SKIP() << "no ../shared/reference/flagos-release.md";
  ASSERT_TRUE(has(md, "| ascend-cann9.0.0 | aarch64 | ubuntu:24.04 | 910B | 26.0.rc1 |")) << "reference";
  const std::string ascend = image::render_text(db_image("flagos-base-ascend-cann9.0.0"));
  EXPECT_TRUE(std::regex_search(ascend, std::regex("\n  NPU driver +26\\.0\\.rc1 "))) << ascend;
  EXPECT_FALSE(has(ascend, "GPU driver")) << ascend;
  const std::string mlu = image::render_text(db_image("flagos-base-cambricon-neuware4.7.2"));
  EXPECT_TRUE(std::regex_search(mlu, std::regex("\n  MLU driver +6\\.5\\.48 "))) << mlu;
  const std::string cuda = image::render_text(db_image("flagos-base-nvidia-cuda13.3"));
  EXPECT_TRUE(std::regex_search(cuda, std::regex("\n  GPU driver +610\\.43\\.02 "))) << cuda;
  EXPECT_EQ(image::toolkit_device(image::ToolkitKind::Cann), "NPU");
  EXPECT_EQ(image::toolkit_device(image::ToolkitKind::Dtk), "DCU");
  // Through the command line, as a user reads it.
  const auto r = run(wc("image show flagos-runtime-ascend-cann9.0.0"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "NPU driver")) << r.out;
  EXPECT_FALSE(has(r.out, "GPU driver")) << r.out;
}

// "a MACA", "a MUSA", "a CANN" (words), "an XRE", "a DTK" (said letter by letter).
TEST(Words, ArticleBeforeAToolkitsName) {
  EXPECT_EQ(wheelcheck::toolkit::with_article("MACA 3.8.1.3"), "a MACA 3.8.1.3");
  EXPECT_EQ(wheelcheck::toolkit::with_article("MUSA 4.3.6"), "a MUSA 4.3.6");
  EXPECT_EQ(wheelcheck::toolkit::with_article("CANN"), "a CANN");
  EXPECT_EQ(wheelcheck::toolkit::with_article("CUDA 13.0"), "a CUDA 13.0");
  EXPECT_EQ(wheelcheck::toolkit::with_article("TOPS"), "a TOPS");
  EXPECT_EQ(wheelcheck::toolkit::with_article("XRE"), "an XRE");
  EXPECT_EQ(wheelcheck::toolkit::with_article("DTK 26.04"), "a DTK 26.04");
  EXPECT_EQ(wheelcheck::toolkit::with_article("MACA/CUDA"), "a MACA/CUDA");
  EXPECT_EQ(wheelcheck::toolkit::with_article("Ascend"), "an Ascend");
  // A toolkit's name as people say it, from its kind (the word the db writes is image::toolkit_kind_name's).
  EXPECT_EQ(wheelcheck::toolkit::display_name(wheelcheck::image::ToolkitKind::Cuda), "CUDA");
  EXPECT_EQ(wheelcheck::toolkit::display_name(wheelcheck::image::ToolkitKind::Corex), "CoreX");
  EXPECT_EQ(wheelcheck::toolkit::display_name(wheelcheck::image::ToolkitKind::Tangrt), "TangRT");
  EXPECT_EQ(wheelcheck::toolkit::display_name(wheelcheck::image::ToolkitKind::Neuware), "Neuware");
  EXPECT_EQ(wheelcheck::toolkit::display_name(wheelcheck::image::ToolkitKind::Tsm), "TSM");
  // The sentence the check says of a MACA build on another MACA release.
  wheelcheck::toolkit::WheelToolkit t;
  t.kind = wheelcheck::image::ToolkitKind::Maca;
  t.version = "3.8.1.3";
  t.from_label = true;
  EXPECT_EQ(wheelcheck::toolkit::mismatch(t, db_image("flagos-base-metax-maca3.7.2.1")),
            "a MACA 3.8.1.3 build, a MACA 3.7.2.0 image");
  // As the check prints it, of a wheel labelled +maca3.8.1.3 on the MACA 3.7.2.1 runtime image.
  TempDir d;
  const auto so = build_shared(d, "libplain.so", "plain.c", "int plain(void) { return 1; }\n", "");
  ASSERT_TRUE(so.has_value());
  const std::string w =
      make_wheel(d, "plain-1.0+maca3.8.1.3-cp312-cp312-linux_x86_64.whl", {{"plain/libplain.so", *so}});
  const auto r = run(wc(shell_quote(w) + " --image flagos-runtime-metax-maca3.7.2.1"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "labelled a MACA 3.8.1.3 build, a MACA 3.7.2.0 image: a claim, what it loads decides"))
      << r.out;
  EXPECT_FALSE(has(r.out, "an MACA")) << r.out;
}

// A mistyped subcommand gets the did-you-mean a mistyped command gets.
TEST(Words, MistypedSubcommandGetsDidYouMean) {
  const auto r = run(wc("image shwo cuda13.0"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(has(r.err, "unknown command `image shwo`; did you mean `image show`?")) << r.err;
  const auto far = run(wc("image frobnicate"));
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_TRUE(has(far.err, "unknown command `image frobnicate` (the commands of `wheelcheck image`: show, fill)"))
      << far.err;
  // A right one still runs, with options before it.
  EXPECT_EQ(run(wc("image show --db " + shell_quote(source_dir() + "/db") + " cuda13.0")).exit_code, 0);
  const auto top = run(wc("imgae show cuda13.0"));
  EXPECT_TRUE(has(top.err, "unknown command `imgae`; did you mean `image`?")) << top.err;
}

// --assume isa=x86-64-vN states the runner's x86-64 level: recorded with what the image said, refused in
// another form or on an image of another architecture.
TEST(Words, AssumeIsaLevel) {
  auto im = db_image("cuda13.0");
  image::assume(im, "isa", "x86-64-v3", "--assume");
  ASSERT_TRUE(im.isa_level.known());
  EXPECT_EQ(*im.isa_level.value, "x86-64-v3");
  EXPECT_EQ(im.isa_level.origin, image::Origin::Assumed);
  ASSERT_EQ(im.assumptions.size(), 1U);
  EXPECT_EQ(im.assumptions[0], "isa=x86-64-v3 (x86-64 level of the runner's CPUs, --assume; unknown to the image)");
  EXPECT_TRUE(std::regex_search(image::render_text(im), std::regex("x86-64 level +x86-64-v3 +assumed")));
  TempDir d;
  const auto so = build_shared(d, "libplain.so", "plain.c", "int plain(void) { return 1; }\n", "");
  ASSERT_TRUE(so.has_value());
  const std::string w = make_wheel(d, "plain-1.0-py3-none-linux_x86_64.whl", {{"plain/libplain.so", *so}});
  const auto r = run(wc(shell_quote(w) + " --image cuda13.0 --assume isa=x86-64-v3 --json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(json::parse(r.out)["assumptions"].dump(), "isa=x86-64-v3 (x86-64 level of the runner's CPUs"))
      << r.out;
  const auto bad = run(wc(shell_quote(w) + " --image cuda13.0 --assume isa=v3"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(has(bad.err,
                  "--assume isa=v3: not a value of the right form (x86-64-v1, x86-64-v2, x86-64-v3 or "
                  "x86-64-v4)"))
      << bad.err;
  const auto arm = run(wc(shell_quote(w) + " --image ascend-cann9 --assume isa=x86-64-v3"));
  EXPECT_EQ(arm.exit_code, 2);
  EXPECT_TRUE(has(arm.err, "--assume isa=x86-64-v3: an x86-64 level, and ascend-cann9 is aarch64")) << arm.err;
  EXPECT_TRUE(has(run(wc("--help")).out, "isa=x86-64-v3"));
  // The stated level decides the isa-level finding: a v3 member runs on v3 runners (info), stops on v2 ones (an
  // error), and is a condition where nothing is stated.
  std::string err;
  const auto v3 = build_shared(d, "libv3.so", "v3.c", "double v3(double a, double b) { return a * b + a; }\n",
                               "-march=x86-64-v3 -Wl,-z,x86-64-v3", "gcc", &err);
  ASSERT_TRUE(v3.has_value()) << err;
  const std::string w3 = make_wheel(d, "vthree-1.0-py3-none-linux_x86_64.whl", {{"vthree/libv3.so", *v3}});
  auto isa_severity = [&](const std::string& assume) {
    const auto doc = json::parse(run(wc(shell_quote(w3) + " --image cuda13.0 --json" + assume)).out);
    for (const auto& f : doc["findings"])
      if (f["kind"] == "isa-level") return f["severity"].get<std::string>();
    return std::string("none");
  };
  EXPECT_EQ(isa_severity(""), "condition");
  EXPECT_EQ(isa_severity(" --assume isa=x86-64-v3"), "info");
  EXPECT_EQ(isa_severity(" --assume isa=x86-64-v4"), "info");
  EXPECT_EQ(isa_severity(" --assume isa=x86-64-v2"), "error");
  EXPECT_EQ(run(wc(shell_quote(w3) + " --image cuda13.0 --assume isa=x86-64-v2")).exit_code, 1);
}

// The man page's ENVIRONMENT names every variable the program reads (getenv, getenv_or, and the image
// environment `probe --root /` takes from its own).
TEST(Words, ManPageEnvironmentListsEveryVariableRead) {
  std::set<std::string> read;
  const std::regex call(R"re(getenv(?:_or)?\(\s*"([A-Za-z_][A-Za-z0-9_]*)")re");
  for (const char* dir : {"inspector", "include", "probes"}) {
    for (const auto& ext : {".cpp", ".hpp"}) {
      for (const auto& f : find_files(source_dir() + "/" + dir, ext)) {
        const std::string text = read_file(f);
        for (std::sregex_iterator it(text.begin(), text.end(), call), end; it != end; ++it) read.insert((*it)[1]);
      }
    }
  }
  const std::string image_cli = read_file(source_dir() + "/inspector/cli/cmd_image.cpp");
  const auto list = image_cli.substr(image_cli.find("k_image_env[] = {"));
  const std::regex quoted("\"([A-Z_]+)\"");
  for (std::sregex_iterator it(list.begin(), list.begin() + static_cast<long>(list.find("};")), quoted), end; it != end;
       ++it)
    read.insert((*it)[1]);
  ASSERT_GT(read.count("WHEELCHECK_OFFLINE"), 0U) << "the scan of the sources found nothing";
  ASSERT_GT(read.count("WHEELCHECK_DB"), 0U);
  ASSERT_GT(read.count("LD_LIBRARY_PATH"), 0U);
  const auto man = run(wc("help --man"));
  ASSERT_EQ(man.exit_code, 0);
  const auto at = man.out.find(".SH ENVIRONMENT\n");
  ASSERT_NE(at, std::string::npos) << man.out;
  const std::string section = man.out.substr(at, man.out.find(".SH ", at + 1) - at);
  for (const auto& v : read) {
    EXPECT_TRUE(std::regex_search(section, std::regex("(^|[^A-Za-z0-9_])" + v + "([^A-Za-z0-9_]|$)")))
        << v << " is read but not in the man page's ENVIRONMENT:\n"
        << section;
  }
}

}  // namespace unity_test_words_cli
