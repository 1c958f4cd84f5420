// The platform tag a wheel is consistent with, computed as auditwheel computes it (its wheel_abi.py),
// from the wheel's profile alone:
//
//   machine      the first ELF member's e_machine (a member for another machine is a reason of its own);
//   libc         glibc, musl or Android: the members' NEEDED and PT_INTERP (libc.so.6, libc.musl-*, the
//                Android linker), else the extension modules' suffixes (.cpython-312-x86_64-linux-musl.so),
//                else the wheel's own platform tag, else glibc (said so);
//   versions     every DT_VERNEED entry of every member, family by family (GLIBC, GLIBCXX, CXXABI, GCC,
//                ZLIB, ...): a policy holds when each family it lists allows every version needed;
//   libraries    each root (an extension module, or a library no other member needs) is loaded as glibc's
//                loader would with only the wheel installed: a needed library found nowhere in the wheel
//                and not on the policy's list is external;
//   blacklist    a root that needs a listed library and leaves one of its listed symbols undefined;
//   UCS2, PyFPE  a Python 2 extension using PyUnicodeUCS2_* symbols, or any extension using PyFPE_jbuf;
//   ISA level    x86-64 code that needs x86-64-v2 or newer (GNU_PROPERTY_X86_ISA_1_NEEDED);
//   kernel       a statically linked member (no PT_INTERP, no DT_NEEDED) carries its own glibc, configured
//                for the oldest kernel its NT_GNU_ABI_TAG note names: a policy holds when the kernel of
//                the systems it covers is at least that one (the table at kernel_floor below; auditwheel
//                has no such rule: a wheel-only analysis adds it because such a program fails at start
//                with "FATAL: kernel too old" where the kernel is older).
//
// Each rule's ceiling is the most compatible policy it allows; consistent_with is the least of them.
// auditwheel additionally reads the versions of external libraries it finds on its own host; a
// wheel-only analysis cannot, and does not need to (an external library already makes it linux_<arch>).
#include <algorithm>
#include <array>
#include <set>

#include <fmt/format.h>

#include "wheelcheck/policy.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::policy {

std::string rule_name(Rule rule) {
  switch (rule) {
    case Rule::Machine: return "machine";
    case Rule::Libc: return "libc";
    case Rule::ApiLevel: return "api-level";
    case Rule::SymbolVersion: return "symbol-version";
    case Rule::Library: return "library";
    case Rule::Blacklist: return "blacklist";
    case Rule::Ucs2: return "ucs2";
    case Rule::PyFpe: return "pyfpe";
    case Rule::IsaLevel: return "isa-level";
    case Rule::Kernel: return "kernel";
  }
  return "machine";
}

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The loader itself is never a dependency a policy judges (auditwheel leaves it out the same way).
bool is_loader(const std::string& soname) {
  return starts_with(soname, "ld-linux") || soname == "ld64.so.1" || soname == "ld64.so.2" ||
         starts_with(soname, "ld-musl");
}

// The platform tag spelling of an ELF machine no policy knows: armel is armv5l.
std::string linux_tag(const std::string& machine, const std::string& arch) {
  if (!arch.empty()) return "linux_" + arch;
  if (machine == "armel") return "linux_armv5l";
  return "linux_" + machine;
}

// auditwheel's elf_is_python_extension: a defined function named after the file's module.
int python_major(const MemberProfile& m) {
  const std::string name = base_name(m.path);
  const std::string module = name.substr(0, name.find('.'));
  const std::string py3 = "PyInit_" + module, py2 = "init" + module, pypy = "_cffi_pypyinit_" + module;
  for (const auto& s : m.elf->symbols) {
    if (!s.defined || s.type != elf::SymbolType::Func) continue;
    if (s.name == py3) return 3;
    if (s.name == py2 || s.name == pypy) return 2;
  }
  return 0;
}

struct LibcGuess {
  Libc libc = Libc::Glibc;
  std::string evidence;
};

