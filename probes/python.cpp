// The probe's Python stages (4 and 5 of probes/probe.cpp): which Pythons a root holds, and the
// distributions installed for them with their native files; the interpreters and those files join the
// ELF files the probe reads, and what was read is written back into the Pythons and distributions.
//
// A Python is <prefix>/lib/python3.X (free-threaded: python3.Xt) under the usual prefixes, with an
// interpreter (<prefix>/bin/python3.X), its standard library (os.py) or a site-packages folder. Debian
// installs packages in /usr/lib/python3/dist-packages and pip in /usr/local/lib/python3.X/dist-packages:
// both belong to /usr's Python (the latter when /usr/local has no interpreter or standard library of its
// own). A distribution is a *.dist-info or *.egg-info (a folder, or a file that is PKG-INFO itself) in a
// site folder; its native files are those RECORD lists, else those under the packages top_level.txt
// names (or the package folder named like the distribution), walked with a bound.
#include <algorithm>
#include <functional>
#include <map>
#include <regex>
#include <tuple>

#include <fmt/format.h>

#include "probes/detail.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::probe {

using image::Origin;

namespace {

// The import packages of a distribution without RECORD: those top_level.txt names, else the folder named
// like the distribution (PEP 503-normalized, '-' as '_': torch, flag_gems), when the site has it.
std::vector<std::string> top_level_packages(const RootFs& root, const std::string& site, const std::string& info,
                                            const std::string& dist_name) {
  std::vector<std::string> tops;
  std::vector<Problem> ignored;
  if (auto text = root.try_read_file(info + "/top_level.txt", ignored, std::uint64_t{1} << 20)) {
    for (const auto& t : split(*text, "\n\r", false)) {
      if (t.find('/') == std::string::npos && t.find("..") == std::string::npos) tops.push_back(t);
    }
    if (!tops.empty()) return tops;
  }
  std::string folder = wheel::normalize_project_name(dist_name);
  std::replace(folder.begin(), folder.end(), '-', '_');
  if (!folder.empty() && root.type(join_path(site, folder)) == RootFs::Type::Directory) tops.push_back(folder);
  return tops;
}

// The shared libraries under the packages `tops` of `site`, relative to it, into `rels`; false when the
// walk stopped at its bound (20000 entries, 8 levels) against a huge or looping tree.
bool walk_packages(const RootFs& root, const std::string& site, const std::vector<std::string>& tops,
                   std::vector<std::string>& rels) {
  std::size_t budget = 20000;
  std::function<void(const std::string&, int)> walk = [&](const std::string& rel, int depth) {
    for (const auto& name : root.list_dir(join_path(site, rel))) {
      if (budget == 0) return;
      --budget;
      const std::string child = rel + "/" + name;
      const auto type = root.type(join_path(site, child));
      if (type == RootFs::Type::Directory && depth < 8) {
        walk(child, depth + 1);
      } else if (type == RootFs::Type::File && library_like(name)) {
        rels.push_back(child);
      }
    }
  };
  for (const auto& t : tops) walk(t, 0);
  return budget != 0;
}

}  // namespace

