// Test support for the accelerator side: CUDA kernels built at test time with the machine's nvcc for
// chosen -gencode sets, each with what nvcc was asked to embed, so a test can check the fatbin reader
// (and the coverage verdict) against the build itself. The libraries are built once per nvcc and set of
// cases, kept in the build caches beside ccache (WHEELCHECK_BUILD_CACHE, default
// ~/.cache/wheelcheck/build/fatbin-kernels-KEY) and shared by every test process, build folder and clone
// (about 4 s of nvcc per case, a minute in all); a test skips, saying why, where there is no nvcc.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "support.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::test {

struct KernelCase {
  std::string name;               // the library's stem: libk_<name>.so
  std::string flags;              // the nvcc flags (-gencode sets, compression)
  std::vector<std::string> sass;  // what the flags embed, as nvcc names it
  std::vector<std::string> ptx;
  int compressed = -1;  // 1: every entry compressed, 0: none, -1: nvcc decides per entry
  // -gencode sets of a second fatbin (nvcc -fatbin) that the library keeps as data in .cask_resource, as
  // cuBLASLt does, to load it itself: its code is in `sass` and `ptx` too, but not in .nv_fatbin.
  std::string embed = {};
};

inline const std::vector<KernelCase>& kernel_cases() {
  static const std::vector<KernelCase> cases = {
      {"sm80", "-gencode arch=compute_80,code=sm_80", {"sm_80"}, {}, -1},
      {"sm80_ptx", "-gencode arch=compute_80,code=[sm_80,compute_80]", {"sm_80"}, {"compute_80"}, -1},
      {"multi",
       "-gencode arch=compute_75,code=sm_75 -gencode arch=compute_86,code=sm_86 -gencode arch=compute_90a,code=sm_90a",
       {"sm_75", "sm_86", "sm_90a"},
       {},
       -1},
      {"family",
       "-gencode arch=compute_100f,code=[sm_100f,compute_100f] -gencode arch=compute_120,code=sm_120",
       {"sm_100f", "sm_120"},
       {"compute_100f"},
       -1},
      {"ptx_only", "-gencode arch=compute_120,code=compute_120", {}, {"compute_120"}, -1},
      {"compressed",
       "--compress-mode=size -gencode arch=compute_89,code=[sm_89,compute_89]",
       {"sm_89"},
       {"compute_89"},
       1},
      {"uncompressed", "--no-compress -gencode arch=compute_90,code=[sm_90,compute_90]", {"sm_90"}, {"compute_90"}, 0},
      {"loaded",
       "-gencode arch=compute_80,code=sm_80",
       {"sm_75", "sm_80", "sm_120"},
       {"compute_120"},
       -1,
       "-gencode arch=compute_75,code=sm_75 -gencode arch=compute_120,code=[sm_120,compute_120]"},
  };
  return cases;
}

// How to run the tests that need CUDA 13's nvcc, which an ordinary runner does not have: their skips say it.
inline constexpr const char* k_cuda13_how =
    "to run it, install NVIDIA's CUDA 13.0 toolkit in /usr/local/cuda-13.0 or set WHEELCHECK_NVCC to a CUDA 13 nvcc";

inline std::string nvcc_path() {
  if (const char* e = std::getenv("WHEELCHECK_NVCC"); e != nullptr && *e != '\0') return e;
  for (const char* p : {"/usr/local/cuda-13.0/bin/nvcc", "/usr/local/cuda/bin/nvcc"}) {
    if (is_file(p)) return p;
  }
  return have_program("nvcc") ? "nvcc" : "";
}

// The build caches' folder (scripts/lib/cache.sh): $WHEELCHECK_BUILD_CACHE, else
// ${XDG_CACHE_HOME:-~/.cache}/wheelcheck/build; the build folder when there is no home.
inline std::filesystem::path kernel_cache_root() {
  if (const char* e = std::getenv("WHEELCHECK_BUILD_CACHE"); e != nullptr && *e != '\0') return e;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x == '/') {
    return std::filesystem::path(x) / "wheelcheck" / "build";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    return std::filesystem::path(home) / ".cache" / "wheelcheck" / "build";
  }
  return std::filesystem::path(wheelcheck::test::build_samples_dir()).parent_path();
}

