// Python's tokens, the subset that decides where a statement is: strings (every prefix, triple quotes,
// escapes), comments, brackets that join lines, backslash continuations, and indentation
// (inspector/python/tokens.hpp; source.cpp reads statements from them).
#include "inspector/python/tokens.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <set>
#include <string_view>

namespace wheelcheck::python::source {

namespace {

constexpr auto k_name_start = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
  return t;
}();
constexpr auto k_name_char = [] {
  std::array<bool, 256> t = k_name_start;
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  return t;
}();
inline bool name_start(char c) {
  return k_name_start[static_cast<unsigned char>(c)];
}
bool name_char_of(char c) {
  return k_name_char[static_cast<unsigned char>(c)];
}
// The names of the calls that load a native file (is_load_call): a file that names none needs no
// statement read, only its imports and block headers.
bool loader_word(std::string_view w) {
  switch (w.size()) {
    case 4: return w == "CDLL";
    case 5: return w == "PyDLL";
    case 6: return w == "dlopen";
    case 11: return w == "LoadLibrary";
    case 12: return w == "load_library";
    default: return false;
  }
}

// Sixteen bytes, compared at once (GCC's vector extensions: SSE2 on x86-64, NEON on aarch64).
using Bytes = unsigned char __attribute__((vector_size(16)));
using Lanes = signed char __attribute__((vector_size(16)));  // a comparison's lanes: 0 or -1 each

// The first of 16 lanes (each 0 or -1) that is set, or 16.
inline std::size_t first_lane(Lanes m) {
  std::uint64_t half[2];
  std::memcpy(half, &m, 16);
  if (half[0] != 0) return static_cast<std::size_t>(std::countr_zero(half[0])) / 8;
  if (half[1] != 0) return 8 + static_cast<std::size_t>(std::countr_zero(half[1])) / 8;
  return 16;
}
// Whether any of 16 lanes is set.
inline bool any_lane(Lanes m) {
  std::uint64_t half[2];
  std::memcpy(half, &m, 16);
  return (half[0] | half[1]) != 0;
}

// What a skipped line stops at (Tokenizer::skip_lines): what ends, opens or closes something; with `colon`, a
// header's ':'; with `loader`, the letters a loader's name is found by (Tokenizer::loader_at).
constexpr std::array<bool, 256> skip_stops(bool colon, bool loader) {
  std::array<bool, 256> t{};
  for (const unsigned char c : std::string_view("\"'()[]{}#\\\n")) t[c] = true;
  if (colon) t[':'] = true;
  if (loader) t['D'] = t['y'] = t['d'] = true;
  return t;
}
constexpr std::array<std::array<bool, 256>, 4> k_skip_stops = {skip_stops(false, false), skip_stops(true, false),
                                                               skip_stops(false, true), skip_stops(true, true)};

// The first stop (k_skip_stops[which]) at or after i, or n. Sixteen bytes at a time, by ranges that hold every
// stop and a few bytes that are none ("$%&|"): those the caller passes over.
std::size_t next_stop(const char* s, std::size_t i, std::size_t n, unsigned which) {
  if constexpr (std::endian::native == std::endian::little) {
    for (; i + 16 <= n; i += 16) {
      Bytes a;
      std::memcpy(&a, s + i, 16);
      Lanes m = (static_cast<Bytes>(a - 0x22) <= 7) | (static_cast<Bytes>(a - 0x5B) <= 2) |
                (static_cast<Bytes>(a - 0x7B) <= 2) | (a == '\n');
      if ((which & 1) != 0) m |= a == ':';
      if ((which & 2) != 0) m |= (a == 'D') | (a == 'y') | (a == 'd');
      const std::size_t k = first_lane(m);
      if (k != 16) return i + k;
    }
  }
  const auto& stop = k_skip_stops[which];
  while (i < n && !stop[static_cast<unsigned char>(s[i])]) ++i;
  return i;
}

// The first quote, backslash or newline at or after i, or n: what ends a run of a skipped string's characters.
std::size_t next_in_string(const char* s, std::size_t i, std::size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    for (; i + 16 <= n; i += 16) {
      Bytes a;
      std::memcpy(&a, s + i, 16);
      const std::size_t k = first_lane((a == '"') | (a == '\'') | (a == '\\') | (a == '\n'));
      if (k != 16) return i + k;
    }
  }
  while (i < n && s[i] != '"' && s[i] != '\'' && s[i] != '\\' && s[i] != '\n') ++i;
  return i;
}