LibcGuess detect_libc(const WheelProfile& wheel, const std::vector<const MemberProfile*>& elfs) {
  bool bare_libc = false;  // NEEDED libc.so: musl's soname, and Android's
  std::string bare_member;
  for (const auto* m : elfs) {
    const auto& e = *m->elf;
    if (e.interpreter.find("ld-musl") != std::string::npos)
      return {Libc::Musl, "the interpreter " + e.interpreter + " of " + m->path};
    if (starts_with(e.interpreter, "/system/bin/linker"))
      return {Libc::Android, "the interpreter " + e.interpreter + " of " + m->path};
    for (const auto& n : e.needed) {
      if (starts_with(n, "libc.musl-")) return {Libc::Musl, "NEEDED " + n + " of " + m->path};
      if (n == "libc.so.6") return {Libc::Glibc, "NEEDED libc.so.6 of " + m->path};
      if (n == "libc.so" && !bare_libc) {
        bare_libc = true;
        bare_member = m->path;
      }
    }
    for (const auto& vn : e.version_needs) {
      for (const auto& v : vn.versions) {
        if (starts_with(v.name, "GLIBC_")) return {Libc::Glibc, v.name + " needed by " + m->path};
      }
    }
  }
  // CPython imports only modules with its own suffix: -linux-gnu, -linux-musl, -linux-android.
  for (const auto* m : elfs) {
    const std::string name = base_name(m->path);
    if (name.find("-linux-musl") != std::string::npos) return {Libc::Musl, "the extension suffix of " + m->path};
    if (name.find("-linux-android") != std::string::npos) return {Libc::Android, "the extension suffix of " + m->path};
    if (name.find("-linux-gnu") != std::string::npos) return {Libc::Glibc, "the extension suffix of " + m->path};
  }
  for (const auto& t : wheel.filename.tags) {
    if (starts_with(t.platform, "android_")) return {Libc::Android, "the wheel's tag " + t.platform};
  }
  if (bare_libc) return {Libc::Musl, "NEEDED libc.so (musl's soname) of " + bare_member};
  for (const auto& t : wheel.filename.tags) {
    if (starts_with(t.platform, "musllinux_")) return {Libc::Musl, "the wheel's tag " + t.platform};
    if (starts_with(t.platform, "manylinux")) return {Libc::Glibc, "the wheel's tag " + t.platform};
  }
  return {Libc::Glibc, "assumed: no member names its C library"};
}

// The kernel the systems of a glibc policy run, for the kernel rule. The three legacy policies name a
// reference distribution and so a kernel; PEP 600 defines the perennial ones by glibc alone, and their
// build images are the closest thing to a reference:
//   manylinux_2_5   manylinux1      CentOS 5     Linux 2.6.18   PEP 513
//   manylinux_2_12  manylinux2010   CentOS 6     Linux 2.6.32   PEP 571
//   manylinux_2_17  manylinux2014   CentOS 7     Linux 3.10     PEP 599
//   manylinux_2_24                  Debian 9     Linux 4.9      PEP 600; pypa's manylinux_2_24 image
//   manylinux_2_28                  AlmaLinux 8  Linux 4.18     PEP 600; pypa's manylinux_2_28 image
// A policy between two rows takes the older row's kernel (manylinux_2_26 and _2_27: Debian 9's 4.9; a
// system with glibc 2.26 or newer runs Linux 3.2 at least, which glibc 2.26 itself requires, so any note
// up to 3.2 holds there either way). No kernel is published for a policy newer than manylinux_2_28: it
// takes AlmaLinux 8's 4.18 and says so (`published` false), so a note above 4.18 is judged against a
// floor nobody promised, not waved through.
struct KernelFloor {
  std::array<std::uint32_t, 3> kernel{};
  std::string reference;  // "CentOS 7 (manylinux2014, PEP 599)"
  bool published = false;
};

std::optional<KernelFloor> kernel_floor(const Policy& p) {
  struct Row {
    unsigned glibc_minor;
    std::array<std::uint32_t, 3> kernel;
    const char* reference;
  };
  static constexpr Row k_rows[] = {
      {5, {2, 6, 18}, "CentOS 5 (manylinux1, PEP 513)"},
      {12, {2, 6, 32}, "CentOS 6 (manylinux2010, PEP 571)"},
      {17, {3, 10, 0}, "CentOS 7 (manylinux2014, PEP 599)"},
      {24, {4, 9, 0}, "Debian 9, the manylinux_2_24 image (PEP 600)"},
      {28, {4, 18, 0}, "AlmaLinux 8, the manylinux_2_28 image (PEP 600)"},
  };
  if (p.libc != Libc::Glibc) return std::nullopt;
  const auto parts = split(p.libc_version(), ".", true);
  if (parts.size() != 2 || parts[0] != "2") return std::nullopt;
  unsigned minor = 0;
  for (const char ch : parts[1]) {
    if (ch < '0' || ch > '9' || minor > 1000) return std::nullopt;
    minor = minor * 10 + static_cast<unsigned>(ch - '0');
  }
  const Row* row = nullptr;
  for (const auto& r : k_rows) {
    if (r.glibc_minor <= minor) row = &r;
  }
  if (row == nullptr) return std::nullopt;
  return KernelFloor{row->kernel, row->reference, row->glibc_minor == minor};
}

