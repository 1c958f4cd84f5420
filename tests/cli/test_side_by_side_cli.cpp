// Planned images and side by side through the command line: `wheelcheck images` marks the images the CI
// plans to move to (text and JSON, with their toolkit's minimum driver), and `wheelcheck WHEEL --image
// today,planned` prints the images side by side, a column each, then what changes between them; a comma
// list and a repeated --image are the same, a path with a comma is never split, and several wheels (or
// more than four images) keep the matrix.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "verdict_support.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_side_by_side_cli {

namespace fs = std::filesystem;
using namespace wheelcheck::test;
using nlohmann::json;

namespace {

std::string sample(const std::string& name) {
  return fs::path(binary_path()).parent_path().string() + "/samples/flagos/" + name;
}
const std::string k_flagcx_cuda = "flagcx-0.9.0+cu130-cp312-cp312-linux_x86_64.whl";
const std::string k_flagtree = "flagtree-0.6.1-cp312-cp312-linux_x86_64.whl";
const char* const k_planned[] = {"cuda13.3", "metax-maca3.8.1.3", "musa5.2", "gcu-tops1.9.10"};

std::string wc(const std::string& args) {
  return shell_quote(binary_path()) + " " + args;
}

// The line of `text` that starts with `label` (after spaces), or "".
std::string line_of(const std::string& text, const std::string& label) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (line.find_first_not_of(' ') != std::string::npos &&
        line.substr(line.find_first_not_of(' ')).rfind(label, 0) == 0)
      return line;
    start = end + 1;
  }
  return {};
}

}  // namespace

