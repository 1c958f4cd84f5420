// Image descriptions: JSON in and out (the list of what is unknown: assume.cpp).
//
// JSON conventions (docs/image.schema.json): a fact is either a bare string ("arch": "x86_64", known,
// with the document's origin) or an object {"value": "2.36" | "unknown", "note": "...", "origin": "..."};
// "unknown" is the one value that means the fact is not known, and its note says why.
#include <algorithm>
#include <set>
#include <utility>

#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::image {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

std::string origin_name(Origin origin) {
  switch (origin) {
    case Origin::Declared: return "declared";
    case Origin::Probed: return "probed";
    case Origin::Derived: return "derived";
    case Origin::Assumed: return "assumed";
  }
  return "declared";
}

Origin parse_origin(std::string_view text) {
  if (text == "declared") return Origin::Declared;
  if (text == "probed") return Origin::Probed;
  if (text == "derived") return Origin::Derived;
  if (text == "assumed") return Origin::Assumed;
  throw bad_input("unknown origin \"" + std::string(text) + "\" (expected declared, probed, derived or assumed)");
}

std::string image_kind_name(ImageKind kind) {
  return kind == ImageKind::Layer ? "layer" : "image";
}

ImageKind parse_image_kind(std::string_view text) {
  if (text == "image") return ImageKind::Image;
  if (text == "layer") return ImageKind::Layer;
  throw bad_input("unknown kind \"" + std::string(text) + "\" (expected \"image\" or \"layer\")");
}

std::string image_status_name(ImageStatus status) {
  return status == ImageStatus::Planned ? "planned" : "current";
}

ImageStatus parse_image_status(std::string_view text) {
  if (text == "current") return ImageStatus::Current;
  if (text == "planned") return ImageStatus::Planned;
  throw bad_input("unknown status \"" + std::string(text) + "\" (expected \"current\" or \"planned\")");
}

namespace {

constexpr std::pair<ToolkitKind, std::string_view> k_toolkit_names[] = {
    {ToolkitKind::Cuda, "cuda"}, {ToolkitKind::Maca, "maca"},       {ToolkitKind::Cann, "cann"},
    {ToolkitKind::Dtk, "dtk"},   {ToolkitKind::Tops, "tops"},       {ToolkitKind::Musa, "musa"},
    {ToolkitKind::Ppu, "ppu"},   {ToolkitKind::Neuware, "neuware"}, {ToolkitKind::Corex, "corex"},
    {ToolkitKind::Xre, "xre"},   {ToolkitKind::Tangrt, "tangrt"},   {ToolkitKind::Tsm, "tsm"}};
constexpr std::pair<ToolkitKind, std::string_view> k_toolkit_vendors[] = {
    {ToolkitKind::Cuda, "NVIDIA"},   {ToolkitKind::Maca, "MetaX"},        {ToolkitKind::Cann, "Ascend"},
    {ToolkitKind::Dtk, "Hygon"},     {ToolkitKind::Tops, "Enflame"},      {ToolkitKind::Musa, "Moore Threads"},
    {ToolkitKind::Ppu, "T-Head"},    {ToolkitKind::Neuware, "Cambricon"}, {ToolkitKind::Corex, "Iluvatar"},
    {ToolkitKind::Xre, "Kunlunxin"}, {ToolkitKind::Tangrt, "Sunrise"},    {ToolkitKind::Tsm, "TsingMicro"}};

}  // namespace

std::string toolkit_kind_name(ToolkitKind kind) {
  for (const auto& [k, name] : k_toolkit_names) {
    if (k == kind) return std::string(name);
  }
  return "cuda";
}

std::string toolkit_vendor(ToolkitKind kind) {
  for (const auto& [k, name] : k_toolkit_vendors) {
    if (k == kind) return std::string(name);
  }
  return "NVIDIA";
}

ToolkitKind parse_toolkit_kind(std::string_view text) {
  std::vector<std::string> names;
  for (const auto& [k, name] : k_toolkit_names) {
    if (name == text) return k;
    names.emplace_back(name);
  }
  throw bad_input("unknown toolkit \"" + std::string(text) + "\" (expected " + join(names, ", ") + ")");
}

Fact Fact::known_as(std::string value, std::string note, Origin origin) {
  Fact f;
  f.value = std::move(value);
  f.note = std::move(note);
  f.origin = origin;
  f.set = true;
  return f;
}

Fact Fact::unknown(std::string why, Origin origin) {
  Fact f;
  f.note = std::move(why);
  f.origin = origin;
  f.set = true;
  return f;
}

