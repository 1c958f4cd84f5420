// CPython's import of an extension module (import_rules.hpp). `import pkg.foo` asks each path entry's
// FileFinder for pkg/foo + one of importlib.machinery.EXTENSION_SUFFIXES, which on Linux are
// '.cpython-3X-<multiarch>.so' (SOABI: 3.7 and older add 'm', a free-threaded build 't', a debug build 'd'),
// '.abi3.so' and '.so' (Python/dynload_shlib.c). A file named for another Python or another multiarch is not
// looked at: the import fails with ModuleNotFoundError unless something else serves the name. A file it finds
// is loaded with dlopen and its PyInit_<last component> looked up (PyInitU_<punycode> for a name that is not
// ASCII; multi-phase init returns its definition from the same function); without it: "ImportError: dynamic
// module does not define module export function (PyInit_foo)" (Python/importdl.c).
#include "inspector/verdict/import_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>

#include "inspector/verdict/findings.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::verdict {

namespace {

// The newest CPython 3 minor release: an abi3 tag installs a wheel on every CPython from its own up to it.
constexpr int k_newest_minor = 14;

std::string soabi_of(const Cpython& p) {
  return fmt::format("3{}{}{}", p.minor, p.minor <= 7 ? "m" : "", p.free_threaded ? "t" : "");
}

std::string python_words(const Cpython& p) {
  return fmt::format("CPython 3.{}{}", p.minor, p.free_threaded ? " (free-threaded)" : "");
}

// Whether CPython `p` on one of `multiarchs` (empty: not known, not judged) imports a file named `n`.
bool imports(const Cpython& p, const std::vector<std::string>& multiarchs, const ExtensionName& n) {
  switch (n.kind) {
    case ExtensionName::Kind::Plain: return true;
    case ExtensionName::Kind::Abi3: return p.minor >= 2;  // PEP 384: every CPython from 3.2
    case ExtensionName::Kind::Versioned:
      return n.soabi == soabi_of(p) &&
             (multiarchs.empty() || std::find(multiarchs.begin(), multiarchs.end(), n.multiarch) != multiarchs.end());
  }
  return false;
}

// What a suffix is for, in words: "CPython 3.11 on x86_64-linux-gnu".
std::string suffix_words(const ExtensionName& n) {
  if (n.kind != ExtensionName::Kind::Versioned) return "every CPython";
  std::string version = n.soabi, flags;
  while (!version.empty() && !std::isdigit(static_cast<unsigned char>(version.back()))) {
    flags.insert(flags.begin(), version.back());
    version.pop_back();
  }
  std::string who =
      version.size() >= 2 ? "CPython " + version.substr(0, 1) + "." + version.substr(1) : "CPython " + version;
  if (flags.find('t') != std::string::npos) who = "free-threaded " + who;
  if (flags.find('d') != std::string::npos) who = "a debug build of " + who;
  return who + (n.multiarch.empty() ? " with no multiarch" : " on " + n.multiarch);
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::vector<std::string> q;
  for (const auto& i : items) q.push_back("'" + i + "'");
  return "[" + join(q, ", ") + "]";
}

// A member as Python sees it: where it is installed (relative to site-packages) and its dotted module name.
struct Candidate {
  const MemberProfile* member = nullptr;
  ExtensionName name;
  std::string dotted;  // "pkg.foo"
  std::string group;   // "pkg/foo": the module every suffix of it competes for
  std::string init;    // whose PyInit_ CPython looks up: "foo"; a package's __init__ is the package's ("pkg")
};

std::vector<Candidate> candidates(const WheelProfile& wheel) {
  std::vector<Candidate> out;
  for (const auto& m : wheel.members) {
    if (!m.elf || m.elf->type != elf::FileType::Shared) continue;
    std::string path = m.path;
    // <name>.data/purelib/ and platlib/ are installed into site-packages; the other schemes are not importable.
    if (const auto data = path.find(".data/"); data != std::string::npos && path.find('/') == data + 5) {
      const std::string rest = path.substr(data + 6);
      if (rest.rfind("purelib/", 0) != 0 && rest.rfind("platlib/", 0) != 0) continue;
      path = rest.substr(rest.find('/') + 1);
    }
    auto name = extension_name(base_name(path));
    if (!name) continue;
    const std::string folder = dir_name(path);
    std::string package = folder == "." ? "" : folder;
    std::replace(package.begin(), package.end(), '/', '.');
    // pkg/__init__.<suffix> is the package itself (importlib's FileFinder tries __init__ with every suffix):
    // `import pkg` loads it and looks up PyInit_pkg (apsw ships its extension so).
    if (name->module == "__init__" && !package.empty()) {
      out.push_back({&m, *name, package, folder + "/__init__", package.substr(package.rfind('.') + 1)});
      continue;
    }
    out.push_back({&m, *name, package.empty() ? name->module : package + "." + name->module,
                   (package.empty() ? "" : folder + "/") + name->module, name->module});
  }
  return out;
}

// Whether the member is meant to be imported, so that its PyInit_ function is CPython's question: a CPython
// suffix says so, unless it exports no PyInit_ function at all and another member links it (a library that
// happens to be named like a module); a plain .so says so when it exports some PyInit_ function (never lib*.so).
bool meant_as_module(const WheelProfile& wheel, const Candidate& c) {
  const auto& symbols = c.member->elf->symbols;
  const bool any_init = std::any_of(symbols.begin(), symbols.end(), [](const elf::Symbol& s) {
    return s.exported() && s.name.rfind("PyInit", 0) == 0;
  });
  if (c.name.kind == ExtensionName::Kind::Plain) return any_init && c.name.module.rfind("lib", 0) != 0;
  if (any_init) return true;
  const std::string file = base_name(c.member->path);
  const std::string soname = c.member->elf->soname.value_or(file);
  return std::none_of(wheel.members.begin(), wheel.members.end(), [&](const MemberProfile& m) {
    return m.elf && std::any_of(m.elf->needed.begin(), m.elf->needed.end(),
                                [&](const std::string& n) { return n == file || n == soname; });
  });
}

// The PyInit_ check of one member CPython loads: an error when it does not export its init function.
std::optional<Finding> init_finding(const Candidate& c) {
  const std::string wanted = init_function(c.init);
  std::vector<std::string> others;
  for (const auto& s : c.member->elf->symbols) {
    if (!s.exported() || s.name.rfind("PyInit", 0) != 0) continue;
    if (s.name == wanted) return std::nullopt;
    others.push_back(s.name);
  }
  return make(FindingKind::ModuleInit, Severity::Error)
      .member(c.member->path)
      .symbol(wanted)
      .candidates(others)
      .explain(fmt::format(
          "`import {}` loads {} and looks up {} in it (CPython names the function after the module's last "
          "component), which it does not export{}: the import fails with \"ImportError: dynamic module does not "
          "define module export function ({})\"",
          c.dotted, c.member->path, wanted, others.empty() ? std::string() : " (it exports " + join(others, ", ") + ")",
          wanted))
      .fix(others.empty() || others.front().rfind("PyInit_", 0) != 0
               ? fmt::format("define PyMODINIT_FUNC {}(void) in it (exported, default visibility)", wanted)
               : fmt::format("name the file after the module its {} initialises ({}{}), or rename the function {}",
                             others.front(), others.front().substr(7), c.name.suffix, wanted))
      .evidence(fmt::format("{}: module {}, suffix {}; exported PyInit functions: {}", c.member->path, c.dotted,
                            c.name.suffix, others.empty() ? std::string("none") : join(others, ", ")));
}

// The CPythons the wheel's tags install it on: cpXY (and cpXYt) exactly, cpXY-abi3 every CPython from X.Y.
std::vector<Cpython> tagged_pythons(const WheelProfile& wheel) {
  std::vector<Cpython> out;
  auto add = [&](Cpython p) {
    if (std::none_of(out.begin(), out.end(),
                     [&](const Cpython& q) { return q.minor == p.minor && q.free_threaded == p.free_threaded; }))
      out.push_back(p);
  };
  for (const auto& t : wheel.filename.tags) {
    const wheel::Interpreter it = wheel::parse_interpreter(t.python);
    if (!it.valid || it.impl != "cp" || it.major != 3 || it.minor < 0) continue;
    const std::string abi = ascii_lower(t.abi);
    if (abi.rfind("cp", 0) == 0 && abi.find('d', 2) != std::string::npos) continue;  // a debug build: not modelled
    if (abi == "abi3") {
      for (int minor = it.minor; minor <= std::max(it.minor, k_newest_minor); ++minor) add({minor, false});
    } else if (abi == "none") {
      add({it.minor, false});
    } else if (abi.rfind("cp3", 0) == 0 && abi.size() > 3) {
      int minor = 0;
      std::size_t i = 3;
      for (; i < abi.size() && std::isdigit(static_cast<unsigned char>(abi[i])); ++i)
        minor = minor * 10 + (abi[i] - '0');
      if (i > 3) add({minor, abi.find('t', 3) != std::string::npos});
    }
  }
  std::sort(out.begin(), out.end(), [](const Cpython& a, const Cpython& b) {
    return a.minor != b.minor ? a.minor < b.minor : a.free_threaded < b.free_threaded;
  });
  return out;
}

// The multiarchs of the wheel's platform tags (manylinux: glibc, musllinux: musl, linux_*: either); empty
// when no tag names a Linux machine.
std::vector<std::string> tagged_multiarchs(const WheelProfile& wheel) {
  std::set<std::string> out;
  for (const auto& t : wheel.filename.tags) {
    const wheel::Platform p = wheel::parse_platform(t.platform);
    const std::string arch = wheel::normalize_arch(p.arch);
    const bool glibc = p.kind == wheel::Platform::Kind::Manylinux || p.kind == wheel::Platform::Kind::Linux;
    const bool musl = p.kind == wheel::Platform::Kind::Musllinux || p.kind == wheel::Platform::Kind::Linux;
    if (glibc && !multiarch_of(arch, false).empty()) out.insert(multiarch_of(arch, false));
    if (musl && !multiarch_of(arch, true).empty()) out.insert(multiarch_of(arch, true));
  }
  return {out.begin(), out.end()};
}

std::string pythons_words(const std::vector<Cpython>& ps) {
  if (ps.size() > 2 && std::all_of(ps.begin(), ps.end(), [](const Cpython& p) { return !p.free_threaded; }) &&
      ps.back().minor - ps.front().minor + 1 == static_cast<int>(ps.size()))
    return fmt::format("CPython 3.{} to 3.{}", ps.front().minor, ps.back().minor);
  std::vector<std::string> words;
  for (const auto& p : ps) words.push_back(python_words(p));
  return join(words, ", ");
}

std::string tags_words(const WheelProfile& wheel) {
  std::vector<std::string> pairs;
  for (const auto& t : wheel.filename.tags) {
    const std::string pair = t.python + "-" + t.abi;
    if (std::find(pairs.begin(), pairs.end(), pair) == pairs.end()) pairs.push_back(pair);
  }
  return join(pairs, ", ");
}

// A member no Python the tags name imports (lint's rule; the image check's condition where its Python is unknown).
Finding untagged_suffix_finding(const WheelProfile& wheel, const Candidate& c, const std::vector<Cpython>& tagged,
                                const std::vector<std::string>& multiarchs, Severity severity) {
  std::vector<std::string> wanted;
  for (const auto& p : tagged) {
    for (const auto& m : multiarchs.empty() ? std::vector<std::string>{c.name.multiarch} : multiarchs)
      wanted.push_back(extension_suffixes(p, m).front());
  }
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  const std::string who = pythons_words(tagged);
  return make(FindingKind::ExtensionSuffix, severity)
      .member(c.member->path)
      .library(c.name.suffix)
      .version(who)
      .explain(fmt::format(
          "{} is named with the extension suffix of {} ({}), and the wheel's tags ({}) install it on {}, whose "
          "importlib.machinery.EXTENSION_SUFFIXES do not include it: `import {}` finds no file and fails with "
          "\"ModuleNotFoundError: No module named '{}'\" (unless another file serves the name)",
          c.member->path, suffix_words(c.name), c.name.suffix, tags_words(wheel), who, c.dotted, c.dotted))
      .fix(fmt::format("build it with the Python the wheel is tagged for (its EXT_SUFFIX names it {}{}), or tag the "
                       "wheel for the Python it is built for",
                       c.name.module, wanted.empty() ? ".abi3.so" : wanted.front()))
      .evidence(
          fmt::format("the wheel's tags: {}; the suffixes they import: {}", tags_words(wheel), quoted_list(wanted)));
}

}  // namespace

