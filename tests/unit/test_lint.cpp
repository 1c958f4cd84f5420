// The publisher check's parts (include/wheelcheck/lint.hpp, inspector/lint/): Requires-Dist read as installers
// read it, what pins a release, and the checks on profiles made here (the ELF facts a reader would give).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "inspector/lint/lint_detail.hpp"
#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/lint.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/wheel.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_lint {

using namespace wheelcheck;
using wheelcheck::test::TempDir;

TEST(Lint, RequirementsAreReadAsPep508) {
  const auto ok = lock::read_requirement("torch (>=2.6,<2.7) ; platform_machine == 'x86_64'");
  EXPECT_TRUE(ok.error.empty()) << ok.error;
  EXPECT_EQ(ok.normalized, "torch");
  EXPECT_EQ(ok.specifier, ">=2.6,<2.7");
  EXPECT_FALSE(ok.extra_only);
  EXPECT_TRUE(lock::read_requirement("Flash_Attn[dev]>=2; extra == \"cuda\"").extra_only);
  EXPECT_EQ(lock::read_requirement("Flash_Attn[dev]>=2").normalized, "flash-attn");
  EXPECT_EQ(lock::read_requirement("Flash_Attn[dev]>=2").name, "Flash_Attn");
  EXPECT_TRUE(lock::read_requirement("pkg @ https://example.org/pkg.whl").url);
  for (const char* bad : {"torch (>=2.6", "numpy >> 2", "(torch)", "x; python_version >>> '3'", "x[dev"}) {
    EXPECT_FALSE(lock::read_requirement(bad).error.empty()) << bad;
  }
}

TEST(Lint, WhatPinsOneRelease) {
  for (const char* pinned : {"==2.10.*", "==2.10.0", ">=2.10,<2.11", "~=2.10.0", "===2.10.0+cu130"}) {
    EXPECT_TRUE(lint::detail::pins_a_release(pinned)) << pinned;
  }
  for (const char* loose : {"", ">=2.6", "~=2.10", ">=2.6,<3", "!=2.9.0", "==2.*"}) {
    EXPECT_FALSE(lint::detail::pins_a_release(loose)) << loose;
  }
}

// A profile with one x86_64 shared library member needing `needed` and leaving `undefined` undefined.
WheelProfile profile(const std::string& filename, const std::vector<std::string>& needed,
                     const std::vector<std::string>& undefined, const std::vector<std::string>& requires_dist = {}) {
  WheelProfile p;
  p.filename = wheel::parse_filename(filename);
  p.metadata.metadata_version = "2.1";
  p.metadata.name = p.filename.name;
  p.metadata.version = p.filename.version;
  p.metadata.requires_dist = requires_dist;
  MemberProfile m;
  m.path = "pkg/libpkg.so";
  elf::Binary b;
  b.type = elf::FileType::Shared;
  b.machine = 62;  // EM_X86_64
  b.soname = "libpkg.so";
  b.gnu_stack = 6;  // PT_GNU_STACK RW, as the linker writes it (without one, x86_64's stack is executable: exec-stack)
  b.needed = needed;
  b.has_dynamic = true;
  for (const auto& u : undefined) {
    elf::Symbol s;
    s.name = u;
    s.defined = false;
    b.symbols.push_back(s);
  }
  m.elf = b;
  p.members.push_back(m);
  p.member_count = 1;
  return p;
}

std::vector<toolkit::Provider> providers() {
  toolkit::Provider torch;
  torch.distributions = {"torch"};
  torch.kind = "package";
  torch.libraries = {"libc10.so", "libtorch_cpu.so"};
  torch.symbols = {"_ZN3c10*", "_ZN4c10d*"};
  torch.abi = "torch's C++ symbols change between releases";
  toolkit::Provider cudart;
  cudart.distributions = {"nvidia-cuda-runtime-cu12"};
  cudart.kind = "runtime";
  cudart.toolkit = image::ToolkitKind::Cuda;
  cudart.toolkit_version = "12";
  cudart.libraries = {"libcudart.so.12"};
  return {torch, cudart};
}

std::vector<std::string> kinds(const lint::Report& r) {
  std::vector<std::string> out;
  for (const auto& f : r.findings) out.push_back(verdict::kind_name(f.kind) + "/" + verdict::severity_name(f.severity));
  return out;
}

