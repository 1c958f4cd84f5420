// `wheelcheck inspect` end to end on wheels packed here from libraries built here: RECORD findings and the
// exit code, the JSON schema, the text output, usage errors, and the profile cache (a warm inspect reads
// no member data).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "inspect_support.hpp"
#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/util.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_inspect_cli {

using namespace wheelcheck;
using namespace wheelcheck::test;
using nlohmann::json;
using wheelcheck::test::run;  // not the namespace wheelcheck::run (a unity batch may have its header)

namespace {

// The schema's "required" keys, checked recursively against a document.
void check_required(const json& schema, const json& doc, const std::string& where) {
  if (schema.contains("required")) {
    ASSERT_TRUE(doc.is_object()) << where;
    for (const auto& k : schema["required"]) EXPECT_TRUE(doc.contains(k.get<std::string>())) << where << "." << k;
  }
  if (schema.contains("properties") && doc.is_object()) {
    for (const auto& [k, sub] : schema["properties"].items()) {
      if (doc.contains(k) && !doc[k].is_null()) check_required(sub, doc[k], where + "." + k);
    }
  }
  if (schema.contains("items") && doc.is_array()) {
    for (const auto& item : doc) check_required(schema["items"], item, where + "[]");
  }
}

}  // namespace

TEST(Inspect, RecordFindingsAreReportedNotIgnored) {
  TempDir dir;
  const auto b = build_members(dir);
  struct Case {
    std::vector<std::string> options;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--tamper", "pkg/ext.cpython-312-x86_64-linux-gnu.so"},
       "hash-mismatch:pkg/ext.cpython-312-x86_64-linux-gnu.so"},
      {{"--wrong-size", "pkg/__init__.py"}, "size-mismatch:pkg/__init__.py"},
      {{"--unlisted", "pkg-1.0.data/scripts/tool"}, "unlisted-member:pkg-1.0.data/scripts/tool"},
      {{"--phantom", "pkg/gone.py"}, "missing-member:pkg/gone.py"},
      {{"--no-record"}, "missing-record:pkg-1.0.dist-info/RECORD"},
  };
  for (const auto& c : cases) {
    TempDir wdir;
    const auto w = make_wheel(wdir, k_name, layout(b), c.options);
    const auto p = inspect_wheel(w);
    EXPECT_FALSE(p.record_verified) << c.expected;
    EXPECT_EQ(kinds(p.record_problems), std::vector<std::string>{c.expected});
    const auto r = run(binary_path() + " inspect --no-cache -q " + shell_quote(w));
    EXPECT_EQ(r.exit_code, 2) << c.expected;
    EXPECT_NE(r.out.find(c.expected.substr(0, c.expected.find(':'))), std::string::npos) << r.out;
  }
}

TEST(Inspect, JsonFollowsTheDocumentedSchema) {
  TempDir dir;
  const auto b = build_members(dir);
  const auto w = make_wheel(dir, k_name, layout(b), {"--requires-dist", "torch>=2.6"});
  const auto r = run(binary_path() + " inspect --json --no-cache " + shell_quote(w));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = json::parse(r.out);
  const auto schema = json::parse(read_file(source_dir() + "/docs/inspect.schema.json"));
  check_required(schema, doc, "$");
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["wheel"]["name"], "pkg");
  EXPECT_EQ(doc["wheel"]["tags"][0]["platform"], "linux_x86_64");
  EXPECT_EQ(doc["wheel"]["sha256"], sha256_file_hex(w));
  EXPECT_EQ(doc["record"]["verified"], true);
  const auto& ext = doc["members"][0]["elf"];
  EXPECT_EQ(ext["class"], "ELF64");
  EXPECT_EQ(ext["machine"], "x86_64");
  EXPECT_EQ(ext["needed"][0], "libhelper.so");
  EXPECT_EQ(ext["runpath"][0], "$ORIGIN/lib");
  bool helper_undefined = false;
  for (const auto& u : ext["undefined"]) helper_undefined |= u["name"] == "helper" && u["weak"] == false;
  EXPECT_TRUE(helper_undefined);
  bool init_defined = false;
  for (const auto& d : ext["defined"]) init_defined |= d["name"] == "PyInit_ext";
  EXPECT_TRUE(init_defined);
}

TEST(Inspect, CachedProfileReadsNoMemberData) {
  TempDir dir;
  const auto b = build_members(dir);
  const auto w = make_wheel(dir, k_name, layout(b), {"--stored"});
  const auto cache_dir = dir.file("cache");
  const std::string cmd =
      binary_path() + " inspect --json -q --cache-dir " + shell_quote(cache_dir) + " " + shell_quote(w);
  const auto cold = run(cmd);
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  // Damage a member in place, keeping size, mtime (to the nanosecond) and inode: a warm inspect that
  // read member data would now see the damage; one that trusts the cache returns the same profile.
  struct stat before {};
  ASSERT_EQ(::stat(w.c_str(), &before), 0);
  {
    std::fstream f(w, std::ios::in | std::ios::out | std::ios::binary);
    const std::string bytes = read_file(w);
    const auto at = bytes.find("from .ext import");
    ASSERT_NE(at, std::string::npos);
    f.seekp(static_cast<std::streamoff>(at));
    f.write("FROM", 4);
  }
  const struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, w.c_str(), times, 0), 0);
  const auto warm = run(cmd);
  EXPECT_EQ(warm.exit_code, 0);
  EXPECT_EQ(warm.out, cold.out);
  const ProfileCache cache(cache_dir);
  InspectOptions options;
  EXPECT_TRUE(inspect_cached(w, options, &cache).from_cache);
  // Once the mtime moves, the cache misses and the damage is found.
  const struct timespec later[2] = {before.st_atim, {before.st_mtim.tv_sec + 10, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, w.c_str(), later, 0), 0);
  const auto fresh = run(cmd);
  EXPECT_EQ(fresh.exit_code, 2);
  EXPECT_NE(fresh.out.find("pkg/__init__.py"), std::string::npos) << fresh.out;
}

TEST(Inspect, TextOutputNamesNeedsPerMember) {
  TempDir dir;
  const auto b = build_members(dir);
  const auto w = make_wheel(dir, k_name, layout(b));
  const auto r = run("NO_COLOR=1 " + binary_path() + " inspect --no-cache " + shell_quote(w));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("pkg/ext.cpython-312-x86_64-linux-gnu.so  ELF64 x86_64 DYN"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("needs     libhelper.so"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("runpath   $ORIGIN/lib"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("RECORD verified"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos) << "colour despite NO_COLOR";
}

TEST(Inspect, UsageErrorsExitTwo) {
  EXPECT_EQ(run(binary_path() + " inspect").exit_code, 2);
  EXPECT_EQ(run(binary_path() + " inspect /nonexistent.whl").exit_code, 2);
  EXPECT_EQ(run(binary_path() + " frobnicate").exit_code, 2);
  const auto help = run(binary_path() + " inspect --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Exit codes"), std::string::npos);
}

}  // namespace unity_test_inspect_cli
