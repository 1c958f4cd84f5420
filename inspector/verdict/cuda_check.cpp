// CUDA: the runtime major each member needs (libcudart.so.12) against the image's toolkit; the GPU code
// of each member (its fatbins) against the image's GPUs; and the NVIDIA driver all of it needs against
// the image's driver, with a condition wherever the image does not know its GPUs or its driver.
//
// The rules (which SASS runs on which GPU, which PTX the driver can JIT-compile) are NVIDIA's, in
// inspector/cuda/coverage.cpp; the numbers (the driver each toolkit and each PTX ISA needs, the GPUs a
// toolkit still supports) are NVIDIA's published tables, in inspector/cuda/tables.cpp and docs/cuda.md.
#include "inspector/verdict/cuda_check.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "wheelcheck/cuda.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::verdict {

namespace {

// The number a version part starts with ("12" of "12.4"), as std::stoi reads it; nullopt when it has none.
std::optional<int> cuda_check_int(const std::string& text) {
  try {
    return std::stoi(text);
  } catch (const std::logic_error&) {  // std::invalid_argument, std::out_of_range
    return std::nullopt;
  }
}

std::optional<int> major_of(const image::Fact& f) {
  if (!f.known()) return std::nullopt;
  return cuda_check_int(*f.value);
}

// An image without a toolkit is taken for NVIDIA's (a runtime the wheel brings, or --with, still needs
// NVIDIA's driver); a vendor's CUDA-compatible toolkit is not.
bool nvidia(const image::Image& image) {
  return !image.toolkit || image.toolkit->kind == image::ToolkitKind::Cuda;
}

std::optional<int> toolkit_major(const image::Image& image) {
  return image.toolkit ? major_of(image.toolkit->version) : std::nullopt;
}

// The image's GPUs ("sm_80,sm_90a" -> sm_80, sm_90): nullopt when unknown. A GPU is a compute
// capability; a suffix written in the description names the same GPU.
std::optional<std::vector<cuda::Arch>> image_gpus(const image::Image& image) {
  if (!image.gpu_archs.known()) return std::nullopt;
  std::vector<cuda::Arch> out;
  for (const auto& s : split(*image.gpu_archs.value, ",", false)) {
    if (auto a = cuda::parse_arch(trim(s))) {
      a->suffix = 0;
      out.push_back(*a);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// "sm_80 sm_86 + PTX compute_80": what a member carries, shortly.
std::string carries(const cuda::Fatbins& f) {
  std::vector<std::string> parts;
  for (const auto& a : f.sass()) parts.push_back(cuda::sm_name(a));
  std::string out = fmt::format("{}", fmt::join(parts, " "));
  parts.clear();
  for (const auto& a : f.ptx()) parts.push_back(cuda::compute_name(a));
  if (!parts.empty()) out += (out.empty() ? "PTX " : " + PTX ") + fmt::format("{}", fmt::join(parts, " "));
  return out.empty() ? "no GPU code" : out;
}

// A floor on the driver and what sets it.
struct Floor {
  std::string version;
  std::string because;
};

// The driver a PTX ISA needs to be JIT-compiled: that of the first toolkit that writes it.
std::optional<Floor> ptx_floor(const cuda::PtxIsa& isa) {
  const auto tk = cuda::ptx_isa_toolkit(isa);
  if (!tk) return std::nullopt;
  const auto d = cuda::toolkit_driver(tk->first, tk->second);
  if (!d) return std::nullopt;
  return Floor{*d, fmt::format("PTX ISA {} (CUDA {}.{})", isa.text(), tk->first, tk->second)};
}

std::string members_text(const std::vector<std::string>& members) {
  if (members.size() <= 3) return fmt::format("{}", fmt::join(members, ", "));
  return fmt::format("{}, {}, {} and {} more", members[0], members[1], members[2], members.size() - 3);
}

class CudaCheck {
 public:
  CudaCheck(const resolve::Space& space, const image::Image& image, const std::vector<Finding>& findings)
      : m_space(space), m_image(image), m_findings(findings), m_gpus(image_gpus(image)) {}

  CudaResult run() {
    if (!nvidia(m_image)) return {};  // a vendor's CUDA-compatible runtime has its own driver and GPUs
    runtime_floors();
    dropped_archs();
    for (const resolve::Object* o : m_space.wheel_members()) {
      if (o->binary == nullptr || o->gpu_code == nullptr) continue;
      built_by(*o, *o->gpu_code);
      member_code(*o, *o->gpu_code);
    }
    unknown_gpu_conditions();
    driver_need();
    return std::move(m_out);
  }

 private:
  // 1. The CUDA runtime each member needs, and the floor its major sets (minor version compatibility).
  void runtime_floors() {
    std::map<int, std::string> majors;  // CUDA major -> the member that needs it
    for (const resolve::Object* o : m_space.wheel_members()) {
      if (o->binary == nullptr) continue;
      for (const auto& n : o->needed) {
        if (auto m = cudart_major(n)) majors.emplace(*m, o->member);
        if (n == "libcuda.so.1") {
          if (auto tk = toolkit_major(m_image)) majors.emplace(*tk, o->member);
        }
      }
    }
    for (const auto& [major, member] : majors) {
      // A runtime that does not resolve is already an error; its driver is beside the point.
      const std::string soname = fmt::format("libcudart.so.{}", major);
      if (std::any_of(m_findings.begin(), m_findings.end(),
                      [&](const Finding& f) { return f.kind == FindingKind::MissingLibrary && f.library == soname; })) {
        continue;
      }
      const auto need = cuda::major_driver(major);
      if (!need) continue;
      add_floor({*need, fmt::format("the CUDA {} runtime ({} of {})", major, soname, member)}, member, soname,
                "CUDA minor version compatibility floors (NVIDIA's CUDA Toolkit release notes, docs/cuda.md)");
    }
  }

  // 1b. The toolkit that built a member's GPU code, read from the code itself: its cubins' format (1.8:
  // CUDA 13) and its PTX's ISA (9.0: CUDA 13.0) name the major, and code of a major runs under that
  // major's runtime, so on its driver floor, whichever runtime it is. NVIDIA's own libraries link the
  // runtime statically (cuBLAS: no libcudart.so.13 to read the major from); the static runtime carries no
  // version of its own, but the fatbins it registers do. A member that needs the same major's
  // libcudart.so.N has that floor from its runtime already (or the runtime's absence is the error).
  void built_by(const resolve::Object& o, const cuda::Fatbins& f) {
    // Each marker with the major it names; the newest major decides, and the markers that name it say why.
    std::vector<std::pair<int, std::string>> marks;
    if (f.newest_cubin) {
      if (const auto m = cuda::cubin_toolkit_major(*f.newest_cubin)) {
        marks.emplace_back(*m, "cubin format " + f.newest_cubin->text());
      }
    }
    if (const auto isa = f.newest_ptx_isa()) {
      if (const auto tk = cuda::ptx_isa_toolkit(*isa)) {
        marks.emplace_back(tk->first, fmt::format("PTX ISA {}: CUDA {}.{}", isa->text(), tk->first, tk->second));
      }
    }
    if (marks.empty()) return;
    const int major = std::max_element(marks.begin(), marks.end())->first;
    std::vector<std::string> shown;
    for (const auto& [m, text] : marks) {
      if (m == major) shown.push_back(text);
    }
    for (const auto& n : o.needed) {
      if (cudart_major(n) == major) return;
    }
    const auto need = cuda::major_driver(major);
    if (!need) return;
    // .nv_fatbin is registered by the runtime (__cudaRegisterFatBinary): a member that neither needs a
    // libcudart.so.N nor imports that function has the runtime linked into it.
    const bool imports_runtime =
        std::any_of(o.needed.begin(), o.needed.end(),
                    [](const std::string& n) { return cudart_major(n).has_value(); }) ||
        std::any_of(o.binary->symbols.begin(), o.binary->symbols.end(),
                    [](const elf::Symbol& s) { return !s.defined && s.name == "__cudaRegisterFatBinary"; });
    const std::string because =
        f.section_size != 0 && !imports_runtime
            ? fmt::format("the CUDA {0} runtime linked statically into {1}, whose GPU code CUDA {0} built ({2})", major,
                          o.member, fmt::join(shown, ", "))
            : fmt::format("the GPU code CUDA {} built in {} ({})", major, o.member, fmt::join(shown, ", "));
    add_floor({*need, because}, o.member, "",
              "the fatbins of " + o.member + "; CUDA minor version compatibility floors (docs/cuda.md)");
  }

  // 2. GPUs the image declares that its toolkit no longer builds for.
  void dropped_archs() {
    const auto tk = toolkit_major(m_image);
    if (!m_gpus || !tk) return;
    const auto oldest = cuda::oldest_supported_arch(*tk);
    if (!oldest) return;
    for (const auto& g : *m_gpus) {
      if (g.number() >= oldest->number()) continue;
      m_out.findings.push_back(
          make(FindingKind::GpuArchDropped, Severity::Warning)
              .version(cuda::sm_name(g))
              .explain(fmt::format("CUDA {} no longer supports {}: its nvcc cannot build for it and its libraries "
                                   "carry no code for it (the oldest it supports is {}).",
                                   *tk, cuda::sm_name(g), cuda::sm_name(*oldest)))
              .fix(fmt::format("keep these runners on an older CUDA major, or move them to {} or newer GPUs",
                               cuda::sm_name(*oldest)))
              .evidence("the toolkit's supported architectures (NVIDIA's release notes, docs/cuda.md)"));
    }
  }

  // 3. One member's GPU code against the image's GPUs, or remembered for the condition when they are
  // unknown; its PTX's driver floor where the driver must JIT-compile it.
  void member_code(const resolve::Object& o, const cuda::Fatbins& f) {
    if (!f.unread.empty()) {
      m_out.findings.push_back(make(FindingKind::FatbinUnread, Severity::Info)
                                   .member(o.member)
                                   .explain("its GPU code was not checked against the image's GPUs: " + f.unread + ".")
                                   .evidence("the fatbins of " + o.member));
      return;
    }
    if (f.variants.empty()) return;
    if (!m_gpus) {
      m_unknown[cuda::runs_on_text(f)].push_back(o.member);
      m_carried[cuda::runs_on_text(f)] = carries(f);
      // Without SASS every GPU JIT-compiles its PTX: the PTX's floor holds whatever the GPU.
      if (const auto isa = f.newest_ptx_isa()) {
        if (auto floor = ptx_floor(*isa)) {
          floor->because =
              fmt::format("the {} of {} (JIT-compiled on {})", floor->because, o.member,
                          f.sass().empty() ? "every GPU (it has no SASS)" : "a GPU its SASS does not cover");
          if (f.sass().empty()) {
            add_floor(*floor, o.member, "", "the fatbins of " + o.member);
          } else {
            m_conditional.push_back(*floor);
          }
        }
      }
      return;
    }
    std::map<cuda::PtxIsa, std::vector<std::string>> jit;  // PTX ISA -> the GPUs that JIT-compile it
    for (const auto& g : *m_gpus) {
      const auto c = cuda::coverage(f, g);
      if (!c.runs) {
        const bool stop = !c.explanation.empty() && c.explanation.back() == '.';
        // Code the library loads itself may lie in sections that were not looked through: then the
        // missing kernel image is a condition on that code, not a certainty.
        const bool partial = !f.embedded_unread.empty();
        const std::string consequence =
            partial ? fmt::format(
                          "Unless GPU code the library loads itself serves {} (its other sections were not "
                          "looked through: {}), the first launch fails with \"no kernel image is available "
                          "for execution on the device\".",
                          cuda::sm_name(g), f.embedded_unread)
                    : "The first launch fails with \"no kernel image is available for execution on the device\".";
        m_out.findings.push_back(make(FindingKind::GpuCoverage, partial ? Severity::Condition : Severity::Error)
                                     .member(o.member)
                                     .version(cuda::sm_name(g))
                                     .explain(c.explanation + (stop ? " " : ". ") + consequence)
                                     .fix(coverage_fix(g))
                                     .evidence("the fatbins of " + o.member + ": " + carries(f))
                                     .evidence("the image's GPUs: " + *m_image.gpu_archs.value));
        continue;
      }
      if (c.needs_jit && c.ptx_isa) jit[*c.ptx_isa].push_back(cuda::sm_name(g));
    }
    for (const auto& [isa, gpus] : jit) {
      if (auto floor = ptx_floor(isa)) {
        floor->because =
            fmt::format("the {} of {} (JIT-compiled for {})", floor->because, o.member, fmt::join(gpus, ", "));
        add_floor(*floor, o.member, "", "the fatbins of " + o.member);
      }
    }
  }

  // The build that would run on GPU g: a -gencode for it, unless the toolkit of the image (the runtime a build
  // for it loads) no longer compiles for g; then no build for this image can, and the fix is another major.
  std::string coverage_fix(const cuda::Arch& g) const {
    const auto n = g.number();
    const auto tk = toolkit_major(m_image);
    const auto oldest = tk ? cuda::oldest_supported_arch(*tk) : std::nullopt;
    if (oldest && n < oldest->number()) {
      return fmt::format(
          "no build for this image can: CUDA {} (its toolkit) no longer compiles for {} (the oldest it supports is "
          "{}); build with an older CUDA major (-gencode arch=compute_{},code=sm_{}) for an image of that major, "
          "or move the runners to {} or newer GPUs",
          *tk, cuda::sm_name(g), cuda::sm_name(*oldest), n, n, cuda::sm_name(*oldest));
    }
    return fmt::format(
        "a build with -gencode arch=compute_{0},code=sm_{0}, or with PTX (code=compute_XY for an XY at or below {0}) "
        "for the driver to JIT-compile",
        n);
  }

  // 4. With the GPUs unknown: one condition per distinct set of GPUs the code runs on.
  void unknown_gpu_conditions() {
    for (const auto& [runs_on, members] : m_unknown) {
      m_out.findings.push_back(
          make(FindingKind::GpuCoverage, Severity::Condition)
              .member(members.front())
              .version(m_carried[runs_on])
              .explain(fmt::format("holds only if the GPU is {}; the image's GPUs are unknown ({}). Members: {}.",
                                   runs_on, m_image.gpu_archs.note.empty() ? "not described" : m_image.gpu_archs.note,
                                   members_text(members)))
              .fix("check `nvidia-smi --query-gpu=compute_cap` on the runner, or describe gpu_archs in the image")
              .evidence("the fatbins of " + members.front()));
    }
  }

  void add_floor(const Floor& floor, const std::string& member, const std::string& library,
                 const std::string& evidence) {
    m_floors.push_back({floor, member, library, evidence});
  }

  // 5. The highest floor: the driver the wheel needs; an error against an older known driver, one
  // condition when the driver is unknown.
  void driver_need() {
    if (m_floors.empty()) return;
    std::size_t top = 0;
    for (std::size_t i = 1; i < m_floors.size(); ++i) {
      if (!cuda::driver_at_least(m_floors[top].floor.version, m_floors[i].floor.version)) top = i;
    }
    const auto& t = m_floors[top];
    DriverNeed need;
    need.version = t.floor.version;
    need.because = t.floor.because;
    const bool known = m_image.driver.known();
    if (known) {
      need.image_driver = *m_image.driver.value;
      need.satisfied = cuda::driver_at_least(need.image_driver, need.version);
    }
    for (std::size_t i = 0; i < m_floors.size(); ++i) {
      if (i != top)
        need.notes.push_back(fmt::format(">= {} for {}", m_floors[i].floor.version, m_floors[i].floor.because));
    }
    for (const auto& c : m_conditional) {
      if (!cuda::driver_at_least(need.version, c.version)) {
        need.notes.push_back(fmt::format(">= {} only for {}", c.version, c.because));
      }
    }
    if (const auto tk = m_image.toolkit ? m_image.toolkit->version.value : std::nullopt) {
      // A toolkit version that is not MAJOR.MINOR numbers (an odd image description) adds no note.
      const auto parts = split(*tk, ".", false);
      const auto major = parts.size() >= 2 ? cuda_check_int(parts[0]) : std::nullopt;
      const auto minor = parts.size() >= 2 ? cuda_check_int(parts[1]) : std::nullopt;
      if (major && minor) {
        if (const auto d = cuda::toolkit_driver(*major, *minor)) {
          need.notes.push_back(
              fmt::format("the image's CUDA {} toolkit itself ships with driver >= {} (its new "
                          "features and JIT of its own PTX need that one)",
                          *tk, *d));
        }
      }
    }
    // Every floor the image's driver does not meet is an error; an unknown driver, one condition.
    if (known) {
      for (const auto& f : m_floors) {
        if (cuda::driver_at_least(need.image_driver, f.floor.version)) continue;
        m_out.findings.push_back(
            make(FindingKind::DriverTooOld, Severity::Error)
                .member(f.member)
                .library(f.library)
                .version(f.floor.version)
                .candidates({need.image_driver})  // the image's driver: requirement() cites it, typed
                .explain(fmt::format("{} needs an NVIDIA driver >= {}; the image's driver is {}.", f.floor.because,
                                     f.floor.version, need.image_driver))
                .fix(fmt::format("a driver >= {} on the host, or a build for an older CUDA", f.floor.version))
                .evidence(f.evidence));
      }
    } else {
      m_out.findings.push_back(
          make(FindingKind::Driver, Severity::Condition)
              .member(t.member)
              .library(t.library)
              .version(need.version)
              .explain(fmt::format("needs an NVIDIA driver >= {} because of {}; the image's driver version is unknown "
                                   "({}).",
                                   need.version, need.because,
                                   m_image.driver.note.empty() ? "not described" : m_image.driver.note))
              .fix("check `nvidia-smi` on the runner, or describe the driver in the image")
              .evidence(t.evidence));
    }
    m_out.driver = std::move(need);
  }

  struct Placed {
    Floor floor;
    std::string member, library, evidence;
  };

  const resolve::Space& m_space;
  const image::Image& m_image;
  const std::vector<Finding>& m_findings;
  std::optional<std::vector<cuda::Arch>> m_gpus;
  std::vector<Placed> m_floors;
  std::vector<Floor> m_conditional;                           // PTX floors that hold only on some GPUs
  std::map<std::string, std::vector<std::string>> m_unknown;  // runs-on text -> members
  std::map<std::string, std::string> m_carried;               // runs-on text -> what those members carry
  CudaResult m_out;
};

}  // namespace

// The CUDA runtime major a soname names (libcudart.so.12 -> 12).
std::optional<int> cudart_major(const std::string& soname) {
  static const std::regex re(R"(libcudart\.so\.([0-9]+))");
  std::smatch m;
  if (!std::regex_match(soname, m, re)) return std::nullopt;
  return std::stoi(m[1]);
}

// " (libcudart.so.13)": the runtime sonames of a toolkit, without the driver's and the libraries'.
std::string cudart_list(const std::vector<std::string>& sonames) {
  std::vector<std::string> rt;
  for (const auto& s : sonames) {
    if (s.rfind("libcudart.so", 0) == 0) rt.push_back(s);
  }
  return rt.empty() ? "" : " (" + fmt::format("{}", fmt::join(rt, ", ")) + ")";
}

void explain_missing_cudart(Draft& f, const std::string& who, int major, const std::string& soname,
                            const image::Image& image, const std::string& wheel_version) {
  if (image.toolkit && image.toolkit->kind == image::ToolkitKind::Cuda) {
    const auto& tk = *image.toolkit;
    f.explain(fmt::format("{} is built for CUDA {} (needs {}); the image has CUDA {}{}.", who, major, soname,
                          tk.version.text(), cudart_list(tk.runtime_sonames)));
    f.fix(
        fmt::format("use a build of this wheel for CUDA {}, or install the CUDA {} runtime (nvidia-cuda-runtime-cu{}) "
                    "beside it; otherwise keep this part from loading",
                    tk.version.text(), major, major));
  } else {
    f.explain(fmt::format("{} needs the CUDA {} runtime ({}), and the image has none.", who, major, soname));
  }
  const auto claim = wheel_version.empty() ? std::nullopt : toolkit::of_label(wheel_version);
  if (claim && claim->kind == image::ToolkitKind::Cuda && !claim->version.empty() &&
      claim->version.substr(0, claim->version.find('.')) != std::to_string(major)) {
    f.fix(
        fmt::format("the wheel's {} claims a CUDA {} build, but this member is a CUDA {} build: a defect of the "
                    "wheel itself (`wheelcheck lint` reports it as label-claim before upload), so no other build of "
                    "this version helps; install the CUDA {} runtime (nvidia-cuda-runtime-cu{}) beside it, or keep "
                    "this part from loading",
                    claim->because, claim->version, major, major, major));
  }
}

CudaResult cuda_check(const resolve::Space& space, const image::Image& image, const std::vector<Finding>& findings) {
  return CudaCheck(space, image, findings).run();
}

}  // namespace wheelcheck::verdict
