// Internal to probes/: small path helpers of the probe, and its Python stages (probes/python.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "wheelcheck/image.hpp"
#include "wheelcheck/rootfs.hpp"

namespace wheelcheck::probe {

bool library_like(std::string_view name);  // libfoo.so, libfoo.so.1.2
std::string base_name(std::string_view path);
std::string dir_name(std::string_view path);
std::string join_path(std::string_view dir, std::string_view name);
std::vector<std::string> split_list(const std::string& s, std::string_view seps);

// Stage 4: the Pythons of a root: <prefix>/lib/python3.X with an interpreter or a site-packages folder;
// Debian's dist-packages folders join the /usr Python of the same version.
std::vector<image::Python> find_pythons(const RootFs& root);

// Stage 5: every *.dist-info / *.egg-info in those Pythons' site folders, with its native files
// (relative to the distribution's location): from RECORD, else from the packages top_level.txt names or
// the package folder named like the distribution, with a finding that says what was assumed.
struct FoundDistribution {
  image::Distribution dist;
  std::vector<std::string> files;
};
std::vector<FoundDistribution> find_distributions(const RootFs& root, const std::vector<image::Python>& pythons,
                                                  std::vector<Problem>& findings);

}  // namespace wheelcheck::probe
