// The verdict through the command line, on wheels and image roots built at test time from C/C++ sources:
// a version the provider lacks in an image given as a root folder, the pre-C++11 std::string ABI, a
// changed parameter list on the first screen, the JSON report with its exit code and its schema, matrices
// over the db's images and packaging targets, and usage errors.
#include <filesystem>
#include <map>
#include <sstream>

#include "support.hpp"
#include "verdict_support.hpp"
#include "wheelcheck/image.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_verdict_cli {

namespace fs = std::filesystem;
using namespace wheelcheck;
using namespace wheelcheck::test;
using nlohmann::json;
using wheelcheck::test::run;  // not the namespace wheelcheck::run (a unity batch may have its header)

namespace {

// A root: this machine's glibc and libstdc++ laid out as Debian does, Python 3.12, and the providers.
struct ImageRoot {
  TempDir dir;
  std::string root() const { return dir.file("root"); }
  std::string lib() const { return root() + "/usr/lib/x86_64-linux-gnu"; }
  ImageRoot() {
    const std::string r = root();
    fs::create_directories(lib());
    fs::create_directories(r + "/usr/bin");
    fs::create_directories(r + "/usr/lib/python3.12/site-packages");
    fs::create_directories(r + "/etc");
    fs::create_symlink("usr/lib", r + "/lib");
    for (const char* so : {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2", "libstdc++.so.6"}) {
      fs::copy_file(fs::canonical(std::string("/usr/lib/x86_64-linux-gnu/") + so), lib() + "/" + so);
    }
    fs::create_directories(r + "/lib64");
    fs::create_symlink("/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", r + "/lib64/ld-linux-x86-64.so.2");
    write_binary(r + "/usr/bin/python3.12", "");
    write_binary(r + "/etc/ld.so.conf", "/usr/lib/x86_64-linux-gnu\n");
  }
  void provide(const std::string& built, const std::string& soname) const {
    fs::copy_file(built, lib() + "/" + soname);
  }
  void ldconfig() const { EXPECT_EQ(run("ldconfig -X -r " + shell_quote(root())).exit_code, 0); }
};

bool have_root_tools() {
  return have_program("ldconfig") && fs::exists("/usr/lib/x86_64-linux-gnu/libc.so.6");
}

}  // namespace

TEST(Verdict, VersionTheProviderLacksAndTheImageAsARootFolder) {
  if (!have_root_tools()) GTEST_SKIP() << "needs ldconfig and this machine's glibc";
  ImageRoot img;
  TempDir b;
  // The image's libver.so.1 defines VERS_1; the wheel was linked against a newer one defining VERS_2.
  b.write("old.map", "VERS_1 { global: foo; local: *; };\n");
  b.write("new.map", "VERS_1 { global: foo; local: *; };\nVERS_2 { global: bar; } VERS_1;\n");
  const std::string old_lib = build(b, "libver.so.1", "int foo(void) { return 1; }\n",
                                    "-Wl,-soname,libver.so.1 -Wl,--version-script," + b.file("old.map"));
  img.provide(old_lib, "libver.so.1");
  img.ldconfig();
  TempDir nb;
  nb.write("new.map", "VERS_1 { global: foo; local: *; };\nVERS_2 { global: bar; } VERS_1;\n");
  build(nb, "libver.so", "int foo(void) { return 1; }\nint bar(void) { return 2; }\n",
        "-Wl,-soname,libver.so.1 -Wl,--version-script," + nb.file("new.map"));
  TempDir w;
  const std::string wheel =
      wheel_of(w, "v-1.0-cp312-cp312-linux_x86_64.whl",
               {{"v/_v.cpython-312-x86_64-linux-gnu.so", "int bar(void);\nint PyInit__v(void) { return bar(); }\n",
                 "-L" + nb.path() + " -lver"}});
  const auto r = run(shell_quote(binary_path()) + " " + shell_quote(wheel) + " --no-cache --image " +
                     shell_quote(img.root()) + " --json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "incompatible");
  bool found = false;
  for (const auto& f : j["findings"]) {
    if (f["kind"] == "missing-version") {
      found = true;
      EXPECT_EQ(f["library"], "libver.so.1");
      EXPECT_EQ(f["required_version"], "VERS_2");
      EXPECT_EQ(f["classification"], "version-too-new");
      EXPECT_EQ(f["member"], "v/_v.cpython-312-x86_64-linux-gnu.so");
      EXPECT_EQ(f["candidates"], json::array({"VERS_1"}));
    }
  }
  EXPECT_TRUE(found) << r.out;
  // The resolution of libver.so.1 went through the root's real ld.so.cache.
  EXPECT_NE(r.out.find("\"rule\": \"ld.so.cache\""), std::string::npos);
}

TEST(Verdict, OldAbiStringAgainstANewAbiProvider) {
  if (!have_root_tools()) GTEST_SKIP() << "needs ldconfig and this machine's glibc";
  ImageRoot img;
  TempDir b;
  const std::string provider =
      build(b, "libgreet.so.1",
            "#include <string>\n#include <list>\nint greet(const std::string& s) { return (int)s.size(); }\n"
            "int count(const std::list<int>& l) { return (int)l.size(); }\n",
            "-Wl,-soname,libgreet.so.1", "g++");
  img.provide(provider, "libgreet.so.1");
  img.ldconfig();
  // The wheel was built where libgreet had the old ABI (as wheels built against pre-2.7 PyTorch were).
  TempDir w;
  build(w, "libgreet.so",
        "#include <string>\n#include <list>\nint greet(const std::string& s) { return (int)s.size(); }\n"
        "int count(const std::list<int>& l) { return (int)l.size(); }\n",
        "-D_GLIBCXX_USE_CXX11_ABI=0 -Wl,-soname,libgreet.so.1", "g++");
  const std::string wheel = wheel_of(
      w, "g-1.0-cp312-cp312-linux_x86_64.whl",
      {{"g/_g.cpython-312-x86_64-linux-gnu.so",
        "#include <string>\n#include <list>\nint greet(const std::string& s);\nint count(const std::list<int>& l);\n"
        "extern \"C\" int PyInit__g(void) { std::list<int> l; return greet(\"x\") + count(l); }\n",
        "-D_GLIBCXX_USE_CXX11_ABI=0 -lgreet", "g++"}});
  const auto r = run(shell_quote(binary_path()) + " " + shell_quote(wheel) + " --no-cache --image " +
                     shell_quote(img.root()) + " --json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto j = json::parse(r.out);
  std::map<std::string, json> by_symbol;
  for (const auto& f : j["findings"]) {
    if (f["kind"] == "missing-symbol") by_symbol[f["demangled"]] = f;
  }
  ASSERT_TRUE(by_symbol.count("greet(std::string const&)")) << r.out;
  const auto& g = by_symbol["greet(std::string const&)"];
  EXPECT_EQ(g["classification"], "cxx-abi-mismatch");
  EXPECT_EQ(g["candidates"][0],
            "greet(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)");
  EXPECT_NE(g["explanation"].get<std::string>().find("_GLIBCXX_USE_CXX11_ABI"), std::string::npos) << g.dump(2);
  ASSERT_TRUE(by_symbol.count("count(std::list<int, std::allocator<int> > const&)")) << r.out;
  EXPECT_EQ(by_symbol["count(std::list<int, std::allocator<int> > const&)"]["classification"], "cxx-abi-mismatch");
}

TEST(Verdict, ChangedParameterListIsExplainedWithBothSignatures) {
  if (!have_root_tools()) GTEST_SKIP() << "needs ldconfig and this machine's glibc";
  ImageRoot img;
  TempDir b;
  const std::string now = build(b, "liblog.so.1",
                                "namespace ns { struct Loc { const char* f; int l; };\n"
                                "struct Logger { Logger(Loc, int, bool); };\n"
                                "Logger::Logger(Loc, int, bool) {} }\n",
                                "-Wl,-soname,liblog.so.1", "g++");
  img.provide(now, "liblog.so.1");
  img.ldconfig();
  TempDir old;
  build(
      old, "liblog.so",
      "namespace ns { struct Logger { Logger(const char*, int, int); };\nLogger::Logger(const char*, int, int) {} }\n",
      "-Wl,-soname,liblog.so.1", "g++");
  TempDir w;
  const std::string wheel =
      wheel_of(w, "l-1.0-cp312-cp312-linux_x86_64.whl",
               {{"l/_l.cpython-312-x86_64-linux-gnu.so",
                 "namespace ns { struct Logger { Logger(const char*, int, int); }; }\n"
                 "extern \"C\" int PyInit__l(void) { ns::Logger g(\"f\", 1, 2); (void)g; return 0; }\n",
                 "-L" + old.path() + " -llog", "g++"}});
  const auto r =
      run(shell_quote(binary_path()) + " " + shell_quote(wheel) + " --no-cache --image " + shell_quote(img.root()));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  // The first screen says what is missing, where, what is there instead, and what would fix it.
  std::string first;
  std::stringstream ss(r.out);
  std::string line;
  for (int i = 0; i < 24 && std::getline(ss, line); ++i) first += line + "\n";
  EXPECT_NE(first.find("l/_l.cpython-312-x86_64-linux-gnu.so"), std::string::npos) << first;
  EXPECT_NE(first.find("ns::Logger::Logger(char const*, int, int)"), std::string::npos) << first;
  EXPECT_NE(first.find("signature-changed"), std::string::npos) << first;
  EXPECT_NE(first.find("ns::Logger::Logger(ns::Loc, int, bool)"), std::string::npos) << first;
  EXPECT_NE(first.find("fix:"), std::string::npos) << first;
}

TEST(Verdict, JsonCarriesTheSchemaAndTheExitCodeMatches) {
  TempDir d;
  const std::string img = image_file(d, "img");
  const std::string sample =
      fs::path(binary_path()).parent_path().string() + "/samples/hello_native-1.0-cp311-cp311-linux_x86_64.whl";
  ASSERT_TRUE(fs::exists(sample));
  const auto r =
      run(shell_quote(binary_path()) + " " + shell_quote(sample) + " --image " + shell_quote(img) + " --json");
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "wheelcheck-verdict/1");
  const std::map<std::string, int> codes = {
      {"compatible", 0}, {"incompatible", 1}, {"degraded", 3}, {"unknown", 4}, {"not-targeted", 1}};
  ASSERT_TRUE(codes.count(j["verdict"].get<std::string>())) << j["verdict"];
  EXPECT_EQ(r.exit_code, codes.at(j["verdict"].get<std::string>()));
  EXPECT_EQ(j["exit_code"], r.exit_code);
  // cp311 in a Python 3.12 image: not for it (the Python tag), and exit 1 as an incompatible wheel.
  EXPECT_EQ(j["verdict"], "not-targeted");
  EXPECT_FALSE(j["targeted"].get<bool>());
  EXPECT_NE(j["not_targeted"].get<std::string>().find("cp311"), std::string::npos) << j["not_targeted"];
  for (const char* key : {"verdict", "image", "wheel", "findings", "conditions", "routes", "members", "notes"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const auto& f : j["findings"]) {
    for (const char* key : {"kind", "severity", "member", "library", "symbol", "demangled", "required_version",
                            "explanation", "evidence"}) {
      EXPECT_TRUE(f.contains(key)) << key;
    }
  }
  // A matrix: every db image (the packaging targets are named or matched), one report each.
  const auto all = run(shell_quote(binary_path()) + " " + shell_quote(sample) + " --image all --json");
  const auto arr = json::parse(all.out);
  EXPECT_EQ(arr.size(), image::Db(source_dir() + "/db").file_image_names().size());
  const auto pattern =
      run(shell_quote(binary_path()) + " " + shell_quote(sample) + " --image 'manylinux_2_2?_aarch64' --json");
  const auto targets = json::parse(pattern.out);
  ASSERT_EQ(targets.size(), 4U) << pattern.out;  // manylinux_2_24, _2_26, _2_27, _2_28
  for (const auto& t : targets) EXPECT_EQ(t["findings"][0]["kind"], "policy-machine") << t.dump(2);
  EXPECT_EQ(run(shell_quote(binary_path()) + " " + shell_quote(sample) + " --image 'nothing_*'").exit_code, 2);
  const auto text = run(shell_quote(binary_path()) + " check " + shell_quote(sample) + " --image all");
  EXPECT_NE(text.out.find("cuda13.0"), std::string::npos) << text.out;
  // Usage errors are exit 2.
  EXPECT_EQ(run(shell_quote(binary_path()) + " " + shell_quote(sample)).exit_code, 2);
  EXPECT_EQ(run(shell_quote(binary_path()) + " " + shell_quote(sample) + " --image no-such-image").exit_code, 2);
}

// What `--json` prints validates against docs/verdict.schema.json, for every db image.
TEST(VerdictSchema, EveryOutputValidates) {
  if (python_with_jsonschema().empty()) GTEST_SKIP() << "python3-jsonschema absent: run scripts/install-deps.sh";
  const std::string sample =
      fs::path(binary_path()).parent_path().string() + "/samples/hello_native-1.0-cp311-cp311-linux_x86_64.whl";
  // Every db image, and packaging targets of two families (a policy verdict's report has the same shape).
  const auto all = run(shell_quote(binary_path()) + " " + shell_quote(sample) +
                       " --image all --image 'manylinux_2_*_x86_64' --image 'musllinux_*_x86_64' --json");
  TempDir d;
  std::vector<std::string> files;
  for (const auto& report : json::parse(all.out)) {
    files.push_back(d.write(report["image"]["name"].get<std::string>() + ".json", report.dump()));
  }
  ASSERT_GE(files.size(), 25U);
  // A report with routes (the FlagGems sample and its rule set).
  const std::string gems = fs::path(binary_path()).parent_path().string() +
                           "/samples/flagos/flag_gems_cpp_cuda-5.4.0-cp312-cp312-linux_x86_64.whl";
  if (fs::exists(gems)) {
    const auto r = run(shell_quote(binary_path()) + " " + shell_quote(gems) + " --image cuda13.0 --json");
    EXPECT_NE(r.out.find("\"routes\": [\n    {"), std::string::npos) << r.out.substr(0, 2000);
    files.push_back(d.write("gems.json", r.out));
  }
  const auto v = validate_json(source_dir() + "/docs/verdict.schema.json", files);
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

}  // namespace unity_test_verdict_cli