// The words a logical line must start with to matter to a file without loads: imports and block headers.
// Compared as eight bytes at most, without a call.
constexpr std::uint64_t word_key(std::string_view w) {
  std::uint64_t k = 0;
  for (std::size_t i = 0; i < w.size() && i < 8; ++i) k |= std::uint64_t{static_cast<unsigned char>(w[i])} << (8 * i);
  return k;
}
bool kept_first_word(std::string_view w) {
  if (w.size() < 2 || w.size() > 7) return false;
  std::uint64_t k = 0;
  std::memcpy(&k, w.data(), w.size());
  if constexpr (std::endian::native == std::endian::big) k = word_key(w);
  switch (k) {
    case word_key("if"):
    case word_key("def"):
    case word_key("for"):
    case word_key("try"):
    case word_key("from"):
    case word_key("elif"):
    case word_key("else"):
    case word_key("with"):
    case word_key("case"):
    case word_key("class"):
    case word_key("while"):
    case word_key("async"):
    case word_key("match"):
    case word_key("import"):
    case word_key("except"):
    case word_key("finally"): return true;
    default: return false;
  }
}

// A string's prefix ("r", "b", "f", "rb", "Rb", ...): the word before a quote that makes it one token.
bool string_prefix(std::string_view w) {
  if (w.empty() || w.size() > 2) return false;
  const char a = static_cast<char>(w[0] | 0x20);
  if (w.size() == 1) return a == 'r' || a == 'u' || a == 'b' || a == 'f';
  const char b = static_cast<char>(w[1] | 0x20);
  return (a == 'r' && (b == 'b' || b == 'f')) || ((a == 'b' || a == 'f') && b == 'r');
}

// Whether two names may follow each other in an import statement: "from x", "x import", "import x", "x as",
// "as y".
bool import_pair(std::string_view before, std::string_view after) {
  return before == "from" || before == "import" || before == "as" || after == "import" || after == "as";
}

// Whether a loader's name may be in `text` at all, in code, a string or a comment: a superset the tokenizer
// then confirms (Tokenizer::loader_at). Thirty-two places at a time, it looks for the first and third of three
// letters of each name ("DLL", the "lop" of "dlopen", the "ibr" of "LoadLibrary" and "load_library") and
// compares the names around a hit.
bool may_name_loader(std::string_view text) {
  auto named_at = [&](std::size_t j) {  // the three letters at j: do they belong to a loader's name?
    auto is = [&](std::size_t back, std::string_view word) {
      return j >= back && text.compare(j - back, word.size(), word) == 0;
    };
    return is(0, "DLL") || is(1, "dlopen") || is(5, "LoadLibrary") || is(6, "load_library");
  };
  auto hits = [](Bytes a, Bytes c) {
    return ((a == 'D') & (c == 'L')) | ((a == 'l') & (c == 'p')) | ((a == 'i') & (c == 'r'));
  };
  const char* s = text.data();
  const std::size_t n = text.size();
  std::size_t i = 0;
  if constexpr (std::endian::native == std::endian::little) {
    for (; i + 34 <= n; i += 32) {
      Bytes a0, c0, a1, c1;
      std::memcpy(&a0, s + i, 16);
      std::memcpy(&c0, s + i + 2, 16);
      std::memcpy(&a1, s + i + 16, 16);
      std::memcpy(&c1, s + i + 18, 16);
      const Lanes h0 = hits(a0, c0), h1 = hits(a1, c1);
      if (!any_lane(h0 | h1)) continue;
      for (std::size_t k = 0; k < 16; ++k)
        if ((h0[k] != 0 && named_at(i + k)) || (h1[k] != 0 && named_at(i + 16 + k))) return true;
    }
  }
  for (; i + 3 <= n; ++i)
    if (named_at(i)) return true;
  return false;
}

// Splits source into logical lines of tokens. `all`: every line's tokens (a file that names a loader); else
// only those of imports and block headers, which is all a file without loads can tell: the other lines are
// still scanned (strings, brackets and continuations decide where lines end) but make no tokens.
class Tokenizer {
 public:
  Tokenizer(std::string_view text, bool all) : m_s(text), m_all(all), m_look(!all && may_name_loader(text)) {}

