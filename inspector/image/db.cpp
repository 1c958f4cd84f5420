// The database of image descriptions (db/images, db/layers) and how one is found from any folder.
#include <dirent.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/preloads.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::image {

namespace {

// The folder of the running executable: /proc/self/exe, else (a chroot or container without /proc) the
// path execve was given (the auxiliary vector's AT_EXECFN), resolved as /proc would resolve it.
std::string exe_dir() {
  char buf[PATH_MAX];
  std::string p;
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    p.assign(buf, static_cast<std::size_t>(n));
  } else if (const auto* fn = reinterpret_cast<const char*>(::getauxval(AT_EXECFN)); fn != nullptr) {
    if (::realpath(fn, buf) != nullptr) p = buf;
  }
  if (p.empty()) return {};
  const auto slash = p.find_last_of('/');
  return slash == std::string::npos ? std::string{} : p.substr(0, slash);
}

std::vector<std::string> json_names(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0 && n[0] != '.')
      out.push_back(n.substr(0, n.size() - 5));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// Edit distance, for "did you mean".
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t prev = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}

// After all layers: facts that depend on others (the site-packages placeholder, LD_LIBRARY_PATH).
void finish(Image& im) {
  // A runner type's stated facts ("assumed"), after composition: each is listed in every answer.
  for (const auto& [fact, value] : im.assumed) {
    try {
      assume(im, fact, value, "assumed by the description");
    } catch (const Error& e) {
      throw bad_input(im.name + ": \"assumed\": " + e.what());
    }
  }
  std::string site;
  for (const auto& p : im.pythons) {
    if (!p.site_packages.empty()) {
      site = p.site_packages.front();
      break;
    }
  }
  for (auto& d : im.distributions) {
    if (d.location == k_site_placeholder) {
      if (!site.empty()) {
        d.location = site;
        if (d.python.empty() && !im.pythons.empty()) d.python = im.pythons.front().version;
      }
    }
  }
  auto add_dirs = [&](const std::string& value, bool bash_only) {
    for (const auto& dir : split(value, ":;", false)) {
      if (std::find(im.loader.ld_library_path.begin(), im.loader.ld_library_path.end(), dir) !=
          im.loader.ld_library_path.end())
        continue;
      im.loader.ld_library_path.push_back(dir);
      if (bash_only) im.bash_only_dirs.push_back(dir);
    }
  };
  if (auto it = im.env.find("LD_LIBRARY_PATH"); it != im.env.end()) add_dirs(it->second, false);
  // Environment only bash has (BASH_ENV): its folders count, as the image's users run it, and are marked so
  // that every answer found through them says so.
  if (auto it = im.bash_env.vars.find("LD_LIBRARY_PATH"); it != im.bash_env.vars.end()) add_dirs(it->second, true);
}

