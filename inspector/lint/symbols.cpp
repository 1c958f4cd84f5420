// The publisher check's symbols (lint_detail.hpp): the glibc floor a loosely tagged wheel really has, with the
// symbols that set it, and the undefined symbols nothing an object loads can define.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "inspector/lint/lint_detail.hpp"
#include "wheelcheck/checks.hpp"
#include "wheelcheck/cxx_names.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/policy.hpp"
#include "wheelcheck/resolve.hpp"
#include "wheelcheck/rules.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::lint::detail {

using verdict::FindingKind;
using verdict::make;
using verdict::Severity;

namespace {

// The export tables of the system libraries a wheel may take from any Linux of its machine (glibc's, libstdc++'s,
// libgcc_s's): the db's newest Debian (debian13: glibc 2.41, GCC 14), x86_64 only. Loaded once per db.
struct SystemTables {
  std::string machine;
  std::map<std::string, exports::Table> by_soname;
};

const SystemTables& system_tables(const image::Db& db) {
  static std::mutex lock;
  static std::map<std::string, std::unique_ptr<SystemTables>> loaded;
  std::lock_guard<std::mutex> hold(lock);
  auto& slot = loaded[db.dir()];
  if (slot) return *slot;
  slot = std::make_unique<SystemTables>();
  try {
    if (!db.has("debian13")) return *slot;
    const image::Image im = db.get("debian13");
    slot->machine = im.arch.value.value_or("");
    for (const auto& lib : im.libraries) {
      if (lib.soname.empty() || lib.exports_file.empty()) continue;
      if (lib.soname.rfind("libc.so", 0) != 0 && lib.soname.rfind("libm.so", 0) != 0 &&
          lib.soname.rfind("libstdc++", 0) != 0 && lib.soname.rfind("libgcc_s", 0) != 0 &&
          lib.soname.rfind("libpthread", 0) != 0 && lib.soname.rfind("libdl.so", 0) != 0 &&
          lib.soname.rfind("librt.so", 0) != 0 && lib.soname.rfind("ld-linux", 0) != 0)
        continue;
      slot->by_soname.emplace(lib.soname, exports::load_table(lib.exports_file));
    }
  } catch (const Error&) {
    slot->by_soname.clear();  // without them every member with a system need is "not known"
  }
  return *slot;
}

// The libraries of the interpreter's global scope: what every CPython process has loaded before any import, read
// from the real interpreters' DT_NEEDED here: Debian 12's /usr/bin/python3.11 (and Debian 13's python3.13) needs
// libm.so.6, libz.so.1, libexpat.so.1, libc.so.6; pyenv's CPython 3.11 (--enable-shared) needs libpython3.11.so.1.0
// and libc.so.6, its libpython libm.so.6 and libc.so.6. Common to both: libc.so.6 and libm.so.6 (libz and libexpat
// are Debian's choice; python-build-standalone links them in), with the loader. libpthread, libdl and libutil are
// folded into libc.so.6 since glibc 2.34, and the tables here are glibc 2.41's.
bool interpreter_scope(const std::string& soname) {
  return soname == "libc.so.6" || soname == "libm.so.6" || soname.rfind("ld-linux", 0) == 0;
}

bool python_api_name(const std::string& s) {
  return s.rfind("Py", 0) == 0 || s.rfind("_Py", 0) == 0;
}

// A member linked against musl (its loader, or musl's sonames).
bool unloadable_musl_member(const elf::Binary& b) {
  if (b.interpreter.find("ld-musl") != std::string::npos) return true;
  return std::any_of(b.needed.begin(), b.needed.end(),
                     [](const std::string& n) { return n.rfind("libc.musl-", 0) == 0 || n == "libc.so"; });
}

std::vector<std::string> first_demangled(const std::vector<std::string>& symbols) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < symbols.size() && i < verdict::k_floor_symbols_listed; ++i)
    out.push_back(cxx::demangle_or_self(symbols[i]));
  return out;
}

}  // namespace

