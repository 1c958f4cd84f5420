// `wheelcheck probe`, `wheelcheck images`, `wheelcheck image show`: image descriptions.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "commands.hpp"
#include "wheelcheck/container.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/probe.hpp"
#include "wheelcheck/util.hpp"

extern char** environ;

namespace wheelcheck::cli {

namespace {

// Variables of a process environment that describe an image to its libraries.
constexpr const char* k_image_env[] = {
    "LD_LIBRARY_PATH",     "LD_PRELOAD", "PATH",        "CUDA_HOME",   "CUDA_PATH", "ASCEND_HOME_PATH",
    "ASCEND_TOOLKIT_HOME", "MACA_PATH",  "ROCM_PATH",   "DTK_PATH",    "MUSA_HOME", "MUSA_PATH",
    "TOPS_HOME",           "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX"};

struct ProbeArgs {
  std::string root;
  std::string reference;  // a container image (docs/images.md)
  std::string platform;
  std::string cache_dir;
  LimitArgs limits;  // --low-speed-time, --max-redirects, --retries (for a registry)
  std::string name;
  std::string summary;
  std::string output;
  std::string exports_dir;
  bool layer = false;
  std::string group;
  std::vector<std::string> sources;
  std::string generated_by;
  std::vector<std::string> env;
  bool env_from_process = false;
  bool relocatable_site = false;
  bool no_exports = false;
  int jobs = 0;
  bool json = false;
  bool quiet = false;
  bool allow_unsafe_root = false;
};

// Findings that make a root hostile or broken rather than merely incomplete: links that loop or climb
// above it, a loader configuration that cannot be read as ldconfig writes it.
bool unsafe_root_finding(const Problem& f) {
  return f.kind == "symlink-loop" || f.kind == "escapes-root" || f.kind == "malformed-cache" ||
         f.kind == "malformed-conf";
}

// What the probe found is still written or printed; the exit code says the root needs a look.
int unsafe_root_exit(const ProbeArgs& a, const std::vector<Problem>& findings) {
  std::vector<const Problem*> unsafe;
  for (const auto& f : findings) {
    if (unsafe_root_finding(f)) unsafe.push_back(&f);
  }
  if (unsafe.empty()) return k_exit_ok;
  for (const auto* f : unsafe) {
    const std::string what = f->kind == "symlink-loop"   ? "a symlink loop"
                             : f->kind == "escapes-root" ? "a link that points outside the root"
                                                         : f->kind;
    std::fprintf(stderr, "wheelcheck: %s: %s: %s: %s\n", a.allow_unsafe_root ? "warning" : "error", f->path.c_str(),
                 what.c_str(), f->detail.c_str());
  }
  if (a.allow_unsafe_root) return k_exit_ok;
  std::fprintf(stderr,
               "wheelcheck: error: %s has %zu unsafe link(s) or malformed loader file(s) (links are resolved "
               "inside the root, as chroot would, and at most 40 deep, the kernel's limit); the description is "
               "still %s; --allow-unsafe-root exits 0 for such a root\n",
               (a.root.empty() ? a.reference : a.root).c_str(), unsafe.size(),
               a.output.empty() ? "printed" : "written");
  return k_exit_bad_input;
}

int run_probe(const ProbeArgs& a) {
  if (a.root.empty() == a.reference.empty()) {
    throw usage_error(a.root.empty() ? "probe needs --root DIR or an image reference (docker://HOST/REPO:TAG, "
                                       "oci:DIR[:TAG], oci-archive:FILE, docker-archive:FILE)"
                                     : "probe takes --root DIR or an image reference, not both");
  }
  if (!a.reference.empty() && !container::is_reference(a.reference)) {
    throw usage_error("probe " + a.reference +
                      ": not an image reference (docker://HOST/REPO:TAG, oci:DIR[:TAG], oci-archive:FILE, "
                      "docker-archive:FILE); a folder is probed with --root " +
                      a.reference);
  }
  if (!a.platform.empty() && a.reference.empty())
    throw usage_error("--platform picks a container image's platform: it needs an image reference");
  std::optional<container::PulledImage> pulled;
  if (!a.reference.empty()) {
    ImageRequest request;
    request.platform = a.platform;
    request.cache_dir = a.cache_dir;
    request.progress = show_progress(a.quiet);
    request.limits = &a.limits;
    const container::PullOptions po = pull_options(request, "probe");
    pulled = container::pull(container::parse_reference(a.reference), po);
    if (!a.quiet) {
      std::fprintf(stderr, "probe: %s is %s, %s (%s)%s\n", a.reference.c_str(), pulled->digest.c_str(),
                   pulled->platform.str().c_str(), pulled->platform_note.c_str(), pulled->cached ? ", cached" : "");
    }
  }
  probe::ProbeOptions o;
  o.root = pulled ? pulled->root : a.root;
  o.name = a.name;
  o.summary = a.summary;
  o.kind = a.layer ? image::ImageKind::Layer : image::ImageKind::Image;
  o.group = a.group;
  o.sources = a.sources;
  o.generated_by = a.generated_by;
  o.relocatable_site = a.relocatable_site;
  o.export_tables = !a.no_exports;
  o.jobs = a.jobs;
  const bool root_is_slash = !pulled && std::filesystem::equivalent(a.root, "/");
  if (a.env_from_process || (root_is_slash && a.env.empty())) {
    for (const char* key : k_image_env) {
      if (const char* v = std::getenv(key); v != nullptr) o.env[key] = v;
    }
  }
  for (const auto& [k, v] : parse_env(a.env, "--env")) o.env[k] = v;
  if (pulled) probe::describe_pulled(*pulled, o);  // the config's Env under --env
  if (show_progress(a.quiet)) o.progress = [](const std::string& s) { std::fprintf(stderr, "probe: %s\n", s.c_str()); };
  auto result = probe::probe_root(o);
  if (pulled) probe::record_pulled(*pulled, result.image);
  if (!a.output.empty()) {
    std::string exports_dir = a.exports_dir;
    if (exports_dir.empty() && !a.no_exports) {
      exports_dir = (std::filesystem::absolute(a.output).parent_path() / "exports" / result.image.name).string();
    }
    probe::write_probe(result, a.output, exports_dir);
    if (!a.quiet)
      std::fprintf(stderr, "probe: wrote %s (%zu libraries, %zu export tables%s%s)\n", a.output.c_str(),
                   result.image.libraries.size(), result.tables.size(), exports_dir.empty() ? "" : " in ",
                   exports_dir.c_str());
    if (!result.image.findings.empty()) {
      std::fprintf(stderr, "probe: %zu finding(s): `wheelcheck image show %s` lists them\n",
                   result.image.findings.size(), a.output.c_str());
    }
    return unsafe_root_exit(a, result.image.findings);
  }
  if (a.json) {
    if (!a.exports_dir.empty()) {
      throw usage_error("--exports-dir needs -o FILE (the description records where its tables are)");
    }
    for (auto& l : result.image.libraries) l.exports.clear();
    for (auto& d : result.image.distributions) {
      for (auto& l : d.libraries) l.exports.clear();
    }
    print_out((image::to_json(result.image).dump(2) + "\n"));
  } else {
    print_out(image::render_text(result.image, use_color(stdout)));
  }
  return unsafe_root_exit(a, result.image.findings);
}

struct ImagesArgs {
  std::string db;
  bool json = false;
};

std::string torch_of(const image::Image& im) {
  if (const auto* d = im.distribution("torch")) return d->version;
  return "-";
}

std::string python_of(const image::Image& im) {
  std::string out;
  for (const auto& p : im.pythons) out += (out.empty() ? "" : ",") + p.version;
  if (out.empty() && im.python.set) return im.python.text();
  return out.empty() ? "-" : out;
}

std::string toolkit_of(const image::Image& im) {
  if (!im.toolkit) return "-";
  return image::toolkit_kind_name(im.toolkit->kind) + " " + im.toolkit->version.text();
}

// The toolkit's published minimum driver: "610.43.02", "unknown", or "-" when the description says nothing.
std::string driver_floor_of(const image::Image& im) {
  if (!im.toolkit || !im.toolkit->driver_floor.set) return "-";
  return im.toolkit->driver_floor.text();
}

std::string libc_of(const image::Image& im) {
  if (!im.libc_kind.set && !im.libc_version.set) return "-";
  return (im.libc_kind.known() ? *im.libc_kind.value : std::string("libc")) + " " + im.libc_version.text();
}

// The packaging targets, one row per policy with the architectures it covers (127 targets in 22 rows).
std::string targets_text(const image::Db& db, const std::string& title) {
  const auto* policies = db.policies_if_present();
  if (policies == nullptr) return {};
  struct Row {
    std::string policy, alias, libc;
    std::vector<std::string> arches;
  };
  std::vector<Row> rows;
  for (const auto& p : policies->all()) {
    if (rows.empty() || rows.back().policy != p.name) {
      const std::string libc = p.libc == policy::Libc::Android ? "API " + p.libc_version()
                                                               : policy::libc_name(p.libc) + " " + p.libc_version();
      rows.push_back({p.name, p.aliases.empty() ? "-" : fmt::format("{}", fmt::join(p.aliases, " ")), libc, {}});
    }
    rows.back().arches.push_back(policy::tag_arch(p.libc, p.arch));
  }
  std::string out = title + "\n";
  out += fmt::format("  {:<16} {:<15} {:<12} {}\n", "POLICY", "ALIAS", "LIBC", "ARCHITECTURES");
  for (const auto& r : rows) {
    out += fmt::format("  {:<16} {:<15} {:<12} {}\n", r.policy, r.alias, r.libc, fmt::join(r.arches, " "));
  }
  out += fmt::format(
      "  {} targets: POLICY_ARCH (manylinux_2_28_aarch64) or ALIAS_ARCH (manylinux2014_aarch64); without an\n"
      "  architecture (manylinux2014, manylinux_2_28, musllinux_1_2) the x86_64 one. A check judges the wheel as\n"
      "  the policy does (README: Packaging policies); `wheelcheck inspect` says which one it is consistent with.\n\n",
      policies->all().size());
  return out;
}

// FlagOS's published images, one line each: a release is 40 of them (20 backends, base and runtime).
std::string release_text(const std::vector<image::Image>& images, const std::string& title, const Paint& paint) {
  std::vector<const image::Image*> rows;
  for (const auto& im : images) {
    if (im.group == "flagos-release") rows.push_back(&im);
  }
  if (rows.empty()) return "";
  std::set<std::string> releases;
  for (const auto* im : rows) {
    if (!im->release.empty()) releases.insert(im->release);
  }
  std::string out =
      title + (releases.empty() ? "" : ", release " + join({releases.begin(), releases.end()}, ", ")) + "\n";
  out += fmt::format("  {:<38} {:<8} {:<11} {:<6} {:<27} {:<16} {:<22} {}\n", "NAME", "ARCH", "LIBC", "PYTHON", "TORCH",
                     "TOOLKIT", "CHIPS", "HOST DRIVER");
  for (const auto* im : rows) {
    std::string chips = im->chips.text();
    if (im->gpu_archs.known()) chips += " (" + *im->gpu_archs.value + ")";
    out += fmt::format("  {:<38} {:<8} {:<11} {:<6} {:<27} {:<16} {:<22} {}\n", im->name, im->arch.text(), libc_of(*im),
                       python_of(*im), torch_of(*im), toolkit_of(*im), chips, im->driver.text());
  }
  out += "  " +
         paint.dim("each fact with its source: wheelcheck image show NAME; the runtime images' environment reaches") +
         "\n  " + paint.dim("bash processes only (BASH_ENV), and libraries marked so come from the host at run time") +
         "\n\n";
  return out;
}

int run_images(const ImagesArgs& a) {
  image::Db db(image::Db::locate(a.db));
  struct Row {
    image::Image im;
  };
  std::vector<image::Image> images;
  for (const auto& n : db.image_names()) images.push_back(db.get(n));
  std::vector<image::Image> layers;
  for (const auto& n : db.layer_names()) layers.push_back(db.get(n));
  if (a.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto* list : {&images, &layers}) {
      for (const auto& im : *list) {
        nlohmann::ordered_json j;
        j["name"] = im.name;
        j["kind"] = image::image_kind_name(im.kind);
        j["status"] = image::image_status_name(im.status);
        if (!im.planned_note.empty()) j["planned_note"] = im.planned_note;
        j["group"] = im.group;
        if (!im.policy.empty()) j["policy"] = im.policy;
        j["summary"] = im.summary;
        j["arch"] = im.arch.known() ? nlohmann::ordered_json(*im.arch.value) : nlohmann::ordered_json("unknown");
        j["libc"] = libc_of(im);
        j["python"] = python_of(im);
        j["torch"] = torch_of(im);
        j["toolkit"] = toolkit_of(im);
        j["driver_floor"] = driver_floor_of(im);
        if (im.driver.set) j["driver"] = im.driver.text();
        if (im.chips.set) j["chips"] = im.chips.text();
        if (im.gpu_archs.set) j["gpu_archs"] = im.gpu_archs.text();
        if (!im.release.empty()) j["release"] = im.release;
        if (!im.image_ref.empty()) j["image_ref"] = im.image_ref;
        j["unknown"] = im.unknowns();
        j["file"] = im.file;
        out.push_back(j);
      }
    }
    print_out((out.dump(2) + "\n"));
    return k_exit_ok;
  }
  const bool color = use_color(stdout);
  const Paint paint{color};
  auto bold = [&](const std::string& s) { return paint.bold(s); };
  static const std::map<std::string, std::string> k_group_titles = {
      {"flagos-release", "FlagOS published images (generated from FlagOS's own configuration: scripts/gen-flagos.py)"},
      {"flagos", "FlagOS CI images (declared from the platform facts)"},
      {"generated", "Generated from real binaries"},
      {"target", "Packaging targets (auditwheel's manylinux, musllinux and android policies)"},
      {"", "Other images"}};
  std::string out;
  for (const char* group : {"flagos-release", "flagos", "generated", "target", ""}) {
    if (std::string(group) == "target") {
      out += targets_text(db, bold(k_group_titles.at(group)));
      continue;
    }
    if (std::string(group) == "flagos-release") {
      out += release_text(images, bold(k_group_titles.at(group)), paint);
      continue;
    }
    // Today's images first, then the planned ones under their own heading.
    std::vector<const image::Image*> rows;
    for (const auto status : {image::ImageStatus::Current, image::ImageStatus::Planned}) {
      for (const auto& im : images) {
        if (im.status != status) continue;
        if (im.group == group || (std::string(group).empty() && !k_group_titles.count(im.group))) rows.push_back(&im);
      }
    }
    if (rows.empty()) continue;
    out += bold(k_group_titles.at(group)) + "\n";
    out += fmt::format("  {:<20} {:<8} {:<13} {:<7} {:<12} {:<12} {}\n", "NAME", "ARCH", "LIBC", "PYTHON", "TORCH",
                       "TOOLKIT", "UNKNOWN");
    bool planned_heading = false;
    for (const auto* im : rows) {
      if (im->status == image::ImageStatus::Planned && !planned_heading) {
        out += "  " + bold("Planned") + ": images the CI plans to move to, declared beside today's " +
               paint.dim("(wheelcheck WHEEL --image TODAY,PLANNED compares them)") + "\n";
        planned_heading = true;
      }
      std::string unknown;
      for (const auto& u : im->unknowns()) {
        const auto paren = u.find(" (");
        unknown += (unknown.empty() ? "" : "; ") + (paren == std::string::npos ? u : u.substr(0, paren));
      }
      out += fmt::format("  {:<20} {:<8} {:<13} {:<7} {:<12} {:<12} {}\n", im->name, im->arch.text(), libc_of(*im),
                         python_of(*im), torch_of(*im), toolkit_of(*im), unknown.empty() ? "-" : unknown);
      const std::string indent = "  " + std::string(21, ' ');
      if (!im->summary.empty()) out += indent + paint.dim(im->summary) + "\n";
      if (im->status == image::ImageStatus::Planned) {
        out += indent + paint.yellow("planned") + (im->planned_note.empty() ? "" : ": " + im->planned_note) + "\n";
      }
      if (im->toolkit && im->toolkit->driver_floor.set) {
        const image::Fact& floor = im->toolkit->driver_floor;
        out += indent + "toolkit's minimum driver: " +
               (floor.known() ? *floor.value
                              : paint.yellow("unknown") + (floor.note.empty() ? "" : " (" + floor.note + ")")) +
               "\n";
      }
    }
    out += "\n";
  }
  if (!layers.empty()) {
    out += bold("Layers (building blocks for images: \"layers\": [...])") + "\n";
    for (const auto& l : layers) out += fmt::format("  {:<20} {}\n", l.name, l.summary);
    out += "\n";
  }
  out += "db: " + db.dir() + "   (`wheelcheck image show NAME` for one, with where each fact came from)\n";
  print_out(out);
  return k_exit_ok;
}

struct ShowArgs {
  std::vector<std::string> names;
  std::string platform;
  std::string db;
  bool json = false;
  std::vector<std::string> env;
};

// The image as `--image NAME` would see it: a db name, a packaging target, a description file, or a
// root folder probed on the fly (inspector/cli/targets.cpp).
int run_show(const ShowArgs& a) {
  image::Db db(image::Db::locate(a.db));
  ImageRequest request;
  request.env = parse_env(a.env, "--image-env");
  request.platform = a.platform;
  // Every name first (a mistyped one fails before anything is printed), each one image.
  std::vector<image::Image> images;
  for (const auto& name : a.names) {
    if (name == "all" || name.find_first_of("*?[") != std::string::npos) {
      throw usage_error("image show " + name +
                        ": names one image (`wheelcheck images` lists them; give several names "
                        "for several)");
    }
    images.push_back(std::move(resolve_images({name}, db, request).front().image));
  }
  auto document = [](image::Image& im) {
    for (auto& l : im.libraries) l.exports = l.exports_file;
    for (auto& d : im.distributions) {
      for (auto& l : d.libraries) l.exports = l.exports_file;
    }
    auto j = image::to_json(im, true);
    j["unknown"] = im.unknowns();
    return j;
  };
  if (a.json && images.size() == 1) {
    print_out(document(images.front()).dump(2) + "\n");
  } else if (a.json) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (auto& im : images) all.push_back(document(im));
    print_out(all.dump(2) + "\n");
  } else {
    std::string out;
    for (const auto& im : images) out += (out.empty() ? "" : "\n") + image::render_text(im, use_color(stdout));
    print_out(out);
  }
  return k_exit_ok;
}

}  // namespace

