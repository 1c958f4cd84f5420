// The coverage verdict on kernels nvcc builds here (tests/cuda_support.hpp): each test-built case in a
// wheel, checked against images that declare one GPU each, must fail exactly where NVIDIA's rules say
// no kernel image exists (the expectations below are written out by hand from those rules, not computed
// by the code under test); an image with unknown GPUs must give the condition naming the GPUs that would
// work; the driver a wheel needs must follow its PTX where only PTX serves the GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "cuda_support.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::test {
namespace {

const std::vector<std::string> k_gpus = {"sm_75",  "sm_80",  "sm_86",  "sm_89", "sm_90",
                                         "sm_100", "sm_103", "sm_120", "sm_121"};

// Where each case's code runs, from NVIDIA's rules: SASS on the same major at an equal or newer minor
// (`a`: that GPU only, `f`: its family), PTX on any GPU at or above it (`f`: the family only).
const std::map<std::string, std::set<std::string>>& expected_runs() {
  static const std::map<std::string, std::set<std::string>> m = {
      {"sm80", {"sm_80", "sm_86", "sm_89"}},
      {"sm80_ptx", {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_103", "sm_120", "sm_121"}},
      {"multi", {"sm_75", "sm_86", "sm_89", "sm_90"}},
      {"family", {"sm_100", "sm_103", "sm_120", "sm_121"}},
      {"ptx_only", {"sm_120", "sm_121"}},
      {"compressed", {"sm_89", "sm_90", "sm_100", "sm_103", "sm_120", "sm_121"}},
      {"uncompressed", {"sm_90", "sm_100", "sm_103", "sm_120", "sm_121"}},
      // .nv_fatbin: sm_80; loaded by the library itself: sm_75, sm_120 and compute_120.
      {"loaded", {"sm_75", "sm_80", "sm_86", "sm_89", "sm_120", "sm_121"}},
  };
  return m;
}

// An NVIDIA image on the db's CUDA 13.0 runtime layer, with its driver and GPUs as given ("" unknown).
image::Image cuda_image(const TempDir& dir, const std::string& driver, const std::string& gpus) {
  auto fact = [](const std::string& v) {
    return v.empty() ? std::string(R"({"value": "unknown", "note": "not described in this test"})")
                     : R"({"value": ")" + v + R"(", "note": "test"})";
  };
  const std::string path = dir.file("gpu.json");
  write_binary(path, R"({"schema": "wheelcheck-image/1", "name": "gpu", "summary": "test GPU image",
    "layers": ["ubuntu24.04", "cuda13.0-runtime", "python3.12"],
    "toolkit": {"kind": "cuda", "version": "13.0", "runtime_sonames": ["libcudart.so.13"]},
    "driver": )" + fact(driver) +
                         R"(, "gpu_archs": )" + fact(gpus) + "}");
  return image::Db(source_dir() + "/db").resolve(path);
}

std::vector<const verdict::Finding*> of_kind(const verdict::Report& r, verdict::FindingKind k) {
  std::vector<const verdict::Finding*> out;
  for (const auto& f : r.findings) {
    if (f.kind == k) out.push_back(&f);
  }
  return out;
}

class GpuCoverage : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    m_kernels = kernel_dir(error);
    if (m_kernels.empty()) GTEST_SKIP() << error;
  }
  WheelProfile wheel_of_case(const TempDir& dir, const KernelCase& c) const {
    const auto whl = make_wheel(dir, "k_" + c.name + "-1.0-py3-none-linux_x86_64.whl",
                                {{"k/libk_" + c.name + ".so", m_kernels + "/libk_" + c.name + ".so"}});
    return inspect_wheel(whl);
  }
  std::string m_kernels;
};

TEST_F(GpuCoverage, EveryCaseOnEveryDeclaredGpu) {
  TempDir dir;
  for (const auto& c : kernel_cases()) {
    const auto wheel = wheel_of_case(dir, c);
    const auto& runs = expected_runs().at(c.name);
    for (const auto& gpu : k_gpus) {
      SCOPED_TRACE(c.name + " (" + c.flags + ") on " + gpu);
      const auto r = verdict::check(wheel, cuda_image(dir, "610.43.02", gpu));
      const auto cov = of_kind(r, verdict::FindingKind::GpuCoverage);
      if (runs.count(gpu)) {
        EXPECT_TRUE(cov.empty()) << cov.front()->explanation;
      } else {
        ASSERT_EQ(cov.size(), 1U);
        EXPECT_EQ(cov[0]->severity, verdict::Severity::Error);
        EXPECT_EQ(cov[0]->required_version, gpu);
        EXPECT_EQ(cov[0]->member, "k/libk_" + c.name + ".so");
        EXPECT_NE(cov[0]->explanation.find("no kernel image is available"), std::string::npos);
        EXPECT_NE(cov[0]->fix.find("-gencode arch=compute_" + gpu.substr(3) + ",code=" + gpu), std::string::npos)
            << cov[0]->fix;
        EXPECT_EQ(r.verdict, verdict::Verdict::Incompatible);
      }
      // A known driver new enough for everything: no driver finding, and the need is satisfied.
      ASSERT_TRUE(r.driver.has_value());
      EXPECT_EQ(r.driver->satisfied, std::optional<bool>(true));
      EXPECT_TRUE(of_kind(r, verdict::FindingKind::Driver).empty());
    }
  }
}

