// Wheel-level checks, before any file is resolved: will pip install this wheel into the image's Python,
// and is its native code built for the image's machine? What a tag or a version says on its own lives with
// the wheel (inspector/wheel/tags.cpp, inspector/wheel/version.cpp); this file judges it against the image.
//
// Tags. A wheel's file name carries one or more (python, abi, platform) triples; compressed sets
// ("py2.py3", "cp311.cp312", "manylinux_2_17_x86_64.manylinux2014_x86_64") are already expanded by
// wheel::parse_filename. pip installs the wheel if ANY triple is in the interpreter's supported set
// (packaging.tags.sys_tags), so each triple is judged on its own and the wheel passes when one triple
// passes. For a CPython X.Y the supported (python, abi) pairs are, as packaging generates them:
//   cpXY with each ABI tag the interpreter reports (cpXY, cpXYt for a free-threaded build),
//   cpXW-abi3 for every W <= Y (not on a free-threaded build: it reports no abi3),
//   cpXY-none, pyXW-none for every W <= Y, and pyX-none.
// The platform is judged against the image alone: "any"; manylinux_A_B_<arch> (and the legacy aliases
// manylinux1 = 2_5, manylinux2010 = 2_12, manylinux2014 = 2_17) needs glibc >= A.B on that arch;
// musllinux_A_B_<arch> needs musl >= A.B; linux_<arch> is what pip builds locally (installable, but it
// promises nothing about the C library: a Warning). Other operating systems' tags never install.
// When no triple passes, the closest one is reported (the mildest worst severity, then the nearest miss:
// another OS is farther than another arch or C library, which is farther than an old glibc or another
// Python; the first in the name on a tie), each problem as its own finding (tag-python or tag-abi, then
// tag-platform). A cpXW-abi3 tag on a CPython older than X.W is a tag-python finding. A fact the image
// does not state (its Python, arch, C library or its version) gives a Condition, never a guess.
//
// Requires-Python. PEP 440 specifier sets, evaluated as pip does (pip's check_requires_python compares
// sys.version_info[:3], a final release X.Y.Z). An image Python written "3.12" has an unknown patch
// release: wheel::python_satisfies compares it as 3.12.0 (PEP 440 pads the release segment with zeros), and
// check_wheel_tags asks every patch release that could answer differently (3.12.0, 3.12.1 and each patch
// a specifier names, one either side); when the answer depends on the patch it gives a Condition naming
// the patch releases that satisfy the specifier.
//
// Architecture. Every ELF member's elf::machine_name (which folds in class, byte order and the ARM
// float ABI) must equal the image's arch.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "inspector/verdict/stack_checks.hpp"
#include "wheelcheck/checks.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/verdict.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::verdict {

