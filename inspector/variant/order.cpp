// The order in which an installer with variant support prefers a release's variants on a machine (PEP 825's
// selection, as variantlib's resolver computes it):
//   1. A variant is compatible when, for each feature it lists, one of its values is among the values the
//      machine supports for that feature; else it is dropped.
//   2. The supported properties are sorted: by namespace (default-priorities.namespace), then by feature
//      (default-priorities.feature, else the provider's order), then by value (default-priorities.property,
//      else the provider's order, best first). Each (namespace, feature) is one place in a rank tuple.
//   3. A variant's rank tuple holds, per place, the position of its best supported value there, and "last"
//      where it lists nothing; the lowest tuple wins, ties keep the file's order. A variant with more of the
//      machine's features thus wins over one with fewer. The null variant comes after every other.
// A feature whose support is unknown (an image fact not stated) leaves the variant undecided: it may fit.
//
// against_image applies the same rules to one variant wheel checked by file (its own variant.json as the
// release), and marker_properties says what its Requires-Dist markers see, by the dialect of its file.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "wheelcheck/image.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/variant.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::variant {

namespace {

constexpr std::size_t k_last = std::numeric_limits<std::size_t>::max();

std::size_t position(const std::vector<std::string>& list, std::string_view item) {
  const auto it = std::find(list.begin(), list.end(), item);
  return it == list.end() ? k_last : static_cast<std::size_t>(it - list.begin());
}

// The places of the rank tuple: the machine's features, sorted by the file's priorities.
struct Place {
  std::string ns;
  std::string feature;
  Values values;  // sorted by the property priorities
};

std::vector<Place> places(const File& release, const Support& support) {
  std::vector<Place> out;
  for (const auto& f : support.features) {
    Place p{f.ns, f.name, f.values};
    if (const auto it = release.property_priorities.find(f.ns); it != release.property_priorities.end()) {
      if (const auto fit = it->second.find(f.name); fit != it->second.end()) {
        const auto& pri = fit->second;
        std::stable_sort(p.values.begin(), p.values.end(), [&](const std::string& a, const std::string& b) {
          return position(pri, a) < position(pri, b);
        });
      }
    }
    out.push_back(std::move(p));
  }
  std::stable_sort(out.begin(), out.end(), [&](const Place& a, const Place& b) {
    const auto na = position(release.namespace_priorities, a.ns), nb = position(release.namespace_priorities, b.ns);
    if (na != nb) return na < nb;
    if (a.ns != b.ns) return false;
    std::vector<std::string> none;
    const auto it = release.feature_priorities.find(a.ns);
    const auto& fp = it == release.feature_priorities.end() ? none : it->second;
    return position(fp, a.feature) < position(fp, b.feature);
  });
  return out;
}

}  // namespace

std::vector<Ranked> order(const File& release, const Support& support) {
  const auto tuple_places = places(release, support);
  std::vector<Ranked> compatible, rest, null_variant;
  for (const auto& label : release.labels) {
    const Properties& props = release.variants.at(label);
    Ranked r;
    r.label = label;
    r.rank.assign(tuple_places.size(), k_last);
    for (const auto& [ns, features] : props) {
      for (const auto& [feature, values] : features) {
        if (const auto d = support.disabled.find(ns); d != support.disabled.end()) {
          r.why_not.push_back(fmt::format("{} :: {} ({})", ns, feature, d->second));
          continue;
        }
        if (support.is_unknown(ns, feature)) {
          const auto it = support.unknown.find(ns + " :: " + feature);
          r.depends_on.push_back(it != support.unknown.end() ? it->second : support.unknown.at(ns));
          continue;
        }
        const Values* have = support.values(ns, feature);
        bool fits = false;
        for (std::size_t i = 0; i < tuple_places.size(); ++i) {
          if (tuple_places[i].ns != ns || tuple_places[i].feature != feature) continue;
          for (const auto& v : values) {
            const auto pos = position(tuple_places[i].values, v);
            if (pos != k_last) {
              fits = true;
              r.rank[i] = std::min(r.rank[i], pos);
            }
          }
        }
        if (!fits) {
          r.why_not.push_back(fmt::format("{} :: {} :: {} (the machine supports {})", ns, feature, join(values, ", "),
                                          have == nullptr || have->empty() ? std::string("none") : join(*have, ", ")));
        }
      }
    }
    // Repeated unknowns said once.
    std::sort(r.depends_on.begin(), r.depends_on.end());
    r.depends_on.erase(std::unique(r.depends_on.begin(), r.depends_on.end()), r.depends_on.end());
    if (!r.why_not.empty()) {
      r.state = Ranked::State::Incompatible;
      rest.push_back(std::move(r));
    } else if (!r.depends_on.empty()) {
      r.state = Ranked::State::Undecided;
      rest.push_back(std::move(r));
    } else if (props.empty()) {
      null_variant.push_back(std::move(r));
    } else {
      compatible.push_back(std::move(r));
    }
  }
  std::stable_sort(compatible.begin(), compatible.end(),
                   [](const Ranked& a, const Ranked& b) { return a.rank < b.rank; });
  std::stable_partition(rest.begin(), rest.end(), [](const Ranked& r) { return r.state == Ranked::State::Undecided; });
  std::vector<Ranked> out = std::move(compatible);
  for (auto* part : {&null_variant, &rest}) {
    for (auto& r : *part) out.push_back(std::move(r));
  }
  return out;
}

