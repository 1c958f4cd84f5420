// The publisher check's claims (lint_detail.hpp): the toolkit and torch a wheel's label and name claim against
// the runtimes its members need, and its Requires-Dist against the distributions that ship what they need.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_set>

#include "inspector/lint/lint_detail.hpp"
#include "wheelcheck/checks.hpp"
#include "wheelcheck/cxx_names.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::lint::detail {

using verdict::FindingKind;
using verdict::make;
using verdict::Severity;

namespace {

// The torch release a local label names: +torch2.7.1, +torch.2.9.1.gcu, cu12torch2.6cxx11abiFALSE, torch290
// (three digits: X.Y.Z; four: X.YY.Z); "" when it names none.
std::string label_torch(const std::string& version) {
  const auto plus = version.find('+');
  if (plus == std::string::npos) return "";
  const std::string label = ascii_lower(version.substr(plus + 1));
  const auto at = label.find("torch");
  if (at == std::string::npos) return "";
  std::size_t i = at + 5;
  if (i < label.size() && label[i] == '.') ++i;
  std::string v;
  while (i < label.size() && (std::isdigit(static_cast<unsigned char>(label[i])) != 0 || label[i] == '.'))
    v += label[i++];
  while (!v.empty() && v.back() == '.') v.pop_back();
  if (v.empty()) return "";
  if (v.find('.') == std::string::npos) {
    if (v.size() == 3) return v.substr(0, 1) + "." + v.substr(1, 1) + "." + v.substr(2);
    if (v.size() == 4) return v.substr(0, 1) + "." + v.substr(1, 2) + "." + v.substr(3);
    return "";
  }
  return v;
}

std::string major_of(const std::string& v) {
  return v.substr(0, v.find('.'));
}

// A runtime of kind `need` serves a build of kind `claim`: the same kind, or a CUDA-compatible runtime that
// CoreX, DTK, XRE, PPU and MACA builds link under CUDA's sonames (Iluvatar's FlagCX links libcudart.so.12).
bool serves(image::ToolkitKind claim, image::ToolkitKind need) {
  using image::ToolkitKind;
  if (claim == need) return true;
  static constexpr ToolkitKind k_cuda_compatible[] = {ToolkitKind::Corex, ToolkitKind::Dtk, ToolkitKind::Xre,
                                                      ToolkitKind::Ppu, ToolkitKind::Maca};
  return need == ToolkitKind::Cuda &&
         std::find(std::begin(k_cuda_compatible), std::end(k_cuda_compatible), claim) != std::end(k_cuda_compatible);
}

std::string toolkit_words(image::ToolkitKind kind, const std::string& version) {
  return toolkit::display_name(kind) + (version.empty() ? "" : " " + version);
}

bool lint_driver_library(const std::string& soname) {
  static const char* const libs[] = {"libcuda.so.1", "libcuda.so", "libnvidia-ml.so.1", "libnvcuvid.so.1"};
  return std::any_of(std::begin(libs), std::end(libs), [&](const char* lib) { return soname == lib; });
}

struct RuntimeNeed {
  std::string member, soname;
  std::optional<image::ToolkitKind> kind;  // the toolkit it is the runtime of
  std::string version;
};

}  // namespace

