// CUDA: the runtime major each member needs (libcudart.so.12) against the image's toolkit, and the
// NVIDIA driver that runtime needs against the image's driver (a condition when the driver is unknown),
// with the floors NVIDIA publishes for each major.
#include "inspector/verdict/cuda.hpp"

#include <algorithm>
#include <map>
#include <regex>

#include <fmt/format.h>

namespace wheelcheck::verdict {

// NVIDIA's CUDA Toolkit release notes, "CUDA Toolkit and Minimum Required Driver Version for CUDA Minor
// Version Compatibility" (Table 2 of the CUDA 12 and 13 notes): a CUDA X.y runtime runs on any driver at
// or above the floor of its major.
std::string minimum_driver(int cuda_major) {
  switch (cuda_major) {
    case 11: return "450.80.02";
    case 12: return "525.60.13";
    case 13: return "580.65.06";
    default: return "";
  }
}

namespace {

bool driver_older(const std::string& have, const std::string& need) {
  std::vector<long> a, b;
  for (const auto* s : {&have, &need}) {
    auto& out = s == &have ? a : b;
    std::size_t i = 0;
    while (i < s->size()) {
      long v = 0;
      while (i < s->size() && std::isdigit(static_cast<unsigned char>((*s)[i]))) v = v * 10 + ((*s)[i++] - '0');
      out.push_back(v);
      ++i;
    }
  }
  return a < b;
}

std::optional<int> major_of(const image::Fact& f) {
  if (!f.known()) return std::nullopt;
  try {
    return std::stoi(*f.value);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

// The CUDA runtime major a soname names (libcudart.so.12 -> 12).
std::optional<int> cudart_major(const std::string& soname) {
  static const std::regex re(R"(libcudart\.so\.([0-9]+))");
  std::smatch m;
  if (!std::regex_match(soname, m, re)) return std::nullopt;
  return std::stoi(m[1]);
}

// " (libcudart.so.13)": the runtime sonames of a toolkit, without the driver's and the libraries'.
std::string cudart_list(const std::vector<std::string>& sonames) {
  std::vector<std::string> rt;
  for (const auto& s : sonames) {
    if (s.rfind("libcudart.so", 0) == 0) rt.push_back(s);
  }
  return rt.empty() ? "" : " (" + fmt::format("{}", fmt::join(rt, ", ")) + ")";
}

void explain_missing_cudart(Draft& f, const std::string& who, int major, const std::string& soname,
                            const image::Image& image) {
  if (image.toolkit && image.toolkit->kind == image::ToolkitKind::Cuda) {
    const auto& tk = *image.toolkit;
    f.explain(fmt::format("{} is built for CUDA {} (needs {}); the image has CUDA {}{}.", who, major, soname,
                          tk.version.text(), cudart_list(tk.runtime_sonames)));
    f.fix(
        fmt::format("use a build of this wheel for CUDA {}, or install the CUDA {} runtime (nvidia-cuda-runtime-cu{}) "
                    "beside it; otherwise keep this part from loading",
                    tk.version.text(), major, major));
  } else {
    f.explain(fmt::format("{} needs the CUDA {} runtime ({}), and the image has none.", who, major, soname));
  }
}

std::vector<Finding> cuda_findings(const resolve::Space& space, const image::Image& image,
                                   const std::vector<Finding>& findings) {
  std::vector<Finding> out;
  std::map<int, std::string> majors;  // CUDA major -> the member that needs it
  for (const resolve::Object* o : space.wheel_members()) {
    if (o->binary == nullptr) continue;
    for (const auto& n : o->needed) {
      if (auto m = cudart_major(n)) majors.emplace(*m, o->member);
      if (n == "libcuda.so.1" && image.toolkit && image.toolkit->kind == image::ToolkitKind::Cuda) {
        if (auto tk = major_of(image.toolkit->version)) majors.emplace(*tk, o->member);
      }
    }
  }
  if (majors.empty()) return out;
  const bool nvidia = !image.toolkit || image.toolkit->kind == image::ToolkitKind::Cuda;
  if (!nvidia) return out;  // a vendor's CUDA-compatible runtime has its own driver
  for (const auto& [major, member] : majors) {
    // A runtime that does not resolve is already an error; its driver is beside the point.
    const std::string soname = fmt::format("libcudart.so.{}", major);
    if (std::any_of(findings.begin(), findings.end(),
                    [&](const Finding& f) { return f.kind == FindingKind::MissingLibrary && f.library == soname; })) {
      continue;
    }
    const std::string need = minimum_driver(major);
    if (need.empty()) continue;
    if (image.driver.known() && !driver_older(*image.driver.value, need)) continue;
    // The one driver finding: an error against a known, older driver; a condition when it is unknown.
    const bool known = image.driver.known();
    Draft f =
        make(known ? FindingKind::DriverTooOld : FindingKind::Driver, known ? Severity::Error : Severity::Condition)
            .member(member)
            .library(soname)
            .version(need)
            .evidence("CUDA minor version compatibility floors (NVIDIA's CUDA Toolkit release notes)");
    if (known) {
      f.explain(fmt::format("the CUDA {} runtime needs an NVIDIA driver >= {}; the image's driver is {}.", major, need,
                            *image.driver.value));
      f.fix(fmt::format("a driver >= {} on the host, or a build for an older CUDA", need));
    } else {
      f.explain(fmt::format("needs an NVIDIA driver >= {} (CUDA {}); the image's driver version is unknown ({}).", need,
                            major, image.driver.note.empty() ? "not described" : image.driver.note));
      f.fix("check `nvidia-smi` on the runner, or describe the driver in the image");
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace wheelcheck::verdict
