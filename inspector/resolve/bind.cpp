// Symbol binding, as glibc's loader looks symbols up (elf/dl-lookup.c: _dl_lookup_symbol_x).
//
// The scope of a wheel object is the load order of the member being imported (breadth first): its own
// dependencies, and where a need reaches a library Python had already loaded (torch's, when the wheel
// requires torch), that library and the rest of its distribution. Python loads extension modules with
// RTLD_LOCAL, so what the process has loaded but the member does not reach is not in scope. For each
// undefined dynamic symbol of a wheel object that is not weak (a weak reference may stay unresolved)
// and not a section or file symbol:
//   - a versioned reference (foo@GLIBC_2.14, from .gnu.version_r) binds only to a definition of that
//     version, default or hidden; when the defining object has no version definitions at all, glibc
//     accepts its unversioned definition (with a "no version information" warning), and so do we;
//   - an unversioned reference binds to the default definition (foo@@V) or to an unversioned one;
//   - the first object in scope order that defines it wins; a definition that is local, or in a table
//     shared with a newer build beyond `exports_upto` (Ubuntu 24.04's glibc modelled by 2.41's), is not
//     visible;
//   - Py* and _Py* symbols come from the Python interpreter that imports the module.
// A symbol no object defines is unbound; if some object in scope has no export table (a declared
// library), it is unbound with those objects listed, since they may define it.
//
// DT_VERNEED is checked as _dl_check_map_versions does: every version a wheel object needs from a
// library (GLIBC_2.38 from libc.so.6) must be among that library's version definitions, or the object
// does not load at all ("version `GLIBC_2.38' not found"), unless the need is marked weak.
#include <algorithm>
#include <set>
#include <unordered_map>

#include "wheelcheck/resolve.hpp"

namespace wheelcheck::resolve {

bool version_newer(std::string_view a, std::string_view b) {
  const auto us_a = a.find_last_of('_');
  const auto us_b = b.find_last_of('_');
  if (us_a == std::string_view::npos || us_b == std::string_view::npos) return false;
  if (a.substr(0, us_a) != b.substr(0, us_b)) return false;
  std::string_view x = a.substr(us_a + 1), y = b.substr(us_b + 1);
  auto next = [](std::string_view& s, bool& ok) -> long {
    long v = 0;
    std::size_t i = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
    if (i < s.size() && s[i] != '.') ok = false;
    s.remove_prefix(std::min(s.size(), i + 1));
    return v;
  };
  bool ok = true;
  while ((!x.empty() || !y.empty()) && ok) {
    const long p = next(x, ok), q = next(y, ok);
    if (p != q) return ok && p > q;
  }
  return false;
}

bool beyond_ceiling(const Object& o, std::string_view version) {
  if (!o.exports_upto.empty() && version_newer(version, o.exports_upto)) return true;
  return std::any_of(o.declared_upto.begin(), o.declared_upto.end(),
                     [&](const std::string& ceiling) { return version_newer(version, ceiling); });
}

namespace {

struct WheelIndex {
  // name -> (version, hidden) of each exported definition
  std::unordered_map<std::string_view, std::vector<std::pair<std::string_view, bool>>> defs;  // views into the binary
};

bool matches(const Object& o, const std::string& file) {
  if (!o.soname.empty() && o.soname == file) return true;
  const auto slash = o.path.find_last_of('/');
  return !o.path.empty() && o.path.substr(slash == std::string::npos ? 0 : slash + 1) == file;
}

class Binder {
 public:
  explicit Binder(const Space& space) : m_space(space) {}

  // 1: bound, 0: not defined here, -1: unknown (no table)
  int defines(const Object& o, const elf::Symbol& s) { return defines(o, s.name, s.version); }
  int defines(const Object& o, std::string_view name, std::string_view version_needed) {
    struct {
      std::string_view name, version;
    } s{name, version_needed};
    if (o.binary != nullptr) {
      const WheelIndex& idx = index(o);
      auto it = idx.defs.find(s.name);
      if (it == idx.defs.end()) return 0;
      for (const auto& [version, hidden] : it->second) {
        if (s.version.empty() ? (!hidden) : version == s.version) return 1;
      }
      if (!s.version.empty() && o.versions.empty()) {
        for (const auto& [version, hidden] : it->second) {
          if (version.empty()) return 1;
        }
      }
      return 0;
    }
    const exports::Table* t = m_space.table(o);
    if (t == nullptr) return -1;
    const exports::Export* e = t->bind(s.name, s.version);
    if (e == nullptr && !s.version.empty() && t->version_definitions.size() <= 1) e = t->bind(s.name, "");
    if (e == nullptr) return o.exports_partial ? -1 : 0;
    if (!e->version.empty() && beyond_ceiling(o, e->version)) return 0;
    return 1;
  }