void check_label(Lint& l) {
  const auto& w = l.w;
  const auto by_label = toolkit::of_label(w.filename.version);
  const auto by_name = toolkit::of_name(w.filename.name);
  const std::optional<toolkit::WheelToolkit> claim = by_label ? by_label : by_name;
  const auto plus = w.filename.version.find('+');
  const std::string label = plus == std::string::npos ? "" : w.filename.version.substr(plus + 1);
  const bool cpu = ascii_lower(label).rfind("cpu", 0) == 0;
  if (claim) {
    l.claims.said.push_back(
        fmt::format("{}: {} build", claim->because, toolkit::with_article(toolkit_words(claim->kind, claim->version))) +
        (claim->line.empty() ? "" : " (Triton " + claim->line + ")"));
  } else if (cpu) {
    l.claims.said.push_back("local version label +" + label + ": a CPU build (no accelerator runtime)");
  }
  // The runtimes its members need that the wheel does not ship.
  std::vector<RuntimeNeed> needs;
  for (const auto& m : w.members) {
    if (!m.elf) continue;
    for (const auto& n : m.elf->needed) {
      if (l.ships(n) || lint_driver_library(n)) continue;
      RuntimeNeed r{m.path, n, std::nullopt, ""};
      if (const auto t = toolkit::of_soname(n)) {
        r.kind = t->kind;
        r.version = t->version;
      }
      if (const Provider* p = l.provider_of_library(n); p != nullptr && p->toolkit) {
        r.kind = p->toolkit;
        if (r.version.empty()) r.version = p->toolkit_version;
      }
      if (!r.kind) continue;
      if (std::none_of(needs.begin(), needs.end(), [&](const RuntimeNeed& o) { return o.soname == n; })) {
        l.shown_runtimes.insert(m.path + "\n" + n);
        l.claims.shown.push_back(
            fmt::format("{} needs {} ({}'s)", m.path, n, toolkit_words(*r.kind, major_of(r.version))));
      }
      needs.push_back(std::move(r));
    }
  }
  std::set<std::string> said;  // member + soname, once each
  for (const auto& r : needs) {
    if (!said.insert(r.member + "\n" + r.soname).second) continue;
    std::string why;
    if (cpu) {
      why = fmt::format("the local version label +{} says it is a CPU build, but {} needs {}, {}'s runtime", label,
                        r.member, r.soname, toolkit_words(*r.kind, major_of(r.version)));
    } else if (claim && !serves(claim->kind, *r.kind)) {
      why = fmt::format("the {} says it is {} build, but {} needs {}, {}'s runtime", claim->because,
                        toolkit::with_article(toolkit_words(claim->kind, claim->version)), r.member, r.soname,
                        toolkit::display_name(*r.kind));
    } else if (claim && claim->kind == image::ToolkitKind::Cuda && r.kind == image::ToolkitKind::Cuda &&
               !claim->version.empty() && !r.version.empty() && major_of(claim->version) != major_of(r.version)) {
      why = fmt::format("the {} says it is a CUDA {} build, but {} needs {}, the CUDA {} runtime", claim->because,
                        claim->version, r.member, r.soname, major_of(r.version));
    }
    if (why.empty()) continue;
    l.add(make(FindingKind::LabelClaim, Severity::Error)
              .member(r.member)
              .library(r.soname)
              .version(claim ? toolkit_words(claim->kind, claim->version) : std::string("cpu"))
              .explain(why + ": on an image of the claimed toolkit it does not load (" + r.soname +
                       " is not found), and a check's advice to take \"a build of this wheel for it\" points back at "
                       "this very wheel")
              .fix(fmt::format("rebuild {} against the toolkit the label names, or label the wheel as what it is "
                               "(a {} build)",
                               r.member, toolkit_words(*r.kind, major_of(r.version))))
              .evidence(r.member + ": DT_NEEDED " + r.soname));
  }
  // A runtime distribution it declares for another CUDA release than its label's.
  if (claim && claim->kind == image::ToolkitKind::Cuda && !claim->version.empty() && l.o.providers != nullptr) {
    for (const auto& req : l.reqs) {
      if (!req.error.empty() || req.extra_only) continue;
      for (const auto& p : *l.o.providers) {
        if (p.toolkit != image::ToolkitKind::Cuda || p.toolkit_version.empty() ||
            major_of(claim->version) == p.toolkit_version)
          continue;
        if (std::find(p.distributions.begin(), p.distributions.end(), req.normalized) == p.distributions.end())
          continue;
        l.add(make(FindingKind::LabelClaim, Severity::Error)
                  .library(req.normalized)
                  .version(toolkit_words(claim->kind, claim->version))
                  .explain(fmt::format("the {} says it is a CUDA {} build, but it declares Requires-Dist: {}, whose "
                                       "libraries are CUDA {}'s",
                                       claim->because, claim->version, req.text, p.toolkit_version))
                  .fix("declare the CUDA " + major_of(claim->version) + " runtime distributions"));
        break;
      }
    }
  }
  // The torch release the label names, against the torch it pins.
  const std::string torch = label_torch(w.filename.version);
  if (torch.empty() || l.self == "torch") return;
  l.claims.said.push_back("local version label +" + label + ": built for torch " + torch);
  // The torch its members bind where their needs say the release (Debian's libc10.so.2.6).
  const std::string claimed_line = torch.substr(0, torch.find('.', torch.find('.') + 1));
  for (const auto& m : w.members) {
    if (!m.elf) continue;
    for (const auto& n : m.elf->needed) {
      const Provider* p = l.project_of_library(n);  // Debian's libc10.so.2.6 is torch's library, not torch's wheel's
      if (p == nullptr ||
          std::find(p->distributions.begin(), p->distributions.end(), "torch") == p->distributions.end())
        continue;
      const auto so = n.find(".so.");
      if (so == std::string::npos) continue;
      const std::string bound = n.substr(so + 4);
      l.claims.shown.push_back(fmt::format("{} needs {}: torch {}'s", m.path, n, bound));
      if (bound.substr(0, bound.find('.', bound.find('.') + 1)) == claimed_line) continue;
      l.add(make(FindingKind::LabelClaim, Severity::Error)
                .member(m.path)
                .library(n)
                .version("torch " + torch)
                .explain(fmt::format("the local version label +{} says it is built for torch {}, but {} needs {}, "
                                     "torch {}'s library: it binds another torch than it claims",
                                     label, torch, m.path, n, bound))
                .fix("label it as the torch it is built against, or rebuild it against torch " + torch));
      break;
    }
  }
  for (const auto& req : l.reqs) {
    if (req.normalized != "torch" || !req.error.empty() || req.extra_only || req.specifier.empty()) continue;
    bool admitted = false;
    if (std::count(torch.begin(), torch.end(), '.') >= 2) {
      admitted = wheel::version_in(req.specifier, torch).value_or(true);
    } else {
      for (int patch = 0; patch <= 30 && !admitted; ++patch)
        admitted = wheel::version_in(req.specifier, torch + "." + std::to_string(patch)).value_or(true);
    }
    if (admitted) continue;
    l.add(make(FindingKind::LabelClaim, Severity::Error)
              .library("torch")
              .version("torch " + torch)
              .explain(fmt::format("the local version label +{} says it is built for torch {}, but it declares "
                                   "Requires-Dist: {}, which admits no torch {}: installed as declared, its C++ "
                                   "symbols meet another torch",
                                   label, torch, req.text, torch))
              .fix("declare the torch it is built for (torch==" + torch + (torch.size() <= 4 ? ".*" : "") + ")"));
  }
  // cxx11abiFALSE (flash-attn's convention) against the std::__cxx11 names its members use.
  if (ascii_lower(label).find("cxx11abifalse") != std::string::npos) {
    for (const auto& m : w.members) {
      if (!m.elf) continue;
      const auto it = std::find_if(m.elf->symbols.begin(), m.elf->symbols.end(), [](const elf::Symbol& s) {
        return s.name.find("St7__cxx11") != std::string::npos || s.name.find("B5cxx11") != std::string::npos;
      });
      if (it == m.elf->symbols.end()) continue;
      l.add(
          make(FindingKind::LabelClaim, Severity::Error)
              .member(m.path)
              .symbol(it->name)
              .version("cxx11abiFALSE")
              .explain(fmt::format("the local version label +{} says it is built with the pre-C++11 std::string ABI "
                                   "(_GLIBCXX_USE_CXX11_ABI=0), but {} uses std::__cxx11 names ({}): it is a C++11-ABI "
                                   "build, and binds only to a torch built the same way",
                                   label, m.path, cxx::demangle_or_self(it->name)))
              .fix("label it cxx11abiTRUE, or rebuild with -D_GLIBCXX_USE_CXX11_ABI=0"));
      break;
    }
  }
}

