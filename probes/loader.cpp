// The probe's first stages, what the loader of the root would do before any wheel is loaded:
//   1. its configuration: etc/ld.so.conf with its includes and etc/ld.so.cache (read by probes/ldconfig.cpp),
//      with LD_LIBRARY_PATH from the image's environment;
//   2. the architecture, from the program interpreter the root ships (ld-linux-*.so*, ld-musl-*.so.1,
//      ld64.so.*; the first that reads as ELF), and the loader's built-in folders for it: musl's
//      /lib:/usr/local/lib:/usr/lib, Debian's multiarch folders when the root has them, lib64 on a 64-bit
//      root laid out as Red Hat's, else glibc's generic /lib:/usr/lib;
//   3. the folders it searches, in its order of preference, and every file named like a shared library in
//      them, with the interpreter itself (loaded into every process, wherever it sits).
// Also the loader's choice of a library by soname, for the facts of stage 6.
#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>

#include "probes/detail.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/resolve.hpp"

namespace wheelcheck::probe {

using image::Fact;
using image::Origin;

namespace {

std::string multiarch_triple(const std::string& arch) {
  static const std::map<std::string, std::string> k_triples = {
      {"x86_64", "x86_64-linux-gnu"},          {"i686", "i386-linux-gnu"},
      {"aarch64", "aarch64-linux-gnu"},        {"ppc64le", "powerpc64le-linux-gnu"},
      {"ppc64", "powerpc64-linux-gnu"},        {"s390x", "s390x-linux-gnu"},
      {"riscv64", "riscv64-linux-gnu"},        {"armhf", "arm-linux-gnueabihf"},
      {"armel", "arm-linux-gnueabi"},          {"mips64el", "mips64el-linux-gnuabi64"},
      {"loongarch64", "loongarch64-linux-gnu"}};
  auto it = k_triples.find(arch);
  return it == k_triples.end() ? std::string{} : it->second;
}

}  // namespace

LoaderConfig read_loader_config(const RootFs& root, const std::map<std::string, std::string>& env,
                                image::Loader& loader, std::vector<Problem>& findings) {
  LoaderConfig config{read_ld_so_conf(root, findings), read_ld_so_cache(root, findings)};
  loader.conf_dirs = config.conf.dirs;
  loader.conf_files = config.conf.files;
  loader.cache_format = config.cache.format;
  for (const auto& e : config.cache.entries) loader.cache.push_back({e.soname, e.path, e.arch});
  if (auto it = env.find("LD_LIBRARY_PATH"); it != env.end()) loader.ld_library_path = split(it->second, ":;", false);
  return config;
}

Interpreter find_interpreter(const RootFs& root, std::vector<Problem>& findings) {
  Interpreter interp;
  for (const char* pattern : {"/lib64/ld-linux*.so*", "/lib/ld-linux*.so*", "/lib/*/ld-linux*.so*",
                              "/usr/lib64/ld-linux*.so*", "/usr/lib/ld-linux*.so*", "/usr/lib/*/ld-linux*.so*",
                              "/lib/ld-musl-*.so.1", "/usr/lib/ld-musl-*.so.1", "/lib/ld64.so.*", "/lib64/ld64.so.*"}) {
    for (const auto& p : root.glob(pattern)) {
      auto r = root.resolve(p, &findings);
      if (!r || root.type(r->image_path) != RootFs::Type::File) continue;
      try {
        const elf::Binary b = elf::read_elf_file(r->host_path);
        interp.arch = elf::machine_name(b.machine, b.elf_class, b.endian, b.e_flags);
        interp.elf_class = b.elf_class == elf::Class::Elf64 ? 64 : 32;
        interp.musl = base_name(p).rfind("ld-musl-", 0) == 0;
        interp.path = p;
      } catch (const Error& e) {
        findings.push_back({"malformed-elf", r->image_path, e.what()});
      }
      if (!interp.arch.empty()) return interp;
    }
  }
  return interp;
}

Fact arch_fact(const Interpreter& interp) {
  if (interp.arch.empty()) {
    return Fact::unknown("no program interpreter (ld-linux*.so*, ld-musl-*.so.1) in the root", Origin::Probed);
  }
  return Fact::known_as(interp.arch, "machine of the program interpreter " + interp.path, Origin::Probed);
}

void choose_default_dirs(const RootFs& root, const Interpreter& interp, image::Loader& loader) {
  const std::string triple = multiarch_triple(interp.arch);
  auto exists_dir = [&](const std::string& p) { return root.type(p) == RootFs::Type::Directory; };
  if (interp.musl) {
    loader.default_dirs = {"/lib", "/usr/local/lib", "/usr/lib"};
    loader.default_dirs_note = Fact::known_as("musl", "musl's built-in library path", Origin::Derived);
  } else if (!triple.empty() && (exists_dir("/lib/" + triple) || exists_dir("/usr/lib/" + triple))) {
    loader.default_dirs = {"/lib/" + triple, "/usr/lib/" + triple, "/lib", "/usr/lib"};
    loader.default_dirs_note = Fact::known_as(
        "multiarch", "Debian/Ubuntu multiarch layout: glibc built with slibdir /lib/" + triple, Origin::Derived);
  } else if (interp.elf_class == 64 && (exists_dir("/lib64") || exists_dir("/usr/lib64"))) {
    loader.default_dirs = {"/lib64", "/usr/lib64"};
    loader.default_dirs_note =
        Fact::known_as("lib64", "lib64 layout (Red Hat, SUSE, manylinux images)", Origin::Derived);
  } else {
    loader.default_dirs = {"/lib", "/usr/lib"};
    loader.default_dirs_note = Fact::known_as("lib", "glibc's generic default", Origin::Derived);
  }
}

std::vector<std::string> library_folders(const image::Loader& loader, const LoaderConfig& config,
                                         const std::string& arch, const std::vector<std::string>& extra_dirs) {
  std::vector<std::string> folders;
  for (const auto& d : loader.ld_library_path) add_unique(folders, d);
  for (const auto& d : config.conf.dirs) add_unique(folders, d);
  for (const auto& e : config.cache.entries) add_unique(folders, dir_name(e.path));
  for (const auto& d : loader.default_dirs) add_unique(folders, d);
  // Folders a wheel's absolute search paths name (a check of a root on the fly): the loader looks there.
  for (std::string d : extra_dirs) {
    if (d.find("$ORIGIN") != std::string::npos || d.find("${ORIGIN}") != std::string::npos) continue;
    const std::string lib = loader.default_dirs.empty() ? "lib" : loader.default_dirs.front().substr(1);
    for (const auto& [token, value] : {std::pair<std::string, std::string>{"${LIB}", lib},
                                       {"$LIB", lib},
                                       {"${PLATFORM}", arch},
                                       {"$PLATFORM", arch}}) {
      for (auto p = d.find(token); p != std::string::npos; p = d.find(token)) d.replace(p, token.size(), value);
    }
    add_unique(folders, d);
  }
  return folders;
}

void add_library_file(ElfFiles& files, const std::string& path, std::vector<Problem>& findings) {
  if (path.empty() || path[0] != '/') return;
  if (auto f = files.add(path, findings)) {
    add_unique(files[*f].names, path);
    files[*f].library = true;
  }
}

void add_folder_libraries(ElfFiles& files, const std::string& folder, std::vector<Problem>& findings) {
  for (const auto& name : files.root().list_dir(folder)) {
    if (!library_like(name)) continue;
    const std::string p = join_path(folder, name);
    if (auto f = files.add(p, findings)) {
      add_unique(files[*f].names, p);
      files[*f].library = true;
    }
  }
}

std::size_t add_system_libraries(ElfFiles& files, const std::vector<std::string>& folders, const Interpreter& interp,
                                 std::vector<Problem>& findings) {
  for (const auto& folder : folders) add_folder_libraries(files, folder, findings);
  // The program interpreter is loaded into every process, wherever it sits (only /lib64 on Red Hat's layout).
  if (!interp.path.empty()) {
    if (auto f = files.add(interp.path, findings)) {
      add_unique(files[*f].names, interp.path);
      files[*f].library = true;
    }
  }
  return files.size();
}

void add_search_path_folders(ElfFiles& files, std::vector<std::string>& folders, const std::string& lib_token,
                             const std::vector<std::string>& platforms, unsigned threads, bool want_tables,
                             std::vector<Problem>& findings) {
  constexpr int k_rounds = 8;
  std::size_t scanned = 0;  // files whose entries were expanded
  for (int round = 0; round < k_rounds; ++round) {
    std::vector<std::string> named;
    std::vector<std::string> paths;  // DT_NEEDED entries that are absolute paths
    for (std::size_t i = scanned; i < files.size(); ++i) {
      const ElfFile& f = files[i];
      if (!f.ok) continue;
      for (const auto& n : f.binary.needed) {
        if (!n.empty() && n[0] == '/') add_unique(paths, n);
      }
      std::vector<std::string> reached_as = f.names;
      add_unique(reached_as, f.image_path);
      for (const auto* entries : {&f.binary.rpath, &f.binary.runpath}) {
        for (const auto& entry : *entries) {
          for (const auto& as : reached_as) {
            const std::string dir = resolve::expand_tokens(entry, dir_name(as), lib_token);
            if (dir.empty() || dir[0] != '/') continue;  // relative to the process's folder: not the image's
            for (const auto& platform : platforms) {
              std::string d = dir;
              for (auto p = d.find("$PLATFORM"); p != std::string::npos; p = d.find("$PLATFORM"))
                d.replace(p, 9, platform);
              d = std::filesystem::path(d).lexically_normal().string();
              if (d.size() > 1 && d.back() == '/') d.pop_back();
              if (std::find(folders.begin(), folders.end(), d) == folders.end()) add_unique(named, d);
            }
          }
        }
      }
    }
    scanned = files.size();
    for (const auto& p : paths) add_library_file(files, p, findings);
    if (named.empty() && files.size() == scanned) return;
    for (const auto& d : named) {
      folders.push_back(d);
      add_folder_libraries(files, d, findings);
    }
    files.read_all(threads, want_tables, {}, findings, scanned);
  }
}

void record_dir_links(const RootFs& root, const std::vector<std::string>& folders,
                      std::map<std::string, std::string>& links) {
  for (const auto& folder : folders) {
    // Each prefix /a, /a/b, ...: a link when its resolution differs from its resolved parent plus its name.
    std::string prefix;
    std::string parent = "/";
    for (const auto& part : split(folder, "/", true)) {
      if (part.empty() || part == ".") continue;
      if (part == "..") break;  // a folder written with "..": the rest is the kernel's to follow
      prefix += "/" + std::string(part);
      const auto r = root.resolve(prefix);
      if (!r || root.type(r->image_path) != RootFs::Type::Directory) break;
      const std::string plain = join_path(parent, std::string(part));
      if (r->image_path != plain) links[plain] = r->image_path;
      parent = r->image_path;
    }
  }
}

std::vector<image::Library> system_libraries(const ElfFiles& files) {
  std::vector<image::Library> libraries;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (files[i].ok && files[i].library) libraries.push_back(library_record(files[i]));
  }
  std::sort(libraries.begin(), libraries.end(),
            [](const image::Library& a, const image::Library& b) { return a.path < b.path; });
  return libraries;
}

const image::Library* SystemLookup::find(std::string_view soname) const {
  for (const auto& e : cache.entries) {
    if (e.soname != soname) continue;
    if (auto r = root.resolve(e.path)) {
      for (const auto& l : libraries) {
        if (l.path == r->image_path && (arch.empty() || l.machine == arch)) return &l;
      }
    }
  }
  for (const auto& folder : folders) {
    for (const auto& l : libraries) {
      if (l.soname == soname && (arch.empty() || l.machine == arch) &&
          std::find(l.names.begin(), l.names.end(), join_path(folder, soname)) != l.names.end()) {
        return &l;
      }
    }
  }
  return nullptr;
}

}  // namespace wheelcheck::probe
