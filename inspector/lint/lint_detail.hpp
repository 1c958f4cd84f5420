// Internal to the publisher check (include/wheelcheck/lint.hpp): one Lint per wheel, which every check adds to
// (inspector/lint/lint.cpp: METADATA, WHEEL and tags; claims.cpp: the label and the dependencies; symbols.cpp:
// the glibc floor and the symbols nothing defines).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "wheelcheck/lint.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::lint::detail {

using Requirement = lock::Requirement;  // a Requires-Dist value as installers read it (lock::read_requirement)
using toolkit::Provider;                // a distribution that ships libraries (db/providers.json)

// Whether a specifier set admits one release line only: ==X.Y.Z, ==X.Y.*, ~=X.Y.Z, ===, or >=X.Y with <X.(Y+1).
bool pins_a_release(const std::string& specifier);

struct Lint {
  const WheelProfile& w;
  const Options& o;
  std::string self;  // the wheel's normalized name
  std::vector<Requirement> reqs;
  std::set<std::string> declared;        // unconditional requirements' names
  std::set<std::string> declared_extra;  // names required only with an extra
  std::set<std::string> shipped;         // sonames and file names of the wheel's ELF members
  std::set<std::string> shown_runtimes;  // the toolkit runtimes check_label has shown ("needs libhccl.so (CANN's)")
  std::vector<verdict::Finding> out;
  Claims claims;
  std::vector<std::string> notes;

  Lint(const WheelProfile& wheel, const Options& options);
  bool ships(const std::string& soname) const { return shipped.count(soname) != 0; }
  const Provider* provider_of_library(const std::string& soname) const;  // ships that soname (toolkit::provider_of)
  const Provider* project_of_library(const std::string& soname) const;   // its library, any build (project_of)
  const Provider* provider_of_symbol(const std::string& symbol) const;
  bool is_self(const Provider& p) const;
  // The requirement naming one of p's distributions, unconditional (`extra` false) or with an extra; null when none.
  const Requirement* requirement_of(const Provider& p, bool extra) const;
  void add(verdict::Finding f) { out.push_back(std::move(f)); }
};

void check_metadata(Lint& l);      // lint.cpp
void check_tags(Lint& l);          // lint.cpp
void check_label(Lint& l);         // claims.cpp
void check_dependencies(Lint& l);  // claims.cpp
void check_floor(Lint& l);         // symbols.cpp
void check_unloadable(Lint& l);    // symbols.cpp
void check_variant(Lint& l);       // variants.cpp

}  // namespace wheelcheck::lint::detail
