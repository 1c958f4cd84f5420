// `wheelcheck image show NAME`: one description for people, each fact with where it came from.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "wheelcheck/image.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::image {

std::string toolkit_device(ToolkitKind kind) {
  switch (kind) {
    case ToolkitKind::Cuda:
    case ToolkitKind::Maca:
    case ToolkitKind::Musa:
    case ToolkitKind::Corex: return "GPU";
    case ToolkitKind::Cann: return "NPU";
    case ToolkitKind::Dtk: return "DCU";
    case ToolkitKind::Tops: return "GCU";
    case ToolkitKind::Ppu: return "PPU";
    case ToolkitKind::Neuware: return "MLU";
    case ToolkitKind::Xre: return "XPU";
    case ToolkitKind::Tangrt:
    case ToolkitKind::Tsm: return "accelerator";
  }
  return "accelerator";
}

namespace {

std::string from(Origin origin, const std::string& layer) {
  return layer.empty() ? origin_name(origin) : fmt::format("{} in {}", origin_name(origin), layer);
}

// Whether dotted version a is newer than b ("2.39" > "2.35"); false when either is not numeric.
bool newer(std::string_view a, std::string_view b) {
  const auto x = split(std::string(a), ".", false), y = split(std::string(b), ".", false);
  for (std::size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const auto p = i < x.size() ? small_number(x[i]) : std::optional<int>(0);
    const auto q = i < y.size() ? small_number(y[i]) : std::optional<int>(0);
    if (!p || !q) return false;
    if (*p != *q) return *p > *q;
  }
  return false;
}

// Where a declared version and a layer's libraries disagree: the libraries' tables reach a newer version of
// the family than the description declares (a hand-written Ubuntu 22.04 over the ubuntu24.04 layer). The
// declaration governs: the check takes no version beyond it.
std::vector<std::string> disagreements(const Image& im) {
  std::vector<std::string> out;
  const std::pair<const char*, const Fact*> families[] = {
      {"GLIBC_", &im.libc_version}, {"GLIBCXX_", &im.glibcxx}, {"CXXABI_", &im.cxxabi}};
  for (const auto& [family, fact] : families) {
    if (!fact->known()) continue;
    std::set<std::string> said;
    for (const auto& l : im.libraries) {
      const std::string& upto = l.exports_upto;
      if (upto.rfind(family, 0) != 0 || !newer(upto.substr(std::string_view(family).size()), *fact->value)) continue;
      if (!said.insert(l.layer + upto).second) continue;
      out.push_back(fmt::format("declares {}{} ({}), but {}'s tables reach {} ({}): no version beyond {}{} is taken",
                                family, *fact->value, from(fact->origin, fact->layer),
                                l.layer.empty() ? std::string("a library") : "layer " + l.layer, upto,
                                l.soname.empty() ? l.path : l.soname, family, *fact->value));
    }
  }
  return out;
}

}  // namespace