const Distribution* Image::distribution(std::string_view wanted) const {
  const std::string key = wheel::normalize_project_name(wanted);
  for (const auto& d : distributions) {
    if (wheel::normalize_project_name(d.name) == key) return &d;
  }
  return nullptr;
}

// --- JSON out --------------------------------------------------------------------------------------

namespace {

thread_local bool g_provenance = false;  // set for the duration of one to_json call (single-threaded use)

ojson fact_json(const Fact& f, Origin doc_origin) {
  if (!g_provenance && f.known() && f.note.empty() && f.origin == doc_origin) return *f.value;
  ojson j = ojson::object();
  j["value"] = f.known() ? *f.value : "unknown";
  if (!f.note.empty()) j["note"] = f.note;
  if (g_provenance || f.origin != doc_origin) j["origin"] = origin_name(f.origin);
  if (g_provenance && !f.layer.empty()) j["layer"] = f.layer;
  return j;
}

ojson strings(const std::vector<std::string>& v) {
  return ojson(v);
}

// What an image library and a distribution's library both say about the file (after its path).
template <class L>
void library_facts_json(ojson& j, const L& l) {
  if (!l.soname.empty()) j["soname"] = l.soname;
  if (!l.machine.empty()) j["machine"] = l.machine;
  if (l.elf_class != 0) j["class"] = l.elf_class;
  if (!l.needed.empty()) j["needed"] = strings(l.needed);
  if (!l.versions.empty()) j["versions"] = strings(l.versions);
  if (!l.exports.empty()) j["exports"] = l.exports;
  if (!l.exports_unknown.empty()) j["exports_unknown"] = l.exports_unknown;
  if (!l.version_needs.empty()) j["version_needs"] = strings(l.version_needs);
  if (!l.rpath.empty()) j["rpath"] = strings(l.rpath);
  if (!l.runpath.empty()) j["runpath"] = strings(l.runpath);
  if (l.flags_1 != 0) j["flags_1"] = l.flags_1;
  if (l.dynamic_recorded) j["dynamic_recorded"] = true;
}

ojson library_json(const Library& l, Origin doc_origin) {
  ojson j = ojson::object();
  if (!l.path.empty()) j["path"] = l.path;
  if (!l.names.empty() && !(l.names.size() == 1 && l.names[0] == l.path)) j["names"] = strings(l.names);
  library_facts_json(j, l);
  if (!l.exports_upto.empty()) j["exports_upto"] = l.exports_upto;
  if (!l.exports.empty() && !l.exports_lent.empty()) j["exports_floor"] = l.exports_lent;
  if (!l.host.empty()) j["host"] = l.host;
  if (g_provenance || l.origin != doc_origin) j["origin"] = origin_name(l.origin);
  if (g_provenance && !l.layer.empty()) j["layer"] = l.layer;
  return j;
}

ojson dist_library_json(const DistLibrary& l) {
  ojson j = ojson::object();
  j["path"] = l.path;
  library_facts_json(j, l);
  return j;
}

}  // namespace