// "libcudart.so.13" -> 13: the CUDA runtime's major, from its soname.
std::optional<int> runtime_major(const std::string& soname) {
  constexpr std::string_view prefix = "libcudart.so.";
  if (soname.rfind(prefix, 0) != 0 || soname.size() == prefix.size() || soname.size() > prefix.size() + 3) {
    return std::nullopt;
  }
  const std::string digits = soname.substr(prefix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  return std::stoi(digits);
}

// A description's own CUDA toolkit version ("13.3" -> 13, 3); nullopt without one or for another toolkit.
std::optional<std::pair<int, int>> cuda_version(const Image& im) {
  if (!im.toolkit || im.toolkit->kind != ToolkitKind::Cuda || !im.toolkit->version.known()) return std::nullopt;
  const auto parts = split(*im.toolkit->version.value, ".", false);
  if (parts.size() < 2) return std::nullopt;
  try {
    return std::pair{std::stoi(parts[0]), std::stoi(parts[1])};
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

// A CUDA runtime the image declares without an export table (libcudart.so.13 of a FlagOS CUDA 13.3 image)
// is bound against the table of the same major's runtime that another description of the db holds, of the
// highest minor not above the image's: NVIDIA keeps the runtime's ABI within a major (minor version
// compatibility), so what 13.0 exports, 13.3 exports too. The table is partial for it: a symbol it lacks
// stays unknown (a later minor may add it), and Library::exports_lent says so.
void Db::lend_runtime_tables(Image& im) const {
  const auto version = cuda_version(im);
  if (!version) return;
  for (auto& l : im.libraries) {
    if (!l.exports_file.empty() || l.exports_unknown.empty()) continue;
    const auto major = runtime_major(l.soname);
    if (!major || *major != version->first) continue;
    std::optional<std::pair<int, int>> best;
    std::string file, from;
    for (const auto& name : layer_names()) {
      const std::string path = path_of(name);
      // Most descriptions never name the runtime: only those that do are parsed.
      if (path.empty() || read_text_file(path).find(l.soname) == std::string::npos) continue;
      const Image lender = load_file(path);
      const auto v = cuda_version(lender);
      if (!v || v->first != *major || v->second > version->second || (best && *v <= *best)) continue;
      // The runtime as the image's file, or as a distribution's (nvidia-cuda-runtime-cu12 in site-packages).
      std::vector<std::pair<std::string, std::string>> tables;  // soname, table file
      for (const auto& have : lender.libraries) tables.emplace_back(have.soname, have.exports_file);
      for (const auto& d : lender.distributions) {
        for (const auto& have : d.libraries) tables.emplace_back(have.soname, have.exports_file);
      }
      for (const auto& [soname, table] : tables) {
        if (soname != l.soname || table.empty() || !is_file(table)) continue;
        best = v;
        file = table;
        from = lender.name;
        break;
      }
    }
    if (!best) continue;
    l.exports_file = file;
    const std::string lender_version = fmt::format("{}.{}", best->first, best->second);
    const std::string& own = *im.toolkit->version.value;
    l.exports_lent =
        fmt::format("bound against CUDA {}'s {} table (db layer {}): the runtime keeps its ABI within major {}",
                    lender_version, l.soname, from, *major);
    l.exports_unknown = fmt::format(
        "CUDA {}'s own table is not in the db, and CUDA {}'s, which its other symbols are bound against, lacks "
        "this: a later minor may add symbols",
        own, lender_version);
  }
}

std::string Db::locate(const std::string& explicit_dir) {
  auto valid = [](const std::string& d) { return !d.empty() && is_dir(d + "/images"); };
  if (!explicit_dir.empty()) {
    if (!valid(explicit_dir)) throw usage_error("--db " + explicit_dir + ": not a wheelcheck db (no images/ folder)");
    return explicit_dir;
  }
  if (const char* env = std::getenv("WHEELCHECK_DB"); env != nullptr && *env != '\0') {
    if (!valid(env))
      throw usage_error(std::string("WHEELCHECK_DB=") + env + ": not a wheelcheck db (no images/ folder)");
    return env;
  }
  const std::string exe = exe_dir();
  if (!exe.empty()) {
    for (const std::string& cand : {exe + "/../share/wheelcheck/db", exe + "/../db", exe + "/db"}) {
      if (valid(cand)) return cand;
    }
  }
#ifdef WHEELCHECK_SOURCE_DB
  if (valid(WHEELCHECK_SOURCE_DB)) return WHEELCHECK_SOURCE_DB;
#endif
  throw usage_error(
      "cannot find wheelcheck's db/ (looked beside the executable and in the source tree); pass --db DIR or set "
      "WHEELCHECK_DB");
}

// The db in use also says what `import torch` preloads (db/preloads.json, read when a Space first needs it).
Db::Db(std::string dir) : m_dir(std::filesystem::weakly_canonical(dir).string()) {
  preloads::use_db(m_dir);
}

std::vector<std::string> Db::file_image_names() const {
  return json_names(m_dir + "/images");
}

std::vector<std::string> Db::image_names() const {
  std::vector<std::string> out = file_image_names();
  if (const auto* p = policies_if_present()) {
    for (const auto& pol : p->all()) out.push_back(pol.tag());
  }
  return out;
}

const policy::Policies* Db::policies_if_present() const {
  if (!m_policies) {
    if (!is_dir(m_dir + "/policies")) return nullptr;
    m_policies = policy::Policies::load(m_dir + "/policies");
  }
  return m_policies.get();
}

const policy::Policies& Db::policies() const {
  const auto* p = policies_if_present();
  if (p == nullptr)
    throw bad_input(m_dir + "/policies: absent (the packaging policies; scripts/gen-db.sh targets writes them)");
  return *p;
}

std::string Db::target_tag(std::string_view name) const {
  if (name.empty() || !path_of(name).empty()) return {};
  const auto* p = policies_if_present();
  if (p == nullptr) return {};
  if (const auto* pol = p->find(name)) return pol->tag();
  if (const auto* pol = p->find(std::string(name) + "_x86_64")) return pol->tag();  // today's names: x86_64
  return {};
}
std::vector<std::string> Db::layer_names() const {
  return json_names(m_dir + "/layers");
}

std::string Db::path_of(std::string_view name) const {
  if (name.empty() || name.find('/') != std::string_view::npos || name[0] == '.') return {};
  for (const char* sub : {"/images/", "/layers/"}) {
    std::string p = m_dir + sub + std::string(name) + ".json";
    if (is_file(p)) return p;
  }
  return {};
}

bool Db::has(std::string_view name) const {
  return !path_of(name).empty() || !target_tag(name).empty();
}

Image Db::compose_layers(Image image, std::vector<std::string>& stack) const {
  if (image.layers.empty()) return image;
  Image base;
  bool first = true;
  for (const auto& layer : image.layers) {
    Image l = load_composed(layer, stack);
    base = first ? std::move(l) : compose(base, l);
    first = false;
  }
  return compose(base, image);
}

Image Db::load_composed(std::string_view name, std::vector<std::string>& stack) const {
  if (std::find(stack.begin(), stack.end(), name) != stack.end()) {
    std::string chain;
    for (const auto& s : stack) chain += s + " -> ";
    throw bad_input("layer cycle: " + chain + std::string(name));
  }
  const std::string path = path_of(name);
  if (path.empty() && stack.empty()) {
    if (const std::string tag = target_tag(name); !tag.empty()) return policy::target_image(*policies().find(tag));
  }
  if (path.empty()) {
    std::string hint;
    std::size_t best = SIZE_MAX;
    for (const auto& list : {image_names(), layer_names()}) {
      for (const auto& n : list) {
        const std::size_t d = distance(name, n);
        if (d < best) {
          best = d;
          hint = n;
        }
      }
    }
    std::string msg = "no image or layer named \"" + std::string(name) + "\" in " + m_dir;
    if (!stack.empty()) msg += " (a layer of " + stack.back() + ")";
    if (best <= std::max<std::size_t>(1, name.size() / 3)) msg += "; did you mean \"" + hint + "\"?";
    msg += " (`wheelcheck images` lists them)";
    throw usage_error(msg);
  }
  stack.emplace_back(name);
  Image im = compose_layers(load_file(path), stack);
  stack.pop_back();
  return im;
}

Image Db::get(std::string_view name) const {
  std::vector<std::string> stack;
  Image im = load_composed(name, stack);
  finish(im);
  lend_runtime_tables(im);
  return im;
}

Image Db::resolve(const std::string& name_or_file) const {
  if (name_or_file.find('/') == std::string::npos && !is_file(name_or_file)) return get(name_or_file);
  if (!is_file(name_or_file)) throw usage_error(name_or_file + ": no such description file");
  std::vector<std::string> stack;
  Image im = compose_layers(load_file(name_or_file), stack);
  finish(im);
  lend_runtime_tables(im);
  return im;
}

}  // namespace wheelcheck::image
