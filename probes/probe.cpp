// The probe: a real root folder becomes an image description and export tables.
//
// Every path is resolved inside the root by RootFs (symlinks re-rooted, ".." stopped at "/"), so a probe
// of an unpacked image never reads the host. The stages, in order (probe_root below calls them):
//   1. The loader's configuration (probes/loader.cpp): etc/ld.so.conf with its includes, etc/ld.so.cache
//      (old, new or compat format), LD_LIBRARY_PATH from the given environment.
//   2. The architecture (probes/loader.cpp), from the program interpreter the root ships (ld-linux-*.so*,
//      ld-musl-*.so.1), and the loader's built-in folders for it (Debian's multiarch folders, lib64 on Red
//      Hat's layout, musl's /lib:/usr/local/lib:/usr/lib).
//   3. Every file named like a shared library (*.so, *.so.*) in LD_LIBRARY_PATH, the ld.so.conf folders,
//      the folders of the cache's entries and the default folders (probes/loader.cpp), then (3b) in the
//      folders only the libraries' own DT_RPATH and DT_RUNPATH name, and the files DT_NEEDED paths name. Each real file
//      is read once, however many names and folders reach it: header, dynamic section and dynamic symbols only (pread,
//      see inspector/elf/scanner.cpp), on all cores, largest first (probes/files.cpp).
//   4. Pythons (probes/python.cpp): <prefix>/lib/python3.X with an interpreter or a site-packages folder;
//      Debian's dist-packages folders join the /usr Python of the same version. Each interpreter is read
//      like the libraries in 3: its exports are what extension modules bind against first.
//   5. Distributions (probes/python.cpp): every *.dist-info in those folders (METADATA's name and version;
//      RECORD's native files, else top_level.txt's packages or the folder named like it), read like 3.
//   6. Facts derived from the files: glibc's version from libc.so.6's version definitions (musl's from
//      the apk database), the newest GLIBCXX_/CXXABI_ of libstdc++.so.6 (probes/libc.cpp), the CUDA
//      version (version.json, version.txt, the nvidia-cuda-runtime distribution, libcudart's soname, in
//      that order), the driver version from libcuda.so.<version> (probes/cuda.cpp); when the root is "/",
//      the machine's own driver and GPU architectures from nvidia-smi, else /proc/driver/nvidia
//      (probes/gpu.cpp); without an interpreter, the machine most of its libraries are for.
// A layer then keeps only what its files show. What could not be determined is written as unknown with
// the reason; what could not be read is a finding.
#include "wheelcheck/probe.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "probes/detail.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::probe {

using image::Fact;
using image::Origin;

