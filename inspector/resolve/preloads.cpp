// What `import torch` loads from Python before torch._C (torch/__init__.py _load_global_deps), as data per torch
// version (db/preloads.json, with its sources), and how resolve::Space applies it:
//   1. torch/lib/libtorch_global_deps.so is loaded with RTLD_GLOBAL: it and everything it loads join the global
//      scope, so they define symbols for every later load (Object::rtld_global; load() puts them in the global
//      scope).
//   2. After it loads, when the version's condition holds (a libcudart is mapped, or one from an nvidia-* wheel),
//      or after it fails for a missing CUDA library, torch's _preload_cuda_deps loads, in the data's order, the
//      first file matching each step's glob in nvidia/<folder>/lib of the nvidia-* distributions present, with
//      ctypes.CDLL's default mode (RTLD_LOCAL): each is then "already loaded" by its soname for every later
//      DT_NEEDED, whatever the requester's RPATH says. A required step with no file makes `import torch` raise
//      ValueError (said in a note); the after-load phases catch it and stop there.
// Whether libtorch_global_deps.so loads is decided from its description: a CUDA library it needs that neither its
// RPATH/RUNPATH folders nor the image's libraries hold (torch and the nvidia-* wheels in different site folders)
// means it fails. A version the data does not state is said so in a note, and nothing is assumed.
#include "wheelcheck/preloads.hpp"

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::preloads {

namespace {

std::mutex g_preloads_mutex;
std::string g_preloads_dir;  // the db registered last ("" : image::Db::locate's)
std::shared_ptr<const Table> g_preloads_table;
std::string g_preloads_loaded_from;  // the folder g_preloads_table was read for
// Every table read stays alive: a Space of another thread may hold one while a later db is opened.
std::vector<std::shared_ptr<const Table>> g_preloads_kept;
std::string g_preloads_error;

Phase read_phase(const nlohmann::json& j, const std::string& where) {
  Phase p;
  p.when = j.value("when", "");
  p.required = j.value("required", true);
  if (j.contains("steps")) {
    for (const auto& s : j.at("steps")) {
      Step step;
      step.folder = s.at("folder").get<std::string>();
      step.file = s.at("file").get<std::string>();
      step.optional = s.value("optional", false);
      step.cuda_major_at_least = s.value("cuda_major_at_least", 0);
      if (step.folder.empty() || step.file.empty() || step.folder.find('/') != std::string::npos)
        throw bad_input(where + ": a step needs a folder (one name) and a file");
      p.steps.push_back(std::move(step));
    }
  }
  return p;
}

// The release numbers of a version ("2.10.0a0+cu130" -> 2, 10, 0); empty when it does not start with one.
std::vector<int> release_of(std::string_view v) {
  std::vector<int> out;
  std::size_t i = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
    int n = 0;
    std::size_t digits = 0;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])) && digits < 9) {
      n = n * 10 + (v[i++] - '0');
      ++digits;
    }
    out.push_back(n);
    if (i + 1 < v.size() && v[i] == '.' && std::isdigit(static_cast<unsigned char>(v[i + 1]))) {
      ++i;
    } else {
      break;
    }
  }
  return out;
}

bool release_less(std::vector<int> a, std::vector<int> b) {
  const std::size_t n = std::max(a.size(), b.size());
  a.resize(n, 0);
  b.resize(n, 0);
  return a < b;
}

}  // namespace

