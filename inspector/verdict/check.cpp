// The check: a wheel's profile against an image, from tags to symbols, and the verdict.
//
//   1. Wheel-level: tags, Requires-Python, each member's machine (tags.cpp); RECORD and archive problems.
//   2. Every ELF member is a root the process may load (Python imports an extension module, a loader
//      dlopens a library): resolve its tree (resolve.cpp) and bind its wheel objects (bind.cpp).
//   3. Each failure becomes a finding on the object whose entry it is, once, whatever root reached it:
//      a missing library, a version the provider does not define, a symbol nobody defines (classified
//      by classify.cpp, unless the library that should define it is itself missing).
//   4. CUDA: the runtime major each member needs against the image's toolkit, and the driver that
//      runtime needs against the image's driver (a condition when the driver is unknown).
//   5. The verdict: any error -> incompatible; else any condition -> unknown; else compatible.
#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "wheelcheck/demangle.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

std::string severity_name(Severity s) {
  switch (s) {
    case Severity::Info: return "info";
    case Severity::Condition: return "condition";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "error";
}

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Compatible: return "compatible";
    case Verdict::Degraded: return "degraded";
    case Verdict::Incompatible: return "incompatible";
    case Verdict::Unknown: return "unknown";
  }
  return "unknown";
}

int exit_code(Verdict v) {
  switch (v) {
    case Verdict::Compatible: return 0;
    case Verdict::Incompatible: return 1;
    case Verdict::Degraded: return 3;
    case Verdict::Unknown: return 4;
  }
  return 4;
}

