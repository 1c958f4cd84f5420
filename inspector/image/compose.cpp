// Composition of image descriptions: a description applied over the layers it names (image.hpp, compose):
// facts override, libraries merge by path (a later layer's file hides what the loader would find at the same
// image path, as an overlay file system does), Pythons by version, distributions by name.
#include <algorithm>

#include "wheelcheck/image.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::image {

namespace {

void override_fact(Fact& base, const Fact& top) {
  if (top.set) base = top;
}

template <class T, class Key>
void merge_by(std::vector<T>& base, const std::vector<T>& top, Key key) {
  for (const auto& item : top) {
    auto it = std::find_if(base.begin(), base.end(), [&](const T& b) { return key(b) == key(item); });
    if (it != base.end()) {
      *it = item;
    } else {
      base.push_back(item);
    }
  }
}

void append_unique(std::vector<std::string>& base, const std::vector<std::string>& top) {
  for (const auto& s : top) {
    if (std::find(base.begin(), base.end(), s) == base.end()) base.push_back(s);
  }
}

}  // namespace

Image compose(const Image& base, const Image& top) {
  Image out = base;
  // Identity is the top's.
  out.schema = top.schema;
  out.name = top.name;
  out.summary = top.summary;
  out.kind = top.kind;
  out.status = top.status;
  out.planned_note = top.planned_note;
  out.group = top.group;
  out.policy = top.policy;
  if (!top.release.empty()) out.release = top.release;
  if (!top.image_ref.empty() || top.kind == ImageKind::Image) out.image_ref = top.image_ref;
  out.origin = top.origin;
  out.generated_by = top.generated_by;
  out.file = top.file;
  out.exports_dir = top.exports_dir;
  append_unique(out.sources, top.sources);
  out.layers = top.layers;
  override_fact(out.arch, top.arch);
  override_fact(out.python, top.python);
  override_fact(out.libc_kind, top.libc_kind);
  override_fact(out.libc_version, top.libc_version);
  override_fact(out.glibcxx, top.glibcxx);
  override_fact(out.cxxabi, top.cxxabi);
  override_fact(out.driver, top.driver);
  override_fact(out.gpu_archs, top.gpu_archs);
  override_fact(out.chips, top.chips);
  if (!top.loader.default_dirs.empty()) {
    out.loader.default_dirs = top.loader.default_dirs;
    out.loader.default_dirs_note = top.loader.default_dirs_note;
  }
  append_unique(out.loader.conf_dirs, top.loader.conf_dirs);
  append_unique(out.loader.conf_files, top.loader.conf_files);
  append_unique(out.loader.ld_library_path, top.loader.ld_library_path);
  if (!top.loader.cache_format.empty()) out.loader.cache_format = top.loader.cache_format;
  for (const auto& [from, to] : top.loader.dir_links) out.loader.dir_links[from] = to;
  merge_by(out.loader.cache, top.loader.cache, [](const CacheEntry& e) { return e.soname + '\0' + e.path; });
  // A later layer's file replaces what the loader would find at the same image path (overlayfs: a layer
  // that puts libstdc++.so.6.0.30 behind /usr/lib/x86_64-linux-gnu/libstdc++.so.6 hides the .0.33 an earlier
  // one put there), then libraries merge by path (by soname when declared without one).
  for (const auto& l : top.libraries) {
    if (l.names.empty()) continue;
    std::erase_if(out.libraries, [&](const Library& b) {
      if (b.path == l.path) return false;  // merge_by replaces it in place
      return std::any_of(b.names.begin(), b.names.end(), [&](const std::string& n) {
        return std::find(l.names.begin(), l.names.end(), n) != l.names.end();
      });
    });
  }
  merge_by(out.libraries, top.libraries,
           [](const Library& l) { return l.path.empty() ? "soname:" + l.soname : l.path; });
  merge_by(out.pythons, top.pythons, [](const Python& p) { return p.version; });
  merge_by(out.distributions, top.distributions,
           [](const Distribution& d) { return wheel::normalize_project_name(d.name) + '\0' + d.python; });
  if (top.toolkit) {
    if (!out.toolkit || out.toolkit->kind != top.toolkit->kind) {
      out.toolkit = top.toolkit;
    } else {
      override_fact(out.toolkit->version, top.toolkit->version);
      override_fact(out.toolkit->runtime, top.toolkit->runtime);
      override_fact(out.toolkit->driver_floor, top.toolkit->driver_floor);
      if (!top.toolkit->runtime_sonames.empty()) out.toolkit->runtime_sonames = top.toolkit->runtime_sonames;
    }
  }
  for (const auto& [k, v] : top.env) out.env[k] = v;
  for (const auto& [k, v] : top.bash_env.vars) out.bash_env.vars[k] = v;
  if (!top.bash_env.note.empty()) out.bash_env.note = top.bash_env.note;
  if (!top.bash_env.layer.empty()) out.bash_env.layer = top.bash_env.layer;
  merge_by(out.host_mounts, top.host_mounts, [](const HostMount& m) { return m.path; });
  for (const auto& [k, v] : top.assumed) out.assumed[k] = v;
  // The top's word on completeness decides. Said nothing, a description that lists libraries keeps the whole
  // complete only when it is probed and so is everything under it (a declared layer anywhere leaves the
  // inventory partial); one that lists none (a Python, a distribution over a probed root) leaves it as it was.
  out.inventory.stated = top.inventory.stated;
  const bool adds = !top.libraries.empty() || !top.loader.cache.empty();
  out.inventory.complete = top.inventory.stated.value_or(adds ? top.origin == Origin::Probed && base.inventory.complete
                                                              : base.inventory.complete);
  const bool own_word = top.inventory.stated || !top.inventory.note.empty();
  if (own_word) {  // else the note of the layer whose word stands (ubuntu24.04's under cuda13.0) is kept
    out.inventory.note = top.inventory.note;
    out.inventory.layer = top.inventory.layer;
  }
  append_unique(out.inventory.absent, top.inventory.absent);
  out.findings.insert(out.findings.end(), top.findings.begin(), top.findings.end());
  return out;
}

}  // namespace wheelcheck::image
