// pip's installation report (`pip install --dry-run --report FILE`, JSON read with nlohmann): "version"
// "1" and an "install" list; each entry's download_info (url, archive_info's hashes or hash, dir_info,
// vcs_info), metadata (name, version, requires_python) and is_yanked. pip evaluated the markers already
// (for the machine it ran on, which a warning names). Nesting is bounded before nlohmann builds the tree.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "inspector/env/lock_detail.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::lock::detail {

namespace {

constexpr std::size_t k_max_json_depth = 64;  // a report is 5 deep

using Json = nlohmann::json;

void check_json_depth(std::string_view body, const std::string& path) {
  if (json_deeper_than(body, k_max_json_depth)) {
    throw bad_input(path + ": JSON nested deeper than " + std::to_string(k_max_json_depth) +
                    ": not a pip installation report");
  }
}

const Json* member(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::optional<std::string> json_string(const Json& object, const char* key, const std::string& what) {
  const Json* v = member(object, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) throw bad_input(what + "." + key + " must be a string");
  return v->get<std::string>();
}

const Json* json_object(const Json& object, const char* key, const std::string& what) {
  const Json* v = member(object, key);
  if (v == nullptr) return nullptr;
  if (!v->is_object()) throw bad_input(what + "." + key + " must be an object");
  return v;
}

Package read_install(const Json& item, const std::string& what, const std::string& folder) {
  if (!item.is_object()) throw bad_input(what + " must be an object");
  Package p;
  p.source = what;
  const Json* metadata = json_object(item, "metadata", what);
  if (metadata == nullptr) throw bad_input(what + " has no metadata");
  const auto name = json_string(*metadata, "name", what + ".metadata");
  if (!name || name->empty()) throw bad_input(what + ".metadata has no name");
  p.name = *name;
  const std::string named = what + " (" + shown(p.name) + ")";
  p.source = named;
  p.version = json_string(*metadata, "version", named + ".metadata").value_or("");
  p.requires_python = json_string(*metadata, "requires_python", named + ".metadata");
  const Json* info = json_object(item, "download_info", named);
  if (info == nullptr) throw bad_input(named + " has no download_info");
  const auto url = json_string(*info, "url", named + ".download_info");
  if (!url || url->empty()) throw bad_input(named + ".download_info has no url");
  File f = file_at(*url, folder);
  if (const Json* archive = json_object(*info, "archive_info", named + ".download_info")) {
    if (const Json* hashes = json_object(*archive, "hashes", named + ".download_info.archive_info")) {
      for (const auto& [algorithm, value] : hashes->items()) {
        if (!value.is_string()) throw bad_input(named + ".download_info.archive_info.hashes values must be strings");
        const std::string alg = ascii_lower(algorithm), hex = ascii_lower(value.get<std::string>());
        if (alg == "sha256" && !is_sha256_hex(hex)) {
          throw bad_input(named + ": sha256 '" + shown(hex) + "' is not 64 hex digits");
        }
        f.hashes[alg] = hex;
      }
    }
    if (auto hash = json_string(*archive, "hash", named + ".download_info.archive_info")) {
      if (!add_hash_text(*hash, f.hashes)) {
        throw bad_input(named + ": archive_info.hash '" + shown(*hash) + "' is not ALGORITHM=HEX");
      }
    }
  }
  if (const Json* yanked = member(item, "is_yanked")) {
    if (!yanked->is_boolean()) throw bad_input(named + ".is_yanked must be true or false");
    f.yanked = yanked->get<bool>();
  }
  if (const Json* dir = json_object(*info, "dir_info", named + ".download_info")) {
    const Json* editable = member(*dir, "editable");
    const bool is_editable = editable != nullptr && editable->is_boolean() && editable->get<bool>();
    p.other = std::string(is_editable ? "an editable install of" : "a") + " local directory (" + shown(f.where()) + ")";
  } else if (const Json* vcs = json_object(*info, "vcs_info", named + ".download_info")) {
    const auto kind = json_string(*vcs, "vcs", named + ".download_info.vcs_info");
    const auto commit = json_string(*vcs, "commit_id", named + ".download_info.vcs_info");
    p.other = "a " + shown(kind.value_or("vcs")) + " checkout of " + shown(f.where()) +
              (commit ? " at " + shown(*commit) : std::string());
  } else if (f.is_wheel()) {
    p.wheels.push_back(std::move(f));
  } else {
    p.sdist = std::move(f);
  }
  return p;
}

void read_report(std::string_view text, const std::string& path, Lock& lock) {
  check_json_depth(text, path);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    throw bad_input(path + ": not JSON: " + shown(e.what()));
  }
  if (!j.is_object() || !j.contains("install") || !j["install"].is_array()) {
    throw bad_input(path +
                    " is not a pip installation report (pip install --dry-run --report FILE): no \"install\" list");
  }
  if (const Json* version = member(j, "version")) {
    if (!version->is_string()) throw bad_input(path + ": version must be a string (\"1\")");
    const std::string v = version->get<std::string>();
    const std::string major = v.substr(0, v.find('.'));
    if (major != "1") {
      throw bad_input(path + ": installation report version " + shown(v) + " is not one wheelcheck reads (it reads 1)");
    }
  }
  Warnings warnings(lock.warnings);
  const std::string folder = folder_of(path);
  const Json& install = j["install"];
  for (std::size_t i = 0; i < install.size(); ++i) {
    lock.packages.push_back(read_install(install[i], path + ": install[" + std::to_string(i) + "]", folder));
  }
  if (const Json* env = json_object(j, "environment", path)) {
    std::vector<std::string> facts;
    for (const char* key : {"python_full_version", "platform_machine", "sys_platform"}) {
      if (const Json* v = member(*env, key); v != nullptr && v->is_string()) {
        facts.push_back(std::string(key) + " " + shown(v->get<std::string>()));
      }
    }
    if (!facts.empty()) {
      warnings.add(path + ": pip resolved this report for " + join(facts, ", ") +
                   ": its markers were evaluated there, not for the image");
    }
  }
  warnings.finish();
}

}  // namespace

void read_pip_report(std::string_view text, const std::string& path, Lock& lock) {
  read_report(text, path, lock);
}

}  // namespace wheelcheck::lock::detail
