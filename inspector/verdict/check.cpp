// The check: a wheel's profile against an image, from tags to symbols. run() is its stages:
//
//   1. Wheel-level findings: tags, Requires-Python, each member's machine (wheel_checks.cpp); the archive's,
//      RECORD's and unreadable members' problems (policy_check.cpp); a tag that claims more than the
//      binaries deliver; an x86-64 ISA level above the baseline.
//   2. Roots: every ELF member the process may load on its own (Python imports an extension module, a
//      loader dlopens a library no other member needs), and members of wheels beside it that a route names.
//   3. Each root's load: its tree resolved (resolve.cpp), then its wheel objects bound (bind.cpp). Each
//      failure becomes a finding on the object whose entry it is, once, with every root that reaches it
//      (loaded_by: a broken shared dependency fails each member that loads it); an image library's own
//      failure is the image's (object), never a member of the wheel. Kinds: a missing library (said as it
//      is: nowhere, or somewhere no search path reaches), a version the provider does not define, a symbol
//      nobody defines (classified by classify.cpp, unless the library that should define it is missing),
//      a library found only under some $PLATFORM. Each member's report also lists what fails in its own
//      load (missing_libraries, unresolved, ...).
//   4. Symbols only libraries without export tables may define: one condition per member and library.
//   5. CUDA (cuda.cpp): the driver the runtimes need against the image's driver.
//   6. Routes and the verdict (routes.cpp).
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "inspector/verdict/cuda_check.hpp"
#include "inspector/verdict/exec_stack.hpp"
#include "inspector/verdict/findings.hpp"
#include "inspector/verdict/import_rules.hpp"
#include "inspector/verdict/load_findings.hpp"
#include "inspector/verdict/policy_check.hpp"
#include "inspector/verdict/python_loads.hpp"
#include "inspector/verdict/routes.hpp"
#include "inspector/verdict/stack_checks.hpp"
#include "wheelcheck/absence.hpp"
#include "wheelcheck/cxx_names.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/toolkit.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

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

std::string base_of(const std::string& path) {
  return path.substr(path.find_last_of('/') + 1);
}

std::string member_kind(const Object& o) {
  if (o.python_extension) return "extension";
  if (o.binary != nullptr && resolve::is_program(*o.binary)) return "executable";
  return "library";
}

// Symbols of one member that only objects without export tables may define: one condition.
struct UnknownGroup {
  std::vector<std::string> symbols;
  std::string first_mangled, why;
  std::set<std::string> roots;
};

// A finding's cause: its kind, whose entry it is, and the library (or version) and symbol concerned.
// A root that meets a cause again joins the finding's loaded_by.
using Cause = std::tuple<FindingKind, std::string, std::string, std::string>;

class Checker {
 public:
  Checker(const WheelProfile& wheel, const image::Image& image, const CheckOptions& options)
      : m_wheel(wheel),
        m_image(image),
        m_options(options),
        m_space(image, wheel, options.with, options.memory_tables,
                options.rules != nullptr ? rules::imports_first(*options.rules, wheel.filename.name)
                                         : std::vector<std::pair<std::string, std::string>>{}) {}

  Report run() {
    Report r = report_for(m_wheel, m_image);
    m_space.set_python_globals(python_global_loads(m_wheel, m_space));
    wheel_findings();
    r.notes = notes();
    if (const auto* py = m_space.python(); py != nullptr && m_python_fits) {
      r.python = Report::PythonUsed{py->version, py->executable, m_space.site()};
    }
    for (const Object* root : roots()) r.members.push_back(check_root(*root));
    for (auto& f : exec_stack_findings(m_space, m_image, roots())) add(std::move(f));  // exec_stack.cpp
    provider_findings(r);
    flush_unknown();
    count_symbols_of_missing_libraries();
    // The loads the wheel's Python code makes, and the imports a failing one breaks (python_loads.cpp).
    for (auto& f : python_load_findings(m_wheel, m_options.with, m_space, m_image, m_options.providers, m_findings))
      add(std::move(f));
    auto cuda = cuda_check(m_space, m_image, m_findings);
    for (auto& f : cuda.findings) add(std::move(f));
    r.driver = std::move(cuda.driver);
    r.findings = worst_first(std::move(m_findings));
    mark_members_that_fail(r);
    if (!m_python_fits) {
      // No Python of the image can install the wheel (its cpXY tag fits none of them): that is the one
      // finding. Each member's own load is still reported (members[]: what the loader would do under the
      // Python that stands in), but its findings against another interpreter would only hide the answer.
      // The wheel's own integrity is judged first, whatever the image: a damaged wheel is never pinned.
      std::erase_if(r.findings, [](const Finding& f) {
        if (is_integrity(f.kind)) return false;
        return !f.member.empty() || !f.object.empty() || !f.roots.empty() || f.kind == FindingKind::Driver ||
               f.kind == FindingKind::DriverTooOld;
      });
      r.driver.reset();
    }
    for (auto& n : m_environment_notes) r.notes.push_back(std::move(n));
    if (m_options.rules != nullptr) evaluate_routes(r, *m_options.rules, m_space, m_wheel);
    if (m_options.rules != nullptr) apply_known(r, *m_options.rules, m_wheel.filename.name);
    decide(r);
    return r;
  }