namespace {

// ---------------------------------------------------------------------------------------------------
// Image facts, as the checks read them

struct PyVersion {
  int major = -1;
  int minor = -1;
};

// "3.12", "3.12.4", "3.13t": major and minor.
std::optional<PyVersion> parse_python_version(std::string_view text) {
  text = trim(text);
  if (!text.empty() && (text.back() == 't' || text.back() == 'T')) text.remove_suffix(1);
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::size_t dot2 = text.find('.', dot + 1);
  auto major = small_number(text.substr(0, dot));
  auto minor =
      small_number(text.substr(dot + 1, dot2 == std::string_view::npos ? std::string_view::npos : dot2 - dot - 1));
  if (!major || !minor) return std::nullopt;
  return PyVersion{*major, *minor};
}

// "(declared in ubuntu24.04)", "(declared in ascend-cann9: the image's base OS is not published)"
std::string provenance(const image::Fact& fact, const image::Image& im) {
  std::string s = image::origin_name(fact.origin);
  const std::string& where = fact.layer.empty() ? im.name : fact.layer;
  if (!where.empty()) s += " in " + where;
  if (!fact.note.empty()) s += ": " + fact.note;
  return "(" + s + ")";
}

std::string fact_evidence(std::string_view label, const image::Fact& fact, const image::Image& im) {
  if (!fact.set) return "image " + std::string(label) + ": not stated in the description";
  if (!fact.known()) return "image " + std::string(label) + " unknown " + provenance(fact, im);
  return "image " + std::string(label) + " " + *fact.value + " " + provenance(fact, im);
}

// Why a fact is unknown, for an explanation: "the image's glibc version is unknown (the base OS is not
// published)".
std::string unknown_phrase(std::string_view what, const image::Fact& fact) {
  std::string s = "the image's " + std::string(what) + " is unknown";
  if (fact.set && !fact.note.empty()) s += " (" + fact.note + ")";
  return s;
}

struct ImagePython {
  std::string version;  // as written
  PyVersion pv;
  std::vector<std::string> abi_tags;  // lower case
  bool free_threaded = false;
  std::string evidence;
};

std::string cp_tag(const PyVersion& v) {
  return "cp" + std::to_string(v.major) + std::to_string(v.minor);
}

// The image's Pythons: its pythons entries, else the python fact as a CPython with the default ABI tags.
// Entries whose version cannot be read are left out (and said so in `skipped`).
std::vector<ImagePython> image_pythons(const image::Image& im, std::vector<std::string>& skipped) {
  std::vector<ImagePython> out;
  auto add = [&](const std::string& version, std::vector<std::string> abi_tags, const std::string& evidence) {
    auto pv = parse_python_version(version);
    if (!pv) {
      skipped.push_back("image Python '" + version + "' is not a version wheelcheck can read");
      return;
    }
    ImagePython p;
    p.version = version;
    p.pv = *pv;
    for (auto& t : abi_tags) t = ascii_lower(t);
    const bool t_suffix = !version.empty() && (version.back() == 't' || version.back() == 'T');
    if (abi_tags.empty()) {
      abi_tags = t_suffix ? std::vector<std::string>{cp_tag(*pv) + "t"} : std::vector<std::string>{cp_tag(*pv), "abi3"};
    }
    p.abi_tags = std::move(abi_tags);
    p.free_threaded =
        t_suffix || std::find(p.abi_tags.begin(), p.abi_tags.end(), cp_tag(*pv) + "t") != p.abi_tags.end();
    p.evidence = evidence;
    out.push_back(std::move(p));
  };
  for (const auto& p : im.pythons) {
    std::string ev = "image Python " + p.version + " (ABI tags " +
                     (p.abi_tags.empty() ? std::string("not listed") : join(p.abi_tags, ", ")) + "; " +
                     image::origin_name(p.origin) + " in " + (p.layer.empty() ? im.name : p.layer) + ")";
    add(p.version, p.abi_tags, ev);
  }
  if (im.pythons.empty() && im.python.known()) {
    add(*im.python.value, {},
        "image Python " + *im.python.value + " " + provenance(im.python, im) + ", ABI tags assumed from the version");
  }
  return out;
}

std::string describe_pythons(const std::vector<ImagePython>& pythons) {
  std::vector<std::string> names;
  for (const auto& p : pythons) names.push_back("CPython " + p.version + (p.free_threaded ? " (free-threaded)" : ""));
  return join(names, " and ");
}

// ---------------------------------------------------------------------------------------------------
// Tags

// What a (python, abi) pair asks of the interpreter, for people ("CPython 3.12", "CPython >= 3.8") and
// as a required version ("3.12", ">=3.8").
std::pair<std::string, std::string> requirement(const wheel::Tag& tag) {
  const wheel::Interpreter it = wheel::parse_interpreter(tag.python);
  if (!it.valid) return {"the interpreter '" + tag.python + "'", tag.python};
  const std::string ver = std::to_string(it.major) + (it.minor >= 0 ? "." + std::to_string(it.minor) : "");
  if (it.impl == "cp") {
    if (tag.abi == "abi3") return {"CPython >= " + ver, ">=" + ver};
    if (tag.abi.size() > 2 && tag.abi.back() == 't' && tag.abi.substr(0, 2) == "cp") {
      return {"free-threaded CPython " + ver, ver};
    }
    return {"CPython " + ver, ver};
  }
  if (it.impl == "py") {
    if (it.minor >= 0) return {"Python >= " + ver, ">=" + ver};
    return {"Python " + ver, ver};
  }
  static const std::pair<const char*, const char*> names[] = {
      {"pp", "PyPy"}, {"ip", "IronPython"}, {"jy", "Jython"}, {"graalpy", "GraalPy"}};
  for (const auto& [impl, name] : names) {
    if (it.impl == impl) return {std::string(name) + " (" + tag.python + ")", tag.python};
  }
  return {"the interpreter '" + tag.python + "'", tag.python};
}

bool python_tag_ok(const wheel::Interpreter& it, const std::string& abi, const ImagePython& p) {
  if (!it.valid || it.major != p.pv.major) return false;
  if (it.impl == "cp") {
    if (it.minor < 0) return false;
    return abi == "abi3" ? it.minor <= p.pv.minor : it.minor == p.pv.minor;
  }
  if (it.impl == "py") return it.minor < 0 || it.minor <= p.pv.minor;
  return false;  // the image's Pythons are CPython
}

bool has(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool abi_tag_ok(const wheel::Interpreter& it, const std::string& abi, const ImagePython& p) {
  if (abi == "none") return true;
  if (it.impl != "cp") return false;  // packaging pairs cpXY and abi3 ABI tags only with cp python tags
  return has(p.abi_tags, abi);
}

struct Issue {
  FindingKind kind = FindingKind::TagPython;
  Severity severity = Severity::Error;
  int distance = 1;  // how far the tag is from working: another OS 3, another arch or C library 2, else 1
  std::string explanation;
  std::string fix;
  std::string required_version;
  // What summary() says it of, typed (never cut from the explanation): tag-python the Python the tag names
  // ("CPython 3.11"), tag-abi the ABI tag, tag-platform the platform tag.
  std::string library;
  std::vector<std::string> evidence;
};

Severity worst(const std::vector<Issue>& issues) {
  Severity w = Severity::Info;
  for (const auto& i : issues) w = std::max(w, i.severity);
  return w;
}

std::string floor_text(const std::vector<std::uint64_t>& floor) {
  std::string s;
  for (std::size_t i = 0; i < floor.size(); ++i) s += (i > 0 ? "." : "") + std::to_string(floor[i]);
  return s;
}

// "2.39" -> {2, 39}; nullopt unless numbers and single dots.
std::optional<std::vector<std::uint64_t>> parse_dotted(std::string_view text) {
  std::vector<std::uint64_t> out;
  text = trim(text);
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = text.find('.', start);
    const std::string_view part =
        text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) return std::nullopt;
    out.push_back(v);
    if (dot == std::string_view::npos) return out;
    start = dot + 1;
  }
}

