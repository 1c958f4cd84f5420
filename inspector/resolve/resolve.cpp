// Resolution as glibc's loader does it (elf/dl-load.c: _dl_map_object), over the image's description.
//
// For each DT_NEEDED name of an object being loaded, in the order the object lists them, breadth first
// over the whole tree (the order the loader maps objects, which is also the symbol lookup order):
//   0. A name with a '/' is a path: it is opened as it is, nothing else is searched.
//   1. An object already loaded whose soname, or a name it was loaded as, equals the name is reused.
//      The program interpreter (PT_INTERP of every process: /lib64/ld-linux-x86-64.so.2) is always
//      loaded, so its soname satisfies any DT_NEEDED of that name wherever the file sits. Before a
//      wheel's extension module runs, Python has imported what the wheel Requires-Dist
//      (`import torch` maps torch/lib/*), so those count as loaded.
//   2. DT_RPATH of the requesting object, then of the object that loaded it, and so on up to the root,
//      but only if the requesting object has no DT_RUNPATH (a RUNPATH disables every RPATH for its
//      own needs; RPATHs of loaders do not apply under RUNPATH either).
//   3. LD_LIBRARY_PATH of the image's environment.
//   4. DT_RUNPATH of the requesting object only (RUNPATH is not inherited by what it loads).
//   5. /etc/ld.so.cache, by soname; for a requesting object marked DF_1_NODEFLIB only the entries whose
//      path does not start with a system folder (an ld.so.conf folder such as /usr/local/lib is used).
//   6. The default folders of the arch (Debian: /lib/<triple>, /usr/lib/<triple>, /lib, /usr/lib),
//      unless DF_1_NODEFLIB.
// Every object is searched with its own dynamic section: a wheel's members, the image's libraries and
// the distributions' alike. In folders (2, 3, 4, 6) the file name is the DT_NEEDED name itself; $ORIGIN
// (the folder of the path the object whose entry it is was opened as: a library reached through a
// symbolic link has the link's folder), $LIB and $PLATFORM are expanded, and a ".." out of a folder
// that is a link climbs from where the link leads (the image's loader.dir_links), as the kernel does.
// A program (ET_EXEC, or PIE) is loaded as glibc starts it: itself and what it needs, nothing else in
// the process; an extension module is loaded into the Python process (its interpreter and libc first). A candidate of
// another ELF class or machine is skipped and the search goes on, as the loader does. A library the image declares
// without a known location (a vendor runtime) is taken last, with that said in the evidence.
#include "wheelcheck/resolve.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "wheelcheck/error.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::resolve {

namespace {

std::string normal(const std::string& path) {
  if (path.empty()) return path;
  std::string n = std::filesystem::path(path).lexically_normal().string();
  if (n.size() > 1 && n.back() == '/') n.pop_back();
  return n;
}

std::string dir_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_extension_module(const std::string& member, const elf::Binary& b) {
  for (const auto& s : b.symbols) {
    if (s.defined && s.name.rfind("PyInit_", 0) == 0) return true;
  }
  return member.find(".cpython-") != std::string::npos || member.find(".abi3.so") != std::string::npos;
}

// Where pip puts a member: purelib/platlib go to site-packages, data/scripts/headers under the prefix.
std::string install_path(const std::string& site, const std::string& member) {
  const auto data = member.find(".data/");
  const auto slash = member.find('/');
  if (data != std::string::npos && slash == data + 5) {
    const std::string rest = member.substr(data + 6);
    const std::string prefix = normal(site + "/../../..");
    auto under = [&](std::string_view scheme) { return rest.rfind(std::string(scheme) + "/", 0) == 0; };
    if (under("purelib") || under("platlib")) return normal(site + "/" + rest.substr(rest.find('/') + 1));
    if (under("data")) return normal(prefix + "/" + rest.substr(5));
    if (under("scripts")) return normal(prefix + "/bin/" + rest.substr(8));
    if (under("headers")) return normal(prefix + "/include/" + rest.substr(8));
  }
  return normal(site + "/" + member);
}

std::string requires_dist_name(const std::string& requirement) {
  std::size_t end = 0;
  while (end < requirement.size()) {
    const char c = requirement[end];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) break;
    ++end;
  }
  return wheel::normalize_project_name(requirement.substr(0, end));
}