TEST_F(GpuCoverage, UnknownGpusNameTheOnesThatWork) {
  TempDir dir;
  const std::map<std::string, std::vector<std::string>> must_name = {
      {"sm80", {"sm_80-sm_89 (SASS sm_80)"}},
      {"sm80_ptx", {"sm_80-sm_89 (SASS sm_80)", "any GPU from sm_80 up through PTX JIT (compute_80)"}},
      {"multi", {"sm_75-sm_79", "sm_86-sm_89", "sm_90a only"}},
      {"family", {"sm_100-sm_109 family", "sm_120-sm_129"}},
      {"ptx_only", {"any GPU from sm_120 up through PTX JIT (compute_120)"}},
      {"loaded",
       {"sm_75-sm_79 (SASS sm_75)", "sm_80-sm_89 (SASS sm_80)", "sm_120-sm_129 (SASS sm_120)",
        "any GPU from sm_120 up through PTX JIT (compute_120)"}},
  };
  for (const auto& c : kernel_cases()) {
    if (!must_name.count(c.name)) continue;
    SCOPED_TRACE(c.name);
    const auto r = verdict::check(wheel_of_case(dir, c), cuda_image(dir, "610.43.02", ""));
    const auto cov = of_kind(r, verdict::FindingKind::GpuCoverage);
    ASSERT_EQ(cov.size(), 1U);
    EXPECT_EQ(cov[0]->severity, verdict::Severity::Condition);
    EXPECT_EQ(cov[0]->explanation.rfind("holds only if the GPU is ", 0), 0U) << cov[0]->explanation;
    for (const auto& text : must_name.at(c.name)) EXPECT_NE(cov[0]->explanation.find(text), std::string::npos) << text;
    EXPECT_NE(r.verdict, verdict::Verdict::Compatible);
  }
}

// PTX the driver must JIT-compile sets the floor: PTX ISA 9.0 needs CUDA 13.0's driver.
TEST_F(GpuCoverage, PtxJitSetsTheDriverFloor) {
  TempDir dir;
  const auto& ptx_only = kernel_cases()[4];
  ASSERT_EQ(ptx_only.name, "ptx_only");
  const auto wheel = wheel_of_case(dir, ptx_only);
  // A CUDA 12.9 driver: too old for the CUDA 13 runtime and for PTX ISA 9.0.
  const auto old = verdict::check(wheel, cuda_image(dir, "575.51.03", "sm_120"));
  ASSERT_TRUE(old.driver.has_value());
  EXPECT_EQ(old.driver->version, "580.65.06");
  EXPECT_EQ(old.driver->satisfied, std::optional<bool>(false));
  const auto too_old = of_kind(old, verdict::FindingKind::DriverTooOld);
  ASSERT_EQ(too_old.size(), 2U);  // the runtime's floor and the PTX's
  bool ptx_named = false;
  for (const auto* f : too_old) ptx_named |= f->explanation.find("PTX ISA 9.0") != std::string::npos;
  EXPECT_TRUE(ptx_named);
  EXPECT_EQ(old.verdict, verdict::Verdict::Incompatible);
  // The driver unknown: one condition, with the floor and its reason.
  const auto unknown = verdict::check(wheel, cuda_image(dir, "", "sm_120"));
  const auto cond = of_kind(unknown, verdict::FindingKind::Driver);
  ASSERT_EQ(cond.size(), 1U);
  EXPECT_EQ(cond[0]->required_version, "580.65.06");
  EXPECT_FALSE(unknown.driver->satisfied.has_value());
  // JSON carries the same.
  const auto j = verdict::to_json(unknown);
  EXPECT_EQ(j["driver"]["needs"], "580.65.06");
  EXPECT_TRUE(j["driver"]["satisfied"].is_null());
}

