// A wheel's Python source, read without running it: the native files it loads and the modules it
// imports (include/wheelcheck/python.hpp).
//
// Python's own tokenizer rules, the subset that decides where a statement is: strings (every prefix,
// triple quotes, escapes), comments, brackets that join lines, backslash continuations, and indentation.
// A statement's context comes from the blocks around it: a `def` (or a lambda) runs only when called, an
// `if __name__ == "__main__":` or `if TYPE_CHECKING:` never at import, an `if`/`elif`/`else` under its
// condition, and a `try` catches what its `except` clauses name. Paths are evaluated as far as literals,
// `__file__`, os.path (join, dirname, abspath, realpath, normpath), pathlib (Path, `/`, .parent) and names
// assigned from those go; anything else is left unresolved and said so, never guessed.
#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "wheelcheck/python.hpp"

namespace wheelcheck::python {

namespace {

struct PyToken {
  enum Kind { Name, String, Number, Op };
  Kind kind = Op;
  std::string text;      // a name, an operator, a string's value
  bool dynamic = false;  // an f-string with a replacement field: its value is not known
  int line = 0;
};

using Tokens = std::vector<PyToken>;

struct LogicalLine {
  int indent = 0;
  int line = 0;
  std::vector<PyToken> tokens;
  // A block header of a file without loads keeps only its keyword (and a ':'): its text is [begin, end) of
  // the source, tokenized when an import inside the block needs what the header says (retokenize).
  bool partial = false;
  std::size_t begin = 0, end = 0;
  std::size_t colon = 0;  // a partial header's first ':' outside brackets (0: none met)
};

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
inline bool name_char(char c) {
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
        while (m_i < m_s.size() && name_char(m_s[m_i])) ++m_i;
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
        while (m_i < m_s.size() && (name_char(m_s[m_i]) || m_s[m_i] == '.')) ++m_i;
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
             (from == 0 || !name_char(m_s[from - 1]) || word == "DLL") &&
             (from + word.size() >= m_s.size() || !name_char(m_s[from + word.size()]));
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

bool same(const std::string& a, std::string_view b) {
  return a.size() == b.size() && a[0] == b[0] && std::string_view(a) == b;
}
bool is_op(const Tokens& t, std::size_t i, std::string_view op) {
  return i < t.size() && t[i].kind == PyToken::Op && same(t[i].text, op);
}
bool is_name(const Tokens& t, std::size_t i, std::string_view name) {
  return i < t.size() && t[i].kind == PyToken::Name && same(t[i].text, name);
}
// An opening (1) or closing (-1) bracket, else 0.
int bracket(const PyToken& k) {
  if (k.kind != PyToken::Op || k.text.size() != 1) return 0;
  const char c = k.text[0];
  return c == '(' || c == '[' || c == '{' ? 1 : c == ')' || c == ']' || c == '}' ? -1 : 0;
}

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

// A path as the code builds it.
struct PathValue {
  enum Kind { Unknown, Str, InWheel };
  Kind kind = Unknown;
  std::string s;    // Str: the string; InWheel: the path from where the wheel is installed
  std::string why;  // Unknown: what could not be evaluated
  static PathValue unknown(std::string why) { return {Unknown, "", std::move(why)}; }
};

// "a/b/../c" -> "a/c"; nullopt when ".." climbs above the start.
std::optional<std::string> normalize(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t b = 0;
  while (b <= path.size()) {
    const std::size_t e = std::min(path.find('/', b), path.size());
    const std::string part = path.substr(b, e - b);
    if (part == "..") {
      if (parts.empty()) return std::nullopt;
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    b = e + 1;
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

PathValue join(const PathValue& a, const PathValue& b) {
  if (a.kind == PathValue::Unknown) return a;
  if (b.kind == PathValue::Unknown) return b;
  if (b.kind == PathValue::InWheel || (!b.s.empty() && b.s[0] == '/')) return b;
  PathValue out = a;
  out.s = a.s.empty() ? b.s : b.s.empty() ? a.s : a.s + "/" + b.s;
  if (out.kind == PathValue::InWheel) {
    auto n = normalize(out.s);
    if (!n) return PathValue::unknown("a path that climbs out of the wheel's folder");
    out.s = *n;
  }
  return out;
}

PathValue dirname(PathValue v) {
  if (v.kind == PathValue::Unknown) return v;
  const auto slash = v.s.rfind('/');
  if (v.kind == PathValue::InWheel) {
    v.s = slash == std::string::npos ? "" : v.s.substr(0, slash);
  } else {
    v.s = slash == std::string::npos ? "" : slash == 0 ? "/" : v.s.substr(0, slash);
  }
  return v;
}

constexpr std::string_view k_find_library_why =
    "ctypes.util.find_library asks ldconfig (or gcc, ld) at run time: its answer is not read statically";

class ModuleReader {
 public:
  ModuleReader(std::string_view file, std::string_view text, Module& out) : m_file(file), m_text(text), m_out(out) {
    m_package = out.name;
    if (!file.ends_with("/__init__.py")) {
      const auto dot = m_package.rfind('.');
      m_package = dot == std::string::npos ? "" : m_package.substr(0, dot);
    }
  }

  void read(const std::vector<LogicalLine>& lines) {
    std::vector<Block> stack;
    bool last_closed_if = false;  // the block just closed at this indent was an if/elif: an `else` continues it
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const LogicalLine& l = lines[i];
      last_closed_if = false;
      while (!stack.empty() && stack.back().indent >= l.indent) {
        last_closed_if = stack.back().indent == l.indent && stack.back().is_if;
        const bool was_def = stack.back().is_def;
        stack.pop_back();
        if (was_def && std::none_of(stack.begin(), stack.end(), [](const Block& b) { return b.is_def; }))
          m_local.clear();
      }
      const Tokens& t = l.tokens;
      std::size_t k = 0;
      const bool async = is_name(t, 0, "async");
      if (async) k = 1;
      static const std::set<std::string, std::less<>> headers = {
          "def", "class", "if", "elif", "else", "for", "while", "try", "except", "finally", "with", "match", "case"};
      if (k < t.size() && t[k].kind == PyToken::Name && headers.count(t[k].text) != 0) {
        const std::string& kw = t[k].text;
        const std::size_t colon = find_top(t, k + 1, t.size(), ":");
        if (colon < t.size() || kw == "else" || kw == "try" || kw == "finally") {
          Block b{l.indent, When::Import, "", {}, kw == "def", kw == "if" || kw == "elif", false, i};
          if (kw == "def") {
            b.when = When::Called;
          } else if (kw == "else" && last_closed_if) {
            b.is_if = true;
            b.when = When::Conditional;
            b.condition = "line " + std::to_string(l.line) + ": else";
          } else if (kw == "if" || kw == "elif" || kw == "match" || kw == "case" || kw == "while" || kw == "try") {
            // What its text says (a condition, what the excepts catch) is read when something inside needs it.
            b.pending = true;
            if (!l.partial) resolve(b, lines);
          }
          if (b.is_def && std::none_of(stack.begin(), stack.end(), [](const Block& o) { return o.is_def; }))
            m_local.clear();
          if (!l.partial && (colon + 1 < t.size() || kw == "with" || kw == "for")) {
            // An inline body ("if x: y()") is a statement of the new block; a with's or for's header runs
            // its expressions in the block around it.
            const Context ctx = context(stack, lines);
            if (colon + 1 < t.size()) {
              stack.push_back(b);
              const Context inner = context(stack, lines);
              stack.pop_back();
              statements(Tokens(t.begin() + static_cast<std::ptrdiff_t>(colon) + 1, t.end()), inner);
            } else {
              statements(Tokens(t.begin() + static_cast<std::ptrdiff_t>(k) + 1,
                                t.begin() + static_cast<std::ptrdiff_t>(std::min(colon, t.size()))),
                         ctx);
            }
          }
          stack.push_back(std::move(b));
          continue;
        }
      }
      statements(t, context(stack, lines));
    }
  }

 private:
  struct Context {
    When when = When::Import;
    std::string condition;
    std::vector<std::string> caught;
    bool in_def = false;
  };
  struct Block {
    int indent;
    When when;
    std::string condition;
    std::vector<std::string> caught;
    bool is_def;
    bool is_if;
    bool pending;       // its header's words are not read yet (resolve)
    std::size_t index;  // its line
  };

  const Tokens& tokens_of(const std::vector<LogicalLine>& lines, std::size_t i) {
    if (!lines[i].partial) return lines[i].tokens;
    auto it = m_retokenized.find(i);
    if (it == m_retokenized.end()) it = m_retokenized.emplace(i, Tokenizer::retokenize(m_text, lines[i])).first;
    return it->second;
  }

  // A block's header read: an if's condition (or that it never runs at import), what a try's excepts catch.
  void resolve(Block& b, const std::vector<LogicalLine>& lines) {
    b.pending = false;
    const LogicalLine& l = lines[b.index];
    const Tokens& t = tokens_of(lines, b.index);
    const std::size_t k = is_name(t, 0, "async") ? 1 : 0;
    if (k >= t.size()) return;
    const std::string& kw = t[k].text;
    const std::size_t colon = find_top(t, k + 1, t.size(), ":");
    if (kw == "if" || kw == "elif") {
      const std::string test = text_of(t, k + 1, colon);
      if (test == "__name__ == \"__main__\"" || test == "__name__ == '__main__'" || test == "TYPE_CHECKING" ||
          test == "typing.TYPE_CHECKING") {
        b.when = When::Never;
      } else {
        b.when = When::Conditional;
        b.condition = "line " + std::to_string(l.line) + ": " + kw + " " + test;
      }
    } else if (kw == "match" || kw == "case" || kw == "while") {
      b.when = When::Conditional;
      b.condition = "line " + std::to_string(l.line) + ": " + text_of(t, k, colon);
    } else if (kw == "try") {
      b.caught = except_clauses(lines, b.index);
    }
  }

  // What a statement inside the blocks of `stack` runs under.
  Context context(std::vector<Block>& stack, const std::vector<LogicalLine>& lines) {
    Context ctx;
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      if (it->pending) resolve(*it, lines);
      if (static_cast<int>(it->when) > static_cast<int>(ctx.when)) ctx.when = it->when;
      if (ctx.condition.empty() && !it->condition.empty()) ctx.condition = it->condition;
      ctx.caught.insert(ctx.caught.end(), it->caught.begin(), it->caught.end());
      ctx.in_def = ctx.in_def || it->is_def;
    }
    return ctx;
  }

  // What the `except` clauses of the `try` at lines[at] catch: the clauses at its indent that follow its body.
  std::vector<std::string> except_clauses(const std::vector<LogicalLine>& lines, std::size_t at) {
    std::vector<std::string> caught;
    const int indent = lines[at].indent;
    for (std::size_t j = at + 1; j < lines.size(); ++j) {
      const LogicalLine& l = lines[j];
      if (l.indent > indent) continue;
      if (l.indent < indent || l.tokens.empty() || l.tokens[0].kind != PyToken::Name) break;
      const std::string& kw = l.tokens[0].text;
      if (kw == "else" || kw == "finally") continue;
      if (kw != "except") break;
      const Tokens& t = tokens_of(lines, j);
      std::size_t b = 1;
      if (is_op(t, b, "*")) ++b;  // except* (exception groups)
      const std::size_t colon = find_top(t, b, t.size(), ":");
      std::size_t e = colon;
      for (std::size_t k = b; k < colon; ++k) {
        if (is_name(t, k, "as")) {
          e = k;
          break;
        }
      }
      if (b == e) {
        caught.push_back("*");
        continue;
      }
      for (std::size_t k = b; k < e; ++k) {
        // The last part of each dotted name: "ctypes.ArgumentError" -> "ArgumentError".
        if (t[k].kind == PyToken::Name && !is_op(t, k + 1, ".")) caught.push_back(t[k].text);
      }
    }
    return caught;
  }

  void statements(const Tokens& t, const Context& ctx) {
    if (find_top(t, 0, t.size(), ";") == t.size()) return statement(t, ctx);
    for (const auto& [b, e] : split_top(t, 0, t.size(), ";")) {
      if (b < e)
        statement(Tokens(t.begin() + static_cast<std::ptrdiff_t>(b), t.begin() + static_cast<std::ptrdiff_t>(e)), ctx);
    }
  }

  void statement(const Tokens& t, const Context& ctx) {
    if (is_name(t, 0, "import")) {
      for (const auto& [b, e] : split_top(t, 1, t.size(), ",")) import_clause(t, b, e, ctx);
      return;
    }
    if (is_name(t, 0, "from")) {
      from_import(t, ctx);
      return;
    }
    calls(t, ctx);
    // NAME = value, NAME: annotation = value (chained targets: each one)
    std::vector<std::size_t> eqs;
    for (std::size_t s = find_top(t, 0, t.size(), "="); s < t.size(); s = find_top(t, s + 1, t.size(), "="))
      eqs.push_back(s);
    if (eqs.empty()) return;
    const PathValue v = eval(t, eqs.back() + 1, t.size(), ctx);
    std::size_t b = 0;
    for (const std::size_t eq : eqs) {
      std::size_t e = find_top(t, b, eq, ":");
      if (e == b + 1 && t[b].kind == PyToken::Name) {
        auto& env = ctx.in_def ? m_local : m_global;
        if (v.kind == PathValue::Unknown) {
          env.erase(t[b].text);
          if (ctx.in_def) m_shadowed.insert(t[b].text);
        } else {
          env[t[b].text] = v;
        }
        m_aliases.erase(t[b].text);
      }
      b = eq + 1;
    }
  }

  void import_clause(const Tokens& t, std::size_t b, std::size_t e, const Context& ctx) {
    std::string dotted;
    std::size_t k = b;
    for (; k < e && (t[k].kind == PyToken::Name || is_op(t, k, ".")) && !is_name(t, k, "as"); ++k) dotted += t[k].text;
    if (dotted.empty()) return;
    if (is_name(t, k, "as") && k + 1 < e) {
      m_aliases[t[k + 1].text] = dotted;
    } else {
      const std::string head = dotted.substr(0, dotted.find('.'));
      m_aliases[head] = head;
    }
    add_import(dotted, t[b].line, ctx);
  }

  void from_import(const Tokens& t, const Context& ctx) {
    std::size_t k = 1;
    int level = 0;
    for (; k < t.size() && t[k].kind == PyToken::Op && (t[k].text == "." || t[k].text == "..."); ++k)
      level += static_cast<int>(t[k].text.size());
    std::string dotted;
    for (; k < t.size() && !is_name(t, k, "import"); ++k) dotted += t[k].text;
    std::string base = dotted;
    if (level > 0) {
      std::string pkg = m_package;
      for (int up = 1; up < level; ++up) {
        const auto dot = pkg.rfind('.');
        pkg = dot == std::string::npos ? "" : pkg.substr(0, dot);
      }
      if (pkg.empty()) return;  // beyond the top package: an ImportError of its own
      base = dotted.empty() ? pkg : pkg + "." + dotted;
    }
    if (base.empty() || !is_name(t, k, "import")) return;
    add_import(base, t[0].line, ctx);
    std::size_t b = k + 1, e = t.size();
    if (is_op(t, b, "(")) {
      e = std::min(closing(t, b), t.size());
      ++b;
    }
    for (const auto& [nb, ne] : split_top(t, b, e, ",")) {
      if (nb >= ne || t[nb].kind != PyToken::Name || t[nb].text == "*") continue;
      const std::string full = base + "." + t[nb].text;
      const std::string as = is_name(t, nb + 1, "as") && nb + 2 < ne ? t[nb + 2].text : t[nb].text;
      m_aliases[as] = full;
      m_global.erase(as);
      add_import(full, t[nb].line, ctx);  // a submodule, when there is one of that name
    }
  }

  void add_import(const std::string& module, int line, const Context& ctx) {
    if (ctx.when == When::Called || ctx.when == When::Never) return;
    m_out.imports.push_back({line, module, ctx.when, ctx.caught});
  }

  // A dotted name as the module spells it, with its first part's import alias replaced ("C.CDLL" ->
  // "ctypes.CDLL" after `import ctypes as C`; "CDLL" -> "ctypes.CDLL" after `from ctypes import CDLL`).
  std::string canonical(const std::string& dotted) const {
    const auto dot = dotted.find('.');
    const std::string head = dotted.substr(0, dot);
    const auto it = m_aliases.find(head);
    if (it == m_aliases.end()) return dotted;
    return it->second + (dot == std::string::npos ? "" : dotted.substr(dot));
  }

  // The dotted name starting at t[k] ("os.path.join"): its end index.
  static std::size_t dotted_end(const Tokens& t, std::size_t k, std::size_t e, std::string* out) {
    std::string s = t[k].text;
    std::size_t j = k + 1;
    while (j + 1 < e && is_op(t, j, ".") && t[j + 1].kind == PyToken::Name) {
      s += "." + t[j + 1].text;
      j += 2;
    }
    if (out != nullptr) *out = s;
    return j;
  }

  static bool is_load_call(const std::string& c) {
    static const std::set<std::string> calls = {"ctypes.CDLL",
                                                "ctypes.PyDLL",
                                                "ctypes.cdll.LoadLibrary",
                                                "ctypes.pydll.LoadLibrary",
                                                "torch.ops.load_library",
                                                "torch.classes.load_library",
                                                "numpy.ctypeslib.load_library"};
    if (calls.count(c) != 0) return true;
    return c.ends_with(".dlopen") && !c.starts_with("os.") && !c.starts_with("ctypes.") && c != "dlopen";
  }

  void calls(const Tokens& t, const Context& ctx) {
    for (std::size_t k = 0; k < t.size(); ++k) {
      if (t[k].kind != PyToken::Name || (k > 0 && is_op(t, k - 1, "."))) continue;
      std::string dotted;
      const std::size_t j = dotted_end(t, k, t.size(), &dotted);
      if (!is_op(t, j, "(")) continue;
      const std::string call = canonical(dotted);
      if (!is_load_call(call)) continue;
      const std::size_t close = closing(t, j);
      Context here = ctx;
      for (std::size_t b = 0; b < k; ++b) {
        if (is_name(t, b, "lambda")) here.when = When::Called;
      }
      load(call.ends_with(".dlopen") ? "ffi.dlopen" : call, t, j + 1, std::min(close, t.size()), t[k].line, here);
    }
  }

  void load(const std::string& call, const Tokens& t, std::size_t b, std::size_t e, int line, const Context& ctx) {
    Load l;
    l.line = line;
    l.call = call;
    l.when = ctx.when;
    l.condition = ctx.when == When::Conditional ? ctx.condition : "";
    l.caught = ctx.caught;
    std::vector<std::pair<std::size_t, std::size_t>> positional;
    std::map<std::string, std::pair<std::size_t, std::size_t>> keyword;
    for (const auto& [ab, ae] : split_top(t, b, e, ",")) {
      if (ab >= ae) continue;
      if (t[ab].kind == PyToken::Name && is_op(t, ab + 1, "=")) {
        keyword[t[ab].text] = {ab + 2, ae};
      } else {
        positional.emplace_back(ab, ae);
      }
    }
    auto arg = [&](std::size_t pos, const std::string& name) -> std::optional<std::pair<std::size_t, std::size_t>> {
      if (const auto it = keyword.find(name); it != keyword.end()) return it->second;
      if (pos < positional.size()) return positional[pos];
      return std::nullopt;
    };
    const bool numpy = call == "numpy.ctypeslib.load_library";
    const auto what = arg(0, numpy                        ? "libname"
                             : call == "ffi.dlopen"       ? "libpath"
                             : call.starts_with("torch.") ? "path"
                                                          : "name");
    const auto mode = arg(1, call == "ffi.dlopen" ? "flags" : "mode");
    l.global = mode && text_of(t, mode->first, mode->second).find("RTLD_GLOBAL") != std::string::npos;
    if (!what) {
      l.unresolved = "no argument";
      m_out.loads.push_back(std::move(l));
      return;
    }
    l.expression = text_of(t, what->first, what->second);
    PathValue v = eval(t, what->first, what->second, ctx);
    if (numpy && v.kind != PathValue::Unknown) {
      // numpy.ctypeslib.load_library(libname, loader_path): libname (".so" added when it has no suffix) in
      // loader_path's folder (a file's folder when it is a file).
      const auto where = arg(1, "loader_path");
      PathValue folder = where ? eval(t, where->first, where->second, ctx) : PathValue::unknown("no loader_path");
      if (folder.kind != PathValue::Unknown && folder.s.ends_with(".py")) folder = dirname(folder);
      if (v.s.find('.') == std::string::npos) v.s += ".so";
      v = join(folder, v);
    }
    switch (v.kind) {
      case PathValue::Unknown: l.unresolved = v.why; break;
      case PathValue::InWheel:
        l.target = Load::Target::Wheel;
        l.path = v.s;
        break;
      case PathValue::Str:
        if (v.s.starts_with("/")) {
          l.target = Load::Target::Absolute;
          l.path = v.s;
        } else if (v.s.find('/') != std::string::npos) {
          l.unresolved = "a path relative to the working directory (" + v.s + ")";
        } else if (call == "ffi.dlopen") {
          l.unresolved = "cffi looks a bare name up with ctypes.util.find_library when dlopen fails (" + v.s + ")";
        } else {
          l.target = Load::Target::Name;
          l.path = v.s;
        }
        break;
    }
    m_out.loads.push_back(std::move(l));
  }

  // The value of t[b, e) as a path.
  PathValue eval(const Tokens& t, std::size_t b, std::size_t e, const Context& ctx) const {
    if (b >= e) return PathValue::unknown("an empty expression");
    // a + b, a / b (pathlib): left to right
    for (const char* op : {"+", "/"}) {
      const auto parts = split_top(t, b, e, op);
      if (parts.size() < 2) continue;
      PathValue v = eval(t, parts[0].first, parts[0].second, ctx);
      for (std::size_t p = 1; p < parts.size(); ++p) {
        const PathValue r = eval(t, parts[p].first, parts[p].second, ctx);
        if (v.kind == PathValue::Unknown) return v;
        if (r.kind == PathValue::Unknown) return r;
        if (*op == '/') {
          v = join(v, r);
        } else if (r.kind == PathValue::Str) {
          // String concatenation: the path as text ("dir" + "/libx.so").
          v.s += r.s;
          if (v.kind == PathValue::InWheel) {
            auto n = normalize(v.s);
            if (!n) return PathValue::unknown("a path that climbs out of the wheel's folder");
            v.s = *n;
          }
        } else {
          return PathValue::unknown("a concatenation with " + text_of(t, parts[p].first, parts[p].second));
        }
      }
      return v;
    }
    if (is_op(t, b, "(") && closing(t, b) == e - 1) return eval(t, b + 1, e - 1, ctx);
    PathValue v;
    std::size_t k = b;
    if (t[k].kind == PyToken::String) {
      v.kind = PathValue::Str;
      for (; k < e && t[k].kind == PyToken::String; ++k) {
        if (t[k].dynamic) return PathValue::unknown("an f-string");
        v.s += t[k].text;
      }
    } else if (t[k].kind == PyToken::Name) {
      std::string dotted;
      k = dotted_end(t, k, e, &dotted);
      const std::string name = canonical(dotted);
      if (is_op(t, k, "(")) {
        const std::size_t close = closing(t, k);
        if (close >= e) return PathValue::unknown("an unclosed call");
        v = apply(name, t, k + 1, close, ctx);
        k = close + 1;
      } else if (dotted == "__file__") {
        v = {PathValue::InWheel, m_file, ""};
      } else if (const PathValue* known = lookup(dotted, ctx)) {
        v = *known;
      } else {
        return PathValue::unknown("the name " + dotted);
      }
    } else {
      return PathValue::unknown(text_of(t, b, e));
    }
    // Trailers: .parent, .resolve(), .absolute(), .joinpath(...)
    while (k < e && v.kind != PathValue::Unknown) {
      if (is_op(t, k, ".") && k + 1 < e && t[k + 1].kind == PyToken::Name) {
        const std::string attr = t[k + 1].text;
        k += 2;
        std::size_t close = k;
        if (is_op(t, k, "(")) close = closing(t, k);
        if (attr == "parent") {
          v = dirname(v);
        } else if ((attr == "resolve" || attr == "absolute" || attr == "__fspath__") && close == k + 1) {
          // the same path
        } else if (attr == "joinpath" && close < e) {
          for (const auto& [ab, ae] : split_top(t, k + 1, close, ",")) v = join(v, eval(t, ab, ae, ctx));
        } else {
          return PathValue::unknown("." + attr);
        }
        if (close > k && close < e) k = close + 1;
      } else {
        return PathValue::unknown(text_of(t, b, e));
      }
    }
    return v;
  }

  const PathValue* lookup(const std::string& name, const Context& ctx) const {
    if (ctx.in_def) {
      if (const auto it = m_local.find(name); it != m_local.end()) return &it->second;
      if (m_shadowed.count(name) != 0) return nullptr;
    }
    const auto it = m_global.find(name);
    return it == m_global.end() ? nullptr : &it->second;
  }

  PathValue apply(const std::string& f, const Tokens& t, std::size_t b, std::size_t e, const Context& ctx) const {
    std::vector<PathValue> args;
    for (const auto& [ab, ae] : split_top(t, b, e, ",")) {
      if (ab < ae) args.push_back(eval(t, ab, ae, ctx));
    }
    if (f == "ctypes.util.find_library") return PathValue::unknown(std::string(k_find_library_why));
    if (f == "os.path.join") {
      if (args.empty()) return PathValue::unknown("os.path.join()");
      PathValue v = args[0];
      for (std::size_t i = 1; i < args.size(); ++i) v = join(v, args[i]);
      return v;
    }
    static const std::set<std::string> same = {
        "os.path.abspath", "os.path.realpath", "os.path.normpath", "os.fspath", "str",
        "pathlib.Path",    "pathlib.PurePath", "pathlib.PosixPath"};
    if (same.count(f) != 0 && args.size() == 1) return args[0];
    if ((f == "pathlib.Path" || f == "pathlib.PurePath") && !args.empty()) {
      PathValue v = args[0];
      for (std::size_t i = 1; i < args.size(); ++i) v = join(v, args[i]);
      return v;
    }
    if (f == "os.path.dirname" && args.size() == 1) return dirname(args[0]);
    return PathValue::unknown("the call " + f + "(...)");
  }

  std::string m_file;
  std::string_view m_text;
  std::map<std::size_t, Tokens> m_retokenized;  // partial lines read whole (tokens_of)
  Module& m_out;
  std::string m_package;
  std::map<std::string, std::string> m_aliases;  // a name of the module -> the dotted name it imported
  std::map<std::string, PathValue> m_global, m_local;
  std::set<std::string> m_shadowed;  // names a function assigned something unknown to
};

bool identifier(std::string_view s) {
  if (s.empty() || !name_start(s[0])) return false;
  return std::all_of(s.begin(), s.end(), name_char);
}

}  // namespace

std::string_view when_name(When when) {
  switch (when) {
    case When::Import: return "import";
    case When::Conditional: return "conditional";
    case When::Called: return "called";
    case When::Never: return "never";
  }
  return "import";
}

std::string_view target_name(Load::Target target) {
  switch (target) {
    case Load::Target::Wheel: return "wheel";
    case Load::Target::Absolute: return "absolute";
    case Load::Target::Name: return "name";
    case Load::Target::Unresolved: return "unresolved";
  }
  return "unresolved";
}

std::string module_name(std::string_view file) {
  if (!file.ends_with(".py")) return "";
  std::string_view stem = file.substr(0, file.size() - 3);
  if (stem.ends_with("/__init__")) stem = stem.substr(0, stem.size() - 9);
  std::string out;
  std::size_t b = 0;
  while (b <= stem.size()) {
    const std::size_t e = std::min(stem.find('/', b), stem.size());
    const std::string_view part = stem.substr(b, e - b);
    if (!identifier(part)) return "";
    out += (out.empty() ? "" : ".") + std::string(part);
    b = e + 1;
  }
  return out;
}

Module read_module(std::string_view file, std::string_view text) {
  Module m;
  m.file = std::string(file);
  m.name = module_name(file);
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  // Only a file that names a loader needs every line (its assignments build the paths it loads): the first
  // pass keeps imports and block headers, and says whether it met a loader's name.
  Tokenizer imports_only(text, false);
  std::vector<LogicalLine> lines = imports_only.run();
  if (imports_only.saw_loader()) lines = Tokenizer(text, true).run();
  ModuleReader reader(file, text, m);
  reader.read(lines);
  return m;
}

bool catches(const std::vector<std::string>& caught, std::string_view type) {
  for (const auto& c : caught) {
    if (c == type || c == "*" || c == "Exception" || c == "BaseException") return true;
    if (type == "OSError" && (c == "EnvironmentError" || c == "IOError")) return true;
  }
  return false;
}

}  // namespace wheelcheck::python
