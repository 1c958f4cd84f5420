// Conditions accepted in a settings file ([[accept]] of wheelcheck.toml, inspector/cli/settings.cpp): a
// condition an acceptance covers becomes information naming who accepted it, why and until when, and the
// verdict is decided again without it.
#include <fnmatch.h>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "inspector/verdict/routes.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

bool accepts(const Acceptance& a, const Finding& f, const std::string& wheel, const std::string& image) {
  if (f.severity != Severity::Condition) return false;
  if (!a.rule.empty() && a.rule != kind_name(f.kind) && a.rule != why_name(f.classification)) return false;
  if (!a.wheel.empty() && ::fnmatch(a.wheel.c_str(), wheel.c_str(), 0) != 0) return false;
  if (!a.image.empty() && a.image != image) return false;
  return a.match.empty() || f.explanation.find(a.match) != std::string::npos;
}

void apply_acceptances(Report& r, const std::string& wheel, const std::string& image,
                       const std::vector<Acceptance>& accepted) {
  if (accepted.empty()) return;
  // Accepted conditions: information, saying who accepted them; the verdict is decided again without them.
  bool changed = false;
  for (auto& f : r.findings) {
    for (const auto& a : accepted) {
      if (!accepts(a, f, wheel, image)) continue;
      f.severity = Severity::Info;
      r.notes.push_back(fmt::format("accepted until {} ({}, {}): {}", a.expires, a.reason, a.source, f.explanation));
      f.explanation = fmt::format("accepted until {} ({}; {}): {}", a.expires, a.reason, a.source, f.explanation);
      changed = true;
      break;
    }
  }
  if (changed) {
    r.conditions.clear();
    for (auto& rt : r.routes) {
      std::erase_if(rt.conditions, [&](const std::string& c) {
        return std::none_of(r.findings.begin(), r.findings.end(), [&](const Finding& f) {
          return f.severity == Severity::Condition && c.find(f.explanation) != std::string::npos;
        });
      });
    }
    decide(r);
  }
}

}  // namespace wheelcheck::verdict