// Read headers-only, a stored member's other sections are not fetched: a GPU that .nv_fatbin does not
// serve is then a condition on the code the library may load itself, never a certain failure.
TEST_F(GpuCoverage, HeadersOnlyMissesAreConditions) {
  TempDir dir;
  const auto it =
      std::find_if(kernel_cases().begin(), kernel_cases().end(), [](const KernelCase& c) { return !c.embed.empty(); });
  ASSERT_NE(it, kernel_cases().end());
  const auto whl = make_wheel(dir, "k-1.0-py3-none-linux_x86_64.whl",
                              {{"k/libk.so", m_kernels + "/libk_" + it->name + ".so"}}, {"--stored"});
  InspectOptions o;
  o.verify = Verify::Headers;
  const auto head = inspect_wheel(whl, o);
  // sm_120: served by the loaded code (full read), not by .nv_fatbin's sm_80 (headers-only).
  const auto full = verdict::check(inspect_wheel(whl), cuda_image(dir, "610.43.02", "sm_120"));
  EXPECT_TRUE(of_kind(full, verdict::FindingKind::GpuCoverage).empty());
  const auto r = verdict::check(head, cuda_image(dir, "610.43.02", "sm_120"));
  const auto cov = of_kind(r, verdict::FindingKind::GpuCoverage);
  ASSERT_EQ(cov.size(), 1U);
  EXPECT_EQ(cov[0]->severity, verdict::Severity::Condition);
  EXPECT_NE(cov[0]->explanation.find("Unless GPU code the library loads itself serves sm_120"), std::string::npos)
      << cov[0]->explanation;
  // sm_86: .nv_fatbin's sm_80 serves it in either read.
  EXPECT_TRUE(
      of_kind(verdict::check(head, cuda_image(dir, "610.43.02", "sm_86")), verdict::FindingKind::GpuCoverage).empty());
}

TEST_F(GpuCoverage, ToolkitDroppedArchitecturesAreSaid) {
  TempDir dir;
  const auto r = verdict::check(wheel_of_case(dir, kernel_cases()[1]), cuda_image(dir, "610.43.02", "sm_70,sm_80"));
  const auto dropped = of_kind(r, verdict::FindingKind::GpuArchDropped);
  ASSERT_EQ(dropped.size(), 1U);
  EXPECT_EQ(dropped[0]->required_version, "sm_70");
  EXPECT_NE(dropped[0]->explanation.find("CUDA 13 no longer supports sm_70"), std::string::npos);
  // sm_80 SASS does not run on sm_70 and its PTX is newer: no kernel image there either.
  const auto cov = of_kind(r, verdict::FindingKind::GpuCoverage);
  ASSERT_EQ(cov.size(), 1U);
  EXPECT_EQ(cov[0]->required_version, "sm_70");
}

}  // namespace
}  // namespace wheelcheck::test

namespace wheelcheck::test {
namespace {

// What the command prints for machines: inspect's members[].cuda and the verdict's driver, both valid
// against their schemas, and the text that people read.
TEST_F(GpuCoverage, JsonAndTextOfTheCommand) {
  if (python_with_jsonschema().empty()) GTEST_SKIP() << "no Python jsonschema to validate against";
  TempDir dir;
  const auto whl =
      make_wheel(dir, "kern-1.0-py3-none-linux_x86_64.whl", {{"k/libk_family.so", m_kernels + "/libk_family.so"}});
  const auto bin = shell_quote(binary_path());
  const auto cache = "WHEELCHECK_CACHE_DIR=" + shell_quote(dir.file("cache")) + " ";
  const auto inspect = run(cache + bin + " inspect --json " + shell_quote(whl));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  write_binary(dir.file("inspect.json"), inspect.out);
  const auto doc = nlohmann::json::parse(inspect.out);
  EXPECT_EQ(doc["members"][0]["cuda"]["sass"], nlohmann::json::array({"sm_100f", "sm_120"}));
  EXPECT_EQ(doc["members"][0]["cuda"]["ptx"], nlohmann::json::array({"compute_100f"}));
  EXPECT_EQ(doc["members"][0]["cuda"]["newest_ptx_isa"], "9.0");
  const auto text = run(cache + bin + " inspect " + shell_quote(whl));
  EXPECT_NE(text.out.find("cuda      SASS sm_100f sm_120, PTX compute_100f (PTX ISA 9.0)"), std::string::npos)
      << text.out;
  write_binary(dir.file("img.json"), R"({"schema": "wheelcheck-image/1", "name": "b200", "summary": "test",
    "layers": ["ubuntu24.04", "cuda13.0-runtime", "python3.12"],
    "toolkit": {"kind": "cuda", "version": "13.0", "runtime_sonames": ["libcudart.so.13"]},
    "driver": "580.95.05", "gpu_archs": "sm_90,sm_103"})");
  const auto check =
      run(cache + bin + " " + shell_quote(whl) + " --image " + shell_quote(dir.file("img.json")) + " --json");
  EXPECT_EQ(check.exit_code, 1) << check.err;  // sm_90: no kernel image
  write_binary(dir.file("verdict.json"), check.out);
  const auto v = nlohmann::json::parse(check.out);
  EXPECT_EQ(v["driver"]["needs"], "580.65.06");
  EXPECT_EQ(v["driver"]["satisfied"], true);
  bool sm90 = false;
  for (const auto& f : v["findings"]) sm90 |= f["kind"] == "gpu-coverage" && f["required_version"] == "sm_90";
  EXPECT_TRUE(sm90) << check.out;
  const auto valid = validate_json(source_dir() + "/docs/inspect.schema.json", {dir.file("inspect.json")});
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
  const auto valid2 = validate_json(source_dir() + "/docs/verdict.schema.json", {dir.file("verdict.json")});
  EXPECT_EQ(valid2.exit_code, 0) << valid2.out << valid2.err;
}

}  // namespace
}  // namespace wheelcheck::test