std::string kernel_text(const std::array<std::uint32_t, 3>& k) {
  return k[2] == 0 ? fmt::format("Linux {}.{}", k[0], k[1]) : fmt::format("Linux {}.{}.{}", k[0], k[1], k[2]);
}

// A family's versions: "GLIBC_2.29" -> ("GLIBC", "2.29"), as auditwheel splits them (at the first '_').
std::pair<std::string, std::string> split_version(const std::string& v) {
  const auto u = v.find('_');
  if (u == std::string::npos) return {v, ""};
  return {v.substr(0, u), v.substr(u + 1)};
}

// One reason of consistent_with (Analyzer::add fills in the ceiling's tag).
Constraint policy_reason(Rule rule, std::string member, std::string library, std::string version,
                         std::vector<std::string> symbols, std::string ceiling, int ceiling_priority,
                         std::string detail) {
  Constraint k;
  k.rule = rule;
  k.member = std::move(member);
  k.library = std::move(library);
  k.version = std::move(version);
  k.symbols = std::move(symbols);
  k.ceiling = std::move(ceiling);
  k.ceiling_priority = ceiling_priority;
  k.detail = std::move(detail);
  return k;
}

Constraint not_judged_by_auditwheel(Constraint k) {
  k.auditwheel_judges = false;
  return k;
}

class Analyzer {
 public:
  Analyzer(const WheelProfile& wheel, const Policies& policies, const std::vector<DependencyLibrary>& dependencies)
      : m_wheel(wheel), m_policies(policies), m_dependencies(dependencies) {}

  Consistency run() {
    Consistency c;
    for (const auto& m : m_wheel.members) {
      if (!m.elf) continue;
      m_elfs.push_back(&m);
      m_python[&m] = python_major(m);
    }
    if (m_elfs.empty()) {
      c.pure = m_wheel.members.empty();
      if (!c.pure) {
        c.constrained_by.push_back(policy_reason(Rule::Machine, "", "", "", {}, "", 0,
                                                 "no ELF member could be read: its machine and needs are unknown"));
      }
      return c;
    }
    const auto guess = detect_libc(m_wheel, m_elfs);
    c.libc = guess.libc;
    c.libc_evidence = guess.evidence;
    const auto& first = *m_elfs.front()->elf;
    c.machine = elf::machine_name(first.machine, first.elf_class, first.endian, first.e_flags);
    c.arch = policy_arch(c.machine);
    m_list = m_policies.of(c.libc, c.arch);
    m_linux = linux_tag(c.machine, c.arch);
    newest_versions(c);
    if (m_list.empty()) {
      c.tag = m_linux;
      c.constrained_by.push_back(policy_reason(
          Rule::Machine, m_elfs.front()->path, "", "", {}, m_linux, 0,
          fmt::format("no {} policy covers {} ({})", tag_prefix(c.libc), c.machine,
                      c.arch.empty() ? "an architecture auditwheel does not know" : "not in the policy data")));
      return c;
    }
    machines(c);
    musl_release(c);
    api_level(c);
    versions(c);
    roots();
    libraries(c);
    blacklist(c);
    python_abi(c);
    isa(c);
    kernel(c);
    int overall = m_list.front()->priority;
    for (int p : m_rule_priority) overall = std::min(overall, p);
    c.priority = overall;
    c.tag = tag_of(overall);
    int given = m_list.front()->priority;  // the same, with the declared dependencies' libraries installed
    for (int p : m_rule_priority_given) given = std::min(given, p);
    c.priority_with_dependencies = given;
    c.tag_with_dependencies = tag_of(given);
    std::stable_sort(c.constrained_by.begin(), c.constrained_by.end(),
                     [](const Constraint& a, const Constraint& b) { return a.ceiling_priority < b.ceiling_priority; });
    return c;
  }

 private:
  std::string tag_of(int priority) const {
    for (const Policy* p : m_list) {
      if (p->priority == priority) return p->tag();
    }
    return m_linux;
  }

