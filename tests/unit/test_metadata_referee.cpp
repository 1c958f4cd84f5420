// A referee (issue 60): what `wheelcheck lint` and `check` say pip does with a wheel whose METADATA Version is not
// its file name's, against what the machine's pip does (`python3 -m pip`, offline: --no-index, --isolated so that
// no configuration or PIP_* variable adds an index). Three commands: the file by its path, the project pinned to
// the file name's version from --find-links, and the project unpinned from --find-links. For each, the finding's
// evidence says "installs it" or "refuses it"; the test compares that class with pip's exit status. A wheel whose
// two versions agree is the twin: pip installs it all three ways and neither command says anything of its Version.
// Skipped, with a line, where python3 has no pip.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_metadata_referee {

using wheelcheck::test::run;
using wheelcheck::test::shell_quote;
using wheelcheck::test::TempDir;

// A pure wheel NAME-FILE_VERSION-py3-none-any.whl in `dir` whose METADATA says Version: META_VERSION, with a
// correct RECORD (Python's zipfile, hashlib).
std::string write_wheel(const TempDir& tmp, const std::string& dir, const std::string& name,
                        const std::string& file_version, const std::string& meta_version) {
  const std::string script = tmp.write("mkwheel.py", R"(import base64, hashlib, os, sys, zipfile
out, name, fver, mver = sys.argv[1:5]
info = f"{name}-{fver}.dist-info"
path = os.path.join(out, f"{name}-{fver}-py3-none-any.whl")
records = []
def digest(b):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
    def add(arc, b):
        z.writestr(arc, b)
        records.append(f"{arc},{digest(b)},{len(b)}")
    add(f"{name}/__init__.py", b"")
    add(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {mver}\n".encode())
    add(f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: referee\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    records.append(f"{info}/RECORD,,")
    z.writestr(f"{info}/RECORD", "\n".join(records) + "\n")
print(path)
)");
  std::filesystem::create_directories(dir);
  const auto r = run("python3 " + shell_quote(script) + " " + shell_quote(dir) + " " + name + " " + file_version + " " +
                     meta_version);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dir + "/" + name + "-" + file_version + "-py3-none-any.whl";
}

struct PipAnswer {
  bool installs = false;
  std::string output;
};

// `python3 -m pip install --no-deps --no-index --target T ...`: whether it installs.
PipAnswer pip_install(const TempDir& tmp, const std::string& target, const std::string& args) {
  const auto r = run("python3 -m pip --isolated --disable-pip-version-check install --no-deps --no-index --target " +
                     shell_quote(tmp.file(target)) + " " + args + " 2>&1");
  return {r.exit_code == 0, r.out + r.err};
}

// The class per command a finding's evidence states ("pip install x==1.1 (...): refuses it" -> refuses).
std::map<std::string, std::string> stated(const nlohmann::json& finding) {
  std::map<std::string, std::string> out;
  for (const auto& e : finding.at("evidence")) {
    const std::string line = e.get<std::string>();
    if (line.rfind("pip install ", 0) != 0) continue;
    const auto space = line.find_first_of(" :", 12);
    const std::string command = line.substr(0, space);
    out[command] = line.find(": installs it") != std::string::npos  ? "installs"
                   : line.find(": refuses it") != std::string::npos ? "refuses"
                                                                    : "?";
  }
  return out;
}

// The metadata finding about Version in a document's findings (lint: wheels[0].findings; check: findings).
const nlohmann::json* version_finding(const nlohmann::json& findings) {
  for (const auto& f : findings) {
    if (f.at("kind") == "metadata" && f.at("library") == "Version") return &f;
  }
  return nullptr;
}

nlohmann::json wheelcheck_json(const std::string& args) {
  const auto r =
      run("WHEELCHECK_OFFLINE=1 " + shell_quote(wheelcheck::test::binary_path()) + " " + args +
          " --no-cache -q --no-config --format json --db " + shell_quote(wheelcheck::test::source_dir() + "/db"));
  return nlohmann::json::parse(r.out.empty() ? "{}" : r.out);
}

TEST(MetadataReferee, WhatPipDoesWithAVersionOtherThanTheFileNames) {
  if (run("python3 -m pip --version").exit_code != 0) GTEST_SKIP() << "python3 has no pip here: no referee to ask";
  TempDir tmp;
  struct Case {
    std::string file_version, meta_version;
  };
  for (const Case c : {Case{"1.1", "1.0"}, Case{"1.2", "1.2"}}) {
    SCOPED_TRACE("file name " + c.file_version + ", METADATA " + c.meta_version);
    const std::string links = tmp.file("links-" + c.file_version);
    const std::string wheel = write_wheel(tmp, links, "refx", c.file_version, c.meta_version);
    const std::string file = "refx-" + c.file_version + "-py3-none-any.whl";
    // pip, the referee: the three commands the finding speaks of.
    std::map<std::string, PipAnswer> pip;
    pip["pip install ./" + file] = pip_install(tmp, "t-path-" + c.file_version, shell_quote(wheel));
    pip["pip install refx==" + c.file_version] =
        pip_install(tmp, "t-pinned-" + c.file_version,
                    "--find-links " + shell_quote(links) + " " + shell_quote("refx==" + c.file_version));
    pip["pip install refx"] =
        pip_install(tmp, "t-unpinned-" + c.file_version, "--find-links " + shell_quote(links) + " refx");
    const auto lint = wheelcheck_json("lint " + shell_quote(wheel));
    ASSERT_TRUE(lint.contains("wheels")) << lint.dump(1);
    const auto check = wheelcheck_json("check " + shell_quote(wheel) + " --image debian12");
    ASSERT_TRUE(check.contains("findings")) << check.dump(1);
    const auto* in_lint = version_finding(lint.at("wheels").at(0).at("findings"));
    const auto* in_check = version_finding(check.at("findings"));
    if (c.file_version == c.meta_version) {
      for (const auto& [command, answer] : pip) EXPECT_TRUE(answer.installs) << command << "\n" << answer.output;
      EXPECT_EQ(in_lint, nullptr) << lint.dump(1);
      EXPECT_EQ(in_check, nullptr) << check.dump(1);
      continue;
    }
    ASSERT_NE(in_lint, nullptr) << lint.dump(1);
    ASSERT_NE(in_check, nullptr) << check.dump(1);
    EXPECT_EQ(in_lint->at("severity"), "error");
    EXPECT_EQ(in_check->at("severity"), "warning");
    for (const auto* finding : {in_lint, in_check}) {
      const auto said = stated(*finding);
      ASSERT_EQ(said.size(), pip.size()) << finding->dump(1);
      for (const auto& [command, answer] : pip) {
        ASSERT_TRUE(said.count(command) != 0) << command << " is not stated: " << finding->dump(1);
        EXPECT_EQ(said.at(command), answer.installs ? "installs" : "refuses") << command << ": pip says\n"
                                                                              << answer.output << "\nwheelcheck says\n"
                                                                              << finding->dump(1);
        if (!answer.installs) EXPECT_NE(answer.output.find("inconsistent version"), std::string::npos) << answer.output;
      }
      // The prose says the same: both classes, and pip's own words.
      const std::string e = finding->at("explanation").get<std::string>();
      EXPECT_NE(e.find("pip installs the wheel from its path or URL"), std::string::npos) << e;
      EXPECT_NE(e.find("refuses it where it finds it by name"), std::string::npos) << e;
      EXPECT_NE(e.find("has inconsistent version: expected '1.1', but metadata has '1.0'"), std::string::npos) << e;
    }
  }
}

}  // namespace unity_test_metadata_referee
