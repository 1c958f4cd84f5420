// docs/image.schema.json against what the command line writes: the `wheelcheck image show --json` output
// of every db name and `wheelcheck probe --json` (and `probe -o`) of a real root validate. The validator is
// Python's jsonschema (Debian: python3-jsonschema, scripts/install-deps.sh).
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "image_schema_support.hpp"
#include "support.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_image_schema_cli {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;
using wheelcheck::test::run;  // not the namespace wheelcheck::run (a unity batch may have its header)
using json = nlohmann::json;

namespace {

std::string cli(const std::string& args) {
  return shell_quote(binary_path()) + " " + args;
}

}  // namespace

TEST(ImageSchema, ImageShowJsonOfEveryDbNameValidates) {
  SKIP_WITHOUT_JSONSCHEMA();
  const std::string db = shell_quote(source_dir() + "/db");
  const auto list = run(cli("images --json --db " + db));
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const json names = json::parse(list.out);
  ASSERT_TRUE(names.is_array());
  ASSERT_GE(names.size(), 20U);
  TempDir tmp;
  std::vector<std::string> files;
  // One process shows them all (an array, in the order asked): a sanitized wheelcheck costs a third of a second
  // to start, and the db holds some 200 names.
  std::string all;
  for (const auto& entry : names) all += " " + shell_quote(entry.at("name").get<std::string>());
  const auto show = run(cli("image show" + all + " --json --db " + db));
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const json docs = json::parse(show.out);
  ASSERT_TRUE(docs.is_array());
  ASSERT_EQ(docs.size(), names.size());
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const std::string name = names[i].at("name").get<std::string>();
    const json& doc = docs[i];
    EXPECT_EQ(doc.at("name"), name);
    // The provenance form: every fact an object with its origin, and the list of what is unknown.
    EXPECT_TRUE(doc.contains("unknown")) << name;
    if (doc.contains("arch")) EXPECT_TRUE(doc["arch"].contains("origin")) << name;
    files.push_back(tmp.write(name + ".json", doc.dump(2)));
  }
  // A single name is one document, not an array.
  const auto one = run(cli("image show cuda13.0 --json --db " + db));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_TRUE(json::parse(one.out).is_object());
  const auto r = validate(files);
  EXPECT_EQ(r.exit_code, 0) << "`wheelcheck image show --json` output that does not follow the schema:\n"
                            << r.out << r.err;
}

TEST(ImageSchema, ProbeJsonOfASmallRootValidates) {
  SKIP_WITHOUT_JSONSCHEMA();
  const std::string libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  if (!fs::exists(libc) || !have_program("ldconfig")) {
    GTEST_SKIP() << "needs an x86_64 Debian-family machine (" << libc << ", ldconfig)";
  }
  TempDir tmp;
  const std::string root = tmp.file("root");
  fs::create_directories(root + "/usr/lib/x86_64-linux-gnu");
  fs::copy_file(fs::canonical(libc), root + libc);
  tmp.write("root/etc/ld.so.conf", "/usr/lib/x86_64-linux-gnu\n");
  const auto ldconfig = run("ldconfig -X -r " + shell_quote(root));
  ASSERT_EQ(ldconfig.exit_code, 0) << ldconfig.err;

  const auto probe = run(cli("probe --quiet --json --root " + shell_quote(root)));
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  // What the schema is checked on: a loader with a real cache, a library, facts with notes and origins.
  const json doc = json::parse(probe.out);
  ASSERT_EQ(doc.at("loader").at("cache").size(), 1U) << probe.out;
  ASSERT_EQ(doc.at("libraries").size(), 1U) << probe.out;
  EXPECT_TRUE(doc.at("libc").at("version").is_object()) << probe.out;
  std::vector<std::string> files{tmp.write("probe.json", probe.out)};

  // The file form (`probe -o`), with export references.
  const std::string written = tmp.file("described.json");
  const auto save = run(cli("probe --quiet --root " + shell_quote(root) + " -o " + shell_quote(written)));
  ASSERT_EQ(save.exit_code, 0) << save.err;
  files.push_back(written);

  const auto r = validate(files);
  EXPECT_EQ(r.exit_code, 0) << "`wheelcheck probe` output that does not follow the schema:\n" << r.out << r.err;
}

}  // namespace unity_test_image_schema_cli