ojson to_json(const Image& im, bool provenance) {
  struct Scope {
    explicit Scope(bool on) { g_provenance = on; }
    ~Scope() { g_provenance = false; }
  } scope(provenance);
  ojson j = ojson::object();
  j["schema"] = im.schema;
  j["name"] = im.name;
  if (!im.summary.empty()) j["summary"] = im.summary;
  j["kind"] = image_kind_name(im.kind);
  if (provenance || im.status != ImageStatus::Current) j["status"] = image_status_name(im.status);
  if (!im.planned_note.empty()) j["planned_note"] = im.planned_note;
  if (!im.group.empty()) j["group"] = im.group;
  if (!im.policy.empty()) j["policy"] = im.policy;
  if (!im.release.empty()) j["release"] = im.release;
  if (!im.image_ref.empty()) j["image_ref"] = im.image_ref;
  if (!im.from.empty()) {
    j["from"] = {{"reference", im.from.reference},
                 {"digest", im.from.digest},
                 {"platform", im.from.platform},
                 {"config", im.from.config},
                 {"user", im.from.user}};
  }
  j["origin"] = origin_name(im.origin);
  if (!im.generated_by.empty()) j["generated_by"] = im.generated_by;
  if (!im.sources.empty()) j["sources"] = strings(im.sources);
  if (!im.layers.empty()) j["layers"] = strings(im.layers);
  if (!im.exports_dir.empty()) j["exports_dir"] = im.exports_dir;
  const Origin o = im.origin;
  if (im.arch.set) j["arch"] = fact_json(im.arch, o);
  if (im.python.set) j["python"] = fact_json(im.python, o);
  if (im.libc_kind.set || im.libc_version.set) {
    ojson libc = ojson::object();
    if (im.libc_kind.set) libc["kind"] = fact_json(im.libc_kind, o);
    if (im.libc_version.set) libc["version"] = fact_json(im.libc_version, o);
    j["libc"] = libc;
  }
  if (im.glibcxx.set || im.cxxabi.set) {
    ojson cxx = ojson::object();
    if (im.glibcxx.set) cxx["glibcxx"] = fact_json(im.glibcxx, o);
    if (im.cxxabi.set) cxx["cxxabi"] = fact_json(im.cxxabi, o);
    j["libstdcxx"] = cxx;
  }
  const Loader& ld = im.loader;
  if (!ld.default_dirs.empty() || ld.default_dirs_note.set || !ld.conf_dirs.empty() || !ld.conf_files.empty() ||
      !ld.cache_format.empty() || !ld.cache.empty() || !ld.ld_library_path.empty() || !ld.dir_links.empty()) {
    ojson l = ojson::object();
    if (!ld.default_dirs.empty()) l["default_dirs"] = strings(ld.default_dirs);
    if (ld.default_dirs_note.set) l["default_dirs_note"] = fact_json(ld.default_dirs_note, o);
    if (!ld.conf_dirs.empty()) l["conf_dirs"] = strings(ld.conf_dirs);
    if (!ld.conf_files.empty()) l["conf_files"] = strings(ld.conf_files);
    if (!ld.ld_library_path.empty()) l["ld_library_path"] = strings(ld.ld_library_path);
    if (!ld.cache_format.empty()) l["cache_format"] = ld.cache_format;
    if (!ld.cache.empty()) {
      ojson c = ojson::array();
      for (const auto& e : ld.cache) c.push_back(ojson::array({e.soname, e.arch, e.path}));
      l["cache"] = c;
    }
    if (!ld.dir_links.empty()) {
      ojson links = ojson::object();
      for (const auto& [from, to] : ld.dir_links) links[from] = to;
      l["dir_links"] = links;
    }
    j["loader"] = l;
  }
  if (!im.libraries.empty()) {
    ojson a = ojson::array();
    for (const auto& l : im.libraries) a.push_back(library_json(l, o));
    j["libraries"] = a;
  }
  if (!im.pythons.empty()) {
    ojson a = ojson::array();
    for (const auto& p : im.pythons) {
      ojson pj = ojson::object();
      pj["version"] = p.version;
      pj["abi_tags"] = strings(p.abi_tags);
      if (!p.executable.empty()) pj["executable"] = p.executable;
      pj["site_packages"] = strings(p.site_packages);
      if (!p.exports.empty()) pj["exports"] = p.exports;
      if (!p.stable_abi.empty()) pj["stable_abi"] = p.stable_abi;
      if (!p.needed.empty()) pj["needed"] = strings(p.needed);
      if (provenance || p.origin != o) pj["origin"] = origin_name(p.origin);
      if (provenance && !p.layer.empty()) pj["layer"] = p.layer;
      a.push_back(pj);
    }
    j["pythons"] = a;
  }
  if (!im.distributions.empty()) {
    ojson a = ojson::array();
    for (const auto& d : im.distributions) {
      ojson dj = ojson::object();
      dj["name"] = d.name;
      dj["version"] = d.version;
      dj["location"] = d.location;
      if (!d.python.empty()) dj["python"] = d.python;
      if (!d.exports_unknown.empty()) dj["exports_unknown"] = d.exports_unknown;
      if (d.cxx11_abi) dj["cxx11_abi"] = *d.cxx11_abi;
      if (d.published) {
        ojson pj = ojson::object();
        if (!d.published->index.empty()) pj["index"] = d.published->index;
        if (!d.published->requirement.empty()) pj["requirement"] = d.published->requirement;
        if (!d.published->url.empty()) pj["url"] = d.published->url;
        if (!d.published->sha256.empty()) pj["sha256"] = d.published->sha256;
        dj["published"] = pj;
      }
      if (!d.note.empty()) dj["note"] = d.note;
      if (provenance || d.origin != o) dj["origin"] = origin_name(d.origin);
      if (provenance && !d.layer.empty()) dj["layer"] = d.layer;
      ojson libs = ojson::array();
      for (const auto& l : d.libraries) libs.push_back(dist_library_json(l));
      dj["libraries"] = libs;
      a.push_back(dj);
    }
    j["distributions"] = a;
  }
  if (im.toolkit) {
    ojson t = ojson::object();
    t["kind"] = toolkit_kind_name(im.toolkit->kind);
    if (im.toolkit->version.set) t["version"] = fact_json(im.toolkit->version, o);
    if (im.toolkit->runtime.set) t["runtime"] = fact_json(im.toolkit->runtime, o);
    if (im.toolkit->driver_floor.set) t["driver_floor"] = fact_json(im.toolkit->driver_floor, o);
    if (!im.toolkit->runtime_sonames.empty()) t["runtime_sonames"] = strings(im.toolkit->runtime_sonames);
    j["toolkit"] = t;
  }
  if (im.driver.set) j["driver"] = fact_json(im.driver, o);
  if (im.gpu_archs.set) j["gpu_archs"] = fact_json(im.gpu_archs, o);
  if (im.chips.set) j["chips"] = fact_json(im.chips, o);
  if (!im.env.empty()) j["env"] = im.env;
  if (!im.bash_env.vars.empty() || !im.bash_env.note.empty()) {
    ojson b = ojson::object();
    if (!im.bash_env.note.empty()) b["note"] = im.bash_env.note;
    b["vars"] = im.bash_env.vars;
    if (provenance && !im.bash_env.layer.empty()) b["layer"] = im.bash_env.layer;
    j["bash_env"] = b;
  }
  if (!im.host_mounts.empty()) {
    ojson a = ojson::array();
    for (const auto& m : im.host_mounts) {
      ojson mj = ojson::object();
      mj["path"] = m.path;
      if (!m.note.empty()) mj["note"] = m.note;
      a.push_back(mj);
    }
    j["host_mounts"] = a;
  }
  if (const Inventory& inv = im.inventory; provenance || inv.stated || !inv.note.empty() || !inv.absent.empty()) {
    ojson i = ojson::object();
    if (provenance || inv.stated) i["complete"] = provenance ? inv.complete : *inv.stated;
    if (!inv.note.empty()) i["note"] = inv.note;
    if (!inv.absent.empty()) i["absent"] = strings(inv.absent);
    if (provenance && !inv.layer.empty()) i["layer"] = inv.layer;
    j["inventory"] = i;
  }
  if (!im.assumed.empty()) j["assumed"] = im.assumed;
  if (!im.findings.empty()) {
    ojson a = ojson::array();
    for (const auto& f : im.findings) a.push_back({{"kind", f.kind}, {"path", f.path}, {"detail", f.detail}});
    j["findings"] = a;
  }
  return j;
}

