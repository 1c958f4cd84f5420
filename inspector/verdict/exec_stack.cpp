// Executable stacks against the image's glibc (see exec_stack.hpp). glibc's _dl_map_object_from_fd
// (its elf/dl-load) takes PT_GNU_STACK's flags, or DEFAULT_STACK_PERMS without one; when they hold PF_X and
// the process's stack is not executable yet, glibc 2.41 and later fail a dlopen with EINVAL ("cannot enable
// executable stack as shared object requires"), where older ones made the stacks executable. A load at a
// program's start still makes it executable. Debian 13's 2.41 has the tunable glibc.rtld.execstack=2
// that lets a dlopen have it.
#include "inspector/verdict/exec_stack.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "wheelcheck/checks.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::verdict {

namespace {

// The loader's own words (glibc 2.41, Debian 13; dlerror() prefixes the file's path).
constexpr const char* k_exec_stack_refusal =
    "cannot enable executable stack as shared object requires: Invalid argument";

// MIPS is not judged: its toolchains have long marked code RWE, and its glibc makes every stack executable where
// the kernel does not announce a non-executable one (AT_FLAGS; kernels before 4.8 emulate FPU branches on the
// stack), so whether a dlopen is refused depends on the runner's kernel.
constexpr std::uint16_t k_exec_stack_em_mips = 8;

bool asks_for_exec_stack(const elf::Binary& b) {
  return b.type == elf::FileType::Shared && !resolve::is_program(b) && b.machine != k_exec_stack_em_mips &&
         b.executable_stack();
}

std::string exec_stack_evidence(const elf::Binary& b) {
  return b.gnu_stack ? fmt::format("PT_GNU_STACK of the member: p_flags {:#x} ({})", *b.gnu_stack,
                                   (*b.gnu_stack & 1U) != 0 ? "PF_X set" : "PF_X clear")
                     : "no PT_GNU_STACK in the member's program headers: glibc's DEFAULT_STACK_PERMS for " +
                           elf::machine_name(b.machine, b.elf_class, b.endian, b.e_flags) + " holds PF_X";
}

std::string exec_stack_fix() {
  return "link it with -Wl,-z,noexecstack (an assembly source without a .note.GNU-stack section asks for it), or "
         "clear the flag in the built file (patchelf --clear-execstack FILE); with glibc 2.41 a process may allow "
         "it with GLIBC_TUNABLES=glibc.rtld.execstack=2 (Debian 13's glibc has it)";
}

std::string exec_stack_fact_words(const image::Fact& fact, const image::Image& image) {
  const std::string& where = fact.layer.empty() ? image.name : fact.layer;
  std::string s = image::origin_name(fact.origin) + (where.empty() ? "" : " in " + where);
  if (!fact.note.empty()) s += ": " + fact.note;
  return s;
}

}  // namespace

std::string exec_stack_words(const elf::Binary& b) {
  if (!b.gnu_stack) {
    const std::string machine = elf::machine_name(b.machine, b.elf_class, b.endian, b.e_flags);
    return b.executable_stack() ? "no PT_GNU_STACK (an executable stack on " + machine + ")"
                                : "no PT_GNU_STACK (a non-executable stack on " + machine + ")";
  }
  std::string rwe;
  rwe += (*b.gnu_stack & 4U) != 0 ? "R" : "";
  rwe += (*b.gnu_stack & 2U) != 0 ? "W" : "";
  rwe += (*b.gnu_stack & 1U) != 0 ? "E" : "";
  return "PT_GNU_STACK " + (rwe.empty() ? std::string("with no flags") : rwe);
}

