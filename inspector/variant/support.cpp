// What an image supports, namespace by namespace, as the providers of the PEP 850 draft would find it on a
// machine of that image (../shared/reference/variants.md, "Providers"). Each namespace's values come from, in
// order: the user's statement (--assume NS::FEATURE=VALUES, PEP 850's user static list), the file's static
// properties (install-time false), then the built-in rule for its provider below. A fact the rule needs that
// the image leaves unknown makes the feature unknown, naming the fact and the --assume that states it.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "wheelcheck/cuda.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/variant.hpp"

namespace wheelcheck::variant {

namespace {

// NVIDIA's provider: versions 11.0 to 15.20, written M.m (and M, the same as M.0).
constexpr int k_cuda_first_major = 11;
constexpr int k_cuda_last_major = 15;
constexpr int k_cuda_last_minor = 20;

void add_version(Values& out, int major, int minor) {
  out.push_back(fmt::format("{}.{}", major, minor));
  if (minor == 0) out.push_back(std::to_string(major));
}

// Every version up to (major, minor), newest first.
Values up_to(int major, int minor) {
  Values out;
  for (int m = std::min(major, k_cuda_last_major); m >= k_cuda_first_major; --m) {
    for (int n = m == major ? minor : k_cuda_last_minor; n >= 0; --n) add_version(out, m, n);
  }
  return out;
}

// Every version above (major, minor), nearest first.
Values above(int major, int minor) {
  Values out;
  for (int m = std::max(major, k_cuda_first_major); m <= k_cuda_last_major; ++m) {
    for (int n = m == major ? minor + 1 : 0; n <= k_cuda_last_minor; ++n) add_version(out, m, n);
  }
  return out;
}

struct Gpus {
  std::vector<cuda::Arch> sm;
  std::vector<std::string> gfx;
};

Gpus gpus_of(const image::Image& im) {
  Gpus g;
  if (!im.gpu_archs.known()) return g;
  for (const auto& part : split(*im.gpu_archs.value, ",", false)) {
    const std::string t(trim(part));
    if (t.rfind("gfx", 0) == 0) {
      g.gfx.push_back(t);
    } else if (auto a = cuda::parse_arch(t)) {
      g.sm.push_back(*a);
    }
  }
  std::sort(g.sm.begin(), g.sm.end());
  return g;
}

bool is_nvidia(const image::Image& im) {
  return im.toolkit && im.toolkit->kind == image::ToolkitKind::Cuda;
}

class Builder {
 public:
  Builder(const image::Image& im, const File& release) : m_im(im), m_release(release), m_gpus(gpus_of(im)) {}

  Support run() {
    std::vector<std::string> namespaces = m_release.namespace_priorities;
    for (const auto& [ns, p] : m_release.providers) {
      if (std::find(namespaces.begin(), namespaces.end(), ns) == namespaces.end()) namespaces.push_back(ns);
    }
    for (const auto& ns : namespaces) one(ns);
    return std::move(m_s);
  }

 private:
  // The features the release's variants use in a namespace, in first-seen order.
  std::vector<std::string> used_features(const std::string& ns) const {
    std::vector<std::string> out;
    for (const auto& label : m_release.labels) {
      const auto& props = m_release.variants.at(label);
      if (const auto it = props.find(ns); it != props.end()) {
        for (const auto& [feature, values] : it->second) {
          if (std::find(out.begin(), out.end(), feature) == out.end()) out.push_back(feature);
        }
      }
    }
    return out;
  }

  void add(const std::string& ns, const std::string& feature, Values values, std::string basis) {
    m_s.features.push_back({ns, feature, std::move(values), std::move(basis)});
  }
  void unknown(const std::string& ns, const std::string& feature, const std::string& why) {
    m_s.unknown[feature.empty() ? ns : ns + " :: " + feature] = why;
  }