Command add_probe(CLI::App& app) {
  auto a = std::make_shared<ProbeArgs>();
  auto* c = app.add_subcommand("probe",
                               "Describe a container image (a registry's, an OCI layout, an archive) or a real root "
                               "folder (an unpacked image, a debootstrap, or / in a container)");
  c->add_option("image", a->reference,
                "A container image, read without running it: docker://HOST/REPO:TAG (or @sha256:...), "
                "oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE[:REPO:TAG] (docs/images.md)");
  c->add_option("--root", a->root, "The folder to treat as / (symlinks resolve inside it)")
      ->check(CLI::ExistingDirectory);
  c->add_option("--platform", a->platform,
                "For a multi-platform image: OS/ARCH[/VARIANT] to read (linux/amd64, linux/arm64; default: this "
                "machine's)");
  c->add_option("--cache-dir", a->cache_dir,
                "Where an image's layers and root are kept, under images/ (default: $WHEELCHECK_CACHE_DIR, "
                "$XDG_CACHE_HOME/wheelcheck, ~/.cache/wheelcheck)");
  c->add_option("--low-speed-time", a->limits.low_speed_time,
                "Seconds a registry may send under 1 KiB/s before the request fails (default 30)")
      ->check(CLI::PositiveNumber);
  c->add_option("--max-redirects", a->limits.max_redirects, "Most redirects followed by one request (default 10)")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--retries", a->limits.retries, "Retries of a request after a timeout or a server error (default 5)")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--name", a->name, "Name of the description (default: the folder's name)");
  c->add_option("--summary", a->summary, "One line saying what the image is");
  c->add_option("-o,--output", a->output,
                "Write the description here, and the export tables under --exports-dir "
                "(default: exports/NAME beside it)");
  c->add_option("--exports-dir", a->exports_dir, "Folder for the export tables (with -o)");
  c->add_flag("--layer", a->layer, "Mark the description as a layer (a building block for db images)");
  c->add_option("--group", a->group, "Group shown by `wheelcheck images` (flagos, generated, target)");
  c->add_option("--source", a->sources, "Say what the root was made from (recorded; repeatable)");
  c->add_option("--generated-by", a->generated_by, "The command that regenerates the output (recorded)");
  c->add_option("--env", a->env,
                "The image's environment, NAME=VALUE (repeatable; LD_LIBRARY_PATH counts for the loader)");
  c->add_flag("--env-from-process", a->env_from_process,
              "Record this process's LD_LIBRARY_PATH, CUDA_HOME, ... (the default for --root /)");
  c->add_flag("--relocatable-site", a->relocatable_site,
              "Write distributions at {site-packages}, so a layer fits any image's Python");
  c->add_flag("--no-exports", a->no_exports, "Skip export tables (sonames and versions only)");
  c->add_option("-j,--threads", a->jobs, "Worker threads (default: one per core)");
  c->add_flag("--json", a->json, "Print the description as JSON (schema: docs/image.schema.json)");
  c->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  c->add_flag("--allow-unsafe-root", a->allow_unsafe_root,
              "Exit 0 for a root with symlink loops, links above its /, or a malformed ld.so.cache or "
              "ld.so.conf (still reported; otherwise exit 2)");
  c->footer(
      "Examples:\n"
      "  wheelcheck probe docker://harbor.baai.ac.cn/flagos-runtime/flagos-runtime-nvidia-cuda13.3:2.2.0 -o rt.json\n"
      "  wheelcheck probe oci-archive:image.tar --platform linux/arm64 --json\n"
      "  wheelcheck probe --root / --name my-ci-image -o my-ci-image.json     (inside the real image)\n"
      "  wheelcheck probe --root ./rootfs --json | jq .libc\n\n"
      "Reads etc/ld.so.conf (with includes), etc/ld.so.cache (old and new formats), every shared library in\n"
      "the loader's folders (headers, dynamic sections and dynamic symbols only), Pythons and their\n"
      "distributions (*.dist-info), the CUDA version (version.json, the runtime's distribution, libcudart).\n"
      "For --root /, the NVIDIA driver and the GPUs' architectures from nvidia-smi ($WHEELCHECK_NVIDIA_SMI\n"
      "replaces it), else /proc/driver/nvidia ($WHEELCHECK_PROC_NVIDIA replaces it).\n"
      "What it cannot determine is written as unknown, with the reason.\n"
      "An image is read as a container runtime applies its layers (whiteouts, opaque folders, links), each\n"
      "blob checked against its digest first; only the files a probe reads are kept, in the cache by the\n"
      "manifest's digest. Registry credentials: REGISTRY_AUTH_FILE, $DOCKER_CONFIG/config.json or\n"
      "~/.docker/config.json (what docker login writes); plain HTTP for loopback registries and the hosts\n"
      "WHEELCHECK_INSECURE_REGISTRIES lists.\n\n" +
      std::string(k_exit_codes));
  return {c, [a] { return run_probe(*a); }};
}