  // The most compatible policy for which `allows` holds; 0 (linux) when none does.
  template <class F>
  int ceiling(F allows) const {
    for (const Policy* p : m_list) {
      if (allows(*p)) return p->priority;
    }
    return 0;
  }

  void add(Consistency& c, Constraint k) {
    k.ceiling = tag_of(k.ceiling_priority);
    c.constrained_by.push_back(std::move(k));
  }

  // A rule's ceiling: for the wheel alone (auditwheel's answer) and with its declared dependencies installed.
  void ceiling_of_rule(int alone, int given) {
    m_rule_priority.push_back(alone);
    m_rule_priority_given.push_back(given);
  }
  void ceiling_of_rule(int both) { ceiling_of_rule(both, both); }

  void newest_versions(Consistency& c) const {
    for (const auto* m : m_elfs) {
      for (const auto& vn : m->elf->version_needs) {
        if (is_loader(vn.file)) continue;
        for (const auto& v : vn.versions) {
          const auto [family, version] = split_version(v.name);
          if (version.empty() || !(version[0] >= '0' && version[0] <= '9')) continue;
          auto& cur = c.newest_versions[family];
          if (cur.empty() || dotted_less(cur, version)) cur = version;
        }
      }
    }
  }

  // musl has no symbol versions, so no binary says which musl release it needs. auditwheel judges against
  // the musl of the machine it runs on; wheelcheck assumes the newest musllinux policy of the data.
  void musl_release(Consistency& c) {
    if (c.libc != Libc::Musl || m_list.size() < 2) return;
    const Policy* newest = m_list.back();
    ceiling_of_rule(newest->priority);
    add(c, not_judged_by_auditwheel(policy_reason(
               Rule::Libc, "", "libc.so", "", {}, "", newest->priority,
               fmt::format("musl has no symbol versions, so the musl release a binary needs cannot be read from it: "
                           "built against musl {} is assumed (auditwheel assumes the musl it runs on)",
                           newest->libc_version()))));
  }

  // Android: the API level the wheel's tag names (auditwheel's answer too; the ELF notes are not read).
  void api_level(Consistency& c) {
    if (c.libc != Libc::Android) return;
    for (const auto& t : m_wheel.filename.tags) {
      const Policy* p = m_policies.find(t.platform);
      if (p == nullptr || p->libc != Libc::Android || p->arch != c.arch) continue;
      ceiling_of_rule(p->priority);
      if (p->priority < m_list.front()->priority) {
        add(c,
            policy_reason(Rule::ApiLevel, "", "", "", {}, "", p->priority,
                          fmt::format("the wheel's tag {} names Android API level {}", t.platform, p->libc_version())));
      }
      return;
    }
  }

  void machines(Consistency& c) {
    for (const auto* m : m_elfs) {
      const auto& e = *m->elf;
      const std::string machine = elf::machine_name(e.machine, e.elf_class, e.endian, e.e_flags);
      if (machine == c.machine) continue;
      ceiling_of_rule(0);
      add(c, policy_reason(
                 Rule::Machine, m->path, "", "", {}, "", 0,
                 fmt::format("{} is built for {}, the wheel's other members for {}", m->path, machine, c.machine)));
      return;
    }
  }

