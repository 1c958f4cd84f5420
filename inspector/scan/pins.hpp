// What inspector/scan/pins.cpp gives the scan besides the public pins_env: the listed files and the images of a
// scan, step 4 (the pins, from the state), and the published-table warnings said once.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "inspector/scan/state.hpp"
#include "inspector/scan/variants.hpp"
#include "wheelcheck/index.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/scan.hpp"

namespace wheelcheck::scan::detail {

// A wheel file a project's page lists.
struct Listing {
  std::string project;  // as asked
  std::string index;
  index::File file;
};

// An image of the scan.
struct ScanTarget {
  std::string name;  // as the report and the state name it
  run::Target target;
};

// The version its file name says ("" when the name does not parse).
std::string version_of(const Listing& l);
// Whether the file's label or name says it is a build for another image than `image` (run::label_elsewhere); a
// file name that does not parse claims nothing.
bool labelled_elsewhere(const index::File& f, const std::string& image, const std::vector<ScanTarget>& targets);

// What the pins are chosen from: every file listed, the scan's images, the releases' variants files, and the
// state (every wheel checked by this or an earlier run).
struct PinSource {
  const std::vector<std::string>& projects;
  const std::vector<Listing>& listings;
  const std::vector<ScanTarget>& targets;
  const std::map<std::string, Releases>& releases;  // by project as asked
  State& state;
  bool images_given;                        // every image is pinned, whether the project publishes for it or not
  const std::optional<std::string>& since;  // files uploaded before it are not new
};
// Step 4: for each project and image, the newest usable file, and why each newer one was passed over.
std::vector<Pin> pins(const PinSource& source);

// The published tables that could not be read ("DIST on IMAGE: ..." lines from run::fill_published, in the order
// they came), each said once: one line for the images that share a cause ("torch 2.10.0+cpu on every image: ..."
// when all of `images` do).
std::vector<std::string> published_warnings(const std::vector<std::string>& lines,
                                            const std::vector<std::string>& images);

}  // namespace wheelcheck::scan::detail