Command add_images(CLI::App& app) {
  auto a = std::make_shared<ImagesArgs>();
  auto* c = app.add_subcommand("images", "List the image descriptions in the db");
  c->add_option("--db", a->db, "The db folder (default: $WHEELCHECK_DB, else the one installed with wheelcheck)");
  c->add_flag("--json", a->json, "JSON for machines (schema: docs/images.schema.json)");
  c->footer("Example:\n  wheelcheck images\n  wheelcheck image show cuda13.0\n\n" + std::string(k_exit_codes));
  return {c, [a] { return run_images(*a); }};
}

Command add_image(CLI::App& app) {
  auto a = std::make_shared<ShowArgs>();
  auto* c = app.add_subcommand("image", "Work with one image description");
  c->require_subcommand(1);
  auto* show =
      c->add_subcommand("show", "Print one description, composed from its layers, with where each fact came from");
  show->add_option("name", a->names,
                   "A db name (see `wheelcheck images`), a packaging target, a description file, or a root folder "
                   "(probed as `--image DIR` is); several names show each (--json: an array of them)")
      ->required();
  show->add_option("--image-env", a->env,
                   "For a root folder or container image: its environment, NAME=VALUE (repeatable)");
  add_platform_option(*show, a->platform);
  show->add_option("--db", a->db, "The db folder (default: $WHEELCHECK_DB, else the one installed with wheelcheck)");
  show->add_flag("--json", a->json,
                 "JSON with the origin and layer of every fact (one document; an array for several names)");
  show->footer("Example:\n  wheelcheck image show cuda13.0\n  wheelcheck image show ./my-ci-image.json --json\n\n" +
               std::string(k_exit_codes));
  auto f = std::make_shared<FillArgs>();
  auto* fill = c->add_subcommand(
      "fill", "Read the export tables of its distributions from the wheels they are published as, into a db layer");
  add_fill_options(*fill, *f);
  return {c, [a, f, fill] { return fill->parsed() ? run_fill(*f) : run_show(*a); }};
}

}  // namespace wheelcheck::cli
