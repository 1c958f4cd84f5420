// NVIDIA's rules for which GPUs a member's device code serves, and the sentences that explain them.
//
// The rules (CUDA C++ Programming Guide, "Compute Capability" and "Feature Availability"; nvcc
// documentation, "GPU Compilation"; docs/cuda.md quotes them):
//   SASS sm_XY    runs on a GPU of the same major X with a minor >= Y, never across majors;
//   SASS sm_XYa   runs on exactly X.Y (architecture-specific features);
//   SASS sm_XYf   runs on the family: the same major X, a minor >= Y;
//   PTX compute_XY  is JIT-compiled by the driver for any GPU of compute capability >= X.Y, newer majors
//                   included;
//   PTX compute_XYa only for exactly X.Y; compute_XYf only within the family (same major, minor >= Y).
// A GPU named with a suffix (an image may write sm_90a) is the GPU sm_90: suffixes describe code.
//
// coverage() takes what the driver prefers: SASS that runs (the newest such), else PTX it can JIT (the
// newest such, which needs the driver to know that PTX's ISA version). runs_on_text() turns the whole set
// into the list of GPUs a person can check an image against, range by range.
#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "wheelcheck/cuda.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cuda {

namespace {

Arch plain(const Arch& a) {
  return Arch{a.major, a.minor, 0};
}

bool same_or_newer_minor(const Arch& code, const Arch& gpu) {
  return code.major == gpu.major && gpu.minor >= code.minor;
}

bool exactly(const Arch& code, const Arch& gpu) {
  return code.major == gpu.major && code.minor == gpu.minor;
}

}  // namespace

bool sass_runs_on(const Arch& sass, const Arch& gpu) {
  const Arch g = plain(gpu);
  if (sass.suffix == 'a') return exactly(sass, g);
  return same_or_newer_minor(sass, g);  // plain and 'f' alike: the major's later minors
}

bool ptx_jits_for(const Arch& ptx, const Arch& gpu) {
  const Arch g = plain(gpu);
  if (ptx.suffix == 'a') return exactly(ptx, g);
  if (ptx.suffix == 'f') return same_or_newer_minor(ptx, g);
  return g >= plain(ptx);  // any GPU at or above its compute capability, newer majors included
}

namespace {

std::string sass_rule(const Arch& sass) {
  if (sass.suffix == 'a') return "architecture-specific: that exact GPU only";
  if (sass.suffix == 'f') return "family-specific: same major, equal or newer minor";
  return "same major, equal or newer minor";
}

std::vector<std::string> names(const std::vector<Arch>& archs, std::string (*name)(const Arch&)) {
  std::vector<std::string> out;
  for (const auto& a : archs) out.push_back(name(a));
  return out;
}

// What a member carries, SASS then PTX: "SASS sm_80, sm_86 and no PTX".
std::string carried(const Fatbins& fatbins) {
  const auto sass = names(fatbins.sass(), sm_name);
  const auto ptx = names(fatbins.ptx(), compute_name);
  if (sass.empty() && ptx.empty()) return "no GPU code";
  if (ptx.empty()) return "SASS " + join(sass, ", ") + " and no PTX";
  if (sass.empty()) return "no SASS, only PTX " + join(ptx, ", ");
  return "SASS " + join(sass, ", ") + " and PTX " + join(ptx, ", ");
}

// The newest ISA among the PTX entries for `arch` (they may differ by entry; the newest is what a driver
// may be asked to know).
std::optional<PtxIsa> isa_of(const Fatbins& fatbins, const Arch& arch) {
  std::optional<PtxIsa> isa;
  for (const auto& v : fatbins.variants) {
    if (v.kind == CodeKind::Ptx && v.arch == arch && v.ptx_isa && (!isa || *isa < *v.ptx_isa)) isa = v.ptx_isa;
  }
  return isa;
}

}  // namespace