  std::vector<LogicalLine> run() {
    std::vector<LogicalLine> out;
    LogicalLine cur;
    bool line_start = true;
    bool keep = true;  // this logical line makes tokens
    auto push = [&](PyToken t) {
      if (!keep) return;
      if (cur.tokens.empty()) cur.tokens.reserve(8);
      if (!m_all && cur.tokens.empty()) {
        if (t.kind != PyToken::Name || !kept_first_word(t.text)) {
          keep = false;
          return;
        }
        // A block header: its keyword and a colon for now (LogicalLine::partial).
        if (t.text != "import" && t.text != "from" && t.text != "async") {
          cur.tokens.push_back(std::move(t));
          cur.tokens.push_back({PyToken::Op, ":", false, m_line});
          cur.partial = true;
          keep = false;
          return;
        }
      } else if (!m_all && t.kind == PyToken::Name && cur.tokens.back().kind == PyToken::Name &&
                 cur.tokens.front().kind == PyToken::Name && cur.tokens.front().text != "async" &&
                 !import_pair(cur.tokens.back().text, t.text)) {
        // Two names in a row that no import statement has ("import a b"): Python refuses the file there, and
        // nothing after it is an import.
        keep = false;
        return;
      }
      cur.tokens.push_back(std::move(t));
    };
    while (m_i < m_s.size()) {
      if (line_start && m_depth == 0) {
        line_start = false;
        m_i = start_line(m_i, cur);
        // A file without loads keeps a line only for its first word (kept_first_word): any other line is
        // skipped from its start, making no tokens.
        if (!m_all && m_i < m_s.size() && !kept_at(m_i)) keep = false;
        continue;
      }
      const char c = m_s[m_i];
      if (!keep && c != '\n') {
        if (skip_lines(cur)) keep = true;
        continue;
      }
      if (c == '#') {
        const void* nl = std::memchr(m_s.data() + m_i, '\n', m_s.size() - m_i);
        m_i = nl != nullptr ? static_cast<std::size_t>(static_cast<const char*>(nl) - m_s.data()) : m_s.size();
      } else if (c == '\\' && m_i + 1 < m_s.size() && (m_s[m_i + 1] == '\n' || m_s[m_i + 1] == '\r')) {
        m_i += m_s[m_i + 1] == '\r' && m_i + 2 < m_s.size() && m_s[m_i + 2] == '\n' ? 3 : 2;
        ++m_line;
      } else if (c == '\n') {
        ++m_i;
        ++m_line;
        if (m_depth == 0) {
          cur.end = m_i - 1;
          finish(cur, out);
          cur = LogicalLine{};
          line_start = true;
          keep = true;
        }
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        ++m_i;
      } else if (c == '"' || c == '\'') {
        push(string_token(""));
      } else if (name_start(c)) {
        const std::size_t b = m_i;
        while (m_i < m_s.size() && name_char_of(m_s[m_i])) ++m_i;
        const std::string_view word = m_s.substr(b, m_i - b);
        if (!m_saw_loader && loader_word(word)) m_saw_loader = true;
        if (m_i < m_s.size() && (m_s[m_i] == '"' || m_s[m_i] == '\'') && string_prefix(word)) {
          std::string lower(word);
          for (auto& ch : lower) ch = static_cast<char>(ch | 0x20);
          push(string_token(lower));
          continue;
        }
        push({PyToken::Name, std::string(word), false, m_line});
      } else if (c >= '0' && c <= '9') {
        const std::size_t b = m_i;
        while (m_i < m_s.size() && (name_char_of(m_s[m_i]) || m_s[m_i] == '.')) ++m_i;
        push({PyToken::Number, std::string(m_s.substr(b, m_i - b)), false, m_line});
      } else {
        push(op_token());
      }
    }
    cur.end = m_s.size();
    finish(cur, out);
    return out;
  }

  bool saw_loader() const { return m_saw_loader; }

