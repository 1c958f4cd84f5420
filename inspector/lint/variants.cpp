// The publisher check of a wheel variant (PEP 825 draft): what its variant.json declares against what its
// binaries are, with no image. Installers pick a variant by its properties alone, so a property the binaries
// contradict sends the wrong file to a machine:
//   - variant-metadata: the file's own issues by the rules of the dialect it declares (variant::Dialect: its
//     schema, priorities and providers; the dialect is a warning naming who reads it where one installer
//     reads it and another does not, an error where none listed does), a label without a variant.json, and a
//     difference from the release's -variants.json (Options::release, lint --variants); in v0.1.1 a note on
//     Requires-Dist markers that test one of several values of a feature (variant_properties holds only the
//     supported ones);
//   - variant-claim, against the label: a CUDA label (cuda12.8, cu130) whose cuda_version_lower_bound is of
//     another major, a ROCm label (rocm7.1) whose rocm_version is another release;
//   - variant-claim, against the members: nvidia :: sm_arch (NN_real: SASS that runs on sm_NN; NN_virtual:
//     PTX that compiles for it) against each member's fatbins; the CUDA bounds against the libcudart.so.N the
//     members need (a CUDA N runtime needs a driver for CUDA N.0, and is CUDA N's); amd :: rocm_version
//     against libamdhip64.so.N; abi_dependency :: torch against the torch its Requires-Dist pins.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "inspector/lint/lint_detail.hpp"
#include "wheelcheck/checks.hpp"
#include "wheelcheck/cuda.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/variant.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::lint::detail {

using verdict::FindingKind;
using verdict::make;
using verdict::Severity;

namespace {

// "90_real" -> (sm_90, real); "120_virtual" -> (sm_120, virtual); nullopt for anything else.
std::optional<std::pair<cuda::Arch, bool>> variant_sm(const std::string& v) {
  const auto us = v.find('_');
  if (us == std::string::npos || us == 0) return std::nullopt;
  const std::string kind = v.substr(us + 1);
  if (kind != "real" && kind != "virtual") return std::nullopt;
  const auto n = small_number(v.substr(0, us));
  if (!n || *n < 10) return std::nullopt;
  return std::pair{cuda::Arch{*n / 10, *n % 10, 0}, kind == "real"};
}

// "12.8" / "12" -> 12; nullopt when not a version.
std::optional<int> version_major(const std::string& v) {
  const auto parts = split(v, ".", true);
  if (parts.empty()) return std::nullopt;
  return small_number(parts[0]);
}

// The CUDA release a label names: cuda12.8 -> "12.8", cu130 -> "13.0", cu126 -> "12.6"; "" otherwise.
std::string label_cuda(const std::string& label) {
  if (label.rfind("cuda", 0) == 0) {
    const std::string v = label.substr(4);
    return version_major(v) ? v : "";
  }
  if (label.rfind("cu", 0) == 0 && label.size() >= 5 && std::all_of(label.begin() + 2, label.end(), ::isdigit)) {
    const std::string d = label.substr(2);
    return d.substr(0, d.size() - 1) + "." + d.substr(d.size() - 1);
  }
  return "";
}

std::string label_rocm(const std::string& label) {
  if (label.rfind("rocm", 0) != 0) return "";
  const std::string v = label.substr(4);
  return version_major(v) ? v : "";
}

// The members' needs of a runtime: soname prefix -> (member, soname) pairs.
std::vector<std::pair<std::string, std::string>> runtime_needs(const WheelProfile& w, std::string_view prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& m : w.members) {
    if (!m.elf) continue;
    for (const auto& n : m.elf->needed) {
      if (n.rfind(prefix, 0) == 0 && n.size() > prefix.size()) out.emplace_back(m.path, n);
    }
  }
  return out;
}

// "libcudart.so.12" -> 12.
std::optional<int> runtime_major(const std::string& soname) {
  const auto dot = soname.rfind(".so.");
  if (dot == std::string::npos) return std::nullopt;
  return version_major(soname.substr(dot + 4));
}

class VariantLint {
 public:
  VariantLint(Lint& l, const variant::Declared& d) : m_l(l), m_d(d), m_label(d.label.empty() ? "null" : d.label) {}

  void run() {
    metadata();
    const variant::Properties* props = m_d.properties();
    if (props == nullptr) return;
    m_l.claims.said.push_back("variant " + m_label + ": " + variant::properties_text(*props));
    label(*props);
    if (const auto it = props->find("nvidia"); it != props->end()) nvidia(it->second);
    if (const auto it = props->find("amd"); it != props->end()) amd(it->second);
    if (const auto it = props->find("abi_dependency"); it != props->end()) abi(it->second);
  }

 private:
  verdict::Draft claim(Severity s, const std::string& property) {
    return std::move(make(FindingKind::VariantClaim, s).library(m_label).version(property));
  }

