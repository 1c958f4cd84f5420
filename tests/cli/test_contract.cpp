// The command line's contract, as a person and a script meet it: JSON that always parses and has a
// schema, integrity that never passes quietly, mistakes named with the closest valid word, files and
// names that mean one thing, and -q / progress that behave the same in every command.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support.hpp"

namespace wheelcheck::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string wc(const std::string& args) {
  return shell_quote(binary_path()) + " " + args;
}

// The hello_native sample (samples/hello), built with the project: an extension module and its library.
std::string hello() {
  return fs::path(binary_path()).parent_path().string() + "/samples/hello_native-1.0-cp311-cp311-linux_x86_64.whl";
}

#define REQUIRE_HELLO() \
  if (!fs::exists(hello())) GTEST_SKIP() << "sample " << hello() << " not built (cmake --build build --target samples)"

// A wheel whose RECORD lists another hash for one member than the member has.
std::string tampered(const TempDir& dir) {
  const std::string py = dir.write("__init__.py", "print('hello')\n");
  return make_wheel(dir, "tampered-1.0-py3-none-any.whl", {{"tampered/__init__.py", py}},
                    {"--tamper", "tampered/__init__.py"});
}

// A file named like a wheel that is no zip at all.
std::string truncated(const TempDir& dir) {
  return dir.write("broken-1.0-py3-none-any.whl", "PK\x03\x04 not really a zip");
}

json parse_or_fail(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    ADD_FAILURE() << "stdout is not one JSON document (" << e.what() << "):\n" << text;
    return {};
  }
}

void expect_valid(const std::string& schema, const TempDir& dir, const std::string& name, const std::string& doc) {
  const std::string file = dir.write(name, doc);
  const auto v = validate_json(source_dir() + "/docs/" + schema, {file});
  EXPECT_EQ(v.exit_code, 0) << schema << ": " << v.out << v.err << "\n" << doc.substr(0, 2000);
}

// Every line a failing command writes on stderr is a "wheelcheck: error:" or "wheelcheck: warning:"
// line, or the usage line that follows an error of the command line.
void expect_error_lines(const std::string& err) {
  std::size_t at = 0;
  while (at < err.size()) {
    const auto nl = err.find('\n', at);
    const std::string line = err.substr(at, nl - at);
    const bool ok = line.rfind("wheelcheck: error: ", 0) == 0 || line.rfind("wheelcheck: warning: ", 0) == 0 ||
                    line.rfind("usage: wheelcheck", 0) == 0;
    EXPECT_TRUE(ok) << "stderr line: " << line;
    at = nl == std::string::npos ? err.size() : nl + 1;
  }
}

// ---------------------------------------------------------------------------------------------------
// JSON always parses, and every JSON output has a schema it validates against.

TEST(CliJson, InspectOfAGoodAndABadWheelIsACompleteArray) {
  REQUIRE_HELLO();
  SKIP_WITHOUT_JSONSCHEMA();
  TempDir dir;
  const auto r = run(wc("inspect --no-cache --json " + shell_quote(hello()) + " " + shell_quote(truncated(dir))));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const json doc = parse_or_fail(r.out);
  ASSERT_TRUE(doc.is_array()) << r.out.substr(0, 300);
  ASSERT_EQ(doc.size(), 2U);
  EXPECT_EQ(doc[0]["wheel"]["filename"], "hello_native-1.0-cp311-cp311-linux_x86_64.whl");
  // The same shape as a verdict's wheel: an object, its file name and the argument as given.
  EXPECT_EQ(doc[1]["wheel"]["given"], truncated(dir));
  EXPECT_EQ(doc[1]["wheel"]["filename"], "broken-1.0-py3-none-any.whl");
  EXPECT_EQ(doc[1]["error"]["kind"], "bad-input");
  EXPECT_EQ(doc[1]["error"]["exit_code"], 2);
  EXPECT_NE(doc[1]["error"]["message"].get<std::string>().find("not a zip"), std::string::npos);
  expect_valid("inspect.schema.json", dir, "inspect.json", r.out);
  expect_error_lines(r.err);

  // The bad one first, then the good one: the array is still closed, the good wheel still read.
  const auto r2 = run(wc("inspect --no-cache --json " + shell_quote(truncated(dir)) + " " + shell_quote(hello())));
  EXPECT_EQ(r2.exit_code, 2);
  const json doc2 = parse_or_fail(r2.out);
  ASSERT_EQ(doc2.size(), 2U);
  EXPECT_TRUE(doc2[0].contains("error"));
  EXPECT_TRUE(doc2[1].contains("members"));
}