std::unique_ptr<Object> member_object(const MemberProfile& m, const std::string& site, Object::Source source,
                                      const std::string& wheel_name, const std::string& wheel_project) {
  auto o = std::make_unique<Object>();
  const elf::Binary& b = *m.elf;
  o->source = source;
  o->member = m.path;
  o->wheel = wheel::normalize_project_name(wheel_project);
  o->path = install_path(site, m.path);
  o->label = (source == Object::Source::Wheel ? "member " : "member of " + wheel_name + ": ") + m.path;
  o->soname = b.soname.value_or("");
  o->machine = elf::machine_name(b.machine, b.elf_class, b.endian, b.e_flags);
  o->elf_class = b.elf_class == elf::Class::Elf64 ? 64 : 32;
  o->needed = b.needed;
  o->rpath = b.rpath;
  o->runpath = b.runpath;
  o->flags_1 = b.flags_1;
  for (const auto& d : b.version_definitions) {
    if (!d.base()) o->versions.push_back(d.name);
  }
  o->versions_known = true;
  o->binary = &b;
  if (m.cuda) o->gpu_code = &*m.cuda;
  o->python_extension = is_extension_module(m.path, b);
  return o;
}

// A library the image's description states, an image library or a distribution's (image::Library,
// image::DistLibrary): the facts both record, as the loader sees them.
template <class Described>
std::unique_ptr<Object> described_object(Object::Source source, std::string path, std::string label,
                                         const Described& l) {
  auto o = std::make_unique<Object>();
  o->source = source;
  o->path = std::move(path);
  o->label = std::move(label);
  o->soname = l.soname;
  o->machine = l.machine;
  o->elf_class = l.elf_class;
  o->needed = l.needed;
  o->versions = l.versions;
  o->versions_known = !l.versions.empty() || !l.exports.empty();
  o->rpath = l.rpath;
  o->runpath = l.runpath;
  o->flags_1 = l.flags_1;
  o->version_needs = l.version_needs;
  o->dynamic_recorded = l.dynamic_recorded;
  o->exports_file = l.exports_file;
  o->exports_unknown = l.exports_unknown;
  return o;
}

// What pip installs with the wheel: its Requires-Dist whose markers hold for the image's Python and the
// wheel's variant (a marker that cannot be evaluated counts, as before markers were read; extras never do).
std::set<std::string> pip_installs(const image::Image& image, const image::Python* python, const WheelProfile& wheel) {
  std::set<std::string> required;
  lock::MarkerEnv marker_env = lock::marker_env(image, python);
  lock::set_variant(marker_env, wheel);
  for (const auto& r : wheel.metadata.requires_dist) {
    if (r.find("extra ==") != std::string::npos || r.find("extra==") != std::string::npos) continue;
    const auto req = lock::read_requirement(r);
    if (req.error.empty() && !req.marker.empty()) {
      bool holds = true;
      try {
        holds = lock::evaluate_marker(req.marker, marker_env);
      } catch (const Error&) {
        holds = true;  // a marker that cannot be evaluated counts
      }
      if (!holds) continue;
    }
    required.insert(requires_dist_name(r));
  }
  return required;
}

// The versions the description declares, as version-node ceilings: glibc's GLIBC_X.Y, libstdc++'s GLIBCXX_
// and CXXABI_. They bound the image's own libraries, not the distributions'.
std::vector<std::string> declared_ceilings(const image::Image& image) {
  std::vector<std::string> out;
  const bool glibc = !image.libc_kind.known() || *image.libc_kind.value == "glibc";
  if (glibc && image.libc_version.known()) out.push_back("GLIBC_" + *image.libc_version.value);
  if (image.glibcxx.known()) out.push_back("GLIBCXX_" + *image.glibcxx.value);
  if (image.cxxabi.known()) out.push_back("CXXABI_" + *image.cxxabi.value);
  return out;
}

}  // namespace

