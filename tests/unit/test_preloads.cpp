// What `import torch` preloads before the wheel's modules (db/preloads.json, inspector/resolve/preloads.cpp): the
// data file read as it is, and the model on libraries built here: a member that needs an nvidia-* wheel's library
// without an RPATH to it finds it "already loaded" only where torch is imported first and its version preloads
// it; a symbol that only torch's RTLD_GLOBAL libtorch_global_deps.so brings binds.
#include <algorithm>
#include <string>
#include <vector>

#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/preloads.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/resolve.hpp"

// Its own namespace: the tests are compiled in batches (a unity build), and each file's helpers stay its own.
namespace unity_test_preloads {

using namespace wheelcheck;
using namespace wheelcheck::test;

namespace {

std::string preload_so(const TempDir& dir, const std::string& name, const std::string& source,
                       const std::string& flags) {
  std::string err;
  auto so = build_shared(dir, name, name + ".c", source, flags, "gcc", &err);
  if (!so) ADD_FAILURE() << name << ": " << err;
  return so.value_or("");
}

image::DistLibrary dist_lib(const std::string& path, const std::string& soname) {
  image::DistLibrary l;
  l.path = path;
  l.soname = soname;
  l.machine = "x86_64";
  l.elf_class = 64;
  l.exports_unknown = "described in the test";
  return l;
}

image::Distribution dist(const std::string& name, const std::string& version, const std::string& location,
                         std::vector<image::DistLibrary> libs) {
  image::Distribution d;
  d.name = name;
  d.version = version;
  d.location = location;
  d.libraries = std::move(libs);
  return d;
}

// A Debian-like x86_64 image with Python 3.12 (site-packages /sp) and the distributions given.
image::Image preload_image(std::vector<image::Distribution> dists) {
  image::Image im;
  im.name = "test";
  im.arch = image::Fact::known_as("x86_64", "", image::Origin::Declared);
  im.loader.default_dirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"};
  image::Python py;
  py.version = "3.12";
  py.abi_tags = {"cp312", "abi3"};
  py.site_packages = {"/sp"};
  im.pythons.push_back(py);
  im.distributions = std::move(dists);
  return im;
}

// The image's torch (its libc10.so only: libtorch_global_deps.so is not described) and the nvidia-* wheels.
image::Image torch_image(const std::string& torch_version) {
  return preload_image({dist("torch", torch_version, "/sp", {dist_lib("torch/lib/libc10.so", "libc10.so")}),
                        dist("nvidia-cuda-runtime-cu12", "12.8.90", "/sp",
                             {dist_lib("nvidia/cuda_runtime/lib/libcudart.so.12", "libcudart.so.12")}),
                        dist("nvidia-cuda-nvrtc-cu12", "12.8.93", "/sp",
                             {dist_lib("nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "libnvrtc.so.12")})});
}

resolve::Need need_named(const resolve::Space& space, const std::string& name) {
  for (const auto* o : space.wheel_members()) {
    for (const auto& n : resolve::load(space, *o).needs) {
      if (n.name == name) return n;
    }
  }
  ADD_FAILURE() << "no need " << name;
  return {};
}

bool has_note(const resolve::Space& space, const std::string& part) {
  const auto notes = space.preloaded_notes();
  return std::any_of(notes.begin(), notes.end(),
                     [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

std::string all_notes(const resolve::Space& space) {
  std::string out;
  for (const auto& n : space.preloaded_notes()) out += n + "\n";
  return out;
}

// A wheel whose extension needs libcudart.so.12 and libnvrtc.so.12 by name, with no RPATH; Requires-Dist torch
// when `torch` is set.
struct CudaWheel {
  TempDir dir;
  WheelProfile wheel;
  explicit CudaWheel(bool torch) {
    const std::string cudart =
        preload_so(dir, "libcudart.so.12", "int cudaFake(void) { return 1; }\n", "-Wl,-soname,libcudart.so.12");
    const std::string nvrtc =
        preload_so(dir, "libnvrtc.so.12", "int nvrtcFake(void) { return 2; }\n", "-Wl,-soname,libnvrtc.so.12");
    const std::string ext = preload_so(dir, "ext.so",
                                       "int cudaFake(void); int nvrtcFake(void);\n"
                                       "int PyInit_ext(void) { return cudaFake() + nvrtcFake(); }\n",
                                       "-Wl,--no-as-needed " + cudart + " " + nvrtc);
    wheel = inspect_wheel(make_wheel(dir, "cw-1.0-cp312-cp312-linux_x86_64.whl", {{"cw/ext.so", ext}}));
    if (torch) wheel.metadata.requires_dist = {"torch>=2.6"};
  }
};

}  // namespace

TEST(Preloads, DataFileReadsAndSaysWhatItDoesNotKnow) {
  const auto table = preloads::load(source_dir() + "/db/preloads.json");
  ASSERT_FALSE(table.torch.empty());
  EXPECT_EQ(preloads::rule_for(table, "1.12.1"), nullptr);  // before the nvidia-* wheels
  const auto* old = preloads::rule_for(table, "2.6.0+cu126");
  ASSERT_NE(old, nullptr);
  EXPECT_FALSE(old->verified);
  EXPECT_FALSE(old->why.empty());
  const auto* v27 = preloads::rule_for(table, "2.7.1+cu128");
  ASSERT_NE(v27, nullptr);
  ASSERT_TRUE(v27->verified);
  EXPECT_EQ(v27->global_deps, "torch/lib/libtorch_global_deps.so");
  ASSERT_EQ(v27->after_load.steps.size(), 2U);
  EXPECT_EQ(v27->after_load.steps[0].folder, "cuda_nvrtc");
  EXPECT_EQ(v27->after_load.steps[1].folder, "nvjitlink");
  EXPECT_EQ(v27->after_load.when, "cudart_from_nvidia_wheel");
  EXPECT_EQ(v27->on_failure.steps.front().folder, "cublas");
  EXPECT_NE(v27->source.find("steleman/pytorch-cuda-2.7.1"), std::string::npos);
  EXPECT_FALSE(preloads::rule_for(table, "2.9.0")->verified);
  const auto* newest = preloads::rule_for(table, "2.12.0");
  ASSERT_NE(newest, nullptr);
  EXPECT_TRUE(newest->verified);
  EXPECT_FALSE(newest->after_load.required);
  EXPECT_TRUE(newest->on_failure.required);
  EXPECT_EQ(newest->on_failure.steps.size(), newest->after_load.steps.size());
  EXPECT_TRUE(newest->cuda_major_folder);
  // A malformed file is an error naming it.
  TempDir d;
  const std::string bad = d.file("preloads.json");
  write_binary(bad, R"({"schema": "wheelcheck-preloads/1", "torch": [{"from": "2.7", "status": "verified"}]})");
  try {
    preloads::load(bad);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("torch[0]"), std::string::npos) << e.what();
  }
}

TEST(Preloads, GlobAsPythonFnmatch) {
  EXPECT_TRUE(preloads::glob_match("libcudart.so.*[0-9]", "libcudart.so.12"));
  EXPECT_TRUE(preloads::glob_match("libcudart.so.*[0-9]", "libcudart.so.12.8.90"));
  EXPECT_FALSE(preloads::glob_match("libcudart.so.*[0-9]", "libcudart.so"));
  EXPECT_FALSE(preloads::glob_match("libcudart.so.*[0-9]", "libcudart.so.12.a"));
  EXPECT_FALSE(preloads::glob_match("libnvrtc.so.*[0-9]", "libnvrtc-builtins.so.12.8"));
  EXPECT_TRUE(preloads::glob_match("libnvrtc-builtins.so.*[0-9]", "libnvrtc-builtins.so.12.8"));
  EXPECT_TRUE(preloads::glob_match("lib?.so.[!a]", "libx.so.1"));
}

// The newest torch preloads libcudart.so.12 from nvidia-cuda-runtime-cu12 (best effort, a libcudart being
// loaded): the member's need is then already loaded; torch 2.7.1 preloads libnvrtc.so.12 only; 2.6 is not stated
// (nothing preloaded, a note says so); without torch required, nothing.
TEST(Preloads, TorchVersionDecidesWhatIsAlreadyLoaded) {
  preloads::use_db(source_dir() + "/db");
  CudaWheel with_torch(true);
  CudaWheel without_torch(false);
  {
    const auto im = torch_image("2.11.0+cu128");
    resolve::Space space(im, with_torch.wheel, {});
    const auto cudart = need_named(space, "libcudart.so.12");
    EXPECT_EQ(cudart.rule, resolve::How::AlreadyLoaded) << all_notes(space);
    EXPECT_EQ(cudart.where, "/sp/nvidia/cuda_runtime/lib/libcudart.so.12");
    EXPECT_EQ(need_named(space, "libnvrtc.so.12").rule, resolve::How::AlreadyLoaded);
    EXPECT_TRUE(has_note(space, "`import torch` (2.11.0+cu128) preloads libcudart.so.12 from nvidia-cuda-runtime-cu12"))
        << all_notes(space);
    EXPECT_TRUE(has_note(space, "torch/__init__.py _load_global_deps")) << all_notes(space);
    // The same image without torch required: nothing preloads, nothing finds them.
    resolve::Space bare(im, without_torch.wheel, {});
    EXPECT_EQ(need_named(bare, "libcudart.so.12").found, nullptr);
    EXPECT_EQ(need_named(bare, "libnvrtc.so.12").found, nullptr);
    EXPECT_FALSE(has_note(bare, "preloads"));
  }
  {
    const auto im = torch_image("2.7.1+cu128");
    resolve::Space space(im, with_torch.wheel, {});
    EXPECT_EQ(need_named(space, "libnvrtc.so.12").rule, resolve::How::AlreadyLoaded) << all_notes(space);
    EXPECT_EQ(need_named(space, "libcudart.so.12").found, nullptr) << all_notes(space);
    EXPECT_TRUE(has_note(space, "preloads libnvrtc.so.12 from nvidia-cuda-nvrtc-cu12")) << all_notes(space);
    // nvjitlink is not there: the after-load block stops there, said so.
    EXPECT_TRUE(has_note(space, "stops preloading")) << all_notes(space);
  }
  {
    const auto im = torch_image("2.6.0+cu126");
    resolve::Space space(im, with_torch.wheel, {});
    EXPECT_EQ(need_named(space, "libcudart.so.12").found, nullptr);
    EXPECT_EQ(need_named(space, "libnvrtc.so.12").found, nullptr);
    EXPECT_TRUE(has_note(space, "is not stated")) << all_notes(space);
  }
}

// torch and the nvidia-* wheels in different site folders: libtorch_global_deps.so's RUNPATH misses libcudart, it
// fails, and torch 2.7.1 preloads the whole list, required: the first library absent (cuBLAS) makes `import
// torch` raise ValueError, said in a note.
TEST(Preloads, GlobalDepsFailingRunsTheFailurePath) {
  preloads::use_db(source_dir() + "/db");
  CudaWheel w(true);
  auto global_deps = dist_lib("torch/lib/libtorch_global_deps.so", "libtorch_global_deps.so");
  global_deps.needed = {"libcudart.so.12"};
  global_deps.runpath = {"$ORIGIN/../../nvidia/cuda_runtime/lib"};
  global_deps.dynamic_recorded = true;
  auto im = preload_image({dist("torch", "2.7.1+cu128", "/usr/lib64/python3.12/site-packages", {global_deps}),
                           dist("nvidia-cuda-runtime-cu12", "12.8.90", "/sp",
                                {dist_lib("nvidia/cuda_runtime/lib/libcudart.so.12", "libcudart.so.12")})});
  resolve::Space space(im, w.wheel, {});
  EXPECT_TRUE(has_note(space, "raises ValueError after torch/lib/libtorch_global_deps.so fails to load"))
      << all_notes(space);
  EXPECT_TRUE(has_note(space, "nvidia/cublas/lib/libcublas.so.*[0-9]")) << all_notes(space);
  EXPECT_TRUE(has_note(space, "with RTLD_GLOBAL")) << all_notes(space);
  // In the same site folder its RUNPATH reaches libcudart: it loads, and 2.7.1's after-load steps run.
  im.distributions[0].location = "/sp";
  resolve::Space together(im, w.wheel, {});
  EXPECT_FALSE(has_note(together, "ValueError")) << all_notes(together);
  EXPECT_TRUE(has_note(together, "stops preloading")) << all_notes(together);
}

// A symbol only torch's RTLD_GLOBAL libtorch_global_deps.so brings (through libcudart.so.12, which it loads):
// the member does not need either library, yet binds, torch (a wheel beside it) being imported first; without
// torch required, the symbol is unbound.
TEST(Preloads, RtldGlobalPreloadDefinesSymbolsForLaterLoads) {
  preloads::use_db(source_dir() + "/db");
  TempDir d;
  const std::string cudart =
      preload_so(d, "libcudart.so.12", "int cudaGlobalOnly(void) { return 7; }\n", "-Wl,-soname,libcudart.so.12");
  const std::string deps = preload_so(
      d, "libtorch_global_deps.so", "int torch_global_marker(void) { return 0; }\n",
      "-Wl,--no-as-needed " + cudart + " -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../../nvidia/cuda_runtime/lib'");
  const std::string ext =
      preload_so(d, "ext.so", "int cudaGlobalOnly(void);\nint PyInit_ext(void) { return cudaGlobalOnly(); }\n", "");
  auto torch = inspect_wheel(
      make_wheel(d, "torch-2.11.0+cu128-cp312-cp312-linux_x86_64.whl", {{"torch/lib/libtorch_global_deps.so", deps}}));
  auto nvidia = inspect_wheel(make_wheel(d, "nvidia_cuda_runtime_cu12-12.8.90-py3-none-manylinux_2_28_x86_64.whl",
                                         {{"nvidia/cuda_runtime/lib/libcudart.so.12", cudart}}));
  auto wheel = inspect_wheel(make_wheel(d, "g-1.0-cp312-cp312-linux_x86_64.whl", {{"g/ext.so", ext}}));
  const auto im = preload_image({});
  auto unbound = [&](const resolve::Space& space) {
    for (const auto* o : space.wheel_members()) {
      for (const auto& u : resolve::bind(space, resolve::load(space, *o)).unbound) {
        if (u.symbol->name == "cudaGlobalOnly") return true;
      }
    }
    return false;
  };
  {
    resolve::Space space(im, wheel, {&torch, &nvidia});
    EXPECT_TRUE(unbound(space));  // torch is not required: not imported first
  }
  wheel.metadata.requires_dist = {"torch"};
  resolve::Space space(im, wheel, {&torch, &nvidia});
  EXPECT_FALSE(unbound(space)) << all_notes(space);
  EXPECT_TRUE(has_note(space, "loads torch/lib/libtorch_global_deps.so with RTLD_GLOBAL")) << all_notes(space);
  const auto* member = space.wheel_members().front();
  const auto load = resolve::load(space, *member);
  EXPECT_TRUE(std::any_of(load.global.begin(), load.global.end(), [](const resolve::Object* o) {
    return o->path == "/sp/nvidia/cuda_runtime/lib/libcudart.so.12";
  }));
}

}  // namespace unity_test_preloads
