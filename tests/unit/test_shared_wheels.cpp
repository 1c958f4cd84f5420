// auditwheel's real test wheels (../shared/fixtures/auditwheel-wheels): every ELF member as wheelcheck
// reads it from the zip must agree with readelf on the extracted bytes, both readers must agree, and
// the wheel's external libraries and versioned symbols must equal what `auditwheel show --json`
// recorded for the same wheel (../shared/fixtures/auditwheel-show).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "readelf.hpp"
#include "support.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/wheel.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_shared_wheels {

using namespace wheelcheck;
using namespace wheelcheck::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> shared_wheels() {
  return find_files(shared_dir() + "/fixtures/auditwheel-wheels", ".whl");
}

void extract(const wheel::ZipArchive& archive, const std::string& member, const std::string& out) {
  auto stream = archive.open_member(*archive.find(member));
  std::string bytes;
  std::vector<std::byte> buf(1 << 16);
  while (auto n = stream->read(buf)) bytes.append(reinterpret_cast<const char*>(buf.data()), n);
  write_binary(out, bytes);
}

// The libraries a policy family allows in every one of its policies (auditwheel reports a needed
// library as external when any policy of the family does not allow it).
std::set<std::string> always_allowed(const std::string& policy_file) {
  const auto policies = nlohmann::json::parse(read_file(shared_dir() + "/reference/" + policy_file));
  std::optional<std::set<std::string>> common;
  for (const auto& p : policies) {
    if (p["priority"].get<int>() == 0) continue;
    std::set<std::string> libs(p["lib_whitelist"].begin(), p["lib_whitelist"].end());
    if (!common) {
      common = libs;
    } else {
      std::set<std::string> both;
      for (const auto& l : *common) {
        if (libs.count(l)) both.insert(l);
      }
      common = both;
    }
  }
  return common.value_or(std::set<std::string>{});
}

}  // namespace

TEST(SharedWheels, FixturesArePresent) {
  const auto wheels = shared_wheels();
  if (wheels.empty()) GTEST_SKIP() << "../shared/fixtures/auditwheel-wheels is absent";
  EXPECT_GE(wheels.size(), 20U);
}

TEST(SharedWheels, MembersAgreeWithReadelfAndLief) {
  const auto wheels = shared_wheels();
  if (wheels.empty()) GTEST_SKIP() << "../shared/fixtures/auditwheel-wheels is absent";
  std::size_t elf_members = 0;
  for (const auto& w : wheels) {
    SCOPED_TRACE(w);
    InspectOptions fast_options;
    const auto fast = inspect_wheel(w, fast_options);
    InspectOptions lief_options;
    lief_options.reader = elf::ReaderKind::Lief;
    const auto lief = inspect_wheel(w, lief_options);
    EXPECT_TRUE(fast.record_verified) << (fast.record_problems.empty() ? "" : fast.record_problems[0].detail);
    ASSERT_EQ(fast.members.size(), lief.members.size());
    const auto archive = wheel::ZipArchive::open(w);
    TempDir dir;
    for (std::size_t i = 0; i < fast.members.size(); ++i) {
      const auto& m = fast.members[i];
      ASSERT_TRUE(m.elf) << m.path << ": " << m.error;
      ASSERT_TRUE(lief.members[i].elf) << m.path << ": " << lief.members[i].error;
      EXPECT_EQ(*m.elf, *lief.members[i].elf) << m.path;
      const auto out = dir.file("member" + std::to_string(i));
      extract(*archive, m.path, out);
      expect_agrees_with_readelf(*m.elf, out);
      ++elf_members;
    }
  }
  EXPECT_GE(elf_members, 20U);
}

TEST(SharedWheels, AgreeWithAuditwheelShow) {
  const auto wheels = shared_wheels();
  if (wheels.empty()) GTEST_SKIP() << "../shared/fixtures/auditwheel-wheels is absent";
  std::size_t compared = 0;
  for (const auto& w : wheels) {
    SCOPED_TRACE(w);
    const auto expected_text = read_file(auditwheel_show_file(w));
    ASSERT_FALSE(expected_text.empty()) << "no auditwheel-show file " << auditwheel_show_file(w);
    const auto expected = nlohmann::json::parse(expected_text);
    if (expected.contains("error")) continue;  // auditwheel itself refused this wheel (pure, or unsupported arch)
    const auto p = inspect_wheel(w);
    // auditwheel's versioned_symbols: every version need of every ELF member, the loader's own aside.
    std::map<std::string, std::set<std::string>> versioned;
    std::set<std::string> needed, provided;
    bool musl = false;
    for (const auto& m : p.members) {
      ASSERT_TRUE(m.elf);
      if (m.elf->soname) provided.insert(*m.elf->soname);
      provided.insert(fs::path(m.path).filename().string());
      if (m.elf->interpreter.find("musl") != std::string::npos) musl = true;
      for (const auto& n : m.elf->needed) {
        needed.insert(n);
        if (n.rfind("libc.musl", 0) == 0) musl = true;
      }
      for (const auto& need : m.elf->version_needs) {
        if (need.file.rfind("ld-linux", 0) == 0 || need.file.rfind("ld64.so", 0) == 0) continue;
        for (const auto& v : need.versions) versioned[need.file].insert(v.name);
      }
    }
    // auditwheel also counts the version needs of the external libraries it found on its host (for
    // python_snappy, Debian 12's libsnappy.so.1.1.9): read the same file here when it exists.
    bool host_libs_missing = false;
    for (const auto& [lib, path] : expected["external_libs"].items()) {
      if (path.is_null()) continue;
      if (!fs::exists(path.get<std::string>())) {
        host_libs_missing = true;
        continue;
      }
      for (const auto& need : elf::read_elf_file(path.get<std::string>()).version_needs) {
        if (need.file.rfind("ld-linux", 0) == 0 || need.file.rfind("ld64.so", 0) == 0) continue;
        for (const auto& v : need.versions) versioned[need.file].insert(v.name);
      }
    }
    std::map<std::string, std::set<std::string>> expected_versioned;
    for (const auto& [lib, versions] : expected["versioned_symbols"].items()) {
      expected_versioned[lib] = std::set<std::string>(versions.begin(), versions.end());
    }
    if (host_libs_missing) {
      std::cout << "note: " << w << ": auditwheel's host library is absent here; versioned symbols not compared\n";
    } else {
      EXPECT_EQ(versioned, expected_versioned);
    }
    // external_libs: needed, not in the wheel, not allowed by every policy of the family.
    const bool android = p.filename.tags[0].platform.rfind("android", 0) == 0;
    const auto allowed = always_allowed(android ? "android-policy.json"
                                        : musl  ? "musllinux-policy.json"
                                                : "manylinux-policy.json");
    std::set<std::string> external;
    for (const auto& n : needed) {
      // auditwheel's android policy takes the interpreter's own libpython as provided by the app.
      if (android && n.rfind("libpython", 0) == 0) continue;
      if (!provided.count(n) && !allowed.count(n) && n.rfind("libc.musl", 0) != 0 && n.rfind("ld-linux", 0) != 0) {
        external.insert(n);
      }
    }
    std::set<std::string> expected_external;
    for (const auto& [lib, path] : expected["external_libs"].items()) expected_external.insert(lib);
    EXPECT_EQ(external, expected_external);
    ++compared;
  }
  EXPECT_GE(compared, 15U);
}

}  // namespace unity_test_shared_wheels