std::optional<ExtensionName> extension_name(std::string_view file_name) {
  const auto dot = file_name.find('.');
  if (dot == std::string_view::npos || dot == 0 || !file_name.ends_with(".so")) return std::nullopt;
  ExtensionName n;
  n.module = std::string(file_name.substr(0, dot));
  n.suffix = std::string(file_name.substr(dot));
  if (n.suffix == ".so") return n;
  if (n.suffix == ".abi3.so") {
    n.kind = ExtensionName::Kind::Abi3;
    return n;
  }
  if (n.suffix.rfind(".cpython-", 0) != 0) return std::nullopt;         // PyPy's, GraalPy's, or a dotted name
  const std::string tag = n.suffix.substr(9, n.suffix.size() - 9 - 3);  // "311-x86_64-linux-gnu"
  const auto dash = tag.find('-');
  n.kind = ExtensionName::Kind::Versioned;
  n.soabi = tag.substr(0, dash);
  n.multiarch = dash == std::string::npos ? "" : tag.substr(dash + 1);
  return n;
}

std::string multiarch_of(const std::string& machine, bool musl) {
  static const std::map<std::string, std::pair<const char*, const char*>> k_triplets = {
      {"x86_64", {"x86_64-linux-gnu", "x86_64-linux-musl"}},
      {"i686", {"i386-linux-gnu", "i386-linux-musl"}},
      {"aarch64", {"aarch64-linux-gnu", "aarch64-linux-musl"}},
      {"armhf", {"arm-linux-gnueabihf", "arm-linux-musleabihf"}},
      {"armel", {"arm-linux-gnueabi", "arm-linux-musleabi"}},
      {"ppc64le", {"powerpc64le-linux-gnu", "powerpc64le-linux-musl"}},
      {"ppc64", {"powerpc64-linux-gnu", "powerpc64-linux-musl"}},
      {"s390x", {"s390x-linux-gnu", "s390x-linux-musl"}},
      {"riscv64", {"riscv64-linux-gnu", "riscv64-linux-musl"}},
      {"loongarch64", {"loongarch64-linux-gnu", "loongarch64-linux-musl"}},
  };
  const auto it = k_triplets.find(machine);
  if (it == k_triplets.end()) return "";
  return musl ? it->second.second : it->second.first;
}

