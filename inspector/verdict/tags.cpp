// Wheel-level checks, before any file is resolved: will pip install this wheel into the image's Python,
// and is its native code built for the image's machine?
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
// release: python_satisfies compares it as 3.12.0 (PEP 440 pads the release segment with zeros), and
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

#include "wheelcheck/elf.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

namespace {

// ---------------------------------------------------------------------------------------------------
// PEP 440 versions and specifiers

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alnum(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z');
}
bool is_separator(char c) {
  return c == '.' || c == '-' || c == '_';
}

// Numbers in a local segment: compared as numbers of any length (leading zeros stripped).
int compare_numeric_text(std::string_view a, std::string_view b) {
  while (a.size() > 1 && a.front() == '0') a.remove_prefix(1);
  while (b.size() > 1 && b.front() == '0') b.remove_prefix(1);
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

struct Version {
  std::uint64_t epoch = 0;
  std::vector<std::uint64_t> release;
  std::optional<std::pair<int, std::uint64_t>> pre;  // 0 a, 1 b, 2 rc
  std::optional<std::uint64_t> post;
  std::optional<std::uint64_t> dev;
  std::vector<std::string> local;  // lower case

  bool is_prerelease() const { return pre.has_value() || dev.has_value(); }
  Version public_version() const {
    Version v = *this;
    v.local.clear();
    return v;
  }
  Version base_version() const {
    Version v;
    v.epoch = epoch;
    v.release = release;
    return v;
  }
};

// A hand-written recogniser of PEP 440's canonical regular expression (with its normalisations:
// "v" prefix, case, "-"/"_"/"." separators, alpha/beta/c/pre/preview, rev/r, implicit post "1.0-1").
class VersionParser {
 public:
  explicit VersionParser(std::string text) : m_s(std::move(text)) {}

  // The whole text as a version, or with `allow_wildcard` a release followed by ".*".
  std::optional<Version> parse(bool allow_wildcard, bool* wildcard) {
    Version v;
    if (peek() == 'v') ++m_pos;
    auto first = number();
    if (!first) return std::nullopt;
    if (peek() == '!') {
      ++m_pos;
      v.epoch = *first;
      first = number();
      if (!first) return std::nullopt;
    }
    v.release.push_back(*first);
    while (peek() == '.' && is_digit(peek(1))) {
      ++m_pos;
      auto n = number();
      if (!n) return std::nullopt;
      v.release.push_back(*n);
    }
    if (allow_wildcard && m_s.compare(m_pos, std::string::npos, ".*") == 0) {
      m_pos = m_s.size();
      if (wildcard != nullptr) *wildcard = true;
      return v;
    }
    if (!pre(v) || !post(v) || !dev(v) || !local(v)) return std::nullopt;
    if (m_pos != m_s.size()) return std::nullopt;
    return v;
  }

 private:
  char peek(std::size_t ahead = 0) const { return m_pos + ahead < m_s.size() ? m_s[m_pos + ahead] : '\0'; }

  std::optional<std::uint64_t> number() {
    const std::size_t start = m_pos;
    while (is_digit(peek())) ++m_pos;
    if (m_pos == start) return std::nullopt;
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(m_s.data() + start, m_s.data() + m_pos, value);
    if (ec != std::errc() || end != m_s.data() + m_pos) return std::nullopt;  // too large
    return value;
  }

  // [sep] label [sep] [digits]: returns the label's index in `labels`, with its number (0 if none).
  // Leaves the position unchanged when no label follows.
  std::optional<std::pair<std::size_t, std::uint64_t>> labelled(const std::vector<std::string_view>& labels, bool* ok) {
    const std::size_t start = m_pos;
    if (is_separator(peek())) ++m_pos;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (m_s.compare(m_pos, labels[i].size(), labels[i]) != 0) continue;
      m_pos += labels[i].size();
      std::uint64_t n = 0;
      if (is_separator(peek()) && is_digit(peek(1))) ++m_pos;
      if (is_digit(peek())) {
        auto parsed = number();
        if (!parsed) {
          *ok = false;
          return std::nullopt;
        }
        n = *parsed;
      }
      return std::make_pair(i, n);
    }
    m_pos = start;
    return std::nullopt;
  }

  bool pre(Version& v) {
    // Longer spellings first, so that "preview" is not read as "pre" + "view".
    static const std::vector<std::string_view> labels = {"alpha", "beta", "preview", "pre", "rc", "a", "b", "c"};
    static const int kinds[] = {0, 1, 2, 2, 2, 0, 1, 2};
    bool ok = true;
    auto l = labelled(labels, &ok);
    if (l) v.pre = std::make_pair(kinds[l->first], l->second);
    return ok;
  }

  bool post(Version& v) {
    if (peek() == '-' && is_digit(peek(1))) {  // the implicit post release: 1.0-1
      ++m_pos;
      auto n = number();
      if (!n) return false;
      v.post = *n;
      return true;
    }
    static const std::vector<std::string_view> labels = {"post", "rev", "r"};
    bool ok = true;
    auto l = labelled(labels, &ok);
    if (l) v.post = l->second;
    return ok;
  }

  bool dev(Version& v) {
    static const std::vector<std::string_view> labels = {"dev"};
    bool ok = true;
    auto l = labelled(labels, &ok);
    if (l) v.dev = l->second;
    return ok;
  }

  bool local(Version& v) {
    if (peek() != '+') return true;
    ++m_pos;
    while (true) {
      const std::size_t start = m_pos;
      while (is_alnum(peek())) ++m_pos;
      if (m_pos == start) return false;
      v.local.push_back(m_s.substr(start, m_pos - start));
      if (!is_separator(peek())) return true;
      ++m_pos;
    }
  }

  std::string m_s;
  std::size_t m_pos = 0;
};

std::optional<Version> parse_version(std::string_view text) {
  bool wildcard = false;
  return VersionParser(lower(trim(text))).parse(false, &wildcard);
}

template <typename T>
int three_way(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// packaging's ordering key: epoch, release without trailing zeros, pre (a dev release of a final
// version sorts before its pre-releases), post, dev, local (numeric segments above alphanumeric ones).
int compare(const Version& a, const Version& b) {
  if (int c = three_way(a.epoch, b.epoch)) return c;
  auto trimmed = [](std::vector<std::uint64_t> r) {
    while (!r.empty() && r.back() == 0) r.pop_back();
    return r;
  };
  if (int c = three_way(trimmed(a.release), trimmed(b.release))) return c;
  auto pre_key = [](const Version& v) -> std::pair<int, std::pair<int, std::uint64_t>> {
    if (!v.pre && !v.post && v.dev) return {-1, {0, 0}};
    if (!v.pre) return {1, {0, 0}};
    return {0, *v.pre};
  };
  if (int c = three_way(pre_key(a), pre_key(b))) return c;
  auto post_key = [](const Version& v) {
    return v.post ? std::make_pair(1, *v.post) : std::make_pair(0, std::uint64_t{0});
  };
  if (int c = three_way(post_key(a), post_key(b))) return c;
  auto dev_key = [](const Version& v) {
    return v.dev ? std::make_pair(0, *v.dev) : std::make_pair(1, std::uint64_t{0});
  };
  if (int c = three_way(dev_key(a), dev_key(b))) return c;
  if (a.local.empty() || b.local.empty()) return three_way(!a.local.empty(), !b.local.empty());
  for (std::size_t i = 0; i < a.local.size() && i < b.local.size(); ++i) {
    const std::string& x = a.local[i];
    const std::string& y = b.local[i];
    const bool xn = std::all_of(x.begin(), x.end(), is_digit), yn = std::all_of(y.begin(), y.end(), is_digit);
    if (xn != yn) return xn ? 1 : -1;
    if (int c = xn ? compare_numeric_text(x, y) : three_way(x, y)) return c;
  }
  return three_way(a.local.size(), b.local.size());
}

struct Specifier {
  std::string op;  // ==, !=, <=, >=, <, >, ~=, ===
  Version version;
  bool wildcard = false;  // ==X.Y.* / !=X.Y.*
  std::string arbitrary;  // the text of an === clause, lower case
};

std::optional<Specifier> parse_specifier(std::string_view text) {
  static const char* const ops[] = {"===", "~=", "==", "!=", "<=", ">=", "<", ">"};
  Specifier s;
  for (const char* op : ops) {
    const std::string_view o(op);
    if (text.substr(0, o.size()) == o) {
      s.op = o;
      break;
    }
  }
  if (s.op.empty()) return std::nullopt;
  const std::string_view rest = trim(text.substr(s.op.size()));
  if (rest.empty()) return std::nullopt;
  for (char c : rest) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == ';') return std::nullopt;
  }
  if (s.op == "===") {
    s.arbitrary = lower(rest);
    return s;
  }
  const bool may_wildcard = s.op == "==" || s.op == "!=";
  auto v = VersionParser(lower(rest)).parse(may_wildcard, &s.wildcard);
  if (!v) return std::nullopt;
  // Local versions only with == and !=; ~= needs at least two release components.
  if (!may_wildcard && !v->local.empty()) return std::nullopt;
  if (s.op == "~=" && v->release.size() < 2) return std::nullopt;
  s.version = std::move(*v);
  return s;
}

