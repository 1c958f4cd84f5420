// The publisher check (include/wheelcheck/lint.hpp): what a wheel claims against what its binaries do.
//
// Each check reads the profile only (its members' ELF tables, METADATA, WHEEL, the file name), so a headers-only
// read of a URL suffices, and adds findings to one Lint. Severities: an error where an installer or the loader
// fails on every machine (the label says CUDA 13 and the member needs CUDA 12's runtime; pip ignores the
// dependencies; a symbol nothing defines), a warning where it fails on some (a linux_* tag; a pure tag on native
// code; a C++ ABI bound without a pin), information where the image decides (a CUDA runtime the image's toolkit
// may provide; a declared runtime wheel nothing links).
#include "wheelcheck/lint.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cctype>

#include "inspector/lint/lint_detail.hpp"
#include "inspector/verdict/exec_stack.hpp"
#include "wheelcheck/checks.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::lint {

using verdict::Finding;
using verdict::Severity;

namespace detail {

using verdict::Finding;
using verdict::FindingKind;
using verdict::make;
using verdict::Severity;

// Whether a specifier set admits one release line only: ==X.Y.Z, ==X.Y.*, ~=X.Y.Z, ===, or >=X.Y with <X.(Y+1).
bool pins_a_release(const std::string& spec) {
  const auto set = wheel::parse_specifier_set(spec);
  if (!set) return false;
  std::optional<std::vector<std::uint64_t>> lower, upper;
  for (const auto& s : *set) {
    if (s.op == "===" || (s.op == "==" && (!s.wildcard || s.version.release.size() >= 2))) return true;
    if (s.op == "~=" && s.version.release.size() >= 3) return true;
    if (s.op == ">=" || s.op == ">") lower = s.version.release;
    if (s.op == "<" || s.op == "<=") upper = s.version.release;
  }
  if (!lower || !upper || lower->size() < 2 || upper->size() < 2) return false;
  const auto next = (*lower)[1] + 1;
  return (*upper)[0] == (*lower)[0] && (*upper)[1] <= next;
}

Lint::Lint(const WheelProfile& wheel, const Options& options)
    : w(wheel), o(options), self(wheel::normalize_project_name(wheel.filename.name)) {
  // A wheel variant installs the Requires-Dist whose variant markers hold for it (toolkit::declared_requirements).
  reqs = toolkit::declared_requirements(wheel);
  for (const auto& r : reqs) {
    if (!r.error.empty()) continue;
    (r.extra_only ? declared_extra : declared).insert(r.normalized);
  }
  for (const auto& m : w.members) {
    if (!m.elf) continue;
    shipped.insert(base_name(m.path));
    if (m.elf->soname) shipped.insert(*m.elf->soname);
  }
}

const Provider* Lint::provider_of_library(const std::string& soname) const {
  return o.providers == nullptr ? nullptr : toolkit::provider_of(*o.providers, soname);
}

const Provider* Lint::project_of_library(const std::string& soname) const {
  return o.providers == nullptr ? nullptr : toolkit::project_of(*o.providers, soname);
}

const Provider* Lint::provider_of_symbol(const std::string& symbol) const {
  if (o.providers == nullptr) return nullptr;
  for (const auto& p : *o.providers) {
    for (const auto& g : p.symbols) {
      if (::fnmatch(g.c_str(), symbol.c_str(), 0) == 0) return &p;
    }
  }
  return nullptr;
}

bool Lint::is_self(const Provider& p) const {
  return std::find(p.distributions.begin(), p.distributions.end(), self) != p.distributions.end();
}

const Requirement* Lint::requirement_of(const Provider& p, bool extra) const {
  for (const auto& r : reqs) {
    if (!r.error.empty() || r.extra_only != extra) continue;
    if (std::find(p.distributions.begin(), p.distributions.end(), r.normalized) != p.distributions.end()) return &r;
  }
  return nullptr;
}

// --- 3. METADATA and WHEEL as installers read them -------------------------------------------------------------

void check_metadata(Lint& l) {
  const auto& w = l.w;
  const auto& m = w.metadata;
  for (const auto& i : m.issues) {
    const bool deps = ascii_lower(i.field) == "requires-dist";
    const bool after = i.kind == wheel::MetadataIssue::Kind::AfterHeaders;
    l.add(make(FindingKind::Metadata, after && deps ? Severity::Error : Severity::Warning)
              .member(w.filename.name + "-" + w.filename.version + ".dist-info/METADATA")
              .library(i.field)
              .version(wheel::metadata_issue_name(i.kind))
              .explain(
                  after ? fmt::format("METADATA ends its headers at the blank line {}, and {} {} {} after it: pip, uv "
                                      "and importlib.metadata read {} as the long description, so {}",
                                      i.end_line, i.count, i.field, i.count == 1 ? "line comes" : "lines come",
                                      i.count == 1 ? "it" : "them",
                                      deps ? "the wheel is installed without any of those dependencies "
                                             "(`wheelcheck inspect` shows only the ones before the blank line)"
                                           : "the field is lost")
                        : wheel::metadata_issue_text(i))
              .fix(after ? "remove the blank line inside the headers (a repack that edits METADATA must keep the "
                           "headers contiguous and put the description after the first blank line)"
                         : "write the field once")
              .evidence(fmt::format("METADATA line {}: {}", i.line, i.field)));
  }
  static const char* const k_known[] = {"1.0", "1.1", "1.2", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5"};
  if (!m.metadata_version.empty() &&
      std::none_of(std::begin(k_known), std::end(k_known), [&](const char* v) { return m.metadata_version == v; })) {
    l.add(make(FindingKind::Metadata, Severity::Warning)
              .library("Metadata-Version")
              .version(m.metadata_version)
              .explain("Metadata-Version " + m.metadata_version +
                       " is not a version of the core metadata specification (1.0 to 2.5): installers that validate "
                       "METADATA (packaging's Metadata, uv) refuse it, others read it as the newest they know")
              .fix("write the Metadata-Version the build backend's fields need (2.1 for Requires-Dist with markers "
                   "and Description-Content-Type, 2.4 for License-Expression)"));
  } else if (m.metadata_version.empty() && (!m.name.empty() || !m.version.empty())) {
    l.add(make(FindingKind::Metadata, Severity::Warning)
              .library("Metadata-Version")
              .explain("METADATA has no Metadata-Version: installers that validate it refuse the wheel")
              .fix("write Metadata-Version first"));
  }
  if (!m.name.empty() && wheel::normalize_project_name(m.name) != l.self) {
    // What pip 23 does (tests/jobs/sentences_job.py asks it): it installs the wheel by path and by name alike,
    // naming it after the file and its .dist-info folder, and then reports METADATA's name.
    l.add(
        make(FindingKind::Metadata, Severity::Warning)
            .library("Name")
            .version(m.name)
            .explain(fmt::format("METADATA says Name: {}, the file name says {}: pip installs it all the same (by "
                                 "path and by name), and then lists it as {}, so what the lock pins and what is "
                                 "installed are two names for one wheel; an installer that checks the name refuses it",
                                 m.name, w.filename.name, m.name))
            .fix("rename the file or fix METADATA so that both name the same project"));
  }
  if (auto f = verdict::version_mismatch(w, Severity::Error)) l.add(std::move(*f));
  for (const auto& r : l.reqs) {
    if (r.error.empty()) continue;
    l.add(make(FindingKind::Metadata, Severity::Error)
              .library("Requires-Dist")
              .version(r.text)
              .explain(fmt::format("Requires-Dist: {} does not parse as PEP 508: {}; pip refuses to install the wheel "
                                   "(\"Invalid requirement\")",
                                   r.text, r.error))
              .fix("write it as NAME[EXTRAS] SPECIFIER ; MARKER (\"torch>=2.10,<2.11 ; platform_machine == "
                   "'x86_64'\")"));
  }
  // WHEEL: Root-Is-Purelib against native members.
  std::vector<std::string> natives;
  for (const auto& mem : w.members) {
    if (mem.elf && (mem.elf->type == elf::FileType::Shared || mem.elf->type == elf::FileType::Executable))
      natives.push_back(mem.path);
  }
  if (!natives.empty() && w.wheel_file.root_is_purelib.value_or(false)) {
    l.add(make(FindingKind::RootIsPurelib, Severity::Warning)
              .member(natives.front())
              .explain(fmt::format("WHEEL says Root-Is-Purelib: true, and {} member{} native code ({}{}): installers "
                                   "put the wheel into purelib, which on some systems (Fedora, RHEL: lib/ against "
                                   "lib64/) is not where native code is looked for",
                                   natives.size(), natives.size() == 1 ? " is" : "s are", natives.front(),
                                   natives.size() > 1 ? ", ..." : ""))
              .fix("Root-Is-Purelib: false (a build backend writes it for a wheel with extension modules)"));
  }
}

void check_tags(Lint& l) {
  const auto& w = l.w;
  for (auto& f : verdict::check_pure_tag(w)) l.add(std::move(f));
  // A `none` ABI tag on a wheel whose members are CPython extension modules: they use CPython's ABI.
  bool none_abi = !w.filename.tags.empty();
  for (const auto& t : w.filename.tags) none_abi = none_abi && t.abi == "none" && t.platform != "any";
  if (!none_abi) return;
  std::vector<std::string> extensions;
  for (const auto& m : w.members) {
    if (!m.elf) continue;
    const std::string b = base_name(m.path);
    if (b.find(".cpython-") != std::string::npos || b.find(".abi3.") != std::string::npos) extensions.push_back(m.path);
  }
  if (extensions.empty()) return;
  l.add(make(FindingKind::TagPureBinary, Severity::Warning)
            .member(extensions.front())
            .version(w.filename.tags.front().abi)
            .explain(fmt::format("the wheel's ABI tag is none (no Python ABI), but {} {} CPython extension module{} "
                                 "({}): pip installs it for any Python its Python tag admits, where the modules "
                                 "built for one CPython do not import",
                                 extensions.size(), extensions.size() == 1 ? "member is a" : "members are",
                                 extensions.size() == 1 ? "" : "s", extensions.front()))
            .fix("tag it with the ABI its extensions are built for (cp312, or abi3 for the limited API)"));
}

}  // namespace detail

std::string status_name(Status s) {
  switch (s) {
    case Status::Clean: return "clean";
    case Status::Warnings: return "warnings";
    case Status::Errors: return "errors";
  }
  return "clean";
}

namespace {

// [[accept]] of the settings file: a finding an acceptance covers (its rule, the wheel's file name, a part of the
// explanation; an acceptance for an image never covers a publisher finding) becomes information saying so.
void accept_findings(Report& r, const std::vector<verdict::Acceptance>& accepted) {
  for (auto& f : r.findings) {
    if (f.severity == Severity::Info) continue;
    for (const auto& a : accepted) {
      if (!a.image.empty() && a.image != "publisher") continue;
      if (!a.rule.empty() && a.rule != verdict::kind_name(f.kind)) continue;
      if (!a.wheel.empty() && ::fnmatch(a.wheel.c_str(), r.wheel.c_str(), 0) != 0) continue;
      if (!a.match.empty() && f.explanation.find(a.match) == std::string::npos) continue;
      r.notes.push_back(
          fmt::format("accepted until {} ({}, {}): {}", a.expires, a.reason, a.source, verdict::summary(f)));
      f.severity = Severity::Info;
      f.explanation = fmt::format("accepted until {} ({}; {}): {}", a.expires, a.reason, a.source, f.explanation);
      break;
    }
  }
}

int lint_rank(Severity s) {
  switch (s) {
    case Severity::Error: return 0;
    case Severity::Warning: return 1;
    case Severity::Condition: return 2;
    case Severity::Info: return 3;
  }
  return 3;
}

}  // namespace

Report lint(const WheelProfile& w, const Options& o) {
  detail::Lint l(w, o);
  Report r;
  r.wheel = w.filename.filename;
  r.sha256 = w.sha256;
  r.source = w.source;
  r.integrity = w.integrity;
  for (auto& f : verdict::archive_findings(w)) {
    if (verdict::is_integrity(f.kind)) r.intact = false;
    l.add(std::move(f));
  }
  // What it says.
  const auto plus = w.filename.version.find('+');
  l.claims.said.push_back(
      "version " + w.filename.version +
      (plus == std::string::npos ? "" : " (local version label +" + w.filename.version.substr(plus + 1) + ")"));
  std::vector<std::string> tags;
  for (const auto& t : w.filename.tags) tags.push_back(wheel::tag_text(t));
  l.claims.said.push_back("tags " + join(tags, " "));
  std::vector<std::string> deps;
  for (const auto& req : l.reqs) deps.push_back(req.text);
  l.claims.said.push_back(deps.empty() ? "no Requires-Dist" : "Requires-Dist: " + join(deps, ", "));
  if (w.wheel_file.root_is_purelib)
    l.claims.said.push_back(std::string("Root-Is-Purelib: ") + (*w.wheel_file.root_is_purelib ? "true" : "false"));
  detail::check_metadata(l);
  detail::check_tags(l);
  detail::check_label(l);
  detail::check_dependencies(l);
  detail::check_floor(l);
  detail::check_unloadable(l);
  for (auto& f : verdict::exec_stack_lint(w)) l.add(std::move(f));    // inspector/verdict/exec_stack.cpp
  for (auto& f : verdict::lint_import_rules(w)) l.add(std::move(f));  // CPython's import (import_rules.cpp)
  detail::check_variant(l);
  if (w.integrity == k_integrity_headers) {
    l.notes.push_back(
        "read headers-only: RECORD and the members' bytes are not verified, and NumPy's C API is not "
        "read (--verify full reads every byte)");
  }
  r.claims = std::move(l.claims);
  r.findings = std::move(l.out);
  r.notes = std::move(l.notes);
  if (o.accepted != nullptr) accept_findings(r, *o.accepted);
  std::stable_sort(r.findings.begin(), r.findings.end(),
                   [](const Finding& a, const Finding& b) { return lint_rank(a.severity) < lint_rank(b.severity); });
  for (const auto& f : r.findings) {
    if (f.severity == Severity::Error) r.status = Status::Errors;
    if (f.severity == Severity::Warning && r.status == Status::Clean) r.status = Status::Warnings;
  }
  return r;
}

int exit_code(const Report& r) {
  if (!r.intact) return k_exit_bad_input;
  if (r.status == Status::Errors) return 1;
  if (r.status == Status::Warnings) return 3;
  return 0;
}

int exit_code(const std::vector<Report>& reports) {
  int rc = 0;
  for (const auto& r : reports) {
    const int c = exit_code(r);
    if (c == k_exit_bad_input || rc == k_exit_bad_input) {
      rc = k_exit_bad_input;
    } else if (c == 1 || rc == 1) {
      rc = 1;
    } else if (c == 3 || rc == 3) {
      rc = 3;
    }
  }
  return rc;
}

}  // namespace wheelcheck::lint