// --- JSON in: every field is checked for its type, and an error names the file and the field. -------

namespace {

class Reader {
 public:
  explicit Reader(std::string_view what) : m_what(what) {}

  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw bad_input(m_what + ": " + field + ": " + message);
  }
  std::string str(const json& j, const std::string& field) const {
    if (!j.is_string()) fail(field, "expected a string");
    return j.get<std::string>();
  }
  std::string opt_str(const json& obj, const char* key, const std::string& where) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return {};
    return str(*it, where + "." + key);
  }
  std::vector<std::string> str_list(const json& obj, const char* key, const std::string& where) const {
    std::vector<std::string> out;
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return out;
    if (!it->is_array()) fail(where + "." + key, "expected a list of strings");
    for (std::size_t i = 0; i < it->size(); ++i)
      out.push_back(str((*it)[i], where + "." + key + "[" + std::to_string(i) + "]"));
    return out;
  }
  int opt_int(const json& obj, const char* key, const std::string& where) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return 0;
    if (!it->is_number_integer()) fail(where + "." + key, "expected an integer");
    return it->get<int>();
  }
  Origin origin(const json& obj, Origin fallback, const std::string& where) const {
    auto it = obj.find("origin");
    if (it == obj.end()) return fallback;
    try {
      return parse_origin(str(*it, where + ".origin"));
    } catch (const Error& e) {
      fail(where + ".origin", e.what());
    }
  }
  Fact fact(const json& obj, const char* key, Origin doc_origin, const std::string& where) const {
    Fact f;
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return f;
    const std::string field = where.empty() ? std::string(key) : where + "." + key;
    f.set = true;
    f.origin = doc_origin;
    if (it->is_string()) {
      std::string v = it->get<std::string>();
      if (v != "unknown") f.value = std::move(v);
      return f;
    }
    if (!it->is_object()) fail(field, "expected a string or {\"value\", \"note\"}");
    auto v = it->find("value");
    if (v == it->end()) fail(field, "missing \"value\" (write \"unknown\" when it is not known)");
    std::string value = str(*v, field + ".value");
    if (value != "unknown") f.value = std::move(value);
    f.note = opt_str(*it, "note", field);
    f.origin = origin(*it, doc_origin, field);
    for (auto k = it->begin(); k != it->end(); ++k) {
      if (k.key() != "value" && k.key() != "note" && k.key() != "origin") fail(field + "." + k.key(), "unknown field");
    }
    return f;
  }
  void only(const json& obj, std::initializer_list<const char*> keys, const std::string& where) const {
    for (auto k = obj.begin(); k != obj.end(); ++k) {
      bool ok = false;
      for (const char* key : keys) ok = ok || k.key() == key;
      if (!ok) fail(where.empty() ? k.key() : where + "." + k.key(), "unknown field");
    }
  }
  const json& object(const json& j, const std::string& field) const {
    if (!j.is_object()) fail(field, "expected an object");
    return j;
  }
  const json& array(const json& j, const std::string& field) const {
    if (!j.is_array()) fail(field, "expected a list");
    return j;
  }

 private:
  std::string m_what;
};