std::vector<image::Python> find_pythons(const RootFs& root) {
  auto exists_dir = [&](const std::string& p) { return root.type(p) == RootFs::Type::Directory; };
  std::vector<image::Python> pythons;
  struct PyFound {
    std::string prefix, version;
    bool free_threaded = false;
    std::string executable;
    std::vector<std::string> sites;
    bool stdlib = false;
  };
  std::map<std::pair<std::string, std::string>, PyFound> pys;  // (prefix, dir name)
  const std::regex py_dir(R"(python(3\.[0-9]+)(t?))");
  for (const char* pattern : {"/usr/lib/python3.*", "/usr/local/lib/python3.*", "/opt/*/lib/python3.*",
                              "/opt/conda/envs/*/lib/python3.*", "/root/.pyenv/versions/*/lib/python3.*",
                              "/root/*/lib/python3.*", "/workspace/*/lib/python3.*", "/home/*/*/lib/python3.*"}) {
    for (const auto& p : root.glob(pattern)) {
      std::smatch m;
      const std::string dn = base_name(p);
      if (!std::regex_match(dn, m, py_dir) || !exists_dir(p)) continue;
      const std::string prefix = dir_name(dir_name(p));
      PyFound& f = pys[{prefix, dn}];
      f.prefix = prefix;
      f.version = m[1];
      f.free_threaded = m[2] == "t";
      f.stdlib = root.type(p + "/os.py") == RootFs::Type::File;
      const std::string exe = join_path(prefix, "bin/" + dn);
      if (root.resolve(exe)) f.executable = exe;
      for (const char* sub : {"/site-packages", "/dist-packages"}) {
        if (exists_dir(p + sub)) f.sites.push_back(p + sub);
      }
    }
  }
  // Debian: /usr/lib/python3/dist-packages and /usr/local/lib/python3.X/dist-packages belong to /usr's Python.
  for (auto& [key, f] : pys) {
    if (f.prefix != "/usr") continue;
    std::vector<std::string> sites;
    const std::string dn = key.second;
    auto local = pys.find({"/usr/local", dn});
    if (local != pys.end() && local->second.executable.empty() && !local->second.stdlib) {
      sites = local->second.sites;
      local->second.sites.clear();
    }
    for (const auto& s : f.sites) sites.push_back(s);
    if (exists_dir("/usr/lib/python3/dist-packages")) sites.push_back("/usr/lib/python3/dist-packages");
    f.sites = sites;
  }
  for (const auto& [key, f] : pys) {
    if (f.executable.empty() && !f.stdlib && f.sites.empty()) continue;
    image::Python py;
    py.version = f.version;
    std::string digits = f.version;
    digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
    py.abi_tags = {"cp" + digits + (f.free_threaded ? "t" : "")};
    if (!f.free_threaded) py.abi_tags.push_back("abi3");
    py.executable = f.executable;
    py.site_packages = f.sites;
    py.origin = Origin::Probed;
    pythons.push_back(std::move(py));
  }
  // The image's default python3 (what `python3` runs: /usr/local/bin first, as PATH has it) comes first:
  // a py3 wheel is installed for it.
  for (const char* cmd : {"/usr/local/bin/python3", "/usr/bin/python3"}) {
    const auto target = root.resolve(cmd);
    if (!target) continue;
    const auto it = std::find_if(pythons.begin(), pythons.end(), [&](const image::Python& py) {
      const auto exe = py.executable.empty() ? std::nullopt : root.resolve(py.executable);
      return exe && exe->image_path == target->image_path;
    });
    if (it != pythons.end()) std::rotate(pythons.begin(), it, it + 1);
    if (it != pythons.end()) break;
  }
  return pythons;
}