GpuCoverage coverage(const Fatbins& fatbins, const Arch& gpu) {
  GpuCoverage c;
  c.gpu = plain(gpu);
  const std::string gpu_name = sm_name(c.gpu);

  const auto sass = fatbins.sass();  // ascending: the last that runs is the best
  for (auto it = sass.rbegin(); it != sass.rend(); ++it) {
    if (!sass_runs_on(*it, c.gpu)) continue;
    c.runs = true;
    c.by = *it;
    c.explanation = fmt::format("SASS {} runs on {} ({})", sm_name(*it), gpu_name, sass_rule(*it));
    return c;
  }
  const auto ptx = fatbins.ptx();
  for (auto it = ptx.rbegin(); it != ptx.rend(); ++it) {
    if (!ptx_jits_for(*it, c.gpu)) continue;
    c.runs = true;
    c.needs_jit = true;
    c.by = *it;
    c.ptx_isa = isa_of(fatbins, *it);
    const std::string isa = c.ptx_isa ? fmt::format(" (PTX ISA {})", c.ptx_isa->text()) : std::string();
    c.explanation =
        fmt::format("no SASS runs on {}; PTX {} is JIT-compiled by the driver{}", gpu_name, compute_name(*it), isa);
    return c;
  }
  if (fatbins.variants.empty() && !fatbins.unread.empty()) {
    c.explanation =
        fmt::format("unknown for {}: the member's fatbin entries could not be read ({})", gpu_name, fatbins.unread);
  } else if (fatbins.variants.empty()) {
    c.explanation = fmt::format("nothing runs on {}: the member's fatbins hold no entries", gpu_name);
  } else {
    c.explanation = fmt::format("nothing runs on {}: the member carries {}", gpu_name, carried(fatbins));
  }
  return c;
}

namespace {

// One clause of runs_on_text, with the key that orders it: SASS clauses first, then PTX, each ascending.
struct Clause {
  std::tuple<int, int, int, int> key;  // code kind, major, minor, suffix
  std::string text;
};

std::string range_text(int major, int minor) {
  const Arch first{major, minor, 0};
  const Arch last{major, 9, 0};
  return minor == 9 ? sm_name(first) : sm_name(first) + "-" + sm_name(last);
}

std::vector<Clause> sass_clauses(const std::vector<Arch>& sass) {
  std::vector<Clause> out;
  std::map<int, std::vector<Arch>> by_major;  // plain and 'f' SASS: the major's later minors
  for (const auto& a : sass) {
    if (a.suffix == 'a') {
      out.push_back({{0, a.major, a.minor, a.suffix}, fmt::format("{} only (SASS {})", sm_name(a), sm_name(a))});
    } else {
      by_major[a.major].push_back(a);
    }
  }
  for (const auto& [major, archs] : by_major) {
    const int minor = archs.front().minor;  // ascending: the first is the lowest
    const bool family = std::all_of(archs.begin(), archs.end(), [](const Arch& a) { return a.suffix == 'f'; });
    out.push_back({{0, major, minor, 0},
                   fmt::format("{}{} (SASS {})", range_text(major, minor), family ? " family" : "",
                               join(names(archs, sm_name), ", "))});
  }
  return out;
}

std::vector<Clause> ptx_clauses(const std::vector<Arch>& ptx) {
  std::vector<Clause> out;
  std::vector<Arch> any;  // plain PTX: every GPU from the lowest up
  for (const auto& a : ptx) {
    if (a.suffix == 'a') {
      out.push_back(
          {{1, a.major, a.minor, a.suffix}, fmt::format("{} only through PTX JIT ({})", sm_name(a), compute_name(a))});
    } else if (a.suffix == 'f') {
      out.push_back({{1, a.major, a.minor, a.suffix},
                     fmt::format("{} family through PTX JIT ({})", range_text(a.major, a.minor), compute_name(a))});
    } else {
      any.push_back(a);
    }
  }
  if (!any.empty()) {
    // Last among the PTX clauses: it is the widest.
    out.push_back({{2, any.front().major, any.front().minor, 0},
                   fmt::format("any GPU from {} up through PTX JIT ({})", sm_name(any.front()),
                               join(names(any, compute_name), ", "))});
  }
  return out;
}

// "a", "a or b", "a, b, or c".
std::string either(const std::vector<std::string>& items) {
  if (items.size() <= 1) return items.empty() ? std::string() : items.front();
  const std::vector<std::string> head(items.begin(), items.end() - 1);
  return join(head, ", ") + (items.size() > 2 ? ", or " : " or ") + items.back();
}

}  // namespace

std::string runs_on_text(const Fatbins& fatbins) {
  if (fatbins.variants.empty()) {
    if (!fatbins.unread.empty()) return "unknown: the fatbin entries could not be read (" + fatbins.unread + ")";
    return "no GPU: the fatbins hold no entries";
  }
  auto clauses = sass_clauses(fatbins.sass());
  for (auto& c : ptx_clauses(fatbins.ptx())) clauses.push_back(std::move(c));
  std::stable_sort(clauses.begin(), clauses.end(), [](const Clause& a, const Clause& b) { return a.key < b.key; });
  std::vector<std::string> texts;
  for (const auto& c : clauses) texts.push_back(c.text);
  std::string text = either(texts);
  if (!fatbins.unread.empty()) text += "; some entries could not be read (" + fatbins.unread + ")";
  if (!fatbins.embedded_unread.empty()) {
    text += "; GPU code the library may load itself was not looked for (" + fatbins.embedded_unread + ")";
  }
  return text;
}

}  // namespace wheelcheck::cuda