std::string render_text(const Image& im, bool color) {
  const Paint st{color};
  std::string out;
  out += st.bold(im.name);
  if (!im.summary.empty()) out += " - " + im.summary;
  out += "\n";
  out += fmt::format("  {} ({}{}){}\n", image_kind_name(im.kind), origin_name(im.origin),
                     im.group.empty() ? "" : ", group " + im.group, im.file.empty() ? "" : ", " + im.file);
  if (im.status == ImageStatus::Planned) {
    out += "  " + st.yellow("planned") + (im.planned_note.empty() ? "" : ": " + im.planned_note) + "\n";
  }
  if (!im.image_ref.empty() || !im.release.empty()) {
    out += "  " + (im.image_ref.empty() ? std::string("release ") + im.release : im.image_ref) +
           (im.image_ref.empty() || im.release.empty() ? "" : "  (release " + im.release + ")") + "\n";
  }
  if (!im.from.empty()) {
    out += "  from " + im.from.reference + ": manifest " + im.from.digest + ", " + im.from.platform +
           (im.from.user.empty() ? "" : ", user " + im.from.user) + "\n";
  }
  if (!im.layers.empty()) out += "  layers: " + join(im.layers, " + ") + "\n";
  for (const auto& s : im.sources) out += "  source: " + s + "\n";
  if (!im.generated_by.empty()) out += "  regenerate: " + im.generated_by + "\n";

  out += "\n" + st.bold("Facts") + "\n";
  auto fact = [&](std::string_view label, const Fact& f) {
    if (!f.set) return;
    const std::string value = f.known() ? *f.value : st.yellow("unknown");
    out += fmt::format("  {:<22} {:<16} {}{}\n", label, value, st.dim(from(f.origin, f.layer)),
                       f.note.empty() ? "" : st.dim(": " + f.note));
  };
  fact("arch", im.arch);
  fact("libc", im.libc_kind);
  fact("libc version", im.libc_version);
  fact("libstdc++ GLIBCXX", im.glibcxx);
  fact("libstdc++ CXXABI", im.cxxabi);
  if (im.toolkit) {
    fact(toolkit_kind_name(im.toolkit->kind) + " toolkit", im.toolkit->version);
    fact(toolkit_kind_name(im.toolkit->kind) + " runtime", im.toolkit->runtime);
    fact(toolkit_kind_name(im.toolkit->kind) + " driver floor", im.toolkit->driver_floor);
    if (!im.toolkit->runtime_sonames.empty()) {
      out += fmt::format("  {:<22} {}\n", "runtime sonames", join(im.toolkit->runtime_sonames, ", "));
    }
  }
  fact("chips", im.chips);
  // The driver of the image's accelerator, in its vendor's word (an Ascend image's is an NPU driver).
  fact((im.toolkit ? toolkit_device(im.toolkit->kind) : std::string("GPU")) + " driver", im.driver);
  fact("GPU architectures", im.gpu_archs);
  fact("x86-64 level", im.isa_level);
  for (const auto& p : im.pythons) {
    out += fmt::format("  {:<22} {:<16} {}\n", "Python", p.version,
                       st.dim(from(p.origin, p.layer) + (p.executable.empty() ? "" : ": " + p.executable)));
  }
  for (const auto& d : im.distributions) {
    if (wheel::normalize_project_name(d.name) != "torch") continue;
    out += fmt::format("  {:<22} {:<16} {}\n", "torch", d.version,
                       st.dim(from(d.origin, d.layer) + (d.note.empty() ? "" : ": " + d.note) +
                              (d.location.empty() ? "" : ", at " + d.location)));
  }
  for (const auto& d : disagreements(im)) out += "  " + st.yellow("!") + " " + d + "\n";

  const Loader& ld = im.loader;
  out += "\n" + st.bold("Loader") + "\n";
  out += fmt::format("  default folders        {}{}\n", ld.default_dirs.empty() ? "-" : join(ld.default_dirs, ":"),
                     ld.default_dirs_note.set
                         ? st.dim("  " + from(ld.default_dirs_note.origin, ld.default_dirs_note.layer) +
                                  (ld.default_dirs_note.note.empty() ? "" : ": " + ld.default_dirs_note.note))
                         : "");
  out += fmt::format("  ld.so.conf folders     {}\n", ld.conf_dirs.empty() ? "-" : join(ld.conf_dirs, ":"));
  out += fmt::format("  ld.so.cache            {}\n",
                     ld.cache_format.empty() ? "not described"
                                             : fmt::format("{} format, {} entries", ld.cache_format, ld.cache.size()));
  out += fmt::format("  LD_LIBRARY_PATH        {}\n", ld.ld_library_path.empty() ? "-" : join(ld.ld_library_path, ":"));
  if (!im.bash_only_dirs.empty()) {
    out += "  " + st.yellow("bash only") +
           fmt::format("              {} (from the bash-only environment below)\n", join(im.bash_only_dirs, ":"));
  }
  for (const auto& m : im.host_mounts) {
    out += fmt::format("  from the host          {}{}\n", m.path, st.dim(m.note.empty() ? "" : "  " + m.note));
  }

  if (!im.libraries.empty() || !im.inventory.absent.empty()) {
    out += "\n" + st.bold(fmt::format("Libraries ({})", im.libraries.size())) + "\n";
    // Unknown is not absent: a need outside a partial list is a condition, not an error (docs/images.md).
    out += "  " +
           (im.inventory.complete ? std::string("complete: a need none of these provides is known absent")
                                  : st.yellow("partial") + ": a need none of these provides is not stated") +
           st.dim(im.inventory.note.empty() ? "" : " (" + im.inventory.note + ")") + "\n";
    if (!im.inventory.absent.empty()) out += "  stated absent: " + join(im.inventory.absent, ", ") + "\n";
    for (const auto& l : im.libraries) {
      std::string exports = !l.exports.empty()           ? "exports: table"
                            : !l.exports_unknown.empty() ? st.yellow("exports: unknown")
                            : !l.versions.empty()        ? fmt::format("versions: {}", l.versions.size())
                                                         : "exports: none";
      if (!l.exports_upto.empty()) exports += " up to " + l.exports_upto;
      if (!l.exports_lent.empty()) exports += " (an earlier build's: a floor)";
      out += fmt::format("  {:<28} {} {}  {}\n", l.soname.empty() ? "(no soname)" : l.soname, l.path,
                         st.dim(l.machine.empty() ? "" : fmt::format("{}/{}", l.machine, l.elf_class)),
                         st.dim(exports + ", " + from(l.origin, l.layer)));
      if (!l.host.empty()) out += "    " + st.yellow("from the host: ") + l.host + "\n";
    }
  }
  if (!im.pythons.empty()) {
    out += "\n" + st.bold("Pythons") + "\n";
    for (const auto& p : im.pythons) {
      out += fmt::format("  Python {:<6} abi {}  {}  site-packages {}  {}\n", p.version, join(p.abi_tags, ","),
                         p.executable.empty() ? "(no executable found)" : p.executable, join(p.site_packages, ":"),
                         st.dim(from(p.origin, p.layer)));
    }
  }
  if (!im.distributions.empty()) {
    out += "\n" + st.bold("Python distributions") + "\n";
    for (const auto& d : im.distributions) {
      out += fmt::format("  {} {}  at {}  {}\n", d.name, d.version, d.location, st.dim(from(d.origin, d.layer)));
      if (!d.note.empty()) out += "    " + d.note + "\n";
      if (!d.exports_unknown.empty()) out += "    " + st.yellow("export tables unknown: " + d.exports_unknown) + "\n";
      for (const auto& l : d.libraries) {
        out += fmt::format("    {:<40} {}{}\n", l.path, l.soname.empty() ? "" : "soname " + l.soname,
                           !l.exports.empty()           ? st.dim("  exports: table")
                           : !l.exports_unknown.empty() ? st.yellow("  exports: unknown")
                                                        : "");
      }
    }
  }
  if (!im.env.empty()) {
    out += "\n" + st.bold("Environment") + "\n";
    for (const auto& [k, v] : im.env) out += fmt::format("  {}={}\n", k, v);
  }
  if (!im.bash_env.vars.empty()) {
    out += "\n" + st.bold("Environment of bash processes only") +
           (im.bash_env.note.empty() ? "" : st.dim(" (" + im.bash_env.note + ")")) + "\n";
    for (const auto& [k, v] : im.bash_env.vars) out += fmt::format("  {}={}\n", k, v);
  }
  const auto unknowns = im.unknowns();
  if (!unknowns.empty()) {
    out += "\n" + st.bold("Unknown") + "\n";
    for (const auto& u : unknowns) out += "  - " + st.yellow(u) + "\n";
  }
  if (!im.findings.empty()) {
    out += "\n" + st.bold("Findings of the probe") + "\n";
    for (const auto& f : im.findings) out += fmt::format("  {:<16} {}: {}\n", f.kind, f.path, f.detail);
  }
  return out;
}

}  // namespace wheelcheck::image