// The facts an image library and a distribution's library share (the soname is read by the caller).
template <class L>
void read_library_facts(const Reader& r, const json& e, const std::string& f, L& l) {
  l.machine = r.opt_str(e, "machine", f);
  l.elf_class = r.opt_int(e, "class", f);
  l.needed = r.str_list(e, "needed", f);
  l.versions = r.str_list(e, "versions", f);
  l.exports = r.opt_str(e, "exports", f);
  l.exports_unknown = r.opt_str(e, "exports_unknown", f);
  l.version_needs = r.str_list(e, "version_needs", f);
  l.rpath = r.str_list(e, "rpath", f);
  l.runpath = r.str_list(e, "runpath", f);
  if (auto it = e.find("flags_1"); it != e.end()) {
    if (!it->is_number_unsigned()) r.fail(f + ".flags_1", "expected a non-negative integer (DT_FLAGS_1)");
    l.flags_1 = it->get<std::uint64_t>();
  }
  if (auto it = e.find("dynamic_recorded"); it != e.end()) {
    if (!it->is_boolean()) r.fail(f + ".dynamic_recorded", "expected true or false");
    l.dynamic_recorded = it->get<bool>();
  }
}

}  // namespace

Image from_json(const json& j, std::string_view what) {
  Reader r(what);
  Image im;
  r.object(j, "(document)");
  r.only(j, {"schema", "name",      "summary",   "kind",     "status",      "planned_note",  "group",
             "policy", "origin",    "sources",   "layers",   "arch",        "generated_by",  "exports_dir",
             "python", "libc",      "loader",    "pythons",  "libraries",   "distributions", "toolkit",
             "driver", "gpu_archs", "env",       "findings", "libstdcxx",   "assumed",       "$comment",
             "chips",  "release",   "image_ref", "bash_env", "host_mounts", "inventory",     "from"},
         "");
  auto schema = j.find("schema");
  if (schema == j.end()) r.fail("schema", "missing (expected \"" + std::string(k_schema) + "\")");
  im.schema = r.str(*schema, "schema");
  if (im.schema != k_schema)
    r.fail("schema", "\"" + im.schema + "\" is not supported (expected \"" + std::string(k_schema) + "\")");
  im.name = r.opt_str(j, "name", "");
  if (im.name.empty()) r.fail("name", "missing");
  im.summary = r.opt_str(j, "summary", "");
  if (const std::string kind = r.opt_str(j, "kind", ""); !kind.empty()) {
    try {
      im.kind = parse_image_kind(kind);
    } catch (const Error&) {
      r.fail("kind", "expected \"image\" or \"layer\"");
    }
  }
  if (const std::string status = r.opt_str(j, "status", ""); !status.empty()) {
    try {
      im.status = parse_image_status(status);
    } catch (const Error&) {
      r.fail("status", "expected \"current\" or \"planned\"");
    }
  }
  im.planned_note = r.opt_str(j, "planned_note", "");
  if (!im.planned_note.empty() && im.status != ImageStatus::Planned) {
    r.fail("planned_note", "says what the switch to a planned image waits on: needs \"status\": \"planned\"");
  }
  im.group = r.opt_str(j, "group", "");
  im.policy = r.opt_str(j, "policy", "");
  im.release = r.opt_str(j, "release", "");
  im.image_ref = r.opt_str(j, "image_ref", "");
  if (auto it = j.find("from"); it != j.end()) {
    r.object(*it, "from");
    r.only(*it, {"reference", "digest", "platform", "config", "user"}, "from");
    im.from = {r.opt_str(*it, "reference", "from"), r.opt_str(*it, "digest", "from"),
               r.opt_str(*it, "platform", "from"), r.opt_str(*it, "config", "from"), r.opt_str(*it, "user", "from")};
  }
  im.origin = r.origin(j, Origin::Declared, "");
  const Origin o = im.origin;
  im.generated_by = r.opt_str(j, "generated_by", "");
  im.sources = r.str_list(j, "sources", "");
  im.layers = r.str_list(j, "layers", "");
  im.exports_dir = r.opt_str(j, "exports_dir", "");
  im.arch = r.fact(j, "arch", o, "");
  im.python = r.fact(j, "python", o, "");
  if (auto it = j.find("libc"); it != j.end()) {
    r.object(*it, "libc");
    r.only(*it, {"kind", "version"}, "libc");
    im.libc_kind = r.fact(*it, "kind", o, "libc");
    im.libc_version = r.fact(*it, "version", o, "libc");
  }
  if (auto it = j.find("libstdcxx"); it != j.end()) {
    r.object(*it, "libstdcxx");
    r.only(*it, {"glibcxx", "cxxabi"}, "libstdcxx");
    im.glibcxx = r.fact(*it, "glibcxx", o, "libstdcxx");
    im.cxxabi = r.fact(*it, "cxxabi", o, "libstdcxx");
  }
  if (auto it = j.find("loader"); it != j.end()) {
    r.object(*it, "loader");
    r.only(*it,
           {"default_dirs", "default_dirs_note", "conf_dirs", "conf_files", "ld_library_path", "cache_format", "cache",
            "dir_links"},
           "loader");
    Loader& ld = im.loader;
    ld.default_dirs = r.str_list(*it, "default_dirs", "loader");
    ld.default_dirs_note = r.fact(*it, "default_dirs_note", o, "loader");
    ld.conf_dirs = r.str_list(*it, "conf_dirs", "loader");
    ld.conf_files = r.str_list(*it, "conf_files", "loader");
    ld.ld_library_path = r.str_list(*it, "ld_library_path", "loader");
    ld.cache_format = r.opt_str(*it, "cache_format", "loader");
    if (auto c = it->find("cache"); c != it->end()) {
      r.array(*c, "loader.cache");
      for (std::size_t i = 0; i < c->size(); ++i) {
        const std::string f = "loader.cache[" + std::to_string(i) + "]";
        const json& e = (*c)[i];
        if (!e.is_array() || e.size() != 3) r.fail(f, "expected [soname, arch, path]");
        ld.cache.push_back({r.str(e[0], f), r.str(e[2], f), r.str(e[1], f)});
      }
    }
    if (auto links = it->find("dir_links"); links != it->end()) {
      r.object(*links, "loader.dir_links");
      for (const auto& [from, to] : links->items()) {
        const std::string f = "loader.dir_links[" + from + "]";
        const std::string target = r.str(to, f);
        if (from.empty() || from[0] != '/' || target.empty() || target[0] != '/')
          r.fail(f, "expected an absolute image path to an absolute image path");
        ld.dir_links[from] = target;
      }
    }
  }
  if (auto it = j.find("libraries"); it != j.end()) {
    for (std::size_t i = 0; i < r.array(*it, "libraries").size(); ++i) {
      const std::string f = "libraries[" + std::to_string(i) + "]";
      const json& e = r.object((*it)[i], f);
      r.only(e,
             {"path", "names", "soname", "machine", "class", "needed", "versions", "exports", "exports_unknown",
              "exports_upto", "exports_floor", "version_needs", "rpath", "runpath", "flags_1", "dynamic_recorded",
              "origin", "host"},
             f);
      Library l;
      l.path = r.opt_str(e, "path", f);
      l.soname = r.opt_str(e, "soname", f);
      if (!l.path.empty() && l.path[0] != '/') r.fail(f + ".path", "expected an absolute image path");
      if (l.path.empty() && l.soname.empty()) {
        r.fail(f, "needs a path, or a soname for a library declared without a known location");
      }
      l.names = r.str_list(e, "names", f);
      if (l.names.empty() && !l.path.empty()) l.names.push_back(l.path);
      read_library_facts(r, e, f, l);
      l.exports_upto = r.opt_str(e, "exports_upto", f);
      l.exports_lent = r.opt_str(e, "exports_floor", f);
      l.host = r.opt_str(e, "host", f);
      l.origin = r.origin(e, o, f);
      im.libraries.push_back(std::move(l));
    }
  }
  if (auto it = j.find("pythons"); it != j.end()) {
    r.array(*it, "pythons");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const std::string f = "pythons[" + std::to_string(i) + "]";
      const json& e = r.object((*it)[i], f);
      r.only(e, {"version", "abi_tags", "executable", "site_packages", "exports", "stable_abi", "needed", "origin"}, f);
      Python p;
      p.version = r.opt_str(e, "version", f);
      if (p.version.empty()) r.fail(f + ".version", "missing");
      p.abi_tags = r.str_list(e, "abi_tags", f);
      p.executable = r.opt_str(e, "executable", f);
      p.site_packages = r.str_list(e, "site_packages", f);
      p.exports = r.opt_str(e, "exports", f);
      p.stable_abi = r.opt_str(e, "stable_abi", f);
      p.needed = r.str_list(e, "needed", f);
      p.origin = r.origin(e, o, f);
      im.pythons.push_back(std::move(p));
    }
  }
  if (auto it = j.find("distributions"); it != j.end()) {
    r.array(*it, "distributions");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const std::string f = "distributions[" + std::to_string(i) + "]";
      const json& e = r.object((*it)[i], f);
      r.only(e,
             {"name", "version", "location", "python", "exports_unknown", "cxx11_abi", "published", "origin",
              "libraries", "note"},
             f);
      Distribution d;
      d.name = r.opt_str(e, "name", f);
      d.version = r.opt_str(e, "version", f);
      if (d.name.empty() || d.version.empty()) r.fail(f, "needs a name and a version");
      d.location = r.opt_str(e, "location", f);
      if (d.location.empty()) d.location = std::string(k_site_placeholder);
      d.python = r.opt_str(e, "python", f);
      d.exports_unknown = r.opt_str(e, "exports_unknown", f);
      d.note = r.opt_str(e, "note", f);
      if (auto abi = e.find("cxx11_abi"); abi != e.end() && !abi->is_null()) {
        if (!abi->is_boolean()) r.fail(f + ".cxx11_abi", "expected true or false");
        d.cxx11_abi = abi->get<bool>();
      }
      if (auto pub = e.find("published"); pub != e.end() && !pub->is_null()) {
        const std::string pf = f + ".published";
        r.object(*pub, pf);
        r.only(*pub, {"index", "requirement", "url", "sha256"}, pf);
        Published p;
        p.index = r.opt_str(*pub, "index", pf);
        p.requirement = r.opt_str(*pub, "requirement", pf);
        p.url = r.opt_str(*pub, "url", pf);
        p.sha256 = ascii_lower(r.opt_str(*pub, "sha256", pf));
        if (p.url.empty() == p.index.empty()) r.fail(pf, "needs either an index and a requirement, or a url");
        if (!p.index.empty() && p.requirement.empty())
          r.fail(pf, "an index needs a requirement (\"torch==2.10.0+cpu\")");
        if (!p.sha256.empty() && !is_sha256_hex(p.sha256)) r.fail(pf + ".sha256", "expected 64 hex digits");
        d.published = std::move(p);
      }
      d.origin = r.origin(e, o, f);
      if (auto libs = e.find("libraries"); libs != e.end()) {
        r.array(*libs, f + ".libraries");
        for (std::size_t k = 0; k < libs->size(); ++k) {
          const std::string lf = f + ".libraries[" + std::to_string(k) + "]";
          const json& le = r.object((*libs)[k], lf);
          r.only(le,
                 {"path", "soname", "machine", "class", "needed", "versions", "version_needs", "exports",
                  "exports_unknown", "rpath", "runpath", "flags_1", "dynamic_recorded"},
                 lf);
          DistLibrary l;
          l.path = r.opt_str(le, "path", lf);
          if (l.path.empty() || l.path[0] == '/') r.fail(lf + ".path", "expected a path relative to the location");
          l.soname = r.opt_str(le, "soname", lf);
          read_library_facts(r, le, lf, l);
          d.libraries.push_back(std::move(l));
        }
      }
      im.distributions.push_back(std::move(d));
    }
  }
  if (auto it = j.find("toolkit"); it != j.end()) {
    r.object(*it, "toolkit");
    r.only(*it, {"kind", "version", "runtime", "driver_floor", "runtime_sonames"}, "toolkit");
    Toolkit t;
    const std::string kind = r.opt_str(*it, "kind", "toolkit");
    if (kind.empty())
      r.fail("toolkit.kind", "missing (cuda, maca, cann, dtk, tops, musa, ppu, neuware, corex, xre, tangrt, tsm)");
    try {
      t.kind = parse_toolkit_kind(kind);
    } catch (const Error& e) {
      r.fail("toolkit.kind", e.what());
    }
    t.version = r.fact(*it, "version", o, "toolkit");
    t.runtime = r.fact(*it, "runtime", o, "toolkit");
    t.driver_floor = r.fact(*it, "driver_floor", o, "toolkit");
    t.runtime_sonames = r.str_list(*it, "runtime_sonames", "toolkit");
    im.toolkit = std::move(t);
  }
  im.driver = r.fact(j, "driver", o, "");
  im.gpu_archs = r.fact(j, "gpu_archs", o, "");
  im.chips = r.fact(j, "chips", o, "");
  if (auto it = j.find("bash_env"); it != j.end()) {
    r.object(*it, "bash_env");
    r.only(*it, {"note", "vars"}, "bash_env");
    im.bash_env.note = r.opt_str(*it, "note", "bash_env");
    if (auto v = it->find("vars"); v != it->end()) {
      r.object(*v, "bash_env.vars");
      for (auto k = v->begin(); k != v->end(); ++k)
        im.bash_env.vars[k.key()] = r.str(k.value(), "bash_env.vars." + k.key());
    }
  }
  if (auto it = j.find("host_mounts"); it != j.end()) {
    r.array(*it, "host_mounts");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const std::string f = "host_mounts[" + std::to_string(i) + "]";
      const json& e = r.object((*it)[i], f);
      r.only(e, {"path", "note"}, f);
      HostMount m{r.opt_str(e, "path", f), r.opt_str(e, "note", f)};
      if (m.path.empty() || m.path[0] != '/') r.fail(f + ".path", "expected an absolute image path");
      im.host_mounts.push_back(std::move(m));
    }
  }
  if (auto it = j.find("inventory"); it != j.end()) {
    r.object(*it, "inventory");
    r.only(*it, {"complete", "note", "absent"}, "inventory");
    if (auto c = it->find("complete"); c != it->end()) {
      if (!c->is_boolean()) r.fail("inventory.complete", "expected true or false");
      im.inventory.stated = c->get<bool>();
    }
    im.inventory.note = r.opt_str(*it, "note", "inventory");
    im.inventory.absent = r.str_list(*it, "absent", "inventory");
  }
  im.inventory.complete = im.inventory.stated.value_or(im.origin == Origin::Probed);
  if (auto it = j.find("assumed"); it != j.end()) {
    r.object(*it, "assumed");
    for (auto k = it->begin(); k != it->end(); ++k) im.assumed[k.key()] = r.str(k.value(), "assumed." + k.key());
  }
  if (auto it = j.find("env"); it != j.end()) {
    r.object(*it, "env");
    for (auto k = it->begin(); k != it->end(); ++k) im.env[k.key()] = r.str(k.value(), "env." + k.key());
  }
  if (auto it = j.find("findings"); it != j.end()) {
    r.array(*it, "findings");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const std::string f = "findings[" + std::to_string(i) + "]";
      const json& e = r.object((*it)[i], f);
      im.findings.push_back({r.opt_str(e, "kind", f), r.opt_str(e, "path", f), r.opt_str(e, "detail", f)});
    }
  }
  return im;
}