  // What an answer depends on beyond the image's files (stack_checks.cpp), each said once.
  void environment_note(const resolve::Need& need) {
    std::string note = verdict::environment_note(need, m_image);
    if (!note.empty() &&
        std::find(m_environment_notes.begin(), m_environment_notes.end(), note) == m_environment_notes.end())
      m_environment_notes.push_back(std::move(note));
  }

 private:
  // 1. The wheel as a whole.
  void wheel_findings() {
    for (auto& f : check_wheel_tags(m_wheel, m_image)) {
      if (f.severity == Severity::Error && (f.kind == FindingKind::TagPython || f.kind == FindingKind::TagAbi))
        m_python_fits = false;
      if (f.severity == Severity::Error && f.kind == FindingKind::WrongArch) m_wrong_arch.insert(f.member);
      add(std::move(f));
    }
    for (auto& f : check_requires_dist(m_wheel, m_image, m_space.python(), m_options.with)) add(std::move(f));
    for (auto& f : archive_findings(m_wheel)) add(std::move(f));
    claim_finding();
    isa_findings();
    env_findings();
    for (auto& f : check_numpy_abi(m_wheel, m_image, m_options.with)) add(std::move(f));
    // CPython's import: a member named for another Python, or without its PyInit_ (import_rules.cpp). Where no
    // Python of the image fits the tags, the tag-python error is the answer, and the Python standing in judges nothing.
    if (m_python_fits)
      for (auto& f : check_import_rules(m_wheel, m_image, m_space.python())) add(std::move(f));
  }

  void env_findings() {
    if (m_options.rules == nullptr) return;
    auto checked = check_required_env(m_wheel, m_image, *m_options.rules, m_options.with);
    for (auto& f : checked.findings) add(std::move(f));
    for (auto& n : checked.notes) m_environment_notes.push_back(std::move(n));
  }

  // A tag that claims more than the binaries deliver: a claim beside the verdict, never the verdict (the
  // loader's findings decide: a glibc too old here is a missing-version error of its own).
  void claim_finding() {
    if (m_options.policies == nullptr || !policy::claims_a_policy(m_wheel)) return;  // linux_<arch>, any
    const policy::Consistency c =
        policy::analyze(m_wheel, *m_options.policies,
                        m_options.providers != nullptr ? toolkit::dependency_libraries(m_wheel, *m_options.providers)
                                                       : std::vector<policy::DependencyLibrary>{});
    if (const auto claim = policy::check_claim(m_wheel, c, *m_options.policies)) add(tag_claim_finding(*claim, false));
  }

  // x86-64-v3 and v4 code needs a CPU the image cannot describe: a condition on the runner.
  void isa_findings() {
    // The runners' level where it is stated (--assume isa=x86-64-vN): it runs, or stops at an illegal instruction.
    const int have = m_image.isa_level.known() ? m_image.isa_level.value->back() - '0' : 0;
    for (const auto& m : m_wheel.members) {
      if (!m.elf || !m.elf->x86_isa_level || *m.elf->x86_isa_level < 2) continue;
      const int level = *m.elf->x86_isa_level;
      const char* what = level == 2 ? "SSE4.2 and POPCNT" : level == 3 ? "AVX2, BMI2 and FMA" : "AVX-512";
      const std::string runners =
          have == 0 ? "" : fmt::format("; the runners' CPUs are x86-64-v{} ({})", have, m_image.isa_level.note);
      add(make(FindingKind::IsaLevel, have == 0       ? (level >= 3 ? Severity::Condition : Severity::Info)
                                      : have >= level ? Severity::Info
                                                      : Severity::Error)
              .member(m.path)
              .version(fmt::format("x86-64-v{}", level))
              .explain(fmt::format("built for x86-64-v{}: runs only on CPUs with {}{}{}.", level, what, runners,
                                   have == 0 || have >= level ? "" : ": it stops with an illegal instruction"))
              .fix(have >= level || (have == 0 && level < 3) ? ""
                   : have == 0 ? "check the runners' CPUs (--assume isa=x86-64-vN states them), or use a baseline "
                                 "x86-64 build"
                               : "a baseline x86-64 build, or runners of that level")
              .evidence("GNU_PROPERTY_X86_ISA_1_NEEDED note of the member"));
    }
  }

