// The scan's wheel variants (inspector/scan/variants.hpp): a release's variants file is found beside its
// wheels on the project's page and read (through the state's conditional requests: it is mutable), and each
// variant's pin place on an image is the drafts' order of its release there (variant::order).
#include "inspector/scan/variants.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "wheelcheck/run.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::scan::detail {

std::optional<std::string> variants_version(const std::string& filename, const std::string& project) {
  const auto nv = variant::release_file_name(filename);
  if (!nv || wheel::normalize_project_name(nv->first) != wheel::normalize_project_name(project)) return std::nullopt;
  return nv->second;
}

const variant::File* Releases::of(const std::string& version) const {
  for (const auto& [v, f] : files) {
    const auto c = wheel::compare_versions(v, version);
    if (c ? *c == 0 : v == version) return &f;
  }
  return nullptr;
}

std::string Releases::error_of(const std::string& version) const {
  for (const auto& [v, e] : errors) {
    const auto c = wheel::compare_versions(v, version);
    if (c ? *c == 0 : v == version) return e;
  }
  return "";
}

Place place_of(const wheel::Filename& name, const Releases& releases, const image::Image& image) {
  Place p;
  if (!name.variant) return p;
  p.label = *name.variant;
  const variant::File* release = releases.of(name.version);
  if (release == nullptr) {
    const std::string error = releases.error_of(name.version);
    p.refusal = error.empty()
                    ? fmt::format(
                          "variant {}: its release has no -variants.json on the index, so no installer "
                          "takes it",
                          p.label)
                    : fmt::format("variant {}: its release's variants file could not be read ({})", p.label, error);
    return p;
  }
  const auto ranked = variant::order(*release, variant::supported(image, *release));
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const auto& r = ranked[i];
    if (r.label != p.label) continue;
    p.rank = i;
    if (r.state == variant::Ranked::State::Incompatible) {
      p.refusal = "variant " + p.label + ": the image does not support " + join(r.why_not, "; ");
    } else if (r.state == variant::Ranked::State::Undecided) {
      p.undecided = true;
      p.refusal =
          "variant " + p.label + ": whether the image supports it is unknown (" + join(r.depends_on, "; ") + ")";
    }
    return p;
  }
  p.refusal = "variant " + p.label + ", which its release's -variants.json does not list";
  return p;
}

std::vector<std::size_t> release_order(const std::vector<std::string>& versions,
                                       const std::vector<std::size_t>& ranks) {
  std::vector<std::size_t> group(versions.size()), out(versions.size());
  for (std::size_t i = 0; i < versions.size(); ++i) {
    group[i] = i == 0 || versions[i] != versions[i - 1] ? i : group[i - 1];
    out[i] = i;
  }
  std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) {
    return std::pair(group[a], ranks[a]) < std::pair(group[b], ranks[b]);
  });
  return out;
}

WheelProfile listing_profile(const index::File& f) {
  WheelProfile p;
  p.filename = wheel::parse_filename(f.filename);
  if (f.requires_python) p.metadata.requires_python = *f.requires_python;
  return p;
}

std::string variant_mismatch(const WheelProfile& p, const image::Image& im) {
  for (const auto& t : toolkit::wheel_toolkits(p)) {
    if (std::string why = toolkit::mismatch(t, im); !why.empty()) return why;
  }
  return "";
}

}  // namespace wheelcheck::scan::detail