// The older policy a fix can name: "manylinux_2_27" for an image with glibc 2.27.
std::string policy_for(std::string_view family, const std::vector<std::uint64_t>& have) {
  std::string s(family);
  for (std::size_t i = 0; i < have.size() && i < 2; ++i) s += "_" + std::to_string(have[i]);
  return s;
}

class TagChecker {
 public:
  TagChecker(const WheelProfile& wheel, const image::Image& im) : m_image(im) {
    m_pythons = image_pythons(im, m_python_notes);
    for (const auto& t : wheel.filename.tags)
      m_tags.push_back({ascii_lower(t.python), ascii_lower(t.abi), ascii_lower(t.platform)});
    std::vector<std::string> texts;
    for (const auto& t : m_tags) texts.push_back(wheel::tag_text(t));
    constexpr std::size_t k_shown = 16;
    if (texts.size() > k_shown) {
      const std::size_t more = texts.size() - k_shown;
      texts.resize(k_shown);
      texts.push_back("and " + std::to_string(more) + " more");
    }
    m_tags_evidence = "wheel tags: " + join(texts, ", ");
  }

  std::vector<Finding> run() const {
    if (m_tags.empty()) return {};
    std::vector<std::vector<Issue>> per_tag;
    std::size_t best = 0;
    for (std::size_t i = 0; i < m_tags.size(); ++i) {
      per_tag.push_back(check(m_tags[i]));
      if (per_tag[i].empty()) return {};  // one supported tag is enough
      if (better(per_tag[i], per_tag[best])) best = i;
    }
    std::vector<Finding> out;
    for (const auto& issue : per_tag[best]) {
      Finding f;
      f.kind = issue.kind;
      f.severity = issue.severity;
      f.explanation = issue.explanation;
      f.fix = issue.fix;
      f.required_version = issue.required_version;
      f.library = issue.library;
      f.evidence.push_back(m_tags_evidence);
      if (m_tags.size() > 1) f.evidence.push_back("closest tag: " + wheel::tag_text(m_tags[best]));
      for (const auto& e : issue.evidence) f.evidence.push_back(e);
      out.push_back(std::move(f));
    }
    return out;
  }

 private:
  static bool better(const std::vector<Issue>& a, const std::vector<Issue>& b) {
    const Severity wa = worst(a), wb = worst(b);
    if (wa != wb) return wa < wb;
    auto distance = [](const std::vector<Issue>& v, Severity s) {
      int d = 0;
      for (const auto& i : v) d += i.severity == s ? i.distance : 0;
      return d;
    };
    return distance(a, wa) < distance(b, wb);
  }

