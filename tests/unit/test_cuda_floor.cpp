// The driver floor read from what a member embeds, and the CUDA runtime table of an earlier minor of the
// same major (issue 59, part 5a). The members are built here: by nvcc (tests/cuda_support.hpp; the tests
// skip, saying why, where there is none) and by gcc against a stand-in libcudart.so.13.
//   - A library with the CUDA runtime linked statically (nvcc -cudart static, as NVIDIA links cuBLAS)
//     needs no libcudart.so.13, yet its cubins are CUDA 13's: its driver floor is CUDA 13's (>= 580).
//   - On an image whose CUDA 13.3 runtime has no export table, libcudart.so.13's symbols bind against
//     the db's CUDA 13.0 table, said so; a symbol that table lacks stays a condition.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cuda_support.hpp"
#include "support.hpp"
#include "wheelcheck/cuda.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::test {
namespace {

const char* k_kernel =
    "__global__ void add(float* a, const float* b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) a[i] += b[i];\n"
    "}\n"
    "extern \"C\" void launch(float* a, const float* b, int n) { add<<<(n + 255) / 256, 256>>>(a, b, n); }\n";

// An NVIDIA image on the db's CUDA 13.0 runtime layer with the given driver ("" unknown) and an A100.
image::Image cuda13_image(const TempDir& dir, const std::string& driver) {
  const std::string fact = driver.empty() ? R"({"value": "unknown", "note": "not described in this test"})"
                                          : R"({"value": ")" + driver + R"(", "note": "test"})";
  const std::string path = dir.file("cuda13-" + (driver.empty() ? std::string("unknown") : driver) + ".json");
  write_binary(path, R"({"schema": "wheelcheck-image/1", "name": "floor", "summary": "test image",
    "layers": ["ubuntu24.04", "cuda13.0-runtime", "python3.12"],
    "toolkit": {"kind": "cuda", "version": "13.0", "runtime_sonames": ["libcudart.so.13"]},
    "driver": )" + fact + R"(, "gpu_archs": {"value": "sm_80", "note": "test"}})");
  return image::Db(source_dir() + "/db").resolve(path);
}

std::vector<const verdict::Finding*> of_kind(const verdict::Report& r, verdict::FindingKind k) {
  std::vector<const verdict::Finding*> out;
  for (const auto& f : r.findings) {
    if (f.kind == k) out.push_back(&f);
  }
  return out;
}

bool mentions(const verdict::Finding& f, const std::string& text) {
  if (f.explanation.find(text) != std::string::npos || f.library.find(text) != std::string::npos) return true;
  return std::any_of(f.evidence.begin(), f.evidence.end(),
                     [&](const std::string& e) { return e.find(text) != std::string::npos; });
}

class CudaFloor : public ::testing::Test {
 protected:
  void SetUp() override {
    if (nvcc_path().empty()) GTEST_SKIP() << "no nvcc; " << k_cuda13_how;
    // The floor asserted is CUDA 13's: the library must be built by a CUDA 13 nvcc.
    if (nvcc_release_major() != 13)
      GTEST_SKIP() << nvcc_path() << " is not CUDA 13's nvcc (the floor asserted is 13's); " << k_cuda13_how;
    std::string error;
    m_static = nvcc_library("libstatic_rt.so", k_kernel, "-cudart static -gencode arch=compute_80,code=sm_80", error);
    if (m_static.empty()) FAIL() << error;
  }
  std::string m_static;
};

// The library itself: no libcudart.so.N need and no import of the runtime's registration function (the
// runtime is inside), SASS only, and cubins of CUDA 13's format.
TEST_F(CudaFloor, StaticRuntimeLeavesNoRuntimeNeed) {
  const auto file = cuda::read_file(m_static);
  const auto& bin = file.binary;
  for (const auto& n : bin.needed) EXPECT_EQ(n.rfind("libcudart", 0), std::string::npos) << n;
  for (const auto& s : bin.symbols) EXPECT_FALSE(!s.defined && s.name == "__cudaRegisterFatBinary");
  ASSERT_TRUE(file.fatbins.has_value());
  EXPECT_TRUE(file.fatbins->ptx().empty());  // no PTX: the floor cannot come from a PTX ISA
  ASSERT_TRUE(file.fatbins->newest_cubin.has_value());
  EXPECT_EQ(cuda::cubin_toolkit_major(*file.fatbins->newest_cubin), 13) << file.fatbins->newest_cubin->text();
}