  void one(const std::string& ns) {
    const auto features = used_features(ns);
    // The user's statements first: they replace what a provider would find.
    std::vector<std::string> left;
    for (const auto& feature : features) {
      if (const auto it = m_im.variant_properties.find(ns + "::" + feature); it != m_im.variant_properties.end()) {
        const std::string stated =
            fmt::format("{} :: {} stated: {}", ns, feature, it->second.empty() ? "none" : join(it->second, ", "));
        add(ns, feature, it->second, stated);
        m_s.basis.push_back(stated);
      } else {
        left.push_back(feature);
      }
    }
    if (left.empty()) return;
    const Provider* p = m_release.provider(ns);
    if (const Features* st = m_release.static_of(ns); st != nullptr || (p != nullptr && !p->install_time)) {
      for (const auto& feature : left) {
        if (st != nullptr && st->count(feature) != 0) {
          add(ns, feature, st->at(feature), "the file's static properties");
        } else {
          unknown(ns, feature, fmt::format("{} is a static namespace without values for {}", ns, feature));
        }
      }
      return;
    }
    if (ns == "nvidia") return nvidia(left);
    if (ns == "amd") return amd(left);
    if (ns == "ascend") return ascend(left);
    if (ns == "intel") {
      if (m_im.toolkit) {
        m_s.disabled[ns] = other_vendor();
        return;
      }
      if (m_gpus.sm.empty() && m_gpus.gfx.empty() && !m_im.gpu_archs.set) {
        m_s.disabled[ns] = "the image names no GPU (no accelerator toolkit, no gpu_archs)";
        return;
      }
      for (const auto& feature : left) {
        unknown(ns, feature,
                fmt::format("Intel's {} of the machine's GPU: no image fact says it (--assume intel::{}=VALUE)",
                            feature, feature));
      }
      return;
    }
    for (const auto& feature : left) {
      unknown(ns, feature,
              fmt::format("no built-in rule for the '{}' provider (--assume {}::{}=VALUE)", ns, ns, feature));
    }
  }

  void nvidia(const std::vector<std::string>& features) {
    if (!is_nvidia(m_im) && m_gpus.sm.empty()) {
      m_s.disabled["nvidia"] =
          m_im.toolkit ? fmt::format("a {} image ({}): no NVIDIA driver", image::toolkit_vendor(m_im.toolkit->kind),
                                     image::toolkit_kind_name(m_im.toolkit->kind))
                       : std::string("the image names no NVIDIA driver, CUDA toolkit or sm_ GPU");
      return;
    }
    std::optional<std::pair<int, int>> cuda;
    std::string driver_why;
    if (m_im.driver.known()) {
      cuda = driver_cuda(*m_im.driver.value);
      if (cuda) {
        m_s.basis.push_back(fmt::format("driver {} (CUDA {}.{})", *m_im.driver.value, cuda->first, cuda->second));
      } else {
        driver_why = fmt::format("driver {} is older than CUDA 11.0's, or not a version", *m_im.driver.value);
      }
    } else {
      driver_why = "the driver's CUDA version" +
                   (m_im.driver.note.empty() ? std::string() : " (" + m_im.driver.note + ")") +
                   ": --assume driver=VERSION";
    }
    for (const auto& feature : features) {
      if (feature == "cuda_version_lower_bound" || feature == "cuda_version_upper_bound") {
        if (!cuda) {
          if (m_im.driver.known()) {
            add("nvidia", feature, {}, driver_why);  // a driver too old for any CUDA release: nothing
          } else {
            unknown("nvidia", feature, driver_why);
          }
          continue;
        }
        add("nvidia", feature,
            feature == "cuda_version_lower_bound" ? up_to(cuda->first, cuda->second) : above(cuda->first, cuda->second),
            fmt::format("driver {} (CUDA {}.{})", *m_im.driver.value, cuda->first, cuda->second));
      } else if (feature == "sm_arch") {
        if (m_gpus.sm.empty()) {
          unknown("nvidia", feature,
                  "the GPUs' compute capability" +
                      (m_im.gpu_archs.note.empty() ? std::string() : " (" + m_im.gpu_archs.note + ")") +
                      ": --assume gpu_archs=sm_XY");
          continue;
        }
        // Only the highest GPU counts, and only its major.
        const cuda::Arch& top = m_gpus.sm.back();
        Values v;
        for (int minor = top.minor; minor >= 0; --minor) v.push_back(fmt::format("{}{}_real", top.major, minor));
        v.push_back(fmt::format("{}0_virtual", top.major));
        const std::string gpu =
            fmt::format("GPU sm_{}{} (the highest of {})", top.major, top.minor, *m_im.gpu_archs.value);
        m_s.basis.push_back(gpu);
        add("nvidia", feature, std::move(v), gpu);
      } else {
        unknown("nvidia", feature,
                "a feature NVIDIA's provider does not define (--assume nvidia::" + feature + "=VALUE)");
      }
    }
  }

