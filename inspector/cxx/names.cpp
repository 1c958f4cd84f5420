// Demangled C++ names, as abi::__cxa_demangle writes them.
//
// Splitting. "bool ns::operator< <int>(ns::X const&, int) const" is read from the end: the parameter list
// is the last balanced "(...)" followed by nothing but function qualifiers (const, volatile, &, &&,
// noexcept, ...); what precedes it is "return-type qualified-name", split at the last space outside any
// brackets. Operator names are read as units ("operator<", "operator< <int>", "operator new[]",
// "operator\"\" _km"), so that their '<', '>' and '(' do not count as brackets, and a conversion operator's
// type runs to the end of the name. A template function returning a function pointer,
// "int (*ns::f<int>(long))(char)", is split inside the parentheses (at most 8 levels deep). Without a
// parameter list the whole name is the qualified name (a variable, "vtable for ns::X").
//
// The dual ABI. libstdc++ has two ABIs for std::string and std::list: the C++11 one writes them
// std::__cxx11::basic_string and std::__cxx11::list, and tags functions returning them [abi:cxx11]; the
// old one writes std::string (Ss) and std::list. normalize_cxx11_abi writes both alike; the markers and
// old-ABI types tell which side a name is built with.
#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelcheck/cxx_names.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::cxx {

namespace {

constexpr std::size_t k_npos = std::string_view::npos;

bool is_ident(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// Without leading and trailing spaces: the demangler separates with spaces alone, so any other white
// space is part of a name (a source name may hold any byte) and stays.
std::string_view trim_spaces(std::string_view s) {
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
    tail = trim_spaces(tail);
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
    out.qualified_name = std::string(trim_spaces(s));
    return out;
  }
  const auto head = s.substr(0, open);
  out.parameters = std::string(trim_spaces(s.substr(open)));
  // A template function returning a function pointer: "int (*ns::f<int>(long))(char)".
  if (head.ends_with(')') && !head.ends_with("operator()") && depth < 8) {
    const auto inner_close = head.size() - 1;
    const auto inner_open = matching_open(head, inner_close);
    if (inner_open != k_npos) {
      auto inner = head.substr(inner_open + 1, inner_close - inner_open - 1);
      while (!inner.empty() && (inner.front() == '*' || inner.front() == '&')) inner.remove_prefix(1);
      auto parts = split_demangled_at(inner, depth + 1);
      if (!parts.parameters.empty()) {
        parts.return_type = std::string(trim_spaces(head.substr(0, inner_open))) + " (*)" + out.parameters;
        return parts;
      }
    }
  }
  const auto start = qualified_name_start(head);
  out.return_type = std::string(trim_spaces(head.substr(0, start)));
  out.qualified_name = std::string(trim_spaces(head.substr(start)));
  return out;
}

}  // namespace

DemangledParts split_demangled(std::string_view demangled) {
  return split_demangled_at(demangled, 0);
}

std::string leading_scope(std::string_view name) {
  const std::string d = demangle_or_self(name);
  std::string_view s = d;
  // A special name is about the name after its words (libiberty's spellings).
  static constexpr std::array<std::string_view, 16> k_special = {"vtable for ",
                                                                 "VTT for ",
                                                                 "typeinfo for ",
                                                                 "typeinfo name for ",
                                                                 "typeinfo fn for ",
                                                                 "non-virtual thunk to ",
                                                                 "virtual thunk to ",
                                                                 "covariant return thunk to ",
                                                                 "guard variable for ",
                                                                 "TLS init function for ",
                                                                 "TLS wrapper function for ",
                                                                 "hidden alias for ",
                                                                 "transaction clone for ",
                                                                 "non-transaction clone for ",
                                                                 "template parameter object for ",
                                                                 "java Class for "};
  for (bool again = true; again;) {
    again = false;
    for (auto word : k_special) {
      if (s.starts_with(word)) {
        s.remove_prefix(word.size());
        again = true;
      }
    }
    if (s.starts_with("construction vtable for ") || s.starts_with("reference temporary #")) {
      const auto f = s.find(" for ");
      if (f == k_npos) return "";
      s.remove_prefix(f + 5);
      again = true;
    }
  }
  const std::string q = qualified_name(s);
  int depth = 0;
  for (std::size_t j = 0; j < q.size(); ++j) {
    if (operator_keyword_at(q, j)) return "";  // an operator before any scope: none
    const char c = q[j];
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == '>' || c == ')' || c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == ':' && depth == 0 && j + 1 < q.size() && q[j + 1] == ':') {
      return j == 0 ? "" : q.substr(0, j + 2);
    }
  }
  return "";
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

std::size_t cxx11_abi_markers(std::string_view d) {
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

std::string cxx11_abi_types(std::string_view d) {
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
  return join(types, ", ");
}

}  // namespace wheelcheck::cxx