  // Symbol versions: auditwheel checks the families a policy lists; one it does not list is free.
  void versions(Consistency& c) {
    struct Need {
      std::string member, file;
    };
    std::map<std::string, Need> needs;  // "GLIBC_2.29" -> where
    for (const auto* m : m_elfs) {
      for (const auto& vn : m->elf->version_needs) {
        if (is_loader(vn.file)) continue;
        for (const auto& v : vn.versions) needs.emplace(v.name, Need{m->path, vn.file});
      }
    }
    auto allows = [](const Policy& p, const std::string& full) {
      const auto [family, version] = split_version(full);
      const auto it = p.symbol_versions.find(family);
      return it == p.symbol_versions.end() || it->second.count(version) != 0;
    };
    ceiling_of_rule(ceiling([&](const Policy& p) {
      return std::all_of(needs.begin(), needs.end(), [&](const auto& n) { return allows(p, n.first); });
    }));
    // One reason per library and family: the version with the lowest ceiling.
    std::map<std::pair<std::string, std::string>, Constraint> worst;
    for (const auto& [full, where] : needs) {
      const int top = m_list.front()->priority;
      const int ceil = ceiling([&, &full = full](const Policy& p) { return allows(p, full); });
      if (ceil >= top) continue;
      const auto key = std::pair{where.file, split_version(full).first};
      auto it = worst.find(key);
      if (it != worst.end() && (it->second.ceiling_priority < ceil ||
                                (it->second.ceiling_priority == ceil &&
                                 !dotted_less(split_version(it->second.version).second, split_version(full).second))))
        continue;
      Constraint k = policy_reason(Rule::SymbolVersion, where.member, where.file, full, {}, "", ceil, "");
      k.detail = ceil == 0
                     ? fmt::format("{} of {} is in no {} policy for {}", full, where.file, tag_prefix(c.libc), c.arch)
                     : fmt::format("{} of {} needs {}", full, where.file, tag_of(ceil));
      // The symbols behind the floor: what a maintainer must change (the first few, and how many).
      std::size_t total = 0;
      for (const auto* m : m_elfs) {
        if (m->path != where.member) continue;
        for (const auto& sym : m->elf->symbols) {
          if (sym.defined || sym.version != full || (!sym.version_file.empty() && sym.version_file != where.file))
            continue;
          if (k.symbols.size() < 5) k.symbols.push_back(sym.name);
          ++total;
        }
      }
      if (!k.symbols.empty()) {
        k.detail += fmt::format(" (needed by {}{})", join(k.symbols, ", "),
                                total > k.symbols.size() ? fmt::format(" and {} more", total - k.symbols.size()) : "");
      }
      worst[key] = std::move(k);
    }
    for (auto& [key, k] : worst) add(c, std::move(k));
  }

  // Roots as auditwheel takes them: extension modules, and libraries no other member needs.
  void roots() {
    std::set<std::string> needed;
    for (const auto* m : m_elfs) needed.insert(m->elf->needed.begin(), m->elf->needed.end());
    for (const auto* m : m_elfs) {
      if (m_python.at(m) != 0 || needed.count(base_name(m->path)) == 0) m_roots.push_back(m);
    }
  }

  void libraries(Consistency& c) {
    image::Image bare;
    bare.name = "the wheel alone";
    bare.arch = image::Fact::known_as(c.machine, "the wheel's machine", image::Origin::Derived);
    const resolve::Space space(bare, m_wheel, {});
    struct External {
      std::string member;                             // the first member whose need it is
      const DependencyLibrary* dependency = nullptr;  // every such need reaches the dependency's folder
      std::string folder;                             // that folder, for people
    };
    std::map<std::string, External> external;  // soname -> where
    for (const resolve::Object* o : space.wheel_members()) {
      const bool root =
          std::any_of(m_roots.begin(), m_roots.end(), [&](const MemberProfile* m) { return m->path == o->member; });
      if (!root || o->binary == nullptr) continue;
      const resolve::Load load = resolve::load(space, *o);
      for (const auto& need : load.needs) {
        if (need.found != nullptr || is_loader(need.name) || c_library_of(c.libc, need.name)) continue;
        if (c.libc == Libc::Android && starts_with(need.name, "libpython")) continue;  // the app provides it
        auto [it, first] = external.emplace(need.name, External{need.requester->member, nullptr, ""});
        std::string folder;
        const DependencyLibrary* dep = from_dependency(space, need, folder);
        if (first) {
          it->second = {need.requester->member, dep, folder};
        } else if (dep == nullptr) {
          it->second.dependency = nullptr;  // one member reaches it elsewhere: the wheel alone must provide it
        }
      }
    }
    auto allowed = [&](const Policy& p, bool given) {
      return std::all_of(external.begin(), external.end(), [&](const auto& e) {
        return p.whitelist.count(e.first) != 0 || (given && e.second.dependency != nullptr);
      });
    };
    ceiling_of_rule(ceiling([&](const Policy& p) { return allowed(p, false); }),
                    ceiling([&](const Policy& p) { return allowed(p, true); }));
    for (const auto& [soname, e] : external) {
      const int ceil = ceiling([&, &soname = soname](const Policy& p) { return p.whitelist.count(soname) != 0; });
      if (ceil >= m_list.front()->priority) continue;
      Constraint k = policy_reason(Rule::Library, e.member, soname, "", {}, "", ceil, "");
      k.detail = ceil == 0 ? fmt::format(
                                 "{} needs {}: not in the wheel, and no {} policy lets a wheel take it from "
                                 "the system",
                                 e.member, soname, tag_prefix(c.libc))
                           : fmt::format("{} needs {}: not in the wheel, and only {} and later allow it", e.member,
                                         soname, tag_of(ceil));
      if (e.dependency != nullptr) {
        k.dependency = e.dependency->distribution;
        k.auditwheel_judges = false;
        k.detail += fmt::format(
            "; but the wheel declares Requires-Dist: {}, which installs it in {}, where {}'s RPATH or RUNPATH looks: "
            "it comes with the wheel's own dependency (as `auditwheel repair --exclude {}` leaves it), so it is no "
            "reason against the tag",
            e.dependency->requirement.empty() ? e.dependency->distribution : e.dependency->requirement, e.folder,
            e.member, soname);
      }
      add(c, std::move(k));
    }
  }

