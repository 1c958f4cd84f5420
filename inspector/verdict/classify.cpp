// Why a needed symbol has no definition: classify_missing_symbol(). The caller (the binder) has already
// found that no table of the load scope binds (name, version); this says what the scope has instead.
//
// The decisions, in order:
//  1. version-too-new: a table exports the exact name, only not at the needed version (memcpy@GLIBC_2.38
//     against memcpy@@GLIBC_2.14), or only at non-default versions for an unversioned need. The candidates
//     are what exists, as nm writes it (name@@V, name@V); the explanation says whether the table defines
//     the needed version node at all (an older library) or defines it without this name.
//  2. For a C++ name (_Z...), the exports with the same qualified name (scopes, name and template
//     arguments: everything before the top-level parameter list of the demangled name, see
//     split_demangled below), compared after normalize_cxx11_abi on both sides:
//       cxx-abi-mismatch  a candidate equal to the needed name once the dual ABI is normalized away, and
//                         there is evidence that the two sides were built with different ABIs: an old-ABI
//                         type (std::string, std::list without __cxx11) on the side that has fewer C++11
//                         ABI markers, or, when they differ only by an [abi:cxx11] tag, a library that
//                         exports nothing of the C++11 ABI at all;
//       signature-changed any other candidate: other parameters, other qualifiers, another return type
//                         (a template function's, or an [abi:cxx11] tag lost in a library that does use
//                         the C++11 ABI elsewhere: the return type no longer involves std::string).
//     A candidate whose demangled name is exactly the needed one (the complete-object destructor D1
//     needed, only the base-object D2 exported) changes nothing but the explanation of "absent".
//  3. absent: nothing of the kind; the explanation names what no library exports.
//
// Finding the candidates fast. libtorch_cpu exports some 76,000 names; demangling them all for each
// missing symbol would take a tenth of a second each time. Every symbol with the same qualified name
// shares a mangled prefix, though: for a nested name _ZN [r][V][K] [R|O] <scopes> <own name> ... the
// scopes are mangled identically (substitutions are numbered left to right, so what precedes the own
// name does not depend on what follows), and the own name starts with the same head: its source name
// (3foo), its operator code (pl, cl, cv...), C for any constructor (C1, C2, CI1...) or D for any
// destructor (D0, D1, D2). Only the cv- and ref-qualifiers before the scopes vary with the signature, so
// mangled_search_prefixes() gives one prefix per combination (24) and Table::with_prefix finds each range
// by binary search; only those few exports are demangled and compared exactly. The prefix comes from a
// small parser of the Itanium C++ ABI grammar (types, template arguments, substitutions, ABI tags);
// where it meets a construct it does not follow inside template arguments (an expression, decltype), the
// prefix stops before those arguments, which is still shared by every candidate, only less selective.
// Where no prefix is reliable (a local name _ZZ..., or scopes the two ABIs mangle differently: Ss,
// std::__cxx11, an [abi:cxx11] tag on a scope), a per-table index from normalized qualified name to
// exports is built once, lazily, and cached by table address (with the table's storage address and size
// to notice a different table at a reused address) under a mutex; classify_missing_symbol is thread-safe.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "wheelcheck/demangle.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

namespace {

constexpr std::size_t k_npos = std::string_view::npos;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}
bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}
bool is_ident(char c) {
  return is_digit(c) || is_lower(c) || is_upper(c) || c == '_';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) {
    s.replace(p, from.size(), to);
  }
}

