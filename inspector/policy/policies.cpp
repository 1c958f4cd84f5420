// auditwheel's policy data (db/policies) as wheelcheck's model: one Policy per policy and architecture,
// named by its PEP 600 / PEP 656 platform tag, and the image a check against that target uses.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "wheelcheck/error.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::policy {

std::string libc_name(Libc libc) {
  switch (libc) {
    case Libc::Glibc: return "glibc";
    case Libc::Musl: return "musl";
    case Libc::Android: return "android";
  }
  return "glibc";
}

std::string tag_prefix(Libc libc) {
  switch (libc) {
    case Libc::Glibc: return "manylinux";
    case Libc::Musl: return "musllinux";
    case Libc::Android: return "android";
  }
  return "manylinux";
}

std::string policy_file(Libc libc) {
  return tag_prefix(libc) + "-policy.json";
}

std::string tag_arch(Libc libc, std::string_view arch) {
  if (libc == Libc::Android && arch == "aarch64") return "arm64_v8a";
  return std::string(arch);
}

std::string policy_arch(std::string_view machine) {
  // elf::machine_name's words; the policies name 32-bit hard-float ARM (EABI5, armv6 and armv7 alike) armv7l.
  static const char* const known[] = {"x86_64", "i686",    "aarch64", "ppc64",      "ppc64le",
                                      "s390x",  "riscv64", "armv7l",  "loongarch64"};
  if (machine == "armhf") return "armv7l";
  for (const char* k : known) {
    if (machine == k) return k;
  }
  return {};
}

std::string Policy::tag() const {
  return name + "_" + tag_arch(libc, arch);
}

std::vector<std::string> Policy::alias_tags() const {
  std::vector<std::string> out;
  for (const auto& a : aliases) out.push_back(a + "_" + tag_arch(libc, arch));
  return out;
}

std::string Policy::libc_version() const {
  // manylinux_2_17 -> 2.17, musllinux_1_2 -> 1.2, android_24 -> 24
  const std::string rest = name.substr(name.find('_') + 1);
  std::string out = rest;
  std::replace(out.begin(), out.end(), '_', '.');
  return out;
}

Policies Policies::from_json(Libc libc, const nlohmann::json& list, std::string_view what) {
  Policies out;
  auto bad = [&](const std::string& why) { return bad_input(std::string(what) + ": " + why); };
  if (!list.is_array()) throw bad("not a list of policies");
  // Every list of names in a policy (aliases, symbol versions, allowed libraries, blacklisted symbols) is
  // a JSON array of strings; anything else is a malformed policy, named with where it was found, never a
  // json type_error escaping from a get<std::string>().
  auto strings = [&](const nlohmann::json& j, const std::string& where) {
    if (!j.is_array()) throw bad(where + " is not a list of strings");
    std::vector<std::string> names;
    names.reserve(j.size());
    for (const auto& v : j) {
      if (!v.is_string()) throw bad(where + " holds " + std::string(v.type_name()) + ", not a string");
      names.push_back(v.get<std::string>());
    }
    return names;
  };
  for (const auto& p : list) {
    if (!p.is_object() || !p.contains("name") || !p["name"].is_string() || !p.contains("priority") ||
        !p["priority"].is_number_integer())
      throw bad("a policy without a name or a priority");
    const std::string name = p["name"].get<std::string>();
    if (name == "linux") continue;  // the base policy: linux_<arch>, no list
    const auto priority = p["priority"].get<std::int64_t>();
    if (priority < std::numeric_limits<int>::min() || priority > std::numeric_limits<int>::max())
      throw bad(name + ": priority " + std::to_string(priority) + " is out of range");
    static const nlohmann::json k_empty_list = nlohmann::json::array(), k_empty_object = nlohmann::json::object();
    auto member = [&](const char* key, const nlohmann::json& fallback) -> const nlohmann::json& {
      const auto it = p.find(key);
      return it == p.end() ? fallback : *it;
    };
    const auto& versions = member("symbol_versions", k_empty_object);
    if (!versions.is_object()) throw bad(name + ": symbol_versions is not an object");
    const auto aliases = strings(member("aliases", k_empty_list), name + ": aliases");
    const auto whitelist = strings(member("lib_whitelist", k_empty_list), name + ": lib_whitelist");
    const auto& blacklist_json = member("blacklist", k_empty_object);
    if (!blacklist_json.is_object()) throw bad(name + ": blacklist is not an object");
    std::map<std::string, std::set<std::string>> blacklist;
    for (const auto& [lib, syms] : blacklist_json.items()) {
      auto& set = blacklist[lib];
      for (auto& sym : strings(syms, name + ": blacklist." + lib)) set.insert(std::move(sym));
    }
    for (const auto& [arch, families] : versions.items()) {
      Policy pol;
      pol.libc = libc;
      pol.name = name;
      pol.priority = static_cast<int>(priority);
      pol.arch = arch;
      pol.aliases = aliases;
      if (!families.is_object()) throw bad(name + "_" + arch + ": symbol versions are not an object");
      for (const auto& [family, vs] : families.items()) {
        auto& set = pol.symbol_versions[family];
        for (auto& v : strings(vs, name + "_" + arch + ": symbol_versions." + family)) set.insert(std::move(v));
      }
      pol.whitelist.insert(whitelist.begin(), whitelist.end());
      pol.blacklist = blacklist;
      out.m_all.push_back(std::move(pol));
    }
  }
  return out;
}