  // The declared dependency that installs `need` where the requester's RPATH or RUNPATH looks: a folder of
  // site-packages that no member of the wheel is in (torch/lib/libtorch_cuda.so's $ORIGIN/../../nvidia/cuda_runtime/
  // lib is nvidia-cuda-runtime-cu12's). Null when none: its own folders, or one outside site-packages, do not count.
  const DependencyLibrary* from_dependency(const resolve::Space& space, const resolve::Need& need,
                                           std::string& folder) const {
    const auto dep = std::find_if(m_dependencies.begin(), m_dependencies.end(),
                                  [&](const DependencyLibrary& d) { return d.soname == need.name; });
    if (dep == m_dependencies.end()) return nullptr;
    const std::string site = space.site() + "/";
    const auto members = space.wheel_members();
    for (const auto& a : need.tried) {
      if (a.rule != resolve::How::Rpath && a.rule != resolve::How::Runpath) continue;
      const auto slash = a.path.rfind('/');
      if (slash == std::string::npos || a.path.rfind(site, 0) != 0 || slash + 1 <= site.size()) continue;
      const std::string dir = a.path.substr(0, slash + 1);
      if (std::any_of(members.begin(), members.end(),
                      [&](const resolve::Object* o) { return o->path.rfind(dir, 0) == 0; }))
        continue;
      folder = dir.substr(site.size(), dir.size() - site.size() - 1);
      return &*dep;
    }
    return nullptr;
  }

  void blacklist(Consistency& c) {
    // library -> (member, symbols it leaves undefined that some policy lists)
    std::map<std::string, std::pair<std::string, std::set<std::string>>> uses;
    for (const auto* m : m_roots) {
      // The symbols any policy lists for the libraries this root needs (libz's, usually none).
      std::map<std::string, std::string> listed;  // symbol -> library
      for (const auto& lib : m->elf->needed) {
        for (const Policy* p : m_list) {
          const auto it = p->blacklist.find(lib);
          if (it == p->blacklist.end()) continue;
          for (const auto& sym : it->second) listed.emplace(sym, lib);
        }
      }
      if (listed.empty()) continue;
      for (const auto& s : m->elf->symbols) {
        // A weak reference never stops the load (glibc's loader leaves it 0 where nothing defines it), and
        // auditwheel leaves weak references out of this rule the same way (elfutils.get_undefined_symbols):
        // Rust's std refers to __cxa_thread_atexit_impl so, and uses it only where the C library has it.
        if (s.defined || s.weak()) continue;
        const auto it = listed.find(s.name);
        if (it == listed.end()) continue;
        auto& u = uses[it->second];
        if (u.first.empty()) u.first = m->path;
        u.second.insert(s.name);
      }
    }
    auto hits = [&](const Policy& p, const std::string& lib, const std::set<std::string>& syms) {
      const auto it = p.blacklist.find(lib);
      if (it == p.blacklist.end()) return false;
      return std::any_of(syms.begin(), syms.end(), [&](const std::string& s) { return it->second.count(s) != 0; });
    };
    ceiling_of_rule(ceiling([&](const Policy& p) {
      return std::none_of(uses.begin(), uses.end(), [&](const auto& u) { return hits(p, u.first, u.second.second); });
    }));
    for (const auto& [lib, u] : uses) {
      const int ceil = ceiling([&, &lib = lib, &u = u](const Policy& p) { return !hits(p, lib, u.second); });
      if (ceil >= m_list.front()->priority) continue;
      Constraint k = policy_reason(Rule::Blacklist, u.first, lib, "", {u.second.begin(), u.second.end()}, "", ceil, "");
      k.detail = fmt::format(
          "{} uses {} of {}, internal symbols the policy forbids (another build of {} may lack "
          "them)",
          u.first, fmt::join(k.symbols, ", "), lib, lib);
      add(c, std::move(k));
    }
  }