std::vector<FoundDistribution> find_distributions(const RootFs& root, const std::vector<image::Python>& pythons,
                                                  std::vector<Problem>& findings) {
  std::vector<FoundDistribution> dists;
  for (const auto& py : pythons) {
    for (const auto& site : py.site_packages) {
      for (const auto& entry : root.list_dir(site)) {
        const bool dist_info = entry.size() > 10 && entry.compare(entry.size() - 10, 10, ".dist-info") == 0;
        const bool egg_info = entry.size() > 9 && entry.compare(entry.size() - 9, 9, ".egg-info") == 0;
        if (!dist_info && !egg_info) continue;
        const std::string info = join_path(site, entry);
        // A .egg-info may be a file (PKG-INFO itself) or a folder (Debian's python3-* packages).
        const bool info_file = egg_info && root.type(info) == RootFs::Type::File;
        const std::string metadata = dist_info ? info + "/METADATA" : info_file ? info : info + "/PKG-INFO";
        FoundDistribution df;
        try {
          const wheel::Metadata md = wheel::parse_metadata(root.read_file(metadata, std::uint64_t{16} << 20));
          df.dist.name = md.name;
          df.dist.version = md.version;
        } catch (const Error& e) {
          findings.push_back({"unreadable", metadata, e.what()});
          continue;
        }
        if (df.dist.name.empty()) {
          findings.push_back({"malformed-metadata", metadata, "no Name"});
          continue;
        }
        df.dist.location = site;
        df.dist.python = py.version;
        df.dist.origin = Origin::Probed;
        std::vector<std::string> rels;
        const bool has_record = dist_info && root.type(info + "/RECORD") == RootFs::Type::File;
        if (has_record) {
          try {
            for (const auto& rec : wheel::parse_record(root.read_file(info + "/RECORD", std::uint64_t{64} << 20))) {
              if (rec.path.empty() || rec.path[0] == '/' || rec.path.find("..") != std::string::npos) continue;
              if (library_like(base_name(rec.path))) rels.push_back(rec.path);
            }
          } catch (const Error& e) {
            findings.push_back(
                {"unreadable", info + "/RECORD", std::string(e.what()) + " (its native files are not listed)"});
          }
        } else if (!info_file) {
          // No RECORD (an egg-info, or a dist-info whose installer left it out: PEP 627 made it optional):
          // the packages top_level.txt names, else the package folder named like the distribution,
          // walked for shared libraries (bounded). A dist-info says what was assumed.
          const auto tops = top_level_packages(root, site, info, df.dist.name);
          if (dist_info) {
            findings.push_back({"assumed-files", info,
                                tops.empty() ? "no RECORD, no top_level.txt and no package folder named like the "
                                               "distribution: no native files are known"
                                             : "no RECORD: native files taken from the package folder" +
                                                   std::string(tops.size() == 1 ? " " : "s ") +
                                                   fmt::format("{}", fmt::join(tops, ", ")) +
                                                   (root.type(info + "/top_level.txt") == RootFs::Type::File
                                                        ? " (top_level.txt)"
                                                        : " (named like the distribution)")});
          }
          if (!walk_packages(root, site, tops, rels)) {
            findings.push_back({"too-large", info, "stopped listing its packages after 20000 entries"});
          }
        }
        std::sort(rels.begin(), rels.end());
        df.files = std::move(rels);
        dists.push_back(std::move(df));
      }
    }
  }

  return dists;
}

PythonFiles add_interpreters(ElfFiles& files, const std::vector<image::Python>& pythons,
                             std::vector<Problem>& findings) {
  // The interpreters' own exports (CPython's C API, which extension modules bind against) and needs.
  PythonFiles read;
  for (std::size_t i = 0; i < pythons.size(); ++i) {
    if (pythons[i].executable.empty()) continue;
    if (auto f = files.add(pythons[i].executable, findings)) {
      files[*f].program = true;
      read.emplace_back(i, *f);
    }
  }
  return read;
}

void record_interpreters(std::vector<image::Python>& pythons, const ElfFiles& files, const PythonFiles& read) {
  for (const auto& [python, index] : read) {
    const ElfFile& f = files[index];
    if (!f.ok) continue;
    pythons[python].needed = f.binary.needed;
    if (f.table) pythons[python].exports = table_key(f.image_path);
  }
}

void add_distribution_files(ElfFiles& files, std::vector<FoundDistribution>& dists, std::vector<Problem>& findings) {
  for (auto& d : dists) {
    for (const auto& rel : d.files) {
      if (auto f = files.add(join_path(d.dist.location, rel), findings)) d.elf_files.emplace_back(rel, *f);
    }
  }
}

std::vector<image::Distribution> distribution_records(std::vector<FoundDistribution> dists, const ElfFiles& files,
                                                      bool at_placeholder) {
  std::vector<image::Distribution> out;
  for (auto& d : dists) {
    for (const auto& [rel, index] : d.elf_files) {
      if (files[index].ok) d.dist.libraries.push_back(dist_library_record(files[index], rel));
    }
    if (at_placeholder) {
      d.dist.location = std::string(image::k_site_placeholder);
      d.dist.python.clear();
    }
    out.push_back(std::move(d.dist));
  }
  std::sort(out.begin(), out.end(), [](const image::Distribution& a, const image::Distribution& b) {
    return std::tie(a.location, a.name) < std::tie(b.location, b.name);
  });
  return out;
}

}  // namespace wheelcheck::probe