  // The fix for an issue of the file, by what it is about and the dialect the file declares.
  std::string metadata_fix(const variant::Issue& i) const {
    using Topic = variant::Issue::Topic;
    const variant::Dialect dialect = m_d.file ? m_d.file->dialect : variant::Dialect::Unknown;
    const std::string v011 = fmt::format("\"$schema\": \"{}\"", variant::k_v011_schema);
    switch (i.topic) {
      case Topic::Schema:
        if (dialect == variant::Dialect::V003) {
          return fmt::format(
              "for uv's preview, publish it in PEP 825 v0.1.1 ({}, default-priorities.namespace "
              "alone, no providers); as it is, it is for wheelnext/variantlib",
              v011);
        }
        if (dialect == variant::Dialect::V011) return "write " + v011 + " exactly, or drop what v0.1.1 has not";
        return fmt::format(
            "declare the dialect it is written in: {} (PEP 825 v0.1.1, uv's preview) or \"$schema\": "
            "\"{}\" (wheelnext/variantlib)",
            v011, variant::k_v003_schema);
      case Topic::Priorities:
        if (dialect == variant::Dialect::V011) {
          return "list every namespace the variants use, once each, in default-priorities.namespace, and nothing "
                 "else there (v0.1.1 has no feature or property overrides; order values by listing the variants)";
        }
        return "list every namespace the variants use, once each, in default-priorities.namespace";
      case Topic::Providers:
        if (dialect == variant::Dialect::V011) {
          return "keep providers out of a v0.1.1 file (PEP 850 defines them), or know that uv's preview alone reads "
                 "them";
        }
        return "give every namespace the variants use a provider, and list the same namespaces in "
               "default-priorities.namespace (wheelnext/variantlib validates it)";
      case Topic::Variants:
      case Topic::Wheel: break;
    }
    return "fix the variant's metadata (the installers of its dialect validate it: " +
           variant::installers_text(dialect) + ")";
  }

  void metadata() {
    using Topic = variant::Issue::Topic;
    const variant::Dialect dialect = m_d.file ? m_d.file->dialect : variant::Dialect::Unknown;
    for (const auto& i : m_d.issues) {
      std::string what = "variant.json";
      if (i.topic == Topic::Schema) {
        what = fmt::format(
            "schema {}: {}",
            m_d.file && !m_d.file->schema_version.empty() ? m_d.file->schema_version : std::string("not declared"),
            dialect == variant::Dialect::Unknown ? std::string("no installer listed reads it")
                                                 : "read by " + variant::readers_text(dialect));
      } else if (i.topic == Topic::Priorities) {
        what = "default-priorities (" + variant::dialect_text(dialect) + ")";
      } else if (i.topic == Topic::Providers) {
        what = "providers (" + variant::dialect_text(dialect) + ")";
      }
      m_l.add(make(FindingKind::VariantMetadata, i.error ? Severity::Error : Severity::Warning)
                  .library(m_label)
                  .version(what)
                  .explain("variant.json: " + i.text)
                  .fix(metadata_fix(i)));
    }
    markers(dialect);
    if (m_l.o.release != nullptr && m_d.file) {
      for (const auto& diff : variant::compare(*m_d.file, *m_l.o.release, m_label)) {
        m_l.add(make(FindingKind::VariantMetadata, Severity::Error)
                    .library(m_label)
                    .version("the index's " + m_l.o.release->what)
                    .explain(diff + ": installers read the index's file and refuse a release whose files disagree")
                    .fix("publish the wheel and the release's -variants.json from one configuration"));
      }
    }
  }

  // PEP 825 v0.1.1: variant_properties in a marker holds only the label's properties the installing machine
  // supports (v0.0.3: all of them). A Requires-Dist that tests one value of a feature the label lists with
  // others holds on some of the machines the variant is installed on and not on others: said, as a note.
  void markers(variant::Dialect dialect) {
    if (dialect != variant::Dialect::V011) return;
    const variant::Properties* props = m_d.properties();
    if (props == nullptr) return;
    for (const auto& text : m_l.w.metadata.requires_dist) {
      const auto semi = text.find(';');
      if (semi == std::string::npos || text.find("variant_properties", semi) == std::string::npos) continue;
      std::string marker = text.substr(semi + 1);
      marker.erase(std::remove(marker.begin(), marker.end(), ' '), marker.end());
      for (const auto& [ns, features] : *props) {
        for (const auto& [feature, values] : features) {
          if (values.size() < 2) continue;
          for (const auto& v : values) {
            if (marker.find(ns + "::" + feature + "::" + v) == std::string::npos) continue;
            m_l.notes.push_back(fmt::format(
                "Requires-Dist {}: in PEP 825 v0.1.1 (this variant.json's dialect) variant_properties holds only the "
                "properties of {} the installing machine supports, so {} in it holds on some machines this variant "
                "is installed on and not on others (in v0.0.3 it held all of them); markers are evaluated after "
                "selection and never choose the variant",
                text, m_label, variant::property_text(ns, feature, v)));
          }
        }
      }
    }
  }