TEST(CliJson, AFailureBeforeAnyWheelIsStillADocument) {
  REQUIRE_HELLO();
  SKIP_WITHOUT_JSONSCHEMA();
  TempDir dir;
  const auto one = run(wc("inspect --no-cache --json " + shell_quote(truncated(dir))));
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_TRUE(parse_or_fail(one.out).contains("error")) << one.out;
  expect_valid("inspect.schema.json", dir, "one.json", one.out);

  const auto size = run(wc("inspect --json --max-member-size lots " + shell_quote(hello())));
  EXPECT_EQ(size.exit_code, 2);
  EXPECT_EQ(parse_or_fail(size.out)["error"]["kind"], "usage") << size.out;
  expect_valid("inspect.schema.json", dir, "size.json", size.out);

  const auto image = run(wc(shell_quote(hello()) + " --json --image no-such-image"));
  EXPECT_EQ(image.exit_code, 2);
  EXPECT_EQ(parse_or_fail(image.out)["error"]["kind"], "usage") << image.out;
  expect_valid("verdict.schema.json", dir, "image.json", image.out);
}

TEST(CliJson, CheckOfAGoodAndABadWheelIsACompleteArray) {
  REQUIRE_HELLO();
  SKIP_WITHOUT_JSONSCHEMA();
  TempDir dir;
  const auto r =
      run(wc("--no-cache --json " + shell_quote(hello()) + " " + shell_quote(truncated(dir)) + " --image debian12"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const json doc = parse_or_fail(r.out);
  ASSERT_TRUE(doc.is_array());
  ASSERT_EQ(doc.size(), 2U);
  EXPECT_EQ(doc[0]["image"]["name"], "debian12");
  EXPECT_EQ(doc[1]["error"]["kind"], "bad-input");
  expect_valid("verdict.schema.json", dir, "check.json", r.out);
  expect_error_lines(r.err);
}

TEST(CliJson, GatesImagesAndExportsValidateAgainstTheirSchemas) {
  REQUIRE_HELLO();
  SKIP_WITHOUT_JSONSCHEMA();
  TempDir dir;
  const auto gates = run(wc("gates --no-cache --json " + shell_quote(hello()) + " --image debian12"));
  EXPECT_EQ(gates.exit_code, 0) << gates.err;
  EXPECT_EQ(parse_or_fail(gates.out)["schema"], "wheelcheck-gates/1");
  expect_valid("gates.schema.json", dir, "gates.json", gates.out);
  // --json and --format json are one thing.
  const auto format = run(wc("gates --no-cache --format json " + shell_quote(hello()) + " --image debian12"));
  EXPECT_EQ(format.out, gates.out);

  const auto images = run(wc("images --json"));
  EXPECT_EQ(images.exit_code, 0);
  const json list = parse_or_fail(images.out);
  ASSERT_TRUE(list.is_array());
  EXPECT_GT(list.size(), 100U);  // the db's images, the 127 packaging targets, the layers
  expect_valid("images.schema.json", dir, "images.json", images.out);

  // exports of a library built here, and of one of the db's export tables.
  std::string error;
  const auto lib =
      build_shared(dir, "libcontract.so", "c.c", "int contract_f(void) { return 1; }\n", "", "gcc", &error);
  ASSERT_TRUE(lib) << error;
  const auto exports = run(wc("exports --json -C " + shell_quote(*lib)));
  EXPECT_EQ(exports.exit_code, 0) << exports.err;
  const json table = parse_or_fail(exports.out);
  bool found = false;
  for (const auto& s : table["symbols"]) found = found || s["name"] == "contract_f";
  EXPECT_TRUE(found) << exports.out;
  expect_valid("exports.schema.json", dir, "exports.json", exports.out);
}

TEST(CliJson, ConflictingFlagsAreRefused) {
  REQUIRE_HELLO();
  const std::string h = shell_quote(hello());
  for (const std::string& args :
       {"gates --json --format sh " + h + " --image debian12", "gates --format text " + h + " --image debian12",
        h + " --json --format sh --image debian12", h + " --summary s.md --image debian12",
        "gates " + h + " --env-file e --format sh --image debian12",
        h + " --no-cache --cache-dir /tmp/x --image debian12", "inspect --no-cache --cache-dir /tmp/x " + h,
        "exports --json --count " + shell_quote(binary_path()), "exports -o t.gz --json " + shell_quote(binary_path()),
        h + " --image debian12 --image-env LD_LIBRARY_PATH=/x"}) {
    const auto r = run(wc(args));
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
    EXPECT_EQ(r.err.rfind("wheelcheck: error: ", 0), 0U) << args << "\n" << r.err;
  }
}

// ---------------------------------------------------------------------------------------------------
// Integrity never passes quietly: a wheel that fails its own RECORD is bad input for every command.

TEST(CliIntegrity, ATamperedWheelFailsEveryCommand) {
  SKIP_WITHOUT_JSONSCHEMA();
  TempDir dir;
  const std::string w = shell_quote(tampered(dir));

  const auto inspect = run(wc("inspect --no-cache " + w));
  EXPECT_EQ(inspect.exit_code, 2);
  EXPECT_NE(inspect.err.find("fails its own integrity check"), std::string::npos) << inspect.err;

  const auto check = run(wc("--no-cache " + w + " --image debian12"));
  EXPECT_EQ(check.exit_code, 2) << check.out;
  EXPECT_NE(check.err.find("wheelcheck: error: tampered-1.0-py3-none-any.whl fails its own integrity check"),
            std::string::npos)
      << check.err;
  EXPECT_NE(check.out.find("on debian12: INCOMPATIBLE"), std::string::npos) << check.out;
  EXPECT_NE(
      check.out.find("fails its own integrity: not what the wheel's RECORD says (hash-mismatch); do not pin it.\n\n"
                     "INCOMPATIBLE: 1 error, 1 condition, 0 warnings; exit 2\n"),
      std::string::npos)
      << check.out;

  const auto json_check = run(wc("--no-cache --json " + w + " --image debian12"));
  EXPECT_EQ(json_check.exit_code, 2);
  const json report = parse_or_fail(json_check.out);
  EXPECT_EQ(report["verdict"], "incompatible");
  EXPECT_EQ(report["exit_code"], 2) << "the report's exit_code is the command's";

  // Gates never fail open: the wheel cannot be vouched for, so every gate is off, the verdict is "error" and
  // the eval itself fails (a `set -e` setup script stops).
  const auto gates = run(wc("gates --no-cache " + w + " --image debian12"));
  EXPECT_EQ(gates.exit_code, 2);
  EXPECT_NE(gates.out.find("# ERROR: tampered-1.0-py3-none-any.whl fails its own integrity check"), std::string::npos)
      << gates.out;
  EXPECT_NE(gates.err.find("wheelcheck: error: tampered-1.0-py3-none-any.whl fails its own integrity check"),
            std::string::npos)
      << gates.err;
  EXPECT_NE(gates.out.find("export USE_TLE_DIST='0'"), std::string::npos) << "every gate of the rule set off";
  EXPECT_NE(gates.out.find("WHEELCHECK_VERDICT='error'"), std::string::npos) << gates.out;
  EXPECT_TRUE(gates.out.ends_with("(exit 2)\n")) << gates.out;
  const auto script =
      run("bash -c " + shell_quote("set -euo pipefail; eval \"$(" + wc("gates --no-cache " + w + " --image debian12") +
                                   ")\"; echo reached"));
  EXPECT_NE(script.exit_code, 0);
  EXPECT_EQ(script.out.find("reached"), std::string::npos) << script.out;

  const auto gates_json = run(wc("gates --no-cache --json " + w + " --image debian12"));
  EXPECT_EQ(gates_json.exit_code, 2);
  const json gj = parse_or_fail(gates_json.out);
  EXPECT_FALSE(gj["integrity"].empty()) << gates_json.out;
  EXPECT_EQ(gj["verdict"], "error") << gates_json.out;
  EXPECT_EQ(gj["gates"]["USE_TLE_DIST"], "0") << gates_json.out;
  expect_valid("gates.schema.json", dir, "gates.json", gates_json.out);
}

// ---------------------------------------------------------------------------------------------------
// Mistakes are named.

TEST(CliMistakes, AMistypedCommandOrOptionIsNamedWithTheClosest) {
  REQUIRE_HELLO();
  const auto cmd = run(wc("inspct " + shell_quote(hello())));
  EXPECT_EQ(cmd.exit_code, 2);
  EXPECT_NE(cmd.err.find("wheelcheck: error: unknown command `inspct`; did you mean `inspect`?"), std::string::npos)
      << cmd.err;

  const auto opt = run(wc(shell_quote(hello()) + " --imgae debian12"));
  EXPECT_EQ(opt.exit_code, 2);
  EXPECT_NE(opt.err.find("wheelcheck: error: unknown option `--imgae`; did you mean `--image`?"), std::string::npos)
      << opt.err;

  const auto sub = run(wc("inspect --jsno " + shell_quote(hello())));
  EXPECT_EQ(sub.exit_code, 2);
  EXPECT_NE(sub.err.find("unknown option `--jsno` for `inspect`; did you mean `--json`?"), std::string::npos)
      << sub.err;

  const auto gates = run(wc("gaets " + shell_quote(hello()) + " --image debian12"));
  EXPECT_NE(gates.err.find("did you mean `gates`?"), std::string::npos) << gates.err;

  for (const auto* r : {&cmd, &opt, &sub, &gates}) {
    EXPECT_TRUE(r->out.empty()) << r->out;
    expect_error_lines(r->err);
  }
}

TEST(CliMistakes, HelpIsACommand) {
  const auto top = run(wc("help"));
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("Subcommands:"), std::string::npos) << top.out;
  const auto inspect = run(wc("help inspect"));
  EXPECT_EQ(inspect.exit_code, 0);
  EXPECT_NE(inspect.out.find("--elf-reader"), std::string::npos) << inspect.out;
  const auto show = run(wc("help image show"));
  EXPECT_EQ(show.exit_code, 0);
  EXPECT_NE(show.out.find("probed as `--image DIR` is"), std::string::npos) << show.out;
  const auto typo = run(wc("help inspcet"));
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("did you mean `inspect`?"), std::string::npos) << typo.err;
}

