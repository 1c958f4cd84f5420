// What a wheel and an image's stack say beyond the loader's search: a pure tag on native code, METADATA's
// Version against the file name's, a NumPy 1.x build under numpy 2, a variable a rule set requires, the wheel's
// own symbols, and the bash-only environment and host libraries an answer depends on (stack_checks.hpp; the
// publisher check shares the first two: include/wheelcheck/checks.hpp).
#include "inspector/verdict/stack_checks.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "inspector/verdict/findings.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::verdict {

// A pure tag (py3-none-any: any Python, any platform) on a wheel with ELF members: pip installs it everywhere on
// its tag's word, and its native code loads only where it was built for (FlagOS's repacks of opencv and
// xgrammar). A warning: where the machine and Python fit, it works; where they do not, wrong-arch says so.
std::vector<Finding> check_pure_tag(const WheelProfile& wheel) {
  if (wheel.filename.tags.empty()) return {};
  for (const auto& t : wheel.filename.tags) {
    if (t.abi != "none" || t.platform != "any") return {};
  }
  // (A lambda, not a helper of this file: the unity batches put this file beside wheel_checks.cpp's own has(): another
  // name)
  auto listed = [](const std::vector<std::string>& v, std::string_view s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  std::vector<std::string> natives, archs, pythons;
  for (const auto& m : wheel.members) {
    if (!m.elf || (m.elf->type != elf::FileType::Shared && m.elf->type != elf::FileType::Executable)) continue;
    natives.push_back(m.path);
    const std::string arch = elf::machine_name(m.elf->machine, m.elf->elf_class, m.elf->endian, m.elf->e_flags);
    if (!listed(archs, arch)) archs.push_back(arch);
    const std::string base = base_name(m.path);
    if (const auto at = base.find(".cpython-"); at != std::string::npos) {
      const std::string ver = base.substr(at + 9, base.find('-', at + 9) - at - 9);  // "310"
      if (!ver.empty() && !listed(pythons, "cp" + ver + "-cp" + ver)) pythons.push_back("cp" + ver + "-cp" + ver);
    } else if (base.find(".abi3.") != std::string::npos && !listed(pythons, "cp3X-abi3")) {
      pythons.push_back("cp3X-abi3");
    }
  }
  if (natives.empty()) return {};
  std::vector<std::string> platforms;
  for (const auto& a : archs)
    platforms.push_back("linux_" + wheel::tag_arch_of(a) + " (or the manylinux tag its glibc floor allows)");
  const std::string tag = wheel.filename.tags.front().python + "-none-any";
  Finding f;
  f.kind = FindingKind::TagPureBinary;
  f.severity = Severity::Warning;
  f.required_version = join(archs, ", ");
  f.explanation = fmt::format(
      "the wheel is tagged {} (any Python, any platform), but {} of its members {} native code for {} ({}): pip "
      "installs it on any machine and Python on its tag's word, and the loader refuses those members wherever they "
      "were not built for.",
      tag, natives.size(), natives.size() == 1 ? "is" : "are", join(archs, " and "),
      join(std::vector<std::string>(natives.begin(),
                                    natives.begin() + static_cast<long>(std::min<std::size_t>(3, natives.size()))),
           ", ") +
          (natives.size() > 3 ? ", ..." : ""));
  f.fix = "tag it as what it is built for: " +
          (pythons.empty() ? std::string("the Python tag of its extensions") : join(pythons, " or ")) + ", " +
          join(platforms, " or ");
  f.evidence.push_back("tags: " + tag);
  for (const auto& n : natives) f.evidence.push_back("native member: " + n);
  return {f};
}

// What an answer depends on beyond the image's files: a library found through an LD_LIBRARY_PATH folder that only
// bash processes have (BASH_ENV), or one the container runtime mounts from the host; "" when neither.
std::string environment_note(const resolve::Need& need, const image::Image& image) {
  if (need.found == nullptr) return "";
  if (!need.found->host.empty()) {
    return need.name + " comes from the host at run time, not from the image: " + need.found->host;
  }
  if (need.rule != resolve::How::LdLibraryPath || image.bash_only_dirs.empty()) return "";
  const std::string dir = dir_name(need.where);
  if (std::find(image.bash_only_dirs.begin(), image.bash_only_dirs.end(), dir) == image.bash_only_dirs.end()) return "";
  return need.name + " is found through LD_LIBRARY_PATH=" + dir + ", which only bash processes have" +
         (image.bash_env.note.empty() ? std::string() : " (" + image.bash_env.note + ")") +
         ": a process started without bash (a direct `python`, `sh -c`, an entrypoint in exec form) does not find it";
}

// A member built against NumPy 1.x's C API (its _import_array() asks for numpy.core._multiarray_umath) where
// numpy 2 is installed (a wheel beside it, else the image's): NumPy 2 refuses it at import_array().
std::vector<Finding> check_numpy_abi(const WheelProfile& wheel, const image::Image& image,
                                     const std::vector<const WheelProfile*>& with) {
  std::vector<Finding> out;
  std::string version, where;
  if (const auto* d = image.distribution("numpy")) {
    version = d->version;
    where = "the image's numpy " + d->version;
  }
  for (const auto* w : with) {
    if (wheel::normalize_project_name(w->filename.name) == "numpy") {
      version = w->filename.version;
      where = "numpy " + version + " (" + w->filename.filename + ")";
    }
  }
  const auto major = small_number(version.substr(0, version.find('.')));
  if (!major || *major < 2) return out;
  for (const auto& m : wheel.members) {
    if (m.numpy_c_api != 1) continue;
    out.push_back(
        make(FindingKind::NumpyAbi, Severity::Error)
            .member(m.path)
            .library("numpy")
            .version("<2")
            .explain(fmt::format(
                "{} is built against NumPy 1.x's C API (its import_array() asks for numpy.core._multiarray_umath), "
                "and {} is installed: NumPy 2 refuses modules compiled against NumPy 1.x, so its NumPy support "
                "fails at import (torch: \"Numpy is not available\").",
                m.path, where))
            .fix("numpy<2 beside it, or a build against NumPy 2's headers (which runs on NumPy 1.x too)")
            .evidence("the member's bytes name numpy.core._multiarray_umath, not numpy._core._multiarray_umath"));
  }
  return out;
}

// Variables a member needs beside another distribution (rules' requires_env): set by the image (Docker
// ENV: fine), set only for bash (said so), or not at all (an error on the member: its route is off, and
// its gates set the variable).
EnvChecks check_required_env(const WheelProfile& wheel, const image::Image& image, const rules::RuleSet& rules,
                             const std::vector<const WheelProfile*>& with) {
  EnvChecks out;
  const std::string name = wheel::normalize_project_name(wheel.filename.name);
  for (const auto& req : rules.requires_env) {
    if (!req.wheels.empty() && std::none_of(req.wheels.begin(), req.wheels.end(),
                                            [&](const std::string& g) { return rules::glob_match(g, name, false); }))
      continue;
    const std::string* member = nullptr;
    for (const auto* paths : {&wheel.device_code}) {
      for (const auto& path : *paths) {
        for (const auto& g : req.members) {
          if (member == nullptr && rules::glob_match(g, path, true)) member = &path;
        }
      }
    }
    for (const auto& m : wheel.members) {
      for (const auto& g : req.members) {
        if (member == nullptr && rules::glob_match(g, m.path, true)) member = &m.path;
      }
    }
    if (member == nullptr) continue;
    std::string beside;
    for (const auto& b : req.beside) {
      if (const auto* d = image.distribution(b)) beside = d->name + " " + d->version + " (in the image)";
      for (const auto* w : with) {
        if (wheel::normalize_project_name(w->filename.name) == wheel::normalize_project_name(b))
          beside = w->filename.filename + " (--with)";
      }
    }
    if (!req.beside.empty() && beside.empty()) continue;
    if (image.env.count(req.variable)) continue;
    if (auto it = image.bash_env.vars.find(req.variable); it != image.bash_env.vars.end()) {
      out.notes.push_back(req.variable + "=" + it->second + " (which " + *member + " needs beside " + beside +
                          ") is set only for bash processes" +
                          (image.bash_env.note.empty() ? std::string() : " (" + image.bash_env.note + ")") +
                          ": a process started without bash does not have it");
      continue;
    }
    out.findings.push_back(make(FindingKind::Environment, Severity::Error)
                               .member(*member)
                               .library(req.variable)
                               .explain(fmt::format("{} beside {} needs {} set: {}; the image does not set it.",
                                                    *member, beside, req.variable, req.why))
                               .fix(fmt::format("set {} (this route's gates do)", req.variable))
                               .evidence(req.id + (req.source.empty() ? "" : " (" + req.source + ")")));
  }
  return out;
}

// The wheel's own symbol (rules' own_symbols), left undefined: no library of the image, known or not, would
// define it.
Finding own_symbol_finding(const WheelProfile& wheel, const resolve::Unbound& u, const rules::OwnSymbols& own) {
  const elf::Symbol& s = *u.symbol;
  Draft f = make(FindingKind::MissingSymbol, Severity::Error)
                .member(u.object->member.empty() ? u.object->path : u.object->member)
                .symbol(s.name)
                .version(s.version)
                .why(Why::Absent);
  const std::string pretty = f.peek().demangled.empty() ? s.name : f.peek().demangled;
  std::vector<std::string> members;
  for (const auto& m : wheel.members) {
    if (m.elf) members.push_back(m.path);
  }
  return f
      .explain(fmt::format("needs {}, which is {}'s own symbol ({}), and no member of the wheel defines it; no "
                           "library of another project would. It links (a shared library may leave symbols "
                           "undefined), but dlopen(RTLD_NOW) and the import fail: \"undefined symbol: {}\".",
                           pretty, wheel.filename.name, own.why, s.name))
      .fix("rebuild with the sources that define it")
      .evidence("the wheel's members with dynamic symbols: " + join(members, ", "));
}

std::optional<Finding> version_mismatch(const WheelProfile& w, Severity severity) {
  const auto& m = w.metadata;
  if (m.version.empty() || w.filename.version.empty()) return std::nullopt;
  const auto cmp = wheel::compare_versions(m.version, w.filename.version);
  if (cmp && *cmp == 0) return std::nullopt;
  const std::string name = w.filename.name, file = w.filename.filename;
  const std::string label =
      m.version.find('+') == std::string::npos && w.filename.version.find('+') != std::string::npos
          ? "; a repack that adds a local label to the file name must add it to METADATA too"
          : "";
  if (!cmp) {  // METADATA's Version is no PEP 440 version: no pip command was asked about it
    return make(FindingKind::Metadata, severity)
        .library("Version")
        .version(m.version)
        .explain(fmt::format("METADATA says Version: {}, which is not a PEP 440 version, and the file name says {}{}",
                             m.version, w.filename.version, label))
        .fix("make METADATA's Version and the file name's the same");
  }
  // What pip 23.2.1 does, command by command (tests/unit/test_metadata_referee.cpp asks it).
  const std::string by_path = "pip install ./" + file;
  const std::string pinned = "pip install " + name + "==" + w.filename.version;
  const std::string unpinned = "pip install " + name;
  return make(FindingKind::Metadata, severity)
      .member(name + "-" + w.filename.version + ".dist-info/METADATA")
      .library("Version")
      .version(m.version)
      .explain(fmt::format(
          "METADATA says Version: {}, the file name says {}: pip installs the wheel from its path or URL (`{}`), "
          "as {} {}, and refuses it where it finds it by name in an index or --find-links, pinned or not (`{}`, "
          "`{}`: \"has inconsistent version: expected '{}', but metadata has '{}'\"): published to an "
          "index, no `pip install {}` gets it{}",
          m.version, w.filename.version, by_path, name, m.version, pinned, unpinned, w.filename.version, m.version,
          name, label))
      .fix("make METADATA's Version and the file name's the same")
      .evidence(fmt::format("METADATA Version: {}; file name {}", m.version, file))
      .evidence(fmt::format("{}: installs it (as {} {})", by_path, name, m.version))
      .evidence(pinned + " (from an index or --find-links): refuses it")
      .evidence(unpinned + " (from an index or --find-links): refuses it");
}

}  // namespace wheelcheck::verdict