Properties marker_properties(const Declared& declared, const Support* support, bool* partial) {
  if (partial != nullptr) *partial = false;
  const Properties* props = declared.properties();
  if (props == nullptr) return {};
  if (!declared.file || declared.file->dialect != Dialect::V011) return *props;
  if (support == nullptr) {
    if (partial != nullptr) *partial = true;
    return *props;
  }
  Properties out;
  for (const auto& [ns, features] : *props) {
    if (support->disabled.count(ns) != 0) continue;
    for (const auto& [feature, values] : features) {
      if (support->is_unknown(ns, feature)) {
        if (partial != nullptr) *partial = true;
        out[ns][feature] = values;
        continue;
      }
      const Values* have = support->values(ns, feature);
      Values kept;
      for (const auto& v : values) {
        if (have != nullptr && std::find(have->begin(), have->end(), v) != have->end()) kept.push_back(v);
      }
      if (!kept.empty()) out[ns][feature] = std::move(kept);
    }
  }
  return out;
}

namespace {

// "12.8, 12.7, 12.6 ... 11 (42 values)": a provider's list of supported values, short.
std::string short_values(const Values& values) {
  constexpr std::size_t k_shown = 4;
  if (values.empty()) return "nothing";
  if (values.size() <= k_shown + 1) return join(values, ", ");
  return fmt::format("{} ... {} ({} values)", join(Values(values.begin(), values.begin() + k_shown), ", "),
                     values.back(), values.size());
}

// Who would select by the file, for the sentence: "uv's preview (0.13.x), which reads its PEP 825 v0.1.1
// variant.json".
std::string selecting_installer(const File& file) {
  const std::string who = readers_text(file.dialect);
  if (who.empty()) {
    return fmt::format(
        "no installer listed reads its variant.json ({}); an installer with variant support that "
        "did",
        file.schema.empty() ? std::string("no $schema") : "schema " + file.schema);
  }
  std::string out =
      fmt::format("a variant-aware installer ({}, which reads its {} variant.json", who, dialect_text(file.dialect));
  if (file.dialect == Dialect::V003) out += "; uv's preview refuses the file";
  return out + ")";
}

}  // namespace

std::vector<verdict::Finding> against_image(const WheelProfile& wheel, const image::Image& image) {
  std::vector<verdict::Finding> out;
  const auto d = declared(wheel);
  if (!d || !d->file) return out;
  const Properties* props = d->properties();
  if (props == nullptr || props->empty()) return out;
  const File& file = *d->file;
  const std::string label = d->label.empty() ? std::string("null") : d->label;
  const Support support = supported(image, file);
  const std::string installer = selecting_installer(file);
  const std::string pip =
      "pip ignores variants and installs it all the same, so what its members load here decides the verdict";
  std::vector<std::string> waits, waiting_properties;
  for (const auto& [ns, features] : *props) {
    for (const auto& [feature, values] : features) {
      const std::string property = property_text(ns, feature, join(values, ", "));
      std::string image_has, supports;
      if (const auto off = support.disabled.find(ns); off != support.disabled.end()) {
        image_has = off->second;
        supports = "nothing in " + ns;
      } else if (support.is_unknown(ns, feature)) {
        const auto it = support.unknown.find(ns + " :: " + feature);
        const std::string& why = it != support.unknown.end() ? it->second : support.unknown.at(ns);
        if (std::find(waits.begin(), waits.end(), why) == waits.end()) waits.push_back(why);
        waiting_properties.push_back(property);
        continue;
      } else {
        const Values* have = support.values(ns, feature);
        const bool fits = have != nullptr && std::any_of(values.begin(), values.end(), [&](const std::string& v) {
                            return std::find(have->begin(), have->end(), v) != have->end();
                          });
        if (fits) continue;
        for (const auto& f : support.features) {
          if (f.ns == ns && f.name == feature) image_has = f.basis;
        }
        supports = fmt::format("{} :: {} :: {}", ns, feature, have == nullptr ? "nothing" : short_values(*have));
      }
      verdict::Finding f;
      f.kind = verdict::FindingKind::VariantClaim;
      f.severity = verdict::Severity::Warning;
      f.library = label;
      f.required_version = property;
      f.candidates = {image_has};
      f.explanation = fmt::format(
          "{} would not select this wheel for this image: its variant {} declares {}, and the image has {}, which "
          "supports {}. That is an installer's choice, not the loader's: {}.",
          installer, label, property, image_has, supports, pip);
      f.fix = fmt::format(
          "install the variant of the release made for this image (an installer with variant support picks it from "
          "the release's -variants.json), or, if the image's fact is wrong, state it (wheelcheck image show {} says "
          "where each fact comes from; --assume states one)",
          image.name);
      f.evidence = {"variant.json: " + property, "the image: " + image_has};
      out.push_back(std::move(f));
    }
  }
  if (!waits.empty()) {
    verdict::Finding f;
    f.kind = verdict::FindingKind::VariantClaim;
    f.severity = verdict::Severity::Info;
    f.library = label;
    f.required_version = join(waiting_properties, "; ");
    f.explanation = fmt::format(
        "Whether {} would select this wheel for this image is not stated: its variant {} declares {}, and the "
        "image does not state {}. {}.",
        installer, label, join(waiting_properties, "; "), join(waits, "; "), pip);
    f.fix = "state the image's fact: " + join(waits, "; ");
    f.evidence = {"variant.json: " + join(waiting_properties, "; ")};
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace wheelcheck::variant
