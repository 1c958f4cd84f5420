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
#include <map>
#include <optional>
#include <set>

#include "inspector/python/tokens.hpp"
#include "wheelcheck/python.hpp"

namespace wheelcheck::python {

namespace {

using namespace source;

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

// The keywords that open a block: "def", "class", "if", ... (a std::set's lookup cost more than the reading).
bool header_word(std::string_view w) {
  switch (w.size()) {
    case 2: return w == "if";
    case 3: return w == "def" || w == "for" || w == "try";
    case 4: return w == "elif" || w == "else" || w == "with" || w == "case";
    case 5: return w == "class" || w == "while" || w == "match";
    case 6: return w == "except";
    case 7: return w == "finally";
    default: return false;
  }
}

class ModuleReader {
 public:
  // loads: the file names a loader (every line was tokenized); else only imports at import time matter.
  ModuleReader(std::string_view file, std::string_view text, Module& out, bool loads)
      : m_file(file), m_text(text), m_out(out), m_loads(loads) {
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
      if (k < t.size() && t[k].kind == PyToken::Name && header_word(t[k].text)) {
        const std::string_view kw = t[k].text;
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
      // Without loads, a statement inside a function tells nothing: its imports are not kept (Import).
      if (!m_loads && std::any_of(stack.begin(), stack.end(), [](const Block& b) { return b.is_def; })) continue;
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
    if (it == m_retokenized.end()) it = m_retokenized.emplace(i, retokenize(m_text, lines[i])).first;
    return it->second;
  }

  // A block's header read: an if's condition (or that it never runs at import), what a try's excepts catch.
  void resolve(Block& b, const std::vector<LogicalLine>& lines) {
    b.pending = false;
    const LogicalLine& l = lines[b.index];
    const Tokens& t = tokens_of(lines, b.index);
    const std::size_t k = is_name(t, 0, "async") ? 1 : 0;
    if (k >= t.size()) return;
    const std::string_view kw = t[k].text;
    const std::size_t colon = find_top(t, k + 1, t.size(), ":");
    if (kw == "if" || kw == "elif") {
      const std::string test = text_of(t, k + 1, colon);
      if (test == "__name__ == \"__main__\"" || test == "__name__ == '__main__'" || test == "TYPE_CHECKING" ||
          test == "typing.TYPE_CHECKING") {
        b.when = When::Never;
      } else {
        b.when = When::Conditional;
        b.condition = "line " + std::to_string(l.line) + ": " + std::string(kw) + " " + test;
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
      const std::string_view kw = l.tokens[0].text;
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
    if (!m_loads) {
      // no load to name: the aliases are not needed
    } else if (is_name(t, k, "as") && k + 1 < e) {
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
      if (m_loads) {
        const std::string as = is_name(t, nb + 1, "as") && nb + 2 < ne ? t[nb + 2].text : t[nb].text;
        m_aliases[as] = full;
        m_global.erase(as);
      }
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
  bool m_loads = true;
};

bool identifier(std::string_view s) {
  if (s.empty() || !name_char(s[0]) || (s[0] >= '0' && s[0] <= '9')) return false;
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
  bool loader = false;
  std::vector<LogicalLine> lines = tokenize(text, false, &loader);
  if (loader) lines = tokenize(text, true, nullptr);
  ModuleReader reader(file, text, m, loader);
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
