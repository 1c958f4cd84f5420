// Which distribution ships a library (include/wheelcheck/toolkit.hpp): db/providers.json and the libraries the
// db's image distributions list, asked by soname (the image check's fixes and absences, the publisher check's
// dependencies); and the libraries a wheel's declared distributions ship.
#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include <nlohmann/json.hpp>

#include "wheelcheck/error.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::toolkit {

namespace {

// The db's image distributions as providers: each library soname a description or layer gives a distribution
// (FlagTree's libtriton.so), unless db/providers.json already names one for it. Read from the files as they are
// (no image is composed); a file that does not parse is the db's own check's to report.
void add_image_distributions(const image::Db& db, std::vector<Provider>& out) {
  std::vector<std::string> files;
  for (const char* folder : {"/images", "/layers"}) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(db.dir() + folder, ec)) {
      if (e.path().extension() == ".json") files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  std::map<std::string, std::size_t> by_name;  // normalized distribution -> index in out (added here)
  for (const auto& file : files) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(read_text_file(file, std::uint64_t{16} << 20));
    } catch (const std::exception&) {
      continue;
    }
    if (!j.is_object() || !j.contains("distributions") || !j["distributions"].is_array()) continue;
    for (const auto& d : j["distributions"]) {
      if (!d.is_object() || !d.contains("name") || !d["name"].is_string() || !d.contains("libraries")) continue;
      const std::string name = wheel::normalize_project_name(d["name"].get<std::string>());
      for (const auto& lib : d["libraries"]) {
        if (!lib.is_object() || !lib.contains("soname") || !lib["soname"].is_string()) continue;
        const std::string soname = lib["soname"].get<std::string>();
        // Another build's soname of a library a row names (a layer's Debian torch: libc10.so.2.6) is not that
        // distribution's as an index ships it: no provider of it.
        if (soname.empty() || project_of(out, soname) != nullptr) continue;
        auto it = by_name.find(name);
        if (it == by_name.end()) {
          Provider p;
          p.distributions = {name};
          p.kind = "package";
          p.source = "db/" + base_name(dir_name(file)) + "/" + base_name(file) + ": distribution " + name;
          out.push_back(std::move(p));
          it = by_name.emplace(name, out.size() - 1).first;
        }
        out[it->second].libraries.push_back(soname);
      }
    }
  }
}

}  // namespace

std::vector<Provider> load_providers(const image::Db& db) {
  std::vector<Provider> out;
  const std::string path = db.dir() + "/providers.json";
  if (!is_file(path)) {
    add_image_distributions(db, out);
    return out;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text_file(path, std::uint64_t{8} << 20));
  } catch (const nlohmann::json::exception& e) {
    throw bad_input(path + ": not JSON: " + e.what());
  }
  if (!j.is_object() || j.value("schema", "") != "wheelcheck-providers/1" || !j.contains("providers") ||
      !j["providers"].is_array())
    throw bad_input(path + ": not a wheelcheck-providers/1 document");
  std::size_t n = 0;
  for (const auto& e : j["providers"]) {
    ++n;
    const std::string where = path + ": providers[" + std::to_string(n - 1) + "]";
    try {
      Provider p;
      for (const auto& d : e.at("distributions"))
        p.distributions.push_back(wheel::normalize_project_name(d.get<std::string>()));
      p.kind = e.at("kind").get<std::string>();
      if (p.kind != "package" && p.kind != "runtime") throw bad_input(where + ": kind must be package or runtime");
      if (const std::string toolkit = e.value("toolkit", ""); !toolkit.empty()) {
        try {
          p.toolkit = image::parse_toolkit_kind(toolkit);
        } catch (const Error& ex) {
          throw bad_input(where + ": " + ex.what());
        }
      }
      p.toolkit_version = e.value("toolkit_version", "");
      p.libraries = e.value("libraries", std::vector<std::string>{});
      p.symbols = e.value("symbols", std::vector<std::string>{});
      p.namespaces = e.value("namespaces", "");
      p.abi = e.value("abi", "");
      p.source = "db/providers.json";
      if (p.distributions.empty()) throw bad_input(where + ": no distributions");
      out.push_back(std::move(p));
    } catch (const nlohmann::json::exception& ex) {
      throw bad_input(where + ": " + ex.what());
    }
  }
  add_image_distributions(db, out);
  return out;
}

