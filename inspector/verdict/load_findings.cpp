// Findings on what a load binds: see load_findings.hpp.
#include "inspector/verdict/load_findings.hpp"
#include "wheelcheck/util.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "inspector/verdict/findings.hpp"
#include "wheelcheck/cxx_names.hpp"

namespace wheelcheck::verdict {

namespace {

// The RUNPATH entry that reaches `to`'s folder from `from`'s: "$ORIGIN/lib", "$ORIGIN/../lib", "$ORIGIN".
std::string origin_entry(const std::string& from, const std::string& to) {
  namespace fs = std::filesystem;
  const fs::path rel = fs::path(to).parent_path().lexically_relative(fs::path(from).parent_path());
  return rel.empty() || rel == "." ? "$ORIGIN" : "$ORIGIN/" + rel.string();
}

std::string file_name_of(const std::string& path) {
  return path.substr(path.find_last_of('/') + 1);
}

// "libLerc.so.4 (the image's)", "libc10.so (torch 2.10.0)": who it is, for the sentence.
std::string owner_words(const resolve::Object& o) {
  if (o.source == resolve::Object::Source::Distribution) return file_name_of(o.path) + " of " + o.label;
  // A wheel beside the checked one (--with, a lock) is no part of the image.
  if (o.source == resolve::Object::Source::WithWheel)
    return file_name_of(o.path) + " of " + o.wheel + " (installed beside it)";
  return "the image's " + file_name_of(o.path);
}

// Where a distribution the wheel requires comes from, for "torch in this image cannot be imported".
std::string dist_where(const resolve::Object& o) {
  return o.source == resolve::Object::Source::WithWheel ? "installed beside it" : "in this image";
}

// "; the image's glibc is 2.36": what the image says of the family a version belongs to.
std::string family_context(const image::Image& image, const std::string& version) {
  if (version.rfind("GLIBC_", 0) == 0 && image.libc_version.set)
    return fmt::format("; the image's glibc is {}", image.libc_version.text());
  if (version.rfind("GLIBCXX_", 0) == 0 && image.glibcxx.set)
    return fmt::format("; the image's libstdc++ is GLIBCXX_{}", image.glibcxx.text());
  if (version.rfind("CXXABI_", 0) == 0 && image.cxxabi.set)
    return fmt::format("; the image's libstdc++ is CXXABI_{}", image.cxxabi.text());
  return "";
}

}  // namespace

Finding member_missing_version(const image::Image& image, const resolve::MissingVersion& mv,
                               const std::string& member) {
  const std::string have = mv.provided.empty() ? "none of that family" : "newest " + mv.provided.back();
  Draft f = make(FindingKind::MissingVersion, Severity::Error)
                .member(member)
                .library(mv.file)
                .version(mv.version)
                .why(Why::VersionTooNew)
                .explain(fmt::format("needs version {} of {}, which the image's {} does not define ({}){}: the "
                                     "loader refuses it (\"version `{}' not found\").",
                                     mv.version, mv.file, mv.provider->path.empty() ? mv.file : mv.provider->path, have,
                                     family_context(image, mv.version), mv.version));
  if (mv.version.rfind("GLIBC_2.", 0) == 0) {
    f.fix(fmt::format(
        "a build for an older glibc (manylinux_{} or older tags the wheels that fit), or an image with glibc >= {}",
        image.libc_version.known() ? "2_" + image.libc_version.value->substr(2) : "X_Y", mv.version.substr(6)));
  } else {
    f.fix(fmt::format("a newer {} in the image, or a build of this wheel against an older one", mv.file));
  }
  if (!mv.provided.empty()) f.candidates({mv.provided.back()});
  Finding out = f;
  // The symbols behind the floor: the member's undefined symbols bound at that version of that library.
  if (mv.object != nullptr && mv.object->binary != nullptr) {
    for (const auto& s : mv.object->binary->symbols) {
      if (s.defined || s.version != mv.version || (!s.version_file.empty() && s.version_file != mv.file)) continue;
      if (out.symbols.size() < k_floor_symbols_listed) out.symbols.push_back(cxx::demangle_or_self(s.name));
      ++out.symbols_total;
    }
  }
  if (!out.symbols.empty()) {
    out.explanation += fmt::format(" {} need{} it: {}.",
                                   out.symbols_total == 1 ? "One symbol" : fmt::format("{} symbols", out.symbols_total),
                                   out.symbols_total == 1 ? "s" : "", symbols_words(out));
    // The cause, where a known one; the raw names (__isoc23_strtol) are what it is recognised by.
    std::vector<std::string> raw;
    for (const auto& s : mv.object->binary->symbols) {
      if (!s.defined && s.version == mv.version) raw.push_back(s.name);
    }
    const std::string cause = known_cause(mv.version, raw);
    if (!cause.empty()) out.explanation += " Why: " + cause + ".";
  }
  return out;
}

NeedReport need_report(const resolve::Need& need, std::string requester) {
  NeedReport nr;
  nr.requester = std::move(requester);
  nr.name = need.name;
  nr.found = need.found != nullptr;
  nr.rule = need.rule;
  nr.where = need.where;
  nr.by = need.by;
  nr.tried = need.tried;
  return nr;
}

std::string image_object_name(const resolve::Object& o) {
  return o.path.empty() ? o.soname : o.path;
}

Finding image_missing_version(const image::Image& image, const resolve::MissingVersion& mv) {
  const resolve::Object& lib = *mv.object;
  const std::string have = mv.provided.empty() ? "none of that family" : "newest " + mv.provided.back();
  const std::string context = family_context(image, mv.version);
  const std::string provider = mv.provider->path.empty() ? mv.file : mv.provider->path;
  const bool dist = lib.source == resolve::Object::Source::Distribution ||
                    (lib.source == resolve::Object::Source::WithWheel && !lib.dist.empty());
  const std::string name = lib.dist.substr(0, lib.dist.find(' '));  // "torch" of "torch 2.10.0+cpu"
  const std::string lead =
      dist ? fmt::format("{} {} cannot be imported: {} needs", name, dist_where(lib), file_name_of(lib.path))
           : fmt::format("{} cannot be loaded in this image: it needs", owner_words(lib));
  Draft d =
      make(FindingKind::MissingVersion, Severity::Error)
          .object(image_object_name(lib))
          .library(mv.file)
          .version(mv.version)
          .why(Why::VersionTooNew)
          .explain(fmt::format("{} version {} of {}, which {} does not define ({}){}; the loader refuses it "
                               "(\"version `{}' not found (required by {})\"), and every member whose load "
                               "reaches it.",
                               lead, mv.version, mv.file, provider, have, context, mv.version, file_name_of(lib.path)))
          .fix(dist ? fmt::format("a {} build for this image's {} (or an image whose {} defines {})", name, mv.file,
                                  mv.file, mv.version)
                    : fmt::format("the image's {} and {} from the same release (a partly upgraded image mixes "
                                  "them), or an image whose {} defines {}",
                                  file_name_of(lib.path), mv.file, mv.file, mv.version))
          .evidence(fmt::format("{} {} (DT_VERNEED of {})", mv.file, mv.version, image_object_name(lib)));
  if (!mv.provided.empty()) d.candidates({mv.provided.back()});
  return d;
}

Finding image_unbound_symbol(const resolve::ImageUnbound& u) {
  const resolve::Object& lib = *u.object;
  const std::string at = u.version.empty() ? "" : " at version " + u.version + " of " + u.file;
  Draft d = make(FindingKind::MissingSymbol, Severity::Error)
                .object(image_object_name(lib))
                .symbol(u.symbol)
                .version(u.version)
                .library(u.file)
                .why(Why::Absent);
  const std::string pretty = d.peek().demangled.empty() ? u.symbol : d.peek().demangled;
  d.explain(fmt::format("{} cannot be loaded in this image: it needs {}{}, which nothing in the load defines; "
                        "imported with RTLD_NOW the loader refuses it (\"undefined symbol: {}\"), and every member "
                        "whose load reaches it.",
                        owner_words(lib), pretty, at, u.symbol))
      .fix(fmt::format("the image's {} and the libraries it was built against from the same release",
                       file_name_of(lib.path)))
      .evidence(fmt::format("{}{} (undefined in {})", u.symbol, u.version.empty() ? "" : "@" + u.version,
                            image_object_name(lib)));
  return d;
}

Finding provider_failure(Finding f, const std::string& distribution, const std::vector<std::string>& modules) {
  // The failure may already say that the distribution cannot be imported (image_missing_version): once.
  std::string why = f.explanation, where = "in this image";
  for (const char* w : {"in this image", "installed beside it"}) {
    const std::string lead = distribution + " " + w + " cannot be imported: ";
    if (why.rfind(lead, 0) == 0) {
      why = why.substr(lead.size());
      where = w;
    }
  }
  f.explanation =
      fmt::format("{} {} cannot be imported: {} The wheel requires {} (Requires-Dist), so none of it can work here.",
                  distribution, where, why, distribution);
  f.roots = modules;
  f.provider = true;
  return f;
}

std::vector<Finding> provider_version_needs(const resolve::Space& space, const image::Image& image,
                                            const resolve::Object& lib, const resolve::Need& need,
                                            const std::vector<std::string>& modules) {
  std::vector<Finding> out;
  if (need.found == nullptr) return out;
  const auto defined = resolve::defined_versions(space, *need.found);
  if (!defined || defined->empty()) return out;  // unknown (the symbol checks say so), or unversioned
  const std::string name = lib.dist.substr(0, lib.dist.find(' '));  // "torch" of "torch 2.10.0+cpu"
  for (const auto& vn : lib.version_needs) {
    const auto sp = vn.find(' ');
    if (sp == std::string::npos || vn.substr(0, sp) != need.name) continue;
    const std::string version = vn.substr(sp + 1);
    if (std::find(defined->begin(), defined->end(), version) != defined->end()) continue;
    std::string have;
    if (version.rfind("GLIBC_", 0) == 0 && image.libc_version.known()) {
      have = "the image has glibc " + *image.libc_version.value;
    } else {
      std::string newest;
      const std::string family = version.substr(0, version.find('_') + 1);
      for (const auto& v : *defined) {
        if (v.rfind(family, 0) == 0 && (newest.empty() || resolve::version_newer(v, newest))) newest = v;
      }
      have = "the image's " + need.name + (newest.empty() ? " defines none of that family" : " stops at " + newest);
    }
    Draft d =
        make(FindingKind::MissingVersion, Severity::Error)
            .object(lib.path)
            .library(need.name)
            .version(version)
            .why(Why::VersionTooNew)
            .explain(fmt::format("{} in this image cannot be imported: {} needs {}, {}; the wheel requires {} "
                                 "(Requires-Dist), so none of it can work here.",
                                 name, file_name_of(lib.path), version, have, name))
            .fix(fmt::format("a {} build for this image's {} (or an image that has {})", name, need.name, version))
            .evidence(vn + " (DT_VERNEED of " + lib.path + ")");
    if (!modules.empty()) d.roots(modules);
    Finding f = d;
    f.provider = true;
    out.push_back(std::move(f));
  }
  return out;
}

Finding provider_unbound_symbol(const resolve::ImageUnbound& u, const std::vector<std::string>& modules) {
  const resolve::Object& lib = *u.object;
  const std::string name = lib.dist.substr(0, lib.dist.find(' '));
  Finding f = image_unbound_symbol(u);
  const std::string pretty = f.demangled.empty() ? u.symbol : f.demangled;
  f.explanation = fmt::format(
      "{} in this image cannot be imported: {} needs {}{}, which nothing it loads defines; the "
      "wheel requires {} (Requires-Dist), so none of it can work here.",
      name, file_name_of(lib.path), pretty, u.version.empty() ? "" : " at version " + u.version + " of " + u.file,
      name);
  f.fix = fmt::format("a {} build whose libraries this image can load", name);
  f.roots = modules;
  f.provider = true;
  return f;
}

// The error of an unbound symbol, classified against the export tables of its load scope (`tables`, from the
// objects named in `searched`); with u.unknown set, the old-ABI signature no C++11-ABI library can export.
Finding unbound_symbol_finding(const resolve::Unbound& u, const std::string& member,
                               const std::vector<const exports::Table*>& tables,
                               const std::vector<std::string>& searched) {
  const elf::Symbol& s = *u.symbol;
  Draft f = make(FindingKind::MissingSymbol, Severity::Error)
                .member(member)
                .symbol(s.name)
                .version(s.version)
                .library(s.version_file);
  const std::string pretty = f.peek().demangled.empty() ? s.name : f.peek().demangled;
  if (!u.unknown.empty()) {  // old_abi_against_cxx11
    std::vector<std::string> who;
    for (const resolve::Object* o : u.unknown) who.push_back(o->label);
    std::sort(who.begin(), who.end());
    who.erase(std::unique(who.begin(), who.end()), who.end());
    return f.why(Why::CxxAbiMismatch)
        .library(u.unknown.front()->soname)
        .explain(fmt::format(
            "needs {}, a signature with the pre-C++11 std::string/std::list ABI (built with "
            "_GLIBCXX_USE_CXX11_ABI=0); {} is built with the C++11 ABI, so it cannot export it. The loader refuses "
            "this member (\"undefined symbol: {}\").",
            pretty, fmt::join(who, ", "), s.name))
        .fix("rebuild this member with _GLIBCXX_USE_CXX11_ABI=1 against the PyTorch in the image")
        .evidence("declared: " + fmt::format("{}", fmt::join(who, ", ")) + " uses the C++11 ABI (cxx11_abi)");
  }
  const Classification c = classify_missing_symbol(s.name, s.version, tables);
  const Why why = why_of(c.classification);
  f.why(why).candidates(c.candidates);
  if (!c.demangled.empty()) f.demangled(c.demangled);
  if (!c.provider.empty()) f.library(c.provider);
  std::string explanation =
      c.explanation.empty() ? fmt::format("needs {}, which nothing in its load scope defines.", pretty) : c.explanation;
  if (!explanation.empty() && explanation.back() != '.') explanation += '.';
  f.explain(explanation + " The loader refuses this member (\"undefined symbol: " + s.name +
            "\") unless it is loaded lazily and never calls it.");
  switch (why) {
    case Why::SignatureChanged:
      f.fix(
          "rebuild this member against the headers of the library version in the image (or install the version it "
          "was built against)");
      break;
    case Why::CxxAbiMismatch:
      f.fix("rebuild with the same _GLIBCXX_USE_CXX11_ABI setting as the library (PyTorch wheels since 2.7 use 1)");
      break;
    case Why::VersionTooNew:
      f.fix("a newer provider in the image, or a build against the provider's older version");
      break;
    default: f.fix("install the library that defines it, or a build of this member that does not need it"); break;
  }
  return f.evidence("looked in, in order: " + fmt::format("{}", fmt::join(searched, ", ")));
}

// A library that is there, but on no search path of the object that needs it: where it is, and what
// would reach it (for a wheel's own member, the RUNPATH from its folder to the library's).
void explain_unreachable(Draft& f, const resolve::Object& req, const std::string& needer, const resolve::Object& there,
                         const std::string& name) {
  using resolve::Object;
  const std::string folder = std::filesystem::path(there.path).parent_path().string();
  switch (there.source) {
    case Object::Source::Wheel:
    case Object::Source::WithWheel:
      f.explain(fmt::format("{} is in the wheel{} at {}, but no search path of {} reaches it.", name,
                            there.source == Object::Source::Wheel ? "" : " " + there.wheel + " beside it", there.member,
                            needer));
      if (req.binary != nullptr) {
        f.fix(fmt::format("link {} with -Wl,-rpath,'{}' (a RUNPATH that reaches {})", needer,
                          origin_entry(req.path, there.path), there.member));
        return;
      }
      break;
    case Object::Source::Image:
      if ((req.flags_1 & 0x800) != 0) {  // DF_1_NODEFLIB
        f.explain(
            fmt::format("{} is in the image at {}, but {} is marked DF_1_NODEFLIB (-z nodefaultlib): the "
                        "loader takes nothing of it from the system folders, by the cache or by default.",
                        name, there.path, needer));
        f.fix(fmt::format("link {} without -z nodefaultlib, or name {} in its RUNPATH", needer, folder));
        return;
      }
      f.explain(
          fmt::format("{} is in the image at {}, but no search path of {} reaches it.", name, there.path, needer));
      break;
    case Object::Source::Distribution: {
      const std::string dist = there.label.substr(0, there.label.find(' '));
      f.explain(
          fmt::format("{} is in {} at {}, but no search path of {} reaches it, and the wheel does not "
                      "Requires-Dist {} (whose import would have loaded it first).",
                      name, there.label, there.path, needer, dist));
      f.fix(fmt::format("declare Requires-Dist: {} (and import it first), or add {} to LD_LIBRARY_PATH", dist, folder));
      return;
    }
  }
  f.fix(
      fmt::format("add {} to LD_LIBRARY_PATH or to the loader's cache (ldconfig), or leave this part of the wheel "
                  "unused",
                  folder));
}

bool explain_special_need(Draft& f, const std::string& who, const std::string& name, const image::Image& image,
                          const image::Python* python, bool extension, bool absent_known) {
  const bool musl_need = name.starts_with("libc.musl-") || name.starts_with("ld-musl-");
  const bool glibc_need = name == "libc.so.6" || name.starts_with("ld-linux");
  const std::string libc = image.libc_kind.known() ? *image.libc_kind.value : "";
  if ((musl_need && libc == "glibc") || (glibc_need && libc == "musl")) {
    f.severity(Severity::Error);
    const std::string built = musl_need ? "musl" : "glibc";
    f.explain(
        fmt::format("{} is built against {} ({} is {}'s C library), and the image's C library is {}: the loader cannot "
                    "load it here, and no package of the image is the fix.",
                    who, built, name, built, libc));
    f.fix(musl_need ? "use a wheel built for glibc (a manylinux tag), or an image with musl (Alpine)"
                    : "use a wheel built for musl (a musllinux tag), or an image with glibc");
    return true;
  }
  if (!name.starts_with("libpython") || !extension) return false;
  const std::string publisher =
      "rebuild the extension module without -lpython (CPython provides its C API to every module it imports)";
  if (python == nullptr || python->needed.empty()) {
    f.severity(Severity::Condition);
    f.explain(fmt::format(
        "{} is linked to {}, the interpreter's own library: it loads only where the Python that imports it loaded "
        "that library itself (a build with --enable-shared), and whether the image's Python does is not stated.",
        who, name));
    f.fix(publisher +
          "; or state what the image's interpreter loads (`wheelcheck probe` records its DT_NEEDED) or "
          "--assume library=" +
          name);
    return true;
  }
  if (!absent_known) return false;
  f.explain(fmt::format(
      "{} is linked to {}, the interpreter's own library; the image's Python {} does not load it (its executable "
      "needs {}: CPython's C API is built in), and the loader finds no {} to load.",
      who, name, python->version, join(python->needed, ", "), name));
  f.fix(publisher + "; or provide " + name + " where the loader looks");
  return true;
}

}  // namespace wheelcheck::verdict