std::size_t count_of(std::string_view s, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != k_npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

// ---------------------------------------------------------------------------------------------------
// Demangled names.

// The '(' that matches the ')' at `close`, scanning backwards; npos when unbalanced.
std::size_t matching_open(std::string_view s, std::size_t close) {
  int depth = 0;
  for (std::size_t j = close + 1; j-- > 0;) {
    if (s[j] == ')') {
      ++depth;
    } else if (s[j] == '(') {
      if (--depth == 0) return j;
    }
  }
  return k_npos;
}

// What may follow a function's parameter list in a demangled name.
bool only_function_qualifiers(std::string_view tail) {
  static constexpr std::array<std::string_view, 7> k_words = {"const", "volatile", "restrict",        "&",
                                                              "&&",    "noexcept", "transaction_safe"};
  while (!tail.empty()) {
    tail = trim(tail);
    if (tail.empty()) break;
    const auto end = std::min(tail.find(' '), tail.size());
    if (std::find(k_words.begin(), k_words.end(), tail.substr(0, end)) == k_words.end()) return false;
    tail.remove_prefix(end);
  }
  return true;
}

// Operator spellings after the keyword, longest first so that "<<=" is not read as "<".
constexpr std::array<std::string_view, 39> k_operator_tokens = {
    "<=>", "->*", "<<=", ">>=", "()", "[]", "<<", ">>", "<=", ">=", "==", "!=", "&&",
    "||",  "++",  "--",  "->",  "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "+",
    "-",   "*",   "/",   "%",   "^",  "&",  "|",  "~",  "!",  "=",  "<",  ">",  ","};

bool operator_keyword_at(std::string_view s, std::size_t j) {
  if (s.substr(j, 8) != "operator") return false;
  if (j > 0 && is_ident(s[j - 1])) return false;
  return j + 8 >= s.size() || !is_ident(s[j + 8]);
}

// Past an operator's name starting at the keyword: "operator<" (and the space the demangler puts before
// its template arguments, "operator< <int>"), "operator new[]", "operator\"\" _km", and a conversion
// operator, whose type runs to the end of the name at the top level.
std::size_t skip_operator(std::string_view s, std::size_t j, int depth) {
  std::size_t k = j + 8;
  const auto rest = s.substr(k);
  for (std::string_view word : {std::string_view(" new"), std::string_view(" delete")}) {
    if (rest.starts_with(word) && (rest.size() == word.size() || !is_ident(rest[word.size()]))) {
      k += word.size();
      if (s.substr(k, 2) == "[]") k += 2;
      return k;
    }
  }
  if (rest.starts_with("\"\"")) {
    k += 2;
    while (k < s.size() && s[k] == ' ') ++k;
    while (k < s.size() && is_ident(s[k])) ++k;
    return k;
  }
  if (rest.starts_with(' ')) return depth == 0 ? s.size() : k;  // a conversion operator (or co_await)
  for (auto token : k_operator_tokens) {
    if (rest.starts_with(token)) {
      k += token.size();
      if (s.substr(k, 2) == " <") ++k;
      return k;
    }
  }
  return k;
}

// Where the qualified name starts in "return-type qualified-name": after the last space outside any
// brackets, reading operator names as units so that their '<' and '>' do not count as brackets.
std::size_t qualified_name_start(std::string_view s) {
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t j = 0; j < s.size();) {
    if (operator_keyword_at(s, j)) {
      j = skip_operator(s, j, depth);
      continue;
    }
    const char c = s[j];
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == '>' || c == ')' || c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == ' ' && depth == 0) {
      start = j + 1;
    }
    ++j;
  }
  return start;
}

DemangledParts split_demangled_at(std::string_view s, int depth) {
  DemangledParts out;
  while (s.ends_with(']')) {
    const auto clone = s.rfind(" [clone ");
    if (clone == k_npos) break;
    s = s.substr(0, clone);
  }
  const auto close = s.rfind(')');
  const auto open =
      close == k_npos || !only_function_qualifiers(s.substr(close + 1)) ? k_npos : matching_open(s, close);
  if (open == k_npos || open == 0) {
    out.qualified_name = std::string(trim(s));
    return out;
  }
  const auto head = s.substr(0, open);
  out.parameters = std::string(trim(s.substr(open)));
  // A template function returning a function pointer: "int (*ns::f<int>(long))(char)".
  if (head.ends_with(')') && !head.ends_with("operator()") && depth < 8) {
    const auto inner_close = head.size() - 1;
    const auto inner_open = matching_open(head, inner_close);
    if (inner_open != k_npos) {
      auto inner = head.substr(inner_open + 1, inner_close - inner_open - 1);
      while (!inner.empty() && (inner.front() == '*' || inner.front() == '&')) inner.remove_prefix(1);
      auto parts = split_demangled_at(inner, depth + 1);
      if (!parts.parameters.empty()) {
        parts.return_type = std::string(trim(head.substr(0, inner_open))) + " (*)" + out.parameters;
        return parts;
      }
    }
  }
  const auto start = qualified_name_start(head);
  out.return_type = std::string(trim(head.substr(0, start)));
  out.qualified_name = std::string(trim(head.substr(start)));
  return out;
}

// The two ABIs in a demangled name: markers of the C++11 one, and old-ABI types (no __cxx11 in them).
std::size_t cxx11_markers(std::string_view d) {
  return count_of(d, "__cxx11") + count_of(d, "[abi:cxx11]");
}

