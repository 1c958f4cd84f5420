// The checks the image check (inspector/verdict/) and the publisher check (inspector/lint/) both make, and the
// one way a finding is made (inspector/verdict/findings.cpp):
//
//   add(make(FindingKind::MissingVersion, Severity::Error)
//           .member(member).library("libc.so.6").version("GLIBC_2.38").why(Why::VersionTooNew)
//           .explain("needs version GLIBC_2.38 of libc.so.6, ...").fix("a build for an older glibc ..."));
//
// What it is and how bad come first, then what it is about, then the words for people and the evidence. Each
// shared check is the verdict's (its words are the image check's); the publisher check calls it with the
// severity it judges by.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wheelcheck/policy.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

class Draft {
 public:
  Draft(FindingKind kind, Severity severity) {
    m_f.kind = kind;
    m_f.severity = severity;
  }
  Draft& member(std::string member) { return set(m_f.member, std::move(member)); }
  // An image library's own entry: the object whose it is; member stays "".
  Draft& object(std::string object) { return set(m_f.object, std::move(object)); }
  Draft& library(std::string library) { return set(m_f.library, std::move(library)); }
  // The mangled name; demangled is filled from it (C++ names only).
  Draft& symbol(std::string mangled);
  Draft& demangled(std::string demangled) { return set(m_f.demangled, std::move(demangled)); }
  Draft& version(std::string required_version) { return set(m_f.required_version, std::move(required_version)); }
  Draft& why(Why why) {
    m_f.classification = why;
    return *this;
  }
  Draft& explain(std::string explanation) { return set(m_f.explanation, std::move(explanation)); }
  Draft& fix(std::string fix) { return set(m_f.fix, std::move(fix)); }
  // A severity other than the one it was made with, where what is known turns out less (a condition).
  Draft& severity(Severity severity) {
    m_f.severity = severity;
    return *this;
  }
  Draft& candidates(std::vector<std::string> candidates) { return set(m_f.candidates, std::move(candidates)); }
  Draft& evidence(std::vector<std::string> evidence) { return set(m_f.evidence, std::move(evidence)); }
  Draft& evidence(std::string line) {
    m_f.evidence.push_back(std::move(line));
    return *this;
  }
  Draft& roots(std::vector<std::string> roots) { return set(m_f.roots, std::move(roots)); }

  const Finding& peek() const { return m_f; }
  // The finding, moved out: a draft is added once, where it is made.
  operator Finding() { return std::move(m_f); }

 private:
  template <typename T>
  Draft& set(T& field, T value) {
    field = std::move(value);
    return *this;
  }
  Finding m_f;
};

inline Draft make(FindingKind kind, Severity severity) {
  return Draft(kind, severity);
}

// --- The shared checks -----------------------------------------------------------------------------------

// The archive's own problems, RECORD's, and members that are not readable ELF (inspector/verdict/policy_check.cpp).
std::vector<Finding> archive_findings(const WheelProfile& wheel);

// The wheel's platform tag claims more than its binaries deliver (policy::check_claim) as a finding:
// an error where the claim decides the answer (`decides`), a warning elsewhere (inspector/verdict/policy_check.cpp).
Finding tag_claim_finding(const policy::Overclaim& claim, bool decides);

// A pure tag (py3-none-any) on a wheel with ELF members: a warning naming them and the tag they are built for
// (inspector/verdict/stack_checks.cpp).
std::vector<Finding> check_pure_tag(const WheelProfile& wheel);

// METADATA's Version against the file name's, as pip acts on a wheel whose two differ (pip 23.2.1, asked by
// tests/unit/test_metadata_referee.cpp): it installs the wheel from its path or URL (as METADATA's version) and
// refuses it where it finds it by name in an index or --find-links, pinned or not ("has inconsistent version").
// The finding's evidence says what each command does ("pip install x==1.1 (...): refuses it"). A metadata finding of
// `severity` (lint: an error; the image check: a warning), or nullopt when the versions agree or one is absent
// (inspector/verdict/stack_checks.cpp).
std::optional<Finding> version_mismatch(const WheelProfile& wheel, Severity severity);

// CPython's import against the Pythons the wheel's own tags install it on (errors): a member named for another
// Python is never imported, one without the PyInit_ its file name asks for is refused
// (inspector/verdict/import_rules.cpp, whose check_import_rules judges the same against an image's Python).
std::vector<Finding> lint_import_rules(const WheelProfile& wheel);

}  // namespace wheelcheck::verdict
