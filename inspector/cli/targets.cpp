// What an --image names, decided one way for every command (`check`, `gates`, `image show`):
//   all                 the db's images (not the packaging targets: name those, or match them)
//   a pattern           'manylinux_2_*_aarch64': every db image and target whose name matches
//   a reference         docker://HOST/REPO:TAG, oci:DIR[:TAG], oci-archive:FILE, docker-archive:FILE: a
//                       container image, its layers read into the cache and its root probed (docs/images.md)
//   a path              anything with a '/' or ending in .json: a description file, or a root folder
//                       probed on the fly; one that does not exist is an error, not a db lookup
//   a name              a db image or packaging target; a folder or file of the same name in the
//                       current folder does not shadow it (a warning says how to name the folder)
//   otherwise           a folder or description file of that name, else an unknown image (with the
//                       closest db name)
#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "wheelcheck/container.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/probe.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cli {

namespace {

bool names_a_path(const std::string& name) {
  return name.find('/') != std::string::npos || name == "." || name == ".." || name.ends_with(".json");
}

Target probed(const std::string& root, const ImageRequest& request, const container::PulledImage* pulled = nullptr) {
  probe::ProbeOptions o;
  o.root = root;
  o.extra_dirs = request.search_dirs;
  o.extra_files = request.needed_paths;
  o.env = request.env;
  if (pulled != nullptr) {
    probe::describe_pulled(*pulled, o);
    for (const auto& [k, v] : request.env) o.env[k] = v;  // --image-env overrides the config's Env
  }
  auto result = probe::probe_root(o);
  if (pulled != nullptr) {
    probe::record_pulled(*pulled, result.image);
    // What every answer says of the image (the verdict's image summary): which manifest, which platform, why.
    result.image.summary = pulled->reference + ", " + pulled->platform.str() + " (" + pulled->platform_note +
                           "), manifest " + pulled->digest;
  }
  auto tables = std::make_shared<std::map<std::string, exports::Table>>();
  for (auto& [key, table] : result.tables) tables->emplace(key, std::move(table));
  for (auto& l : result.image.libraries) {
    if (!l.exports.empty()) l.exports_file = "mem:" + l.exports;
  }
  for (auto& d : result.image.distributions) {
    for (auto& l : d.libraries) {
      if (!l.exports.empty()) l.exports_file = "mem:" + l.exports;
    }
  }
  for (auto& p : result.image.pythons) {
    if (!p.exports.empty()) p.exports_file = "mem:" + p.exports;
  }
  return {std::move(result.image), tables};
}

}  // namespace

container::PullOptions pull_options(const ImageRequest& request, const char* label) {
  container::PullOptions o;
  o.cache_dir = request.cache_dir.empty() ? ProfileCache::default_dir() : request.cache_dir;
  if (!request.platform.empty()) o.platform = container::parse_platform(request.platform);
  if (!request.wheel_machine.empty()) o.wheel_platform = container::platform_of_machine(request.wheel_machine);
  o.offline = net::offline();
  if (request.limits != nullptr) {
    o.low_speed_time_s = request.limits->low_speed_time;
    o.max_redirects = request.limits->max_redirects;
    o.retries = request.limits->retries;
  }
  if (request.progress) {
    const std::string prefix = std::string(label) + ": ";
    o.progress = [prefix](const std::string& s) { std::fprintf(stderr, "%s%s\n", prefix.c_str(), s.c_str()); };
  }
  return o;
}

namespace {

// A container image: pulled (or found in the cache), then its root probed like a folder.
Target probed_reference(const std::string& text, const ImageRequest& request) {
  const container::PullOptions o = pull_options(request, "image");
  const container::PulledImage pulled = container::pull(container::parse_reference(text), o);
  if (!request.quiet) {
    std::fprintf(stderr, "image: %s is %s (%s, %s)\n", text.c_str(), pulled.digest.c_str(),
                 pulled.platform.str().c_str(), pulled.platform_note.c_str());
  }
  return probed(pulled.root, request, &pulled);
}

// --image takes a comma list ("cuda13.0,cuda13.3") as well as repeats. An argument that is an existing file
// or folder, or a db name, is taken whole: a root folder whose name holds a comma is never split.
std::vector<std::string> image_arguments(const std::vector<std::string>& given, const image::Db& db) {
  std::vector<std::string> out;
  for (const auto& arg : given) {
    if (arg.find(',') == std::string::npos || is_dir(arg) || is_file(arg) || db.has(arg)) {
      out.push_back(arg);
      continue;
    }
    for (const auto& part : split(arg, ",", true)) {
      const std::string name(trim(part));
      if (name.empty()) throw usage_error("--image " + arg + ": an empty name in the list (NAME,NAME,...)");
      out.push_back(name);
    }
  }
  return out;
}

}  // namespace