bool has(const lint::Report& r, const std::string& kind_severity) {
  const auto k = kinds(r);
  return std::find(k.begin(), k.end(), kind_severity) != k.end();
}

TEST(Lint, ALabelThatClaimsAnotherCudaThanTheMembersNeedIsAnError) {
  const auto ps = providers();
  lint::Options o;
  o.providers = &ps;
  const auto bad = lint::lint(profile("pkg-1.0+cu130-py3-none-manylinux_2_28_x86_64.whl", {"libcudart.so.12"}, {}), o);
  EXPECT_TRUE(has(bad, "label-claim/error")) << testing::PrintToString(kinds(bad));
  EXPECT_EQ(bad.status, lint::Status::Errors);
  EXPECT_EQ(lint::exit_code(bad), 1);
  const auto good = lint::lint(profile("pkg-1.0+cu126-py3-none-manylinux_2_28_x86_64.whl", {"libcudart.so.12"}, {}), o);
  EXPECT_FALSE(has(good, "label-claim/error")) << testing::PrintToString(kinds(good));
  // The runtime is not declared: information only (the image's toolkit may provide it).
  EXPECT_TRUE(has(good, "undeclared-dependency/info")) << testing::PrintToString(kinds(good));
  EXPECT_EQ(lint::exit_code(good), 0);
}

TEST(Lint, TorchSymbolsWithoutRequiresDistTorchAndWithoutAPin) {
  const auto ps = providers();
  lint::Options o;
  o.providers = &ps;
  const std::string file = "pkg-1.0-py3-none-manylinux_2_28_x86_64.whl";
  const std::vector<std::string> c10d = {"_ZN4c10d4Work18blockCurrentStreamEv"};
  const auto none = lint::lint(profile(file, {}, c10d), o);
  ASSERT_TRUE(has(none, "undeclared-dependency/error")) << testing::PrintToString(kinds(none));
  EXPECT_NE(none.findings.front().explanation.find("c10d::Work::blockCurrentStream"), std::string::npos)
      << none.findings.front().explanation;
  const auto loose = lint::lint(profile(file, {}, c10d, {"torch>=2.6"}), o);
  EXPECT_TRUE(has(loose, "unpinned-dependency/warning")) << testing::PrintToString(kinds(loose));
  EXPECT_EQ(lint::exit_code(loose), 3);
  const auto pinned = lint::lint(profile(file, {"libc10.so"}, c10d, {"torch==2.10.*"}), o);
  EXPECT_TRUE(pinned.findings.empty()) << testing::PrintToString(kinds(pinned));
  EXPECT_EQ(lint::exit_code(pinned), 0);
  // A declared runtime wheel nothing links: information.
  const auto extra = lint::lint(profile(file, {"libc10.so"}, c10d, {"torch==2.10.*", "nvidia-cuda-runtime-cu12"}), o);
  EXPECT_TRUE(has(extra, "unused-dependency/info")) << testing::PrintToString(kinds(extra));
}

TEST(Lint, AnAcceptedFindingIsInformation) {
  const auto ps = providers();
  const std::vector<verdict::Acceptance> accepted = {
      {"undeclared-dependency", "pkg-*", "", "", "torch comes from the image", "2099-12-31", "wheelcheck.toml:3"},
      {"unpinned-dependency", "pkg-*", "cuda13.0", "", "an image's acceptance is not a publisher's", "2099-12-31",
       "wheelcheck.toml:9"}};
  lint::Options o;
  o.providers = &ps;
  o.accepted = &accepted;
  const auto r = lint::lint(profile("pkg-1.0-py3-none-manylinux_2_28_x86_64.whl", {}, {"_ZN3c105ErrorC1Ev"}), o);
  ASSERT_TRUE(has(r, "undeclared-dependency/info")) << testing::PrintToString(kinds(r));
  EXPECT_NE(r.findings.front().explanation.find("torch comes from the image"), std::string::npos);
  EXPECT_EQ(lint::exit_code(r), 0);
}