Space::Space(const image::Image& image, const WheelProfile& wheel, const std::vector<const WheelProfile*>& with,
             const std::map<std::string, exports::Table>* memory,
             const std::vector<std::pair<std::string, std::string>>& imports_first)
    : m_image(image), m_memory(memory) {
  // The Python the wheel's tags select; with none that fits, the default one stands in (the tag check
  // says the wheel is not for this image).
  m_python = python_for(wheel, image);
  for (const auto& p : image.pythons) {
    if (m_python == nullptr && !p.site_packages.empty()) m_python = &p;
  }
  if (m_python != nullptr) m_site = m_python->site_packages.front();
  if (m_site.empty()) m_site = "/site-packages";
  const std::vector<std::string> declared = declared_ceilings(image);
  for (const auto& l : image.libraries) {
    auto o = described_object(Object::Source::Image, l.path,
                              "image library" + (l.layer.empty() ? "" : " (" + l.layer + ")"), l);
    o->exports_upto = l.exports_upto;
    o->declared_upto = declared;
    if (!l.exports_lent.empty()) {  // another build's table: what it lacks is unknown, not absent
      o->exports_partial = true;
      o->exports_lent = l.exports_lent;
      if (o->exports_unknown.empty())
        o->exports_unknown = "its table is an earlier build's, a floor of its own (" + l.exports_lent + ")";
    }
    o->host = l.host;
    o->derived = l.origin == image::Origin::Derived;
    add(std::move(o), l.names);
  }
  {
    // The interpreter: the Python whose site-packages the wheel goes to.
    auto o = std::make_unique<Object>();
    o->source = Object::Source::Image;
    o->label = "the Python interpreter";
    o->exports_unknown = "the image describes no Python interpreter";
    for (const auto& p : image.pythons) {
      if (&p != m_python) continue;
      o->label = "the Python " + p.version + " interpreter" + (p.executable.empty() ? "" : " (" + p.executable + ")");
      o->path = p.executable;
      o->needed = p.needed;
      o->exports_file = p.exports_file;
      o->exports_unknown =
          p.exports_file.empty() ? "the exports of the image's Python " + p.version + " are not described" : "";
      if (p.exports_file.empty() && !p.stable_abi_file.empty()) {
        o->exports_file = p.stable_abi_file;
        o->exports_partial = true;
        o->exports_unknown = "of the image's Python " + p.version + " only the stable ABI is known";
      }
      break;
    }
    m_interpreter = o.get();
    m_objects.push_back(std::move(o));
  }
  std::set<std::string> required = pip_installs(image, m_python, wheel);
  // Imported first without a Requires-Dist (a rule set says so): why, for the note.
  std::map<std::string, std::string> imported;
  for (const auto& [name, why] : imports_first) {
    if (required.insert(name).second) imported[name] = why;
  }
  auto why_first = [&](const std::string& name) {
    const auto it = imported.find(wheel::normalize_project_name(name));
    return it == imported.end() ? "the wheel Requires-Dist " + name
                                : "the wheel's package imports " + name + " first (" + it->second + ")";
  };
  // pip uninstalls a distribution before it installs another build of it: the image's torch is gone once
  // a torch wheel is installed beside (or as) the checked wheel, and `import torch` loads the new one.
  std::map<std::string, const WheelProfile*> installed{{wheel::normalize_project_name(wheel.filename.name), &wheel}};
  for (const WheelProfile* w : with) installed.emplace(wheel::normalize_project_name(w->filename.name), w);
  for (const auto& d : image.distributions) {
    if (const auto it = installed.find(wheel::normalize_project_name(d.name)); it != installed.end()) {
      const WheelProfile& by = *it->second;
      m_replaced_notes.push_back(fmt::format(
          "{} {} {} replaces the image's {} {} (pip uninstalls it first)", by.filename.name, by.filename.version,
          &by == &wheel ? "(this wheel)" : "(installed beside it)", d.name, d.version));
      continue;
    }
    if (!d.filled_from.empty()) {
      m_replaced_notes.push_back(
          fmt::format("the export tables of {} {} (the image's) were read from its published "
                      "wheel {}",
                      d.name, d.version, d.filled_from));
    }
    const bool pre = required.count(wheel::normalize_project_name(d.name)) != 0;
    for (const auto& l : d.libraries) {
      auto o = described_object(Object::Source::Distribution, normal(d.location + "/" + l.path),
                                d.name + " " + d.version, l);
      o->dist = o->label;
      if (o->exports_unknown.empty()) o->exports_unknown = d.exports_unknown;
      o->cxx11_abi = d.cxx11_abi;
      const Object* raw = o.get();
      add(std::move(o), {});
      if (pre) m_preloaded.push_back(raw);
    }
    if (pre) {
      m_preloaded_notes.push_back(why_first(d.name) + ": `import " + d.name + "` loads its " +
                                  std::to_string(d.libraries.size()) + " libraries before the wheel's modules");
    }
  }
  for (const WheelProfile* w : with) {
    if (w == &wheel) continue;
    const bool pre = required.count(wheel::normalize_project_name(w->filename.name)) != 0;
    std::size_t libraries = 0;
    for (const auto& m : w->members) {
      if (!m.elf || m.elf->type != elf::FileType::Shared) continue;
      auto o = member_object(m, m_site, Object::Source::WithWheel, w->filename.filename, w->filename.name);
      o->dist = w->filename.name + " " + w->filename.version;
      const Object* raw = o.get();
      const bool library = !raw->python_extension;
      add(std::move(o), {});
      // `import torch` loads torch's own libraries (its extension module's tree); an extension module of
      // it is no provider of symbols to another module (RTLD_LOCAL).
      if (pre && library) {
        m_preloaded.push_back(raw);
        ++libraries;
      }
    }
    if (pre) {
      m_preloaded_notes.push_back(
          fmt::format("{}: `import {}` loads the {} libraries of {} (installed beside it) before the wheel's modules",
                      why_first(w->filename.name), w->filename.name, libraries, w->filename.filename));
    }
  }
  // `import torch` runs torch/__init__.py first: its preloads (inspector/resolve/preloads.cpp).
  if (required.count("torch") != 0) {
    const WheelProfile* beside = nullptr;
    for (const WheelProfile* w : with) {
      if (w != &wheel && wheel::normalize_project_name(w->filename.name) == "torch") beside = w;
    }
    const image::Distribution* d = image.distribution("torch");
    if (beside != nullptr) {
      add_torch_preloads("torch " + beside->filename.version, beside->filename.version);
    } else if (d != nullptr && installed.count("torch") == 0) {
      add_torch_preloads(d->name + " " + d->version, d->version);
    }
  }
  for (const auto& m : wheel.members) {
    if (m.elf) add(member_object(m, m_site, Object::Source::Wheel, wheel.filename.filename, wheel.filename.name), {});
  }
}

