// PEP 440 versions and specifier sets, as pip's vendored packaging reads and orders them.
//
// A version is recognised by hand-written code equivalent to PEP 440's canonical regular expression,
// with its normalisations: a "v" prefix, any case, "-", "_" or "." between segments, the spellings
// alpha/beta/c/pre/preview of a, b and rc, rev and r of post, and the implicit post release "1.0-1".
// Versions order by packaging's key: epoch, release without trailing zeros, pre-release (a dev release of a
// final version sorts before its pre-releases), post, dev, local (numeric segments above alphanumeric
// ones). A specifier set is comma-separated clauses (~=, ==, !=, <=, >=, <, >, ===) that must all admit
// the candidate; == and != take a ".*" prefix match, < and > exclude the pre-releases, post releases and
// local versions of the version they name, as packaging does.
//
// Requires-Python. pip's check_requires_python compares sys.version_info[:3], a final release X.Y.Z:
// python_satisfies compares the image Python's first three release numbers and drops any suffix; one
// written "3.12" compares as 3.12.0 (PEP 440 pads the release segment with zeros). Which patch releases
// an unknown patch could be is the verdict's question (inspector/verdict/wheel_checks.cpp). version_in is
// the same membership for any version, compared whole (markers, a lock's pins).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::wheel {

namespace {

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

template <typename T>
int three_way(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

}  // namespace

std::optional<Version> parse_version(std::string_view text) {
  bool wildcard = false;
  return VersionParser(ascii_lower(trim(text))).parse(false, &wildcard);
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

std::optional<int> compare_versions(std::string_view a, std::string_view b) {
  const auto va = parse_version(a);
  const auto vb = parse_version(b);
  if (!va || !vb) return std::nullopt;
  return compare(*va, *vb);
}

namespace {

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
    s.arbitrary = ascii_lower(rest);
    return s;
  }
  const bool may_wildcard = s.op == "==" || s.op == "!=";
  auto v = VersionParser(ascii_lower(rest)).parse(may_wildcard, &s.wildcard);
  if (!v) return std::nullopt;
  // Local versions only with == and !=; ~= needs at least two release components.
  if (!may_wildcard && !v->local.empty()) return std::nullopt;
  if (s.op == "~=" && v->release.size() < 2) return std::nullopt;
  s.version = std::move(*v);
  return s;
}

}  // namespace

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

namespace {

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
  if (s.op == "===") return ascii_lower(trim(candidate_text)) == s.arbitrary;
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

std::optional<bool> version_in(std::string_view specifiers, std::string_view version) {
  const auto parsed = parse_specifier_set(specifiers);
  if (!parsed) return std::nullopt;
  const auto candidate = parse_version(version);
  if (!candidate && !std::all_of(parsed->begin(), parsed->end(), [](const Specifier& s) { return s.op == "==="; })) {
    return std::nullopt;
  }
  // An === clause compares the text alone: a version that does not parse is still one.
  const Version unparsed;
  for (const auto& s : *parsed) {
    if (!contains(s, candidate ? *candidate : unparsed, version)) return false;
  }
  return true;
}

}  // namespace wheelcheck::wheel