  std::vector<Issue> check(const wheel::Tag& tag) const {
    std::vector<Issue> issues;
    if (auto i = check_python(tag)) issues.push_back(std::move(*i));
    if (auto i = check_platform(tag)) issues.push_back(std::move(*i));
    return issues;
  }

  std::vector<std::string> python_evidence() const {
    std::vector<std::string> ev;
    for (const auto& p : m_pythons) ev.push_back(p.evidence);
    for (const auto& n : m_python_notes) ev.push_back(n);
    if (m_pythons.empty()) ev.push_back(fact_evidence("Python", m_image.python, m_image));
    return ev;
  }

  // Every distinct interpreter the wheel's tags ask for: "CPython 3.11 or CPython 3.12".
  std::pair<std::string, std::string> all_requirements() const {
    std::vector<std::string> people, versions;
    for (const auto& t : m_tags) {
      auto [p, v] = requirement(t);
      if (!has(people, p)) people.push_back(p);
      if (!has(versions, v)) versions.push_back(v);
    }
    return {join(people, " or "), join(versions, " or ")};
  }

  std::string python_fix() const {
    std::vector<std::string> parts;
    for (const auto& p : m_pythons) {
      const std::string cp = cp_tag(p.pv);
      if (p.free_threaded) {
        parts.push_back(cp + "-" + cp + "t");
      } else {
        parts.push_back(cp + " (or cp" + std::to_string(p.pv.major) + "X-abi3 with X <= " + std::to_string(p.pv.minor) +
                        ")");
      }
    }
    return "use a wheel tagged " + join(parts, " or ") + ", or a pure-Python py" +
           std::to_string(m_pythons.front().pv.major) + "-none-any wheel";
  }

  std::optional<Issue> check_python(const wheel::Tag& tag) const {
    const wheel::Interpreter it = wheel::parse_interpreter(tag.python);
    Issue issue;
    if (m_pythons.empty()) {
      auto [people, versions] = all_requirements();
      issue.kind = FindingKind::TagPython;
      issue.severity = Severity::Condition;
      issue.required_version = versions;
      issue.library = people;
      issue.explanation = "The wheel needs " + people + "; " +
                          (m_python_notes.empty() ? unknown_phrase("Python version", m_image.python)
                                                  : std::string("the image's Python version cannot be read")) +
                          ".";
      issue.fix = "state the image's Python (a pythons entry with its ABI tags), or probe the image";
      issue.evidence = python_evidence();
      return issue;
    }
    bool interpreter_matched = false;
    const ImagePython* matched = nullptr;
    for (const auto& p : m_pythons) {
      if (!python_tag_ok(it, tag.abi, p)) continue;
      interpreter_matched = true;
      matched = &p;
      if (abi_tag_ok(it, tag.abi, p)) return std::nullopt;
    }
    issue.severity = Severity::Error;
    issue.evidence = python_evidence();
    if (!interpreter_matched) {
      auto [people, versions] = all_requirements();
      issue.kind = FindingKind::TagPython;
      issue.required_version = versions;
      issue.library = people;
      issue.explanation = "The wheel is built for " + people + "; the image has " + describe_pythons(m_pythons) + ".";
      issue.fix = python_fix();
      return issue;
    }
    // The interpreter matches but its ABI does not.
    const ImagePython& p = *matched;
    const std::string cp = cp_tag(p.pv);
    issue.kind = FindingKind::TagAbi;
    issue.required_version = p.version;
    issue.library = tag.abi;
    std::vector<std::string> accepted = p.abi_tags;
    accepted.push_back("none");
    if (tag.abi == "abi3" && p.free_threaded) {
      issue.explanation = "The wheel uses the stable ABI (abi3), which the image's free-threaded CPython " + p.version +
                          " does not load.";
      issue.fix = "use a wheel tagged " + cp + "-" + cp +
                  "t (built for the free-threaded ABI), or a default build of "
                  "CPython " +
                  p.version;
    } else if (tag.abi == cp + "t" && !p.free_threaded) {
      issue.explanation = "The wheel is built for the free-threaded build of CPython " + p.version + " (ABI tag " +
                          tag.abi + "); the image's CPython " + p.version + " is the default build (ABI tags " +
                          join(p.abi_tags, ", ") + ").";
      issue.fix =
          "use a wheel tagged " + cp + "-" + cp + " (the default build), or a free-threaded CPython " + p.version + "t";
    } else if (it.impl != "cp" && tag.abi != "none") {
      issue.explanation = "The ABI tag " + tag.abi + " is only installable with a cp python tag; pip accepts no " +
                          tag.python + "-" + tag.abi + " wheel.";
      issue.fix = "use a wheel tagged " + cp + "-" + cp + ", " + cp + "-abi3 or " + tag.python + "-none";
    } else {
      issue.explanation = "The wheel's ABI tag " + tag.abi + " is not one the image's CPython " + p.version +
                          " accepts (" + join(accepted, ", ") + ").";
      issue.fix = "use a wheel whose ABI tag is one of " + join(accepted, ", ");
    }
    return issue;
  }