void Space::add(std::unique_ptr<Object> o, const std::vector<std::string>& names) {
  const Object* raw = o.get();
  if (o->path.empty()) {
    if (!o->soname.empty()) m_declared.emplace(o->soname, raw);
  } else {
    // By every name as written and as the kernel reaches it, so that a path built through a linked
    // folder ("/lib/x86_64-linux-gnu/../x") finds what is there.
    m_by_path[normal(o->path)] = raw;
    m_by_path.emplace(physical(o->path), raw);
    for (const auto& n : names) {
      m_by_path[normal(n)] = raw;
      m_by_path.emplace(physical(n), raw);
    }
  }
  m_objects.push_back(std::move(o));
}

std::string Space::physical(const std::string& path) const {
  const auto& links = m_image.loader.dir_links;
  if (links.empty() || path.empty() || path[0] != '/') return normal(path);
  std::vector<std::string> parts;
  for (const auto& p : split(path, "/", false)) parts.emplace_back(p);
  std::string cur = "/";
  int followed = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      cur = dir_of(cur);
      continue;
    }
    cur = cur == "/" ? "/" + part : cur + "/" + part;
    // The last part is the file: its own links are the names the model already has.
    if (i + 1 == parts.size()) break;
    for (auto it = links.find(cur); it != links.end() && followed < 40; it = links.find(cur), ++followed) {
      cur = it->second;
    }
  }
  return cur;
}

std::vector<const Object*> Space::wheel_members() const {
  std::vector<const Object*> out;
  for (const auto& o : m_objects) {
    if (o->source == Object::Source::Wheel) out.push_back(o.get());
  }
  return out;
}

const Object* Space::at(const std::string& path) const {
  // Without "..", the path as written reaches what the kernel reaches; with it, only the kernel's way
  // counts (a ".." out of a linked folder climbs from where the link leads).
  const bool climbs = !m_image.loader.dir_links.empty() && path.find("..") != std::string::npos;
  auto it = m_by_path.find(climbs ? physical(path) : normal(path));
  return it == m_by_path.end() ? nullptr : it->second;
}

std::vector<const Object*> Space::declared(const std::string& soname) const {
  std::vector<const Object*> out;
  auto [b, e] = m_declared.equal_range(soname);
  for (auto it = b; it != e; ++it) out.push_back(it->second);
  return out;
}

std::string Space::table_error(const Object& o) const {
  auto it = m_table_errors.find(&o);
  return it == m_table_errors.end() ? std::string() : it->second;
}