  void python_abi(Consistency& c) {
    for (const auto* m : m_elfs) {
      const int major = m_python.at(m);
      if (major == 0) continue;
      std::vector<std::string> ucs2, fpe;
      for (const auto& s : m->elf->symbols) {
        if (s.defined) continue;
        if (major == 2 && starts_with(s.name, "PyUnicodeUCS2_")) ucs2.push_back(s.name);
        if (s.name == "PyFPE_jbuf" || s.name == "PyFPE_dummy" || s.name == "PyFPE_counter") fpe.push_back(s.name);
      }
      if (!ucs2.empty()) {
        ceiling_of_rule(0);
        if (ucs2.size() > 3) ucs2.resize(3);
        add(c, policy_reason(
                   Rule::Ucs2, m->path, "", "", ucs2, "", 0,
                   m->path + " is a Python 2 extension built for a narrow-Unicode (UCS2) interpreter, which no policy "
                             "accepts"));
      }
      if (!fpe.empty()) {
        ceiling_of_rule(0);
        add(c, policy_reason(Rule::PyFpe, m->path, "", "", fpe, "", 0,
                             m->path + " uses PyFPE_jbuf, which only interpreters built --with-fpectl export"));
      }
    }
  }

  void isa(Consistency& c) {
    if (c.arch != "x86_64") return;
    for (const auto* m : m_elfs) {
      if (!m->elf->x86_isa_level || *m->elf->x86_isa_level < 2) continue;
      ceiling_of_rule(0);
      add(c, policy_reason(
                 Rule::IsaLevel, m->path, "", fmt::format("x86-64-v{}", *m->elf->x86_isa_level), {}, "", 0,
                 fmt::format("{} needs x86-64-v{} (GNU_PROPERTY_X86_ISA_1_NEEDED); the policies assume the baseline "
                             "x86-64",
                             m->path, *m->elf->x86_isa_level)));
      return;
    }
  }

  // Statically linked members against the kernel of each policy's systems (kernel_floor). A policy
  // without a floor (none of glibc's) is not judged by this rule.
  void kernel(Consistency& c) {
    if (c.libc != Libc::Glibc) return;
    int overall = m_list.front()->priority;
    for (const auto* m : m_elfs) {
      const auto& e = *m->elf;
      if (!e.abi_tag || !e.abi_tag->linux_kernel() || !e.statically_linked()) continue;
      const std::array<std::uint32_t, 3> need{e.abi_tag->major, e.abi_tag->minor, e.abi_tag->patch};
      // The policies whose kernel is too old, most compatible first: each kernel is named once, by the policy it
      // is published for (manylinux_2_5 for CentOS 5's), so a manylinux1 claim reads manylinux1's own kernel.
      std::vector<std::pair<const Policy*, KernelFloor>> short_of;
      const int ceil = ceiling([&](const Policy& p) {
        const auto floor = kernel_floor(p);
        if (!floor || floor->kernel >= need) return true;
        short_of.emplace_back(&p, *floor);
        return false;
      });
      overall = std::min(overall, ceil);
      if (short_of.empty()) continue;
      std::vector<std::string> floors;
      std::set<std::string> named;  // references already said
      for (std::size_t i = 0; i < short_of.size(); ++i) {
        const auto& [p, floor] = short_of[i];
        const bool edge = i + 1 == short_of.size();  // the last policy the note rules out
        // A row's own policy comes first in it and names it; one between two rows only where it is the edge.
        if (!named.insert(floor.reference).second && !(edge && !floor.published)) continue;
        floors.push_back(fmt::format("{} is for {}, {}{}", p->tag(), kernel_text(floor.kernel), floor.reference,
                                     floor.published ? "" : ", assumed: no kernel is published for " + p->tag()));
      }
      const std::string needs = "Linux " + e.abi_tag->version();
      // auditwheel has no kernel rule
      Constraint k = not_judged_by_auditwheel(policy_reason(Rule::Kernel, m->path, "", needs, {}, "", ceil, ""));
      k.detail = fmt::format(
          "{} is statically linked, and the glibc inside it needs {} or newer (its NT_GNU_ABI_TAG note); {}", m->path,
          needs, join(floors, "; "));
      if (ceil == 0)
        k.detail += fmt::format(", and no {} policy is known to run a kernel that new", tag_prefix(c.libc));
      add(c, std::move(k));
    }
    ceiling_of_rule(overall);
  }