namespace {

std::string read_policy_file(const std::string& dir, Libc libc) {
  const std::string path = dir + "/" + policy_file(libc);
  try {
    return read_text_file(path, std::uint64_t{16} << 20);
  } catch (const Error&) {
    throw bad_input(path + ": cannot read the policy file (the db is incomplete; scripts/gen-db.sh targets writes it)");
  }
}

}  // namespace

std::string Policies::digest_of(const std::string& dir) {
  Hasher digest;
  for (Libc libc : {Libc::Glibc, Libc::Musl, Libc::Android}) {
    const std::string text = read_policy_file(dir, libc);
    digest.update(text.data(), text.size());
  }
  return to_hex(digest.finish());
}

std::shared_ptr<const Policies> Policies::load(const std::string& dir) {
  auto out = std::make_shared<Policies>();
  Hasher digest;
  for (Libc libc : {Libc::Glibc, Libc::Musl, Libc::Android}) {
    const std::string path = dir + "/" + policy_file(libc);
    const std::string text = read_policy_file(dir, libc);
    digest.update(text.data(), text.size());
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw bad_input(path + ": not JSON (" + e.what() + ")");
    }
    try {
      auto part = from_json(libc, j, path);
      for (auto& p : part.m_all) out->m_all.push_back(std::move(p));
    } catch (const nlohmann::json::exception& e) {
      throw bad_input(path + ": " + e.what());
    }
  }
  const auto d = digest.finish();
  out->m_digest = to_hex(d);
  std::stable_sort(out->m_all.begin(), out->m_all.end(), [](const Policy& a, const Policy& b) {
    if (a.libc != b.libc) return a.libc < b.libc;
    return a.priority > b.priority;
  });
  return out;
}

std::vector<const Policy*> Policies::of(Libc libc, std::string_view arch) const {
  std::vector<const Policy*> out;
  for (const auto& p : m_all) {
    if (p.libc == libc && p.arch == arch) out.push_back(&p);
  }
  std::stable_sort(out.begin(), out.end(), [](const Policy* a, const Policy* b) { return a->priority > b->priority; });
  return out;
}

const Policy* Policies::find(std::string_view tag) const {
  for (const auto& p : m_all) {
    if (p.tag() == tag) return &p;
    for (const auto& a : p.alias_tags()) {
      if (a == tag) return &p;
    }
  }
  return nullptr;
}

namespace {

std::string newest(const std::set<std::string>& versions) {
  std::string best;
  for (const auto& v : versions) {
    if (best.empty() || dotted_less(best, v)) best = v;
  }
  return best;
}

// Which library defines each version family (GLIBC_ is every glibc library's).
const char* family_library(const std::string& family) {
  if (family == "GLIBCXX" || family == "CXXABI") return "libstdc++.so.6";
  if (family == "GCC") return "libgcc_s.so.1";
  if (family == "LIBATOMIC") return "libatomic.so.1";
  if (family == "ZLIB") return "libz.so.1";
  if (family == "GOMP" || family == "OMP") return "libgomp.so.1";
  return "";
}

bool glibc_library(const std::string& soname) {
  static const char* const libs[] = {"libc.so.6",       "libm.so.6",      "libmvec.so.1", "libanl.so.1",
                                     "libdl.so.2",      "librt.so.1",     "libnsl.so.1",  "libutil.so.1",
                                     "libpthread.so.0", "libresolv.so.2", "libcrypt.so.1"};
  return std::any_of(std::begin(libs), std::end(libs), [&](const char* l) { return soname == l; });
}

}  // namespace