const exports::Table* Space::table(const Object& o) const {
  if (o.exports_file.empty()) return nullptr;
  if (o.exports_file.rfind("mem:", 0) == 0) {
    if (m_memory == nullptr) return nullptr;
    auto m = m_memory->find(o.exports_file.substr(4));
    return m == m_memory->end() ? nullptr : &m->second;
  }
  auto it = m_tables.find(&o);
  if (it != m_tables.end()) return it->second.get();
  std::unique_ptr<exports::Table> t;
  try {
    t = std::make_unique<exports::Table>(exports::load_table(o.exports_file));
  } catch (const Error& e) {
    m_table_errors[&o] = e.what();
  }
  const exports::Table* raw = t.get();
  m_tables[&o] = std::move(t);
  return raw;
}

namespace {

constexpr std::uint64_t k_df_1_nodeflib = 0x800;

struct Loading {
  const Space& space;
  std::string lib_token;               // what $LIB expands to for this image
  std::string platform;                // the architecture
  std::vector<std::string> platforms;  // what $PLATFORM may expand to: it depends on the CPU
  std::vector<const Object*> order;
  std::map<const Object*, const Object*> loader_of;  // who loaded it (for the RPATH chain)
  std::map<const Object*, std::string> opened_as;    // the path it was opened as: its $ORIGIN's folder
  std::multimap<std::string, const Object*> loaded_as;

  bool compatible(const Object& candidate, const Object& requester) const {
    if (candidate.machine.empty() || requester.machine.empty()) return true;
    return candidate.machine == requester.machine && candidate.elf_class == requester.elf_class;
  }

  // $ORIGIN is the folder of the path the object was opened as (glibc's l_origin, from the name it
  // opened, symbolic links not resolved), not of the file a link leads to.
  std::string origin_of(const Object& o) const {
    auto it = opened_as.find(&o);
    return dir_of(it != opened_as.end() ? it->second : o.path);
  }

  // One search path entry: its folder, or with $PLATFORM each folder it may name (the loader gives
  // every $PLATFORM of an entry the same value); found under only some of those values, the need says
  // which (the runner's CPU decides).
  const Object* try_entry(const Attempt& rule, const Object& owner, const std::string& name, const Object& requester,
                          Need& need) const {
    static constexpr std::string_view k_platform = "$PLATFORM";
    const std::string dir = expand_tokens(rule.entry, origin_of(owner), lib_token);
    if (dir.find(k_platform) == std::string::npos) return try_dir(dir, name, requester, rule, need);
    const Object* first = nullptr;
    Attempt by;
    std::string where;
    std::vector<std::string> under;
    for (const auto& value : platforms) {
      std::string d = dir;
      for (auto p = d.find(k_platform); p != std::string::npos; p = d.find(k_platform, p + value.size())) {
        d.replace(p, k_platform.size(), value);
      }
      Attempt a = rule;
      a.platform = value;
      if (const Object* o = try_dir(d, name, requester, a, need)) {
        if (first == nullptr) {
          first = o;
          where = need.where;
          by = need.by;
        }
        under.push_back(value);
      }
    }
    if (first != nullptr) {
      need.where = where;
      need.by = by;
      if (under.size() != platforms.size()) need.platforms = under;
    }
    return first;
  }

  // One folder: the file `name` in it, if the model has it and it fits the requester.
  const Object* try_dir(const std::string& dir, const std::string& name, const Object& requester, Attempt a,
                        Need& need) const {
    a.path = normal(dir + "/" + name);
    const Object* o = space.at(dir + "/" + name);
    if (o == nullptr) {
      a.result = Attempt::Result::NoFile;
      need.tried.push_back(std::move(a));
      return nullptr;
    }
    if (!compatible(*o, requester)) {
      a.result = Attempt::Result::OtherClass;
      a.detail = o->machine + "/" + std::to_string(o->elf_class) + "-bit where " + requester.machine + "/" +
                 std::to_string(requester.elf_class) + "-bit is needed";
      need.tried.push_back(std::move(a));
      return nullptr;
    }
    a.result = Attempt::Result::Found;
    need.where = a.path;
    need.by = std::move(a);
    return o;
  }

  static Attempt rule_of(How how, std::string entry, std::string owner = "") {
    Attempt a;
    a.rule = how;
    a.entry = std::move(entry);
    a.owner = std::move(owner);
    return a;
  }