const std::vector<Provider>& cached_providers(const image::Db& db) {
  static std::mutex lock;
  static std::map<std::string, std::vector<Provider>> loaded;
  std::lock_guard<std::mutex> hold(lock);
  auto it = loaded.find(db.dir());
  if (it != loaded.end()) return it->second;
  std::vector<Provider> providers;
  try {
    providers = load_providers(db);
  } catch (const Error&) {
    // A run goes on without the table (its answer rests on the image's own facts), where lint and scan
    // refuse a db whose providers.json does not read (exit 2).
    providers.clear();
  }
  return loaded.emplace(db.dir(), std::move(providers)).first->second;
}

const Provider* provider_of(const std::vector<Provider>& providers, const std::string& soname) {
  for (const auto& p : providers) {
    if (std::find(p.libraries.begin(), p.libraries.end(), soname) != p.libraries.end()) return &p;
  }
  return nullptr;
}

bool soname_matches(const std::string& listed, const std::string& need) {
  return need == listed || need.rfind(listed + ".", 0) == 0;
}

const Provider* project_of(const std::vector<Provider>& providers, const std::string& soname) {
  if (const Provider* p = provider_of(providers, soname)) return p;
  for (const auto& p : providers) {
    for (const auto& lib : p.libraries) {
      if (soname_matches(lib, soname)) return &p;
    }
  }
  return nullptr;
}

std::vector<lock::Requirement> declared_requirements(const WheelProfile& wheel) {
  lock::MarkerEnv variant_env;
  variant_env.values = {{"platform_system", "Linux"},
                        {"sys_platform", "linux"},
                        {"os_name", "posix"},
                        {"implementation_name", "cpython"},
                        {"platform_python_implementation", "CPython"}};
  lock::set_variant(variant_env, wheel);
  std::vector<lock::Requirement> out;
  for (const auto& text : wheel.metadata.requires_dist) {
    auto req = lock::read_requirement(text);
    if (req.error.empty() && req.marker.find("variant_") != std::string::npos) {
      bool holds = true;
      try {
        holds = lock::evaluate_marker(req.marker, variant_env);
      } catch (const Error&) {
        holds = true;  // a marker that cannot be read without an image counts as holding
      }
      if (!holds) continue;
    }
    out.push_back(std::move(req));
  }
  return out;
}

std::vector<policy::DependencyLibrary> dependency_libraries(const WheelProfile& wheel,
                                                            const std::vector<Provider>& providers) {
  const std::string self = wheel::normalize_project_name(wheel.filename.name);
  const auto reqs = declared_requirements(wheel);
  std::set<std::string> shipped;  // sonames and file names of the wheel's ELF members
  for (const auto& m : wheel.members) {
    if (!m.elf) continue;
    shipped.insert(base_name(m.path));
    if (m.elf->soname) shipped.insert(*m.elf->soname);
  }
  std::vector<policy::DependencyLibrary> out;
  for (const auto& m : wheel.members) {
    if (!m.elf) continue;
    for (const auto& n : m.elf->needed) {
      if (shipped.count(n) != 0 || std::any_of(out.begin(), out.end(), [&](const auto& d) { return d.soname == n; }))
        continue;
      const Provider* p = provider_of(providers, n);
      if (p == nullptr || std::find(p->distributions.begin(), p->distributions.end(), self) != p->distributions.end())
        continue;
      // The unconditional requirement naming one of its distributions.
      const auto req = std::find_if(reqs.begin(), reqs.end(), [&](const lock::Requirement& r) {
        return r.error.empty() && !r.extra_only &&
               std::find(p->distributions.begin(), p->distributions.end(), r.normalized) != p->distributions.end();
      });
      if (req == reqs.end()) continue;
      out.push_back({n, req->normalized, req->text});
    }
  }
  return out;
}

}  // namespace wheelcheck::toolkit