Table load(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text_file(path, std::uint64_t{4} << 20));
  } catch (const nlohmann::json::exception& e) {
    throw bad_input(path + ": not JSON: " + e.what());
  }
  if (!j.is_object() || j.value("schema", "") != "wheelcheck-preloads/1" || !j.contains("torch") ||
      !j["torch"].is_array())
    throw bad_input(path + ": not a wheelcheck-preloads/1 document");
  Table t;
  t.file = path;
  std::size_t n = 0;
  for (const auto& e : j["torch"]) {
    const std::string where = path + ": torch[" + std::to_string(n++) + "]";
    try {
      Rule r;
      r.from = e.at("from").get<std::string>();
      r.until = e.value("until", "");
      if (release_of(r.from).empty() || (!r.until.empty() && release_of(r.until).empty()))
        throw bad_input(where + ": from and until must be versions");
      const std::string status = e.at("status").get<std::string>();
      if (status != "verified" && status != "unknown") throw bad_input(where + ": status must be verified or unknown");
      r.verified = status == "verified";
      r.why = e.value("why", "");
      if (r.verified) {
        r.global_deps = e.at("global_deps").get<std::string>();
        r.after_load = read_phase(e.at("after_load"), where + ": after_load");
        const auto& failure = e.at("on_failure");
        if (failure.value("same_steps_required", false)) {
          r.on_failure.steps = r.after_load.steps;
        } else {
          r.on_failure = read_phase(failure, where + ": on_failure");
        }
        r.on_failure.required = true;
        r.cuda_major_folder = e.value("cuda_major_folder", false);
        for (const auto& s : e.at("sources")) {
          if (!r.source.empty()) r.source += "; ";
          r.source += s.at("repository").get<std::string>() + " " + s.at("file").get<std::string>() + " @" +
                      s.value("commit", "").substr(0, 12) + " (" + s.value("version", "") + ")";
        }
        if (r.source.empty()) throw bad_input(where + ": a verified rule names its sources");
      } else if (r.why.empty()) {
        throw bad_input(where + ": an unknown rule says why");
      }
      t.torch.push_back(std::move(r));
    } catch (const nlohmann::json::exception& ex) {
      throw bad_input(where + ": " + ex.what());
    }
  }
  return t;
}

void use_db(const std::string& dir) {
  std::lock_guard<std::mutex> lock(g_preloads_mutex);
  g_preloads_dir = dir;
}

const Table* current() {
  std::lock_guard<std::mutex> lock(g_preloads_mutex);
  std::string dir = g_preloads_dir;
  if (dir.empty() || !is_file(dir + "/preloads.json")) {
    try {
      dir = image::Db::locate();
    } catch (const Error& e) {
      g_preloads_error = e.what();
      return nullptr;
    }
  }
  if (g_preloads_table && g_preloads_loaded_from == dir) return g_preloads_table.get();
  g_preloads_loaded_from = dir;
  g_preloads_table.reset();
  g_preloads_error.clear();
  const std::string path = dir + "/preloads.json";
  if (!is_file(path)) {
    g_preloads_error = path + " is absent";
    return nullptr;
  }
  try {
    g_preloads_table = std::make_shared<const Table>(load(path));
    g_preloads_kept.push_back(g_preloads_table);
  } catch (const Error& e) {
    g_preloads_error = e.what();
  }
  return g_preloads_table.get();
}

std::string error() {
  std::lock_guard<std::mutex> lock(g_preloads_mutex);
  return g_preloads_error;
}

const Rule* rule_for(const Table& table, std::string_view version) {
  const std::vector<int> v = release_of(version);
  if (v.empty()) return nullptr;
  for (const auto& r : table.torch) {
    if (release_less(v, release_of(r.from))) continue;
    if (!r.until.empty() && !release_less(v, release_of(r.until))) continue;
    return &r;
  }
  return nullptr;
}

bool glob_match(std::string_view p, std::string_view s) {
  std::size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
  auto one = [&](std::size_t& i, char c) {  // the class or character at p[i] matches c; i moves past it
    if (p[i] == '?') {
      ++i;
      return true;
    }
    if (p[i] == '[') {
      std::size_t j = i + 1;
      const bool negate = j < p.size() && p[j] == '!';
      if (negate) ++j;
      bool hit = false;
      const std::size_t first = j;
      for (; j < p.size() && (p[j] != ']' || j == first); ++j) {
        if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
          hit = hit || (c >= p[j] && c <= p[j + 2]);
          j += 2;
        } else {
          hit = hit || c == p[j];
        }
      }
      if (j < p.size()) {
        i = j + 1;
        return hit != negate;
      }
    }
    return p[i++] == c;  // a lone '[' is itself
  };
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = si;
      continue;
    }
    std::size_t next = pi;
    if (pi < p.size() && one(next, s[si])) {
      pi = next;
      ++si;
      continue;
    }
    if (star == std::string_view::npos) return false;
    pi = star + 1;
    si = ++mark;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

}  // namespace wheelcheck::preloads