  // Whether a loader's name passes through m_s[i] (a 'D', 'y' or 'd' of a skipped line: the "DLL" of CDLL and
  // PyDLL, the last letter of LoadLibrary and load_library, the start of dlopen), without scanning names.
  bool loader_at(std::size_t i) const {
    auto at = [&](std::size_t from, std::string_view word) {
      return from <= i && m_s.substr(from, word.size()) == word &&
             (from == 0 || !name_char_of(m_s[from - 1]) || word == "DLL") &&
             (from + word.size() >= m_s.size() || !name_char_of(m_s[from + word.size()]));
    };
    switch (m_s[i]) {
      case 'D': return at(i, "DLL") && i > 0 && (m_s[i - 1] == 'C' || (i > 1 && m_s.substr(i - 2, 2) == "Py"));
      case 'y': return (i >= 10 && at(i - 10, "LoadLibrary")) || (i >= 11 && at(i - 11, "load_library"));
      case 'd': return at(i, "dlopen");
      default: return false;
    }
  }

  // The tokens of a partial line, its text read again in full.
  static Tokens retokenize(std::string_view source, const LogicalLine& l) {
    Tokenizer again(source.substr(l.begin, l.end - l.begin), true);
    again.m_line = l.line;
    Tokens out;
    for (auto& ll : again.run()) out.insert(out.end(), ll.tokens.begin(), ll.tokens.end());
    return out;
  }

 private:
  // A partial header with an import after its colon ("try: import x") is tokenized whole at once.
  void finish(LogicalLine& l, std::vector<LogicalLine>& out) const {
    if (l.tokens.empty()) return;
    if (l.partial && l.colon != 0 && l.colon < l.end &&
        ::memmem(m_s.data() + l.colon + 1, l.end - l.colon - 1, "import", 6) != nullptr) {
      l.tokens = retokenize(m_s, l);
      l.partial = false;
    }
    out.push_back(std::move(l));
  }

  PyToken string_token(const std::string& prefix) {
    const bool raw = prefix.find('r') != std::string::npos;
    const bool f = prefix.find('f') != std::string::npos;
    PyToken t{PyToken::String, "", false, m_line};
    const char q = m_s[m_i];
    const bool triple = m_i + 2 < m_s.size() && m_s[m_i + 1] == q && m_s[m_i + 2] == q;
    m_i += triple ? 3 : 1;
    while (m_i < m_s.size()) {
      const char c = m_s[m_i];
      if (c == q && (!triple || (m_i + 2 < m_s.size() && m_s[m_i + 1] == q && m_s[m_i + 2] == q))) {
        m_i += triple ? 3 : 1;
        return t;
      }
      if (c == '\n') {
        if (!triple) return t;  // unterminated: the line ends it (run() counts the newline)
        ++m_line;
      }
      if (c == '\\' && m_i + 1 < m_s.size()) {
        const char n = m_s[m_i + 1];
        if (n == '\n') ++m_line;
        if (raw) {
          t.text += c;
          t.text += n;
        } else if (n == 'n') {
          t.text += '\n';
        } else if (n == 't') {
          t.text += '\t';
        } else if (n != '\n') {
          t.text += n;
        }
        m_i += 2;
        continue;
      }
      if (f && c == '{') {
        if (m_i + 1 < m_s.size() && m_s[m_i + 1] == '{') {
          t.text += '{';
          m_i += 2;
          continue;
        }
        t.dynamic = true;
      }
      t.text += c;
      ++m_i;
    }
    return t;
  }

  // Passes over a string that makes no token (its quote at m_i), as string_token reads one.
  void skip_string() {
    const char* s = m_s.data();
    const std::size_t n = m_s.size();
    const char q = s[m_i];
    const bool triple = m_i + 2 < n && s[m_i + 1] == q && s[m_i + 2] == q;
    std::size_t i = m_i + (triple ? 3 : 1);
    for (;;) {
      i = next_in_string(s, i, n);
      if (i >= n) break;
      const char c = s[i];
      if (c == q && (!triple || (i + 2 < n && s[i + 1] == q && s[i + 2] == q))) {
        i += triple ? 3 : 1;
        break;
      }
      if (c == '\n') {
        if (!triple) break;  // unterminated: the line ends it
        ++m_line;
      } else if (c == '\\' && i + 1 < n) {
        if (s[i + 1] == '\n') ++m_line;
        ++i;
      }
      ++i;
    }
    m_i = i;
  }