Verdict worst(Verdict a, Verdict b) {
  auto rank = [](Verdict v) {
    switch (v) {
      case Verdict::Incompatible: return 3;
      case Verdict::Unknown: return 2;
      case Verdict::Degraded: return 1;
      case Verdict::Compatible: return 0;
    }
    return 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

// NVIDIA's CUDA Toolkit release notes, "CUDA Toolkit and Minimum Required Driver Version for CUDA Minor
// Version Compatibility" (Table 2 of the CUDA 12 and 13 notes): a CUDA X.y runtime runs on any driver at
// or above the floor of its major.
std::string minimum_driver(int cuda_major) {
  switch (cuda_major) {
    case 11: return "450.80.02";
    case 12: return "525.60.13";
    case 13: return "580.65.06";
    default: return "";
  }
}

namespace {

using resolve::Object;

bool driver_older(const std::string& have, const std::string& need) {
  std::vector<long> a, b;
  for (const auto* s : {&have, &need}) {
    auto& out = s == &have ? a : b;
    std::size_t i = 0;
    while (i < s->size()) {
      long v = 0;
      while (i < s->size() && std::isdigit(static_cast<unsigned char>((*s)[i]))) v = v * 10 + ((*s)[i++] - '0');
      out.push_back(v);
      ++i;
    }
  }
  return a < b;
}

std::string object_name(const Object& o) {
  if (!o.member.empty()) return o.member;
  if (!o.path.empty()) return o.path;
  return o.soname;
}

// The CUDA runtime major a soname names (libcudart.so.12 -> 12).
std::optional<int> cudart_major(const std::string& soname) {
  static const std::regex re(R"(libcudart\.so\.([0-9]+))");
  std::smatch m;
  if (!std::regex_match(soname, m, re)) return std::nullopt;
  return std::stoi(m[1]);
}

std::optional<int> major_of(const image::Fact& f) {
  if (!f.known()) return std::nullopt;
  try {
    return std::stoi(*f.value);
  } catch (...) {
    return std::nullopt;
  }
}

std::string member_kind(const Object& o) {
  if (o.python_extension) return "extension";
  if (o.binary != nullptr && o.binary->type == 2) return "executable";
  return "library";
}

class Checker {
 public:
  Checker(const WheelProfile& wheel, const image::Image& image, const CheckOptions& options)
      : m_wheel(wheel), m_image(image), m_space(image, wheel, options.with, options.memory_tables) {}

  Report run() {
    Report r;
    r.wheel = m_wheel.filename.filename;
    r.wheel_sha256 = m_wheel.sha256;
    r.image = m_image.name;
    r.image_summary = m_image.summary;
    for (auto& f : check_wheel_tags(m_wheel, m_image)) m_findings.push_back(std::move(f));
    archive_findings();
    isa_findings();
    r.notes.push_back("installed into " + m_space.site() +
                      (m_image.pythons.empty() ? " (the image describes no Python: a stand-in folder)" : ""));
    for (const auto& n : m_space.preloaded_notes()) r.notes.push_back(n);
    // Roots: what Python imports (extension modules), executables, and libraries no other member
    // needs (a loader may dlopen them: FlagTree's libflagcx.so). A library another member needs is
    // checked as that member loads it, with that member's RPATH and scope.
    std::set<std::string> needed_by_members;
    for (const auto& o : m_space.objects()) {
      if (o->binary == nullptr) continue;
      for (const auto& n : o->needed) needed_by_members.insert(n);
    }
    for (const Object* root : m_space.wheel_members()) {
      if (root->binary == nullptr || (root->binary->type != 3 && root->binary->type != 2)) continue;
      const bool needed = needed_by_members.count(root->soname) != 0 ||
                          needed_by_members.count(root->path.substr(root->path.find_last_of('/') + 1)) != 0;
      if (needed && !root->python_extension && root->binary->type == 3) continue;
      r.members.push_back(check_root(*root));
    }
    cuda_findings();
    // Members with an error cannot load.
    for (auto& m : r.members) {
      for (const auto& f : m_findings) {
        if (f.severity == Severity::Error && f.member == m.path) m.loads = false;
      }
    }
    // Worst first, then by member.
    std::stable_sort(m_findings.begin(), m_findings.end(), [](const Finding& a, const Finding& b) {
      if (a.severity != b.severity) return static_cast<int>(a.severity) > static_cast<int>(b.severity);
      return a.member < b.member;
    });
    r.findings = std::move(m_findings);
    bool error = false, condition = false;
    std::set<std::string> seen;
    for (const auto& f : r.findings) {
      error = error || f.severity == Severity::Error;
      if (f.severity == Severity::Condition) {
        condition = true;
        if (seen.insert(f.explanation).second) r.conditions.push_back(f.explanation);
      }
    }
    r.verdict = error ? Verdict::Incompatible : condition ? Verdict::Unknown : Verdict::Compatible;
    return r;
  }

 private:
  void archive_findings() {
    for (const auto& p : m_wheel.problems) {
      m_findings.push_back({"archive",
                            Severity::Error,
                            p.path,
                            "",
                            "",
                            "",
                            "",
                            "",
                            "the wheel's archive: " + p.detail + " (" + p.kind + ")",
                            "rebuild or re-download the wheel",
                            {},
                            {}});
    }
    for (const auto& p : m_wheel.record_problems) {
      m_findings.push_back(
          {"record",
           Severity::Warning,
           p.path,
           "",
           "",
           "",
           "",
           "",
           "RECORD: " + p.detail + " (" + p.kind + "); pip installs it, but the wheel is not what its RECORD says",
           "",
           {},
           {}});
    }
    for (const auto& m : m_wheel.members) {
      if (!m.elf) {
        m_findings.push_back({"unreadable-member",
                              Severity::Error,
                              m.path,
                              "",
                              "",
                              "",
                              "",
                              "",
                              "this member could not be read as ELF: " + m.error,
                              "",
                              {},
                              {}});
      }
    }
  }

  // x86-64-v3 and v4 code needs a CPU the image cannot describe: a condition on the runner.
  void isa_findings() {
    for (const auto& m : m_wheel.members) {
      if (!m.elf || !m.elf->x86_isa_level || *m.elf->x86_isa_level < 2) continue;
      const int level = *m.elf->x86_isa_level;
      const char* what = level == 2 ? "SSE4.2 and POPCNT" : level == 3 ? "AVX2, BMI2 and FMA" : "AVX-512";
      m_findings.push_back({"isa-level",
                            level >= 3 ? Severity::Condition : Severity::Info,
                            m.path,
                            "",
                            "",
                            "",
                            fmt::format("x86-64-v{}", level),
                            "",
                            fmt::format("built for x86-64-v{}: runs only on CPUs with {}.", level, what),
                            level >= 3 ? "check the runners' CPUs, or use a baseline x86-64 build" : "",
                            {},
                            {"GNU_PROPERTY_X86_ISA_1_NEEDED note of the member"}});
    }
  }

  MemberReport check_root(const Object& root) {
    MemberReport mr;
    mr.path = root.member;
    mr.kind = member_kind(root);
    const resolve::Load load = resolve::load(m_space, root);
    std::map<const Object*, std::vector<std::string>> missing_by_object;
    for (const auto& need : load.needs) {
      NeedReport nr;
      nr.requester = object_name(*need.requester);
      nr.name = need.name;
      nr.found = need.found != nullptr;
      nr.rule = need.rule;
      nr.where = need.where;
      nr.tried = need.tried;
      mr.needs.push_back(nr);
      if (need.found == nullptr) {
        missing_by_object[need.requester].push_back(need.name);
        missing_library(root, need);
      } else if (need.rule == "declared") {
        note_declared(root, need);
      }
    }
    const resolve::BindResult b = resolve::bind(m_space, load);
    mr.symbols_bound = b.bound;
    mr.symbols_interpreter = b.interpreter;
    mr.symbols_unbound = b.unbound.size();
    std::set<std::tuple<const Object*, std::string, std::string>> bad_versions;
    for (const auto& mv : b.versions) {
      bad_versions.insert({mv.object, mv.file, mv.version});
      missing_version(mv);
    }
    // Group what the same cause explains.
    std::map<std::pair<const Object*, std::string>, std::size_t> library_missing_counts;
    for (const auto& u : b.unbound) {
      const elf::Symbol& s = *u.symbol;
      if (!s.version.empty() && bad_versions.count({u.object, s.version_file, s.version})) continue;
      const auto& missing = missing_by_object[u.object];
      std::string from;
      if (!s.version_file.empty() && std::find(missing.begin(), missing.end(), s.version_file) != missing.end()) {
        from = s.version_file;
      } else if (s.version_file.empty() && !missing.empty()) {
        from = missing.front();
      }
      if (!from.empty()) {
        ++library_missing_counts[{u.object, from}];
        library_missing_symbol(
            u, missing.size() == 1 || !s.version_file.empty() ? from : fmt::format("{}", fmt::join(missing, " or ")));
        continue;
      }
      unbound_symbol(load, u);
    }
    for (const auto& [key, count] : library_missing_counts) {
      for (auto& f : m_findings) {
        if (f.kind == "missing-library" && f.member == object_name(*key.first) && f.library == key.second) {
          f.explanation += fmt::format(" {} undefined symbol{} of this member would have come from it{}.", count,
                                       count == 1 ? "" : "s",
                                       missing_by_object[key.first].size() > 1 ? " or another missing library" : "");
          break;
        }
      }
    }
    return mr;
  }

  bool already(const std::string& kind, const std::string& member, const std::string& library,
               const std::string& symbol) {
    return !m_seen.insert(kind + '\0' + member + '\0' + library + '\0' + symbol).second;
  }

  void missing_library(const Object& root, const resolve::Need& need) {
    const Object& req = *need.requester;
    const std::string member = object_name(req);
    if (already("missing-library", member, need.name, "")) return;
    Finding f;
    f.kind = "missing-library";
    f.severity = Severity::Error;
    f.member = member;
    f.library = need.name;
    f.evidence = need.tried;
    if (&req != &root && req.binary == nullptr)
      f.evidence.insert(f.evidence.begin(), "needed by " + req.label + ", loaded by " + root.member);
    const std::string who = req.binary != nullptr ? "this member" : req.path + " (" + req.label + ")";
    f.explanation = fmt::format(
        "{} needs {}, which is not in the image, the wheel, or the distributions it installs beside.", who, need.name);
    f.fix = fmt::format(
        "provide {} (install the package that ships it, or add its folder to LD_LIBRARY_PATH), or "
        "leave this part of the wheel unused",
        need.name);
    if (const auto major = cudart_major(need.name)) {
      f.required_version = std::to_string(*major);
      if (m_image.toolkit && m_image.toolkit->kind == "cuda") {
        const auto& tk = *m_image.toolkit;
        f.explanation = fmt::format(
            "{} is built for CUDA {} (needs {}); the image has CUDA {}{}.", who, *major, need.name, tk.version.text(),
            tk.runtime_sonames.empty() ? "" : " (" + fmt::format("{}", fmt::join(tk.runtime_sonames, ", ")) + ")");
        f.fix = fmt::format(
            "use a build of this wheel for CUDA {}, or install the CUDA {} runtime (nvidia-cuda-runtime-cu{}) "
            "beside it; otherwise keep this part from loading",
            tk.version.text(), *major, *major);
      } else {
        f.explanation =
            fmt::format("{} needs the CUDA {} runtime ({}), and the image has none.", who, *major, need.name);
      }
    }
    m_findings.push_back(std::move(f));
  }

  void note_declared(const Object& root, const resolve::Need& need) {
    (void)root;
    const Object& found = *need.found;
    if (!found.exports_unknown.empty() || found.exports_file.empty()) {
      const std::string member = object_name(*need.requester);
      if (already("declared-library", member, need.name, "")) return;
      m_findings.push_back({"declared-library",
                            Severity::Info,
                            member,
                            need.name,
                            "",
                            "",
                            "",
                            "",
                            fmt::format("{} is declared by the image ({}) without a described location or exports: "
                                        "it is taken as present.",
                                        need.name, found.label),
                            "",
                            {},
                            {need.where}});
    }
  }

  void missing_version(const resolve::MissingVersion& mv) {
    const std::string member = object_name(*mv.object);
    if (already("missing-version", member, mv.file, mv.version)) return;
    Finding f;
    f.kind = "missing-version";
    f.severity = Severity::Error;
    f.member = member;
    f.library = mv.file;
    f.required_version = mv.version;
    f.classification = "version-too-new";
    const std::string have = mv.provided.empty() ? "none of that family" : "newest " + mv.provided.back();
    std::string context;
    if (mv.version.rfind("GLIBC_", 0) == 0 && m_image.libc_version.set) {
      context = fmt::format("; the image's glibc is {}", m_image.libc_version.text());
    } else if (mv.version.rfind("GLIBCXX_", 0) == 0 && m_image.glibcxx.set) {
      context = fmt::format("; the image's libstdc++ is GLIBCXX_{}", m_image.glibcxx.text());
    } else if (mv.version.rfind("CXXABI_", 0) == 0 && m_image.cxxabi.set) {
      context = fmt::format("; the image's libstdc++ is CXXABI_{}", m_image.cxxabi.text());
    }
    f.explanation = fmt::format(
        "needs version {} of {}, which the image's {} does not define ({}){}: the loader refuses it "
        "(\"version `{}' not found\").",
        mv.version, mv.file, mv.provider->path.empty() ? mv.file : mv.provider->path, have, context, mv.version);
    if (mv.version.rfind("GLIBC_2.", 0) == 0) {
      const std::string floor = mv.version.substr(6);
      f.fix = fmt::format(
          "a build for an older glibc (manylinux_{} or older tags the wheels that fit), or an image with glibc >= {}",
          m_image.libc_version.known() ? "2_" + m_image.libc_version.value->substr(2) : "X_Y", floor);
    } else {
      f.fix = fmt::format("a newer {} in the image, or a build of this wheel against an older one", mv.file);
    }
    if (!mv.provided.empty()) f.candidates = {mv.provided.back()};
    m_findings.push_back(std::move(f));
  }

  const exports::Table* table_of(const Object& o) {
    if (o.binary == nullptr) return m_space.table(o);
    auto it = m_wheel_tables.find(&o);
    if (it == m_wheel_tables.end()) {
      it =
          m_wheel_tables
              .emplace(&o, std::make_unique<exports::Table>(exports::Table::from_binary(*o.binary, o.member, o.member)))
              .first;
    }
    return it->second.get();
  }

  // A symbol whose library is missing: recorded for machines (the missing-library finding is the error).
  void library_missing_symbol(const resolve::Unbound& u, const std::string& library) {
    const elf::Symbol& s = *u.symbol;
    const std::string member = object_name(*u.object);
    if (already("missing-symbol", member, s.version, s.name)) return;
    Finding f;
    f.kind = "missing-symbol";
    f.severity = Severity::Info;
    f.member = member;
    f.symbol = s.name;
    f.demangled = demangle(s.name).value_or("");
    f.required_version = s.version;
    f.library = library;
    f.classification = "library-missing";
    f.explanation = fmt::format("{} would come from {}, which is missing (see the missing-library finding).",
                                f.demangled.empty() ? s.name : f.demangled, library);
    m_findings.push_back(std::move(f));
  }

  void unbound_symbol(const resolve::Load& load, const resolve::Unbound& u) {
    const elf::Symbol& s = *u.symbol;
    const std::string member = object_name(*u.object);
    if (already("missing-symbol", member, s.version, s.name)) return;
    Finding f;
    f.kind = "missing-symbol";
    f.member = member;
    f.symbol = s.name;
    f.required_version = s.version;
    f.library = s.version_file;
    f.demangled = demangle(s.name).value_or("");
    const std::string pretty = f.demangled.empty() ? s.name : f.demangled;
    std::vector<const exports::Table*> tables;
    std::vector<const Object*> scope = m_space.preloaded();
    for (const Object* o : load.order) scope.push_back(o);
    for (const Object* o : scope) {
      if (o == u.object) continue;
      if (const exports::Table* t = table_of(*o)) tables.push_back(t);
    }
    if (!u.unknown.empty()) {
      f.severity = Severity::Condition;
      f.classification = "unknown-exports";
      std::vector<std::string> who;
      std::string why;
      for (const Object* o : u.unknown) {
        who.push_back(o->soname.empty() ? o->path : o->soname);
        if (why.empty()) why = o->exports_unknown;
      }
      f.library = who.front();
      f.explanation =
          fmt::format("needs {}{}, which no library with known exports defines; {} may (its exports are unknown: {}).",
                      pretty, s.version.empty() ? "" : "@" + s.version, fmt::format("{}", fmt::join(who, ", ")), why);
      f.fix = "probe the real image (`wheelcheck probe --root /` inside it) so its export tables are known";
      // What the known tables say is still worth showing.
      const Classification c = classify_missing_symbol(s.name, s.version, tables);
      if (c.classification == "signature-changed" || c.classification == "cxx-abi-mismatch") {
        f.candidates = c.candidates;
        f.evidence.push_back("in the libraries whose exports are known: " + c.explanation);
      }
      m_findings.push_back(std::move(f));
      return;
    }
    f.severity = Severity::Error;
    const Classification c = classify_missing_symbol(s.name, s.version, tables);
    f.classification = c.classification;
    if (!c.demangled.empty()) f.demangled = c.demangled;
    f.candidates = c.candidates;
    if (!c.provider.empty()) f.library = c.provider;
    f.explanation = c.explanation.empty() ? fmt::format("needs {}, which nothing in its load scope defines.", pretty)
                                          : c.explanation;
    f.explanation += " The loader refuses this member (\"undefined symbol: " + s.name +
                     "\") unless it is loaded lazily and never calls it.";
    if (c.classification == "signature-changed") {
      f.fix =
          "rebuild this member against the headers of the library version in the image (or install the version it was "
          "built against)";
    } else if (c.classification == "cxx-abi-mismatch") {
      f.fix = "rebuild with the same _GLIBCXX_USE_CXX11_ABI setting as the library (PyTorch wheels since 2.7 use 1)";
    } else if (c.classification == "version-too-new") {
      f.fix = "a newer provider in the image, or a build against the provider's older version";
    } else {
      f.fix = "install the library that defines it, or a build of this member that does not need it";
    }
    std::vector<std::string> searched;
    for (const Object* o : scope) {
      if (o != u.object) searched.push_back(object_name(*o));
    }
    f.evidence.push_back("looked in, in order: " + fmt::format("{}", fmt::join(searched, ", ")));
    m_findings.push_back(std::move(f));
  }

  void cuda_findings() {
    std::map<int, std::string> majors;  // CUDA major -> the member that needs it
    for (const Object* o : m_space.wheel_members()) {
      if (o->binary == nullptr) continue;
      for (const auto& n : o->needed) {
        if (auto m = cudart_major(n)) majors.emplace(*m, o->member);
        if (n == "libcuda.so.1" && m_image.toolkit && m_image.toolkit->kind == "cuda") {
          if (auto tk = major_of(m_image.toolkit->version)) majors.emplace(*tk, o->member);
        }
      }
    }
    if (majors.empty()) return;
    const bool nvidia = !m_image.toolkit || m_image.toolkit->kind == "cuda";
    if (!nvidia) return;  // a vendor's CUDA-compatible runtime has its own driver
    for (const auto& [major, member] : majors) {
      const std::string need = minimum_driver(major);
      if (need.empty()) continue;
      if (m_image.driver.known()) {
        if (driver_older(*m_image.driver.value, need)) {
          m_findings.push_back(
              {"driver-too-old",
               Severity::Error,
               member,
               fmt::format("libcudart.so.{}", major),
               "",
               "",
               need,
               "",
               fmt::format("the CUDA {} runtime needs an NVIDIA driver >= {}; the image's driver is {}.", major, need,
                           *m_image.driver.value),
               fmt::format("a driver >= {} on the host, or a build for an older CUDA", need),
               {},
               {"CUDA minor version compatibility floors (NVIDIA's CUDA Toolkit release notes)"}});
        }
      } else {
        const std::string why = m_image.driver.note.empty() ? "not described" : m_image.driver.note;
        m_findings.push_back(
            {"driver",
             Severity::Condition,
             member,
             fmt::format("libcudart.so.{}", major),
             "",
             "",
             need,
             "",
             fmt::format("needs an NVIDIA driver >= {} (CUDA {}); the image's driver version is unknown ({}).", need,
                         major, why),
             "check `nvidia-smi` on the runner, or describe the driver in the image",
             {},
             {"CUDA minor version compatibility floors (NVIDIA's CUDA Toolkit release notes)"}});
      }
    }
  }

  const WheelProfile& m_wheel;
  const image::Image& m_image;
  resolve::Space m_space;
  std::vector<Finding> m_findings;
  std::set<std::string> m_seen;
  std::map<const Object*, std::unique_ptr<exports::Table>> m_wheel_tables;
};

}  // namespace

Report check(const WheelProfile& wheel, const image::Image& image, const CheckOptions& options) {
  return Checker(wheel, image, options).run();
}

}  // namespace wheelcheck::verdict
