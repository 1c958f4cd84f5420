// Export tables from published wheels (include/wheelcheck/published.hpp). The wheel is the one an installer
// picks for the image (lock::pick_wheel: its tags, the image's Python and platform, Requires-Python) among
// the files of the pinned version on the named index (lock::files_for), read through the profile cache:
// headers-only where the server answers byte ranges, the whole wheel verified against its sha256 with
// --verify full. Its shared libraries replace the distribution's declared ones, each with the facts a probe
// records (probes/files.cpp: dist_library_of) and the export table nm would list (exports::Table).
#include "wheelcheck/published.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "probes/detail.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/index.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::published {

namespace {

// "torch==2.10.0+cpu" -> a lock package pinned to that version; Error(BadInput) for anything else.
lock::Package pinned_package(const std::string& requirement, const std::string& what) {
  std::size_t end = 0;
  while (end < requirement.size()) {
    const char c = requirement[end];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) break;
    ++end;
  }
  std::string rest(trim(std::string_view(requirement).substr(end)));
  lock::Package p;
  p.name = requirement.substr(0, end);
  p.source = what;
  const bool arbitrary = rest.rfind("===", 0) == 0;
  if (p.name.empty() || rest.rfind("==", 0) != 0 || rest.find('*') != std::string::npos ||
      rest.find(',') != std::string::npos) {
    throw bad_input(what + ": the requirement \"" + requirement + "\" does not pin one version (NAME==VERSION)");
  }
  p.version = std::string(trim(std::string_view(rest).substr(arbitrary ? 3 : 2)));
  p.specifier = rest;
  if (p.version.empty()) throw bad_input(what + ": the requirement \"" + requirement + "\" names no version");
  return p;
}

// A member's path under site-packages: a .data/purelib or .data/platlib member is installed at its rest.
std::string site_relative(const std::string& member) {
  const auto data = member.find(".data/");
  const auto slash = member.find('/');
  if (data != std::string::npos && slash == data + 5) {
    const std::string rest = member.substr(data + 6);
    for (const char* scheme : {"purelib/", "platlib/"}) {
      if (rest.rfind(scheme, 0) == 0) return rest.substr(std::string_view(scheme).size());
    }
    return "";  // data, scripts, headers: not under site-packages
  }
  return member;
}

std::string short_sha(const std::string& sha) {
  return sha.size() > 12 ? sha.substr(0, 12) : sha;
}

}  // namespace

bool lacks_tables(const image::Distribution& d) {
  if (d.libraries.empty()) return true;
  return std::any_of(d.libraries.begin(), d.libraries.end(),
                     [](const image::DistLibrary& l) { return l.exports.empty() && l.exports_file.empty(); });
}

bool needed_by(const image::Distribution& d, const std::vector<const WheelProfile*>& wheels) {
  const std::string name = wheel::normalize_project_name(d.name);
  std::set<std::string> provides;
  for (const auto& l : d.libraries) {
    if (!l.soname.empty()) provides.insert(l.soname);
    provides.insert(l.path.substr(l.path.find_last_of('/') + 1));
  }
  bool needed = false;
  for (const WheelProfile* w : wheels) {
    if (w == nullptr) continue;
    if (wheel::normalize_project_name(w->filename.name) == name) return false;  // the set installs its own
    for (const auto& r : w->metadata.requires_dist) {
      if (r.find("extra ==") != std::string::npos || r.find("extra==") != std::string::npos) continue;
      std::size_t end = 0;
      while (end < r.size() &&
             (std::isalnum(static_cast<unsigned char>(r[end])) || r[end] == '-' || r[end] == '_' || r[end] == '.'))
        ++end;
      if (wheel::normalize_project_name(r.substr(0, end)) == name) needed = true;
    }
    for (const auto& m : w->members) {
      if (!m.elf) continue;
      for (const auto& n : m.elf->needed) {
        if (provides.count(n) != 0) needed = true;
      }
    }
  }
  return needed;
}