namespace wheelcheck::resolve {

namespace {

std::string preload_base(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The CUDA major torch was built for, from its local version ("2.7.1+cu128" -> 12); 0 when it does not say.
int torch_cuda_major(const std::string& version) {
  const auto plus = version.find("+cu");
  if (plus == std::string::npos) return 0;
  int digits = 0;
  for (std::size_t i = plus + 3; i < version.size() && std::isdigit(static_cast<unsigned char>(version[i])); ++i)
    ++digits;
  return digits < 3 ? 0 : std::stoi(version.substr(plus + 3, static_cast<std::size_t>(digits - 1)));
}

// The distribution's name without its version ("nvidia-cuda-runtime-cu12 12.8.90" -> "nvidia-cuda-runtime-cu12").
std::string dist_name_of(const Object& o) {
  return o.dist.substr(0, o.dist.find(' '));
}

}  // namespace

void Space::add_torch_preloads(const std::string& torch_dist, const std::string& torch_version) {
  // The libraries of the nvidia-* distributions present (the image's or a wheel beside the checked one): where
  // _preload_cuda_deps looks (nvidia/<folder>/lib under a sys.path entry).
  std::vector<const Object*> nvidia;
  for (const auto& o : m_objects) {
    if ((o->source == Object::Source::Distribution || o->source == Object::Source::WithWheel) &&
        o->path.find("/nvidia/") != std::string::npos)
      nvidia.push_back(o.get());
  }
  const std::string who = fmt::format("`import torch` ({})", torch_version);
  const preloads::Table* table = preloads::current();
  if (table == nullptr) {
    if (!nvidia.empty())
      m_preloaded_notes.push_back(fmt::format(
          "{}: what it preloads from the nvidia-* wheels is not stated ({}); torch's own libraries are counted", who,
          preloads::error()));
    return;
  }
  const preloads::Rule* rule = preloads::rule_for(*table, torch_version);
  if (rule == nullptr) return;  // before 1.13: no nvidia-* wheels
  if (!rule->verified) {
    if (!nvidia.empty())
      m_preloaded_notes.push_back(
          fmt::format("{}: what it preloads from the nvidia-* wheels is not stated ({}: {}); only torch's own "
                      "libraries are counted as loaded",
                      who, "db/preloads.json", rule->why));
    return;
  }
  const std::string from_source = " (torch/__init__.py _load_global_deps, db/preloads.json)";
  // 1. libtorch_global_deps.so, RTLD_GLOBAL.
  Object* global_deps = nullptr;
  for (const auto& o : m_objects) {
    if (o->dist == torch_dist && (o->path.ends_with("/" + rule->global_deps) || o->member == rule->global_deps))
      global_deps = o.get();
  }
  // What it brings to the global scope is modelled where its dynamic section is known (a wheel's member, or a
  // description that records it); otherwise the note says so.
  if (global_deps != nullptr) {
    const bool known = global_deps->binary != nullptr || global_deps->dynamic_recorded || !global_deps->needed.empty();
    global_deps->rtld_global = known;
    m_preloaded_notes.push_back(
        known ? fmt::format("{} loads {} with RTLD_GLOBAL{}: it and what it loads define symbols for every later load",
                            who, rule->global_deps, from_source)
              : fmt::format("{} loads {} with RTLD_GLOBAL{}; the description does not record what it loads, so what it "
                            "brings to the global scope is not modelled",
                            who, rule->global_deps, from_source));
  } else if (!nvidia.empty()) {
    m_preloaded_notes.push_back(
        fmt::format("{} loads {} with RTLD_GLOBAL{}; the description does not list it, so what it loads (a CUDA "
                    "build's runtime, through its RUNPATH) is not modelled, and it is taken to load",
                    who, rule->global_deps, from_source));
  }
  // 2. Does it load? A CUDA library it needs that its own search path and the image's libraries lack: no.
  auto is_cuda_name = [&](const std::string& name) {
    for (const auto& s : rule->on_failure.steps) {
      if (name.rfind(s.file.substr(0, s.file.find('.')) + ".", 0) == 0) return true;
    }
    return false;
  };
  std::optional<bool> loads;
  std::string missing;
  if (global_deps != nullptr && (global_deps->dynamic_recorded || !global_deps->needed.empty())) {
    loads = true;
    const std::string origin = global_deps->path.substr(0, global_deps->path.find_last_of('/'));
    for (const auto& name : global_deps->needed) {
      if (!is_cuda_name(name)) continue;
      bool found = false;
      for (const auto* dirs : {&global_deps->rpath, &global_deps->runpath}) {
        for (std::string d : *dirs) {
          for (const char* token : {"${ORIGIN}", "$ORIGIN"}) {
            for (auto p = d.find(token); p != std::string::npos; p = d.find(token))
              d.replace(p, std::string_view(token).size(), origin);
          }
          found = found || at(d + "/" + name) != nullptr;
        }
      }
      for (const auto& o : m_objects) {
        found = found || (o->source == Object::Source::Image && (o->soname == name || preload_base(o->path) == name));
      }
      if (!found) {
        loads = false;
        missing = name;
        break;
      }
    }
  }
  // 3. The steps of the phase that runs.
  const preloads::Phase* phase = nullptr;
  std::string when;
  if (loads == false) {
    phase = &rule->on_failure;
    when = "after " + rule->global_deps + " fails to load (" + missing + " is not on its search path)";
  } else {
    const bool cudart_wheel = std::any_of(nvidia.begin(), nvidia.end(), [](const Object* o) {
      return o->path.find("/nvidia/cuda_runtime/lib/libcudart.so") != std::string::npos ||
             (o->path.find("/nvidia/cu") != std::string::npos && preload_base(o->path).rfind("libcudart.so", 0) == 0);
    });
    bool cudart_needed = false;
    if (global_deps != nullptr) {
      for (const auto& n : global_deps->needed) cudart_needed = cudart_needed || n.rfind("libcudart.so", 0) == 0;
    }
    const bool holds =
        rule->after_load.when == "cudart_from_nvidia_wheel" ? cudart_wheel : (cudart_wheel || cudart_needed);
    if (!holds) {
      if (!nvidia.empty() && loads.has_value())
        m_preloaded_notes.push_back(
            fmt::format("{} preloads nothing from the nvidia-* wheels: no libcudart of theirs "
                        "is loaded{}",
                        who, from_source));
      return;
    }
    phase = &rule->after_load;
    when = "after " + rule->global_deps + " loads" + (loads.has_value() ? "" : " (taken to)") + ", a libcudart" +
           (cudart_wheel ? " of an nvidia-* wheel" : "") + " being loaded";
  }
  const int major = torch_cuda_major(torch_version);
  std::vector<const Object*> added;
  for (const auto& step : phase->steps) {
    if (step.cuda_major_at_least > 0 && major > 0 && major < step.cuda_major_at_least) continue;
    std::vector<std::string> folders{"/nvidia/" + step.folder + "/lib/"};
    if (rule->cuda_major_folder && major > 0) folders.push_back("/nvidia/cu" + std::to_string(major) + "/lib/");
    const Object* found = nullptr;
    for (const auto& folder : folders) {
      for (const Object* o : nvidia) {
        const auto at_folder = o->path.rfind(folder);
        if (at_folder == std::string::npos || o->path.find('/', at_folder + folder.size()) != std::string::npos)
          continue;
        const std::string file = preload_base(o->path);
        if (preloads::glob_match(step.file, file) && (found == nullptr || o->path < found->path)) found = o;
      }
      if (found != nullptr) break;
    }
    if (found == nullptr) {
      if (step.optional || !phase->required) continue;
      m_preloaded_notes.push_back(
          phase == &rule->on_failure
              ? fmt::format(
                    "{} raises ValueError {}: no file matches nvidia/{}/lib/{} in the nvidia-* wheels present{}", who,
                    when, step.folder, step.file, from_source)
              : fmt::format("{} stops preloading {}: no file matches nvidia/{}/lib/{} (the error is caught){}", who,
                            when, step.folder, step.file, from_source));
      break;
    }
    if (std::find(added.begin(), added.end(), found) != added.end()) continue;
    added.push_back(found);
    const std::string name = found->soname.empty() ? preload_base(found->path) : found->soname;
    m_preloaded_notes.push_back(
        fmt::format("{} preloads {} from {} {}{}", who, name, dist_name_of(*found), when, from_source));
  }
  // Loaded before torch._C: first in what the process had loaded.
  for (auto it = added.rbegin(); it != added.rend(); ++it) {
    m_preloaded.erase(std::remove(m_preloaded.begin(), m_preloaded.end(), *it), m_preloaded.end());
    m_preloaded.insert(m_preloaded.begin(), *it);
  }
}

}  // namespace wheelcheck::resolve