std::vector<Finding> exec_stack_findings(const resolve::Space& space, const image::Image& image,
                                         const std::vector<const resolve::Object*>& roots) {
  std::vector<const resolve::Object*> asking;
  const std::string image_arch = image.arch.known() ? wheel::normalize_arch(*image.arch.value) : "";
  for (const resolve::Object* o : space.wheel_members()) {
    if (o->binary == nullptr || !asks_for_exec_stack(*o->binary)) continue;
    // The loader refuses a member for another machine at its ELF header (wrong-arch says so).
    if (!image_arch.empty() && !o->machine.empty() && wheel::normalize_arch(o->machine) != image_arch) continue;
    asking.push_back(o);
  }
  if (asking.empty()) return {};
  // musl has no PT_GNU_STACK handling: it never changes the stack's protection for a library.
  if (image.libc_kind.known() && ascii_lower(*image.libc_kind.value) != "glibc") return {};

  // Which roots map each asking member by dlopen: Python's import of an extension module and a library loaded
  // on its own are dlopens; a program maps its DT_NEEDED as it starts.
  std::vector<std::vector<std::string>> by_dlopen(asking.size()), by_program(asking.size());
  for (const resolve::Object* root : roots) {
    if (root->binary == nullptr) continue;
    const resolve::Load load = resolve::load(space, *root);
    for (std::size_t i = 0; i < asking.size(); ++i) {
      const bool maps = root == asking[i] || std::any_of(load.needs.begin(), load.needs.end(),
                                                         [&](const resolve::Need& n) { return n.found == asking[i]; });
      if (maps) (load.program ? by_program : by_dlopen)[i].push_back(root->member);
    }
  }

  const image::Fact& v = image.libc_version;
  const std::optional<int> cmp = v.known() ? compare_dotted(trim(*v.value), k_exec_stack_refused_from) : std::nullopt;
  std::vector<Finding> out;
  for (std::size_t i = 0; i < asking.size(); ++i) {
    const elf::Binary& b = *asking[i]->binary;
    const std::string what = asking[i]->member + " asks for an executable stack (" + exec_stack_words(b) + ")";
    const std::string refusal =
        fmt::format("glibc {} and later refuse to dlopen it (\"{}\")", k_exec_stack_refused_from, k_exec_stack_refusal);
    const std::string glibc_evidence =
        v.known() ? "image glibc " + *v.value + " (" + exec_stack_fact_words(v, image) + ")"
                  : "image glibc version " +
                        std::string(v.set ? "unknown (" + exec_stack_fact_words(v, image) + ")" : "not stated");
    Draft d = make(FindingKind::ExecStack, Severity::Error);
    d.member(asking[i]->member).version(exec_stack_words(b)).evidence(exec_stack_evidence(b)).evidence(glibc_evidence);
    if (by_dlopen[i].empty() && !by_program[i].empty()) {
      d.severity(Severity::Info)
          .explain(what + ": only a program's start loads it (" + join(by_program[i], ", ") +
                   "), which still makes the stack executable; " + refusal + ".");
    } else if (!v.known() || !cmp) {
      const std::string why =
          !v.known() ? (v.set ? "the image's glibc version is unknown" + (v.note.empty() ? "" : " (" + v.note + ")")
                              : std::string("the image's glibc version is not stated"))
                     : "the image's glibc version '" + *v.value + "' cannot be read";
      d.severity(Severity::Condition)
          .explain(what + ": " + refusal + ", older ones load it; " + why +
                   ": state it in the image's description (libc.version) or with --assume libc_version=VERSION.")
          .fix(
              "state the image's glibc version (libc.version in its description, or --assume libc_version=VERSION); "
              "or " +
              exec_stack_fix())
          .roots(by_dlopen[i]);
    } else if (*cmp >= 0) {
      d.explain(fmt::format("{}: the image's glibc {} refuses to dlopen it: \"{}\", so {}.", what, *v.value,
                            k_exec_stack_refusal,
                            asking[i]->python_extension ? "its import fails (ImportError)"
                            : by_dlopen[i].empty()
                                ? std::string("a dlopen of it fails")
                                : "every load that reaches it fails (" + join(by_dlopen[i], ", ") + ")"))
          .fix(exec_stack_fix())
          .roots(by_dlopen[i]);
    } else {
      d.severity(Severity::Warning)
          .explain(fmt::format("{}: the image's glibc {} loads it and makes the stack of every thread executable; "
                               "hosts hardened with SELinux (execmem and execstack denied) refuse it, and {}.",
                               what, *v.value, refusal))
          .fix(exec_stack_fix())
          .roots(by_dlopen[i]);
    }
    out.push_back(d);
  }
  return out;
}

std::vector<Finding> exec_stack_lint(const WheelProfile& wheel) {
  std::vector<Finding> out;
  for (const auto& m : wheel.members) {
    if (!m.elf || !asks_for_exec_stack(*m.elf)) continue;
    out.push_back(
        make(FindingKind::ExecStack, Severity::Warning)
            .member(m.path)
            .version(exec_stack_words(*m.elf))
            .explain(fmt::format("{} asks for an executable stack ({}): glibc {} and later (Debian 13's, for "
                                 "one) refuse to dlopen it (\"{}\"), so the import that loads it fails "
                                 "there; older ones make the stack of every thread executable.",
                                 m.path, exec_stack_words(*m.elf), k_exec_stack_refused_from, k_exec_stack_refusal))
            .fix(exec_stack_fix())
            .evidence(exec_stack_evidence(*m.elf)));
  }
  return out;
}

}  // namespace wheelcheck::verdict