image::Image target_image(const Policy& p) {
  using image::Fact;
  using image::Origin;
  image::Image im;
  im.name = p.tag();
  im.kind = image::ImageKind::Image;
  im.group = "target";
  im.origin = Origin::Derived;
  im.policy = p.tag();
  // The policy's list is all a wheel may link outside itself: a library it does not name is not there.
  im.inventory.stated = true;
  im.inventory.complete = true;
  im.inventory.note = "the policy's libraries are all a wheel may link outside itself";
  im.inventory.layer = im.name;
  const auto aliases = p.alias_tags();
  im.summary = p.tag() + (aliases.empty() ? "" : " (" + aliases.front() + ")") + ": the " + tag_prefix(p.libc) +
               " policy for " + p.arch + ", " + libc_name(p.libc) + " " + p.libc_version() + " and the " +
               std::to_string(p.whitelist.size()) + " libraries it allows";
  im.sources.push_back("db/policies/" + policy_file(p.libc) + " (auditwheel's policy data, MIT): policy " + p.name +
                       ", " + p.arch);
  const char* const derived = "derived from the policy";
  im.arch = Fact::known_as(p.arch, derived, Origin::Derived);
  im.libc_kind = Fact::known_as(p.libc == Libc::Musl      ? "musl"
                                : p.libc == Libc::Android ? "bionic"
                                                          : "glibc",
                                derived, Origin::Derived);
  const bool b64 = p.arch != "i686" && p.arch != "armv7l";
  if (p.libc == Libc::Glibc) {
    im.libc_version = Fact::known_as(p.libc_version(), "the glibc the policy names (PEP 600)", Origin::Derived);
    for (const auto& [family, fact] : {std::pair{"GLIBCXX", &im.glibcxx}, std::pair{"CXXABI", &im.cxxabi}}) {
      const auto f = p.symbol_versions.find(family);
      if (f != p.symbol_versions.end() && !f->second.empty())
        *fact = Fact::known_as(newest(f->second), std::string("newest ") + family + "_ version the policy allows",
                               Origin::Derived);
    }
    im.loader.default_dirs =
        b64 ? std::vector<std::string>{"/lib64", "/usr/lib64"} : std::vector<std::string>{"/lib", "/usr/lib"};
    im.loader.default_dirs_note =
        Fact::known_as(b64 ? "lib64" : "lib", "manylinux images are Red Hat family", Origin::Derived);
  } else {
    im.libc_version =
        Fact::known_as(p.libc_version(), p.libc == Libc::Musl ? "the policy's musl version" : "the policy's API level",
                       Origin::Derived);
    im.loader.default_dirs = p.libc == Libc::Musl ? std::vector<std::string>{"/lib", "/usr/local/lib", "/usr/lib"}
                                                  : std::vector<std::string>{"/system/lib64", "/system/lib"};
    im.loader.default_dirs_note = Fact::known_as(
        p.libc == Libc::Musl ? "musl" : "bionic",
        p.libc == Libc::Musl ? "musl's built-in library path" : "Android's system library folders", Origin::Derived);
  }
  const std::string libdir = im.loader.default_dirs.back();
  for (const auto& soname : p.whitelist) {
    image::Library lib;
    lib.path = libdir + "/" + soname;
    lib.names = {lib.path};
    lib.soname = soname;
    lib.machine = p.arch == "armv7l" ? "armhf" : p.arch;
    lib.elf_class = b64 ? 64 : 32;
    const auto glibc = p.symbol_versions.find("GLIBC");
    if (p.libc == Libc::Glibc && glibc_library(soname) && glibc != p.symbol_versions.end()) {
      for (const auto& v : glibc->second) lib.versions.push_back("GLIBC_" + v);
    }
    for (const auto& [family, vs] : p.symbol_versions) {
      if (soname != family_library(family)) continue;
      for (const auto& v : vs) lib.versions.push_back(family + "_" + v);
    }
    lib.exports_unknown = "the policy allows version nodes, it lists no symbols";
    lib.origin = Origin::Derived;
    im.libraries.push_back(std::move(lib));
  }
  return im;
}

}  // namespace wheelcheck::policy