namespace {

// Export references become files: relative to the description's exports_dir, itself relative to the
// description's folder ("exports" when unset).
void resolve_exports(Image& im) {
  const std::string base = dir_name(im.file) + "/" + (im.exports_dir.empty() ? "exports" : im.exports_dir);
  for (auto& l : im.libraries) {
    if (!l.exports.empty()) l.exports_file = base + "/" + l.exports;
    l.layer = im.name;
  }
  for (auto& d : im.distributions) {
    d.layer = im.name;
    for (auto& l : d.libraries) {
      if (!l.exports.empty()) l.exports_file = base + "/" + l.exports;
    }
  }
  for (auto& p : im.pythons) {
    p.layer = im.name;
    if (!p.exports.empty()) p.exports_file = base + "/" + p.exports;
    if (!p.stable_abi.empty()) p.stable_abi_file = base + "/" + p.stable_abi;
  }
  for (Fact* f : {&im.arch, &im.python, &im.libc_kind, &im.libc_version, &im.glibcxx, &im.cxxabi, &im.driver,
                  &im.gpu_archs, &im.chips, &im.loader.default_dirs_note}) {
    if (f->set) f->layer = im.name;
  }
  if (!im.bash_env.vars.empty()) im.bash_env.layer = im.name;
  im.inventory.layer = im.name;
  if (im.toolkit) {
    for (Fact* f : {&im.toolkit->version, &im.toolkit->runtime, &im.toolkit->driver_floor}) {
      if (f->set) f->layer = im.name;
    }
  }
}

}  // namespace

Image parse_description(std::string_view text, const std::string& what) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number that overflows
    throw bad_input(what + ": not valid JSON: " + e.what());
  }
  return from_json(j, what);
}

Image load_file(const std::string& path) {
  Image im = parse_description(read_text_file(path, std::uint64_t{64} << 20), path);
  im.file = path;
  resolve_exports(im);
  return im;
}

void save_file(const Image& image, const std::string& path) {
  write_file_atomic(path, to_json(image).dump(2) + "\n");
}

}  // namespace wheelcheck::image
