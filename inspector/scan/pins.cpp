// Step 4 of the scan (inspector/scan/scan.cpp): the pins, chosen from the state; the published-table warnings said
// once; and the pins as shell assignments (`scan --pins`).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "inspector/scan/pins.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/gates.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/run.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::scan {

namespace {

std::string env_name(std::string s) {
  for (char& c : s) c = std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_';
  return s;
}

}  // namespace

namespace detail {

std::string version_of(const Listing& l) {
  try {
    return wheel::parse_filename(l.file.filename).version;
  } catch (const Error&) {
    return "";
  }
}

bool labelled_elsewhere(const index::File& f, const std::string& image, const std::vector<ScanTarget>& targets) {
  const auto t = std::find_if(targets.begin(), targets.end(), [&](const auto& s) { return s.name == image; });
  try {
    return t != targets.end() && !run::label_elsewhere(listing_profile(f), t->target.image).empty();
  } catch (const Error&) {
    return false;  // a file name that does not parse claims nothing
  }
}

namespace {

// Whether the project publishes anything for the image (pins only where it does): a file pip installs there
// whose label does not name another image's build, and whose check did not find pip would not install it.
bool pins_targets_any(const PinSource& s, const std::vector<const Listing*>& files, const ScanTarget& t) {
  for (const auto* l : files) {
    try {
      if (!run::not_targeted(listing_profile(l->file), t.target.image).empty()) continue;
    } catch (const Error&) {
      continue;
    }
    if (labelled_elsewhere(l->file, t.name, s.targets)) continue;
    const auto remembered = s.state.remembered(l->file.filename, l->file.sha256());
    if (!remembered) return true;
    try {
      const auto cell = remembered->on(t.name);
      if (!cell || cell->cell.targeted) return true;
    } catch (const Error&) {
      return true;  // a record that cannot be read: pin_of says so
    }
  }
  return false;
}

bool pins_is_new(const PinSource& s, const Listing& l) {
  return !(s.since && l.file.upload_time && l.file.upload_time->substr(0, 10) < *s.since);
}

// Why the file is not the pick on the image before its check is looked at ("" when it may be).
std::string pins_refusal(const Listing& l, const WheelProfile& p, const Place& place, const image::Image& image) {
  if (l.file.yanked) return "yanked" + (l.file.yanked_reason.empty() ? "" : ": " + l.file.yanked_reason);
  if (!place.refusal.empty()) return place.refusal;
  if (auto variant = variant_mismatch(p, image); !variant.empty()) return "wrong toolkit variant: " + variant;
  if (auto why = run::not_targeted(p, image); !why.empty()) return "not for this image: " + why;
  if (auto label = run::label_elsewhere(p, image); !label.empty()) return "its label names another build: " + label;
  return "";
}

Pin pin_of(const PinSource& s, const std::string& project, const std::vector<const Listing*>& files,
           const ScanTarget& t, std::map<const Listing*, Place>& places) {
  Pin pin{t.name, project, std::nullopt, {}};
  for (const auto* l : files) {
    std::string version, reason;
    try {
      const auto p = listing_profile(l->file);
      version = p.filename.version;
      reason = pins_refusal(*l, p, places[l], t.target.image);
    } catch (const Error& e) {
      reason = std::string("unreadable file name: ") + e.what();
    }
    if (reason.empty()) {
      const auto remembered = s.state.remembered(l->file.filename, l->file.sha256());
      if (!remembered) {
        reason = pins_is_new(s, *l) ? "not checked yet (another shard checks it)" : "not checked (older than --since)";
      } else if (remembered->error) {
        reason = "could not be read: " + *remembered->error;
      } else {
        // The state's record read back into a typed cell: the pick compares verdicts, not words.
        std::optional<Checked> cell;
        bool readable = true;
        try {
          cell = remembered->on(t.name);
        } catch (const Error& e) {
          readable = false;
          reason = std::string("its record in the state cannot be read: ") + e.what();
        }
        if (!readable) {
          // the reason says why; the next file is tried
        } else if (!cell) {
          reason = "not checked against " + t.name;
        } else if (!cell->cell.targeted) {
          reason = cell->cell.headline.empty() ? "not targeted" : cell->cell.headline;
        } else if (cell->cell.report.verdict == verdict::Verdict::Incompatible) {
          reason = "incompatible: " + cell->cell.headline;
        } else {
          Pick pick{l->file.filename,
                    version,
                    cell->cell.report.verdict,
                    cell->gates,
                    net::redact_url(l->file.url),
                    l->file.sha256(),
                    std::nullopt,
                    {}};
          if (!places[l].label.empty()) pick.variant = places[l].label;
          for (const auto* other : files) {  // variants of the release whose support is unknown on the image
            if (version_of(*other) == version && places[other].undecided)
              pick.undecided.push_back(places[other].refusal);
          }
          pin.pick = std::move(pick);
          break;
        }
      }
    }
    pin.passed.push_back({l->file.filename, version, reason});
  }
  return pin;
}

}  // namespace

std::vector<Pin> pins(const PinSource& s) {
  static const Releases k_no_releases;
  std::vector<Pin> out;
  for (const auto& project : s.projects) {
    std::vector<const Listing*> files;
    for (const auto& l : s.listings) {
      if (l.project == project) files.push_back(&l);
    }
    std::stable_sort(files.begin(), files.end(), [](const Listing* a, const Listing* b) {
      const std::string va = version_of(*a), vb = version_of(*b);
      const auto c = wheel::compare_versions(va, vb);
      return c ? *c > 0 : va > vb;
    });
    const auto releases = s.releases.find(project);
    const Releases& mine = releases == s.releases.end() ? k_no_releases : releases->second;
    for (const auto& t : s.targets) {
      if (files.empty() || !(s.images_given || pins_targets_any(s, files, t))) continue;
      // Within a release, the order an installer with variants prefers on this image.
      std::map<const Listing*, Place> places;
      std::vector<std::string> versions;
      std::vector<std::size_t> ranks;
      for (const auto* l : files) {
        try {
          places[l] = place_of(wheel::parse_filename(l->file.filename), mine, t.target.image);
        } catch (const Error&) {
          places[l] = Place{};  // a file name that does not parse is no variant: pin_of says why it is passed over
        }
        versions.push_back(version_of(*l));
        ranks.push_back(places[l].rank);
      }
      std::vector<const Listing*> ordered;
      for (const auto i : release_order(versions, ranks)) ordered.push_back(files[i]);
      out.push_back(pin_of(s, project, ordered, t, places));
    }
  }
  return out;
}

std::vector<std::string> published_warnings(const std::vector<std::string>& lines,
                                            const std::vector<std::string>& images) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> on_images;  // the line with "{}" for the image -> the images
  for (const auto& line : lines) {
    std::string key = line, image;
    for (const auto& name : images) {
      const std::string on = " on " + name + ": ";
      if (const auto at = line.find(on); at != std::string::npos) {
        key = line.substr(0, at) + " on {}: " + line.substr(at + on.size());
        image = name;
        break;
      }
    }
    auto [it, added] = on_images.try_emplace(key);
    if (added) order.push_back(key);
    if (!image.empty() && std::find(it->second.begin(), it->second.end(), image) == it->second.end())
      it->second.push_back(image);
  }
  std::vector<std::string> out;
  for (const auto& key : order) {
    const auto& on = on_images.at(key);
    const auto at = key.find("{}");
    if (at == std::string::npos) {
      out.push_back(key);
      continue;
    }
    const std::string where =
        on.size() == images.size() && on.size() > 1 ? "every image" : (on.size() > 1 ? join(on, ", ") : on.front());
    out.push_back(key.substr(0, at) + where + key.substr(at + 2));
  }
  return out;
}

}  // namespace detail