  std::optional<Issue> check_platform(const wheel::Tag& tag) const {
    const wheel::Platform p = wheel::parse_platform(tag.platform);
    if (p.kind == wheel::Platform::Kind::Any) return std::nullopt;
    Issue issue;
    issue.kind = FindingKind::TagPlatform;
    issue.library = tag.platform;
    const std::string image_arch = m_image.arch.known() ? *m_image.arch.value : "";
    const std::string want_arch = m_image.arch.known() ? wheel::tag_arch_of(image_arch) : "";
    if (p.kind == wheel::Platform::Kind::Foreign || p.kind == wheel::Platform::Kind::Unknown) {
      issue.severity = Severity::Error;
      issue.distance = 3;
      issue.explanation = p.kind == wheel::Platform::Kind::Foreign
                              ? "The wheel is built for " + p.os + " (" + tag.platform + "); the image is Linux."
                              : "The platform tag " + tag.platform + " is not one pip installs on Linux.";
      issue.fix = "use a Linux build of the wheel (a manylinux or musllinux platform tag" +
                  (want_arch.empty() ? std::string() : " for " + want_arch) + ")";
      issue.evidence.push_back(fact_evidence("arch", m_image.arch, m_image));
      return issue;
    }
    std::vector<std::string> errors, conditions, fixes, unknown_facts;
    bool libc_error = false, libc_condition = false;
    issue.distance = 0;
    // The arch, for every Linux tag.
    if (!m_image.arch.known()) {
      conditions.push_back("is built for " + p.arch + " (" + tag.platform + "); " +
                           unknown_phrase("arch", m_image.arch));
      unknown_facts.push_back("arch");
    } else if (!wheel::arch_matches(p.arch, image_arch)) {
      errors.push_back("is built for " + p.arch + " (" + tag.platform + "); the image is " + image_arch);
      issue.distance += 2;
      fixes.push_back("use a wheel built for " + image_arch + " (a platform tag ending in _" + want_arch + ")");
    }
    issue.evidence.push_back(fact_evidence("arch", m_image.arch, m_image));
    // The C library.
    if (p.kind == wheel::Platform::Kind::Manylinux || p.kind == wheel::Platform::Kind::Musllinux) {
      const bool glibc = p.kind == wheel::Platform::Kind::Manylinux;
      const std::string libc = glibc ? "glibc" : "musl";
      const std::string floor = floor_text(p.floor);
      const std::string needs = "needs " + libc + " >= " + floor + " (" + p.policy + ")";
      issue.evidence.push_back(fact_evidence("C library", m_image.libc_kind, m_image));
      if (!m_image.libc_kind.known()) {
        conditions.push_back(needs + "; " + unknown_phrase("C library", m_image.libc_kind));
        unknown_facts.push_back("C library");
        libc_condition = true;
      } else if (ascii_lower(*m_image.libc_kind.value) != libc) {
        errors.push_back(needs + "; the image's C library is " + *m_image.libc_kind.value);
        libc_error = true;
        issue.distance += 2;
        fixes.push_back(glibc ? "use a musllinux build of the wheel, or a glibc-based image"
                              : "use a manylinux build of the wheel, or a musl-based image (Alpine)");
      } else {
        issue.evidence.push_back(fact_evidence(libc, m_image.libc_version, m_image));
        const auto have = m_image.libc_version.known() ? parse_dotted(*m_image.libc_version.value) : std::nullopt;
        if (!m_image.libc_version.known()) {
          conditions.push_back(needs + "; " + unknown_phrase(libc + " version", m_image.libc_version));
          unknown_facts.push_back(libc + " version");
          libc_condition = true;
        } else if (!have) {
          unknown_facts.push_back(libc + " version");
          libc_condition = true;
          conditions.push_back(needs + "; the image's " + libc + " version '" + *m_image.libc_version.value +
                               "' cannot be read");
        } else if (compare_dotted(trim(*m_image.libc_version.value), floor).value_or(-1) < 0) {
          errors.push_back(needs + "; the image has " + libc + " " + *m_image.libc_version.value);
          libc_error = true;
          issue.distance += 1;
          fixes.push_back("use a " + policy_for(glibc ? "manylinux" : "musllinux", *have) +
                          " or older build, or an image with " + libc + " >= " + floor);
        }
      }
    }
    issue.distance = std::max(issue.distance, 1);
    if (!errors.empty()) {
      issue.severity = Severity::Error;
      if (libc_error) issue.required_version = floor_text(p.floor);
      issue.explanation = "The wheel " + join(errors, ", and ") + ".";
      issue.fix = join(fixes, "; ");
      return issue;
    }
    if (!conditions.empty()) {
      issue.severity = Severity::Condition;
      if (libc_condition) issue.required_version = floor_text(p.floor);
      issue.explanation = "The wheel " + join(conditions, ", and ") + ".";
      issue.fix = "state the image's " + join(unknown_facts, " and ") + " in its description, or probe the image";
      return issue;
    }
    if (p.kind == wheel::Platform::Kind::Linux) {
      issue.severity = Severity::Warning;
      issue.explanation = "The platform tag " + tag.platform +
                          " marks a local build: pip installs it, but PyPI does not accept it and it promises "
                          "nothing about the C library or system libraries it needs.";
      issue.fix = "prefer a manylinux or musllinux build (auditwheel repair makes one from this wheel)";
      return issue;
    }
    return std::nullopt;
  }