// The folder of built kernels (libk_<case>.so each); "" with `error` saying why when they cannot be built.
inline std::string kernel_dir(std::string& error) {
  namespace fs = std::filesystem;
  const std::string nvcc = nvcc_path();
  if (nvcc.empty()) {
    error = std::string("no nvcc: kernels cannot be built here; ") + k_cuda13_how;
    return "";
  }
  static const std::string source =
      "__global__ void add(float* a, const float* b, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) a[i] += b[i];\n"
      "}\n"
      "extern \"C\" void launch(float* a, const float* b, int n) { add<<<(n + 255) / 256, 256>>>(a, b, n); }\n";
  // The key: nvcc itself (its path and what --version says), the source and every case's flags.
  const auto version = run(shell_quote(nvcc) + " --version");
  if (version.exit_code != 0) {
    error = nvcc + " --version failed: " + version.out + version.err;
    return "";
  }
  Hasher h;
  h.update(nvcc.data(), nvcc.size());
  h.update(version.out.data(), version.out.size());
  h.update(source.data(), source.size());
  for (const auto& c : kernel_cases()) {
    h.update(c.flags.data(), c.flags.size());
    h.update(c.embed.data(), c.embed.size());
  }
  const fs::path dir = kernel_cache_root() / ("fatbin-kernels-" + to_hex(h.finish()).substr(0, 16));
  if (fs::exists(dir / "done")) return dir.string();
  // One process builds them; the others (ctest runs tests two at a time, and two suites may run side by
  // side) wait on the lock and then find them done.
  std::error_code mk;
  fs::create_directories(dir.parent_path(), mk);
  const int lock = ::open((dir.string() + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock >= 0) ::flock(lock, LOCK_EX);
  struct Unlock {
    int fd;
    ~Unlock() {
      if (fd >= 0) ::close(fd);
    }
  } unlock{lock};
  if (fs::exists(dir / "done")) return dir.string();
  const std::string fresh = dir.string() + ".tmp" + std::to_string(::getpid());
  fs::remove_all(fresh);
  fs::create_directories(fresh);
  write_binary(fresh + "/k.cu", source);
  for (const auto& c : kernel_cases()) {
    std::string inputs = shell_quote(fresh + "/k.cu");
    if (!c.embed.empty()) {
      // The second fatbin as a byte array in .cask_resource, 8-byte aligned as nvcc aligns containers.
      const std::string fatbin = fresh + "/embed_" + c.name + ".fatbin";
      const auto r = run(shell_quote(nvcc) + " -fatbin " + c.embed + " -o " + shell_quote(fatbin) + " " + inputs);
      if (r.exit_code != 0) {
        error = "nvcc -fatbin " + c.embed + " failed: " + r.out + r.err;
        fs::remove_all(fresh);
        return "";
      }
      std::string cpp =
          "__attribute__((section(\".cask_resource\"), aligned(8), used))\n"
          "static const unsigned char loaded_code[] = {";
      for (const unsigned char b : read_file(fatbin)) cpp += std::to_string(b) + ",";
      cpp += "};\nextern \"C\" const void* loaded_code_image() { return loaded_code; }\n";
      write_binary(fresh + "/embed_" + c.name + ".cpp", cpp);
      inputs += " " + shell_quote(fresh + "/embed_" + c.name + ".cpp");
    }
    const auto r = run(shell_quote(nvcc) + " -shared -Xcompiler -fPIC -cudart shared " + c.flags + " -o " +
                       shell_quote(fresh + "/libk_" + c.name + ".so") + " " + inputs);
    if (r.exit_code != 0) {
      error = "nvcc " + c.flags + " failed: " + r.out + r.err;
      fs::remove_all(fresh);
      return "";
    }
  }
  write_binary(fresh + "/done", "");
  std::error_code ec;
  fs::rename(fresh, dir, ec);  // another process may have won: its folder is as good
  if (ec) fs::remove_all(fresh);
  return dir.string();
}

// The CUDA release of the nvcc found ("release 13.0" in its --version): its major, or 0 when unknown.
inline int nvcc_release_major() {
  const std::string nvcc = nvcc_path();
  if (nvcc.empty()) return 0;
  const auto r = run(shell_quote(nvcc) + " --version");
  const auto at = r.out.find("release ");
  if (r.exit_code != 0 || at == std::string::npos) return 0;
  return std::atoi(r.out.c_str() + at + 8);
}

// One shared library nvcc builds from `source` with `flags` (-cudart static, -gencode sets): its path, kept
// in the build caches as the kernels are (kernel_cache_root()/nvcc-lib-KEY/NAME, KEY over nvcc, the
// source and the flags); "" with `error` saying why when it cannot be built.
inline std::string nvcc_library(const std::string& name, const std::string& source, const std::string& flags,
                                std::string& error) {
  namespace fs = std::filesystem;
  const std::string nvcc = nvcc_path();
  if (nvcc.empty()) {
    error = std::string("no nvcc: libraries cannot be built here; ") + k_cuda13_how;
    return "";
  }
  const auto version = run(shell_quote(nvcc) + " --version");
  if (version.exit_code != 0) {
    error = nvcc + " --version failed: " + version.out + version.err;
    return "";
  }
  Hasher h;
  for (const std::string* part : {&nvcc, &version.out, &source, &flags, &name}) {
    h.update(part->data(), part->size());
    h.update("\0", 1);
  }
  const fs::path dir = kernel_cache_root() / ("nvcc-lib-" + to_hex(h.finish()).substr(0, 16));
  const fs::path lib = dir / name;
  if (fs::exists(lib)) return lib.string();
  std::error_code mk;
  fs::create_directories(dir.parent_path(), mk);
  // Built in a folder of this process's own, then renamed: another process finds it whole or not at all.
  const std::string fresh = dir.string() + ".tmp" + std::to_string(::getpid());
  fs::remove_all(fresh);
  fs::create_directories(fresh);
  write_binary(fresh + "/src.cu", source);
  const auto r = run(shell_quote(nvcc) + " -shared -Xcompiler -fPIC " + flags + " -o " +
                     shell_quote(fresh + "/" + name) + " " + shell_quote(fresh + "/src.cu"));
  if (r.exit_code != 0) {
    error = "nvcc " + flags + " failed: " + r.out + r.err;
    fs::remove_all(fresh);
    return "";
  }
  std::error_code ec;
  fs::rename(fresh, dir, ec);  // another process may have won: its folder is as good
  if (ec) fs::remove_all(fresh);
  return fs::exists(lib) ? lib.string() : "";
}

}  // namespace wheelcheck::test