std::map<std::string, std::string> parse_env(const std::vector<std::string>& assignments, const std::string& flag) {
  std::map<std::string, std::string> env;
  for (const auto& kv : assignments) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw usage_error(flag + " " + kv + ": expected NAME=VALUE");
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

std::vector<Target> resolve_images(const std::vector<std::string>& names, const image::Db& db,
                                   const ImageRequest& request) {
  std::vector<Target> out;
  bool probed_any = false;
  for (const auto& name : image_arguments(names, db)) {
    if (name == "all") {
      for (const auto& n : db.file_image_names()) out.push_back({db.get(n), nullptr});
      continue;
    }
    if (container::is_reference(name)) {
      out.push_back(probed_reference(name, request));
      probed_any = true;
      continue;
    }
    if (name.find_first_of("*?[") != std::string::npos && !names_a_path(name)) {
      const std::size_t before = out.size();
      for (const auto& n : db.image_names()) {
        if (::fnmatch(name.c_str(), n.c_str(), 0) == 0) out.push_back({db.get(n), nullptr});
      }
      if (out.size() == before) throw usage_error("--image " + name + ": matches no image (`wheelcheck images`)");
      continue;
    }
    if (names_a_path(name)) {
      if (is_dir(name)) {
        out.push_back(probed(name, request));
        probed_any = true;
      } else if (is_file(name)) {
        out.push_back({db.resolve(name), nullptr});
      } else {
        throw usage_error("--image " + name + ": no such file or folder");
      }
      continue;
    }
    if (db.has(name)) {
      if (is_dir(name) || is_file(name)) {
        warn("--image " + name + " is the db image; the " + (is_dir(name) ? "folder" : "file") + " ./" + name +
             " here is not read (write ./" + name + " for it)");
      }
      out.push_back({db.get(name), nullptr});
      continue;
    }
    if (is_dir(name)) {
      out.push_back(probed(name, request));
      probed_any = true;
      continue;
    }
    out.push_back({db.resolve(name), nullptr});  // a description file, or an unknown name (with the closest)
  }
  if (!request.env.empty() && !probed_any) {
    throw usage_error(
        "--image-env describes a root folder or container image probed on the fly, and no --image is one");
  }
  return out;
}

std::string wheels_machine(const std::vector<WheelProfile>& profiles) {
  std::map<std::string, int> votes;
  for (const auto& p : profiles) {
    for (const auto& m : p.members) {
      if (m.elf) ++votes[elf::machine_name(m.elf->machine, m.elf->elf_class, m.elf->endian, m.elf->e_flags)];
    }
  }
  const auto best =
      std::max_element(votes.begin(), votes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return best == votes.end() ? std::string() : best->first;
}

void add_platform_option(CLI::App& app, std::string& platform) {
  app.add_option("--platform", platform,
                 "For an --image that is a multi-platform container image: the platform to read, OS/ARCH[/VARIANT] "
                 "(linux/amd64, linux/arm64; default: the wheels' architecture, else this machine's)");
}

const char* const k_assume_help =
    "FACT=VALUE: a fact of the images that their descriptions leave unknown, taken as given (repeatable): "
    "driver=580.95.05, gpu_archs=sm_90,sm_100, toolkit_version=13.0, runtime=13.0.96, libc_version=2.39, "
    "python=3.12, glibcxx=GLIBCXX_3.4.33, isa=x86-64-v3 (the runner CPUs' x86-64 level); a library the description "
    "does not state, library=libgomp.so.1 (there, "
    "its exports unknown) or library=!libgomp.so.1 (not there); a wheel variant property the machine supports, "
    "nvidia::sm_arch=90_real (docs/variants.md). Every answer lists what it assumed";

void apply_assumptions(std::vector<Target>& targets, const std::vector<std::string>& assume) {
  for (auto& t : targets) image::assume_all(t.image, assume, "--assume");
}

}  // namespace wheelcheck::cli