TEST(CliMistakes, AMissingWheelIsOneLine) {
  for (const std::string& args : {"check", "check --image debian12", "--image debian12", "inspect", "gates"}) {
    const auto r = run(wc(args));
    EXPECT_EQ(r.exit_code, 2) << args;
    if (args == "gates") {
      // Gates fail closed: stdout holds every gate off and an eval that fails, never the help.
      EXPECT_NE(r.out.find("export WHEELCHECK_VERDICT='error'\n(exit 2)\n"), std::string::npos) << r.out;
      EXPECT_EQ(r.out.find("Usage"), std::string::npos) << r.out;
    } else {
      EXPECT_TRUE(r.out.empty()) << args << ": the help went to stdout:\n" << r.out;
    }
    EXPECT_EQ(r.err.rfind("wheelcheck: error: no wheel given\nusage: wheelcheck", 0), 0U) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << args << "\n" << r.err;
  }
  const auto missing = run(wc("no-such.whl --image debian12"));
  EXPECT_EQ(missing.exit_code, 2);
  // A wheel that is not there is that wheel's error (the others of a batch are still checked): one line.
  EXPECT_EQ(missing.err.rfind("wheelcheck: error: no such file: no-such.whl", 0), 0U) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
}

// ---------------------------------------------------------------------------------------------------
// Files and names.