std::optional<std::vector<Specifier>> parse_specifier_set(std::string_view text) {
  std::vector<Specifier> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::size_t end = comma == std::string_view::npos ? text.size() : comma;
    const std::string_view item = trim(text.substr(start, end - start));
    if (!item.empty()) {  // packaging drops empty items: ">=3.8, ,<4" is ">=3.8,<4"
      auto s = parse_specifier(item);
      if (!s) return std::nullopt;
      out.push_back(std::move(*s));
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// ==X.Y.*: the candidate's release, padded with zeros, starts with X.Y (the epoch equal).
bool prefix_match(const Version& candidate, std::uint64_t epoch, const std::vector<std::uint64_t>& prefix) {
  if (candidate.epoch != epoch) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    const std::uint64_t c = i < candidate.release.size() ? candidate.release[i] : 0;
    if (c != prefix[i]) return false;
  }
  return true;
}

bool same_base(const Version& a, const Version& b) {
  return compare(a.base_version(), b.base_version()) == 0;
}

bool contains(const Specifier& s, const Version& c, std::string_view candidate_text) {
  const Version& v = s.version;
  if (s.op == "===") return lower(trim(candidate_text)) == s.arbitrary;
  if (s.op == "==" || s.op == "!=") {
    bool equal = false;
    if (s.wildcard) {
      equal = prefix_match(c, v.epoch, v.release);
    } else {
      equal = compare(v.local.empty() ? c.public_version() : c, v) == 0;
    }
    return s.op == "==" ? equal : !equal;
  }
  if (s.op == "<=") return compare(c.public_version(), v) <= 0;
  if (s.op == ">=") return compare(c.public_version(), v) >= 0;
  if (s.op == "<") {
    if (compare(c, v) >= 0) return false;
    // <3.13 must not admit 3.13.0rc1.
    return !(!v.is_prerelease() && c.is_prerelease() && same_base(c, v));
  }
  if (s.op == ">") {
    if (compare(c, v) <= 0) return false;
    // >3.12 must not admit 3.12.post1 or 3.12+local.
    if (!v.post && c.post && same_base(c, v)) return false;
    return !(!c.local.empty() && same_base(c, v));
  }
  // ~=X.Y.Z: >=X.Y.Z and ==X.Y.*
  std::vector<std::uint64_t> prefix(v.release.begin(), v.release.end() - 1);
  return compare(c.public_version(), v) >= 0 && prefix_match(c, v.epoch, prefix);
}

// The Python version as pip compares it: major.minor.micro, any suffix dropped.
std::optional<Version> python_candidate(std::string_view python_version) {
  auto v = parse_version(python_version);
  if (!v) return std::nullopt;
  Version c;
  c.epoch = v->epoch;
  c.release.assign(v->release.begin(),
                   v->release.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(v->release.size(), 3)));
  return c;
}

