// The check: a wheel's profile against an image, from tags to symbols, and the verdict.
//
//   1. Wheel-level: tags, Requires-Python, each member's machine (wheel_checks.cpp); RECORD and archive problems.
//   2. Every ELF member is a root the process may load (Python imports an extension module, a loader
//      dlopens a library): resolve its tree (resolve.cpp) and bind its wheel objects (bind.cpp).
//   3. Each failure becomes a finding on the object whose entry it is, once, with every root that reaches
//      it (loaded_by: a broken shared dependency fails each member that loads it); an image library's
//      own failure is the image's (object), never a member of the wheel. Kinds: a missing library, a
//      version the provider does not define, a symbol nobody defines (classified by classify.cpp, unless
//      the library that should define it is itself missing), a library found only under some $PLATFORM.
//      Each member's report also lists what fails in its own load (missing_libraries, unresolved, ...).
//   4. CUDA (cuda.cpp): the runtime major each member needs against the image's toolkit, and the driver
//      that runtime needs against the image's driver (a condition when the driver is unknown).
//   5. The verdict: any error -> incompatible; else any condition -> unknown; else compatible.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "inspector/verdict/cuda.hpp"
#include "inspector/verdict/policy_check.hpp"
#include "wheelcheck/cxx_names.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/verdict.hpp"
#include "wheelcheck/wheel.hpp"

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

namespace {

using resolve::Object;

// How many symbols of a missing library are listed one by one (severity info) per member.
constexpr std::size_t k_library_missing_listed = 50;
// How many unresolved symbols a member's report lists (symbols.unbound counts them all).
constexpr std::size_t k_unresolved_listed = 1000;

std::string object_name(const Object& o) {
  if (!o.member.empty()) return o.member;
  if (!o.path.empty()) return o.path;
  return o.soname;
}

bool reaches(const Finding& f, const std::string& member) {
  return std::find(f.roots.begin(), f.roots.end(), member) != f.roots.end();
}

std::string member_kind(const Object& o) {
  if (o.python_extension) return "extension";
  if (o.binary != nullptr && o.binary->type == elf::FileType::Executable) return "executable";
  return "library";
}

// Symbols of one member that only objects without export tables may define: one condition.
struct UnknownGroup {
  std::vector<std::string> symbols;
  std::string first_mangled, why;
  std::set<std::string> roots;
};

class Checker {
 public:
  Checker(const WheelProfile& wheel, const image::Image& image, const CheckOptions& options)
      : m_wheel(wheel),
        m_image(image),
        m_options(options),
        m_space(image, wheel, options.with, options.memory_tables) {}