TEST_F(CudaFloor, StaticRuntimeNeedsCuda13sDriver) {
  TempDir dir;
  const auto wheel = inspect_wheel(
      make_wheel(dir, "static_rt-1.0-py3-none-manylinux_2_28_x86_64.whl", {{"srt/libstatic_rt.so", m_static}}));

  const auto old = verdict::check(wheel, cuda13_image(dir, "535.104.05"));
  ASSERT_TRUE(old.driver.has_value());
  EXPECT_TRUE(cuda::driver_at_least(old.driver->version, "580")) << old.driver->version;
  EXPECT_EQ(old.driver->satisfied, std::optional<bool>(false));
  EXPECT_NE(old.driver->because.find("CUDA 13 runtime linked statically into srt/libstatic_rt.so"), std::string::npos)
      << old.driver->because;
  EXPECT_EQ(old.verdict, verdict::Verdict::Incompatible);
  const auto too_old = of_kind(old, verdict::FindingKind::DriverTooOld);
  ASSERT_EQ(too_old.size(), 1U);
  EXPECT_EQ(too_old[0]->severity, verdict::Severity::Error);
  EXPECT_EQ(too_old[0]->member, "srt/libstatic_rt.so");
  EXPECT_TRUE(mentions(*too_old[0], "linked statically")) << too_old[0]->explanation;
  EXPECT_TRUE(mentions(*too_old[0], "535.104.05")) << too_old[0]->explanation;

  const auto ok = verdict::check(wheel, cuda13_image(dir, "580.65.06"));
  ASSERT_TRUE(ok.driver.has_value());
  EXPECT_EQ(ok.driver->satisfied, std::optional<bool>(true));
  EXPECT_TRUE(of_kind(ok, verdict::FindingKind::DriverTooOld).empty());
  EXPECT_EQ(ok.verdict, verdict::Verdict::Compatible);

  // An unknown driver: one condition naming the floor, as for a runtime's.
  const auto unknown = verdict::check(wheel, cuda13_image(dir, ""));
  const auto cond = of_kind(unknown, verdict::FindingKind::Driver);
  ASSERT_EQ(cond.size(), 1U);
  EXPECT_EQ(cond[0]->severity, verdict::Severity::Condition);
  EXPECT_TRUE(cuda::driver_at_least(cond[0]->required_version, "580")) << cond[0]->required_version;
  EXPECT_EQ(unknown.verdict, verdict::Verdict::Unknown);
}

// A library that needs libcudart.so.13 has its floor from that runtime, said once: its cubins add no second
// floor of the same major.
TEST_F(CudaFloor, SharedRuntimeFloorIsNotRepeated) {
  std::string error;
  const auto shared =
      nvcc_library("libshared_rt.so", k_kernel, "-cudart shared -gencode arch=compute_80,code=sm_80", error);
  ASSERT_FALSE(shared.empty()) << error;
  TempDir dir;
  const auto wheel = inspect_wheel(
      make_wheel(dir, "shared_rt-1.0-py3-none-manylinux_2_28_x86_64.whl", {{"srt/libshared_rt.so", shared}}));
  const auto r = verdict::check(wheel, cuda13_image(dir, "535.104.05"));
  ASSERT_TRUE(r.driver.has_value());
  EXPECT_NE(r.driver->because.find("libcudart.so.13"), std::string::npos) << r.driver->because;
  for (const auto& n : r.driver->notes) EXPECT_EQ(n.find("cubin"), std::string::npos) << n;
  EXPECT_EQ(of_kind(r, verdict::FindingKind::DriverTooOld).size(), 1U);
}

// --- the CUDA runtime table of an earlier minor -------------------------------------------------------

// A member built with gcc against a stand-in libcudart.so.13 (its version node and two functions): one
// CUDA 13.0 exports (cudaMalloc), one no CUDA runtime does.
class LentRuntimeTable : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    const auto stub =
        build_shared(m_dir, "stub/libcudart.so.13", "cudart.c",
                     "int cudaMalloc(void** p, unsigned long n) { (void)p; (void)n; return 0; }\n"
                     "int wheelcheckFutureRuntimeApi(void) { return 0; }\n",
                     "-Wl,-soname,libcudart.so.13 -Wl,--version-script=" + version_script(), "gcc", &error);
    ASSERT_TRUE(stub) << error;
    const auto member = build_shared(m_dir, "libuses_rt.so", "uses.c",
                                     "int cudaMalloc(void**, unsigned long);\n"
                                     "int wheelcheckFutureRuntimeApi(void);\n"
                                     "int use(void** p) { return cudaMalloc(p, 16) + wheelcheckFutureRuntimeApi(); }\n",
                                     "-L" + m_dir.file("stub") + " -l:libcudart.so.13", "gcc", &error);
    ASSERT_TRUE(member) << error;
    m_wheel = inspect_wheel(
        make_wheel(m_dir, "uses_rt-1.0-py3-none-manylinux_2_28_x86_64.whl", {{"urt/libuses_rt.so", *member}}));
  }
  std::string version_script() {
    return m_dir.write("cudart.map",
                       "libcudart.so.13 { global: cudaMalloc; wheelcheckFutureRuntimeApi; local: *; };\n");
  }
  TempDir m_dir;
  WheelProfile m_wheel;
};

