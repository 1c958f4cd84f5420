// What inspector/scan/pins.cpp gives the scan besides the public summary_of and pins_env.
#pragma once

#include <string>
#include <vector>

namespace wheelcheck::scan::detail {

// The published tables that could not be read ("DIST on IMAGE: ..." lines from run::fill_published, in the order
// they came), each said once: one line for the images that share a cause ("torch 2.10.0+cpu on every image: ..."
// when all of `images` do).
std::vector<std::string> published_warnings(const std::vector<std::string>& lines,
                                            const std::vector<std::string>& images);

}  // namespace wheelcheck::scan::detail