// ---------------------------------------------------------------------------------------------------
// Image facts, as the checks read them

struct PyVersion {
  int major = -1;
  int minor = -1;
};

std::optional<int> small_number(std::string_view digits) {
  if (digits.empty() || digits.size() > 6) return std::nullopt;
  int value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

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

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
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
    for (auto& t : abi_tags) t = lower(t);
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

std::string tag_text(const wheel::Tag& t) {
  return t.python + "-" + t.abi + "-" + t.platform;
}

// "cp312" -> {cp, 3, 12}; "py3" -> {py, 3, -1}; "pp310" -> {pp, 3, 10}.
struct Interpreter {
  std::string impl;
  int major = -1;
  int minor = -1;
  bool valid = false;
};

Interpreter parse_interpreter(std::string_view tag) {
  Interpreter it;
  std::size_t i = 0;
  while (i < tag.size() && tag[i] >= 'a' && tag[i] <= 'z') ++i;
  it.impl = std::string(tag.substr(0, i));
  const std::string_view digits = tag.substr(i);
  if (it.impl.empty() || digits.empty() || !std::all_of(digits.begin(), digits.end(), is_digit)) return it;
  it.major = digits[0] - '0';
  if (digits.size() > 1) {
    auto minor = small_number(digits.substr(1));
    if (!minor) return it;
    it.minor = *minor;
  }
  it.valid = true;
  return it;
}

// What a (python, abi) pair asks of the interpreter, for people ("CPython 3.12", "CPython >= 3.8") and
// as a required version ("3.12", ">=3.8").
std::pair<std::string, std::string> requirement(const wheel::Tag& tag) {
  const Interpreter it = parse_interpreter(tag.python);
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

bool python_tag_ok(const Interpreter& it, const std::string& abi, const ImagePython& p) {
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

bool abi_tag_ok(const Interpreter& it, const std::string& abi, const ImagePython& p) {
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
  std::vector<std::string> evidence;
};

Severity worst(const std::vector<Issue>& issues) {
  Severity w = Severity::Info;
  for (const auto& i : issues) w = std::max(w, i.severity);
  return w;
}

// Machine names of platform tags (uname -m) as elf::machine_name writes them.
std::string normalize_arch(std::string_view arch) {
  const std::string a = lower(arch);
  if (a == "armv7l" || a == "armv6l" || a == "armv8l" || a == "armhf") return "armhf";
  if (a == "armv5l" || a == "armv5tel" || a == "armv4tl" || a == "armel") return "armel";
  if (a == "i386" || a == "i486" || a == "i586" || a == "i686" || a == "x86") return "i686";
  if (a == "amd64") return "x86_64";
  if (a == "arm64") return "aarch64";
  return a;
}

bool arch_matches(std::string_view tag_arch, std::string_view image_arch) {
  const std::string t = normalize_arch(tag_arch), i = normalize_arch(image_arch);
  if (t == i) return true;
  return t == "mips64" && i == "mips64el";  // uname -m says mips64 for either byte order
}

// The platform tag spelling of an image arch, for a fix.
std::string tag_arch_of(std::string_view image_arch) {
  const std::string a = normalize_arch(image_arch);
  if (a == "armhf") return "armv7l";
  if (a == "armel") return "armv5l";
  return a;
}

struct Platform {
  enum class Kind { Any, Manylinux, Musllinux, Linux, Foreign, Unknown };
  Kind kind = Kind::Unknown;
  std::vector<std::uint64_t> floor;  // the libc floor of manylinux / musllinux
  std::string policy;                // "manylinux_2_28", "manylinux2014 = manylinux_2_17", "musllinux_1_2"
  std::string arch;
  std::string os;  // for a foreign tag: "macOS", "Windows", ...
};

std::string floor_text(const std::vector<std::uint64_t>& floor) {
  std::string s;
  for (std::size_t i = 0; i < floor.size(); ++i) s += (i > 0 ? "." : "") + std::to_string(floor[i]);
  return s;
}

// "2_28_x86_64" -> floor 2.28, arch x86_64.
bool parse_floor_arch(std::string_view rest, Platform& p) {
  const std::size_t u1 = rest.find('_');
  if (u1 == std::string_view::npos) return false;
  const std::size_t u2 = rest.find('_', u1 + 1);
  if (u2 == std::string_view::npos) return false;
  auto major = small_number(rest.substr(0, u1));
  auto minor = small_number(rest.substr(u1 + 1, u2 - u1 - 1));
  if (!major || !minor || u2 + 1 >= rest.size()) return false;
  p.floor = {static_cast<std::uint64_t>(*major), static_cast<std::uint64_t>(*minor)};
  p.arch = std::string(rest.substr(u2 + 1));
  return true;
}

Platform parse_platform(std::string_view tag) {
  Platform p;
  auto starts = [&](std::string_view prefix) { return tag.substr(0, prefix.size()) == prefix; };
  if (tag == "any") {
    p.kind = Platform::Kind::Any;
    return p;
  }
  static const struct {
    const char* prefix;
    std::uint64_t major, minor;
  } legacy[] = {{"manylinux1_", 2, 5}, {"manylinux2010_", 2, 12}, {"manylinux2014_", 2, 17}};
  for (const auto& l : legacy) {
    const std::string_view prefix(l.prefix);
    if (starts(prefix) && tag.size() > prefix.size()) {
      p.kind = Platform::Kind::Manylinux;
      p.floor = {l.major, l.minor};
      p.arch = std::string(tag.substr(prefix.size()));
      p.policy = std::string(prefix.substr(0, prefix.size() - 1)) + " = manylinux_" + std::to_string(l.major) + "_" +
                 std::to_string(l.minor);
      return p;
    }
  }
  for (const auto& [prefix, kind] : {std::pair{std::string_view("manylinux_"), Platform::Kind::Manylinux},
                                     std::pair{std::string_view("musllinux_"), Platform::Kind::Musllinux}}) {
    if (starts(prefix)) {
      if (!parse_floor_arch(tag.substr(prefix.size()), p)) return p;
      p.kind = kind;
      p.policy = std::string(prefix) + std::to_string(p.floor[0]) + "_" + std::to_string(p.floor[1]);
      return p;
    }
  }
  if (starts("linux_") && tag.size() > 6) {
    p.kind = Platform::Kind::Linux;
    p.arch = std::string(tag.substr(6));
    return p;
  }
  static const std::pair<const char*, const char*> foreign[] = {
      {"macosx_", "macOS"}, {"win32", "Windows"}, {"win_", "Windows"},    {"android_", "Android"},
      {"ios_", "iOS"},      {"cygwin", "Cygwin"}, {"freebsd", "FreeBSD"}, {"emscripten", "Emscripten"}};
  for (const auto& [prefix, os] : foreign) {
    if (starts(prefix)) {
      p.kind = Platform::Kind::Foreign;
      p.os = os;
      return p;
    }
  }
  return p;
}

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

bool version_at_least(const std::vector<std::uint64_t>& have, const std::vector<std::uint64_t>& need) {
  for (std::size_t i = 0; i < std::max(have.size(), need.size()); ++i) {
    const std::uint64_t h = i < have.size() ? have[i] : 0, n = i < need.size() ? need[i] : 0;
    if (h != n) return h > n;
  }
  return true;
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
    for (const auto& t : wheel.filename.tags) m_tags.push_back({lower(t.python), lower(t.abi), lower(t.platform)});
    std::vector<std::string> texts;
    for (const auto& t : m_tags) texts.push_back(tag_text(t));
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
      f.evidence.push_back(m_tags_evidence);
      if (m_tags.size() > 1) f.evidence.push_back("closest tag: " + tag_text(m_tags[best]));
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
    const Interpreter it = parse_interpreter(tag.python);
    Issue issue;
    if (m_pythons.empty()) {
      auto [people, versions] = all_requirements();
      issue.kind = FindingKind::TagPython;
      issue.severity = Severity::Condition;
      issue.required_version = versions;
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
      issue.explanation = "The wheel is built for " + people + "; the image has " + describe_pythons(m_pythons) + ".";
      issue.fix = python_fix();
      return issue;
    }
    // The interpreter matches but its ABI does not.
    const ImagePython& p = *matched;
    const std::string cp = cp_tag(p.pv);
    issue.kind = FindingKind::TagAbi;
    issue.required_version = p.version;
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
    const Platform p = parse_platform(tag.platform);
    if (p.kind == Platform::Kind::Any) return std::nullopt;
    Issue issue;
    issue.kind = FindingKind::TagPlatform;
    const std::string image_arch = m_image.arch.known() ? *m_image.arch.value : "";
    const std::string want_arch = m_image.arch.known() ? tag_arch_of(image_arch) : "";
    if (p.kind == Platform::Kind::Foreign || p.kind == Platform::Kind::Unknown) {
      issue.severity = Severity::Error;
      issue.distance = 3;
      issue.explanation = p.kind == Platform::Kind::Foreign
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
    } else if (!arch_matches(p.arch, image_arch)) {
      errors.push_back("is built for " + p.arch + " (" + tag.platform + "); the image is " + image_arch);
      issue.distance += 2;
      fixes.push_back("use a wheel built for " + image_arch + " (a platform tag ending in _" + want_arch + ")");
    }
    issue.evidence.push_back(fact_evidence("arch", m_image.arch, m_image));
    // The C library.
    if (p.kind == Platform::Kind::Manylinux || p.kind == Platform::Kind::Musllinux) {
      const bool glibc = p.kind == Platform::Kind::Manylinux;
      const std::string libc = glibc ? "glibc" : "musl";
      const std::string floor = floor_text(p.floor);
      const std::string needs = "needs " + libc + " >= " + floor + " (" + p.policy + ")";
      issue.evidence.push_back(fact_evidence("C library", m_image.libc_kind, m_image));
      if (!m_image.libc_kind.known()) {
        conditions.push_back(needs + "; " + unknown_phrase("C library", m_image.libc_kind));
        unknown_facts.push_back("C library");
        libc_condition = true;
      } else if (lower(*m_image.libc_kind.value) != libc) {
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
        } else if (!version_at_least(*have, p.floor)) {
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
    if (p.kind == Platform::Kind::Linux) {
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
std::optional<PatchAnswer> satisfies_any_patch(std::string_view specifiers, const std::vector<Specifier>& parsed,
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
    auto r = python_satisfies(specifiers, prefix + std::to_string(patch));
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
  const auto parsed = parse_specifier_set(spec);
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
    auto r = python_satisfies(spec, version);
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
    if (!im.arch.known() || name == normalize_arch(*im.arch.value)) continue;
    Finding f;
    f.kind = FindingKind::WrongArch;
    f.severity = Severity::Error;
    f.member = m.path;
    f.required_version = name;
    f.explanation = m.path + " is built for " + name + " (" + class_name(b.elf_class) + "); the image is " +
                    *im.arch.value + ", so the loader cannot load it.";
    f.fix = "use the wheel built for " + *im.arch.value + " (a platform tag ending in _" + tag_arch_of(*im.arch.value) +
            ")";
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

std::optional<bool> python_satisfies(std::string_view specifiers, std::string_view python_version) {
  const auto parsed = parse_specifier_set(specifiers);
  if (!parsed) return std::nullopt;
  const auto candidate = python_candidate(python_version);
  if (!candidate) return std::nullopt;
  for (const auto& s : *parsed) {
    if (!contains(s, *candidate, python_version)) return false;
  }
  return true;
}

std::vector<Finding> check_wheel_tags(const WheelProfile& wheel, const image::Image& image) {
  std::vector<Finding> out = TagChecker(wheel, image).run();
  for (auto& f : check_requires_python(wheel, image)) out.push_back(std::move(f));
  for (auto& f : check_members_arch(wheel, image)) out.push_back(std::move(f));
  return out;
}

}  // namespace wheelcheck::verdict

namespace wheelcheck::wheel {

std::optional<int> compare_versions(std::string_view a, std::string_view b) {
  const auto va = verdict::parse_version(a);
  const auto vb = verdict::parse_version(b);
  if (!va || !vb) return std::nullopt;
  return verdict::compare(*va, *vb);
}

}  // namespace wheelcheck::wheel