  void label(const variant::Properties& props) {
    const auto values = [&](const char* ns, const char* feature) -> const variant::Values* {
      const auto n = props.find(ns);
      if (n == props.end()) return nullptr;
      const auto f = n->second.find(feature);
      return f == n->second.end() ? nullptr : &f->second;
    };
    if (const std::string cuda = label_cuda(m_label); !cuda.empty()) {
      if (const auto* lower = values("nvidia", "cuda_version_lower_bound")) {
        for (const auto& v : *lower) {
          if (version_major(v) != version_major(cuda)) {
            m_l.add(claim(Severity::Error, variant::property_text("nvidia", "cuda_version_lower_bound", v))
                        .explain(fmt::format("the label {} says it is a CUDA {} build, but it declares nvidia :: "
                                             "cuda_version_lower_bound :: {}, a CUDA {} floor: installers put it on "
                                             "machines by the property, not the label",
                                             m_label, cuda, v, *version_major(v)))
                        .fix(fmt::format("declare the floor of CUDA {} (cuda_version_lower_bound {}.0), or label "
                                         "the variant as what it is",
                                         *version_major(cuda), *version_major(cuda))));
          }
        }
      }
    }
    if (const std::string rocm = label_rocm(m_label); !rocm.empty()) {
      if (const auto* declared = values("amd", "rocm_version")) {
        if (std::find(declared->begin(), declared->end(), rocm) == declared->end()) {
          m_l.add(claim(Severity::Error, variant::property_text("amd", "rocm_version", join(*declared, ", ")))
                      .explain(fmt::format("the label {} says it is a ROCm {} build, but it declares amd :: "
                                           "rocm_version :: {}: an installer takes it for a ROCm {} machine, and "
                                           "the ROCm {} machines it was built for pass it over",
                                           m_label, rocm, join(*declared, ", "), join(*declared, ", "), rocm))
                      .fix("declare amd :: rocm_version :: " + rocm + " (PyTorch 2.10's config gives rocm7.1 7.0)"));
        }
      }
    }
  }

  void nvidia(const variant::Features& features) {
    const auto& w = m_l.w;
    if (const auto it = features.find("sm_arch"); it != features.end()) {
      std::vector<const MemberProfile*> gpu;
      for (const auto& m : w.members) {
        if (m.elf && m.cuda && (m.cuda->containers > 0 || m.cuda->embedded_containers > 0 || !m.cuda->unread.empty()))
          gpu.push_back(&m);
      }
      if (gpu.empty()) {
        m_l.add(claim(Severity::Warning, variant::property_text("nvidia", "sm_arch", join(it->second, ", ")))
                    .explain("it declares the GPU architectures it runs on, but no member carries GPU code (no "
                             ".nv_fatbin): the property selects nothing about this wheel")
                    .fix("drop sm_arch, or check that the GPU code is in the wheel"));
      }
      for (const auto* m : gpu) {
        const cuda::Fatbins& f = *m->cuda;
        if (!f.unread.empty()) {
          m_l.notes.push_back(m->path + ": its GPU code was not read (" + f.unread +
                              "): nvidia :: sm_arch is not checked against it");
          continue;
        }
        for (const auto& v : it->second) {
          const auto sm = variant_sm(v);
          if (!sm) continue;
          const auto cov = cuda::coverage(f, sm->first);
          const std::string property = variant::property_text("nvidia", "sm_arch", v);
          if (sm->second && (!cov.runs || cov.needs_jit)) {
            m_l.add(
                claim(cov.runs ? Severity::Warning : Severity::Error, property)
                    .member(m->path)
                    .explain(fmt::format("it declares {}: SASS for {} machines, which an installer with variants "
                                         "takes it for; {} {}",
                                         v, cuda::sm_name(sm->first), m->path,
                                         cov.runs ? "has no SASS for it, only PTX the driver compiles at load time (" +
                                                        cov.explanation + ")"
                                                  : "has no code that runs there (" + cov.explanation + ")"))
                    .evidence(m->path + " carries " + cuda::runs_on_text(f))
                    .fix(fmt::format("build it for {} (-gencode arch=compute_{},code=sm_{}), or drop {} from "
                                     "sm_arch",
                                     cuda::sm_name(sm->first), sm->first.number(), sm->first.number(), v)));
          } else if (!sm->second) {
            const auto ptx = f.ptx();
            const bool ok = std::any_of(ptx.begin(), ptx.end(),
                                        [&](const cuda::Arch& p) { return cuda::ptx_jits_for(p, sm->first); });
            if (!ok) {
              m_l.add(claim(Severity::Error, property)
                          .member(m->path)
                          .explain(
                              fmt::format("it declares {}: PTX that compiles for {}, but {} carries no PTX for it ({})",
                                          v, cuda::sm_name(sm->first), m->path, cuda::runs_on_text(f)))
                          .fix(fmt::format("embed PTX (-gencode arch=compute_{0},code=compute_{0}), or drop {1}",
                                           sm->first.number(), v)));
            }
          }
        }
      }
    }
    // The CUDA bounds against the runtime the members need.
    const auto runtimes = runtime_needs(w, "libcudart.so.");
    if (runtimes.empty()) return;
    const auto& [member, soname] = runtimes.front();
    const auto runtime = runtime_major(soname);
    if (!runtime) return;
    m_l.claims.shown.push_back(fmt::format("{} needs {} (the CUDA {} runtime: a driver for CUDA {}.0 or newer)", member,
                                           soname, *runtime, *runtime));
    if (const auto it = features.find("cuda_version_lower_bound"); it != features.end()) {
      for (const auto& v : it->second) {
        const auto major = version_major(v);
        if (!major || *major == *runtime) continue;
        const bool below = *major < *runtime;
        m_l.add(claim(Severity::Error, variant::property_text("nvidia", "cuda_version_lower_bound", v))
                    .member(member)
                    .library(m_label)
                    .explain(below
                                 ? fmt::format("it declares a driver for CUDA {} enough, but {} needs {}, which needs "
                                               "a driver for CUDA {}.0 or newer: installed where its property says, it "
                                               "fails to load (cudaErrorInsufficientDriver)",
                                               v, member, soname, *runtime)
                                 : fmt::format("it declares a CUDA {} floor, but {} needs {}, the CUDA {} runtime: "
                                               "the variant picked for CUDA {} machines loads CUDA {}'s runtime, which "
                                               "a CUDA {} image does not have",
                                               v, member, soname, *runtime, *major, *runtime, *major))
                    .evidence(fmt::format("{} NEEDED {}", member, soname))
                    .fix(fmt::format("declare cuda_version_lower_bound {}.0 (CUDA {}'s runtime), or rebuild against "
                                     "the CUDA {} runtime",
                                     *runtime, *runtime, *major)));
      }
    }
  }