Read read(const image::Distribution& d, const image::Image& image, net::Client& client, const Options& options,
          const std::string& key_prefix) {
  if (!d.published)
    throw usage_error(d.name + " " + d.version + ": the description does not say where it is published");
  const image::Published& pub = *d.published;
  Read out;
  out.outcome.distribution = d.name + " " + d.version;
  out.outcome.where = pub.where();
  remote::Fetch fetch;
  fetch.mode = options.mode;
  std::string url;
  if (!pub.url.empty()) {
    url = pub.url;
    fetch.sha256 = pub.sha256;
  } else {
    const lock::Package package = pinned_package(pub.requirement, out.outcome.distribution + " (published)");
    const std::string page_url = index::project_url(pub.index, package.name);
    if (options.log)
      options.log(fmt::format("{}: looking for {} on {}", out.outcome.distribution, pub.requirement,
                              net::redact_url(pub.index)));
    const net::Response response = client.get(page_url, index::k_accept);
    const index::ProjectPage page =
        index::parse_project_page(response.body, response.content_type, response.url, package.name);
    const std::vector<lock::File> files = lock::files_for(page, package);
    const lock::Pick pick = lock::pick_wheel(files, package, image);
    if (pick.file == nullptr) {
      throw bad_input(fmt::format("{} on {}: no wheel for this image ({})", pub.requirement, net::redact_url(pub.index),
                                  pick.why.empty() ? "none listed" : pick.why));
    }
    url = pick.file->url;
    fetch.sha256 = pick.file->sha256();
  }
  if (options.log)
    options.log(fmt::format("{}: reading the export tables of {}", out.outcome.distribution, net::redact_url(url)));
  remote::Fetched fetched = remote::inspect_url(url, fetch, options.inspect, options.cache, client);
  const WheelProfile& profile = fetched.profile;
  if (wheel::normalize_project_name(profile.filename.name) != wheel::normalize_project_name(d.name)) {
    throw bad_input(
        fmt::format("{} is a wheel of {}, not of {}", profile.filename.filename, profile.filename.name, d.name));
  }
  out.outcome.wheel = profile.filename.filename;
  out.outcome.url = net::redact_url(url.substr(0, url.find('#')));
  out.outcome.sha256 = profile.sha256;
  out.outcome.wheel_size = profile.size;
  out.outcome.bytes_fetched = fetched.bytes_fetched;
  out.outcome.from_cache = fetched.from_cache;
  out.outcome.headers_only = profile.integrity == k_integrity_headers;

  image::Distribution filled = d;
  filled.libraries.clear();
  filled.exports_unknown.clear();
  for (const auto& m : profile.members) {
    if (!m.elf || m.elf->type != elf::FileType::Shared) continue;
    const std::string rel = site_relative(m.path);
    if (rel.empty()) continue;
    image::DistLibrary l = probe::dist_library_of(*m.elf, rel);
    const std::string key = key_prefix + rel + ".exports.gz";
    exports::Table table =
        exports::Table::from_binary(*m.elf, rel.substr(rel.find_last_of('/') + 1), d.location + "/" + rel);
    l.exports = key;
    out.tables.emplace(key, std::move(table));
    filled.libraries.push_back(std::move(l));
  }
  if (filled.libraries.empty()) {
    throw bad_input(fmt::format("{} has no shared library: nothing of {} to read", profile.filename.filename, d.name));
  }
  filled.filled_from = fmt::format(
      "{} (sha256 {}{}), {}", out.outcome.url, short_sha(profile.sha256), profile.sha256.empty() ? "unknown" : "",
      out.outcome.from_cache ? "from the profile cache"
      : out.outcome.headers_only
          ? fmt::format("read headers-only: {} of {}", format_size(fetched.bytes_fetched), format_size(profile.size))
          : "downloaded whole and verified");
  out.distribution = std::move(filled);
  return out;
}

std::vector<Outcome> fill(image::Image& image, std::map<std::string, exports::Table>& tables,
                          const std::vector<const WheelProfile*>& wheels, net::Client& client, const Options& options) {
  std::vector<Outcome> outcomes;
  for (auto& d : image.distributions) {
    if (!d.published || !lacks_tables(d) || !needed_by(d, wheels)) continue;
    const std::string prefix = "published/" + wheel::normalize_project_name(d.name) + "/";
    try {
      if (net::offline()) throw bad_input("not read: WHEELCHECK_OFFLINE is set");
      Read r = read(d, image, client, options, prefix);
      for (auto& l : r.distribution.libraries) l.exports_file = "mem:" + l.exports;
      for (auto& [key, table] : r.tables) tables.insert_or_assign(key, std::move(table));
      d = std::move(r.distribution);
      outcomes.push_back(std::move(r.outcome));
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Internal) throw;
      Outcome o;
      o.offline = net::offline();
      o.distribution = d.name + " " + d.version;
      o.where = d.published->where();
      o.error = e.what();
      // Offline or refused: today's condition, naming the index that could not be read.
      d.exports_unknown =
          fmt::format("its published wheel ({}{}) could not be read: {}", net::redact_url(o.where),
                      d.published->requirement.empty() ? "" : ", " + d.published->requirement, e.what());
      for (auto& l : d.libraries) {
        if (l.exports.empty()) l.exports_unknown.clear();  // the distribution's reason is the one to say
      }
      d.published.reset();  // tried once: later checks of the same run say the same, without asking again
      outcomes.push_back(std::move(o));
    }
  }
  return outcomes;
}

}  // namespace wheelcheck::published