  const image::Image& m_image;
  std::vector<ImagePython> m_pythons;
  std::vector<std::string> m_python_notes;
  std::vector<wheel::Tag> m_tags;
  std::string m_tags_evidence;
};

// ---------------------------------------------------------------------------------------------------
// Requires-Python

enum class Answer { Yes, No, DependsOnPatch };

struct PatchAnswer {
  Answer answer = Answer::No;
  std::string satisfying;  // "3.12.0 to 3.12.4", for DependsOnPatch
};

// An image Python without a patch release ("3.12"): every patch release where the answer can change
// is sampled (0 and 1, and each patch q a specifier of the same minor names, with q-1 and q+1). Between two
// samples the answer is constant: X.Y.p compares with X.Y.q[...] the same way for every p < q, and for
// every p > q.
std::optional<PatchAnswer> satisfies_any_patch(std::string_view specifiers, const std::vector<wheel::Specifier>& parsed,
                                               const PyVersion& pv) {
  std::set<std::uint64_t> samples = {0, 1};  // X.Y.0 is where X.Y and X.Y.0.N specifiers change
  const auto major = static_cast<std::uint64_t>(pv.major), minor = static_cast<std::uint64_t>(pv.minor);
  for (const auto& s : parsed) {
    const auto& r = s.version.release;
    if (r.size() >= 3 && r[0] == major && r[1] == minor) {
      if (r[2] > 0) samples.insert(r[2] - 1);
      samples.insert(r[2]);
      if (r[2] < UINT64_MAX) samples.insert(r[2] + 1);
    }
  }
  const std::string prefix = std::to_string(pv.major) + "." + std::to_string(pv.minor) + ".";
  std::vector<std::pair<std::uint64_t, bool>> results;
  for (std::uint64_t patch : samples) {
    auto r = wheel::python_satisfies(specifiers, prefix + std::to_string(patch));
    if (!r) return std::nullopt;
    results.emplace_back(patch, *r);
  }
  const bool all = std::all_of(results.begin(), results.end(), [](const auto& r) { return r.second; });
  const bool none = std::none_of(results.begin(), results.end(), [](const auto& r) { return r.second; });
  if (all) return PatchAnswer{Answer::Yes, ""};
  if (none) return PatchAnswer{Answer::No, ""};
  // Each sample stands for the patch releases up to the next sample.
  std::vector<std::string> ranges;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].second) continue;
    std::size_t j = i;
    while (j + 1 < results.size() && results[j + 1].second) ++j;
    const std::uint64_t first = results[i].first;
    if (j + 1 == results.size()) {
      ranges.push_back(prefix + std::to_string(first) + " and later");
    } else {
      const std::uint64_t last = results[j + 1].first - 1;
      ranges.push_back(first == last ? prefix + std::to_string(first)
                                     : prefix + std::to_string(first) + " to " + prefix + std::to_string(last));
    }
    i = j;
  }
  return PatchAnswer{Answer::DependsOnPatch, join(ranges, ", ")};
}

