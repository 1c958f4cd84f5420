// Stage 6 of the probe, the GPU side: the CUDA toolkit of a root and the driver it would run with.
//
// The toolkit's version, from the first source that says it: /usr/local/cuda(-X.Y)/version.json (the
// toolkit's own manifest: cuda.version, and cuda_cudart.version for the runtime), then version.txt
// ("CUDA Version 12.4.1", older toolkits), then the runtime's own distribution (a pip-installed
// nvidia-cuda-runtime(-cuXX), or a toolkit laid out from those wheels in /usr/local/cuda-X/dist-info),
// then only the major version libcudart's soname gives (written as unknown, with the reason). The
// runtime sonames are every libcudart.so.N in the loader's folders (of the root's architecture) and in
// the distributions.
//
// The driver: user-space libcuda is versioned by its file name (libcuda.so.580.65.06), and in containers
// it is mounted from the host at run time, so a root usually lacks it. The GPUs a root will run on are
// never in it. When the root is "/", the machine itself says both (nvidia-smi, /proc/driver/nvidia:
// probes/gpu.cpp), and libcuda's file name only when it cannot say the driver.
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "probes/detail.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::probe {

using image::Fact;
using image::Origin;

namespace {

// "13.0.96" -> "13.0": a toolkit is named by its major and minor version.
std::string major_minor(const std::string& v) {
  auto parts = split(v, ".", false);
  return parts.size() >= 2 ? parts[0] + "." + parts[1] : v;
}

image::Toolkit& ensure_cuda(std::optional<image::Toolkit>& cuda) {
  if (!cuda) {
    cuda.emplace();
    cuda->kind = image::ToolkitKind::Cuda;
  }
  return *cuda;
}

// The text of one of the toolkit's own files, or nullopt when it is missing or cannot be read: each is one
// source among several, and the next one is asked (a file that cannot be read is no finding here).
std::optional<std::string> cuda_probe_text(const RootFs& root, const std::string& path, std::uint64_t max_size) {
  try {
    return root.read_file(path, max_size);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The toolkit's manifest (version.json), else its version.txt, in each toolkit folder until one says.
void read_toolkit_files(const RootFs& root, const std::vector<std::string>& cuda_roots,
                        std::optional<image::Toolkit>& cuda, std::vector<Problem>& findings) {
  for (const auto& dir : cuda_roots) {
    if (cuda && cuda->version.known()) break;
    if (const auto text = cuda_probe_text(root, dir + "/version.json", std::uint64_t{1} << 20)) {
      try {
        const auto j = nlohmann::json::parse(*text);
        const std::string v = j.at("cuda").at("version").get<std::string>();
        ensure_cuda(cuda).version =
            Fact::known_as(major_minor(v), "cuda.version " + v + " in " + dir + "/version.json", Origin::Probed);
        if (j.contains("cuda_cudart")) {
          const std::string rt = j.at("cuda_cudart").at("version").get<std::string>();
          cuda->runtime = Fact::known_as(rt, "cuda_cudart.version in " + dir + "/version.json", Origin::Probed);
        }
        continue;
      } catch (const nlohmann::json::exception& e) {
        findings.push_back({"malformed-version", dir + "/version.json", e.what()});
      }
    }
    if (const auto text = cuda_probe_text(root, dir + "/version.txt", std::uint64_t{1} << 20)) {
      std::smatch m;
      if (std::regex_search(*text, m, std::regex(R"(CUDA Version ([0-9]+)\.([0-9]+)(\.[0-9]+)?)"))) {
        ensure_cuda(cuda).version = Fact::known_as(m[1].str() + "." + m[2].str(),
                                                   "\"" + m[0].str() + "\" in " + dir + "/version.txt", Origin::Probed);
      }
    }
  }
}

// The runtime's own distribution: a pip-installed nvidia-cuda-runtime(-cuXX), or a toolkit laid out from
// those wheels (/usr/local/cuda-X/dist-info): (version, where), the installed ones first.
std::vector<std::pair<std::string, std::string>> runtime_distributions(const RootFs& root, const image::Image& im,
                                                                       const std::vector<std::string>& cuda_roots) {
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto& d : im.distributions) {
    const std::string n = wheel::normalize_project_name(d.name);
    if (n.rfind("nvidia-cuda-runtime", 0) == 0) found.emplace_back(d.version, d.location + " (" + d.name + ")");
  }
  for (const auto& dir : cuda_roots) {
    for (const auto& p : root.glob(dir + "/dist-info/nvidia_cuda_runtime*.dist-info")) {
      if (const auto text = cuda_probe_text(root, p + "/METADATA", std::uint64_t{16} << 20)) {
        const wheel::Metadata md = wheel::parse_metadata(*text);
        if (!md.version.empty()) found.emplace_back(md.version, p);
      }
    }
  }
  return found;
}

// Every libcudart.so.N: of the root's architecture in the loader's folders, and in the distributions.
std::set<std::string> runtime_sonames(const image::Image& im, const std::string& arch) {
  std::set<std::string> cudart;
  for (const auto& l : im.libraries) {
    if (l.soname.rfind("libcudart.so.", 0) == 0 && (arch.empty() || l.machine == arch)) cudart.insert(l.soname);
  }
  for (const auto& d : im.distributions) {
    for (const auto& l : d.libraries) {
      if (l.soname.rfind("libcudart.so.", 0) == 0) cudart.insert(l.soname);
    }
  }
  return cudart;
}

}  // namespace

std::optional<image::Toolkit> find_cuda(const RootFs& root, const image::Image& im, const std::string& arch,
                                        std::vector<Problem>& findings) {
  std::optional<image::Toolkit> cuda;
  std::vector<std::string> cuda_roots = {"/usr/local/cuda"};
  for (const auto& p : root.glob("/usr/local/cuda-*")) cuda_roots.push_back(p);
  read_toolkit_files(root, cuda_roots, cuda, findings);
  if (!cuda || !cuda->runtime.known()) {
    const auto found = runtime_distributions(root, im, cuda_roots);
    if (!found.empty()) {
      const auto& [v, where] = found.front();
      ensure_cuda(cuda).runtime = Fact::known_as(v, "nvidia-cuda-runtime " + v + " at " + where, Origin::Probed);
      if (!cuda->version.known()) {
        cuda->version = Fact::known_as(major_minor(v), "from the CUDA runtime's version " + v, Origin::Derived);
      }
    }
  }
  if (const std::set<std::string> cudart = runtime_sonames(im, arch); !cudart.empty()) {
    image::Toolkit& t = ensure_cuda(cuda);
    t.runtime_sonames.assign(cudart.begin(), cudart.end());
    if (!t.version.known()) {
      const std::string major = cudart.rbegin()->substr(std::string_view("libcudart.so.").size());
      t.version = Fact::unknown(
          "only the runtime's soname says CUDA " + major + ".x (no version.json, no runtime distribution)",
          Origin::Probed);
    }
  }
  if (cuda && !cuda->runtime.set) cuda->runtime = Fact::unknown("no version.json names cuda_cudart", Origin::Probed);
  return cuda;
}

void find_driver(const RootFs& root, image::Image& im) {
  std::optional<Fact> libcuda;
  for (const auto& l : im.libraries) {
    if (l.soname != "libcuda.so.1") continue;
    const std::string file = base_name(l.path);
    if (file.rfind("libcuda.so.", 0) == 0 && file != "libcuda.so.1") {
      libcuda =
          Fact::known_as(file.substr(std::string_view("libcuda.so.").size()), "file name of " + l.path, Origin::Probed);
      break;
    }
  }
  if (std::filesystem::equivalent(root.host_root(), "/")) {
    // This machine: the driver it runs (nvidia-smi, the kernel module), else the libcuda it ships.
    GpuFacts gpus = this_machine_gpus(gpu_sources_from_environment());
    im.driver = !gpus.driver.known() && libcuda ? *libcuda : std::move(gpus.driver);
    im.gpu_archs = std::move(gpus.gpu_archs);
    return;
  }
  if (libcuda) {
    im.driver = *libcuda;
  } else if (im.toolkit) {
    im.driver =
        Fact::unknown("no libcuda.so.1 in the root: the driver comes from the host at run time", Origin::Probed);
  }
  if (im.toolkit) {
    im.gpu_archs = Fact::unknown("a root folder does not show the GPUs of the machines it will run on", Origin::Probed);
  }
}

}  // namespace wheelcheck::probe