TEST(PlannedImagesCli, ImagesMarksThePlannedOnesWithWhatTheyWaitOn) {
  const auto r = run(wc("images"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto heading = r.out.find("Planned: images the CI plans to move to");
  ASSERT_NE(heading, std::string::npos) << r.out;
  // Today's images come first, the planned ones under the heading, each with what it waits on.
  EXPECT_LT(r.out.find("\n  cuda13.0 "), heading);
  EXPECT_LT(r.out.find("\n  ppu "), heading);
  for (const char* name : k_planned) EXPECT_GT(r.out.find(std::string("\n  ") + name + " "), heading) << name;
  EXPECT_NE(r.out.find("planned: waits on driver confirmation"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("toolkit's minimum driver: 610.43.02"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("toolkit's minimum driver: 580.65.06"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("toolkit's minimum driver: unknown (not published"), std::string::npos) << r.out;
  EXPECT_NE(line_of(r.out, "cuda13.3 ").find("cuda 13.3"), std::string::npos) << line_of(r.out, "cuda13.3 ");
  EXPECT_NE(line_of(r.out, "musa5.2 ").find("musa 5.2"), std::string::npos);
  EXPECT_NE(line_of(r.out, "metax-maca3.8.1.3 ").find("maca 3.8.1.3"), std::string::npos);
  EXPECT_NE(line_of(r.out, "gcu-tops1.9.10 ").find("tops 1.9.10"), std::string::npos);

  const auto j = run(wc("images --json"));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  std::map<std::string, json> by_name;
  for (const auto& e : json::parse(j.out)) by_name[e["name"].get<std::string>()] = e;
  for (const char* name : k_planned) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(by_name.count(name));
    EXPECT_EQ(by_name[name]["status"], "planned");
    EXPECT_NE(by_name[name]["planned_note"].get<std::string>().find("driver confirmation"), std::string::npos);
  }
  EXPECT_EQ(by_name["cuda13.3"]["toolkit"], "cuda 13.3");
  EXPECT_EQ(by_name["cuda13.3"]["driver_floor"], "610.43.02");
  EXPECT_EQ(by_name["musa5.2"]["driver_floor"], "unknown");
  EXPECT_EQ(by_name["cuda13.0"]["status"], "current");
  EXPECT_FALSE(by_name["cuda13.0"].contains("planned_note"));
  EXPECT_EQ(by_name["cuda13.0"]["driver_floor"], "580.65.06");
  EXPECT_EQ(by_name["debian12"]["driver_floor"], "-");
  if (python_with_jsonschema().empty()) {
    GTEST_SKIP() << "python3-jsonschema absent (scripts/install-deps.sh): images --json not validated";
  }
  TempDir d;
  const auto v = validate_json(source_dir() + "/docs/images.schema.json", {d.write("images.json", j.out)});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

TEST(SideBySideCli, OneWheelTwoImagesPrintsAColumnEachAndWhatChanges) {
  const std::string wheel = sample(k_flagcx_cuda);
  ASSERT_TRUE(fs::exists(wheel)) << wheel << " (built with the project)";
  const auto r = run(wc(shell_quote(wheel) + " --no-cache --image cuda13.0,cuda13.3"));
  // The CUDA 13.0 image has libcudart.so.13's export table; CUDA 13.3's is not in the db, and its symbols
  // bind against 13.0's (the runtime keeps its ABI within a major).
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  const std::string header = line_of(r.out, "cuda13.0");
  EXPECT_NE(header.find("cuda13.3 (planned)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wheel: " + k_flagcx_cuda), std::string::npos) << r.out;
  // Both unknown for the same reason: the driver, unknown on both.
  EXPECT_NE(line_of(r.out, "verdict").find("unknown"), std::string::npos) << r.out;
  // A long reason wraps within its column.
  const auto from = r.out.find("\nreason "), to = r.out.find("\ntoolkit ");
  ASSERT_LT(from, to) << r.out;
  const std::string reason = r.out.substr(from, to - from);
  EXPECT_NE(reason.find(">= 580.65.06 needed"), std::string::npos) << reason;
  EXPECT_EQ(reason.find("cudaGetDeviceCount"), std::string::npos) << reason;  // bound on CUDA 13.3 too
  for (const char* line : {"reason ", "toolkit ", "status ", "verdict "}) {
    EXPECT_LE(line_of(r.out, line).size(), 22U + 2 * 30U) << line;  // the label and two columns
  }
  EXPECT_NE(line_of(r.out, "toolkit ").find("cuda 13.0"), std::string::npos) << r.out;
  EXPECT_NE(line_of(r.out, "toolkit ").find("cuda 13.3"), std::string::npos) << r.out;
  const std::string floor = line_of(r.out, "toolkit driver floor");
  EXPECT_LT(floor.find("580.65.06"), floor.find("610.43.02")) << r.out;
  // The driver each needs: a version where the verdict names one, "—" where it names none.
  const std::string driver = line_of(r.out, "driver needed");
  ASSERT_FALSE(driver.empty()) << r.out;
  EXPECT_TRUE(driver.find(">= ") != std::string::npos || driver.find("—") != std::string::npos) << driver;
  EXPECT_NE(line_of(r.out, "image's driver").find("unknown"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cuda13.3 is planned: waits on driver confirmation"), std::string::npos) << r.out;
  // What changes: libcudart.so.13 is taken from CUDA 13.3's declaration (its symbols bound against 13.0's
  // table), in CUDA 13.3 only.
  const auto changes = r.out.find("What changes between them");
  ASSERT_NE(changes, std::string::npos) << r.out;
  const auto only = r.out.find("only in cuda13.3:", changes);
  ASSERT_NE(only, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("libcudart.so.13", only), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("only in cuda13.0:", changes), std::string::npos) << r.out;

  // --image given twice is the same as the comma list, byte for byte; so is a space after the comma.
  const auto twice = run(wc(shell_quote(wheel) + " --no-cache --image cuda13.0 --image cuda13.3"));
  EXPECT_EQ(twice.exit_code, r.exit_code);
  EXPECT_EQ(twice.out, r.out);
  const auto spaced = run(wc(shell_quote(wheel) + " --no-cache --image 'cuda13.0, cuda13.3'"));
  EXPECT_EQ(spaced.out, r.out);
  // JSON keeps today's array of reports, one per image, in the order given.
  const auto j = run(wc(shell_quote(wheel) + " --no-cache --image cuda13.0,cuda13.3 --json"));
  const auto arr = json::parse(j.out);
  ASSERT_EQ(arr.size(), 2U) << j.out;
  EXPECT_EQ(arr[0]["image"]["name"], "cuda13.0");
  EXPECT_EQ(arr[1]["image"]["name"], "cuda13.3");
  EXPECT_EQ(j.exit_code, r.exit_code);
}

TEST(SideBySideCli, RoutesAndGatesThatDifferAreNamed) {
  // FlagTree's libflagcx.so needs libcudart.so.12: present in the CUDA 12.4 sample image, absent in CUDA 13.0,
  // so its route is off (with its gates) in one column only.
  const std::string wheel = sample(k_flagtree);
  ASSERT_TRUE(fs::exists(wheel)) << wheel;
  const std::string cuda12 = source_dir() + "/samples/images/cuda12.4.json";
  ASSERT_TRUE(fs::exists(cuda12));
  const auto r = run(wc(shell_quote(wheel) + " --no-cache --image " + shell_quote(cuda12) + ",cuda13.0"));
  const auto changes = r.out.find("What changes between them");
  ASSERT_NE(changes, std::string::npos) << r.out << r.err;
  const auto only13 = r.out.find("only in cuda13.0:", changes);
  ASSERT_NE(only13, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("missing library libcudart.so.12", only13), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gate       USE_TLE_DIST=0", only13), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("route flagtree-tle-dist: on in cuda12.4-sample; off in cuda13.0 (triton/_C/libflagcx.so: "
                       "missing library libcudart.so.12)",
                       only13),
            std::string::npos)
      << r.out;
}

TEST(SideBySideCli, CommaRulesAndWhenTheMatrixStays) {
  const std::string wheel = sample(k_flagcx_cuda);
  ASSERT_TRUE(fs::exists(wheel)) << wheel;
  // A description file whose path holds a comma is taken whole, not split.
  TempDir d;
  const std::string img = image_file(d, "with,comma");
  const auto whole = run(wc(shell_quote(wheel) + " --no-cache --json --image " + shell_quote(img)));
  EXPECT_NE(whole.exit_code, 2) << whole.err;
  EXPECT_EQ(json::parse(whole.out)["image"]["name"], "with,comma") << whole.out;
  // An empty name in a list, or an unknown one, is a usage error.
  const auto empty = run(wc(shell_quote(wheel) + " --no-cache --image cuda13.0,,cuda13.3"));
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("an empty name in the list"), std::string::npos) << empty.err;
  EXPECT_EQ(run(wc(shell_quote(wheel) + " --no-cache --image cuda13.0,no-such-image")).exit_code, 2);
  // Several wheels keep the matrix.
  const auto two =
      run(wc(shell_quote(wheel) + " " + shell_quote(sample(k_flagtree)) + " --no-cache --image cuda13.0,cuda13.3"));
  EXPECT_NE(two.out.find("[2] "), std::string::npos) << two.out;
  EXPECT_EQ(two.out.find("What changes between them"), std::string::npos) << two.out;
  // So do more than four images for one wheel.
  const auto five = run(wc(shell_quote(wheel) + " --no-cache --image cuda13.0,cuda13.3,musa5.1,musa5.2,ppu"));
  EXPECT_NE(five.out.find("[1] " + k_flagcx_cuda), std::string::npos) << five.out;
  EXPECT_EQ(five.out.find("What changes between them"), std::string::npos) << five.out;
}

}  // namespace unity_test_side_by_side_cli
