// The verdict's words: the names of severities, verdicts, finding kinds and classifications (the
// strings of the JSON and docs/verdict.md), a finding's one short summary, and the draft findings are
// made from (findings.hpp).
#include "inspector/verdict/findings.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <cctype>
#include <optional>
#include <string>
#include <utility>

#include "wheelcheck/cxx_names.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::verdict {

std::string severity_name(Severity s) {
  switch (s) {
    case Severity::Info: return "info";
    case Severity::Condition: return "condition";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "error";
}

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Compatible: return "compatible";
    case Verdict::Degraded: return "degraded";
    case Verdict::Incompatible: return "incompatible";
    case Verdict::Unknown: return "unknown";
  }
  return "unknown";
}

int exit_code(Verdict v) {
  switch (v) {
    case Verdict::Compatible: return 0;
    case Verdict::Incompatible: return 1;
    case Verdict::Degraded: return 3;
    case Verdict::Unknown: return 4;
  }
  return 4;
}

std::vector<std::string> integrity_problems(const Report& report) {
  std::vector<std::string> out;
  for (const auto& f : report.findings) {
    if (f.severity == Severity::Error && is_integrity(f.kind)) {
      out.push_back(report.wheel + " fails its own integrity check (" +
                    (f.member.empty() ? "" : printable(f.member) + ": ") + printable(f.explanation) +
                    "): do not pin it");
    }
  }
  return out;
}

int exit_code(const Report& report) {
  return integrity_problems(report).empty() ? exit_code(report.verdict) : 2;
}