void check_floor(Lint& l) {
  const auto& w = l.w;
  if (l.o.policies == nullptr) {
    l.notes.push_back("no packaging policies in the db: the glibc floor and the tag's claim are not judged");
    return;
  }
  // The libraries its declared distributions ship, where a member's RPATH or RUNPATH looks in their folders.
  const auto c = policy::analyze(w, *l.o.policies,
                                 l.o.providers != nullptr ? toolkit::dependency_libraries(w, *l.o.providers)
                                                          : std::vector<policy::DependencyLibrary>{});
  if (c.pure) return;
  std::string glibc;
  if (const auto it = c.newest_versions.find("GLIBC"); it != c.newest_versions.end()) glibc = it->second;
  // The symbols that need the newest GLIBC_ version, and the member with the first of them.
  std::vector<std::string> symbols;
  std::string member;
  std::size_t total = 0;
  for (const auto& m : w.members) {
    if (!m.elf || glibc.empty()) continue;
    for (const auto& s : m.elf->symbols) {
      if (s.defined || s.version != "GLIBC_" + glibc) continue;
      if (member.empty()) member = m.path;
      ++total;
      if (std::find(symbols.begin(), symbols.end(), s.name) == symbols.end()) symbols.push_back(s.name);
    }
  }
  // With its declared dependencies' libraries installed (where its members look for them): what pip delivers.
  const std::string& tag = c.tag_with_dependencies;
  const bool no_policy = tag.rfind("linux_", 0) == 0;
  const std::string family = policy::tag_prefix(c.libc);
  std::vector<std::string> from_deps;
  for (const auto& k : c.constrained_by) {
    if (!k.dependency.empty()) from_deps.push_back(k.library + " from " + k.dependency);
  }
  l.claims.shown.push_back(
      (no_policy ? "its binaries are consistent with no " + family + " policy (" + tag + ")"
                 : "its binaries are consistent with " + tag) +
      (from_deps.empty()
           ? ""
           : fmt::format(" with {} (declared dependencies, reached by RPATH or RUNPATH); the wheel alone, "
                         "as `auditwheel show` judges it, with {}",
                         join(from_deps, ", "), c.tag)) +
      (glibc.empty() ? "" : ", needing glibc " + glibc));
  if (const auto claim = policy::check_claim(w, c, *l.o.policies)) l.add(verdict::tag_claim_finding(*claim, true));
  const auto loose = std::find_if(w.filename.tags.begin(), w.filename.tags.end(), [](const wheel::Tag& t) {
    return wheel::parse_platform(t.platform).kind == wheel::Platform::Kind::Linux;
  });
  if (loose == w.filename.tags.end()) return;
  std::vector<std::string> other;  // the reasons beyond the glibc version
  for (const auto& k : c.constrained_by) {
    if (k.rule == policy::Rule::SymbolVersion && k.version.rfind("GLIBC_", 0) == 0) continue;
    if (!k.dependency.empty()) continue;  // its declared dependency installs it
    if (other.size() < 3) other.push_back(k.detail);
  }
  const std::string cause = glibc.empty() ? "" : verdict::known_cause("GLIBC_" + glibc, symbols);
  const std::string glibc_words =
      glibc.empty() ? ""
                    : fmt::format("glibc {} (GLIBC_{}, for {}{})", glibc, glibc, join(first_demangled(symbols), ", "),
                                  symbols.size() > verdict::k_floor_symbols_listed ? ", ..." : "");
  // With a policy: its glibc floor decides, and the symbols behind it. With none: the reasons no policy holds
  // decide, and the glibc floor comes after them.
  const std::string why =
      no_policy ? fmt::format("no {} policy: {}{}", family, join(other, "; "),
                              glibc_words.empty() ? "" : "; its glibc floor is " + glibc_words)
                : fmt::format("{}{}{}{}", tag, glibc_words.empty() ? "" : ": they need " + glibc_words,
                              cause.empty() ? "" : "; " + cause, other.empty() ? "" : "; and " + join(other, "; "));
  std::vector<std::string> excluded;  // what `auditwheel repair` must leave to the declared dependencies
  for (const auto& k : c.constrained_by) {
    if (!k.dependency.empty()) excluded.push_back("--exclude " + k.library);
  }
  const std::string repair =
      excluded.empty() ? "`auditwheel repair`" : "`auditwheel repair " + join(excluded, " ") + "`";
  const bool glibc_family = c.libc == policy::Libc::Glibc;
  verdict::Finding f =
      make(FindingKind::TagFloor, Severity::Warning)
          .member(member)
          .library(glibc.empty() ? "" : "libc.so.6")
          .version(tag)
          .explain(fmt::format("the wheel is tagged {}, a local build's tag that promises nothing about the system: "
                               "pip installs it on any {} Linux. Its binaries are consistent with {}",
                               loose->platform, c.machine, why))
          .fix(no_policy ? fmt::format("make it consistent with a {} policy (bundle what no policy allows: {}), "
                                       "then tag it so",
                                       family, repair)
                         : fmt::format("tag it {} ({} does), or build it on the oldest {} it must run on (a {} image)",
                                       tag, repair, glibc_family ? "glibc" : "musl", family))
          .evidence(fmt::format("consistent_with {} (policy::analyze, as `wheelcheck inspect` shows)", c.tag));
  f.symbols = first_demangled(symbols);
  f.symbols_total = total;
  l.add(std::move(f));
}