TEST(CliNames, AMissingDescriptionFileIsNamedSo) {
  REQUIRE_HELLO();
  const auto r = run(wc(shell_quote(hello()) + " --image nonexist.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "wheelcheck: error: --image nonexist.json: no such file or folder\n");
  const auto dir = run(wc(shell_quote(hello()) + " --image ./no/such/root"));
  EXPECT_EQ(dir.err, "wheelcheck: error: --image ./no/such/root: no such file or folder\n");
}

TEST(CliNames, AFolderDoesNotShadowADbImageSilently) {
  REQUIRE_HELLO();
  TempDir dir;
  fs::create_directories(dir.file("debian12"));
  const auto r =
      run("cd " + shell_quote(dir.path()) + " && " + wc("--no-cache " + shell_quote(hello()) + " --image debian12"));
  EXPECT_NE(r.out.find("on debian12:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Debian 12 (bookworm)"), std::string::npos) << "the db image, not the empty folder\n" << r.out;
  EXPECT_NE(r.err.find("wheelcheck: warning: --image debian12 is the db image; the folder ./debian12 here is not read "
                       "(write ./debian12 for it)"),
            std::string::npos)
      << r.err;
  // ./debian12 is the folder: probed, an image with nothing in it.
  const auto folder =
      run("cd " + shell_quote(dir.path()) + " && " + wc("--no-cache " + shell_quote(hello()) + " --image ./debian12"));
  EXPECT_EQ(folder.out.find("Debian 12 (bookworm)"), std::string::npos) << folder.out;
  EXPECT_EQ(folder.err.find("warning"), std::string::npos) << folder.err;
}

TEST(CliNames, ImageShowProbesAFolderAsImageDoes) {
  TempDir dir;
  std::string error;
  fs::create_directories(dir.file("root/usr/lib"));
  const auto lib = build_shared(dir, "root/usr/lib/libshown.so.1", "s.c", "int shown(void) { return 1; }\n",
                                "-Wl,-soname,libshown.so.1", "gcc", &error);
  ASSERT_TRUE(lib) << error;
  const auto r = run(wc("image show --json " + shell_quote(dir.file("root"))));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const json im = parse_or_fail(r.out);
  bool found = false;
  for (const auto& l : im["libraries"]) found = found || l["soname"] == "libshown.so.1";
  EXPECT_TRUE(found) << r.out.substr(0, 2000);
  const auto text = run(wc("image show " + shell_quote(dir.file("root"))));
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("libshown.so.1"), std::string::npos) << text.out;
}

TEST(CliNames, ACacheDirThatCannotBeWrittenIsAnError) {
  REQUIRE_HELLO();
  TempDir dir;
  const std::string file = dir.write("not-a-folder", "x");
  for (const std::string& cmd : {"inspect " + shell_quote(hello()) + " --cache-dir " + shell_quote(file),
                                 shell_quote(hello()) + " --image debian12 --cache-dir " + shell_quote(file)}) {
    const auto r = run(wc(cmd));
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_EQ(r.err.rfind("wheelcheck: error: --cache-dir " + file + ": ", 0), 0U) << r.err;
  }
  // The default cache folder: a warning, and the wheel is read in full.
  const auto r =
      run("XDG_CACHE_HOME=" + shell_quote(file) + " WHEELCHECK_CACHE_DIR= " + wc("inspect " + shell_quote(hello())));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("wheelcheck: warning: the profile cache cannot be used"), std::string::npos) << r.err;
}

TEST(CliNames, ProgressOnlyOnATerminalAndQuietEverywhere) {
  REQUIRE_HELLO();
  TempDir dir;
  fs::create_directories(dir.file("root/usr/lib"));
  // stderr is a pipe here: no progress from any command, with or without -q.
  for (const std::string& cmd :
       {"probe --root " + shell_quote(dir.file("root")) + " --json", "inspect --no-cache " + shell_quote(hello()),
        "--no-cache " + shell_quote(hello()) + " --image debian12"}) {
    const auto r = run(wc(cmd));
    EXPECT_EQ(r.err, "") << cmd;
    const auto q = run(wc(cmd + " -q"));
    EXPECT_EQ(q.exit_code, r.exit_code) << cmd << " -q: " << q.err;
    EXPECT_EQ(q.out, r.out) << cmd;
  }
}

}  // namespace
}  // namespace wheelcheck::test