Verdict worst(Verdict a, Verdict b) {
  auto rank = [](Verdict v) {
    switch (v) {
      case Verdict::Incompatible: return 3;
      case Verdict::Unknown: return 2;
      case Verdict::Degraded: return 1;
      case Verdict::Compatible: return 0;
    }
    return 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

std::string why_name(Why why) {
  switch (why) {
    case Why::None: return "";
    case Why::LibraryMissing: return "library-missing";
    case Why::SignatureChanged: return "signature-changed";
    case Why::CxxAbiMismatch: return "cxx-abi-mismatch";
    case Why::VersionTooNew: return "version-too-new";
    case Why::Absent: return "absent";
    case Why::UnknownExports: return "unknown-exports";
  }
  return "";
}

Why why_of(std::string_view name) {
  for (Why w : {Why::LibraryMissing, Why::SignatureChanged, Why::CxxAbiMismatch, Why::VersionTooNew, Why::Absent,
                Why::UnknownExports}) {
    if (why_name(w) == name) return w;
  }
  return Why::None;
}

std::string symbols_words(const Finding& f) {
  std::string out = join(f.symbols, ", ");
  const std::size_t total = std::max(f.symbols_total, f.symbols.size());
  if (total > f.symbols.size()) out += fmt::format(" and {} more", total - f.symbols.size());
  return out;
}

namespace {

// The GCC release whose libstdc++ first defines a GLIBCXX_ version (GCC's "ABI Policy and Guidelines").
std::string gcc_of_glibcxx(std::string_view version) {
  static const std::pair<const char*, const char*> k_gcc[] = {
      {"GLIBCXX_3.4.19", "4.8.3"}, {"GLIBCXX_3.4.20", "4.9"},  {"GLIBCXX_3.4.21", "5"},  {"GLIBCXX_3.4.22", "6"},
      {"GLIBCXX_3.4.23", "7.1"},   {"GLIBCXX_3.4.24", "7.2"},  {"GLIBCXX_3.4.25", "8"},  {"GLIBCXX_3.4.26", "9.1"},
      {"GLIBCXX_3.4.27", "9.2"},   {"GLIBCXX_3.4.28", "9.3"},  {"GLIBCXX_3.4.29", "11"}, {"GLIBCXX_3.4.30", "12"},
      {"GLIBCXX_3.4.31", "13.1"},  {"GLIBCXX_3.4.32", "13.2"}, {"GLIBCXX_3.4.33", "14"}, {"GLIBCXX_3.4.34", "15"}};
  for (const auto& [v, gcc] : k_gcc) {
    if (version == v) return gcc;
  }
  return "";
}

}  // namespace

std::string known_cause(std::string_view version, const std::vector<std::string>& symbols) {
  auto any_starts = [&](std::string_view prefix) {
    return std::any_of(symbols.begin(), symbols.end(), [&](const std::string& s) { return s.rfind(prefix, 0) == 0; });
  };
  if (version == "GLIBC_2.38" && any_starts("__isoc23_")) {
    return "the __isoc23_* names come from compiling with glibc 2.38's or a newer glibc's headers in C2x or GNU "
           "mode (g++ defines _GNU_SOURCE), which redirect strtol, sscanf and their kin to them: build against an "
           "older glibc (a manylinux image), or with -std=c17 and without _GNU_SOURCE";
  }
  if (version == "GLIBC_2.34" &&
      (any_starts("__libc_start_main") || any_starts("pthread_") || any_starts("dlopen") || any_starts("dlsym"))) {
    return "glibc 2.34 moved libpthread and libdl into libc.so.6: anything linked against glibc 2.34 or newer needs "
           "these at GLIBC_2.34; build against an older glibc (a manylinux image)";
  }
  if (version.rfind("GLIBCXX_", 0) == 0) {
    const std::string gcc = gcc_of_glibcxx(version);
    if (!gcc.empty()) {
      return fmt::format(
          "{} is the libstdc++ of GCC {}: the member was built with GCC {} or newer and uses what "
          "it added; build with an older GCC (a manylinux image's devtoolset), or ship an image "
          "whose libstdc++ is that new",
          version, gcc, gcc);
    }
  }
  return "";
}

std::string summary(const Finding& f) {
  switch (f.kind) {
    case FindingKind::MissingLibrary:
      return f.severity == Severity::Condition ? "library " + f.library + " not stated by the image"
                                               : "missing library " + f.library;
    case FindingKind::MissingSymbol:
      return fmt::format("undefined symbol {}{}{}", f.demangled.empty() ? f.symbol : f.demangled,
                         f.required_version.empty() ? "" : "@" + f.required_version,
                         f.classification == Why::None ? "" : "  [" + why_name(f.classification) + "]");
    case FindingKind::MissingVersion:
      return fmt::format("version {} of {} not found{}", f.required_version, f.library,
                         f.symbols.empty() ? "" : " (needed by " + symbols_words(f) + ")");
    case FindingKind::RequiresDist:
      return fmt::format("Requires-Dist {}{} is not met: {} {} is installed", f.library, f.required_version, f.library,
                         f.candidates.empty() ? std::string("another version") : f.candidates.front());
    case FindingKind::Driver: return "driver >= " + f.required_version + " needed";
    case FindingKind::DriverTooOld: return "driver too old: needs >= " + f.required_version;
    case FindingKind::IsaLevel: return "needs an " + f.required_version + " CPU";
    case FindingKind::GpuCoverage:
      return f.severity == Severity::Error ? "no kernel image for " + f.required_version
                                           : "runs only on " + f.required_version;
    case FindingKind::GpuArchDropped: return f.required_version + " not supported by the toolkit";
    case FindingKind::DeclaredLibrary: return f.library + " taken from the image's declaration";
    case FindingKind::Record:
      return f.required_version == "missing-record" ? "the wheel has no RECORD (pip refuses it)"
                                                    : "not what the wheel's RECORD says (" + f.required_version + ")";
    case FindingKind::Archive: return "the wheel's archive is damaged (" + f.required_version + ")";
    case FindingKind::UnreadableMember: return "not readable ELF: the loader refuses it";
    // The wheel's tags, Requires-Python and machine, from their typed facts (wheel_checks.cpp), never cut from the
    // explanation.
    case FindingKind::TagPython:
      if (f.library.empty()) break;
      return (f.severity == Severity::Condition ? "the wheel needs " : "the wheel is built for ") + f.library;
    case FindingKind::TagAbi:
      if (f.library.empty()) break;
      return fmt::format("the wheel's ABI tag {} is not one the image's CPython {} accepts", f.library,
                         f.required_version);
    case FindingKind::TagPlatform: {
      if (f.library.empty()) break;
      if (f.severity == Severity::Warning) return "the platform tag " + f.library + " marks a local build";
      // The platform tag's own facts (its OS, machine and C library), and the floor the image misses or does not state.
      const wheel::Platform p = wheel::parse_platform(f.library);
      if (p.kind == wheel::Platform::Kind::Foreign) return "the wheel is built for " + p.os;
      if (p.kind == wheel::Platform::Kind::Unknown) return "the platform tag " + f.library + " is not one pip installs";
      if (f.required_version.empty()) return "the wheel is built for " + p.arch;
      return fmt::format("the wheel needs {} >= {}", p.kind == wheel::Platform::Kind::Musllinux ? "musl" : "glibc",
                         f.required_version);
    }
    case FindingKind::RequiresPython:
      return f.severity == Severity::Warning
                 ? "the wheel's Requires-Python '" + f.required_version + "' is not a valid PEP 440 specifier set"
                 : "the wheel requires Python " + f.required_version;
    case FindingKind::WrongArch:
      return f.member.empty() ? "the wheel's native code is built for " + f.required_version
                              : f.member + " is built for " + f.required_version;
    // The publisher check's (include/wheelcheck/lint.hpp).
    case FindingKind::LabelClaim:
      // check's: the label (or name) against the image, with nothing of the wheel's own behind it.
      if (f.symbol.empty() && f.member.empty() && f.library.empty()) {
        const bool named = !f.evidence.empty() && f.evidence.front().rfind("project name", 0) == 0;
        return fmt::format("{} {}: a claim, what it loads decides", named ? "named" : "labelled", f.required_version);
      }
      return fmt::format("labelled {}, {}", f.required_version,
                         !f.symbol.empty()  ? "uses " + (f.demangled.empty() ? f.symbol : f.demangled)
                         : f.member.empty() ? "declares " + f.library
                                            : "needs " + f.library);
    case FindingKind::UndeclaredDependency: return fmt::format("needs {} (not in Requires-Dist)", f.library);
    case FindingKind::UnusedDependency: return "Requires-Dist " + f.library + " that nothing links";
    case FindingKind::UnpinnedDependency:
      return fmt::format("binds {}'s C++ ABI, Requires-Dist {} {}", f.library, f.library, f.required_version);
    case FindingKind::Metadata:
      // lint.cpp's check_metadata: an issue's name, a field that is absent, or the field's value.
      if (f.required_version == "after-headers") return f.library + " after the headers' end: read as the description";
      if (f.required_version == "duplicate") return f.library + " written more than once";
      if (f.required_version.empty()) return "METADATA has no " + f.library;
      if (f.library == "Name" || f.library == "Version")
        return fmt::format("METADATA {}: {}, not the file name's", f.library, f.required_version);
      if (f.library == "Requires-Dist") return fmt::format("Requires-Dist: {} does not parse", f.required_version);
      return fmt::format("METADATA {}: {}", f.library, f.required_version);
    case FindingKind::TagPureBinary:
      // check_pure_tag: the machines its native code is for; lint's check_tags: the ABI tag "none".
      if (f.required_version == "none") return "ABI tag none on CPython extension modules";
      return "tagged for any platform, native code for " + f.required_version;
    case FindingKind::RootIsPurelib: return "Root-Is-Purelib: true on native code";
    case FindingKind::TagFloor:
      if (f.required_version.rfind("linux_", 0) == 0) return "tag promises nothing; the binaries fit no policy";
      return "tag promises nothing; the binaries need " + f.required_version +
             (f.symbols.empty() ? std::string() : " (for " + symbols_words(f) + ")");
    case FindingKind::ExtensionSuffix: return "suffix " + f.library + " is never imported by " + f.required_version;
    case FindingKind::ModuleInit: return "no " + f.symbol + ": CPython refuses the import";
    case FindingKind::UnloadableSymbol:
      return "undefined symbol " + (f.demangled.empty() ? f.symbol : f.demangled) + " that nothing it loads defines";
    case FindingKind::VariantClaim:
      // check's (variant::against_image): the image's fact in candidates, or not stated (info).
      if (!f.candidates.empty())
        return fmt::format(
            "variant {} declares {}; the image has {}: an installer with variant support would not "
            "select it",
            f.library, f.required_version, f.candidates.front());
      if (f.severity == Severity::Info)
        return fmt::format("variant {} declares {}; whether the image supports it is not stated", f.library,
                           f.required_version);
      return fmt::format("variant {} declares {}, {}", f.library, f.required_version,
                         f.member.empty() ? std::string("which its label or its pins contradict")
                                          : "which " + f.member + " contradicts");
    case FindingKind::VariantMetadata: return fmt::format("variant {}: {}", f.library, f.required_version);
    case FindingKind::PythonLoad:
      // python_loads.cpp: library is what the code loads ("" when the sources were not read or the load is
      // not resolved statically).
      if (f.library.empty()) return f.member.empty() ? "Python sources not read" : "loads a file it names at run time";
      if (f.severity == Severity::Error) return "import fails: loads " + f.library + " at import, which fails";
      if (f.severity == Severity::Condition) return "import may fail: loads " + f.library + " at import";
      return "loads " + f.library;
    case FindingKind::ExecStack:
      // exec_stack.cpp: required_version says what the file asks (exec_stack_words); the severity says the rest.
      if (f.severity == Severity::Info)
        return "executable stack (" + f.required_version + "), loaded at a program's start";
      return "executable stack (" + f.required_version + "): glibc 2.41+ refuses to dlopen it" +
             (f.severity == Severity::Condition ? ", the image's glibc version is unknown" : "");
    case FindingKind::TagClaim:
      // library: the tag claimed; required_version: the most compatible tag the binaries are consistent with.
      return f.required_version.rfind("linux_", 0) == 0
                 ? fmt::format("tagged {}, its binaries fit no packaging policy ({})", f.library, f.required_version)
                 : fmt::format("tagged {}, its binaries need {}", f.library, f.required_version);
    default: break;
  }
  // The kind's own title, as a phrase: never its bare name.
  std::string title(kind_text(f.kind).title);
  if (title.size() > 1 && std::isupper(static_cast<unsigned char>(title[0])) &&
      std::islower(static_cast<unsigned char>(title[1])))
    title[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(title[0])));
  return f.library.empty() ? title : title + " (" + f.library + ")";
}

namespace requirement_words {

// "GLIBC_2.38" -> ("glibc", "2.38"); "GLIBCXX_3.4.32" -> ("libstdc++", "GLIBCXX_3.4.32"); else nullopt.
std::optional<std::pair<std::string, std::string>> library_version(const std::string& v) {
  if (v.starts_with("GLIBC_") && v.size() > 6 && std::isdigit(static_cast<unsigned char>(v[6])))
    return std::pair<std::string, std::string>{"glibc", v.substr(6)};
  if (v.starts_with("GLIBCXX_") || v.starts_with("CXXABI_")) return std::pair<std::string, std::string>{"libstdc++", v};
  return std::nullopt;
}

}  // namespace requirement_words

std::string requirement(const Finding& f) {
  using requirement_words::library_version;
  switch (f.kind) {
    case FindingKind::MissingVersion: {
      const auto lib = library_version(f.required_version);
      const std::string have = f.candidates.empty() ? "" : f.candidates.back();
      const auto have_lib = library_version(have);
      const std::string by = f.symbols.empty() ? "" : " for " + symbols_words(f);
      if (lib && lib->first == "glibc")
        return fmt::format("requires glibc {}+ (image: {}){}", lib->second,
                           have_lib && have_lib->first == "glibc" ? have_lib->second : "older", by);
      if (lib)
        return fmt::format("requires {} {}+ (image: {}){}", lib->first, lib->second, have.empty() ? "older" : have, by);
      return fmt::format("requires {} {} (image: {}){}", f.library, f.required_version,
                         have.empty() ? "not defined" : have, by);
    }
    case FindingKind::MissingLibrary:
      return "requires " + f.library + (f.severity == Severity::Condition ? " (not stated)" : " (not found)");
    case FindingKind::RequiresDist:
      return fmt::format("requires {}{} (image: {})", f.library, f.required_version,
                         f.candidates.empty() ? std::string("another version") : f.candidates.front());
    case FindingKind::DriverTooOld:
      // candidates: the image's driver (cuda.cpp), a fact of its own, never cut from the explanation.
      return fmt::format("requires NVIDIA driver {}+ (image: {})", f.required_version,
                         f.candidates.empty() ? std::string("older") : f.candidates.front());
    case FindingKind::Driver:
      return fmt::format("requires NVIDIA driver {}+ (image: driver unknown)", f.required_version);
    case FindingKind::MissingSymbol: {
      const std::string name = f.demangled.empty() ? f.symbol : f.demangled;
      const std::string from = f.library.empty() ? "the libraries it loads" : f.library;
      switch (f.classification) {
        case Why::SignatureChanged:
          return fmt::format("requires {} (signature changed in {}{})", name, from,
                             f.candidates.empty() ? "" : ": it has " + f.candidates.front());
        case Why::CxxAbiMismatch:
          return fmt::format("requires {} (built for the other _GLIBCXX_USE_CXX11_ABI than {})", name, from);
        case Why::VersionTooNew:
          return fmt::format("requires {}@{} ({} has an older version)", name, f.required_version, from);
        default: return summary(f);
      }
    }
    default: return summary(f);
  }
}

Draft& Draft::symbol(std::string mangled) {
  m_f.demangled = cxx::demangle(mangled).value_or("");
  m_f.symbol = std::move(mangled);
  return *this;
}

}  // namespace wheelcheck::verdict