  static void skipped(Need& need, How how, std::string why) {
    Attempt a = rule_of(how, "");
    a.result = Attempt::Result::Skipped;
    a.detail = std::move(why);
    need.tried.push_back(std::move(a));
  }

  // glibc's system folders, each ending in '/': under DF_1_NODEFLIB an ld.so.cache entry whose path
  // starts with one is refused (a prefix of the text: "/usr/lib/" refuses "/usr/lib/x86_64-linux-gnu/blas/").
  bool in_system_dir(const std::string& path) const {
    for (const auto& d : space.image().loader.default_dirs) {
      const std::string prefix = d.ends_with("/") ? d : d + "/";
      if (path.rfind(prefix, 0) == 0) return true;
    }
    return false;
  }

  Need search(const std::string& name, const Object& requester) {
    Need need;
    need.requester = &requester;
    need.name = name;
    const image::Image& im = space.image();
    // 0. A path.
    if (name.find('/') != std::string::npos) {
      need.rule = How::Path;
      const std::string path = name[0] == '/' ? name : origin_of(requester) + "/" + name;
      Attempt a = rule_of(How::Path, name);
      a.path = normal(path);
      need.found = space.at(path);
      a.result = need.found != nullptr ? Attempt::Result::Found : Attempt::Result::NoFile;
      if (need.found != nullptr) {
        need.where = normal(path);
        need.by = a;
      } else {
        need.tried.push_back(a);
      }
      return need;
    }
    // 1. Already loaded.
    auto [b, e] = loaded_as.equal_range(name);
    for (auto it = b; it != e; ++it) {
      if (compatible(*it->second, requester)) {
        need.found = it->second;
        need.rule = How::AlreadyLoaded;
        need.where = it->second->path;
        need.by = rule_of(How::AlreadyLoaded, name);
        need.by.path = need.where;
        need.by.result = Attempt::Result::Found;
        return need;
      }
    }
    // 2. RPATH chain, only without RUNPATH.
    if (requester.runpath.empty()) {
      for (const Object* o = &requester; o != nullptr;) {
        for (const auto& entry : o->rpath) {
          const Attempt rule = rule_of(How::Rpath, entry, o == &requester ? "" : o->path);
          if ((need.found = try_entry(rule, *o, name, requester, need)) != nullptr) {
            need.rule = How::Rpath;
            return need;
          }
        }
        auto up = loader_of.find(o);
        o = up == loader_of.end() ? nullptr : up->second;
      }
    } else if (!requester.rpath.empty()) {
      skipped(need, How::Rpath, "the object has DT_RUNPATH, which disables DT_RPATH");
    }
    // 3. LD_LIBRARY_PATH.
    for (const auto& dir : im.loader.ld_library_path) {
      if ((need.found = try_dir(dir, name, requester, rule_of(How::LdLibraryPath, dir), need)) != nullptr) {
        need.rule = How::LdLibraryPath;
        return need;
      }
    }
    // 4. RUNPATH of the requester only.
    for (const auto& entry : requester.runpath) {
      if ((need.found = try_entry(rule_of(How::Runpath, entry), requester, name, requester, need)) != nullptr) {
        need.rule = How::Runpath;
        return need;
      }
    }
    const bool nodeflib = (requester.flags_1 & k_df_1_nodeflib) != 0;
    // 5. ld.so.cache; under DF_1_NODEFLIB only its entries outside the system folders.
    bool in_cache = false;
    for (const auto& c : im.loader.cache) {
      if (c.soname != name) continue;
      in_cache = true;
      Attempt a = rule_of(How::LdSoCache, name);
      a.path = c.path;
      a.detail = c.arch;
      if (nodeflib && in_system_dir(c.path)) {
        a.result = Attempt::Result::Skipped;
        a.detail = "DF_1_NODEFLIB refuses an entry in a system folder";
        need.tried.push_back(std::move(a));
        continue;
      }
      const Object* o = space.at(c.path);
      if (o != nullptr && compatible(*o, requester)) {
        need.found = o;
        need.rule = How::LdSoCache;
        need.where = c.path;
        a.result = Attempt::Result::Found;
        need.by = std::move(a);
        return need;
      }
      a.result = o == nullptr ? Attempt::Result::NotInFiles : Attempt::Result::OtherClass;
      need.tried.push_back(std::move(a));
    }
    if (!in_cache && !im.loader.cache_format.empty() && im.loader.cache_format != "none") {
      Attempt a = rule_of(How::LdSoCache, name);
      a.result = Attempt::Result::NoFile;
      a.detail = "no entry for " + name;
      need.tried.push_back(std::move(a));
    }
    // 6. Default folders, unless DF_1_NODEFLIB.
    if (nodeflib) {
      skipped(need, How::DefaultPath, "DF_1_NODEFLIB");
    } else {
      for (const auto& dir : im.loader.default_dirs) {
        if ((need.found = try_dir(dir, name, requester, rule_of(How::DefaultPath, dir), need)) != nullptr) {
          need.rule = How::DefaultPath;
          return need;
        }
      }
    }
    // A library the image declares without a location.
    for (const Object* o : space.declared(name)) {
      if (compatible(*o, requester)) {
        need.found = o;
        need.rule = How::Declared;
        need.where = "declared by the image (" + o->label + "), location not described";
        need.by = rule_of(How::Declared, name);
        need.by.result = Attempt::Result::Found;
        need.by.detail = o->label;
        return need;
      }
    }
    return need;
  }