  const WheelProfile& m_wheel;
  const Policies& m_policies;
  std::vector<const MemberProfile*> m_elfs, m_roots;
  std::map<const MemberProfile*, int> m_python;  // 3, 2 (a Python 2 or PyPy cffi module) or 0
  std::vector<const Policy*> m_list;
  std::string m_linux;
  const std::vector<DependencyLibrary>& m_dependencies;
  std::vector<int> m_rule_priority, m_rule_priority_given;
};

}  // namespace

bool c_library_of(Libc libc, std::string_view soname) {
  switch (libc) {
    case Libc::Glibc: return starts_with(soname, "ld-linux") || soname == "ld64.so.1" || soname == "ld64.so.2";
    case Libc::Musl: return starts_with(soname, "ld-musl-") || starts_with(soname, "libc.musl-") || soname == "libc.so";
    case Libc::Android: return false;
  }
  return false;
}

Consistency analyze(const WheelProfile& wheel, const Policies& policies,
                    const std::vector<DependencyLibrary>& dependencies) {
  Consistency c = Analyzer(wheel, policies, dependencies).run();
  if (c.tag_with_dependencies.empty()) {  // an early answer (pure, no policy for the machine): no rule ran
    c.tag_with_dependencies = c.tag;
    c.priority_with_dependencies = c.priority;
  }
  return c;
}

bool claims_a_policy(const WheelProfile& wheel) {
  for (const auto& t : wheel.filename.tags) {
    for (const Libc libc : {Libc::Glibc, Libc::Musl, Libc::Android}) {
      if (starts_with(t.platform, tag_prefix(libc))) return true;
    }
  }
  return false;
}

std::optional<Overclaim> check_claim(const WheelProfile& wheel, const Consistency& c, const Policies& policies) {
  if (c.pure || c.tag.empty() || !claims_a_policy(wheel)) return std::nullopt;
  const Policy* best = nullptr;  // the most compatible claim for this machine and C library
  std::string other;             // a policy tag for another machine or C library
  for (const auto& t : wheel.filename.tags) {
    const Policy* p = policies.find(t.platform);
    if (p == nullptr) continue;
    if (p->libc != c.libc || p->arch != c.arch) {
      if (other.empty()) other = t.platform;
      continue;
    }
    if (best == nullptr || p->priority > best->priority) best = p;
  }
  Overclaim o;
  o.consistent_with = c.tag;
  if (best == nullptr) {
    if (other.empty()) return std::nullopt;
    o.tag = other;
    o.detail = fmt::format("tagged {}, but its binaries are {} ({}) code: they are consistent with {}", other,
                           c.machine, libc_name(c.libc), c.tag);
    return o;
  }
  // What the binaries prove: the musl release is an assumption, not a reason to doubt a claim, and a library a
  // declared dependency installs where the member looks for it comes with the wheel.
  int proven = best->priority;
  bool dependency = false;
  for (const auto& k : c.constrained_by) {
    dependency = dependency || !k.dependency.empty();
    if (k.rule != Rule::Libc && k.dependency.empty()) proven = std::min(proven, k.ceiling_priority);
  }
  if (best->priority <= proven) return std::nullopt;
  for (const auto& t : wheel.filename.tags) {
    if (policies.find(t.platform) == best) {
      o.tag = t.platform;
      break;
    }
  }
  for (const auto& k : c.constrained_by) {
    if (k.ceiling_priority >= best->priority || k.rule == Rule::Libc || !k.dependency.empty()) continue;
    o.because.push_back(&k);
    o.auditwheel_agrees = o.auditwheel_agrees && k.auditwheel_judges;
  }
  if (dependency) {
    o.consistent_with = c.tag_with_dependencies;
    o.auditwheel_agrees = false;  // auditwheel, with the wheel alone, names a less compatible tag
    o.detail = fmt::format(
        "tagged {}, but its binaries, with the libraries of its declared dependencies installed, are consistent "
        "only with {}",
        o.tag, c.tag_with_dependencies);
    return o;
  }
  o.detail = fmt::format("tagged {}, but its binaries are consistent only with {}", o.tag, c.tag);
  return o;
}

}  // namespace wheelcheck::policy