namespace {

// What the description says of itself, from the options.
void describe(image::Image& im, const ProbeOptions& opt) {
  im.origin = Origin::Probed;
  // What the probe read is all there is: a need none of it provides is known absent. Not written (a probed
  // description is complete by default), so the JSON stays as it was.
  im.inventory.complete = true;
  im.name = opt.name.empty() ? base_name(std::filesystem::absolute(opt.root).lexically_normal().string()) : opt.name;
  if (im.name.empty()) im.name = "root";
  im.summary = opt.summary;
  im.kind = opt.kind;
  im.group = opt.group;
  im.sources = opt.sources;
  im.generated_by = opt.generated_by;
  im.env = opt.env;
}

// No interpreter (a toolkit's folder, a layer): the machine most of its libraries are built for.
Fact machine_of_most_libraries(const image::Image& im) {
  std::map<std::string, int> votes;
  for (const auto& l : im.libraries) ++votes[l.machine];
  for (const auto& d : im.distributions) {
    for (const auto& l : d.libraries) ++votes[l.machine];
  }
  const auto best =
      std::max_element(votes.begin(), votes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  if (best == votes.end()) return im.arch;
  return Fact::known_as(best->first, fmt::format("machine of {} of its libraries", best->second), Origin::Derived);
}

// A layer says only what its files show: what it lacks (a C library, an interpreter) is the base's to say.
void keep_what_a_layer_shows(image::Image& im, bool relocatable_site) {
  for (Fact* f : {&im.arch, &im.libc_kind, &im.libc_version, &im.glibcxx, &im.cxxabi, &im.driver, &im.gpu_archs}) {
    if (f->set && !f->known()) *f = Fact{};
  }
  if (!im.libc_kind.known()) {
    im.loader.default_dirs.clear();
    im.loader.default_dirs_note = Fact{};
  }
  if (relocatable_site) im.pythons.clear();
  if (im.arch.origin == Origin::Derived) im.arch = Fact{};  // the base image's interpreter decides
  if (im.loader.cache_format == "none") im.loader.cache_format.clear();
}

// Findings sorted by path, kind and detail, each once.
void sort_findings(std::vector<Problem>& findings) {
  std::sort(findings.begin(), findings.end(), [](const Problem& a, const Problem& b) {
    return std::tie(a.path, a.kind, a.detail) < std::tie(b.path, b.kind, b.detail);
  });
  findings.erase(std::unique(findings.begin(), findings.end()), findings.end());
}

}  // namespace

ProbeResult probe_root(const ProbeOptions& opt) {
  const RootFs root(opt.root);
  auto say = [&](const std::string& s) {
    if (opt.progress) opt.progress(s);
  };
  ProbeResult result;
  image::Image& im = result.image;
  describe(im, opt);
  auto& findings = im.findings;

  say("reading /etc/ld.so.conf and /etc/ld.so.cache");
  const LoaderConfig config = read_loader_config(root, opt.env, im.loader, findings);  // 1
  const Interpreter interp = find_interpreter(root, findings);                         // 2
  im.arch = arch_fact(interp);
  choose_default_dirs(root, interp, im.loader);
  const auto folders = library_folders(im.loader, config, interp.arch, opt.extra_dirs);  // 3
  ElfFiles files(root);
  add_system_libraries(files, folders, interp, findings);
  for (const auto& path : opt.extra_files) add_library_file(files, path, findings);

  say(fmt::format("{} library files in {} folders; looking for Pythons", files.size(), folders.size()));
  im.pythons = find_pythons(root);  // 4
  const PythonFiles interpreters = add_interpreters(files, im.pythons, findings);
  auto dists = find_distributions(root, im.pythons, findings);  // 5
  add_distribution_files(files, dists, findings);

  say(fmt::format("reading {} ELF files ({})", files.size(),
                  opt.export_tables ? "headers, dynamic sections, exports" : "headers and dynamic sections"));
  files.read_all(opt.jobs > 0 ? static_cast<unsigned>(opt.jobs) : default_threads(), opt.export_tables, opt.progress,
                 findings);
  const std::string lib_token =
      im.loader.default_dirs.empty() ? std::string("lib") : im.loader.default_dirs.front().substr(1);
  std::vector<std::string> searched = folders;  // 3b
  add_search_path_folders(files, searched, lib_token, resolve::platform_values(interp.arch),
                          opt.jobs > 0 ? static_cast<unsigned>(opt.jobs) : default_threads(), opt.export_tables,
                          findings);
  result.files_read = files.size();
  im.libraries = system_libraries(files);
  for (const auto& p : im.pythons) searched.insert(searched.end(), p.site_packages.begin(), p.site_packages.end());
  for (const auto& l : im.libraries) {
    for (const auto& n : l.names) add_unique(searched, dir_name(n));
  }
  record_dir_links(root, searched, im.loader.dir_links);
  record_interpreters(im.pythons, files, interpreters);
  const bool at_placeholder = opt.relocatable_site && im.pythons.size() == 1 && im.pythons[0].site_packages.size() == 1;
  im.distributions = distribution_records(std::move(dists), files, at_placeholder);

  derive_c_runtime(root, interp, SystemLookup{root, config.cache, folders, interp.arch, im.libraries}, im);  // 6
  im.toolkit = find_cuda(root, im, interp.arch, findings);
  find_driver(root, im);
  if (interp.arch.empty()) im.arch = machine_of_most_libraries(im);
  if (opt.kind == image::ImageKind::Layer) keep_what_a_layer_shows(im, opt.relocatable_site);

  result.tables = files.take_tables();
  sort_findings(findings);
  say(fmt::format("{} libraries, {} Pythons, {} distributions, {} findings", im.libraries.size(), im.pythons.size(),
                  im.distributions.size(), findings.size()));
  return result;
}

void describe_pulled(const container::PulledImage& pulled, ProbeOptions& options) {
  for (const auto& [k, v] : pulled.env) options.env.emplace(k, v);
  if (options.name.empty()) {
    std::string name = pulled.reference.substr(pulled.reference.find(':') + 1);
    if (name.rfind("//", 0) == 0) name = name.substr(2);
    name = base_name(name);
    options.name = name.empty() ? pulled.digest.substr(7, 12) : name;
  }
}

void record_pulled(const container::PulledImage& pulled, image::Image& image) {
  image.from = {pulled.reference, pulled.digest, pulled.platform.str(), pulled.config_digest, pulled.user};
  for (const auto& note : pulled.notes) image.findings.push_back({"not-kept", pulled.reference, note});
  sort_findings(image.findings);
}

void write_probe(ProbeResult& result, const std::string& json_path, const std::string& exports_dir) {
  namespace fs = std::filesystem;
  const fs::path json_dir = fs::absolute(json_path).parent_path();
  if (!exports_dir.empty()) {
    make_dirs(exports_dir);
    for (const auto& [key, table] : result.tables) {
      if (key.find("..") != std::string::npos) {
        throw Error(ErrorKind::Internal, "export table key escapes its folder: " + key);
      }
      make_dirs(fs::path(exports_dir + "/" + key).parent_path().string());
    }
    // Compression dominates (zlib level 9, for small deterministic files): one table per core at a time
    // (at most 8 cores), largest first.
    std::vector<std::size_t> order(result.tables.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return result.tables[a].second.symbols().size() > result.tables[b].second.symbols().size();
    });
    std::mutex error_mutex;
    std::optional<Error> error;  // the first; the other tables are written all the same
    parallel_for(order.size(), std::min(default_threads(), 8U), [&](std::size_t i, unsigned) {
      const auto& [key, table] = result.tables[order[i]];
      try {
        exports::write_table(table, exports_dir + "/" + key);
      } catch (const Error& e) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = e;
      }
    });
    if (error) throw *error;
    result.image.exports_dir = fs::relative(fs::absolute(exports_dir), json_dir).lexically_normal().string();
  } else {
    for (auto& l : result.image.libraries) l.exports.clear();
    for (auto& d : result.image.distributions) {
      for (auto& l : d.libraries) l.exports.clear();
    }
  }
  make_dirs(json_dir.string());
  image::save_file(result.image, json_path);
}

}  // namespace wheelcheck::probe
