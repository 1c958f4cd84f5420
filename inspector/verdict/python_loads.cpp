// The loads no DT_NEEDED shows: a module of the wheel calls ctypes.CDLL (torch.ops.load_library, ffi.dlopen,
// ...) on a native file (include/wheelcheck/python.hpp says what is read of the source). Each load is judged
// as glibc would judge it, with the same search and binding as a member's own load (resolve::load and
// resolve::bind from a Python process): a needed library nothing provides, a version or symbol nothing
// defines, or a member with an error of its own makes dlopen fail, and ctypes raises OSError.
//
// A load that fails at a module's import makes that import raise OSError, and every import that runs it
// (at the importer's own import, outside a `try` whose `except` catches OSError) raises it too: FlagTree
// #1234's flagcx_wrapper.py, whose OSError escaped FlagGems' `except ImportError` probe, so that `import
// flag_gems` failed. The imports are followed across the wheels installed beside the checked one. Nothing
// is guessed: a load whose argument cannot be evaluated statically is listed as such (info), and one whose
// library the image description does not state is a condition.
#include "inspector/verdict/python_loads.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "wheelcheck/absence.hpp"
#include "wheelcheck/checks.hpp"

namespace wheelcheck::verdict {

namespace {

using resolve::Object;

struct LoadOutcome {
  enum State { Loads, Fails, Unknown };
  State state = Loads;
  std::string why;       // Fails, Unknown: in words
  std::string state_it;  // Unknown: how to state what is missing
};

std::string object_words(const Object& o) {
  if (!o.member.empty()) return o.member;
  if (!o.path.empty()) return o.path;
  return o.soname;
}

// dlopen(RTLD_NOW) of `o` in a Python process: what its load needs, found and bound.
LoadOutcome judge_object(const resolve::Space& space, const image::Image& image,
                         const std::vector<toolkit::Provider>* providers, const Object& o,
                         const std::vector<Finding>& findings) {
  LoadOutcome out;
  // A member's own refusal (an executable stack on glibc 2.41): an error whose member it is.
  for (const auto& f : findings) {
    if (f.severity == Severity::Error && !o.member.empty() && f.member == o.member && f.kind == FindingKind::ExecStack)
      return {LoadOutcome::Fails, o.member + ": " + summary(f), ""};
  }
  const resolve::Load load = resolve::load(space, o);
  for (const auto& need : load.needs) {
    if (need.found != nullptr) continue;
    const Absence gone = absence_of(image, need.name, providers);
    const std::string who = need.requester == &o
                                ? object_words(o)
                                : object_words(*need.requester) + " (which " + object_words(o) + " loads)";
    if (gone.known) return {LoadOutcome::Fails, fmt::format("{} needs {}, which is not found", who, need.name), ""};
    if (out.state == LoadOutcome::Loads)
      out = {LoadOutcome::Unknown, fmt::format("{} needs {}: {}", who, need.name, gone.because), gone.state_it};
  }
  if (out.state != LoadOutcome::Loads) return out;
  const resolve::BindResult bound = resolve::bind(space, load);
  for (const auto& mv : bound.versions)
    return {LoadOutcome::Fails,
            fmt::format("{} needs version {} of {}, which it does not define", object_words(*mv.object), mv.version,
                        mv.file),
            ""};
  for (const auto& u : bound.unbound) {
    if (u.unknown.empty())
      return {
          LoadOutcome::Fails,
          fmt::format("{}: undefined symbol {} (nothing it loads defines it)", object_words(*u.object), u.symbol->name),
          ""};
    if (out.state == LoadOutcome::Loads)
      out = {LoadOutcome::Unknown,
             fmt::format("{}: symbol {} only libraries without export tables may define ({})", object_words(*u.object),
                         u.symbol->name, object_words(*u.unknown.front())),
             "describe those libraries' exports (wheelcheck probe)"};
  }
  for (const auto& u : bound.image_unbound) {
    if (u.unknown.empty())
      return {LoadOutcome::Fails, fmt::format("{}: undefined symbol {}", object_words(*u.object), u.symbol), ""};
  }
  return out;
}

// A load's target, found as dlopen finds it; null with `why` when there is nothing there.
const Object* target_of(const resolve::Space& space, const python::Load& l, std::string& why,
                        std::optional<Object>& by_name) {
  switch (l.target) {
    case python::Load::Target::Wheel: {
      const Object* o = space.at(space.site() + "/" + l.path);
      if (o == nullptr) why = "there is no ELF file at " + space.site() + "/" + l.path + " (nothing installs one)";
      return o;
    }
    case python::Load::Target::Absolute: {
      const Object* o = space.at(l.path);
      if (o == nullptr) why = l.path + " is not among the image's described files";
      return o;
    }
    case python::Load::Target::Name: {
      // dlopen("libx.so.1") searches as a DT_NEEDED entry of the process does: a stand-in that needs it.
      const auto members = space.wheel_members();
      const Object* like = !members.empty() ? members.front() : space.interpreter();
      if (like == nullptr) {
        why = "no object of the wheel or the image says which machine the process is";
        return nullptr;
      }
      by_name.emplace();
      by_name->source = Object::Source::Wheel;
      by_name->machine = like->machine;
      by_name->elf_class = like->elf_class;
      by_name->python_extension = true;
      by_name->path = space.site() + "/.python-load";
      by_name->needed = {l.path};
      return &*by_name;
    }
    case python::Load::Target::Unresolved: break;
  }
  return nullptr;
}

struct ModuleRef {
  const python::Module* module = nullptr;
  bool checked = false;  // of the checked wheel (else of a wheel beside it)
};

// How an import failure reaches a module: the line of the import that runs the failing one.
struct Broken {
  bool certain = true;                  // every step runs at import unconditionally
  const python::Import* via = nullptr;  // null for the module whose own code loads
};

std::string when_words(const python::Load& l) {
  switch (l.when) {
    case python::When::Import: return "at import";
    case python::When::Conditional: return "at import if " + l.condition;
    case python::When::Called: return "when the function around it is called";
    case python::When::Never: return "never at import";
  }
  return "";
}

std::string call_words(const python::Load& l) {
  return l.call + (l.global ? ", RTLD_GLOBAL" : "");
}

// "a/b/__init__.py" -> "a/b/": what a package holds.
std::string module_folder(const std::string& init_file) {
  return init_file.substr(0, init_file.rfind('/') + 1);
}

}  // namespace

std::set<std::string> python_loaded_members(const WheelProfile& wheel) {
  std::set<std::string> out;
  for (const auto& m : wheel.python.modules) {
    for (const auto& l : m.loads) {
      if (l.target == python::Load::Target::Wheel) out.insert(l.path);
    }
  }
  return out;
}

std::vector<const Object*> python_global_loads(const WheelProfile& wheel, const resolve::Space& space) {
  std::vector<const Object*> out;
  for (const auto& m : wheel.python.modules) {
    for (const auto& l : m.loads) {
      if (!l.global || l.when != python::When::Import) continue;
      const Object* o = nullptr;
      if (l.target == python::Load::Target::Wheel) o = space.at(space.site() + "/" + l.path);
      if (l.target == python::Load::Target::Absolute) o = space.at(l.path);
      if (o != nullptr && std::find(out.begin(), out.end(), o) == out.end()) out.push_back(o);
    }
  }
  return out;
}

std::vector<Finding> python_load_findings(const WheelProfile& wheel, const std::vector<const WheelProfile*>& with,
                                          const resolve::Space& space, const image::Image& image,
                                          const std::vector<toolkit::Provider>* providers,
                                          const std::vector<Finding>& findings) {
  std::vector<Finding> out;
  if (!wheel.python.read && wheel.python.files != 0) {
    out.push_back(make(FindingKind::PythonLoad, Severity::Condition)
                      .explain(fmt::format("its {} Python files were not read: a native file they load at import "
                                           "(ctypes.CDLL, torch.ops.load_library) would go unseen, so whether every "
                                           "import works is not known.",
                                           wheel.python.files))
                      .fix("read them: drop --no-python-sources")
                      .evidence(wheel.python.skipped));
  }
  std::map<std::string, ModuleRef> modules;
  for (const auto& m : wheel.python.modules) modules[m.name] = {&m, true};
  for (const WheelProfile* w : with) {
    if (w == &wheel) continue;
    for (const auto& m : w->python.modules) modules.emplace(m.name, ModuleRef{&m, false});
  }
  // The checked wheel's ELF members, for those a failing package holds.
  std::vector<std::string> elf_members;
  for (const auto& m : wheel.members) elf_members.push_back(m.path);

  for (const auto& [name, ref] : modules) {
    for (const auto& l : ref.module->loads) {
      if (l.when == python::When::Never) continue;
      const std::string where = fmt::format("{}:{}", ref.module->file, l.line);
      const std::string evidence = fmt::format("{}: {}({})", where, l.call, l.expression);
      if (l.target == python::Load::Target::Unresolved) {
        if (!ref.checked) continue;
        out.push_back(make(FindingKind::PythonLoad, Severity::Info)
                          .member(ref.module->file)
                          .explain(fmt::format("{} loads a native file {} ({}) that is not resolved statically: {}; "
                                               "what it loads is not checked.",
                                               where, when_words(l), call_words(l), l.unresolved))
                          .evidence(evidence));
        continue;
      }
      std::string missing;
      std::optional<Object> by_name;
      const Object* target = target_of(space, l, missing, by_name);
      LoadOutcome outcome;
      if (target == nullptr) {
        outcome = {l.target == python::Load::Target::Absolute ? LoadOutcome::Unknown : LoadOutcome::Fails, missing,
                   l.target == python::Load::Target::Absolute ? "describe the image's files (wheelcheck probe)" : ""};
      } else {
        outcome = judge_object(space, image, providers, *target, findings);
      }
      const bool at_import = l.when == python::When::Import || l.when == python::When::Conditional;
      const bool handled = python::catches(l.caught, "OSError");
      if (outcome.state == LoadOutcome::Loads || !at_import || handled) {
        if (!ref.checked) continue;
        std::string said = fmt::format("{} loads {} {} ({})", where, l.path, when_words(l), call_words(l));
        if (outcome.state == LoadOutcome::Loads) {
          said += ": it loads here.";
        } else if (!at_import) {
          said += fmt::format(": it would fail here ({}), but not at import: only the call that needs it does.",
                              outcome.why);
        } else {
          said += fmt::format(": it fails here ({}), and the `try` around it catches the OSError.", outcome.why);
        }
        out.push_back(make(FindingKind::PythonLoad, Severity::Info)
                          .member(ref.module->file)
                          .library(l.path)
                          .explain(std::move(said))
                          .evidence(evidence));
        continue;
      }
      // The imports it breaks: the module itself, then every module that imports a broken one.
      std::map<std::string, Broken> broken{{name, Broken{l.when == python::When::Import, nullptr}}};
      for (bool grew = true; grew;) {
        grew = false;
        for (const auto& [other, oref] : modules) {
          if (broken.count(other) != 0) continue;
          for (const auto& imp : oref.module->imports) {
            if (python::catches(imp.caught, "OSError")) continue;
            // `import a.b.c` runs a, a.b and a.b.c.
            std::optional<Broken> hit;
            for (std::size_t dot = 0; dot != std::string::npos;) {
              dot = imp.module.find('.', dot + 1);
              const auto it = broken.find(imp.module.substr(0, dot));
              if (it != broken.end()) {
                hit = Broken{it->second.certain && imp.when == python::When::Import, &imp};
                break;
              }
            }
            if (hit) {
              broken.emplace(other, *hit);
              grew = true;
              break;
            }
          }
        }
      }
      std::vector<std::string> broken_here;  // the checked wheel's, top-level packages first
      bool certain = outcome.state == LoadOutcome::Fails;
      for (const auto& [module, b] : broken) {
        if (modules.at(module).checked) broken_here.push_back(module);
      }
      if (broken_here.empty()) continue;  // a wheel beside it whose failure none of this wheel's imports meets
      std::stable_sort(broken_here.begin(), broken_here.end(), [](const std::string& a, const std::string& b) {
        return std::count(a.begin(), a.end(), '.') < std::count(b.begin(), b.end(), '.');
      });
      std::vector<std::string> roots;
      std::string chain;
      std::size_t said = 0;
      for (const auto& module : broken_here) {
        const ModuleRef& mref = modules.at(module);
        const Broken& b = broken.at(module);
        certain = certain && b.certain;
        roots.push_back(mref.module->file);
        if (mref.module->file.ends_with("/__init__.py")) {
          const std::string folder = module_folder(mref.module->file);
          for (const auto& e : elf_members) {
            if (e.starts_with(folder) && std::find(roots.begin(), roots.end(), e) == roots.end()) roots.push_back(e);
          }
        }
        if (module == name || b.via == nullptr || said >= 4) continue;
        ++said;
        chain += fmt::format(
            ", and with it `import {}` ({}:{} imports {}{})", module, mref.module->file, b.via->line, b.via->module,
            python::catches(b.via->caught, "ImportError") ? "; its `except ImportError` does not catch OSError" : "");
      }
      if (broken_here.size() > said + 1) chain += fmt::format(" ({} imports in all)", broken_here.size());
      const std::string first =
          modules.at(name).checked ? ref.module->file : modules.at(broken_here.front()).module->file;
      const bool error = certain && outcome.state == LoadOutcome::Fails;
      out.push_back(
          make(FindingKind::PythonLoad, error ? Severity::Error : Severity::Condition)
              .member(first)
              .library(l.path)
              .explain(fmt::format("{} loads {} {} ({}), and the load {}: {}. So `import {}` raises OSError{}.", where,
                                   l.path, when_words(l), call_words(l),
                                   outcome.state == LoadOutcome::Fails ? "fails" : "may fail", outcome.why, name,
                                   chain))
              .fix(outcome.state == LoadOutcome::Unknown && !outcome.state_it.empty()
                       ? outcome.state_it
                       : fmt::format("make {} loadable here (its own findings say how), or load it lazily, inside "
                                     "the function that needs it ({}), or catch OSError around the load",
                                     l.path, where))
              .evidence(evidence)
              .roots(std::move(roots)));
    }
  }
  return out;
}

}  // namespace wheelcheck::verdict
