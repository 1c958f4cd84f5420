// Lock files (include/wheelcheck/lock.hpp): pylock.toml, pip's installation report and requirements files
// read from text written here (nested requirements files in a temporary folder), malformed and hostile
// inputs refused with the file and line, PEP 508 markers evaluated for the db's images, the wheel an
// installer picks for cuda13.0 (x86_64, CPython 3.12, glibc 2.39) and ascend-cann9 (aarch64, glibc
// version unknown), and an index page's files narrowed to a pin and its hashes.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/index.hpp"
#include "wheelcheck/lock.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_lock {

using namespace wheelcheck;
using namespace wheelcheck::test;

namespace {

const std::string k_sha_a(64, 'a');
const std::string k_sha_b(64, 'b');
const std::string k_sha_c(64, 'c');
const std::string k_sha_d(64, 'd');

// The message of the Error(BadInput) that `f` throws ("" and a failure when it throws none).
template <typename F>
std::string bad_input_message(F f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool any_has(const std::vector<std::string>& texts, const std::string& part) {
  for (const auto& t : texts) {
    if (has(t, part)) return true;
  }
  return false;
}

const image::Db& db() {
  static const image::Db d(source_dir() + "/db");
  return d;
}

const std::string k_pylock_path = "/locks/env/pylock.toml";

// A lock for both FlagOS machines: numpy for x86_64 and aarch64 (and a cp311 wheel), torch's local
// version percent-encoded in its URL, an sdist-only package, a git checkout, an archive that is a wheel,
// and a Windows-only package behind a marker.
const std::string k_pylock = R"(lock-version = "1.0"
requires-python = ">=3.10"
created-by = "wheelcheck tests"

[[packages]]
name = "numpy"
version = "2.1.0"
requires-python = ">=3.10"
index = "https://pypi.org/simple"
wheels = [
  { name = "numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", url = "https://files.example/np/numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", size = 16000000, hashes = { sha256 = ")" +
                             std::string(64, 'A') + R"(" } },
  { url = "https://files.example/np/numpy-2.1.0-cp312-cp312-manylinux_2_17_aarch64.manylinux2014_aarch64.whl#sha256=ignored", hashes = { sha256 = ")" +
                             k_sha_b + R"(" } },
  { path = "wheels/numpy-2.1.0-cp311-cp311-manylinux_2_17_x86_64.whl", hashes = { sha256 = ")" +
                             k_sha_c + R"(" } },
]

[[packages]]
name = "torch"
version = "2.10.0+cpu"

[[packages.wheels]]
url = "https://download.example/whl/cpu/torch-2.10.0%2Bcpu-cp312-cp312-manylinux_2_28_x86_64.whl"
hashes = { sha256 = ")" + k_sha_d +
                             R"(" }

[[packages]]
name = "sdist-only"
version = "1.0"
sdist = { url = "https://files.example/sdist_only-1.0.tar.gz", hashes = { sha256 = ")" +
                             k_sha_a + R"(" } }

[[packages]]
name = "tool"
version = "0.1"
vcs = { type = "git", url = "https://github.com/example/tool", commit-id = "0123abcd" }

[[packages]]
name = "prebuilt"
version = "3.0"
archive = { url = "https://files.example/prebuilt-3.0-py3-none-any.whl", hashes = { sha256 = ")" +
                             k_sha_a + R"(" } }

[[packages]]
name = "pywin32"
version = "306"
marker = 'sys_platform == "win32"'
wheels = [{ url = "https://files.example/pywin32-306-cp312-cp312-win_amd64.whl", hashes = { sha256 = ")" +
                             k_sha_b +
                             R"(" } }]
)";

lock::Lock pylock() {
  return lock::parse(k_pylock, lock::Format::Pylock, k_pylock_path);
}

const lock::Package& package(const lock::Lock& l, const std::string& name) {
  for (const auto& p : l.packages) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no package " + name);
}

lock::File wheel_file(const std::string& filename) {
  lock::File f;
  f.filename = filename;
  f.url = "https://files.example/" + filename;
  return f;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// pylock.toml

TEST(LockPylock, ReadsEveryKindOfPackage) {
  const lock::Lock l = pylock();
  EXPECT_EQ(l.format, lock::Format::Pylock);
  EXPECT_EQ(l.path, k_pylock_path);
  EXPECT_EQ(l.requires_python, ">=3.10");
  ASSERT_EQ(l.packages.size(), 6U);
  EXPECT_TRUE(l.warnings.empty()) << l.warnings.front();

  const lock::Package& numpy = l.packages[0];
  EXPECT_EQ(numpy.name, "numpy");
  EXPECT_EQ(numpy.version, "2.1.0");
  EXPECT_EQ(numpy.requires_python, ">=3.10");
  EXPECT_EQ(numpy.source, k_pylock_path + ":5");
  EXPECT_EQ(numpy.indexes, std::vector<std::string>{"https://pypi.org/simple"});
  EXPECT_TRUE(numpy.marker.empty());
  EXPECT_FALSE(numpy.from_index());
  ASSERT_EQ(numpy.wheels.size(), 3U);
  EXPECT_EQ(numpy.wheels[0].filename, "numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
  EXPECT_EQ(numpy.wheels[0].size, 16000000U);
  EXPECT_EQ(numpy.wheels[0].sha256(), std::string(64, 'a'));  // lower case
  EXPECT_TRUE(numpy.wheels[0].is_wheel());
  // The name from the URL's last segment; the fragment is not part of the URL (the table's hash is kept).
  EXPECT_EQ(numpy.wheels[1].filename, "numpy-2.1.0-cp312-cp312-manylinux_2_17_aarch64.manylinux2014_aarch64.whl");
  EXPECT_EQ(numpy.wheels[1].url,
            "https://files.example/np/numpy-2.1.0-cp312-cp312-manylinux_2_17_aarch64.manylinux2014_aarch64.whl");
  EXPECT_EQ(numpy.wheels[1].sha256(), k_sha_b);
  // A relative path resolves against the lock's folder.
  EXPECT_EQ(numpy.wheels[2].filename, "numpy-2.1.0-cp311-cp311-manylinux_2_17_x86_64.whl");
  EXPECT_EQ(numpy.wheels[2].path, "/locks/env/wheels/numpy-2.1.0-cp311-cp311-manylinux_2_17_x86_64.whl");
  EXPECT_EQ(numpy.wheels[2].url, "");
  EXPECT_EQ(numpy.wheels[2].where(), numpy.wheels[2].path);

  const lock::Package& torch = l.packages[1];
  EXPECT_EQ(torch.version, "2.10.0+cpu");
  EXPECT_EQ(torch.source, k_pylock_path + ":16");
  ASSERT_EQ(torch.wheels.size(), 1U);
  EXPECT_EQ(torch.wheels[0].filename, "torch-2.10.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl");  // decoded
  EXPECT_TRUE(has(torch.wheels[0].url, "%2Bcpu"));

  const lock::Package& sdist = l.packages[2];
  EXPECT_TRUE(sdist.wheels.empty());
  ASSERT_TRUE(sdist.sdist.has_value());
  EXPECT_EQ(sdist.sdist->filename, "sdist_only-1.0.tar.gz");
  EXPECT_FALSE(sdist.sdist->is_wheel());
  EXPECT_FALSE(sdist.from_index());

  const lock::Package& tool = l.packages[3];
  EXPECT_TRUE(tool.wheels.empty());
  EXPECT_EQ(tool.other, "a git checkout of https://github.com/example/tool at 0123abcd");

  const lock::Package& prebuilt = l.packages[4];  // an archive that is a wheel
  ASSERT_EQ(prebuilt.wheels.size(), 1U);
  EXPECT_EQ(prebuilt.wheels[0].filename, "prebuilt-3.0-py3-none-any.whl");
  EXPECT_TRUE(prebuilt.other.empty());

  EXPECT_EQ(l.packages[5].marker, "sys_platform == \"win32\"");
}

TEST(LockPylock, ReadsALockOnDiskAndResolvesItsPaths) {
  TempDir dir;
  const std::string path = dir.write("pylock.gpu.toml", k_pylock);
  const lock::Lock l = lock::load(path);
  EXPECT_EQ(l.format, lock::Format::Pylock);
  EXPECT_EQ(package(l, "numpy").wheels[2].path,
            dir.path() + "/wheels/numpy-2.1.0-cp311-cp311-manylinux_2_17_x86_64.whl");
}

TEST(LockPylock, MalformedLocksNameTheFileAndLine) {
  auto parse = [](const std::string& text) {
    return bad_input_message([&] { lock::parse(text, lock::Format::Pylock, "pylock.toml"); });
  };
  const std::string bad_toml = parse("lock-version = \"1.0\"\n\n[[packages]]\nname = \n");
  EXPECT_TRUE(has(bad_toml, "pylock.toml:4: not valid TOML")) << bad_toml;

  const std::string newer = parse("lock-version = \"2.0\"\npackages = []\n");
  EXPECT_TRUE(has(newer, "pylock.toml:1: lock-version 2.0 is not one wheelcheck reads")) << newer;

  const std::string no_version = parse("packages = []\n");
  EXPECT_TRUE(has(no_version, "no lock-version")) << no_version;

  const std::string wrong_type = parse("lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nversion = 2\n");
  EXPECT_TRUE(has(wrong_type, "pylock.toml:4: packages[0] (x).version must be a string")) << wrong_type;

  const std::string bad_marker =
      parse("lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nmarker = \"python_version >=\"\n");
  EXPECT_TRUE(has(bad_marker, "pylock.toml:4: packages[0] (x).marker: invalid marker")) << bad_marker;

  const std::string bad_hash = parse(
      "lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\n[[packages.wheels]]\nurl = "
      "\"https://h/x-1-py3-none-any.whl\"\nhashes = { sha256 = \"abc\" }\n");
  EXPECT_TRUE(has(bad_hash, "pylock.toml:6:")) << bad_hash;
  EXPECT_TRUE(has(bad_hash, "not 64 hex digits")) << bad_hash;

  const std::string nowhere = parse("lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nsdist = { size = 3 }\n");
  EXPECT_TRUE(has(nowhere, "has neither url nor path")) << nowhere;
}

TEST(LockPylock, ANewerMinorVersionAndUnknownKeysWarn) {
  const lock::Lock l = lock::parse("lock-version = \"1.3\"\nfuture = 1\n[[packages]]\nname = \"x\"\nshiny = true\n",
                                   lock::Format::Pylock, "pylock.toml");
  ASSERT_EQ(l.packages.size(), 1U);
  EXPECT_TRUE(any_has(l.warnings, "pylock.toml:1: lock-version 1.3 is newer than the 1.0 wheelcheck reads"));
  EXPECT_TRUE(any_has(l.warnings, "pylock.toml:2: future is not a key wheelcheck reads"));
  EXPECT_TRUE(any_has(l.warnings, "pylock.toml:5: packages[0] (x).shiny is not a key wheelcheck reads"));
  EXPECT_TRUE(l.packages[0].from_index());
}

TEST(LockPylock, HostileInputIsRefusedNotACrash) {
  auto refused = [](const std::string& text) {
    return bad_input_message([&] { lock::parse(text, lock::Format::Pylock, "pylock.toml"); });
  };
  std::string deep_key = "lock-version = \"1.0\"\n[";
  for (int i = 0; i < 300000; ++i) deep_key += i == 0 ? "a" : ".a";
  deep_key += "]\n";
  EXPECT_TRUE(has(refused(deep_key), "pylock.toml:2: keys and inline tables nested deeper than"));

  std::string dotted_value = "lock-version = \"1.0\"\nx = {";
  for (int i = 0; i < 200; ++i) dotted_value += "a.b = {";
  EXPECT_TRUE(has(refused(dotted_value), "nested deeper than"));

  std::string arrays = "lock-version = \"1.0\"\nx = " + std::string(100000, '[') + std::string(100000, ']') + "\n";
  EXPECT_TRUE(has(refused(arrays), "pylock.toml:2: keys and inline tables nested deeper than"));
  // Below our bound, toml++'s own (TOML_MAX_NESTED_VALUES, 256) is never reached; its error is TOML's.
  EXPECT_TRUE(has(refused("lock-version = \"1.0\"\nx = [1, 2,, 3]\n"), "pylock.toml:2: not valid TOML"));

  EXPECT_TRUE(has(refused("lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nsdist = { url = \"https://h/x.tar.gz\", "
                          "size = 999999999999999999999999999 }\n"),
                  "pylock.toml:4"));
  EXPECT_TRUE(has(refused("lock-version = \"1.0\"\n[[packages]]\nname = \"x\"\nsdist = { url = \"https://h/x.tar.gz\", "
                          "size = -1 }\n"),
                  "size must be a non-negative integer"));
  EXPECT_TRUE(has(refused("lock-version = \"1.0\"\n[[packages]]\nname = \"\xff\xfe\"\n"), "not valid TOML"));
  std::string many_tables = "lock-version = \"1.0\"\nx = [";
  for (int i = 0; i < 1'000'001; ++i) many_tables += "{},";
  EXPECT_TRUE(has(refused(many_tables + "]\n"), "pylock.toml:2: more than 1000000 tables and arrays"));
  EXPECT_TRUE(has(refused(""), "no lock-version"));
  EXPECT_TRUE(has(refused("lock-version = \"1.0\"\npackages = 3\n"), "packages must be an array"));
  // Dots inside strings and values count for nothing.
  std::string many_dots = "lock-version = \"1.0\"\nx = \"" + std::string(100000, '.') + "\"\ny = [";
  for (int i = 0; i < 500; ++i) many_dots += "1.5, ";
  many_dots += "]\npackages = []\n";
  EXPECT_NO_THROW(lock::parse(many_dots, lock::Format::Pylock, "pylock.toml"));
}

// ---------------------------------------------------------------------------------------------------
// pip's installation report

const std::string k_report = R"({
  "version": "1",
  "pip_version": "24.2",
  "install": [
    {
      "download_info": {
        "url": "https://files.example/packages/numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "archive_info": {"hash": "sha256=)" +
                             k_sha_a + R"(", "hashes": {"sha256": ")" + k_sha_a + R"("}}
      },
      "is_direct": false, "is_yanked": false, "requested": true,
      "metadata": {"metadata_version": "2.1", "name": "numpy", "version": "2.1.0", "requires_python": ">=3.10"}
    },
    {
      "download_info": {"url": "https://files.example/packages/six-1.16.0.tar.gz",
                        "archive_info": {"hash": "sha256=)" +
                             k_sha_b + R"("}},
      "is_yanked": true,
      "metadata": {"name": "six", "version": "1.16.0"}
    },
    {
      "download_info": {"url": "file:///src/my%20project", "dir_info": {"editable": true}},
      "metadata": {"name": "myproject", "version": "0.1"}
    },
    {
      "download_info": {"url": "https://github.com/example/tool", "vcs_info": {"vcs": "git", "commit_id": "0123abcd"}},
      "metadata": {"name": "tool", "version": "0.2"}
    }
  ],
  "environment": {"python_full_version": "3.12.4", "platform_machine": "x86_64", "sys_platform": "linux"}
})";