  // The versions a library defines, when known (from the description or its table).
  std::optional<std::vector<std::string>> versions_of(const Object& o) {
    if (o.binary != nullptr || !o.versions.empty()) return o.versions;
    if (const exports::Table* t = m_space.table(o)) {
      std::vector<std::string> v;
      for (std::size_t i = 0; i < t->version_definitions.size(); ++i) {
        if (i == 0 && t->version_definitions[i] == t->soname) continue;  // the base definition names the file
        v.push_back(t->version_definitions[i]);
      }
      return v;
    }
    return std::nullopt;
  }

 private:
  const WheelIndex& index(const Object& o) {
    auto it = m_index.find(&o);
    if (it != m_index.end()) return it->second;
    WheelIndex& idx = m_index[&o];
    for (const auto& s : o.binary->symbols) {
      if (!s.exported()) continue;
      idx.defs[s.name].emplace_back(s.version, s.version_hidden);
    }
    return idx;
  }

  const Space& m_space;
  std::unordered_map<const Object*, WheelIndex> m_index;
};

}  // namespace

namespace {

// One undefined symbol of an object in the load, whichever kind of object it is.
struct Reference {
  std::string_view name, version, file;
  bool copy = false;  // a program's copy-relocated data symbol: looked up outside the program
  const elf::Symbol* symbol = nullptr;
};

}  // namespace

BindResult bind(const Space& space, const Load& load) {
  BindResult r;
  Binder binder(space);
  // Global scope first (the interpreter, libc, ...), then the member's own load order.
  std::vector<const Object*> scope = load.global;
  for (const Object* o : load.order) {
    if (std::find(scope.begin(), scope.end(), o) == scope.end()) scope.push_back(o);
  }
  // A program has no Python interpreter in its process: its Py* symbols are its own libraries' to define.
  const Object* interpreter = load.program ? nullptr : space.interpreter();
  const auto& pre = space.preloaded();
  // Binds one reference of `o` against the scope: true when bound; `unknown` lists who may define it.
  auto lookup = [&](const Object& o, std::string_view name, std::string_view version, bool copy,
                    std::vector<const Object*>& unknown) {
    const bool python_api = name.starts_with("Py") || name.starts_with("_Py");
    for (const Object* candidate : scope) {
      if (copy && candidate == &o) continue;
      const int d = binder.defines(*candidate, name, version);
      if (d == 1) {
        if (candidate == interpreter) ++r.interpreter;
        return true;
      }
      // An interpreter without an export table may define only the Python API.
      if (d == -1 && (candidate != interpreter || python_api)) unknown.push_back(candidate);
    }
    if (python_api && interpreter != nullptr && binder.defines(*interpreter, name, version) == -1 &&
        std::find(unknown.begin(), unknown.end(), interpreter) == unknown.end()) {
      unknown.push_back(interpreter);  // not in the global scope: its exports are unknown
    }
    return false;
  };
  // DT_VERNEED of `o`: each non-weak version it needs of a library in scope must be defined there.
  auto check_versions = [&](const Object& o, const std::string& file, const std::string& version) {
    const Object* provider = nullptr;
    for (const Object* candidate : scope) {
      if (matches(*candidate, file)) {
        provider = candidate;
        break;
      }
    }
    if (provider == nullptr) return;  // not loaded: a missing library, reported as such
    const auto versions = binder.versions_of(*provider);
    if (!versions) return;  // unknown: the symbol checks carry the condition
    // A provider without version definitions satisfies every need (glibc warns "no version
    // information available" and binds the unversioned definitions).
    if (versions->empty()) return;
    bool ok = std::find(versions->begin(), versions->end(), version) != versions->end();
    if (ok && beyond_ceiling(*provider, version)) ok = false;
    if (ok) return;
    MissingVersion mv{&o, file, version, provider, {}};
    const std::string family = version.substr(0, version.find_last_of('_') + 1);
    for (const auto& have : *versions) {
      if (have.rfind(family, 0) != 0) continue;
      if (beyond_ceiling(*provider, have)) continue;
      mv.provided.push_back(have);
    }
    std::sort(mv.provided.begin(), mv.provided.end(),
              [](const std::string& a, const std::string& b) { return version_newer(b, a); });
    r.versions.push_back(std::move(mv));
  };
  for (const Object* o : load.order) {
    if (o->binary == nullptr) {
      // The image's and the distributions' libraries this load maps anew are relocated with it, in its
      // scope (RTLD_NOW binds every function); what the process had loaded before was bound then.
      if (std::find(load.global.begin(), load.global.end(), o) != load.global.end()) continue;
      if (o != load.root && std::find(pre.begin(), pre.end(), o) != pre.end()) continue;
      if (std::find(load.imported.begin(), load.imported.end(), o) != load.imported.end()) continue;
      if (o == interpreter) continue;
      for (const auto& vn : o->version_needs) {
        const auto sp = vn.find(' ');
        if (sp != std::string::npos) check_versions(*o, vn.substr(0, sp), vn.substr(sp + 1));
      }
      const exports::Table* t = space.table(*o);
      if (t == nullptr || !t->imports_known) continue;  // its undefined symbols are not known
      // A library whose description leaves its DT_NEEDED unknown (one derived from another build's table:
      // Ubuntu 24.04's libstdc++ modelled by Debian 13's) loads what it needs itself: a versioned symbol of a
      // library nothing in the scope is, it brings along, and is not judged here.
      const bool needs_unknown = o->needed.empty() && !o->dynamic_recorded;
      auto in_scope = [&](std::string_view file) {
        const std::string f(file);
        return std::any_of(load.global.begin(), load.global.end(), [&](const Object* x) { return matches(*x, f); }) ||
               std::any_of(load.order.begin(), load.order.end(), [&](const Object* x) { return matches(*x, f); });
      };
      for (const auto& imp : t->imports) {
        if (needs_unknown && !imp.file.empty() && !in_scope(imp.file)) continue;
        // A derived table's imports beyond the versions the image declares are its donor build's (Debian 12's
        // libstdc++ needs arc4random@GLIBC_2.36; Ubuntu 22.04's, built against glibc 2.35, does not).
        if (o->derived && beyond_ceiling(*o, imp.version)) continue;
        std::vector<const Object*> unknown;
        if (lookup(*o, imp.name, imp.version, false, unknown)) {
          ++r.bound;
        } else {
          r.image_unbound.push_back(
              {o, std::string(imp.name), std::string(imp.version), std::string(imp.file), std::move(unknown)});
        }
      }
      continue;
    }
    for (const auto& s : o->binary->symbols) {
      // A copy-relocated symbol of a program is looked up like an undefined one, outside the program.
      const bool copy = s.defined && s.copy_relocated;
      if ((s.defined && !copy) || s.weak() || s.name.empty()) continue;
      if (s.type == elf::SymbolType::Section || s.type == elf::SymbolType::File) continue;
      std::vector<const Object*> unknown;
      if (lookup(*o, s.name, s.version, copy, unknown)) {
        ++r.bound;
      } else {
        r.unbound.push_back({o, &s, unknown});
      }
    }
    for (const auto& need : o->binary->version_needs) {
      for (const auto& v : need.versions) {
        if ((v.flags & 2) == 0) check_versions(*o, need.file, v.name);  // VER_FLG_WEAK may be missing
      }
    }
  }
  return r;
}

std::optional<std::vector<std::string>> defined_versions(const Space& space, const Object& o) {
  std::vector<std::string> v;
  if (o.binary != nullptr || !o.versions.empty()) {
    v = o.versions;
  } else if (const exports::Table* t = space.table(o)) {
    for (std::size_t i = 0; i < t->version_definitions.size(); ++i) {
      if (i == 0 && t->version_definitions[i] == t->soname) continue;  // the base definition names the file
      v.push_back(t->version_definitions[i]);
    }
  } else {
    return std::nullopt;
  }
  std::erase_if(v, [&](const std::string& x) { return beyond_ceiling(o, x); });
  return v;
}

}  // namespace wheelcheck::resolve