  // What later DT_NEEDED names match (_dl_name_match_p): the soname, and the name it was loaded as;
  // an object without a soname also by its file name. A Python distribution's library is matched by its
  // file name too: pip's torch names each file by its soname (torch/lib/libc10.so), and the db's
  // stand-in layers put other builds' files (Debian's libc10.so.2.14) at pip's paths.
  void mark_loaded(const Object* o, const std::string& as) {
    if (!o->soname.empty()) loaded_as.emplace(o->soname, o);
    if ((o->soname.empty() || o->source == Object::Source::Distribution) && !o->path.empty())
      loaded_as.emplace(base_of(o->path), o);
    if (!as.empty()) loaded_as.emplace(as, o);
  }
};

// The glibc program interpreter of an architecture (its PT_INTERP, the System V psABI's path).
std::string program_interpreter(const std::string& arch) {
  static const std::map<std::string, std::string> paths = {{"x86_64", "/lib64/ld-linux-x86-64.so.2"},
                                                           {"i686", "/lib/ld-linux.so.2"},
                                                           {"aarch64", "/lib/ld-linux-aarch64.so.1"},
                                                           {"ppc64le", "/lib64/ld64.so.2"},
                                                           {"ppc64", "/lib64/ld64.so.1"},
                                                           {"s390x", "/lib/ld64.so.1"},
                                                           {"armv7l", "/lib/ld-linux-armhf.so.3"},
                                                           {"riscv64", "/lib/ld-linux-riscv64-lp64d.so.1"}};
  auto it = paths.find(arch);
  return it == paths.end() ? "" : it->second;
}

std::string lib_token_of(const image::Image& im) {
  if (!im.loader.default_dirs.empty()) {
    std::string d = im.loader.default_dirs.front();
    if (!d.empty() && d[0] == '/') d.erase(0, 1);
    return d;
  }
  return "lib";
}

}  // namespace