std::vector<Finding> check_requires_python(const WheelProfile& wheel, const image::Image& im) {
  if (!wheel.metadata.requires_python) return {};
  const std::string spec(trim(*wheel.metadata.requires_python));
  if (spec.empty()) return {};
  Finding f;
  f.kind = FindingKind::RequiresPython;
  f.required_version = spec;
  f.evidence.push_back("METADATA Requires-Python: " + spec);
  const auto parsed = wheel::parse_specifier_set(spec);
  if (!parsed) {
    f.severity = Severity::Warning;
    f.explanation = "The wheel's Requires-Python '" + spec +
                    "' is not a valid PEP 440 specifier set; pip warns and ignores it, so it says nothing.";
    f.fix = "nothing to do for the image; the wheel's metadata is malformed";
    return {f};
  }
  std::vector<std::string> notes;
  const auto pythons = image_pythons(im, notes);
  for (const auto& p : pythons) f.evidence.push_back(p.evidence);
  for (const auto& n : notes) f.evidence.push_back(n);
  if (pythons.empty()) {
    f.evidence.push_back(fact_evidence("Python", im.python, im));
    f.severity = Severity::Condition;
    f.explanation = "The wheel requires Python " + spec + "; " + unknown_phrase("Python version", im.python) + ".";
    f.fix = "state the image's Python (a pythons entry), or probe the image";
    return {f};
  }
  std::vector<std::string> failing, depending;
  for (const auto& p : pythons) {
    std::string version = p.version;
    if (!version.empty() && (version.back() == 't' || version.back() == 'T')) version.pop_back();
    const auto release = parse_dotted(version);
    if (release && release->size() == 2) {
      auto r = satisfies_any_patch(spec, *parsed, p.pv);
      if (!r) continue;
      if (r->answer == Answer::Yes) return {};
      if (r->answer == Answer::DependsOnPatch) {
        depending.push_back("it holds for " + r->satisfying + " only, and the image's Python is " + p.version +
                            " with an unknown patch release");
      } else {
        failing.push_back(p.version);
      }
      continue;
    }
    auto r = wheel::python_satisfies(spec, version);
    if (r && *r) return {};
    failing.push_back(p.version);
  }
  if (!depending.empty()) {
    f.severity = Severity::Condition;
    f.explanation = "The wheel requires Python " + spec + ": " + join(depending, "; ") + ".";
    f.fix = "state the image Python's full version (X.Y.Z)";
    return {f};
  }
  f.severity = Severity::Error;
  f.explanation = "The wheel requires Python " + spec + "; the image's Python " + join(failing, " and ") +
                  (failing.size() == 1 ? " does" : " do") + " not satisfy it, and pip refuses to install it.";
  f.fix = "use a release of " + (wheel.filename.name.empty() ? std::string("the project") : wheel.filename.name) +
          " whose Requires-Python admits " + join(failing, " or ") + ", or a Python that satisfies " + spec;
  return {f};
}

// ---------------------------------------------------------------------------------------------------
// Architecture of the ELF members

std::string class_name(elf::Class c) {
  return c == elf::Class::Elf64 ? "ELF64" : "ELF32";
}
std::string endian_name(elf::Endian e) {
  return e == elf::Endian::Little ? "little-endian" : "big-endian";
}

