// The scan report's counts (summary_of), the published-table warnings said once, and the pins as shell
// assignments (`scan --pins`).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "inspector/scan/pins.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/gates.hpp"
#include "wheelcheck/scan.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::scan {

namespace {

using Json = nlohmann::ordered_json;

}  // namespace

Json summary_of(const Json& wheels, std::uint64_t seen) {
  Json verdicts{{"compatible", 0}, {"degraded", 0}, {"incompatible", 0}, {"unknown", 0}, {"not-targeted", 0}};
  int errors = 0;
  for (const auto& w : wheels) {
    if (!w["error"].is_null()) ++errors;
    for (const auto& r : w["results"]) {
      const std::string key = r["targeted"].get<bool>() ? r["verdict"].get<std::string>() : "not-targeted";
      verdicts[key] = verdicts[key].get<int>() + 1;
    }
  }
  return Json{{"wheels_seen", seen},
              {"new", wheels.size()},
              {"checked", wheels.size() - static_cast<std::size_t>(errors)},
              {"errors", errors},
              {"verdicts", verdicts}};
}

namespace {

std::string env_name(std::string s) {
  for (char& c : s) c = std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_';
  return s;
}

}  // namespace

namespace detail {

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

std::string pins_env(const Json& report) {
  std::string out = fmt::format("# wheelcheck scan pins ({}), generated {}\n", report.value("schema", ""),
                                report.value("generated_at", ""));
  out += "# <PROJECT>_VERSION_<IMAGE>, <PROJECT>_WHEEL_<IMAGE>, <PROJECT>_URL_<IMAGE>, <PROJECT>_SHA256_<IMAGE>\n";
  out += "# (<PROJECT>_VARIANT_<IMAGE>: the wheel variant's label, for a variant)\n";
  out +=
      "# (for pip install --require-hashes \"$URL\" --hash=sha256:$SHA256) and <PROJECT>_GATES_<IMAGE> (the gates it "
      "needs)\n";
  std::set<std::string> images;
  for (const auto& p : report["pins"]) images.insert(p["image"].get<std::string>());
  for (const auto& p : report["pins"]) {
    const std::string project = env_name(p["project"]);
    const std::string image = env_name(p["image"]);
    if (p["pick"].is_null()) {
      out += fmt::format("# {} on {}: nothing usable ({} file{} passed over; the report's pins say why): no pin\n",
                         p["project"].get<std::string>(), p["image"].get<std::string>(), p["passed_over"].size(),
                         p["passed_over"].size() == 1 ? "" : "s");
      continue;
    }
    const auto& pick = p["pick"];
    std::string gates;
    for (const auto& [k, v] : pick["gates"].items())
      gates += (gates.empty() ? "" : " ") + k + "=" + v.get<std::string>();
    out += fmt::format("# {} on {}: {} ({}{})\n", p["project"].get<std::string>(), p["image"].get<std::string>(),
                       pick["filename"].get<std::string>(), pick["verdict"].get<std::string>(),
                       pick.contains("variant") ? ", variant " + pick["variant"].get<std::string>() : std::string());
    const std::string suffix = images.size() == 1 ? "" : "_" + image;
    out += fmt::format("{}_VERSION{}={}\n", project, suffix,
                       gates::shell_single_quote(pick["version"].get<std::string>()));
    out +=
        fmt::format("{}_WHEEL{}={}\n", project, suffix, gates::shell_single_quote(pick["filename"].get<std::string>()));
    out += fmt::format("{}_URL{}={}\n", project, suffix, gates::shell_single_quote(pick.value("url", std::string())));
    out += fmt::format("{}_SHA256{}={}\n", project, suffix,
                       gates::shell_single_quote(pick.value("sha256", std::string())));
    out += fmt::format("{}_GATES{}={}\n", project, suffix, gates::shell_single_quote(gates));
    if (pick.contains("variant")) {
      out += fmt::format("{}_VARIANT{}={}\n", project, suffix,
                         gates::shell_single_quote(pick["variant"].get<std::string>()));
    }
  }
  return out;
}

}  // namespace wheelcheck::scan
