// Internal to the verdict: the one way a finding is made (inspector/verdict/findings.cpp).
//
//   add(make(FindingKind::MissingVersion, Severity::Error)
//           .member(member).library("libc.so.6").version("GLIBC_2.38").why(Why::VersionTooNew)
//           .explain("needs version GLIBC_2.38 of libc.so.6, ...").fix("a build for an older glibc ..."));
//
// What it is and how bad come first, then what it is about, then the words for people and the evidence.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// The Why a name of why_name stands for (classify_missing_symbol reports its answer by name); None
// for "" or a name it does not know.
Why why_of(std::string_view name);

}  // namespace wheelcheck::verdict