std::string fmt_notes(const std::vector<std::string>& notes) {
  std::string out;
  for (const auto& n : notes) out += n + "\n";
  return out;
}

// Which findings name a symbol.
std::vector<const verdict::Finding*> about(const verdict::Report& r, const std::string& symbol) {
  std::vector<const verdict::Finding*> out;
  for (const auto& f : r.findings) {
    if (f.symbol == symbol || mentions(f, symbol)) out.push_back(&f);
  }
  return out;
}

TEST_F(LentRuntimeTable, Cuda133BindsAgainstCuda130sTable) {
  const auto image = image::Db(source_dir() + "/db").get("flagos-runtime-nvidia-cuda13.3");
  ASSERT_TRUE(image.toolkit.has_value());
  ASSERT_EQ(image.toolkit->version.value, std::optional<std::string>("13.3"));
  const auto r = verdict::check(m_wheel, image);
  // cudaMalloc is in CUDA 13.0's table: bound, no condition for it.
  for (const auto* f : about(r, "cudaMalloc")) {
    EXPECT_FALSE(f->severity == verdict::Severity::Condition || f->severity == verdict::Severity::Error)
        << f->explanation;
  }
  // The runtime is said to be bound against 13.0's table, and why.
  const auto declared = of_kind(r, verdict::FindingKind::DeclaredLibrary);
  const auto lent = std::find_if(declared.begin(), declared.end(), [](const verdict::Finding* f) {
    return f->library == "libcudart.so.13" && mentions(*f, "bound against CUDA 13.0's libcudart.so.13 table") &&
           mentions(*f, "keeps its ABI within major 13");
  });
  ASSERT_NE(lent, declared.end());
  // And once for the whole answer, in its notes (the text prints it under the verdict).
  const std::string note =
      "libcudart.so.13: its symbols are bound against CUDA 13.0's libcudart.so.13 table (db layer cuda13.0-runtime)";
  EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& n) { return n.rfind(note, 0) == 0; }))
      << fmt_notes(r.notes);
  // A symbol 13.0 lacks stays a condition (13.3 may add it), not an error.
  const auto future = about(r, "wheelcheckFutureRuntimeApi");
  ASSERT_EQ(future.size(), 1U);
  EXPECT_EQ(future[0]->severity, verdict::Severity::Condition);
  EXPECT_EQ(future[0]->classification, verdict::Why::UnknownExports);
  EXPECT_TRUE(mentions(*future[0], "CUDA 13.0's")) << future[0]->explanation;
  EXPECT_NE(r.verdict, verdict::Verdict::Incompatible);
}

// The same member where CUDA 13.0's own runtime is the image's: its table is the whole truth there, so the
// symbol it lacks is an error; and a member of real CUDA runtime symbols is no longer unknown on 13.3.
TEST_F(LentRuntimeTable, OnCuda130TheTableIsTheRuntimesOwn) {
  const auto r = verdict::check(m_wheel, image::Db(source_dir() + "/db").get("cuda13.0"));
  const auto future = about(r, "wheelcheckFutureRuntimeApi");
  ASSERT_FALSE(future.empty());
  EXPECT_EQ(future[0]->severity, verdict::Severity::Error);
  EXPECT_EQ(r.verdict, verdict::Verdict::Incompatible);
}

TEST(CudaRuntimeTable, RealKernelIsNotUnknownOnCuda133) {
  std::string error;
  const std::string dir = kernel_dir(error);
  if (dir.empty()) GTEST_SKIP() << error;
  TempDir t;
  // sm_90 SASS: the H20 of the image runs it, so the runtime's symbols are what is left to decide.
  const auto wheel = inspect_wheel(make_wheel(t, "k_uncompressed-1.0-py3-none-manylinux_2_28_x86_64.whl",
                                              {{"k/libk_uncompressed.so", dir + "/libk_uncompressed.so"}}));
  const auto r = verdict::check(wheel, image::Db(source_dir() + "/db").get("flagos-runtime-nvidia-cuda13.3"));
  for (const auto& f : r.findings) {
    EXPECT_FALSE(f.severity == verdict::Severity::Condition && f.library.find("libcudart") != std::string::npos)
        << f.explanation;
  }
  EXPECT_NE(r.verdict, verdict::Verdict::Unknown) << (r.findings.empty() ? "" : r.findings.front().explanation);
}

}  // namespace
}  // namespace wheelcheck::test
