// Internal to the verdict: the CUDA checks (inspector/verdict/cuda_check.cpp): the runtime a member needs
// against the image's toolkit, the members' GPU code against the image's GPUs, and the driver all of it
// needs against the image's driver.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "inspector/verdict/findings.hpp"
#include "wheelcheck/cuda.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

// The CUDA runtime major a soname names (libcudart.so.12 -> 12).
std::optional<int> cudart_major(const std::string& soname);
// " (libcudart.so.13)": the runtime sonames of a toolkit, without the driver's and the libraries'.
std::string cudart_list(const std::vector<std::string>& sonames);
// A CUDA runtime (libcudart.so.N, `soname`) nothing provides, in words: the major `who` is built for
// against the image's CUDA, and the runtime or build that would fit. `wheel_version`: the checked wheel's
// version when `who` is its own member ("" otherwise): a local label that claims another CUDA than the member's
// is the wheel's own defect, and the fix says so rather than "a build of this wheel for CUDA 13" (the seed's
// FlagTree +cu130 with libcudart.so.12), which would point back at this very wheel.
void explain_missing_cudart(Draft& f, const std::string& who, int major, const std::string& soname,
                            const image::Image& image, const std::string& wheel_version = "");
struct CudaResult {
  std::vector<Finding> findings;
  std::optional<DriverNeed> driver;
};
// For an NVIDIA image: the GPU coverage of every member's fatbins (errors against known GPUs, conditions
// naming the GPUs that would work when they are unknown), GPUs the toolkit no longer supports, and the
// driver the wheel needs (the highest floor of its CUDA runtimes and of the PTX the driver must JIT-compile)
// against the image's driver: errors when it is older, one condition when it is unknown. A runtime
// already missing (in `findings`) sets no floor.
CudaResult cuda_check(const resolve::Space& space, const image::Image& image, const std::vector<Finding>& findings);

}  // namespace wheelcheck::verdict