  // Starts a logical line at i: its indentation read (a tab to the next multiple of 8, a form feed back to 0),
  // `cur` given its indent, line and start. Returns where its first token may be.
  std::size_t start_line(std::size_t i, LogicalLine& cur) const {
    int indent = 0;
    for (; i < m_s.size() && (m_s[i] == ' ' || m_s[i] == '\t' || m_s[i] == '\f'); ++i)
      indent = m_s[i] == ' ' ? indent + 1 : m_s[i] == '\t' ? (indent / 8 + 1) * 8 : 0;
    cur.indent = indent;
    cur.line = m_line;
    cur.begin = i;
    return i;
  }

  // Whether the logical line starting at i is one a file without loads keeps: its first word is an import or
  // a block header (kept_first_word). Comments, blank lines and continuations are left to run() too.
  bool kept_at(std::size_t i) const {
    const char c = m_s[i];
    if (c == '#' || c == '\n' || c == '\r' || c == '\\') return true;
    if (!name_start(c)) return false;
    std::size_t e = i;
    while (e < m_s.size() && name_char_of(m_s[e])) ++e;
    const std::string_view word = m_s.substr(i, e - i);
    if (e < m_s.size() && (m_s[e] == '"' || m_s[e] == '\'') && string_prefix(word)) return false;
    return kept_first_word(word);
  }

  // Passes over the lines that make no tokens, from m_i: strings, comments, brackets and continuations decide
  // where each ends. It notes a partial header's first ':' outside brackets, and (m_look) a loader's name.
  // Returns true at the start of a logical line run() keeps (kept_at; `cur` holds its indent, line and
  // start); false at the newline that ends `cur` when it has tokens (a partial header), or at the end.
  bool skip_lines(LogicalLine& cur) {
    const char* s = m_s.data();
    const std::size_t n = m_s.size();
    std::size_t i = m_i;
    auto stops = [&] { return (cur.partial && cur.colon == 0 ? 1U : 0U) | (m_look && !m_saw_loader ? 2U : 0U); };
    unsigned which = stops();
    for (;;) {
      i = next_stop(s, i, n, which);
      if (i >= n) break;
      switch (s[i]) {
        case '\n': {
          if (m_depth == 0 && !cur.tokens.empty()) {
            m_i = i;
            return false;
          }
          ++m_line;
          ++i;
          if (m_depth != 0) break;
          // A new logical line, started as run() starts one: kept (back to run()), or skipped from its start
          // like the one before. A comment or a blank line, which run() would keep and make nothing of, is
          // passed over here.
          i = start_line(i, cur);
          if (i < n && s[i] != '#' && s[i] != '\n' && kept_at(i)) {
            m_i = i;
            return true;
          }
          break;
        }
        case '"':
        case '\'':
          m_i = i;
          skip_string();
          i = m_i;
          break;
        case '#': {
          const void* nl = std::memchr(s + i, '\n', n - i);
          i = nl != nullptr ? static_cast<std::size_t>(static_cast<const char*>(nl) - s) : n;
          break;
        }
        case '\\':
          if (i + 1 < n && (s[i + 1] == '\n' || s[i + 1] == '\r')) {
            i += s[i + 1] == '\r' && i + 2 < n && s[i + 2] == '\n' ? 3 : 2;
            ++m_line;
          } else {
            ++i;
          }
          break;
        case '(':
        case '[':
        case '{':
          ++m_depth;
          ++i;
          break;
        case ')':
        case ']':
        case '}':
          if (m_depth > 0) --m_depth;
          ++i;
          break;
        case ':':
          if (m_depth == 0 && cur.partial && cur.colon == 0) {
            cur.colon = i;
            which = stops();
          }
          ++i;
          break;
        case 'D':
        case 'y':
        case 'd':
          if ((which & 2) != 0 && loader_at(i)) {
            m_saw_loader = true;
            which = stops();
          }
          ++i;
          break;
        default:  // '$', '%', '&', '|': next_stop's ranges hold them, and they are nothing here
          ++i;
          break;
      }
    }
    m_i = n;
    return false;
  }