std::vector<std::string> extension_suffixes(const Cpython& python, const std::string& multiarch) {
  return {".cpython-" + soabi_of(python) + (multiarch.empty() ? "" : "-" + multiarch) + ".so", ".abi3.so", ".so"};
}

std::string init_function(std::string_view module) {
  if (std::all_of(module.begin(), module.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
    return "PyInit_" + std::string(module);
  // RFC 3492 punycode of the name's code points, as Python's "punycode" codec writes it.
  std::vector<std::uint32_t> cps;
  for (std::size_t i = 0; i < module.size();) {
    const auto c = static_cast<unsigned char>(module[i]);
    const int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    std::uint32_t cp = len == 1 ? c : c & (0xFF >> (len + 1));
    for (int k = 1; k < len && i + k < module.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(module[i + k]) & 0x3F);
    cps.push_back(cp);
    i += len;
  }
  std::string out;
  for (auto cp : cps)
    if (cp < 0x80) out += static_cast<char>(cp);
  const std::size_t basic = out.size();
  if (basic > 0) out += '-';
  auto digit = [](std::uint32_t d) { return static_cast<char>(d < 26 ? 'a' + d : '0' + (d - 26)); };
  auto adapt = [](std::uint32_t delta, std::uint32_t points, bool first) {
    delta = first ? delta / 700 : delta / 2;
    delta += delta / points;
    std::uint32_t k = 0;
    for (; delta > ((36 - 1) * 26) / 2; k += 36) delta /= 36 - 1;
    return k + (36 * delta) / (delta + 38);
  };
  std::uint32_t n = 0x80, delta = 0, bias = 72, handled = static_cast<std::uint32_t>(basic);
  while (handled < cps.size()) {
    std::uint32_t m = UINT32_MAX;
    for (auto cp : cps)
      if (cp >= n && cp < m) m = cp;
    delta += (m - n) * (handled + 1);
    n = m;
    for (auto cp : cps) {
      if (cp < n) ++delta;
      if (cp != n) continue;
      std::uint32_t q = delta;
      for (std::uint32_t k = 36;; k += 36) {
        const std::uint32_t t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
        if (q < t) break;
        out += digit(t + (q - t) % (36 - t));
        q = (q - t) / (36 - t);
      }
      out += digit(q);
      bias = adapt(delta, handled + 1, handled == basic);
      delta = 0;
      ++handled;
    }
    ++delta;
    ++n;
  }
  std::replace(out.begin(), out.end(), '-', '_');
  return "PyInitU_" + out;
}

std::vector<Finding> check_import_rules(const WheelProfile& wheel, const image::Image& image,
                                        const image::Python* python) {
  std::vector<Finding> out;
  const auto all = candidates(wheel);
  // The image's Python: the one the tags select, else a version the description states alone.
  std::optional<Cpython> target;
  std::string executable;
  if (python != nullptr || image.python.known()) {
    const std::string version = python != nullptr ? python->version : *image.python.value;
    const auto dot = version.find('.');
    if (version.rfind("3.", 0) == 0 && dot != std::string::npos) {
      Cpython p;
      p.minor = std::atoi(version.c_str() + dot + 1);
      p.free_threaded = version.ends_with("t");
      if (python != nullptr)
        p.free_threaded = std::any_of(python->abi_tags.begin(), python->abi_tags.end(),
                                      [](const std::string& t) { return t.size() > 4 && t.ends_with("t"); });
      target = p;
      if (python != nullptr) executable = python->executable;
    }
  }
  const auto tagged = tagged_pythons(wheel);
  for (const auto& c : all) {
    const std::string machine = elf::machine_name(c.member->elf->machine, c.member->elf->elf_class,
                                                  c.member->elf->endian, c.member->elf->e_flags);
    const std::string arch = image.arch.known() ? wheel::normalize_arch(*image.arch.value) : machine;
    if (arch != machine) continue;  // wrong-arch says it cannot load at all
    std::vector<std::string> multiarchs;
    const bool glibc = !image.libc_kind.known() || *image.libc_kind.value == "glibc";
    const bool musl = !image.libc_kind.known() || *image.libc_kind.value == "musl";
    if (glibc && !multiarch_of(arch, false).empty()) multiarchs.push_back(multiarch_of(arch, false));
    if (musl && !multiarch_of(arch, true).empty()) multiarchs.push_back(multiarch_of(arch, true));
    if (!target) {
      // Unknown: only a suffix the wheel's own tags contradict is worth a word (the tag-python condition says
      // the rest), and it is a condition on the Python the image turns out to have.
      if (!tagged.empty() &&
          std::none_of(tagged.begin(), tagged.end(), [&](const Cpython& p) { return imports(p, multiarchs, c.name); }))
        out.push_back(untagged_suffix_finding(wheel, c, tagged, multiarchs, Severity::Condition));
      else if (meant_as_module(wheel, c))
        if (auto f = init_finding(c)) out.push_back(std::move(*f));
      continue;
    }
    if (imports(*target, multiarchs, c.name)) {
      if (meant_as_module(wheel, c))
        if (auto f = init_finding(c)) out.push_back(std::move(*f));
      continue;
    }
    // Another file of the same module that this Python imports serves it: this one is only never used.
    const bool served = std::any_of(all.begin(), all.end(), [&](const Candidate& o) {
      return &o != &c && o.group == c.group && imports(*target, multiarchs, o.name);
    });
    if (served) continue;
    const auto suffixes = extension_suffixes(*target, multiarchs.size() == 1 ? multiarchs.front() : "");
    const std::string who = python_words(*target);
    out.push_back(
        make(FindingKind::ExtensionSuffix, Severity::Error)
            .member(c.member->path)
            .library(c.name.suffix)
            .version(who)
            .explain(fmt::format(
                "the image's Python ({}) imports {} only as {}{}, {}{} or {}.so (importlib.machinery."
                "EXTENSION_SUFFIXES), and {} is the suffix of {}: `import {}` fails with \"ModuleNotFoundError: No "
                "module named '{}'\" (unless a pure-Python {}.py beside it is imported instead)",
                who, c.dotted, c.name.module, suffixes[0], c.name.module, suffixes[1], c.name.module, c.name.suffix,
                suffix_words(c.name), c.dotted, c.dotted, c.group))
            .fix(fmt::format("install the wheel built for {} (its member is named {}{}), or rebuild this one with "
                             "it",
                             who, c.name.module, suffixes[0]))
            .evidence(fmt::format("the image's Python: {}{}; EXTENSION_SUFFIXES {}", who,
                                  executable.empty() ? "" : " (" + executable + ")", quoted_list(suffixes)))
            .evidence(fmt::format("{}: suffix {} ({})", c.member->path, c.name.suffix, suffix_words(c.name))));
  }
  return out;
}

std::vector<Finding> lint_import_rules(const WheelProfile& wheel) {
  std::vector<Finding> out;
  const auto all = candidates(wheel);
  const auto tagged = tagged_pythons(wheel);
  const auto multiarchs = tagged_multiarchs(wheel);
  std::set<std::string> gaps_said;
  for (const auto& c : all) {
    const auto imported_by = [&](const Candidate& o) {
      std::vector<Cpython> by;
      for (const auto& p : tagged)
        if (imports(p, multiarchs, o.name)) by.push_back(p);
      return by;
    };
    const auto mine = imported_by(c);
    if (!tagged.empty() && mine.empty()) {
      out.push_back(untagged_suffix_finding(wheel, c, tagged, multiarchs, Severity::Error));
      continue;
    }
    if (meant_as_module(wheel, c))
      if (auto f = init_finding(c)) out.push_back(std::move(*f));
    if (tagged.empty() || !gaps_said.insert(c.group).second) continue;
    // The Pythons the tags install it on that no file of this module serves (a cp39-abi3 wheel whose module is
    // named .cpython-39-...: every CPython from 3.10 finds nothing).
    std::vector<Cpython> gaps;
    for (const auto& p : tagged) {
      if (std::none_of(all.begin(), all.end(),
                       [&](const Candidate& o) { return o.group == c.group && imports(p, multiarchs, o.name); }))
        gaps.push_back(p);
    }
    if (gaps.empty()) continue;
    out.push_back(make(FindingKind::ExtensionSuffix, Severity::Error)
                      .member(c.member->path)
                      .library(c.name.suffix)
                      .version(pythons_words(gaps))
                      .explain(fmt::format(
                          "{} is named with the extension suffix of {} ({}): only {} imports it, and the wheel's tags "
                          "({}) also install it on {}, where `import {}` fails with \"ModuleNotFoundError: No "
                          "module named '{}'\"",
                          c.member->path, suffix_words(c.name), c.name.suffix, pythons_words(mine), tags_words(wheel),
                          pythons_words(gaps), c.dotted, c.dotted))
                      .fix("build it for the stable ABI (Py_LIMITED_API, named .abi3.so) as the tag claims, or tag "
                           "the wheel for the Python it is built for")
                      .evidence(fmt::format("the wheel's tags: {}", tags_words(wheel))));
  }
  return out;
}

}  // namespace wheelcheck::verdict