  Report run() {
    Report r = report_for(m_wheel, m_image);
    for (auto& f : check_wheel_tags(m_wheel, m_image)) add(std::move(f));
    archive_findings();
    claim_finding();
    isa_findings();
    r.notes.push_back("installed into " + m_space.site() +
                      (m_image.pythons.empty() ? " (the image describes no Python: a stand-in folder)" : ""));
    for (const auto& n : m_space.preloaded_notes()) r.notes.push_back(n);
    if (m_wheel.integrity == k_integrity_headers) {
      r.notes.push_back("read headers-only" + (m_wheel.source.empty() ? std::string() : " from " + m_wheel.source) +
                        ": the ELF headers and tables of each member; RECORD, CRC-32s and the wheel's sha256 were "
                        "not verified (--verify full reads every byte)");
    }
    // Roots: what Python imports (extension modules), executables, and libraries no other member
    // needs (a loader may dlopen them: FlagTree's libflagcx.so). A library another member needs is
    // checked as that member loads it, with that member's RPATH and scope.
    std::set<std::string> needed_by_members;
    for (const auto& o : m_space.objects()) {
      if (o->binary == nullptr || o->source != Object::Source::Wheel) continue;
      for (const auto& n : o->needed) needed_by_members.insert(n);
    }
    std::vector<const Object*> roots;
    for (const Object* root : m_space.wheel_members()) {
      if (root->binary == nullptr ||
          (root->binary->type != elf::FileType::Shared && root->binary->type != elf::FileType::Executable))
        continue;
      const bool needed = needed_by_members.count(root->soname) != 0 ||
                          needed_by_members.count(root->path.substr(root->path.find_last_of('/') + 1)) != 0;
      if (needed && !root->python_extension && root->binary->type == elf::FileType::Shared) continue;
      roots.push_back(root);
    }
    // Members of wheels installed beside it that a route names (FlagCX's libflagcx.so for FlagTree's
    // TLE loader) are loaded too.
    if (m_options.rules != nullptr) {
      for (const auto& o : m_space.objects()) {
        if (o->source != Object::Source::WithWheel || o->binary == nullptr) continue;
        for (const auto& route : m_options.rules->routes) {
          if (rules::route_has(route, o->wheel, o->member)) {
            roots.push_back(o.get());
            break;
          }
        }
      }
    }
    for (const Object* root : roots) r.members.push_back(check_root(*root));
    flush_unknown();
    for (auto& f : cuda_findings(m_space, m_image, m_findings)) add(std::move(f));
    // Members with an error cannot load.
    for (auto& m : r.members) {
      for (const auto& f : m_findings) {
        if (f.severity == Severity::Error && (f.member == m.path || reaches(f, m.path))) m.loads = false;
      }
    }
    // Worst first, then by member.
    std::stable_sort(m_findings.begin(), m_findings.end(), [](const Finding& a, const Finding& b) {
      if (a.severity != b.severity) return static_cast<int>(a.severity) > static_cast<int>(b.severity);
      return a.member < b.member;
    });
    r.findings = std::move(m_findings);
    evaluate_routes(r);
    // The verdict: errors outside unavailable optional routes make it incompatible; conditions outside
    // them make it unknown; errors confined to optional routes make it degraded.
    std::set<std::string> off;  // members of unavailable optional routes
    for (const auto& rt : r.routes) {
      if (rt.optional && !rt.available) off.insert(rt.members.begin(), rt.members.end());
    }
    auto covered = [&](const Finding& f) {
      if (!f.member.empty() && off.count(f.member)) return true;
      return std::any_of(f.roots.begin(), f.roots.end(), [&](const std::string& m) { return off.count(m) != 0; });
    };
    bool error = false, condition = false, degraded = false;
    std::set<std::string> seen;
    for (const auto& f : r.findings) {
      if (f.severity == Severity::Error) (covered(f) ? degraded : error) = true;
      if (f.severity == Severity::Condition && !covered(f)) {
        condition = true;
        if (seen.insert(f.explanation).second) r.conditions.push_back(f.explanation);
      }
    }
    r.verdict = error       ? Verdict::Incompatible
                : condition ? Verdict::Unknown
                : degraded  ? Verdict::Degraded
                            : Verdict::Compatible;
    return r;
  }