std::vector<Finding> check_members_arch(const WheelProfile& wheel, const image::Image& im) {
  std::vector<Finding> out;
  std::vector<std::string> archs;
  for (const auto& m : wheel.members) {
    if (!m.elf) continue;
    const elf::Binary& b = *m.elf;
    const std::string name = elf::machine_name(b.machine, b.elf_class, b.endian, b.e_flags);
    if (!has(archs, name)) archs.push_back(name);
    if (!im.arch.known() || name == wheel::normalize_arch(*im.arch.value)) continue;
    Finding f;
    f.kind = FindingKind::WrongArch;
    f.severity = Severity::Error;
    f.member = m.path;
    f.required_version = name;
    f.explanation = m.path + " is built for " + name + " (" + class_name(b.elf_class) + "); the image is " +
                    *im.arch.value + ", so the loader cannot load it.";
    f.fix = "use the wheel built for " + *im.arch.value + " (a platform tag ending in _" +
            wheel::tag_arch_of(*im.arch.value) + ")";
    f.evidence.push_back("ELF header: e_machine " + std::to_string(b.machine) + " (" +
                         elf::machine_description(b.machine) + "), " + class_name(b.elf_class) + ", " +
                         endian_name(b.endian) + " -> " + name);
    f.evidence.push_back(fact_evidence("arch", im.arch, im));
    out.push_back(std::move(f));
  }
  if (!im.arch.known() && !archs.empty()) {
    Finding f;
    f.kind = FindingKind::WrongArch;
    f.severity = Severity::Condition;
    f.required_version = join(archs, ", ");
    f.explanation =
        "The wheel's native code is built for " + join(archs, " and ") + "; " + unknown_phrase("arch", im.arch) + ".";
    f.fix = "state the image's arch in its description, or probe the image";
    f.evidence.push_back(fact_evidence("arch", im.arch, im));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::vector<Finding> check_wheel_tags(const WheelProfile& wheel, const image::Image& image) {
  std::vector<Finding> out = TagChecker(wheel, image).run();
  for (auto& f : check_pure_tag(wheel)) out.push_back(std::move(f));
  for (auto& f : check_requires_python(wheel, image)) out.push_back(std::move(f));
  for (auto& f : check_members_arch(wheel, image)) out.push_back(std::move(f));
  // METADATA's Version against the file name's: pip installs the file, and no index install gets it (lint's words).
  if (auto f = version_mismatch(wheel, Severity::Warning)) out.push_back(std::move(*f));
  return out;
}

std::vector<Finding> check_requires_dist(const WheelProfile& wheel, const image::Image& image,
                                         const image::Python* python, const std::vector<const WheelProfile*>& with) {
  std::vector<Finding> out;
  if (wheel.metadata.requires_dist.empty()) return out;
  lock::MarkerEnv env = lock::marker_env(image, python);
  lock::set_variant(env, wheel);
  const std::string self = wheel::normalize_project_name(wheel.filename.name);
  for (const auto& text : wheel.metadata.requires_dist) {
    // One that does not parse (pip would refuse the wheel's metadata: `wheelcheck lint` says so) is no pin to judge.
    const auto parsed = lock::read_requirement(text);
    const auto* req = &parsed;
    if (!req->error.empty() || req->url || req->specifier.empty()) continue;
    const std::string& name = req->normalized;
    if (name == self) continue;
    try {
      if (!req->marker.empty() && !lock::evaluate_marker(req->marker, env)) continue;
    } catch (const Error&) {
      continue;
    }
    // What is installed under that name: a wheel beside it (pip installs it, replacing the image's), else the image's.
    std::string version, who;
    for (const WheelProfile* w : with) {
      if (wheel::normalize_project_name(w->filename.name) == name) {
        version = w->filename.version;
        who = w->filename.filename + " (installed beside it)";
      }
    }
    const image::Distribution* d = image.distribution(name);
    if (version.empty() && d != nullptr && !d->version.empty()) {
      version = d->version;
      who = "the image's " + d->name + " " + d->version;
    }
    if (version.empty()) continue;
    const auto ok = wheel::version_in(req->specifier, version);
    if (!ok || *ok) continue;
    Finding f;
    f.kind = FindingKind::RequiresDist;
    f.severity = Severity::Warning;
    f.library = req->name;
    f.required_version = req->specifier;
    f.candidates = {version};
    f.explanation = fmt::format(
        "the wheel declares Requires-Dist: {}, and {} {} is installed ({}), which {} does not admit. `pip install "
        "--no-deps` (as FlagOS installs) leaves it so: the wheel runs against {} {}, which it was not built for; "
        "plain `pip install` would replace it with a {} that satisfies {} (another image than this one).",
        text, req->name, version, who, req->specifier, req->name, version, req->name, req->specifier);
    f.fix = fmt::format("a build of this wheel for {} {} (one whose Requires-Dist admits it), or an image with {} {}",
                        req->name, version, req->name, req->specifier);
    f.evidence = {"METADATA Requires-Dist: " + text, who};
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace wheelcheck::verdict