  std::vector<std::string> notes() const {
    std::vector<std::string> out;
    const image::Python* py = m_space.python();
    std::string which;
    if (m_image.pythons.empty()) {
      which = " (the image describes no Python: a stand-in folder)";
    } else if (py != nullptr && resolve::python_for(m_wheel, m_image) == py) {
      which =
          " (Python " + py->version + (py->executable.empty() ? "" : ", " + py->executable) +
          ", the one its tags select" +
          (m_image.pythons.size() > 1 ? " of the image's " + std::to_string(m_image.pythons.size()) + " Pythons" : "") +
          ")";
    } else if (py != nullptr) {
      which = " (no Python of the image fits its tags; Python " + py->version + " stands in)";
    }
    out.push_back("installed into " + m_space.site() + which);
    for (const auto& n : m_space.replaced_notes()) out.push_back(n);
    for (const auto& n : m_space.preloaded_notes()) out.push_back(n);
    // A runtime the members need, bound against an earlier minor's table (image::Library::exports_lent).
    const auto members = m_space.wheel_members();
    for (const auto& o : m_space.objects()) {
      const auto needs_it = [&](const Object* m) {
        return std::find(m->needed.begin(), m->needed.end(), o->soname) != m->needed.end();
      };
      if (!o->exports_lent.empty() && std::any_of(members.begin(), members.end(), needs_it))
        out.push_back(o->soname + ": its symbols are " + o->exports_lent);
    }
    if (m_wheel.integrity == k_integrity_headers) {
      out.push_back("read headers-only" + (m_wheel.source.empty() ? std::string() : " from " + m_wheel.source) +
                    ": the ELF headers and tables of each member; RECORD, CRC-32s and the wheel's sha256 were "
                    "not verified (--verify full reads every byte)");
    }
    return out;
  }

  // 2. What Python imports (extension modules), executables, and libraries no other member needs (a
  // loader may dlopen them: FlagTree's libflagcx.so). A library another member needs is checked as that
  // member loads it, with that member's RPATH and scope. The wheels installed beside it only provide.
  std::vector<const Object*> roots() const {
    std::set<std::string> needed_by_members;
    for (const auto& o : m_space.objects()) {
      if (o->binary == nullptr || o->source != Object::Source::Wheel) continue;
      for (const auto& n : o->needed) needed_by_members.insert(n);
    }
    // A library the Python code loads by path is a load of its own, whoever else needs it.
    const std::set<std::string> loaded_by_python = python_loaded_members(m_wheel);
    std::vector<const Object*> out;
    for (const Object* root : m_space.wheel_members()) {
      if (root->binary == nullptr ||
          (root->binary->type != elf::FileType::Shared && root->binary->type != elf::FileType::Executable))
        continue;
      const bool needed =
          needed_by_members.count(root->soname) != 0 || needed_by_members.count(base_of(root->path)) != 0;
      if (needed && !root->python_extension && root->binary->type == elf::FileType::Shared &&
          loaded_by_python.count(root->member) == 0)
        continue;
      out.push_back(root);
    }
    // Members of the wheels beside it are never roots here: each package is judged in its own check, under
    // its own METADATA and RECORD (run::run checks every package of an environment; a route that spans
    // two wheels, FlagTree's TLE loader and FlagCX's libflagcx.so, is merged over their reports there).
    return out;
  }

  // 3. One root's load: its needs resolved, then its wheel objects' symbols bound.
  MemberReport check_root(const Object& root) {
    m_root = root.member;
    MemberReport mr;
    mr.path = root.member;
    mr.kind = member_kind(root);
    // The loader refuses a member for another machine at its ELF header: nothing it needs is ever asked for.
    if (m_wrong_arch.count(root.member) != 0) return m_root.clear(), mr;
    const resolve::Load load = resolve::load(m_space, root);
    const MissingByObject missing = resolve_needs(root, load, mr);
    bind_symbols(load, missing, mr);
    m_root.clear();
    return mr;
  }

  using MissingByObject = std::map<const Object*, std::vector<std::string>>;

  MissingByObject resolve_needs(const Object& root, const resolve::Load& load, MemberReport& mr) {
    MissingByObject missing;
    for (const auto& need : load.needs) {
      mr.needs.push_back(need_report(need, object_name(*need.requester)));
      if (need.found == nullptr) {
        missing[need.requester].push_back(need.name);
        if (std::find(mr.missing_libraries.begin(), mr.missing_libraries.end(), need.name) ==
            mr.missing_libraries.end())
          mr.missing_libraries.push_back(need.name);
        missing_library(root, need);
      } else if (need.rule == resolve::How::Declared) {
        note_declared(need);
      }
      environment_note(need);
      if (need.found != nullptr && !need.platforms.empty()) platform_condition(need);
    }
    return missing;
  }