TEST(LockReport, ReadsItsInstallEntries) {
  TempDir dir;
  const lock::Lock l = lock::load(dir.write("report.json", k_report));
  EXPECT_EQ(l.format, lock::Format::PipReport);
  ASSERT_EQ(l.packages.size(), 4U);

  const lock::Package& numpy = l.packages[0];
  EXPECT_EQ(numpy.name, "numpy");
  EXPECT_EQ(numpy.version, "2.1.0");
  EXPECT_EQ(numpy.requires_python, ">=3.10");
  EXPECT_EQ(numpy.marker, "");
  ASSERT_EQ(numpy.wheels.size(), 1U);
  EXPECT_EQ(numpy.wheels[0].filename, "numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
  EXPECT_EQ(numpy.wheels[0].sha256(), k_sha_a);
  EXPECT_FALSE(numpy.sdist.has_value());
  EXPECT_TRUE(has(numpy.source, "install[0] (numpy)"));

  const lock::Package& six = l.packages[1];
  EXPECT_TRUE(six.wheels.empty());
  ASSERT_TRUE(six.sdist.has_value());
  EXPECT_EQ(six.sdist->filename, "six-1.16.0.tar.gz");
  EXPECT_EQ(six.sdist->sha256(), k_sha_b);
  EXPECT_TRUE(six.sdist->yanked);

  EXPECT_EQ(l.packages[2].other, "an editable install of local directory (/src/my project)");
  EXPECT_EQ(l.packages[3].other, "a git checkout of https://github.com/example/tool at 0123abcd");
  // Where pip evaluated the markers is said.
  EXPECT_TRUE(any_has(l.warnings, "python_full_version 3.12.4, platform_machine x86_64"));
}

TEST(LockReport, WhatIsNotAReportIsRefused) {
  auto refused = [](const std::string& text) {
    return bad_input_message([&] { lock::parse(text, lock::Format::PipReport, "r.json"); });
  };
  EXPECT_TRUE(has(refused(R"({"name": "not a report"})"), "r.json is not a pip installation report"));
  EXPECT_TRUE(has(refused("[1, 2]"), "is not a pip installation report"));
  EXPECT_TRUE(has(refused("{\"install\": [}"), "r.json: not JSON"));
  EXPECT_TRUE(has(refused(R"({"version": "2", "install": []})"), "version 2 is not one wheelcheck reads"));
  EXPECT_TRUE(has(refused(R"({"install": [{"download_info": {"url": "https://h/x-1.tar.gz"}}]})"),
                  "install[0] has no metadata"));
  EXPECT_TRUE(has(refused(R"({"install": [{"metadata": {"name": "x"}, "download_info": {"url": 3}}]})"),
                  "download_info.url must be a string"));
  EXPECT_TRUE(has(refused(std::string(100000, '[') + std::string(100000, ']')), "nested deeper than"));
  EXPECT_TRUE(has(refused("{\"install\": [], \"x\": \"\xff\"}"), "not JSON"));
  try {  // a number past a double's range: refused or read (nothing reads it), never a crash
    lock::parse(R"({"install": [], "n": 1e99999, "m": 123456789012345678901234567890})", lock::Format::PipReport,
                "r.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
  }
  // A .json file is read as a report, and refused as one when it is not.
  TempDir dir;
  const std::string path = dir.write("image.json", R"({"schema": "wheelcheck-image/1"})");
  EXPECT_TRUE(has(bad_input_message([&] { lock::load(path); }), "is not a pip installation report"));
}

// ---------------------------------------------------------------------------------------------------
// Requirements files

TEST(LockRequirements, ReadsPinsHashesContinuationsNestedFilesAndIndexes) {
  TempDir dir;
  const std::string main = dir.write("reqs.txt",
                                     "# the FlagOS CUDA environment\n"
                                     "-i https://download.pytorch.org/whl/cpu\n"
                                     "--extra-index-url https://pypi.org/simple\n"
                                     "--find-links ./wheels\n"
                                     "torch==2.10.0+cpu ; platform_machine == \"x86_64\" \\\n"
                                     "    --hash=sha256:" +
                                         std::string(64, 'A') +
                                         " \\\n"
                                         "    --hash=sha256:" +
                                         k_sha_b +
                                         "\n"
                                         "\n"
                                         "numpy[extra1, extra2] == 2.1.0  # a trailing comment\n"
                                         "flag-gems @ https://example.org/flag_gems-5.4.0-cp312-cp312-linux_"
                                         "x86_64.whl#sha256=" +
                                         k_sha_c +
                                         "\n"
                                         "local @ file:///opt/wheels/local-1.0-py3-none-any.whl\n"
                                         "./dist/pkg-0.1-py3-none-any.whl\n"
                                         "https://example.org/sdists/thing-3.0.tar.gz ; python_version "
                                         ">= \"3.8\"\n"
                                         "-r more/extra.txt\n"
                                         "-c constraints.txt\n"
                                         "--trusted-host ${MIRROR_HOST}\n");
  dir.write("wheels/.keep", "");  // --find-links ./wheels: there beside the file, so read from there
  dir.write("more/extra.txt", "six===1.16.0\n--requirement ../leaf.txt\n");
  dir.write("leaf.txt", "idna==3.7 \\\n  --hash sha256:" + k_sha_d + "\n");
  const lock::Lock l = lock::load(main);
  EXPECT_EQ(l.format, lock::Format::Requirements);
  ASSERT_EQ(l.packages.size(), 8U);

  const lock::Package& torch = l.packages[0];
  EXPECT_EQ(torch.name, "torch");
  EXPECT_EQ(torch.version, "2.10.0+cpu");
  EXPECT_EQ(torch.specifier, "==2.10.0+cpu");
  EXPECT_EQ(torch.marker, "platform_machine == \"x86_64\"");
  EXPECT_EQ(torch.hashes, (std::vector<std::string>{std::string(64, 'a'), k_sha_b}));
  EXPECT_EQ(torch.source, main + ":5");
  EXPECT_TRUE(torch.from_index());
  // Indexes and find-links apply to every package of the files read (pip makes them global).
  const std::vector<std::string> indexes = {"https://download.pytorch.org/whl/cpu", "https://pypi.org/simple"};
  for (const auto& p : l.packages) {
    EXPECT_EQ(p.indexes, indexes) << p.name;
    EXPECT_EQ(p.find_links, std::vector<std::string>{dir.path() + "/wheels"}) << p.name;
  }

  const lock::Package& numpy = l.packages[1];
  EXPECT_EQ(numpy.version, "2.1.0");
  EXPECT_EQ(numpy.specifier, "==2.1.0");
  EXPECT_EQ(numpy.source, main + ":9");

  const lock::Package& gems = l.packages[2];
  EXPECT_EQ(gems.name, "flag-gems");
  EXPECT_EQ(gems.version, "5.4.0");
  ASSERT_EQ(gems.wheels.size(), 1U);
  EXPECT_EQ(gems.wheels[0].url, "https://example.org/flag_gems-5.4.0-cp312-cp312-linux_x86_64.whl");
  EXPECT_EQ(gems.wheels[0].sha256(), k_sha_c);

  const lock::Package& local = l.packages[3];
  ASSERT_EQ(local.wheels.size(), 1U);
  EXPECT_EQ(local.wheels[0].path, "/opt/wheels/local-1.0-py3-none-any.whl");
  EXPECT_EQ(local.wheels[0].url, "");
  EXPECT_EQ(local.version, "1.0");

  const lock::Package& pkg = l.packages[4];
  EXPECT_EQ(pkg.name, "pkg");
  EXPECT_EQ(pkg.version, "0.1");
  ASSERT_EQ(pkg.wheels.size(), 1U);
  EXPECT_EQ(pkg.wheels[0].path, "./dist/pkg-0.1-py3-none-any.whl");  // as pip: relative to the working folder

  const lock::Package& thing = l.packages[5];
  EXPECT_EQ(thing.name, "thing");
  EXPECT_EQ(thing.version, "3.0");
  ASSERT_TRUE(thing.sdist.has_value());
  EXPECT_EQ(thing.sdist->url, "https://example.org/sdists/thing-3.0.tar.gz");
  EXPECT_EQ(thing.marker, "python_version >= \"3.8\"");

  const lock::Package& six = l.packages[6];
  EXPECT_EQ(six.version, "1.16.0");
  EXPECT_EQ(six.specifier, "===1.16.0");
  EXPECT_TRUE(has(six.source, "more/extra.txt:1"));

  const lock::Package& idna = l.packages[7];
  EXPECT_EQ(idna.version, "3.7");
  EXPECT_EQ(idna.hashes, std::vector<std::string>{k_sha_d});
  EXPECT_TRUE(has(idna.source, "leaf.txt:1"));

  EXPECT_TRUE(any_has(l.warnings, "reqs.txt:15: -c constraints.txt is ignored"));
  EXPECT_TRUE(any_has(l.warnings, "reqs.txt:16: ${...} is not expanded"));
  EXPECT_TRUE(any_has(l.warnings, "reqs.txt:16: --trusted-host is ignored"));
}

TEST(LockRequirements, DefaultIndexAndNoIndex) {
  const lock::Lock plain = lock::parse("six==1.16.0\n", lock::Format::Requirements, "r.txt");
  ASSERT_EQ(plain.packages.size(), 1U);
  EXPECT_EQ(plain.packages[0].indexes, std::vector<std::string>{lock::k_default_index});

  const lock::Lock none =
      lock::parse("--no-index\n-f https://h/links/\nsix==1.16.0\n", lock::Format::Requirements, "r.txt");
  EXPECT_TRUE(none.packages[0].indexes.empty());
  EXPECT_EQ(none.packages[0].find_links, std::vector<std::string>{"https://h/links/"});

  const lock::Lock extra =
      lock::parse("--extra-index-url=https://mirror/simple\nsix==1.16.0\n", lock::Format::Requirements, "r.txt");
  EXPECT_EQ(extra.packages[0].indexes, (std::vector<std::string>{lock::k_default_index, "https://mirror/simple"}));
}

TEST(LockRequirements, WhatALockCannotSayIsRefused) {
  auto refused = [](const std::string& text) {
    return bad_input_message([&] { lock::parse(text, lock::Format::Requirements, "reqs.txt"); });
  };
  EXPECT_EQ(refused("six==1.16.0\nrequests\n"),
            "reqs.txt:2: requests is not pinned (==VERSION): a lock names one version");
  EXPECT_EQ(refused("requests>=2.0\n"), "reqs.txt:1: requests is not pinned (==VERSION): a lock names one version");
  EXPECT_EQ(refused("requests==2.*\n"), "reqs.txt:1: requests is not pinned (==VERSION): a lock names one version");
  EXPECT_EQ(refused("requests==2.0,!=2.1\n"),
            "reqs.txt:1: requests is not pinned (==VERSION): a lock names one version");
  EXPECT_TRUE(has(refused("requests==\n"), "reqs.txt:1: '==' is not a version specifier"));
  EXPECT_TRUE(has(refused("six==1.16.0 --hash=sha256:abc\n"), "reqs.txt:1: --hash=sha256:abc is not 64 hex digits"));
  EXPECT_TRUE(has(refused("--frobnicate\n"), "reqs.txt:1: unknown option --frobnicate"));
  EXPECT_TRUE(has(refused("six==1.16.0 ; python_version >= 3.8\n"), "reqs.txt:1: invalid marker"));
  EXPECT_TRUE(has(refused("--hash=sha256:" + k_sha_a + "\n"), "belongs on a requirement's line"));
  EXPECT_TRUE(has(refused("-r https://h/reqs.txt\n"), "local requirements files only"));
  EXPECT_TRUE(has(refused("-r missing.txt\n"), "reqs.txt:1: -r missing.txt: cannot open"));

  TempDir dir;
  const std::string a = dir.write("a.txt", "six==1.16.0\n-r sub/b.txt\n");
  dir.write("sub/b.txt", "idna==3.7\n-r ../a.txt\n");
  const std::string cycle = bad_input_message([&] { lock::load(a); });
  EXPECT_TRUE(has(cycle, "sub/b.txt:2: -r ../a.txt includes a file being read: a cycle")) << cycle;
  EXPECT_TRUE(has(cycle, "a.txt -> ")) << cycle;
  const std::string self = dir.write("self.txt", "-r self.txt\n");
  EXPECT_TRUE(has(bad_input_message([&] { lock::load(self); }), "a cycle"));
}

TEST(LockRequirements, HostileLinesAreReadInLinearTime) {
  const auto start = std::chrono::steady_clock::now();
  // A 1 MB name, pinned: read as it is.
  const std::string name(1 << 20, 'a');
  const lock::Lock l = lock::parse(name + "==1.0\n", lock::Format::Requirements, "reqs.txt");
  ASSERT_EQ(l.packages.size(), 1U);
  EXPECT_EQ(l.packages[0].name.size(), name.size());
  // A 1 MB marker, 1 MB of continuation lines, 1 MB of white space and dashes: refused or read, never slow.
  const std::string long_marker = "six==1.0 ; python_version == \"" + std::string(1 << 20, '3') + "\"\n";
  EXPECT_NO_THROW(lock::parse(long_marker, lock::Format::Requirements, "reqs.txt"));
  std::string continued = "six==1.0";
  for (int i = 0; i < 100000; ++i) continued += " \\\n";
  EXPECT_NO_THROW(lock::parse(continued + "\n", lock::Format::Requirements, "reqs.txt"));
  const std::string deep =
      "six==1.0 ; " + std::string(100000, '(') + "python_version == \"3\"" + std::string(100000, ')') + "\n";
  EXPECT_TRUE(has(bad_input_message([&] { lock::parse(deep, lock::Format::Requirements, "reqs.txt"); }),
                  "parentheses nested deeper than"));
  std::string dashes(1 << 20, '-');
  EXPECT_TRUE(has(bad_input_message([&] { lock::parse(dashes + "\n", lock::Format::Requirements, "reqs.txt"); }),
                  "unknown option"));
  const std::string invalid_utf8 = "six==1.0 ; sys_platform == \"\xff\xfe\"\n";
  EXPECT_NO_THROW(lock::parse(invalid_utf8, lock::Format::Requirements, "reqs.txt"));
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 20);
}

// ---------------------------------------------------------------------------------------------------
// Which files are locks

TEST(LockPath, DecidedByTheNameAlone) {
  EXPECT_TRUE(lock::is_lock_path("pylock.toml"));
  EXPECT_TRUE(lock::is_lock_path("envs/pylock.cuda.toml"));
  EXPECT_TRUE(lock::is_lock_path("PYLOCK.TOML"));
  EXPECT_TRUE(lock::is_lock_path("report.json"));
  EXPECT_TRUE(lock::is_lock_path("requirements.txt"));
  EXPECT_TRUE(lock::is_lock_path("requirements/base.in"));
  EXPECT_TRUE(lock::is_lock_path("https://example.org/locks/requirements.txt?x=1"));
  EXPECT_FALSE(lock::is_lock_path("numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.whl"));
  EXPECT_FALSE(lock::is_lock_path("https://example.org/numpy-2.1.0-py3-none-any.whl#sha256=abc"));
  EXPECT_FALSE(lock::is_lock_path("pyproject.toml"));
  EXPECT_FALSE(lock::is_lock_path("pylock.toml/"));  // a folder
  EXPECT_FALSE(lock::is_lock_path("pylock.toml.whl"));
  EXPECT_FALSE(lock::is_lock_path("notes.md"));
}

TEST(LockPath, LoadRefusesAFileLargerThan64MB) {
  TempDir dir;
  const std::string path = dir.file("big.txt");
  write_binary(path, "six==1.0\n");
  std::filesystem::resize_file(path, lock::k_max_lock_size + 1);  // sparse: nothing is written
  const std::string message = bad_input_message([&] { lock::load(path); });
  EXPECT_TRUE(has(message, "big.txt is larger than")) << message;
}

TEST(LockPath, OtherNamesAreReadByTheirContent) {
  TempDir dir;
  EXPECT_EQ(lock::load(dir.write("env.lock", k_pylock)).format, lock::Format::Pylock);
  EXPECT_EQ(lock::load(dir.write("env.report", k_report)).format, lock::Format::PipReport);
  EXPECT_EQ(lock::load(dir.write("env.pins", "six==1.16.0\n")).format, lock::Format::Requirements);
}

// ---------------------------------------------------------------------------------------------------
// Markers

TEST(MarkerEnv, DescribesTheImagesPython) {
  const lock::MarkerEnv cuda = lock::marker_env(db().get("cuda13.0"), nullptr);
  EXPECT_EQ(cuda.values.at("python_version"), "3.12");
  EXPECT_EQ(cuda.values.at("python_full_version"), "3.12.0");
  EXPECT_EQ(cuda.values.at("implementation_version"), "3.12.0");
  EXPECT_EQ(cuda.values.at("implementation_name"), "cpython");
  EXPECT_EQ(cuda.values.at("platform_python_implementation"), "CPython");
  EXPECT_EQ(cuda.values.at("sys_platform"), "linux");
  EXPECT_EQ(cuda.values.at("platform_system"), "Linux");
  EXPECT_EQ(cuda.values.at("os_name"), "posix");
  EXPECT_EQ(cuda.values.at("platform_machine"), "x86_64");
  EXPECT_EQ(cuda.values.at("platform_release"), "");
  EXPECT_EQ(lock::marker_env(db().get("ascend-cann9"), nullptr).values.at("platform_machine"), "aarch64");
  image::Python py;
  py.version = "3.11.4";
  const lock::MarkerEnv explicit_python = lock::marker_env(db().get("cuda13.0"), &py);
  EXPECT_EQ(explicit_python.values.at("python_version"), "3.11");
  EXPECT_EQ(explicit_python.values.at("python_full_version"), "3.11.4");
}

TEST(MarkerEval, EvaluatesForTheImage) {
  const lock::MarkerEnv env = lock::marker_env(db().get("cuda13.0"), nullptr);
  struct Case {
    const char* marker;
    bool holds;
  };
  const Case cases[] = {
      {"", true},
      {"python_version >= \"3.10\" and platform_machine == \"x86_64\"", true},
      {"python_version >= '3.10' and platform_machine == 'aarch64'", false},
      {"python_version < \"3.10\"", false},
      {"python_version > \"3.9\"", true},  // versions: as strings "3.12" < "3.9"
      {"\"3.9\" < python_version", true},
      {"python_version ~= \"3.10\"", true},
      {"python_version == \"3.*\"", true},
      {"python_version != \"3.12\"", false},
      {"python_full_version >= \"3.12.0\"", true},
      {"python_full_version < \"3.12.1\"", true},
      {"\"3.12\" in python_version", true},
      {"python_version in \"3.11 3.12\"", true},
      {"python_version not in \"3.10 3.11\"", true},
      {"python_version not in '3.11 3.12'", false},
      {"sys_platform == \"win32\"", false},
      {"sys_platform != \"win32\"", true},
      {"(sys_platform == \"win32\" or sys_platform == \"linux\") and os_name == \"posix\"", true},
      {"sys_platform == \"win32\" or (sys_platform == \"linux\" and platform_machine == \"aarch64\")", false},
      {"((python_version>'3')and(os_name=='posix'))", true},
      {"implementation_name == \"cpython\" and platform_python_implementation == 'CPython'", true},
      {"platform_system == \"Linux\" and sys_platform == \"linux\"", true},
      {"os.name == \"posix\" and sys.platform == \"linux\"", true},  // packaging's legacy spellings
      {"platform_release >= \"5\"", false},                          // "" is no version: as strings
      {"platform_machine < \"y\"", true},
      {"extra == \"cuda\"", false},
      {"extra != \"cuda\"", true},
      {"'dev' in dependency_groups", false},
      {"'cuda' not in extras", true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.marker);
    EXPECT_EQ(lock::evaluate_marker(c.marker, env), c.holds);
    EXPECT_NO_THROW(lock::check_marker(c.marker));
  }
}

TEST(MarkerEval, ExtrasAndDependencyGroups) {
  lock::MarkerEnv env = lock::marker_env(db().get("ascend-cann9"), nullptr);
  env.extras = {"Test_Tools", "cuda"};
  env.dependency_groups = {"dev"};
  EXPECT_TRUE(lock::evaluate_marker("extra == \"cuda\"", env));
  EXPECT_TRUE(lock::evaluate_marker("extra == \"test-tools\"", env));  // PEP 685 normalised
  EXPECT_FALSE(lock::evaluate_marker("extra == \"docs\"", env));
  EXPECT_TRUE(lock::evaluate_marker("extra == \"cuda\" and platform_machine == \"aarch64\"", env));
  EXPECT_TRUE(lock::evaluate_marker("'dev' in dependency_groups", env));
  EXPECT_TRUE(lock::evaluate_marker("'test.tools' in extras", env));
  EXPECT_FALSE(lock::evaluate_marker("'cuda' not in extras", env));
}

TEST(MarkerEval, MalformedMarkersAreRefused) {
  const lock::MarkerEnv env = lock::marker_env(db().get("cuda13.0"), nullptr);
  const char* const bad[] = {
      "python_version >=",
      "python_version >= 3.10",  // unquoted
      "python_versions == \"3.12\"",
      "(python_version == \"3.12\"",
      "python_version == \"3.12\")",
      "\"a\" == \"b\"",
      "python_version == python_full_version",
      "python_version == \"3.12\" and",
      "python_version == \"3.12\" or or os_name == \"posix\"",
      "python_version \"3.12\"",
      "python_version == '3.12",
      "extras == 'dev'",
      "python_version not \"3.12\"",
      "python_version === \"3.12\" ; x",
      "os_name ~= \"posix\"",  // ~= between strings that are not versions
  };
  for (const char* m : bad) {
    SCOPED_TRACE(m);
    const std::string message = bad_input_message([&] { lock::evaluate_marker(m, env); });
    EXPECT_TRUE(has(message, "marker")) << message;
  }
  EXPECT_TRUE(has(bad_input_message([] { lock::check_marker("foo == 'x'"); }), "unknown variable 'foo'"));
  const std::string deep = std::string(200, '(') + "os_name == 'posix'" + std::string(200, ')');
  EXPECT_TRUE(has(bad_input_message([&] { lock::check_marker(deep); }), "parentheses nested deeper than 64"));
  const std::string ok = std::string(60, '(') + "os_name == 'posix'" + std::string(60, ')');
  EXPECT_TRUE(lock::evaluate_marker(ok, env));
}

TEST(MarkerEval, VersionSatisfies) {
  EXPECT_EQ(lock::version_satisfies("==2.10.0", "2.10.0+cpu"), true);
  EXPECT_EQ(lock::version_satisfies("==2.10.0+cpu", "2.10.0+cpu"), true);
  EXPECT_EQ(lock::version_satisfies("==2.10.0+cpu", "2.10.0"), false);
  EXPECT_EQ(lock::version_satisfies("==2.10.0+cpu", "2.10.0+cu130"), false);
  EXPECT_EQ(lock::version_satisfies("===2.10.0+CPU", "2.10.0+cpu"), true);
  EXPECT_EQ(lock::version_satisfies(">=3.10,<3.13", "3.12.4"), true);
  EXPECT_EQ(lock::version_satisfies("<3.13", "3.13.0rc1"), false);
  EXPECT_EQ(lock::version_satisfies(">=1", "not a version"), std::nullopt);
  EXPECT_EQ(lock::version_satisfies("=>1", "1.0"), std::nullopt);
}

// ---------------------------------------------------------------------------------------------------
// pick_wheel, against real db images

TEST(PickWheel, ChoosesTheWheelOfEachImage) {
  const lock::Lock l = pylock();
  const lock::Package& numpy = package(l, "numpy");
  const image::Image cuda = db().get("cuda13.0");
  const image::Image ascend = db().get("ascend-cann9");

  const lock::Pick on_cuda = lock::pick_wheel(numpy.wheels, numpy, cuda);
  ASSERT_NE(on_cuda.file, nullptr) << on_cuda.why;
  EXPECT_EQ(on_cuda.file, &numpy.wheels[0]);
  EXPECT_EQ(on_cuda.why, "");

  // ascend-cann9's glibc version is not published: a manylinux wheel's floor is a condition, not a refusal.
  const lock::Pick on_ascend = lock::pick_wheel(numpy.wheels, numpy, ascend);
  ASSERT_NE(on_ascend.file, nullptr) << on_ascend.why;
  EXPECT_EQ(on_ascend.file->filename, "numpy-2.1.0-cp312-cp312-manylinux_2_17_aarch64.manylinux2014_aarch64.whl");

  const lock::Package& torch = package(l, "torch");
  const lock::Pick torch_on_ascend = lock::pick_wheel(torch.wheels, torch, ascend);
  EXPECT_EQ(torch_on_ascend.file, nullptr);
  EXPECT_EQ(torch_on_ascend.why,
            "1 wheel, none for ascend-cann9 (aarch64, CPython 3.12, glibc version unknown): built for x86_64 "
            "(torch-2.10.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl)");
}

TEST(PickWheel, FollowsPipsPriority) {
  const image::Image cuda = db().get("cuda13.0");
  lock::Package p;
  p.name = "demo";
  p.version = "1.0";
  std::vector<lock::File> files = {
      wheel_file("demo-1.0-py3-none-any.whl"),
      wheel_file("demo-1.0-cp310-abi3-manylinux_2_17_x86_64.whl"),
      wheel_file("demo-1.0-cp312-abi3-manylinux_2_17_x86_64.whl"),
      wheel_file("demo-1.0-cp312-cp312-linux_x86_64.whl"),
      wheel_file("demo-1.0-cp312-cp312-musllinux_1_2_x86_64.whl"),  // glibc image: refused
      wheel_file("demo-1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
      wheel_file("demo-1.0-cp312-cp312-manylinux_2_28_x86_64.whl"),
      wheel_file("demo-1.0-cp312-cp312-manylinux_2_40_x86_64.whl"),  // glibc 2.39 < 2.40: refused
      wheel_file("demo-1.0-cp313-cp313-manylinux_2_28_x86_64.whl"),  // another Python: refused
  };
  auto picked = [&]() {
    const lock::Pick pick = lock::pick_wheel(files, p, cuda);
    return pick.file == nullptr ? "none: " + pick.why : pick.file->filename;
  };
  // The interpreter's own ABI, the newest manylinux it can load first.
  EXPECT_EQ(picked(), "demo-1.0-cp312-cp312-manylinux_2_28_x86_64.whl");
  files[6].yanked = true;  // yanked files last
  EXPECT_EQ(picked(), "demo-1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
  files.erase(files.begin() + 5);
  EXPECT_EQ(picked(), "demo-1.0-cp312-cp312-linux_x86_64.whl");  // linux_<arch> after every manylinux
  files.erase(files.begin() + 3);
  EXPECT_EQ(picked(), "demo-1.0-cp312-abi3-manylinux_2_17_x86_64.whl");  // yanked cp312-cp312 is last
  files.erase(files.begin() + 2);
  EXPECT_EQ(picked(), "demo-1.0-cp310-abi3-manylinux_2_17_x86_64.whl");  // a lower abi3
  files.erase(files.begin() + 1);
  EXPECT_EQ(picked(), "demo-1.0-py3-none-any.whl");
  files.erase(files.begin());
  EXPECT_EQ(picked(), "demo-1.0-cp312-cp312-manylinux_2_28_x86_64.whl");  // only the yanked one fits
  files.erase(files.begin() + 1);
  const std::string why = picked();
  EXPECT_TRUE(has(why, "none: 3 wheels, none for cuda13.0 (x86_64, CPython 3.12, glibc 2.39): ")) << why;
  EXPECT_TRUE(has(why, "(demo-1.0-cp312-cp312-musllinux_1_2_x86_64.whl)")) << why;
  EXPECT_TRUE(has(why, "needs glibc >= 2.40 (demo-1.0-cp312-cp312-manylinux_2_40_x86_64.whl)")) << why;
  EXPECT_TRUE(has(why, "built for CPython 3.13 (demo-1.0-cp313-cp313-manylinux_2_28_x86_64.whl)")) << why;
}

TEST(PickWheel, RequiresPythonOfTheFileElseThePackage) {
  const image::Image cuda = db().get("cuda13.0");
  lock::Package p;
  p.name = "demo";
  std::vector<lock::File> files = {wheel_file("demo-1.0-py3-none-any.whl")};
  EXPECT_NE(lock::pick_wheel(files, p, cuda).file, nullptr);
  p.requires_python = ">=3.13";
  const lock::Pick refused = lock::pick_wheel(files, p, cuda);
  EXPECT_EQ(refused.file, nullptr);
  EXPECT_TRUE(has(refused.why, "requires Python >=3.13 (demo-1.0-py3-none-any.whl)")) << refused.why;
  files[0].requires_python = ">=3.8";  // the file's own wins
  EXPECT_NE(lock::pick_wheel(files, p, cuda).file, nullptr);
}

TEST(PickWheel, SaysWhyWhenNoWheelFits) {
  const lock::Lock l = pylock();
  const image::Image cuda = db().get("cuda13.0");
  const lock::Package& numpy = package(l, "numpy");
  const std::vector<lock::File> foreign = {numpy.wheels[1], numpy.wheels[2]};  // aarch64, cp311
  const lock::Pick none = lock::pick_wheel(foreign, numpy, cuda);
  EXPECT_EQ(none.file, nullptr);
  EXPECT_EQ(none.why,
            "2 wheels, none for cuda13.0 (x86_64, CPython 3.12, glibc 2.39): built for aarch64 "
            "(numpy-2.1.0-cp312-cp312-manylinux_2_17_aarch64.manylinux2014_aarch64.whl); built for CPython 3.11 "
            "(numpy-2.1.0-cp311-cp311-manylinux_2_17_x86_64.whl)");

  const lock::Package& sdist = package(l, "sdist-only");
  const lock::Pick only_sdist = lock::pick_wheel(sdist.wheels, sdist, cuda);
  EXPECT_EQ(only_sdist.file, nullptr);
  EXPECT_EQ(only_sdist.why, "only an sdist (sdist_only-1.0.tar.gz): `--only-binary :all:` refuses it");

  const lock::Package& tool = package(l, "tool");
  EXPECT_EQ(lock::pick_wheel(tool.wheels, tool, cuda).why,
            "installed from a git checkout of https://github.com/example/tool at 0123abcd, not from a wheel");

  const lock::Package& win = package(l, "pywin32");
  const lock::Pick windows = lock::pick_wheel(win.wheels, win, cuda);
  EXPECT_EQ(windows.file, nullptr);
  EXPECT_TRUE(has(windows.why, "built for Windows")) << windows.why;
  EXPECT_FALSE(lock::evaluate_marker(win.marker, lock::marker_env(cuda, nullptr)));

  lock::Package with_sdist = numpy;
  with_sdist.sdist = lock::File{};
  with_sdist.sdist->filename = "numpy-2.1.0.tar.gz";
  const std::string both = lock::pick_wheel(foreign, with_sdist, cuda).why;
  EXPECT_TRUE(has(both, "; and the sdist (numpy-2.1.0.tar.gz): `--only-binary :all:` refuses it")) << both;

  const std::vector<lock::File> odd = {wheel_file("not-a-wheel.whl")};
  EXPECT_TRUE(has(lock::pick_wheel(odd, numpy, cuda).why, "not a wheel file name (not-a-wheel.whl)"));
}

// ---------------------------------------------------------------------------------------------------
// files_for: an index page's files of the pinned version

namespace {

index::File page_file(const std::string& filename, const std::string& sha256) {
  index::File f;
  f.filename = filename;
  f.url = "https://download.example/whl/" + filename;
  if (!sha256.empty()) f.hashes["sha256"] = sha256;
  return f;
}

index::ProjectPage torch_page() {
  index::ProjectPage page;
  page.name = "torch";
  page.url = "https://download.example/whl/torch/";
  page.format = "json";
  page.files = {
      page_file("torch-2.10.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl", k_sha_a),
      page_file("torch-2.10.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl", k_sha_b),
      page_file("torch-2.10.0-cp312-cp312-manylinux_2_28_aarch64.whl", k_sha_c),
      page_file("torch-2.9.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl", k_sha_d),
      page_file("torch-2.10.0.tar.gz", ""),
      page_file("torchvision-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl", k_sha_a),  // another project
      page_file("torch-2.10.0-py3.12.egg", k_sha_a),                                   // neither wheel nor sdist
      page_file("torch-2.10.0-garbage.whl", k_sha_a),                                  // no wheel name
  };
  page.files[0].size = 123;
  page.files[0].requires_python = ">=3.10";
  page.files[1].yanked = true;
  return page;
}

std::vector<std::string> names(const std::vector<lock::File>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.filename);
  return out;
}

}  // namespace

TEST(PickFilesFor, KeepsThePinnedVersionAndItsLocalLabels) {
  const index::ProjectPage page = torch_page();
  lock::Package p;
  p.name = "torch";
  p.version = "2.10.0";  // pylock: a version, no specifier
  EXPECT_EQ(names(lock::files_for(page, p)),
            (std::vector<std::string>{"torch-2.10.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl",
                                      "torch-2.10.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl",
                                      "torch-2.10.0-cp312-cp312-manylinux_2_28_aarch64.whl", "torch-2.10.0.tar.gz"}));

  p.version = "2.10.0+cpu";
  p.specifier = "==2.10.0+cpu";
  const std::vector<lock::File> cpu = lock::files_for(page, p);
  ASSERT_EQ(names(cpu), std::vector<std::string>{"torch-2.10.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl"});
  EXPECT_EQ(cpu[0].url, page.files[0].url);
  EXPECT_EQ(cpu[0].sha256(), k_sha_a);
  EXPECT_EQ(cpu[0].size, 123U);
  EXPECT_EQ(cpu[0].requires_python, ">=3.10");
  EXPECT_EQ(cpu[0].path, "");

  p.specifier = "===2.10.0+cu130";
  const std::vector<lock::File> cu = lock::files_for(page, p);
  ASSERT_EQ(cu.size(), 1U);
  EXPECT_TRUE(cu[0].yanked);

  lock::Package unpinned;
  unpinned.name = "Torch";
  EXPECT_EQ(lock::files_for(page, unpinned).size(), 5U);  // every torch wheel and sdist
}

TEST(PickFilesFor, KeepsOnlyTheHashesTheLockAllows) {
  const index::ProjectPage page = torch_page();
  lock::Package p;
  p.name = "torch";
  p.version = "2.10.0";
  p.specifier = "==2.10.0";
  p.hashes = {k_sha_b, k_sha_c, k_sha_d};  // 2.9.0's hash does not bring 2.9.0 back
  // files_for keeps the version's files; the hashes are weighed among the wheels for the image (pip's
  // filter_unallowed_hashes runs on its applicable candidates).
  EXPECT_EQ(names(lock::files_for(page, p)),
            (std::vector<std::string>{"torch-2.10.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl",
                                      "torch-2.10.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl",
                                      "torch-2.10.0-cp312-cp312-manylinux_2_28_aarch64.whl", "torch-2.10.0.tar.gz"}));
  // The picked file among them, for each image.
  const std::vector<lock::File> files = lock::files_for(page, p);
  const lock::Pick on_cuda = lock::pick_wheel(files, p, db().get("cuda13.0"));
  ASSERT_NE(on_cuda.file, nullptr) << on_cuda.why;
  EXPECT_EQ(on_cuda.file->filename, "torch-2.10.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl");  // yanked, but alone
  const lock::Pick on_ascend = lock::pick_wheel(files, p, db().get("ascend-cann9"));
  ASSERT_NE(on_ascend.file, nullptr) << on_ascend.why;
  EXPECT_EQ(on_ascend.file->filename, "torch-2.10.0-cp312-cp312-manylinux_2_28_aarch64.whl");
  // No wheel for the image has a listed hash: pip keeps them all and picks as ever; the file it picks then
  // fails the hash check (an integrity failure the environment says), it is not "no wheel".
  lock::Package other = p;
  other.hashes = {k_sha_d};
  const lock::Pick unlisted = lock::pick_wheel(files, other, db().get("cuda13.0"));
  ASSERT_NE(unlisted.file, nullptr) << unlisted.why;
  EXPECT_EQ(unlisted.file->filename, "torch-2.10.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl");
}

// pip's req_file.py (handle_option_line): a --find-links path relative to the requirements file's folder
// when that exists, else as written (from the working folder); only the first --find-links of a line.
TEST(LockRequirements, FindLinksAsPipReadsThem) {
  TempDir dir;
  dir.write("lock/lock/.keep", "");
  dir.write("lock/here/.keep", "");
  const std::string reqs = dir.write("lock/requirements.txt",
                                     "--find-links ./lock\n-f here -f lock\n-f ./elsewhere\n-f https://h/links/\n"
                                     "--find-links /abs/nowhere\nsix==1.16.0\n");
  const lock::Lock l = lock::load(reqs);
  ASSERT_EQ(l.packages.size(), 1U);
  EXPECT_EQ(l.packages[0].find_links, (std::vector<std::string>{dir.path() + "/lock/lock", dir.path() + "/lock/here",
                                                                "./elsewhere", "https://h/links/", "/abs/nowhere"}));
  EXPECT_TRUE(any_has(l.warnings, "requirements.txt:2: --find-links lock is ignored: pip reads only the first"));
  EXPECT_TRUE(any_has(l.warnings, "requirements.txt:3: --find-links ./elsewhere: neither " + dir.path() +
                                      "/lock/elsewhere (beside the requirements file) nor ./elsewhere (from the "
                                      "working folder) exists: pip ignores it"));
  EXPECT_TRUE(any_has(l.warnings, "requirements.txt:5: --find-links /abs/nowhere: /abs/nowhere does not exist"));
  // Not beside the file: as written, from the working folder (pip's fallback).
  const std::string only_cwd = dir.write("other/requirements.txt", "-f ./lock/lock\nsix==1.16.0\n");
  EXPECT_EQ(lock::load(only_cwd).packages[0].find_links, std::vector<std::string>{"./lock/lock"});
}

}  // namespace unity_test_lock