void check_dependencies(Lint& l) {
  const auto& w = l.w;
  // The system libraries a policy of the wheel's family allows (libc.so.6, libstdc++.so.6, libz.so.1, ...).
  std::set<std::string> system;
  if (l.o.policies != nullptr) {
    for (const auto& p : l.o.policies->all()) system.insert(p.whitelist.begin(), p.whitelist.end());
  }
  std::set<const Provider*> linked;
  // One finding per member and provider: a soname and the symbols only that provider defines, together.
  std::map<std::pair<std::string, const Provider*>, std::size_t> made;
  std::set<std::string> shown;
  auto undeclared = [&](const std::string& member, const Provider& p, const std::string& soname,
                        const std::vector<std::string>& symbols) {
    const auto key = std::make_pair(member, &p);
    const std::string dist = p.distributions.front();
    const Requirement* extra = l.requirement_of(p, true);
    if (auto it = made.find(key); it != made.end()) {
      auto& f = l.out[it->second];
      if (!soname.empty()) f.evidence.push_back(member + ": DT_NEEDED " + soname);
      for (const auto& s : symbols) f.evidence.push_back(member + ": undefined " + cxx::demangle_or_self(s));
      return;
    }
    std::string what;
    if (!soname.empty()) {
      what = "needs " + soname;
    } else {
      std::vector<std::string> shown_symbols;
      for (std::size_t i = 0; i < symbols.size() && i < 3; ++i)
        shown_symbols.push_back(cxx::demangle_or_self(symbols[i]));
      // The namespaces of the symbols themselves ("c10d::"), not every one the provider defines.
      std::vector<std::string> spaces;
      for (const auto& s : symbols) {
        const std::string scope = cxx::leading_scope(s);  // "at::", not a template's return type "long* at::"
        const std::string ns = scope.empty() ? dist : scope;
        if (std::find(spaces.begin(), spaces.end(), ns) == spaces.end()) spaces.push_back(ns);
      }
      what = fmt::format("leaves {} {} symbol{} undefined ({}{})", symbols.size(), join(spaces, " and "),
                         symbols.size() == 1 ? "" : "s", join(shown_symbols, ", "), symbols.size() > 3 ? ", ..." : "");
    }
    const bool runtime = p.kind == "runtime";
    const Severity sev = runtime ? Severity::Info : extra != nullptr ? Severity::Warning : Severity::Error;
    std::string explanation;
    if (runtime) {
      explanation = fmt::format(
          "{} {}, which {} ships, or the image's own toolkit; the wheel declares neither "
          "(no Requires-Dist: {}), so the image must provide it",
          member, what, join(p.distributions, " or "), dist);
    } else if (extra != nullptr) {
      explanation = fmt::format(
          "{} {}, which only {} ships, and the wheel requires {} only with an extra "
          "(Requires-Dist: {}): installed without it, {} fails whenever it is loaded",
          member, what, dist, dist, extra->text, member);
    } else {
      explanation = fmt::format(
          "{} {}, which only {} ships{}, and the wheel does not declare Requires-Dist: {}: pip installs it without "
          "{}, and {} fails to load wherever {} is not already installed{}",
          member, what, dist, soname.empty() ? " (its libraries define them)" : "", dist, dist, member, dist,
          soname.empty() ? "; where some other release is, its symbols may not match" : "");
    }
    auto draft = make(FindingKind::UndeclaredDependency, sev)
                     .member(member)
                     .library(dist)
                     .explain(explanation)
                     .fix(runtime ? fmt::format("declare Requires-Dist: {} (or state that the image's toolkit "
                                                "provides it)",
                                                dist)
                                  : fmt::format("declare Requires-Dist: {}{}", dist,
                                                p.abi.empty() ? "" : ", pinned to the release it was built against"))
                     .evidence(p.source + ": " + dist + (p.namespaces.empty() ? "" : " defines " + p.namespaces) +
                               (p.libraries.empty() ? "" : " ships " + join(p.libraries, ", ")));
    if (!soname.empty()) draft.evidence(member + ": DT_NEEDED " + soname);
    if (!symbols.empty()) draft.symbol(symbols.front());
    for (const auto& s : symbols) draft.evidence(member + ": undefined " + cxx::demangle_or_self(s));
    made[key] = l.out.size();
    l.add(draft);
  };
  // What the wheel's own members define is the wheel's (Debian's libtorch_cpu.so.2.6 beside the libc10.so.2.6 it
  // ships): an undefined symbol one of them exports needs no distribution.
  // (Views of the profile's own names: the torch wheel defines some 10^5, none copied.)
  std::unordered_set<std::string_view> own_symbols;
  for (const auto& m : w.members) {
    if (!m.elf) continue;
    for (const auto& s : m.elf->symbols)
      if (s.defined) own_symbols.insert(s.name);
  }
  for (const auto& m : w.members) {
    if (!m.elf) continue;
    for (const auto& n : m.elf->needed) {
      if (l.ships(n) || system.count(n) != 0 || lint_driver_library(n)) continue;
      const Provider* p = l.provider_of_library(n);
      if (p == nullptr) {
        // The loader and C library are every process's (musl's libc.musl-x86_64.so.1 is its loader, which each
        // musllinux system has); libpython is the interpreter's own (policy findings say more).
        if (policy::c_library_of(policy::Libc::Glibc, n) || policy::c_library_of(policy::Libc::Musl, n)) continue;
        if (!shown.insert(n).second) continue;
        if (n.rfind("libpython", 0) == 0) {
          l.claims.shown.push_back(
              fmt::format("{} needs {}, the interpreter's own library (an extension module "
                          "takes those symbols from the interpreter that imports it)",
                          m.path, n));
          continue;
        }
        const auto t = toolkit::of_soname(n);
        if (t && l.shown_runtimes.count(m.path + "\n" + n) != 0) continue;  // the label's check showed it
        l.claims.shown.push_back(
            t ? fmt::format("{} needs {} from the image's {} toolkit", m.path, n, toolkit::display_name(t->kind))
              : fmt::format("{} needs {}: neither the wheel, a known distribution nor a packaging "
                            "policy provides it",
                            m.path, n));
        continue;
      }
      if (l.is_self(*p)) continue;
      linked.insert(p);
      if (l.requirement_of(*p, false) != nullptr) continue;
      undeclared(m.path, *p, n, {});
    }
    std::map<const Provider*, std::vector<std::string>> owned;
    for (const auto& s : m.elf->symbols) {
      if (s.defined || s.weak() || own_symbols.count(s.name) != 0) continue;
      const Provider* p = l.provider_of_symbol(s.name);
      if (p == nullptr || l.is_self(*p)) continue;
      linked.insert(p);
      owned[p].push_back(s.name);
    }
    for (const auto& [p, symbols] : owned) {
      if (l.requirement_of(*p, false) != nullptr) continue;
      undeclared(m.path, *p, "", symbols);
    }
  }
  // A release-bound C++ ABI declared without a pin.
  for (const Provider* p : linked) {
    if (p->abi.empty()) continue;
    const Requirement* req = l.requirement_of(*p, false);
    if (req == nullptr || req->url || pins_a_release(req->specifier)) continue;
    l.add(make(FindingKind::UnpinnedDependency, Severity::Warning)
              .library(p->distributions.front())
              .version(req->specifier.empty() ? "any" : req->specifier)
              .explain(fmt::format("its members bind {}'s C++ symbols ({}), and it declares Requires-Dist: {}, which "
                                   "admits any release: {}",
                                   p->distributions.front(), p->namespaces.empty() ? "its libraries" : p->namespaces,
                                   req->text, p->abi))
              .fix(fmt::format("pin the release it was built against ({}==X.Y.*)", p->distributions.front())));
  }
  // Library-only distributions it declares that nothing links.
  if (l.o.providers == nullptr) return;
  for (const auto& req : l.reqs) {
    if (!req.error.empty() || req.extra_only) continue;
    bool runtime = false, used = false;
    for (const auto& p : *l.o.providers) {
      if (std::find(p.distributions.begin(), p.distributions.end(), req.normalized) == p.distributions.end()) continue;
      runtime = runtime || p.kind == "runtime";
      used = used || linked.count(&p) != 0 || p.kind != "runtime";
    }
    if (!runtime || used) continue;
    l.add(make(FindingKind::UnusedDependency, Severity::Info)
              .library(req.normalized)
              .explain(fmt::format("it declares Requires-Dist: {}, a distribution of libraries only, and no member "
                                   "needs one of them: it may be loaded with dlopen, or needed by another "
                                   "dependency's libraries; otherwise installing it only costs its download",
                                   req.text))
              .fix("drop it, or say why it is there"));
  }
}

}  // namespace wheelcheck::lint::detail