// db/providers.json's rows, then the db's image distributions for a soname no row names; a malformed file is an
// error naming it.
TEST(Lint, ProvidersComeFromTheDbsTableAndItsImageDistributions) {
  TempDir db;
  std::filesystem::create_directories(db.path() + "/images");
  db.write("providers.json",
           R"({"schema": "wheelcheck-providers/1", "providers": [
                 {"distributions": ["Torch_NPU"], "kind": "package", "libraries": ["libtorch_npu.so"]}]})");
  db.write("images/vendor.json",
           R"({"name": "vendor", "distributions": [
                 {"name": "vendor_plugin", "libraries": [{"soname": "libvendor_plugin.so"}, {"soname": "libtorch_npu.so"}]}]})");
  const image::Db d(db.path());
  const auto ps = toolkit::load_providers(d);
  const auto* npu = toolkit::provider_of(ps, "libtorch_npu.so");
  ASSERT_NE(npu, nullptr);
  EXPECT_EQ(npu->distributions, std::vector<std::string>{"torch-npu"});
  EXPECT_EQ(npu->source, "db/providers.json");
  const auto* plugin = toolkit::provider_of(ps, "libvendor_plugin.so");
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->distributions, std::vector<std::string>{"vendor-plugin"});
  EXPECT_EQ(plugin->source, "db/images/vendor.json: distribution vendor-plugin");
  EXPECT_EQ(toolkit::provider_of(ps, "libunknown.so"), nullptr);
  db.write("providers.json", R"({"schema": "wheelcheck-providers/1", "providers": [{"kind": "other"}]})");
  try {
    toolkit::load_providers(d);
    FAIL() << "a malformed providers.json was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("providers.json: providers[0]"), std::string::npos) << e.what();
  }
}

// A provider's toolkit is a kind (image::ToolkitKind), read from its word; a word no toolkit has is an error naming
// the row, as a malformed row is.
TEST(Lint, ProvidersNameTheirToolkitByKind) {
  TempDir db;
  db.write("providers.json", R"({"schema": "wheelcheck-providers/1", "providers": [
                 {"distributions": ["nvidia-cuda-runtime-cu12"], "kind": "runtime", "toolkit": "cuda",
                  "toolkit_version": "12", "libraries": ["libcudart.so.12"]},
                 {"distributions": ["torch"], "kind": "package", "libraries": ["libc10.so"]}]})");
  const image::Db d(db.path());
  const auto ps = toolkit::load_providers(d);
  const auto* cudart = toolkit::provider_of(ps, "libcudart.so.12");
  ASSERT_NE(cudart, nullptr);
  EXPECT_EQ(cudart->toolkit, image::ToolkitKind::Cuda);
  EXPECT_EQ(cudart->toolkit_version, "12");
  const auto* torch = toolkit::provider_of(ps, "libc10.so");
  ASSERT_NE(torch, nullptr);
  EXPECT_FALSE(torch->toolkit.has_value());
  db.write("providers.json", R"({"schema": "wheelcheck-providers/1", "providers": [
                 {"distributions": ["x"], "kind": "runtime", "toolkit": "cudaa", "libraries": ["libx.so"]}]})");
  try {
    toolkit::load_providers(d);
    FAIL() << "a provider of an unknown toolkit was read";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("providers.json: providers[0]: unknown toolkit \"cudaa\""), std::string::npos) << what;
  }
}

// toolkit::dependency_libraries: each library a member needs that a distribution the wheel declares without an
// extra ships; not one only an extra declares, not one nobody declares, not the wheel's own.
TEST(Lint, DependencyLibrariesAreWhatADeclaredDistributionShips) {
  const std::string req = "nvidia-cuda-runtime-cu12==12.4.127";
  const auto declared = toolkit::dependency_libraries(
      profile("pkg-1.0-cp312-cp312-linux_x86_64.whl", {"libcudart.so.12", "libc10.so", "libc.so.6"}, {}, {req}),
      providers());
  ASSERT_EQ(declared.size(), 1u);
  EXPECT_EQ(declared[0].soname, "libcudart.so.12");
  EXPECT_EQ(declared[0].distribution, "nvidia-cuda-runtime-cu12");
  EXPECT_EQ(declared[0].requirement, req);
  EXPECT_TRUE(toolkit::dependency_libraries(profile("pkg-1.0-cp312-cp312-linux_x86_64.whl", {"libcudart.so.12"}, {},
                                                    {"nvidia-cuda-runtime-cu12; extra == \"cuda\""}),
                                            providers())
                  .empty());
  EXPECT_TRUE(
      toolkit::dependency_libraries(profile("nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl",
                                            {"libcudart.so.12"}, {}, {req}),
                                    providers())
          .empty());
}

}  // namespace unity_test_lint
