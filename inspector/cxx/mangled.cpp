// Mangled C++ names: the prefix that every export with the same qualified name shares, so that a search
// among tens of thousands of exports (libtorch_cpu has some 76,000) demangles only the few that can match.
//
// For a nested name _ZN [r][V][K] [R|O] <scopes> <own name> ... the scopes are mangled identically for
// every overload (substitutions are numbered left to right, so what precedes the own name does not depend
// on what follows), and the own name starts with the same head: its source name (3foo), its operator code
// (pl, cl, cv...), C for any constructor (C1, C2, CI1...) or D for any destructor (D0, D1, D2). Only the
// cv- and ref-qualifiers before the scopes vary with the signature, so mangled_search_prefixes() gives one
// prefix per combination (24). The head's end comes from a small parser of the Itanium C++ ABI grammar
// (types, template arguments, substitutions, ABI tags) that only skips; where it meets a construct it does
// not follow inside template arguments (an expression, decltype), the prefix stops before those
// arguments, which is still shared by every candidate, only less selective. Where no prefix is reliable
// (a local name _ZZ..., or scopes the two libstdc++ ABIs mangle differently: Ss, Sb, std::__cxx11, an
// [abi:cxx11] tag, the dual-ABI class templates after St) there is none, and the caller searches otherwise.
// The recursion is bounded (256 levels): a hostile name cannot exhaust the stack.
#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "wheelcheck/cxx_names.hpp"

namespace wheelcheck::cxx {

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

// A parser of the Itanium C++ ABI grammar that only skips (types, template arguments, names), records
// where the own name's head ends, and notes the first place the dual ABI shows.
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

}  // namespace

bool is_special_name(std::string_view mangled) {
  return mangled.size() > 2 && (mangled[2] == 'T' || mangled[2] == 'G');
}

std::vector<std::string> mangled_search_prefixes(std::string_view mangled) {
  if (mangled.size() < 3 || !mangled.starts_with("_Z") || is_special_name(mangled)) return {};
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

}  // namespace wheelcheck::cxx