  void bind_symbols(const resolve::Load& load, const MissingByObject& missing_by_object, MemberReport& mr) {
    const resolve::BindResult b = resolve::bind(m_space, load);
    mr.symbols_bound = b.bound;
    mr.symbols_interpreter = b.interpreter;
    mr.symbols_unbound = b.unbound.size();
    std::set<std::tuple<const Object*, std::string, std::string>> bad_versions;
    for (const auto& mv : b.versions) {
      bad_versions.insert({mv.object, mv.file, mv.version});
      mr.missing_versions.push_back(mv.version + " of " + mv.file);
      if (mv.object->binary != nullptr) {
        missing_version(mv);
      } else if (Cause cause{FindingKind::MissingVersion, object_name(*mv.object), mv.file, mv.version}; !seen(cause)) {
        add(image_missing_version(m_image, mv), std::move(cause));  // the image's own library
      }
    }
    // The image's and the distributions' libraries the load maps anew: their undefined symbols.
    mr.symbols_unbound += b.image_unbound.size();
    for (const auto& u : b.image_unbound) {
      if (!u.unknown.empty()) continue;                      // a library in scope without a table may define it
      if (missing_by_object.count(u.object) != 0) continue;  // its library is missing: that is the error
      const bool version_missing = !u.version.empty() && bad_versions.count({u.object, u.file, u.version}) != 0;
      if (mr.unresolved.size() < k_unresolved_listed)
        mr.unresolved.push_back(
            {object_name(*u.object), u.symbol, u.version, version_missing ? "missing-version" : ""});
      if (version_missing) continue;
      if (Cause cause{FindingKind::MissingSymbol, object_name(*u.object), u.version, u.symbol}; !seen(cause))
        add(image_unbound_symbol(u), std::move(cause));
    }
    auto unresolved = [&](const resolve::Unbound& u, const char* because) {
      if (mr.unresolved.size() < k_unresolved_listed)
        mr.unresolved.push_back({object_name(*u.object), u.symbol->name, u.symbol->version, because});
    };
    // Group what the same cause explains.
    std::map<std::pair<const Object*, std::string>, std::size_t> library_missing_counts;
    static const std::vector<std::string> k_none;
    for (const auto& u : b.unbound) {
      const elf::Symbol& s = *u.symbol;
      if (!s.version.empty() && bad_versions.count({u.object, s.version_file, s.version})) {
        unresolved(u, "missing-version");
        continue;
      }
      const auto it = missing_by_object.find(u.object);
      const auto& missing = it == missing_by_object.end() ? k_none : it->second;
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
    // The first root that loads an object counts its symbols; every root sees the same object.
    for (const auto& [key, count] : library_missing_counts) {
      const auto f = m_seen.find({FindingKind::MissingLibrary, object_name(*key.first), key.second, ""});
      if (f == m_seen.end()) continue;
      const bool several = missing_by_object.at(key.first).size() > 1;
      m_symbols_of_missing.emplace(f->second, std::make_pair(count, several));
    }
  }

  // The sentence each missing-library finding ends with: how many symbols it would have provided.
  void count_symbols_of_missing_libraries() {
    for (const auto& [index, counted] : m_symbols_of_missing) {
      const auto& [count, several] = counted;
      m_findings[index].explanation +=
          fmt::format(" {} undefined symbol{} of this member would have come from it{}.", count, count == 1 ? "" : "s",
                      several ? " or another missing library" : "");
    }
  }

  // 3b. The distributions the wheel requires that the image has (`import torch` runs before any of the
  // wheel's modules): each library of theirs loaded as the import loads it. A library it needs that
  // nothing provides, or a version it needs that the provider does not define, means the distribution
  // cannot be imported there, and so the wheel cannot work: an error of this check, said as the image's,
  // against every extension module of the wheel (and so every route that holds one).
  void provider_findings(const Report& r) {
    std::vector<std::string> modules;
    for (const auto& m : r.members) {
      if (m.kind == "extension") modules.push_back(m.path);
    }
    const std::string saved = std::exchange(m_root, "");
    const auto& pre = m_space.preloaded();
    for (const Object* lib : pre) {
      const resolve::Load ld = resolve::load(m_space, *lib);
      const std::string name = lib->dist.substr(0, lib->dist.find(' '));  // "torch 2.10.0+cpu"
      for (const auto& need : ld.needs) {
        // The distribution's own libraries are each a load of their own; what they bring is part of it.
        const Object* req = need.requester;
        if (req != lib && std::find(pre.begin(), pre.end(), req) != pre.end()) continue;
        if (need.found == nullptr) {
          Cause cause{FindingKind::MissingLibrary, req->path, need.name, "provider"};
          if (m_seen.count(cause)) continue;
          const std::string who =
              req == lib ? base_of(lib->path) : base_of(req->path) + " (which " + base_of(lib->path) + " loads)";
          const Absence gone = absence_of(m_image, need.name, m_options.providers);
          Finding f = make(FindingKind::MissingLibrary, gone.known ? Severity::Error : Severity::Condition)
                          .object(req->path)
                          .library(need.name)
                          .roots(modules)
                          .evidence(resolve::tried_text(need))
                          .explain(gone.known ? fmt::format("{} in this image cannot be imported: {} needs {}, which "
                                                            "nothing in the image provides; the wheel requires {} "
                                                            "(Requires-Dist), so none of it can work here.",
                                                            name, who, need.name, name)
                                              : fmt::format("{} in this image can be imported only if {} is there: "
                                                            "{} needs it; {}.",
                                                            name, need.name, who, gone.because))
                          .fix(gone.known ? fmt::format("a {} build whose libraries this image can load, or an image "
                                                        "with {}",
                                                        name, need.name)
                                          : gone.state_it);
          f.provider = true;
          add(std::move(f), std::move(cause));
          continue;
        }
        if (req != lib) continue;
        for (Finding& f : provider_version_needs(m_space, m_image, *lib, need, modules)) {
          Cause cause{FindingKind::MissingVersion, lib->path, need.name, f.required_version};
          if (!seen(cause)) add(std::move(f), std::move(cause));
        }
      }
      // Its undefined symbols, and what the libraries it brings need, bound in the scope `import` gives
      // it (RTLD_NOW).
      const resolve::BindResult b = resolve::bind(m_space, ld);
      for (const auto& mv : b.versions) {
        if (mv.object == lib && lib->binary == nullptr) continue;  // said above, from its described DT_VERNEED
        Cause cause{FindingKind::MissingVersion, mv.object->path, mv.file, mv.version};
        if (m_seen.count(cause)) continue;
        add(provider_failure(image_missing_version(m_image, mv), name, modules), std::move(cause));
      }
      // A wheel beside it that the wheel requires (a torch wheel of the set): its libraries' symbols are all
      // known, so each one nothing it loads defines is a failure of its import.
      std::vector<resolve::ImageUnbound> unbound = b.image_unbound;
      for (const auto& u : b.unbound) {
        if (u.object->source != Object::Source::WithWheel) continue;
        unbound.push_back({u.object, u.symbol->name, u.symbol->version, u.symbol->version_file, u.unknown});
      }
      for (const auto& u : unbound) {
        if (!u.unknown.empty()) continue;
        Cause cause{FindingKind::MissingSymbol, u.object->path, u.version, u.symbol};
        if (m_seen.count(cause)) continue;
        add(u.object == lib ? provider_unbound_symbol(u, modules)
                            : provider_failure(image_unbound_symbol(u), name, modules),
            std::move(cause));
      }
    }
    m_root = saved;
  }

  // True when `cause` was met before: the root being checked joins that finding's loaded_by.
  bool seen(const Cause& cause) {
    const auto it = m_seen.find(cause);
    if (it == m_seen.end()) return false;
    auto& roots = m_findings[it->second].roots;
    if (!m_root.empty() && std::find(roots.begin(), roots.end(), m_root) == roots.end()) roots.push_back(m_root);
    return true;
  }

  void add(Finding f, std::optional<Cause> cause = std::nullopt) {
    if (!m_root.empty() && f.roots.empty()) f.roots.push_back(m_root);
    if (cause) m_seen.emplace(std::move(*cause), m_findings.size());
    m_findings.push_back(std::move(f));
  }

  // Where a library the loader did not find is nonetheless: the wheel, a wheel beside it, the image or
  // a distribution (a file of that soname or name for the requester's machine); null when nowhere.
  const Object* elsewhere(const std::string& name, const Object& requester) const {
    const Object* best = nullptr;
    for (const auto& o : m_space.objects()) {
      if (o->path.empty() || (o->soname != name && base_of(o->path) != name)) continue;
      if (!o->machine.empty() && !requester.machine.empty() &&
          (o->machine != requester.machine || o->elf_class != requester.elf_class))
        continue;
      if (best == nullptr || static_cast<int>(o->source) < static_cast<int>(best->source)) best = o.get();
    }
    return best;
  }

  void missing_library(const Object& root, const resolve::Need& need) {
    const Object& req = *need.requester;
    // An image library's own entry is the image's: reported on that library, against the members
    // whose load reaches it, never as a member of the wheel.
    const bool image_own = req.binary == nullptr;
    const std::string member = image_own ? "" : object_name(req);
    Cause cause{FindingKind::MissingLibrary, image_own ? object_name(req) : member, need.name, ""};
    if (seen(cause)) return;
    const std::vector<std::string> tried = resolve::tried_text(need);
    const Object* there = elsewhere(need.name, req);
    // Unknown is not absent: where the image does not state the library's absence, this is a condition (a
    // library that is there, off the search paths, is an error whatever the image states).
    Absence gone;
    gone.known = true;
    if (there == nullptr) gone = absence_of(m_image, need.name, m_options.providers);
    Draft f = make(FindingKind::MissingLibrary, gone.known ? Severity::Error : Severity::Condition)
                  .member(member)
                  .library(need.name)
                  .evidence(tried);
    if (image_own) f.object(object_name(req));
    if (&req != &root && image_own) {
      std::vector<std::string> evidence{"needed by " + req.label + ", loaded by " + root.member};
      evidence.insert(evidence.end(), tried.begin(), tried.end());
      f.evidence(std::move(evidence));
    }
    const auto cuda_major = cudart_major(need.name);
    if (cuda_major) f.version(std::to_string(*cuda_major));
    const std::string who = image_own ? req.path + " (" + req.label + ")" : "this member";
    if (there != nullptr) {
      explain_unreachable(f, req, object_name(req), *there, need.name);
    } else if (!image_own &&
               explain_special_need(f, who, need.name, m_image, m_space.python(), req.python_extension, gone.known)) {
      if (f.peek().severity == Severity::Condition) m_unstated.insert(need.name);
    } else if (!gone.known) {
      m_unstated.insert(need.name);
      f.explain(fmt::format("{} needs {}, which is not in the wheel or the distributions it installs beside; {}.", who,
                            need.name, gone.because));
      f.fix(gone.state_it);
    } else {
      f.explain(
          fmt::format("{} needs {}, which is not in the image, the wheel, or the distributions it installs beside.",
                      who, need.name));
      const auto* ships = m_options.providers ? toolkit::provider_of(*m_options.providers, need.name) : nullptr;
      const std::string who_ships = ships ? "install " + join(ships->distributions, " or ") : "provide " + need.name;
      f.fix(who_ships +
            (ships ? " beside it (it ships " + need.name + ")"
                   : " (install the package that ships it, or "
                     "add its folder to LD_LIBRARY_PATH)") +
            ", or leave this part of the wheel unused");
      if (cuda_major)
        explain_missing_cudart(f, who, *cuda_major, need.name, m_image, image_own ? "" : m_wheel.filename.version);
      if (gone.basis != AbsenceBasis::Inventory && !cuda_major)
        f.explain(f.peek().explanation + " Known absent: " + gone.because + ".");
    }
    // A description that does not record the library's own search paths may miss where it finds it.
    if (image_own && !req.dynamic_recorded && !req.path.empty() && req.label != "the Python interpreter") {
      f.explain(f.peek().explanation + fmt::format(" The description does not record {}'s own DT_RPATH and "
                                                   "DT_RUNPATH, which may name its folder: a probe of the image "
                                                   "(`wheelcheck probe ROOT`) records them.",
                                                   base_of(req.path)));
    }
    add(std::move(f), std::move(cause));
  }

  // A library found through a $PLATFORM folder under only some of its values: the runner's CPU decides.
  void platform_condition(const resolve::Need& need) {
    const std::string member = object_name(*need.requester);
    Cause cause{FindingKind::CpuPlatform, member, need.name, ""};
    if (seen(cause)) return;
    Draft f = make(FindingKind::CpuPlatform, Severity::Condition)
                  .library(need.name)
                  .candidates(need.platforms)
                  .explain(fmt::format("{} is found at {} only where glibc's $PLATFORM is {}: it depends on the "
                                       "runner's CPU (on x86-64 glibc says haswell for CPUs with AVX2, BMI2, LZCNT "
                                       "and MOVBE, xeon_phi for AVX-512ER ones, else x86_64).",
                                       need.name, need.where, fmt::join(need.platforms, " or ")))
                  .fix("put the library in a folder without $PLATFORM, or in one folder per value glibc may use")
                  .evidence(resolve::tried_text(need));
    if (need.requester->binary != nullptr) {
      f.member(member);
    } else {
      f.object(member);
    }
    add(std::move(f), std::move(cause));
  }

  void note_declared(const resolve::Need& need) {
    const Object& found = *need.found;
    if (found.exports_unknown.empty() && !found.exports_file.empty()) return;
    const std::string member = object_name(*need.requester);
    Cause cause{FindingKind::DeclaredLibrary, member, need.name, ""};
    if (seen(cause)) return;
    const std::string bound = found.exports_lent.empty() ? "" : ", and its symbols are " + found.exports_lent;
    add(make(FindingKind::DeclaredLibrary, Severity::Info)
            .member(member)
            .library(need.name)
            .explain(fmt::format("{} is declared by the image ({}) without a described location or exports: "
                                 "it is taken as present{}.",
                                 need.name, found.label, bound))
            .evidence(std::vector<std::string>{need.where}),
        std::move(cause));
  }

  void missing_version(const resolve::MissingVersion& mv) {
    Cause cause{FindingKind::MissingVersion, object_name(*mv.object), mv.file, mv.version};
    if (!seen(cause)) add(member_missing_version(m_image, mv, object_name(*mv.object)), std::move(cause));
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
    Cause cause{FindingKind::MissingSymbol, member, s.version, s.name};
    if (seen(cause)) return;
    Draft f = make(FindingKind::MissingSymbol, Severity::Info)
                  .member(member)
                  .symbol(s.name)
                  .version(s.version)
                  .library(library)
                  .why(Why::LibraryMissing);
    const std::string pretty = f.peek().demangled.empty() ? s.name : f.peek().demangled;
    f.explain(fmt::format("{} would come from {}, which is {} (see the missing-library finding).", pretty, library,
                          m_unstated.count(library) != 0 ? "not stated by the image" : "missing"));
    add(std::move(f), std::move(cause));
  }

  // A symbol nothing in scope defines: an error (true), or a condition on unknown exports (false).
  bool unbound_symbol(const resolve::Load& load, const resolve::Unbound& u) {
    const elf::Symbol& s = *u.symbol;
    const std::string member = object_name(*u.object);
    if (const auto it = m_certain.find({member, s.version, s.name}); it != m_certain.end()) {
      if (it->second == nullptr) return seen({FindingKind::MissingSymbol, member, s.version, s.name});
      if (!m_root.empty()) it->second->roots.insert(m_root);
      return false;
    }
    const rules::OwnSymbols* own =
        u.unknown.empty() || m_options.rules == nullptr || u.object->source != Object::Source::Wheel
            ? nullptr
            : rules::own_symbol(*m_options.rules, m_wheel.filename.name, s.name);
    // Only its owners may define it (c10d:: is torch's): the libraries without tables outside them are no
    // candidates.
    resolve::Unbound scoped = u;
    const rules::SymbolOwners* owners =
        u.unknown.empty() || m_options.rules == nullptr ? nullptr : rules::symbol_owner(*m_options.rules, s.name);
    if (owners != nullptr) {
      std::erase_if(scoped.unknown, [&](const Object* o) {
        const std::string dist = wheel::normalize_project_name(o->dist.substr(0, o->dist.find(' ')));
        return std::find(owners->distributions.begin(), owners->distributions.end(), dist) ==
               owners->distributions.end();
      });
      // An owner without a table may still define it: the condition stays as it was, naming every candidate.
      if (!scoped.unknown.empty()) scoped.unknown = u.unknown;
    }
    UnknownGroup* group = scoped.unknown.empty() || own != nullptr ? nullptr : unknown_exports(scoped);
    if (own != nullptr) {
      add(own_symbol_finding(m_wheel, u, *own), Cause{FindingKind::MissingSymbol, member, s.version, s.name});
    } else if (group == nullptr) {
      Finding f = unbound_finding(load, scoped);
      if (owners != nullptr && !u.unknown.empty() && scoped.unknown.empty()) {
        f.evidence.push_back("only " + join(owners->distributions, ", ") + " define it (" + owners->why +
                             "): the libraries without export tables in scope are not candidates");
      }
      add(std::move(f), Cause{FindingKind::MissingSymbol, member, s.version, s.name});
    }
    m_certain[{member, s.version, s.name}] = group;
    return group == nullptr;
  }

  // The condition group an unbound symbol joins when objects without export tables may define it; null
  // when they cannot (a library declared to use the C++11 ABI cannot export an old-ABI signature).
  UnknownGroup* unknown_exports(const resolve::Unbound& u) {
    const elf::Symbol& s = *u.symbol;
    if (old_abi_against_cxx11(u)) return nullptr;
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
    auto& group = m_unknown[{object_name(*u.object), fmt::format("{}", fmt::join(who, ", "))}];
    group.why = !may.front()->exports_unknown.empty()
                    ? may.front()->exports_unknown
                    : "its export table could not be read: " + m_space.table_error(*may.front());
    const std::string demangled = cxx::demangle(s.name).value_or("");
    group.symbols.push_back((demangled.empty() ? s.name : demangled) + (s.version.empty() ? "" : "@" + s.version));
    if (group.symbols.size() == 1) group.first_mangled = s.name;
    if (!m_root.empty()) group.roots.insert(m_root);
    return &group;
  }

  // A signature with the pre-C++11 std::string/std::list ABI, where every library that may define it is
  // declared to use the C++11 ABI (PyTorch since 2.7).
  static bool old_abi_against_cxx11(const resolve::Unbound& u) {
    const std::string d = cxx::demangle(u.symbol->name).value_or("");
    const bool old_abi =
        !d.empty() && d.find("std::__cxx11::") == std::string::npos &&
        (d.find("std::string") != std::string::npos || d.find("std::basic_string<") != std::string::npos ||
         d.find("std::list<") != std::string::npos);
    return old_abi && std::all_of(u.unknown.begin(), u.unknown.end(),
                                  [](const Object* o) { return o->cxx11_abi.value_or(false); });
  }

  // The error of an unbound symbol: classified against the export tables of its load scope (load_findings.cpp).
  Finding unbound_finding(const resolve::Load& load, const resolve::Unbound& u) {
    std::vector<const exports::Table*> tables;
    std::vector<std::string> searched;
    if (u.unknown.empty()) {
      for (const Object* o : load.order) {
        if (o == u.object) continue;
        if (const exports::Table* t = table_of(*o)) tables.push_back(t);
        searched.push_back(object_name(*o));
      }
    }
    return unbound_symbol_finding(u, object_name(*u.object), tables, searched);
  }

  // 4. Symbols that only libraries without export tables may define: one condition per member and library.
  void flush_unknown() {
    for (auto& [key, g] : m_unknown) {
      const auto& [member, libraries] = key;
      std::string some;
      for (std::size_t i = 0; i < g.symbols.size() && i < 3; ++i) some += (i ? ", " : "") + g.symbols[i];
      add(make(FindingKind::MissingSymbol, Severity::Condition)
              .why(Why::UnknownExports)
              .member(member)
              .library(libraries)
              .symbol(g.first_mangled)
              .explain(fmt::format("{} symbol{} ({}{}) must come from {}, whose exports are unknown ({}).",
                                   g.symbols.size(), g.symbols.size() == 1 ? "" : "s", some,
                                   g.symbols.size() > 3 ? ", ..." : "", libraries, g.why))
              .fix(g.why.find("published wheel") != std::string::npos
                       ? "let wheelcheck reach the index it names (network), or ship its tables in the db "
                         "(`wheelcheck image fill IMAGE`, on a machine with network)"
                       : "probe the real image (`wheelcheck probe --root /` inside it) so its export tables are known")
              .evidence(g.symbols)
              .roots(std::vector<std::string>(g.roots.begin(), g.roots.end())));
    }
    m_unknown.clear();
  }

  // Worst first, then by member.
  static std::vector<Finding> worst_first(std::vector<Finding> findings) {
    std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
      if (a.severity != b.severity) return static_cast<int>(a.severity) > static_cast<int>(b.severity);
      return a.member < b.member;
    });
    return findings;
  }

  // Members with an error cannot load.
  static void mark_members_that_fail(Report& r) {
    for (auto& m : r.members) {
      for (const auto& f : r.findings) {
        const bool reaches = std::find(f.roots.begin(), f.roots.end(), m.path) != f.roots.end();
        if (f.severity == Severity::Error && (f.member == m.path || reaches)) m.loads = false;
      }
    }
  }

  const WheelProfile& m_wheel;
  const image::Image& m_image;
  const CheckOptions& m_options;
  resolve::Space m_space;
  std::string m_root;  // the member being loaded (check_root), for the findings it surfaces
  bool m_python_fits = true;
  std::vector<std::string> m_environment_notes;  // bash-only environment and host libraries the answer uses  // no
                                                 // tag-python / tag-abi error: some Python of the image installs it
  std::map<std::pair<std::string, std::string>, UnknownGroup> m_unknown;  // (member, libraries) -> symbols
  // (member, version, symbol) of each unbound symbol met -> its condition group, or null for an error
  std::map<std::tuple<std::string, std::string, std::string>, UnknownGroup*> m_certain;
  std::vector<Finding> m_findings;
  std::map<Cause, std::size_t> m_seen;  // a finding's cause -> its index in m_findings
  // A missing-library finding's index -> the symbols the first root to load its object found unbound,
  // and whether another missing library may have provided them.
  std::map<std::size_t, std::pair<std::size_t, bool>> m_symbols_of_missing;
  std::set<std::string> m_wrong_arch;  // members for another machine (wrong-arch errors)
  std::set<std::string> m_unstated;    // needs missing from a partial inventory: conditions, not errors
  std::map<const Object*, std::unique_ptr<exports::Table>> m_wheel_tables;
};

}  // namespace

Report check(const WheelProfile& wheel, const image::Image& image, const CheckOptions& options) {
  if (!image.policy.empty()) return check_policy(wheel, image, options);
  Report r = Checker(wheel, image, options).run();
  if (options.accepted != nullptr) apply_acceptances(r, wheel.filename.filename, image.name, *options.accepted);
  return r;
}

}  // namespace wheelcheck::verdict