bool has_old_abi_type(std::string_view d) {
  static constexpr std::array<std::string_view, 8> k_types = {"std::string",
                                                              "std::basic_string<",
                                                              "std::list<",
                                                              "std::_List_base<",
                                                              "std::basic_stringbuf<",
                                                              "std::basic_istringstream<",
                                                              "std::basic_ostringstream<",
                                                              "std::basic_stringstream<"};
  for (auto t : k_types) {
    for (std::size_t p = d.find(t); p != k_npos; p = d.find(t, p + 1)) {
      const auto after = p + t.size();
      if (t.back() == '<' || after >= d.size() || !is_ident(d[after])) return true;
    }
  }
  return false;
}

// The types the C++11 side spells with __cxx11, for the explanation: "std::string, std::list".
std::string cxx11_types(std::string_view d) {
  std::vector<std::string> types;
  auto add = [&types](std::string t) {
    if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(std::move(t));
  };
  for (std::size_t p = d.find("std::__cxx11::"); p != k_npos; p = d.find("std::__cxx11::", p + 1)) {
    std::size_t e = p + 14;
    while (e < d.size() && is_ident(d[e])) ++e;
    const auto name = d.substr(p + 14, e - p - 14);
    add(name == "basic_string" && d.substr(e).starts_with("<char,") ? "std::string" : "std::" + std::string(name));
  }
  if (types.empty() && d.find("[abi:cxx11]") != k_npos) add("std::string");
  std::string out;
  for (const auto& t : types) out += (out.empty() ? "" : ", ") + t;
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Mangled names: a parser of the Itanium C++ ABI grammar that only skips (types, template arguments,
// names), records where the own name's head ends, and notes the first place the dual ABI shows.

class ManglingParser {
 public:
  explicit ManglingParser(std::string_view s, std::size_t i = 0) : m_s(s), m_i(i) {}

  std::size_t pos() const { return m_i; }
  std::size_t first_abi_sensitive() const { return m_first_sensitive; }
  char peek(std::size_t k = 0) const { return m_i + k < m_s.size() ? m_s[m_i + k] : '\0'; }
  void advance(std::size_t n) { m_i = std::min(m_s.size(), m_i + n); }

  // <unqualified-name>: sets head_end to the end of the part every overload shares.
  bool unqualified_name(std::size_t* head_end, bool after_std) {
    const std::size_t start = m_i;
    const char c = peek();
    if (is_digit(c)) {
      std::string_view name;
      if (!source_name(&name)) return false;
      if (after_std && is_dual_abi_class(name)) mark_sensitive(start);
      *head_end = m_i;
      return true;
    }
    if (c == 'L') {  // internal linkage
      advance(1);
      if (!source_name(nullptr)) return false;
      *head_end = m_i;
      return true;
    }
    if (c == 'C') {  // constructors: C1 C2 C3 C4 C5, inheriting CI1 <type>, CI2 <type>
      *head_end = start + 1;
      if (peek(1) >= '1' && peek(1) <= '5') {
        advance(2);
        return true;
      }
      if (peek(1) == 'I' && (peek(2) == '1' || peek(2) == '2')) {
        advance(3);
        return type();
      }
      return false;
    }
    if (c == 'D') {  // destructors: D0 D1 D2 D4 D5
      *head_end = start + 1;
      const char d = peek(1);
      if (d == '0' || d == '1' || d == '2' || d == '4' || d == '5') {
        advance(2);
        return true;
      }
      return false;
    }
    if (c == 'U') {  // unnamed types Ut [n] _ and closures Ul <types> E [n] _
      if (peek(1) == 't') {
        advance(2);
      } else if (peek(1) == 'l') {
        advance(2);
        while (peek() != 'E') {
          if (peek() == '\0' || !type()) return false;
        }
        advance(1);
      } else {
        return false;
      }
      while (is_digit(peek())) advance(1);
      if (peek() != '_') return false;
      advance(1);
      *head_end = m_i;
      return true;
    }
    if (is_lower(c)) {  // operators
      if (c == 'c' && peek(1) == 'v') {
        advance(2);
        *head_end = m_i;
        return type();
      }
      if ((c == 'l' && peek(1) == 'i') || (c == 'v' && is_digit(peek(1)))) {
        advance(2);
        if (!source_name(nullptr)) return false;
        *head_end = m_i;
        return true;
      }
      if (!is_lower(peek(1))) return false;
      advance(2);
      *head_end = m_i;
      return true;
    }
    return false;
  }

  bool abi_tags() {
    while (peek() == 'B') {
      const std::size_t start = m_i;
      advance(1);
      std::string_view tag;
      if (!source_name(&tag)) return false;
      if (tag == "cxx11") mark_sensitive(start);
    }
    return true;
  }

  bool template_args() {
    if (peek() != 'I' || !enter()) return false;
    advance(1);
    while (peek() != 'E') {
      if (peek() == '\0' || !template_arg()) return leave(false);
    }
    advance(1);
    return leave(true);
  }

  bool type() {
    if (!enter()) return false;
    return leave(type_inner());
  }

  // After "N": [qualifiers] components "E". For the function's own nested name, reports where the
  // qualifiers end, where its last component's head ends, and (when parsing stopped at template
  // arguments it cannot follow) where the head of the component that carries them ends.
  struct Nested {
    std::size_t body_start = 0;
    std::size_t head_end = 0;  // of the last component
  };
  bool nested(Nested* info) {
    while (peek() == 'r' || peek() == 'V' || peek() == 'K') advance(1);
    if (peek() == 'R' || peek() == 'O') advance(1);
    info->body_start = m_i;
    bool after_std = false;
    bool any = false;
    while (peek() != 'E') {
      const char c = peek();
      std::size_t head_end = 0;
      if (c == '\0') return false;
      if (c == 'S' && peek(1) == 't' && !any) {
        advance(2);
        after_std = true;
        any = true;
        continue;
      }
      if (c == 'S') {
        if (!substitution()) return false;
        head_end = m_i;
      } else if (c == 'T') {
        if (!template_param()) return false;
        head_end = m_i;
      } else {
        const bool ok = unqualified_name(&head_end, after_std);
        if (head_end != 0) info->head_end = head_end;  // a failure past the head still leaves it usable
        if (!ok) return false;
      }
      after_std = false;
      any = true;
      info->head_end = head_end;
      if (!abi_tags()) return false;
      if (peek() == 'I' && !template_args()) return false;
      if (peek() == 'M') advance(1);  // a closure's data-member prefix
    }
    advance(1);
    return any;
  }

 private:
  static bool is_dual_abi_class(std::string_view name) {
    static constexpr std::array<std::string_view, 8> k_names = {"list",
                                                                "_List_base",
                                                                "basic_string",
                                                                "basic_stringbuf",
                                                                "basic_istringstream",
                                                                "basic_ostringstream",
                                                                "basic_stringstream",
                                                                "_List_node_base"};
    return std::find(k_names.begin(), k_names.end(), name) != k_names.end();
  }

  void mark_sensitive(std::size_t at) { m_first_sensitive = std::min(m_first_sensitive, at); }

  // Bounds the recursion: a hostile name cannot exhaust the stack.
  bool enter() { return ++m_depth <= 256; }
  bool leave(bool ok) {
    --m_depth;
    return ok;
  }

  bool number() {
    if (!is_digit(peek())) return false;
    while (is_digit(peek())) advance(1);
    return true;
  }

  bool source_name(std::string_view* name) {
    const std::size_t start = m_i;
    std::size_t n = 0;
    if (!is_digit(peek())) return false;
    while (is_digit(peek())) {
      n = n * 10 + static_cast<std::size_t>(peek() - '0');
      if (n > m_s.size()) return false;
      advance(1);
    }
    if (n == 0 || m_i + n > m_s.size()) return false;
    const auto text = m_s.substr(m_i, n);
    if (text == "__cxx11") mark_sensitive(start);
    if (name != nullptr) *name = text;
    advance(n);
    return true;
  }

  // At 'S' (not "St"): Sa Sb Ss Si So Sd, S_ and S<seq-id>_.
  bool substitution() {
    const std::size_t start = m_i;
    advance(1);
    const char c = peek();
    if (c == 'a' || c == 'b' || c == 's' || c == 'i' || c == 'o' || c == 'd') {
      if (c == 's' || c == 'b') mark_sensitive(start);
      advance(1);
      return true;
    }
    while (is_digit(peek()) || is_upper(peek())) advance(1);
    if (peek() != '_') return false;
    advance(1);
    return true;
  }

  // T_, T<n>_ and the elaborated Ts/Tu/Te <name>.
  bool template_param() {
    advance(1);
    const char c = peek();
    if (c == 's' || c == 'u' || c == 'e') {
      advance(1);
      return type();
    }
    while (is_digit(peek())) advance(1);
    if (peek() != '_') return false;
    advance(1);
    return true;
  }

  bool template_arg() {
    const char c = peek();
    if (c == 'L') {  // <expr-primary>: L <type> <value> E (not an external name L_Z...E)
      advance(1);
      if (peek() == '_' || !type()) return false;
      while (peek() != 'E' && peek() != '\0') advance(1);
      if (peek() != 'E') return false;
      advance(1);
      return true;
    }
    if (c == 'J') {  // an argument pack
      if (!enter()) return false;
      advance(1);
      while (peek() != 'E') {
        if (peek() == '\0' || !template_arg()) return leave(false);
      }
      advance(1);
      return leave(true);
    }
    if (c == 'X') return false;  // an expression: not followed
    return type();
  }

  bool type_inner() {
    const char c = peek();
    if (c == '\0') return false;
    static constexpr std::string_view k_builtin = "vwbcahstijlmxynofdegz";
    if (k_builtin.find(c) != k_npos) {
      advance(1);
      return true;
    }
    switch (c) {
      case 'u':  // vendor extended type
        advance(1);
        return source_name(nullptr) && optional_template_args();
      case 'r':
      case 'V':
      case 'K':
      case 'P':
      case 'R':
      case 'O':
      case 'C':
      case 'G': advance(1); return type();
      case 'U':  // vendor qualifier
        advance(1);
        return source_name(nullptr) && optional_template_args() && type();
      case 'D': return d_type();
      case 'F': return function_type();
      case 'A':
        advance(1);
        if (peek() == '_') {
          advance(1);
          return type();
        }
        if (!number() || peek() != '_') return false;
        advance(1);
        return type();
      case 'M': advance(1); return type() && type();
      case 'T': return template_param() && optional_template_args();
      case 'S':
        if (peek(1) == 't') {
          advance(2);
          std::size_t head_end = 0;
          return unqualified_name(&head_end, true) && abi_tags() && optional_template_args();
        }
        return substitution() && optional_template_args();
      case 'N': {
        advance(1);
        Nested info;
        return nested(&info);
      }
      default:
        if (is_digit(c)) return source_name(nullptr) && abi_tags() && optional_template_args();
        return false;
    }
  }

  bool optional_template_args() { return peek() != 'I' || template_args(); }

  bool d_type() {
    const char c = peek(1);
    static constexpr std::string_view k_two = "dehifsuacn";
    if (c != '\0' && k_two.find(c) != k_npos) {
      advance(2);
      return true;
    }
    if (c == 'p') {  // pack expansion
      advance(2);
      return type();
    }
    if (c == 'v') {  // vector type: Dv <n> _ <type>
      advance(2);
      if (!number() || peek() != '_') return false;
      advance(1);
      return type();
    }
    if (c == 'F') {  // _FloatN: DF <n> _ or DF <n> x
      advance(2);
      if (!number()) return false;
      if (peek() == '_' || peek() == 'x') {
        advance(1);
        return true;
      }
      return false;
    }
    return false;  // decltype, exception specifications: not followed
  }

  bool function_type() {
    advance(1);
    if (peek() == 'Y') advance(1);
    while (peek() != 'E') {
      if (peek() == '\0') return false;
      if ((peek() == 'R' || peek() == 'O') && peek(1) == 'E') {
        advance(1);
        continue;
      }
      if (!type()) return false;
    }
    advance(1);
    return true;
  }

  std::string_view m_s;
  std::size_t m_i = 0;
  int m_depth = 0;
  std::size_t m_first_sensitive = k_npos;
};

// ---------------------------------------------------------------------------------------------------
// Per-table facts, built lazily and cached.

struct TableFacts {
  const exports::Export* data = nullptr;
  std::size_t size = 0;
  std::string library;

  std::once_flag cxx11_once;
  bool exports_cxx11 = false;  // some bindable export is of the C++11 ABI (an [abi:cxx11] tag, __cxx11)

  std::once_flag index_once;
  std::unordered_map<std::string, std::vector<std::uint32_t>> by_qualified_name;  // normalized
};

bool special_name(std::string_view mangled) {
  // _ZT (vtables, typeinfo, thunks, TLS wrappers), _ZG (guard variables, reference temporaries, clones).
  return mangled.size() > 2 && (mangled[2] == 'T' || mangled[2] == 'G');
}

std::shared_ptr<TableFacts> facts_for(const exports::Table& table) {
  static std::mutex mutex;
  static std::unordered_map<const exports::Table*, std::shared_ptr<TableFacts>> cache;
  const auto symbols = table.symbols();
  std::lock_guard lock(mutex);
  if (const auto it = cache.find(&table); it != cache.end()) {
    const auto& f = *it->second;
    if (f.data == symbols.data() && f.size == symbols.size() && f.library == table.library) return it->second;
  }
  if (cache.size() >= 64) cache.clear();  // entries in use live on in their callers' shared_ptr
  auto facts = std::make_shared<TableFacts>();
  facts->data = symbols.data();
  facts->size = symbols.size();
  facts->library = table.library;
  cache[&table] = facts;
  return facts;
}

bool table_exports_cxx11(const exports::Table& table, TableFacts& facts) {
  std::call_once(facts.cxx11_once, [&] {
    for (const auto& e : table.symbols()) {
      if (e.bindable() && e.name.starts_with("_Z") && e.name.find("cxx11") != k_npos) {
        facts.exports_cxx11 = true;
        return;
      }
    }
  });
  return facts.exports_cxx11;
}

const std::vector<std::uint32_t>* index_lookup(const exports::Table& table, TableFacts& facts,
                                               const std::string& normalized_qualified_name) {
  std::call_once(facts.index_once, [&] {
    const auto symbols = table.symbols();
    for (std::size_t k = 0; k < symbols.size(); ++k) {
      const auto& e = symbols[k];
      if (!e.bindable() || !e.name.starts_with("_Z") || special_name(e.name)) continue;
      const auto d = demangle(e.name);
      if (!d) continue;
      facts.by_qualified_name[normalize_cxx11_abi(split_demangled(*d).qualified_name)].push_back(
          static_cast<std::uint32_t>(k));
    }
  });
  const auto it = facts.by_qualified_name.find(normalized_qualified_name);
  return it == facts.by_qualified_name.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------------------------------
// Classification.

std::string versioned(const exports::Export& e) {
  std::string s(e.name);
  if (!e.version.empty()) s += (e.hidden ? "@" : "@@") + std::string(e.version);
  return s;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

std::optional<Classification> version_too_new(std::string_view mangled, std::string_view version,
                                              const std::vector<const exports::Table*>& tables,
                                              const std::string& shown) {
  for (const auto* table : tables) {
    if (table == nullptr) continue;
    std::vector<std::string> candidates, versions;
    for (const auto& e : table->find(mangled)) {
      if (!e.bindable()) continue;
      candidates.push_back(versioned(e));
      versions.push_back(e.version.empty() ? "no version" : std::string(e.version) + (e.hidden ? "" : " (default)"));
    }
    if (candidates.empty()) continue;
    Classification c;
    c.classification = "version-too-new";
    c.provider = table->library;
    c.candidates = std::move(candidates);
    const std::string lib = table->library;
    if (version.empty()) {
      c.explanation = shown + " is needed without a version, and " + lib +
                      " exports it only at non-default versions (" + join(c.candidates, ", ") +
                      "): an unversioned reference binds only to an unversioned or default definition";
    } else {
      c.explanation =
          shown + "@" + std::string(version) + " is not exported by " + lib + ", which has it only " +
          (versions == std::vector<std::string>{"no version"} ? "unversioned" : "at " + join(versions, ", ")) + "; ";
      c.explanation += table->defines_version(version)
                           ? lib + " defines the version " + std::string(version) + ", but not " + shown + " at it"
                           : lib + " does not define the version " + std::string(version) +
                                 " at all (an older release than the one the wheel was built against)";
    }
    return c;
  }
  return std::nullopt;
}

enum class Kind {
  Abi,        // the same name across the dual ABI, the sides built with different ABIs
  TagLost,    // only an [abi:cxx11] tag differs, and the library does use the C++11 ABI elsewhere
  TagGained,  // only an [abi:cxx11] tag differs, on the library's side
  Signature,  // other parameters, qualifiers or return type
  Variant,    // demangles exactly alike: another constructor or destructor variant
};

struct Candidate {
  const exports::Table* table = nullptr;
  std::string mangled;
  std::string demangled;
  DemangledParts parts;
  Kind kind = Kind::Signature;
};

Kind kind_of(const std::string& needed, const std::string& candidate, const exports::Table& table, TableFacts& facts) {
  if (candidate == needed) return Kind::Variant;
  if (normalize_cxx11_abi(candidate) != normalize_cxx11_abi(needed)) return Kind::Signature;
  const auto need_markers = cxx11_markers(needed);
  const auto cand_markers = cxx11_markers(candidate);
  if (need_markers == cand_markers) return Kind::Abi;
  const bool library_old = cand_markers < need_markers;
  if (has_old_abi_type(library_old ? candidate : needed)) return Kind::Abi;
  // Only [abi:cxx11] tags differ: the tag follows the return type, which the name does not show.
  if (library_old) return table_exports_cxx11(table, facts) ? Kind::TagLost : Kind::Abi;
  return Kind::TagGained;
}

std::string describe_parameters(const std::string& p) {
  return p.empty() ? "a variable" : p;
}

// Parameters without the qualifiers after them: "(int) const &" -> "(int)".
std::string_view bare_parameters(std::string_view p) {
  const auto close = p.rfind(')');
  return close == k_npos ? p : p.substr(0, close + 1);
}

std::string abi_explanation(const std::string& needed, const Candidate& c) {
  const bool wheel_new = cxx11_markers(needed) > cxx11_markers(c.demangled);
  std::string types = cxx11_types(wheel_new ? needed : c.demangled);
  if (types.empty()) types = "std::string";
  const auto& lib = c.table->library;
  std::string s = needed + " differs from what " + lib + " exports only by the libstdc++ dual ABI: ";
  if (wheel_new) {
    s += "the wheel was built with _GLIBCXX_USE_CXX11_ABI=1 (C++11-ABI " + types + "); " + lib +
         " was built with _GLIBCXX_USE_CXX11_ABI=0 and exports the old-ABI signature " + c.demangled;
  } else {
    s += "the wheel was built with _GLIBCXX_USE_CXX11_ABI=0 (old " + types + "); " + lib +
         " exports the C++11-ABI signature " + c.demangled;
  }
  if (c.kind == Kind::TagGained) {
    s += " (they differ only by an [abi:cxx11] tag, which follows the return type: unless that return type "
         "changed to one involving std::string)";
  }
  return s;
}

std::string signature_explanation(const std::string& needed, const DemangledParts& need,
                                  const std::vector<const Candidate*>& cands) {
  const auto& first = *cands.front();
  const auto lost =
      std::find_if(cands.begin(), cands.end(), [](const Candidate* c) { return c->kind == Kind::TagLost; });
  if (lost != cands.end()) {
    const auto& lib = (*lost)->table->library;
    return normalize_cxx11_abi(need.qualified_name) + " is exported by " + lib + " as " + (*lost)->demangled +
           ", without the [abi:cxx11] tag of the wheel's " + needed + ", although " + lib +
           " uses the C++11 ABI elsewhere: its return type changed (the wheel expects one involving std::string "
           "or std::list)";
  }
  bool all_params = true, all_quals = true, all_return = true;
  std::vector<std::string> alts;
  for (const auto* c : cands) {
    const bool same_bare = bare_parameters(c->parts.parameters) == bare_parameters(need.parameters);
    const bool same_params = c->parts.parameters == need.parameters;
    all_params = all_params && !same_bare;
    all_quals = all_quals && same_bare && !same_params;
    all_return = all_return && same_params && c->parts.return_type != need.return_type;
  }
  std::string what;
  if (all_return) {
    what = "another return type: ";
    for (const auto* c : cands) alts.push_back(c->parts.return_type.empty() ? "none" : c->parts.return_type);
    what += join(alts, " or ") + " instead of " + (need.return_type.empty() ? "none" : need.return_type);
  } else {
    what = all_params ? "other parameters: " : all_quals ? "other qualifiers: " : "another signature: ";
    for (const auto* c : cands) {
      alts.push_back(all_params || all_quals ? describe_parameters(c->parts.parameters) : c->demangled);
    }
    what +=
        join(alts, " or ") + " instead of " + (all_params || all_quals ? describe_parameters(need.parameters) : needed);
  }
  return need.qualified_name + " is exported with " + what + ", in " + first.table->library;
}

}  // namespace

DemangledParts split_demangled(std::string_view demangled) {
  return split_demangled_at(demangled, 0);
}

std::string normalize_cxx11_abi(std::string_view demangled) {
  std::string s(demangled);
  replace_all(s, "[abi:cxx11]", "");
  replace_all(s, "std::__cxx11::", "std::");
  replace_all(s, "std::basic_string<char, std::char_traits<char>, std::allocator<char> >", "std::string");
  replace_all(s, "std::basic_string<char, std::char_traits<char>, std::allocator<char>>", "std::string");
  // The demangler separates consecutive closing brackets: "Box<std::basic_string<...> >" became
  // "Box<std::string >", which the old ABI's Ss writes "Box<std::string>".
  replace_all(s, "std::string >", "std::string>");
  return s;
}

std::vector<std::string> mangled_search_prefixes(std::string_view mangled) {
  if (mangled.size() < 3 || !mangled.starts_with("_Z") || special_name(mangled)) return {};
  if (mangled[2] == 'N') {
    ManglingParser p(mangled, 3);
    ManglingParser::Nested info;
    // A failure inside template arguments still leaves a usable head: the component carrying them.
    const bool ok = p.nested(&info);
    std::size_t end = info.head_end;
    if (!ok && end <= info.body_start) return {};
    if (p.first_abi_sensitive() < end) return {};
    const auto body = mangled.substr(info.body_start, end - info.body_start);
    std::vector<std::string> out;
    static constexpr std::array<std::string_view, 8> k_cv = {"", "K", "V", "VK", "r", "rK", "rV", "rVK"};
    static constexpr std::array<std::string_view, 3> k_ref = {"", "R", "O"};
    for (auto cv : k_cv) {
      for (auto ref : k_ref) out.push_back("_ZN" + std::string(cv) + std::string(ref) + std::string(body));
    }
    return out;
  }
  if (mangled[2] == 'Z') return {};  // a local name
  ManglingParser p(mangled, 2);
  const bool in_std = mangled.substr(2, 2) == "St";
  if (in_std) p.advance(2);
  std::size_t head_end = 0;
  p.unqualified_name(&head_end, in_std);  // a failure past the head still leaves it usable
  if (head_end == 0 || p.first_abi_sensitive() < head_end) return {};
  return {std::string(mangled.substr(0, head_end))};
}

Classification classify_missing_symbol(std::string_view mangled, std::string_view version,
                                       const std::vector<const exports::Table*>& tables) {
  const auto demangled = demangle(mangled);
  const std::string shown = demangled ? *demangled : std::string(mangled);

  if (auto c = version_too_new(mangled, version, tables, shown)) {
    c->demangled = demangled.value_or("");
    return *c;
  }

  Classification out;
  out.demangled = demangled.value_or("");
  std::vector<Candidate> found;
  std::vector<std::string> unbindable;  // defined, but where the loader never binds (local symbols)
  for (const auto* table : tables) {
    if (table == nullptr) continue;
    for (const auto& e : table->find(mangled)) {
      if (!e.bindable()) unbindable.push_back(table->library);
    }
  }

  if (demangled && !special_name(mangled)) {
    const auto need = split_demangled(*demangled);
    const auto need_key = normalize_cxx11_abi(need.qualified_name);
    const auto prefixes = mangled_search_prefixes(mangled);
    for (const auto* table : tables) {
      if (table == nullptr) continue;
      auto facts = facts_for(*table);
      const auto symbols = table->symbols();
      auto consider = [&](const exports::Export& e) {
        if (!e.bindable() || e.name == mangled) return;
        const std::string name(e.name);
        for (const auto& f : found) {
          if (f.table == table && f.mangled == name) return;
        }
        auto d = demangle(e.name);
        if (!d) return;
        auto parts = split_demangled(*d);
        if (normalize_cxx11_abi(parts.qualified_name) != need_key) return;
        Candidate c;
        c.table = table;
        c.mangled = name;
        c.kind = kind_of(*demangled, *d, *table, *facts);
        c.demangled = std::move(*d);
        c.parts = std::move(parts);
        found.push_back(std::move(c));
      };
      if (!prefixes.empty()) {
        for (const auto& prefix : prefixes) {
          for (const auto& e : table->with_prefix(prefix)) consider(e);
        }
      } else if (const auto* hits = index_lookup(*table, *facts, need_key)) {
        for (const auto k : *hits) consider(symbols[k]);
      }
    }

    auto first_of = [&found](auto pred) -> std::vector<const Candidate*> {
      std::vector<const Candidate*> out_c;
      for (const auto& c : found) {
        if (!pred(c.kind)) continue;
        const bool seen =
            std::any_of(out_c.begin(), out_c.end(), [&c](const Candidate* o) { return o->demangled == c.demangled; });
        if (!seen) out_c.push_back(&c);
      }
      return out_c;
    };
    const auto abi = first_of([](Kind k) { return k == Kind::Abi || k == Kind::TagGained; });
    if (!abi.empty()) {
      out.classification = "cxx-abi-mismatch";
      out.provider = abi.front()->table->library;
      for (const auto* c : abi) out.candidates.push_back(c->demangled);
      out.explanation = abi_explanation(*demangled, *abi.front());
      return out;
    }
    const auto sig = first_of([](Kind k) { return k == Kind::TagLost || k == Kind::Signature; });
    if (!sig.empty()) {
      out.classification = "signature-changed";
      out.provider = sig.front()->table->library;
      for (const auto* c : sig) out.candidates.push_back(c->demangled);
      out.explanation = signature_explanation(*demangled, need, sig);
      return out;
    }
  }

  out.classification = "absent";
  out.explanation = "no library in the load scope exports " + shown;
  std::vector<std::string> variants;
  for (const auto& c : found) {
    if (c.kind == Kind::Variant) variants.push_back(c.mangled + " in " + c.table->library);
  }
  if (!variants.empty()) {
    out.explanation += "; only other constructor or destructor variants of it are exported (" + join(variants, ", ") +
                       "), not " + std::string(mangled);
  }
  if (!unbindable.empty()) {
    out.explanation += "; " + join(unbindable, ", ") + " defines it as a local symbol, which the loader never binds";
  }
  return out;
}

}  // namespace wheelcheck::verdict