  PyToken op_token() {
    static const std::set<std::string_view> pairs = {"==", "!=", "<=", ">=", ":=", "->", "**", "//", "<<", ">>",
                                                     "+=", "-=", "*=", "/=", "|=", "&=", "%=", "^=", "@="};
    const char c = m_s[m_i];
    if (c == '(' || c == '[' || c == '{') ++m_depth;
    if ((c == ')' || c == ']' || c == '}') && m_depth > 0) --m_depth;
    if (m_i + 1 < m_s.size() && pairs.count(m_s.substr(m_i, 2)) != 0) {
      m_i += 2;
      return {PyToken::Op, std::string(m_s.substr(m_i - 2, 2)), false, m_line};
    }
    ++m_i;
    return {PyToken::Op, std::string(1, c), false, m_line};
  }

  std::string_view m_s;
  bool m_all = true;
  bool m_look = false;  // a file without loads that may name a loader (may_name_loader): skip_lines looks
  bool m_saw_loader = false;
  std::size_t m_i = 0;
  int m_line = 1;
  int m_depth = 0;
};

}  // namespace

bool name_char(char c) {
  return name_char_of(c);
}

namespace {
bool same(const std::string& a, std::string_view b) {
  return a.size() == b.size() && a[0] == b[0] && std::string_view(a) == b;
}
}  // namespace

bool is_op(const Tokens& t, std::size_t i, std::string_view op) {
  return i < t.size() && t[i].kind == PyToken::Op && same(t[i].text, op);
}
bool is_name(const Tokens& t, std::size_t i, std::string_view name) {
  return i < t.size() && t[i].kind == PyToken::Name && same(t[i].text, name);
}
namespace {
// An opening (1) or closing (-1) bracket, else 0.
int bracket(const PyToken& k) {
  if (k.kind != PyToken::Op || k.text.size() != 1) return 0;
  const char c = k.text[0];
  return c == '(' || c == '[' || c == '{' ? 1 : c == ')' || c == ']' || c == '}' ? -1 : 0;
}

}  // namespace

// The index of the bracket that closes the one at `open` (t.size() when it is never closed).
std::size_t closing(const Tokens& t, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < t.size(); ++i) {
    depth += bracket(t[i]);
    if (depth == 0) return i;
  }
  return t.size();
}

// The first operator `op` at bracket depth 0 in [b, e), or e.
std::size_t find_top(const Tokens& t, std::size_t b, std::size_t e, std::string_view op) {
  int depth = 0;
  for (std::size_t i = b; i < e; ++i) {
    if (t[i].kind != PyToken::Op) continue;
    depth += bracket(t[i]);
    if (depth == 0 && same(t[i].text, op)) return i;
  }
  return e;
}

std::vector<std::pair<std::size_t, std::size_t>> split_top(const Tokens& t, std::size_t b, std::size_t e,
                                                           std::string_view op) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  while (b < e) {
    const std::size_t s = find_top(t, b, e, op);
    out.emplace_back(b, s);
    b = s + 1;
  }
  return out;
}

std::string text_of(const Tokens& t, std::size_t b, std::size_t e) {
  std::string out;
  for (std::size_t i = b; i < e && i < t.size(); ++i) {
    const PyToken& k = t[i];
    const bool word = k.kind != PyToken::Op;
    if (!out.empty() && word &&
        (out.back() == '_' || std::isalnum(static_cast<unsigned char>(out.back())) || out.back() == '"' ||
         out.back() == ','))
      out += ' ';
    if (!out.empty() && k.kind == PyToken::Op &&
        (k.text == "==" || k.text == "=" || k.text == "+" || k.text == "/" || k.text == "!=" || k.text == "|"))
      out += ' ';
    out += k.kind == PyToken::String ? "\"" + k.text + "\"" : k.text;
    if (k.kind == PyToken::Op && (k.text == "==" || k.text == "=" || k.text == "+" || k.text == "/" || k.text == "!=" ||
                                  k.text == "|" || k.text == ","))
      out += ' ';
    if (out.size() > 160) return out.substr(0, 157) + "...";
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::vector<LogicalLine> tokenize(std::string_view text, bool all, bool* saw_loader) {
  Tokenizer t(text, all);
  auto out = t.run();
  if (saw_loader != nullptr) *saw_loader = t.saw_loader();
  return out;
}

Tokens retokenize(std::string_view text, const LogicalLine& line) {
  return Tokenizer::retokenize(text, line);
}

}  // namespace wheelcheck::python::source