  // An image built for another vendor's accelerator (its toolkit): that vendor's devices, not this one's.
  std::string other_vendor() const {
    return fmt::format("a {} image ({} toolkit)", image::toolkit_vendor(m_im.toolkit->kind),
                       image::toolkit_kind_name(m_im.toolkit->kind));
  }

  void amd(const std::vector<std::string>& features) {
    if (m_gpus.gfx.empty()) {
      if (m_im.toolkit) {
        m_s.disabled["amd"] = other_vendor();
      } else if (m_im.gpu_archs.set && !m_im.gpu_archs.known()) {
        for (const auto& f : features) unknown("amd", f, "the GPUs (--assume gpu_archs=gfxNNN)");
      } else {
        m_s.disabled["amd"] = "the image names no AMD GPU (no gfx in gpu_archs)";
      }
      return;
    }
    for (const auto& feature : features) {
      if (feature == "gfx_arch") {
        add("amd", feature, m_gpus.gfx, "GPU " + join(m_gpus.gfx, ", "));
        m_s.basis.push_back("GPU " + join(m_gpus.gfx, ", "));
      } else {
        unknown("amd", feature,
                fmt::format("AMD's {}: no image fact says it (--assume amd::{}=VALUE)", feature, feature));
      }
    }
  }

  void ascend(const std::vector<std::string>& features) {
    const bool cann = m_im.toolkit && m_im.toolkit->kind == image::ToolkitKind::Cann;
    if (!cann) {
      m_s.disabled["ascend"] = "the image has no CANN toolkit: no Ascend NPU";
      return;
    }
    for (const auto& feature : features) {
      if (feature == "cann_version") {
        if (m_im.toolkit->version.known()) {
          add("ascend", feature, {ascii_lower(*m_im.toolkit->version.value)}, "CANN " + *m_im.toolkit->version.value);
        } else {
          unknown("ascend", feature, "the CANN version (--assume toolkit_version=VERSION)");
        }
      } else if (feature == "driver_version") {
        if (m_im.driver.known()) {
          add("ascend", feature, {ascii_lower(*m_im.driver.value)}, "NPU driver " + *m_im.driver.value);
        } else {
          unknown("ascend", feature, "the NPU driver's version (--assume driver=VERSION)");
        }
      } else if (feature == "npu_type") {
        // "Ascend 910B" -> 910b; every chip the image names.
        Values v;
        if (m_im.chips.known()) {
          for (const auto& chip : split(*m_im.chips.value, ",", false)) {
            std::string t = ascii_lower(trim(chip));
            if (t.rfind("ascend", 0) == 0) t = std::string(trim(t.substr(6)));
            t.erase(std::remove_if(t.begin(), t.end(),
                                   [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }),
                    t.end());
            if (!t.empty()) v.push_back(t);
          }
        }
        if (v.empty()) {
          unknown("ascend", feature, "the NPU type (--assume ascend::npu_type=910b)");
        } else {
          add("ascend", feature, std::move(v), "chips " + *m_im.chips.value);
        }
      } else {
        unknown("ascend", feature,
                fmt::format("Ascend's {}: no image fact says it (--assume ascend::{}=VALUE)", feature, feature));
      }
    }
  }

  const image::Image& m_im;
  const File& m_release;
  Gpus m_gpus;
  Support m_s;
};

}  // namespace

std::optional<std::pair<int, int>> driver_cuda(std::string_view driver) {
  std::optional<std::pair<int, int>> best;
  for (int major = k_cuda_first_major; major <= k_cuda_last_major; ++major) {
    for (int minor = 0; minor <= k_cuda_last_minor; ++minor) {
      const auto need = cuda::toolkit_driver(major, minor);
      if (need && cuda::driver_at_least(driver, *need)) best = std::pair{major, minor};
    }
  }
  return best;
}

const Values* Support::values(std::string_view ns, std::string_view feature) const {
  for (const auto& f : features) {
    if (f.ns == ns && f.name == feature) return &f.values;
  }
  return nullptr;
}

bool Support::is_unknown(std::string_view ns, std::string_view feature) const {
  return unknown.count(std::string(ns)) != 0 || unknown.count(fmt::format("{} :: {}", ns, feature)) != 0;
}

Support supported(const image::Image& image, const File& release) {
  return Builder(image, release).run();
}

}  // namespace wheelcheck::variant
