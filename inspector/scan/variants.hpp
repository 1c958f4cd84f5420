// The scan's wheel variants (PEP 825 draft): each release's -variants.json from the project's page, and where
// a variant stands among its release's files for an image (inspector/scan/variants.cpp).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "wheelcheck/image.hpp"
#include "wheelcheck/index.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/variant.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::scan::detail {

// The version of `project` a page file is the variants file of (NAME-VERSION-variants.json); nullopt otherwise.
std::optional<std::string> variants_version(const std::string& filename, const std::string& project);

// A project's releases' variants files, by version as the file name writes it; what could not be read, why.
struct Releases {
  std::map<std::string, variant::File> files;
  std::map<std::string, std::string> errors;
  const variant::File* of(const std::string& version) const;  // PEP 440 equal; null when none
  std::string error_of(const std::string& version) const;
};

// A file's place among its release's files on an image: the variants in the drafts' order, then the null
// variant, then plain wheels (k_plain); `refusal` says why a variant is not for the image ("" when it may be).
inline constexpr std::size_t k_plain = std::size_t{1} << 20;
struct Place {
  std::size_t rank = k_plain;
  std::string label;       // "" for a plain wheel
  std::string refusal;     // the variant is not for the image: unsupported, undecided, or no variants file
  bool undecided = false;  // the refusal is that its support on the image is unknown (an image fact not stated)
};
Place place_of(const wheel::Filename& name, const Releases& releases, const image::Image& image);
// Files listed newest version first (`versions`, runs of one version together), reordered within each version
// by their places' `ranks`: the indexes in pin order.
std::vector<std::size_t> release_order(const std::vector<std::string>& versions, const std::vector<std::size_t>& ranks);

// A profile made of what the index says (file name, Requires-Python): enough for the tag checks.
WheelProfile listing_profile(const index::File& f);

// Why a variant cannot suit the image ("" when it can, or when either side does not say): a toolkit of another
// release than the image's (toolkit::mismatch: +cu126 on a CUDA 13 image, +cann8.5.0 on a CANN 9.0.0 image),
// whether its label or a member's runtime soname says so.
std::string variant_mismatch(const WheelProfile& p, const image::Image& im);

}  // namespace wheelcheck::scan::detail
