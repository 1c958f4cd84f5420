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
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "wheelcheck/util.hpp"
#include "wheelcheck/variant.hpp"

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

}  // namespace wheelcheck::variant