void check_unloadable(Lint& l) {
  const auto& w = l.w;
  std::map<std::string, const MemberProfile*> by_name;  // soname and file name -> member
  for (const auto& m : w.members) {
    if (!m.elf) continue;
    by_name.emplace(base_name(m.path), &m);
    if (m.elf->soname) by_name.emplace(*m.elf->soname, &m);
  }
  const SystemTables* sys = l.o.db != nullptr ? &system_tables(*l.o.db) : nullptr;
  for (const auto& m : w.members) {
    // A static program carries its C library and binds nothing at run time. A shared library with no DT_NEEDED
    // is not one: it is loaded into a process (Python's) whose global scope must define what it leaves undefined.
    if (!m.elf || (m.elf->statically_linked() && resolve::is_program(*m.elf))) continue;
    if (m.elf->type != elf::FileType::Shared && m.elf->type != elf::FileType::Executable) continue;
    const bool program = resolve::is_program(*m.elf);
    const std::string machine = elf::machine_name(m.elf->machine, m.elf->elf_class, m.elf->endian, m.elf->e_flags);
    // The system tables are glibc's (debian13's): a musl member's needs are not in them.
    const bool glibc_tables = sys != nullptr && sys->machine == machine && !unloadable_musl_member(*m.elf);
    // The member's load: what its needs reach in the wheel, the system tables they reach, what is not known.
    std::vector<const MemberProfile*> scope{&m};
    std::vector<const exports::Table*> tables;
    std::vector<std::string> unknown, needs;
    for (std::size_t i = 0; i < scope.size(); ++i) {
      for (const auto& n : scope[i]->elf->needed) {
        if (std::find(needs.begin(), needs.end(), n) == needs.end()) needs.push_back(n);
        if (const auto it = by_name.find(n); it != by_name.end()) {
          if (std::find(scope.begin(), scope.end(), it->second) == scope.end()) scope.push_back(it->second);
          continue;
        }
        if (glibc_tables) {
          if (const auto t = sys->by_soname.find(n); t != sys->by_soname.end()) {
            tables.push_back(&t->second);
            continue;
          }
        }
        unknown.push_back(n);
      }
    }
    // The global scope an import has before the member's own needs: the python executable (its Py* names, left
    // alone below) and what it loads, libc.so.6 and libm.so.6 (interpreter_scope), and the loader. An extension
    // module is loaded so, and so is a library of the wheel whether an extension module or ctypes loads it. A program
    // has no interpreter: its own needs alone define what it leaves undefined.
    std::vector<std::string> global;
    if (!program && glibc_tables) {
      for (const auto& [soname, table] : sys->by_soname) {
        if (!interpreter_scope(soname)) continue;
        global.push_back(soname);
        if (std::find(tables.begin(), tables.end(), &table) == tables.end()) tables.push_back(&table);
      }
    } else if (!program) {
      unknown.push_back("the interpreter's libc.so.6");  // only the wheel's own symbols can be judged
    }
    std::vector<std::string> missing;
    const rules::OwnSymbols* own_why = nullptr;
    for (const auto& s : m.elf->symbols) {
      if (s.defined || s.weak() || (!program && python_api_name(s.name))) continue;
      if (!s.version.empty() && by_name.count(s.version_file) == 0) continue;  // a version floor: tag-floor's
      const auto defines = [&](const MemberProfile* o) {
        return std::any_of(o->elf->symbols.begin(), o->elf->symbols.end(),
                           [&](const elf::Symbol& d) { return d.exported() && d.name == s.name; });
      };
      if (std::any_of(scope.begin(), scope.end(), defines)) continue;
      if (std::any_of(tables.begin(), tables.end(), [&](const exports::Table* t) { return !t->find(s.name).empty(); }))
        continue;
      const rules::OwnSymbols* own =
          l.o.rules != nullptr ? rules::own_symbol(*l.o.rules, w.filename.name, s.name) : nullptr;
      if (own == nullptr) {
        if (!unknown.empty() || l.provider_of_symbol(s.name) != nullptr) continue;
        if (std::any_of(w.members.begin(), w.members.end(),
                        [&](const MemberProfile& o) { return o.elf && &o != &m && defines(&o); }))
          continue;  // another member defines it: loaded first with RTLD_GLOBAL, it serves
      } else if (std::any_of(w.members.begin(), w.members.end(),
                             [&](const MemberProfile& o) { return o.elf && defines(&o); })) {
        continue;
      }
      if (own != nullptr) own_why = own;
      missing.push_back(s.name);
    }
    if (missing.empty()) continue;
    const auto listed = first_demangled(missing);
    const std::string words =
        join(listed, ", ") +
        (missing.size() > listed.size() ? fmt::format(" and {} more", missing.size() - listed.size()) : "");
    verdict::Finding f =
        make(FindingKind::UnloadableSymbol, Severity::Error)
            .member(m.path)
            .symbol(missing.front())
            .explain(
                own_why != nullptr
                    ? fmt::format("{} leaves {} undefined, which the wheel's own sources define ({}), and no member of "
                                  "the wheel defines it: the link passed, and dlopen(RTLD_NOW) fails on every machine "
                                  "(\"undefined symbol: {}\"), so Python's import and ctypes fail whatever the image",
                                  m.path, words, own_why->why, missing.front())
                : program
                    ? fmt::format("{} leaves {} undefined, and none of its needs ({}) defines {}, in the wheel or in "
                                  "the system libraries; it is a program, so no interpreter's scope completes it: "
                                  "glibc's loader refuses to start it on every machine (\"symbol lookup error: "
                                  "undefined symbol: {}\"; at the first call without LD_BIND_NOW)",
                                  m.path, words, needs.empty() ? std::string("it has none") : join(needs, ", "),
                                  missing.size() == 1 ? "it" : "them", missing.front())
                    : fmt::format("{} leaves {} undefined, and neither its needs ({}) nor the interpreter's global "
                                  "scope (python, {}) define {}, in the wheel or in the system libraries: "
                                  "dlopen(RTLD_NOW) fails on every machine (\"undefined symbol: {}\"), so Python's "
                                  "import and ctypes fail whatever the image",
                                  m.path, words, needs.empty() ? std::string("it has none") : join(needs, ", "),
                                  join(global, ", "), missing.size() == 1 ? "it" : "them", missing.front()))
            .fix(own_why != nullptr ? "build it with the sources that define it (link with -Wl,--no-undefined to "
                                      "catch this at link time)"
                                    : "link the library that defines it, or build with -Wl,--no-undefined to catch "
                                      "this at link time")
            .evidence(fmt::format("{} needs {}; searched: the wheel's {}, {} and {} system table(s) of the db", m.path,
                                  needs.empty() ? std::string("nothing (no DT_NEEDED)") : join(needs, ", "),
                                  scope.size(),
                                  program ? std::string("no interpreter (a program)")
                                          : "the interpreter's global scope (" + join(global, ", ") + ")",
                                  tables.size()));
    f.symbols = listed;
    f.symbols_total = missing.size();
    l.add(std::move(f));
  }
}

}  // namespace wheelcheck::lint::detail