  void amd(const variant::Features& features) {
    const auto it = features.find("rocm_version");
    if (it == features.end()) return;
    const auto hip = runtime_needs(m_l.w, "libamdhip64.so.");
    if (hip.empty()) return;
    const auto& [member, soname] = hip.front();
    const auto runtime = runtime_major(soname);
    if (!runtime) return;
    m_l.claims.shown.push_back(fmt::format("{} needs {} (ROCm {}.x's HIP runtime)", member, soname, *runtime));
    for (const auto& v : it->second) {
      if (version_major(v) == runtime) continue;
      m_l.add(claim(Severity::Error, variant::property_text("amd", "rocm_version", v))
                  .member(member)
                  .explain(fmt::format("it declares ROCm {}, but {} needs {}, ROCm {}.x's HIP runtime", v, member,
                                       soname, *runtime))
                  .evidence(fmt::format("{} NEEDED {}", member, soname))
                  .fix("declare the ROCm release it is built against"));
    }
  }

  void abi(const variant::Features& features) {
    const auto it = features.find("torch");
    if (it == features.end()) return;
    for (const auto& req : m_l.reqs) {
      if (req.normalized != "torch" || !req.error.empty() || req.extra_only || req.specifier.empty()) continue;
      for (const auto& v : it->second) {
        // abi_dependency :: torch :: 2.10 means ==2.10.*: some release of that line must satisfy the pin.
        bool admitted = false;
        for (int patch = 0; patch <= 30 && !admitted; ++patch) {
          const std::string probe = std::count(v.begin(), v.end(), '.') >= 2 ? v : v + "." + std::to_string(patch);
          admitted = wheel::version_in(req.specifier, probe).value_or(true);
        }
        if (admitted) continue;
        m_l.add(claim(Severity::Error, variant::property_text("abi_dependency", "torch", v))
                    .library(m_label)
                    .explain(fmt::format(
                        "it declares it is built against torch {} (=={}.*), but its Requires-Dist "
                        "{} admits no such torch: installed as declared, its C++ symbols meet another torch",
                        v, v, req.text))
                    .fix("make the property and the pin name the same torch"));
      }
    }
  }

  Lint& m_l;
  const variant::Declared& m_d;
  std::string m_label;
};

}  // namespace

void check_variant(Lint& l) {
  const auto d = variant::declared(l.w);
  if (!d) return;
  VariantLint(l, *d).run();
}

}  // namespace wheelcheck::lint::detail
