// Python's tokens, the subset that decides where a statement is: strings (every prefix, triple quotes,
// escapes), comments, brackets that join lines, backslash continuations, and indentation
// (inspector/python/tokens.hpp; source.cpp reads statements from them).
#include "inspector/python/tokens.hpp"

#include <array>
#include <cstring>
#include <set>

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
// What ends a run of a string's ordinary characters.
constexpr auto k_string_stop = [] {
  std::array<bool, 256> t{};
  for (const unsigned char c : std::string_view("\"'\\\n{")) t[c] = true;
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

// What a skipped line stops at: what ends, opens or closes something, a header's ':', and the letters a
// loader's name is found by (Tokenizer::loader_at).
constexpr auto k_skip_stop = [] {
  std::array<bool, 256> t{};
  for (const unsigned char c : std::string_view("\"'()[]{}#\\\n:Dyd")) t[c] = true;
  return t;
}();

// The characters that end, open or close something a skipped line must follow.
constexpr auto k_special = [] {
  std::array<bool, 256> t{};
  for (const unsigned char c : std::string_view("\"'()[]{}#\\\n")) t[c] = true;
  return t;
}();

// The words a logical line must start with to matter to a file without loads: imports and block headers.
bool kept_first_word(std::string_view w) {
  static const std::set<std::string_view> words = {"import", "from",  "def",   "class", "if",     "elif",
                                                   "else",   "for",   "while", "try",   "except", "finally",
                                                   "with",   "async", "match", "case"};
  return words.count(w) != 0;
}

// Splits source into logical lines of tokens. `all`: every line's tokens (a file that names a loader); else
// only those of imports and block headers, which is all a file without loads can tell: the other lines are
// still scanned (strings, brackets and continuations decide where lines end) but make no tokens.
class Tokenizer {
 public:
  Tokenizer(std::string_view text, bool all) : m_s(text), m_all(all) {}

  std::vector<LogicalLine> run() {
    std::vector<LogicalLine> out;
    LogicalLine cur;
    bool line_start = true;
    bool keep = true;  // this logical line makes tokens
    auto push = [&](PyToken t) {
      if (!keep) return;
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
      }
      cur.tokens.push_back(std::move(t));
    };
    while (m_i < m_s.size()) {
      if (line_start && m_depth == 0) {
        line_start = false;
        int indent = 0;
        while (m_i < m_s.size() && (m_s[m_i] == ' ' || m_s[m_i] == '\t' || m_s[m_i] == '\f')) {
          indent = m_s[m_i] == ' ' ? indent + 1 : m_s[m_i] == '\t' ? (indent / 8 + 1) * 8 : 0;
          ++m_i;
        }
        if (cur.tokens.empty()) {
          cur.indent = indent;
          cur.line = m_line;
          cur.begin = m_i;
        }
        continue;
      }
      const char c = m_s[m_i];
      if (!keep) {
        // A line that makes no tokens: only where it ends matters (strings, brackets, comments, newlines),
        // and whether it names a loader (then the file is read again, every line: saw_loader).
        if (!k_skip_stop[static_cast<unsigned char>(c)]) {
          ++m_i;
          continue;
        }
        if (c == 'D' || c == 'y' || c == 'd') {
          if (!m_saw_loader && loader_at(m_i)) m_saw_loader = true;
          ++m_i;
          continue;
        }
        if (c == ':') {
          if (m_depth == 0 && cur.partial && cur.colon == 0) cur.colon = m_i;
          ++m_i;
          continue;
        }
        if (!k_special[static_cast<unsigned char>(c)]) {
          ++m_i;
          continue;
        }
        if (c == '"' || c == '\'') {
          string_token("", false);
          continue;
        }
        if (c == '(' || c == '[' || c == '{') ++m_depth;
        if ((c == ')' || c == ']' || c == '}') && m_depth > 0) --m_depth;
        if (c != '#' && c != '\\' && c != '\n') {
          ++m_i;
          continue;
        }
      }
      if (c == '#') {
        while (m_i < m_s.size() && m_s[m_i] != '\n') ++m_i;
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
        push(string_token("", keep));
      } else if (name_start(c)) {
        const std::size_t b = m_i;
        while (m_i < m_s.size() && name_char_of(m_s[m_i])) ++m_i;
        const std::string_view word = m_s.substr(b, m_i - b);
        if (!m_saw_loader && loader_word(word)) m_saw_loader = true;
        if (m_i < m_s.size() && (m_s[m_i] == '"' || m_s[m_i] == '\'') && word.size() <= 2) {
          std::string lower(word);
          for (auto& ch : lower) ch = static_cast<char>(ch | 0x20);
          static const std::set<std::string, std::less<>> prefixes = {"r", "u", "b", "f", "br", "rb", "fr", "rf"};
          if (prefixes.count(lower) != 0) {
            push(string_token(lower, keep));
            continue;
          }
        }
        if (keep) push({PyToken::Name, std::string(word), false, m_line});
      } else if (c >= '0' && c <= '9') {
        const std::size_t b = m_i;
        while (m_i < m_s.size() && (name_char_of(m_s[m_i]) || m_s[m_i] == '.')) ++m_i;
        if (keep) push({PyToken::Number, std::string(m_s.substr(b, m_i - b)), false, m_line});
      } else {
        PyToken t = op_token();
        if (keep) push(std::move(t));
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
      default: return at(i, "dlopen");
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

  PyToken string_token(const std::string& prefix, bool keep) {
    const bool raw = prefix.find('r') != std::string::npos;
    const bool f = prefix.find('f') != std::string::npos;
    PyToken t{PyToken::String, "", false, m_line};
    const char q = m_s[m_i];
    const bool triple = m_i + 2 < m_s.size() && m_s[m_i + 1] == q && m_s[m_i + 2] == q;
    m_i += triple ? 3 : 1;
    while (m_i < m_s.size()) {
      if (!keep)
        while (m_i < m_s.size() && !k_string_stop[static_cast<unsigned char>(m_s[m_i])]) ++m_i;
      if (m_i >= m_s.size()) break;
      const char c = m_s[m_i];
      if (c == q && (!triple || (m_i + 2 < m_s.size() && m_s[m_i + 1] == q && m_s[m_i + 2] == q))) {
        m_i += triple ? 3 : 1;
        return t;
      }
      if (c == '\n') {
        ++m_line;
        if (!triple) return t;  // unterminated: the line ends it
      }
      if (c == '\\' && m_i + 1 < m_s.size()) {
        const char n = m_s[m_i + 1];
        if (n == '\n') ++m_line;
        if (!keep) {
          // scanned, not kept
        } else if (raw) {
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
          if (keep) t.text += '{';
          m_i += 2;
          continue;
        }
        t.dynamic = true;
      }
      if (keep) t.text += c;
      ++m_i;
    }
    return t;
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