void write_pins_env(const Report& report, const std::function<void(std::string_view)>& write) {
  std::string out = fmt::format("# wheelcheck scan pins ({}), generated {}\n", k_report_schema, report.generated_at);
  out += "# <PROJECT>_VERSION_<IMAGE>, <PROJECT>_WHEEL_<IMAGE>, <PROJECT>_URL_<IMAGE>, <PROJECT>_SHA256_<IMAGE>\n";
  out += "# (<PROJECT>_VARIANT_<IMAGE>: the wheel variant's label, for a variant)\n";
  out +=
      "# (for pip install --require-hashes \"$URL\" --hash=sha256:$SHA256) and <PROJECT>_GATES_<IMAGE> (the gates it "
      "needs)\n";
  std::set<std::string> images;
  report.each_pin([&](const Pin& p) { images.insert(p.image); });
  write(out);
  report.each_pin([&](const Pin& p) {
    const std::string project = env_name(p.project);
    const std::string image = env_name(p.image);
    if (!p.pick) {
      out = fmt::format("# {} on {}: nothing usable ({} file{} passed over; the report's pins say why): no pin\n",
                        p.project, p.image, p.passed.size(), p.passed.size() == 1 ? "" : "s");
      write(out);
      return;
    }
    const Pick& pick = *p.pick;
    out.clear();
    std::string gates;
    for (const auto& [k, v] : pick.gates) gates += (gates.empty() ? "" : " ") + k + "=" + v;
    out +=
        fmt::format("# {} on {}: {} ({}{})\n", p.project, p.image, pick.filename, verdict::verdict_name(pick.verdict),
                    pick.variant ? ", variant " + *pick.variant : std::string());
    const std::string suffix = images.size() == 1 ? "" : "_" + image;
    out += fmt::format("{}_VERSION{}={}\n", project, suffix, gates::shell_single_quote(pick.version));
    out += fmt::format("{}_WHEEL{}={}\n", project, suffix, gates::shell_single_quote(pick.filename));
    out += fmt::format("{}_URL{}={}\n", project, suffix, gates::shell_single_quote(pick.url));
    out += fmt::format("{}_SHA256{}={}\n", project, suffix, gates::shell_single_quote(pick.sha256));
    out += fmt::format("{}_GATES{}={}\n", project, suffix, gates::shell_single_quote(gates));
    if (pick.variant)
      out += fmt::format("{}_VARIANT{}={}\n", project, suffix, gates::shell_single_quote(*pick.variant));
    write(out);
  });
}

std::string pins_env(const Report& report) {
  std::string out;
  write_pins_env(report, [&](std::string_view piece) { out.append(piece); });
  return out;
}

}  // namespace wheelcheck::scan