 private:
  // Routes of the rule set: the members they cover in these wheels, whether each is available (no
  // error names one of its members, and the routes it depends on are available), and its gates if not.
  void evaluate_routes(Report& r) const {
    if (m_options.rules == nullptr) return;
    const std::string main_wheel = wheel::normalize_project_name(m_wheel.filename.name);
    std::map<std::string, std::size_t> index;
    for (const auto& route : m_options.rules->routes) {
      Route rt;
      rt.name = route.name;
      rt.rule_set = route.rule_set;
      rt.summary = route.summary;
      rt.optional = !rules::core_for(route, main_wheel);
      for (const auto& o : m_space.objects()) {
        if (o->binary == nullptr || (o->source != Object::Source::Wheel && o->source != Object::Source::WithWheel))
          continue;
        if (rules::route_has(route, o->wheel, o->member)) rt.members.push_back(o->member);
      }
      if (rt.members.empty()) continue;  // the route is not in these wheels
      std::set<std::string> mine(rt.members.begin(), rt.members.end());
      std::set<std::string> said;
      for (const auto& f : r.findings) {
        std::string who = mine.count(f.member) ? f.member : "";
        for (const auto& root : f.roots) {
          if (who.empty() && mine.count(root)) who = root;
        }
        if (who.empty()) continue;
        if (f.severity == Severity::Error) {
          rt.available = false;
          std::string what =
              f.kind == "missing-library" ? "needs " + f.library + ", which the image lacks"
              : f.kind == "missing-symbol"
                  ? "undefined symbol " + (f.demangled.empty() ? f.symbol : f.demangled) + " (" + f.classification + ")"
              : f.kind == "missing-version" ? "needs " + f.required_version + " of " + f.library
                                            : f.kind + ": " + f.explanation;
          if (said.insert(who + what).second) rt.reasons.push_back(who + ": " + what);
        } else if (f.severity == Severity::Condition) {
          if (said.insert(f.explanation).second) rt.conditions.push_back(who + ": " + f.explanation);
        }
      }
      index[rt.name] = r.routes.size();
      r.routes.push_back(std::move(rt));
    }
    // A route whose dependency is unavailable is unavailable too (in rule order, to a fixed point).
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& route : m_options.rules->routes) {
        auto me = index.find(route.name);
        if (me == index.end() || !r.routes[me->second].available) continue;
        for (const auto& dep : route.depends_on) {
          auto d = index.find(dep);
          if (d != index.end() && !r.routes[d->second].available) {
            r.routes[me->second].available = false;
            r.routes[me->second].reasons.push_back("needs route " + dep + ", which is unavailable");
            changed = true;
            break;
          }
        }
      }
    }
    for (auto& rt : r.routes) {
      if (rt.available) continue;
      for (const auto& route : m_options.rules->routes) {
        if (route.name == rt.name) rt.gates = route.gates;
      }
    }
  }

  void archive_findings() {
    for (auto& f : verdict::archive_findings(m_wheel)) add(std::move(f));
  }

  // A tag that claims more than the binaries deliver: an error where the binaries need a newer glibc than
  // this image has (pip installs it on the tag's word, the loader refuses it), a warning elsewhere.
  void claim_finding() {
    if (m_options.policies == nullptr || !policy::claims_a_policy(m_wheel)) return;  // linux_<arch>, any
    const policy::Consistency c = policy::analyze(m_wheel, *m_options.policies);
    const auto claim = policy::check_claim(m_wheel, c, *m_options.policies);
    if (!claim) return;
    bool decides = false;
    const auto glibc = c.newest_versions.find("GLIBC");
    if (c.libc == policy::Libc::Glibc && glibc != c.newest_versions.end() && m_image.libc_version.known()) {
      decides = dotted_less(*m_image.libc_version.value, glibc->second);
    }
    add(tag_claim_finding(*claim, decides));
  }

  // x86-64-v3 and v4 code needs a CPU the image cannot describe: a condition on the runner.
  void isa_findings() {
    for (const auto& m : m_wheel.members) {
      if (!m.elf || !m.elf->x86_isa_level || *m.elf->x86_isa_level < 2) continue;
      const int level = *m.elf->x86_isa_level;
      const char* what = level == 2 ? "SSE4.2 and POPCNT" : level == 3 ? "AVX2, BMI2 and FMA" : "AVX-512";
      add([&] {
        Finding f;
        f.kind = "isa-level";
        f.severity = level >= 3 ? Severity::Condition : Severity::Info;
        f.member = m.path;
        f.required_version = fmt::format("x86-64-v{}", level);
        f.explanation = fmt::format("built for x86-64-v{}: runs only on CPUs with {}.", level, what);
        f.fix = level >= 3 ? "check the runners' CPUs, or use a baseline x86-64 build" : "";
        f.evidence = std::vector<std::string>{"GNU_PROPERTY_X86_ISA_1_NEEDED note of the member"};
        return f;
      }());
    }
  }

  MemberReport check_root(const Object& root) {
    m_root = root.member;
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
        if (std::find(mr.missing_libraries.begin(), mr.missing_libraries.end(), need.name) ==
            mr.missing_libraries.end())
          mr.missing_libraries.push_back(need.name);
        missing_library(root, need);
      } else if (need.rule == "declared") {
        note_declared(need);
      }
      if (need.found != nullptr && !need.platforms.empty()) platform_condition(need);
    }
    const resolve::BindResult b = resolve::bind(m_space, load);
    mr.symbols_bound = b.bound;
    mr.symbols_interpreter = b.interpreter;
    mr.symbols_unbound = b.unbound.size();
    std::set<std::tuple<const Object*, std::string, std::string>> bad_versions;
    for (const auto& mv : b.versions) {
      bad_versions.insert({mv.object, mv.file, mv.version});
      mr.missing_versions.push_back(mv.version + " of " + mv.file);
      missing_version(mv);
    }
    auto unresolved = [&](const resolve::Unbound& u, const char* because) {
      if (mr.unresolved.size() < k_unresolved_listed)
        mr.unresolved.push_back({object_name(*u.object), u.symbol->name, u.symbol->version, because});
    };
    // Group what the same cause explains.
    std::map<std::pair<const Object*, std::string>, std::size_t> library_missing_counts;
    for (const auto& u : b.unbound) {
      const elf::Symbol& s = *u.symbol;
      if (!s.version.empty() && bad_versions.count({u.object, s.version_file, s.version})) {
        unresolved(u, "missing-version");
        continue;
      }
      const auto& missing = missing_by_object[u.object];
      std::string from;
      if (!s.version_file.empty() && std::find(missing.begin(), missing.end(), s.version_file) != missing.end()) {
        from = s.version_file;
      } else if (s.version_file.empty() && !missing.empty()) {
        from = missing.front();
      }
      if (!from.empty()) {
        unresolved(u, "missing-library");
        // The first few, for machines; the missing-library finding counts them all (a missing libtorch
        // leaves thousands).
        if (++library_missing_counts[{u.object, from}] <= k_library_missing_listed) {
          library_missing_symbol(
              u, missing.size() == 1 || !s.version_file.empty() ? from : fmt::format("{}", fmt::join(missing, " or ")));
        }
        continue;
      }
      unresolved(u, unbound_symbol(load, u) ? "" : "unknown-exports");
    }
    for (const auto& [key, count] : library_missing_counts) {
      for (auto& f : m_findings) {
        if (f.kind == "missing-library" && f.member == object_name(*key.first) && f.library == key.second) {
          if (f.explanation.find(" would have come from it") != std::string::npos) break;  // another root said it
          f.explanation += fmt::format(" {} undefined symbol{} of this member would have come from it{}.", count,
                                       count == 1 ? "" : "s",
                                       missing_by_object[key.first].size() > 1 ? " or another missing library" : "");
          break;
        }
      }
    }
    m_root.clear();
    return mr;
  }

  bool already(const std::string& kind, const std::string& member, const std::string& library,
               const std::string& symbol) {
    m_pending_key = kind + '\0' + member + '\0' + library + '\0' + symbol;
    auto it = m_seen.find(m_pending_key);
    if (it == m_seen.end()) return false;
    m_pending_key.clear();
    auto& roots = m_findings[it->second].roots;
    if (!m_root.empty() && std::find(roots.begin(), roots.end(), m_root) == roots.end()) roots.push_back(m_root);
    return true;
  }

  void add(Finding f) {
    if (!m_root.empty() && f.roots.empty()) f.roots.push_back(m_root);
    if (!m_pending_key.empty()) m_seen.emplace(std::move(m_pending_key), m_findings.size());
    m_pending_key.clear();
    m_findings.push_back(std::move(f));
  }

  void missing_library(const Object& root, const resolve::Need& need) {
    const Object& req = *need.requester;
    // An image library's own entry is the image's: reported on that library, against the members
    // whose load reaches it, never as a member of the wheel.
    const bool image_own = req.binary == nullptr;
    const std::string member = image_own ? "" : object_name(req);
    if (already("missing-library", image_own ? object_name(req) : member, need.name, "")) return;
    Finding f;
    f.kind = "missing-library";
    f.severity = Severity::Error;
    f.member = member;
    if (image_own) f.object = object_name(req);
    f.library = need.name;
    f.evidence = need.tried;
    if (&req != &root && image_own)
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
      if (m_image.toolkit && m_image.toolkit->kind == image::ToolkitKind::Cuda) {
        const auto& tk = *m_image.toolkit;
        f.explanation = fmt::format("{} is built for CUDA {} (needs {}); the image has CUDA {}{}.", who, *major,
                                    need.name, tk.version.text(), cudart_list(tk.runtime_sonames));
        f.fix = fmt::format(
            "use a build of this wheel for CUDA {}, or install the CUDA {} runtime (nvidia-cuda-runtime-cu{}) "
            "beside it; otherwise keep this part from loading",
            tk.version.text(), *major, *major);
      } else {
        f.explanation =
            fmt::format("{} needs the CUDA {} runtime ({}), and the image has none.", who, *major, need.name);
      }
    }
    add(std::move(f));
  }

  // A library found through a $PLATFORM folder under only some of its values: the runner's CPU decides.
  void platform_condition(const resolve::Need& need) {
    const std::string member = object_name(*need.requester);
    if (already("cpu-platform", member, need.name, "")) return;
    Finding f;
    f.kind = "cpu-platform";
    f.severity = Severity::Condition;
    f.member = need.requester->binary != nullptr ? member : "";
    if (need.requester->binary == nullptr) f.object = member;
    f.library = need.name;
    f.candidates = need.platforms;
    f.explanation = fmt::format(
        "{} is found at {} only where glibc's $PLATFORM is {}: it depends on the runner's CPU (on x86-64 glibc "
        "says haswell for CPUs with AVX2, BMI2, LZCNT and MOVBE, xeon_phi for AVX-512ER ones, else x86_64).",
        need.name, need.where, fmt::join(need.platforms, " or "));
    f.fix = "put the library in a folder without $PLATFORM, or in one folder per value glibc may use";
    f.evidence = need.tried;
    add(std::move(f));
  }

  void note_declared(const resolve::Need& need) {
    const Object& found = *need.found;
    if (!found.exports_unknown.empty() || found.exports_file.empty()) {
      const std::string member = object_name(*need.requester);
      if (already("declared-library", member, need.name, "")) return;
      add([&] {
        Finding f;
        f.kind = "declared-library";
        f.severity = Severity::Info;
        f.member = member;
        f.library = need.name;
        f.explanation = fmt::format(
            "{} is declared by the image ({}) without a described location or exports: "
            "it is taken as present.",
            need.name, found.label);
        f.evidence = std::vector<std::string>{need.where};
        return f;
      }());
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
    if (!mv.provided.empty()) f.candidates = std::vector<std::string>{mv.provided.back()};
    add(std::move(f));
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
    f.demangled = cxx::demangle(s.name).value_or("");
    f.required_version = s.version;
    f.library = library;
    f.classification = "library-missing";
    f.explanation = fmt::format("{} would come from {}, which is missing (see the missing-library finding).",
                                f.demangled.empty() ? s.name : f.demangled, library);
    add(std::move(f));
  }

  // A symbol nothing in scope defines: an error (true), or a condition on unknown exports (false).
  bool unbound_symbol(const resolve::Load& load, const resolve::Unbound& u) {
    const elf::Symbol& s = *u.symbol;
    const std::string member = object_name(*u.object);
    if (const auto it = m_certain.find({member, s.version, s.name}); it != m_certain.end()) {
      if (it->second == nullptr) return already("missing-symbol", member, s.version, s.name);
      if (!m_root.empty()) it->second->roots.insert(m_root);
      return false;
    }
    UnknownGroup* group = unbound_finding(load, u);
    m_certain[{member, s.version, s.name}] = group;
    return group == nullptr;
  }

  // The finding of an unbound symbol, or (when objects without export tables may define it) the
  // condition group it joins.
  UnknownGroup* unbound_finding(const resolve::Load& load, const resolve::Unbound& u) {
    const elf::Symbol& s = *u.symbol;
    const std::string member = object_name(*u.object);
    already("missing-symbol", member, s.version, s.name);  // registers the cause for the next add()
    Finding f;
    f.kind = "missing-symbol";
    f.member = member;
    f.symbol = s.name;
    f.required_version = s.version;
    f.library = s.version_file;
    f.demangled = cxx::demangle(s.name).value_or("");
    const std::string pretty = f.demangled.empty() ? s.name : f.demangled;
    std::vector<const exports::Table*> tables;
    const std::vector<const Object*>& scope = load.order;
    for (const Object* o : scope) {
      if (o == u.object) continue;
      if (const exports::Table* t = table_of(*o)) tables.push_back(t);
    }
    if (!u.unknown.empty()) {
      // A library declared to use the C++11 ABI (PyTorch since 2.7) cannot export an old-ABI signature.
      const bool old_abi = !f.demangled.empty() && f.demangled.find("std::__cxx11::") == std::string::npos &&
                           (f.demangled.find("std::string") != std::string::npos ||
                            f.demangled.find("std::basic_string<") != std::string::npos ||
                            f.demangled.find("std::list<") != std::string::npos);
      const bool all_cxx11 =
          std::all_of(u.unknown.begin(), u.unknown.end(), [](const Object* o) { return o->cxx11_abi.value_or(false); });
      if (old_abi && all_cxx11) {
        std::vector<std::string> who;
        for (const Object* o : u.unknown) who.push_back(o->label);
        std::sort(who.begin(), who.end());
        who.erase(std::unique(who.begin(), who.end()), who.end());
        f.severity = Severity::Error;
        f.classification = "cxx-abi-mismatch";
        f.library = u.unknown.front()->soname;
        f.explanation = fmt::format(
            "needs {}, a signature with the pre-C++11 std::string/std::list ABI (built with "
            "_GLIBCXX_USE_CXX11_ABI=0); {} is built with the C++11 ABI, so it cannot export it. The loader refuses "
            "this member (\"undefined symbol: {}\").",
            pretty, fmt::format("{}", fmt::join(who, ", ")), s.name);
        f.fix = "rebuild this member with _GLIBCXX_USE_CXX11_ABI=1 against the PyTorch in the image";
        f.evidence.push_back("declared: " + fmt::format("{}", fmt::join(who, ", ")) +
                             " uses the C++11 ABI (cxx11_abi)");
        add(std::move(f));
        return nullptr;
      }
      m_pending_key.clear();
      // Otherwise a condition, grouped per member and unknown library (see flush_unknown).
      // A versioned reference names its library (GLIBCXX_3.4.21 from libstdc++.so.6): only that one may.
      std::vector<const Object*> may = u.unknown;
      if (!s.version_file.empty()) {
        std::vector<const Object*> named;
        for (const Object* o : u.unknown) {
          if (o->soname == s.version_file) named.push_back(o);
        }
        if (!named.empty()) may = named;
      }
      std::vector<std::string> who;
      for (const Object* o : may) who.push_back(!o->soname.empty() ? o->soname : !o->path.empty() ? o->path : o->label);
      auto& group = m_unknown[{member, fmt::format("{}", fmt::join(who, ", "))}];
      group.why = !may.front()->exports_unknown.empty()
                      ? may.front()->exports_unknown
                      : "its export table could not be read: " + m_space.table_error(*may.front());
      group.symbols.push_back(pretty + (s.version.empty() ? "" : "@" + s.version));
      if (group.symbols.size() == 1) group.first_mangled = s.name;
      if (!m_root.empty()) group.roots.insert(m_root);
      return &group;
    }
    f.severity = Severity::Error;
    const Classification c = classify_missing_symbol(s.name, s.version, tables);
    f.classification = c.classification;
    if (!c.demangled.empty()) f.demangled = c.demangled;
    f.candidates = c.candidates;
    if (!c.provider.empty()) f.library = c.provider;
    f.explanation = c.explanation.empty() ? fmt::format("needs {}, which nothing in its load scope defines.", pretty)
                                          : c.explanation;
    if (!f.explanation.empty() && f.explanation.back() != '.') f.explanation += '.';
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
    add(std::move(f));
    return nullptr;
  }

  // Symbols that only libraries without export tables may define: one condition per member and library.
  void flush_unknown() {
    for (auto& [key, g] : m_unknown) {
      const auto& [member, libraries] = key;
      Finding f;
      f.kind = "missing-symbol";
      f.severity = Severity::Condition;
      f.classification = "unknown-exports";
      f.member = member;
      f.library = libraries;
      f.symbol = g.first_mangled;
      f.demangled = cxx::demangle(g.first_mangled).value_or("");
      std::string some;
      for (std::size_t i = 0; i < g.symbols.size() && i < 3; ++i) some += (i ? ", " : "") + g.symbols[i];
      f.explanation =
          fmt::format("{} symbol{} ({}{}) must come from {}, whose exports are unknown ({}).", g.symbols.size(),
                      g.symbols.size() == 1 ? "" : "s", some, g.symbols.size() > 3 ? ", ..." : "", libraries, g.why);
      f.fix = "probe the real image (`wheelcheck probe --root /` inside it) so its export tables are known";
      f.evidence = g.symbols;
      f.roots.assign(g.roots.begin(), g.roots.end());
      add(std::move(f));
    }
    m_unknown.clear();
  }

  const WheelProfile& m_wheel;
  const image::Image& m_image;
  const CheckOptions& m_options;
  resolve::Space m_space;
  std::string m_root;  // the member being loaded (check_root), for the findings it surfaces
  std::map<std::pair<std::string, std::string>, UnknownGroup> m_unknown;  // (member, libraries) -> symbols
  // (member, version, symbol) of each unbound symbol met -> its condition group, or null for an error
  std::map<std::tuple<std::string, std::string, std::string>, UnknownGroup*> m_certain;
  std::vector<Finding> m_findings;
  std::map<std::string, std::size_t> m_seen;  // a finding's cause -> its index in m_findings
  std::string m_pending_key;
  std::map<const Object*, std::unique_ptr<exports::Table>> m_wheel_tables;
};

}  // namespace

Report check(const WheelProfile& wheel, const image::Image& image, const CheckOptions& options) {
  if (!image.policy.empty()) return check_policy(wheel, image, options);
  return Checker(wheel, image, options).run();
}

}  // namespace wheelcheck::verdict