Load load(const Space& space, const Object& root) {
  Loading st{space, lib_token_of(space.image()), space.image().arch.value.value_or(root.machine), {}, {}, {}, {}, {}};
  st.platforms = platform_values(st.platform);
  Load result;
  result.root = &root;
  result.program = root.binary != nullptr && !root.python_extension && is_program(*root.binary);
  // A program has only what it needs; a module is imported into a Python process that loaded the
  // distributions the wheel requires first.
  static const std::vector<const Object*> k_nothing;
  const auto& pre = result.program ? k_nothing : space.preloaded();
  const Object* rtld = nullptr;  // the program interpreter: in every process, at the end of the global scope
  if (const std::string interp = program_interpreter(st.platform); !interp.empty()) {
    if (const Object* o = space.at(interp); o != nullptr && st.compatible(*o, root)) {
      st.mark_loaded(o, "");
      rtld = o;
    }
  }
  // The process: the interpreter and what it loaded (libc, libm, ...) are loaded and global before any
  // module is imported; without a described interpreter, at least the C library is.
  if (!result.program) {
    Object process;
    process.machine = root.machine;
    process.elf_class = root.elf_class;
    const Object* py = space.interpreter();
    if (py != nullptr && (!py->exports_file.empty() || !py->needed.empty())) {
      result.global.push_back(py);
      process.path = py->path;
    }
    const std::vector<std::string> libc{"libc.so.6"};
    for (const auto& name : py != nullptr && !py->needed.empty() ? py->needed : libc) {
      Need need = st.search(name, process);
      if (need.found == nullptr) continue;
      if (std::find(result.global.begin(), result.global.end(), need.found) == result.global.end())
        result.global.push_back(need.found);
      st.opened_as.emplace(need.found, need.where);
      st.mark_loaded(need.found, name);
    }
    // libc needs it (__tls_get_addr, _rtld_global_ro): the loader itself is in the global scope, found
    // by its soname where the description has it elsewhere than its PT_INTERP path.
    if (const std::string interp = program_interpreter(st.platform); rtld == nullptr && !interp.empty()) {
      if (Need need = st.search(base_of(interp), process); need.found != nullptr) {
        rtld = need.found;
        st.mark_loaded(rtld, base_of(interp));
      }
    }
    if (rtld != nullptr && !result.global.empty() &&
        std::find(result.global.begin(), result.global.end(), rtld) == result.global.end())
      result.global.push_back(rtld);
  }
  for (const Object* p : pre) st.mark_loaded(p, "");
  // What the wheel's Python code loaded RTLD_GLOBAL (Space::python_globals): loaded, global with what it loads.
  std::vector<const Object*> globals;
  for (const Object* g : result.program ? k_nothing : space.python_globals()) {
    if (g != &root) globals.push_back(g), st.mark_loaded(g, "");
  }
  // `import torch` also loaded what torch's libraries need (the nvidia-* wheels its RUNPATH reaches):
  // loaded under the names they were found by, though not in the module's scope until a need reaches them.
  const bool provider_root = std::find(pre.begin(), pre.end(), &root) != pre.end();
  if (!provider_root) {
    std::vector<const Object*> imported(pre.begin(), pre.end());
    imported.insert(imported.end(), globals.begin(), globals.end());
    // One loaded RTLD_GLOBAL (libtorch_global_deps.so, inspector/resolve/preloads.cpp) makes what it loads global.
    std::set<const Object*> made_global(globals.begin(), globals.end());
    for (const Object* p : pre) {
      if (p->rtld_global) made_global.insert(p);
    }
    for (std::size_t i = 0; i < imported.size(); ++i) {
      for (const auto& name : imported[i]->needed) {
        Need need = st.search(name, *imported[i]);
        if (need.found != nullptr && made_global.count(imported[i]) != 0) made_global.insert(need.found);
        if (need.found == nullptr || need.rule == How::AlreadyLoaded) continue;
        st.loader_of.emplace(need.found, imported[i]);
        st.opened_as.emplace(need.found, need.where);
        st.mark_loaded(need.found, name);
        if (std::find(imported.begin(), imported.end(), need.found) == imported.end()) imported.push_back(need.found);
      }
    }
    for (const Object* o : imported) {
      if (made_global.count(o) != 0 && std::find(result.global.begin(), result.global.end(), o) == result.global.end())
        result.global.push_back(o);
    }
    result.imported = std::move(imported);
  }
  st.mark_loaded(&root, "");
  st.order.push_back(&root);
  auto in_order = [&](const Object* o) { return std::find(st.order.begin(), st.order.end(), o) != st.order.end(); };
  for (std::size_t i = 0; i < st.order.size(); ++i) {
    const Object* o = st.order[i];
    // What Python imported before is loaded with its own dependencies: its needs are not searched again.
    if (o != &root && std::find(pre.begin(), pre.end(), o) != pre.end()) continue;
    for (const auto& name : o->needed) {
      Need need = st.search(name, *o);
      if (need.found != nullptr && !in_order(need.found)) {
        // A dependency joins the lookup scope where breadth-first order puts it, an already loaded one
        // too; an imported distribution's library brings the rest of that distribution (its own tree).
        st.order.push_back(need.found);
        if (need.rule != How::AlreadyLoaded) {
          st.loader_of[need.found] = o;
          st.opened_as.emplace(need.found, need.where);
        }
        if (std::find(pre.begin(), pre.end(), need.found) != pre.end()) {
          for (const Object* p : pre) {
            if (p->dist == need.found->dist && !in_order(p)) st.order.push_back(p);
          }
        }
      }
      if (need.found != nullptr && need.rule != How::AlreadyLoaded) st.mark_loaded(need.found, name);
      result.needs.push_back(std::move(need));
    }
  }
  result.order = st.order;
  return result;
}

}  // namespace wheelcheck::resolve
