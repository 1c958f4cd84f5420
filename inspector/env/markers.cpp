// PEP 508 environment markers, read and evaluated as pip's vendored packaging does.
//
// Grammar (PEP 508, with PEP 751's set-valued variables):
//   marker     = or_expr
//   or_expr    = and_expr ("or" and_expr)*
//   and_expr   = atom ("and" atom)*
//   atom       = "(" marker ")" | value op value
//   value      = VARIABLE | 'string' | "string"          (no escapes: a string holds the other quote)
//   op         = "<=" | "<" | "!=" | "===" | "==" | ">=" | ">" | "~=" | "in" | "not" "in"
// One side of a comparison is a variable, the other a string; either may come first. The marker is read
// into a small tree once (and/or are n-ary, so its depth is that of its parentheses, at most
// k_max_parentheses), then evaluated.
//
// Evaluation. As packaging's _eval_op: for a version variable (python_version, python_full_version,
// implementation_version, platform_release) with a comparison operator, `lhs OP rhs` is "the version lhs
// is in the specifier OP rhs" (PEP 440, pre-releases admitted: wheel::version_in) where both parse;
// otherwise the strings are compared (==, !=, <, <=, >, >= by code point; `in` is a substring test; ===
// is case-insensitive equality; ~= between strings is refused). `extra` compares names normalised (PEP
// 685); with several extras the marker holds when it holds for one of them, as pip evaluates it once per
// extra. `extras` and `dependency_groups` (PEP 751) are sets: only 'NAME' in / not in them.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/variant.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::lock {

namespace {

constexpr std::size_t k_max_parentheses = 64;
constexpr std::size_t k_quoted_max = 120;  // how much of a marker a message quotes

// ---------------------------------------------------------------------------------------------------
// The tree

enum class VarKind { String, Version, Extra, Set };

struct Variable {
  std::string name;  // canonical: python_version, extra, dependency_groups, ...
  VarKind kind = VarKind::String;
};

// The variables PEP 508 and PEP 751 define, and the legacy spellings packaging still maps onto them.
std::optional<Variable> variable_named(std::string_view word) {
  static const std::pair<const char*, const char*> aliases[] = {
      {"os.name", "os_name"},
      {"sys.platform", "sys_platform"},
      {"platform.version", "platform_version"},
      {"platform.machine", "platform_machine"},
      {"platform.python_implementation", "platform_python_implementation"},
      {"python_implementation", "platform_python_implementation"},
      {"platform.system", "platform_system"},
  };
  std::string name(word);
  for (const auto& [alias, canonical] : aliases) {
    if (word == alias) name = canonical;
  }
  static const char* const strings[] = {"os_name",
                                        "sys_platform",
                                        "platform_system",
                                        "platform_version",
                                        "platform_machine",
                                        "platform_python_implementation",
                                        "implementation_name"};
  static const char* const versions[] = {"python_version", "python_full_version", "implementation_version",
                                         "platform_release"};
  for (const char* s : strings) {
    if (name == s) return Variable{name, VarKind::String};
  }
  for (const char* s : versions) {
    if (name == s) return Variable{name, VarKind::Version};
  }
  if (name == "extra") return Variable{name, VarKind::Extra};
  if (name == "extras" || name == "dependency_groups" || name == "variant_namespaces" || name == "variant_features" ||
      name == "variant_properties") {
    return Variable{name, VarKind::Set};
  }
  if (name == "variant_label") return Variable{name, VarKind::String};
  return std::nullopt;
}

struct Clause {
  std::string op;
  std::string literal;  // the quoted string's text
  Variable variable;
  bool variable_left = true;  // `python_version >= "3.10"` rather than `"3.10" <= python_version`
};

struct Node {
  enum class Kind { Clause, And, Or } kind = Kind::Clause;
  Clause clause;
  std::vector<Node> children;
};

// ---------------------------------------------------------------------------------------------------
// Reading

std::string quoted(std::string_view marker) {
  if (marker.size() <= k_quoted_max) return "'" + printable(marker) + "'";
  return "'" + printable(marker.substr(0, k_quoted_max)) + "...'";
}

struct Token {
  enum class Kind { End, LParen, RParen, String, Word, Op } kind = Token::Kind::End;
  std::string text;
  std::size_t at = 0;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : m_text(text) { advance(); }

  Node parse() {
    Node n = parse_or();
    if (m_tok.kind != Token::Kind::End) fail("unexpected " + describe(m_tok));
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw bad_input("invalid marker " + quoted(m_text) + ": " + what + " at offset " + std::to_string(m_tok.at));
  }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Token::Kind::End: return "end of marker";
      case Token::Kind::LParen: return "'('";
      case Token::Kind::RParen: return "')'";
      case Token::Kind::String: return "a string";
      case Token::Kind::Word:
      case Token::Kind::Op: {
        const std::string_view shown = std::string_view(t.text).substr(0, 40);
        return "'" + printable(shown) + (t.text.size() > shown.size() ? "...'" : "'");
      }
    }
    return "?";
  }

  static bool word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  }

  void advance() {
    while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t')) ++m_pos;
    m_tok = Token{};
    m_tok.at = m_pos;
    if (m_pos >= m_text.size()) return;
    const char c = m_text[m_pos];
    if (c == '(' || c == ')') {
      m_tok.kind = c == '(' ? Token::Kind::LParen : Token::Kind::RParen;
      ++m_pos;
      return;
    }
    if (c == '\'' || c == '"') {
      const std::size_t end = m_text.find(c, m_pos + 1);
      if (end == std::string_view::npos) fail("unterminated string");
      m_tok.kind = Token::Kind::String;
      m_tok.text = std::string(m_text.substr(m_pos + 1, end - m_pos - 1));
      m_pos = end + 1;
      return;
    }
    static const char* const ops[] = {"===", "==", "!=", "<=", ">=", "~=", "<", ">"};
    for (const char* op : ops) {
      const std::string_view o(op);
      if (m_text.substr(m_pos, o.size()) == o) {
        m_tok.kind = Token::Kind::Op;
        m_tok.text = std::string(o);
        m_pos += o.size();
        return;
      }
    }
    if (word_char(c)) {
      std::size_t end = m_pos;
      while (end < m_text.size() && word_char(m_text[end])) ++end;
      m_tok.kind = Token::Kind::Word;
      m_tok.text = std::string(m_text.substr(m_pos, end - m_pos));
      m_pos = end;
      return;
    }
    m_tok.kind = Token::Kind::Word;
    m_tok.text = std::string(1, c);
    fail("unexpected character " + describe(m_tok));
  }

  bool at_word(std::string_view w) const { return m_tok.kind == Token::Kind::Word && m_tok.text == w; }

  Node parse_or() {
    Node first = parse_and();
    if (!at_word("or")) return first;
    Node n;
    n.kind = Node::Kind::Or;
    n.children.push_back(std::move(first));
    while (at_word("or")) {
      advance();
      n.children.push_back(parse_and());
    }
    return n;
  }

  Node parse_and() {
    Node first = parse_atom();
    if (!at_word("and")) return first;
    Node n;
    n.kind = Node::Kind::And;
    n.children.push_back(std::move(first));
    while (at_word("and")) {
      advance();
      n.children.push_back(parse_atom());
    }
    return n;
  }

  Node parse_atom() {
    if (m_tok.kind == Token::Kind::LParen) {
      if (++m_depth > k_max_parentheses) fail("parentheses nested deeper than " + std::to_string(k_max_parentheses));
      advance();
      Node n = parse_or();
      if (m_tok.kind != Token::Kind::RParen) fail("expected ')', found " + describe(m_tok));
      advance();
      --m_depth;
      return n;
    }
    struct Side {
      bool is_variable = false;
      Variable variable;
      std::string literal;
    };
    auto side = [&]() {
      Side s;
      if (m_tok.kind == Token::Kind::String) {
        s.literal = m_tok.text;
      } else if (m_tok.kind == Token::Kind::Word) {
        auto v = variable_named(m_tok.text);
        if (!v && m_tok.text[0] >= '0' && m_tok.text[0] <= '9') {
          fail(describe(m_tok) + " is not a variable (a value is quoted: '" + printable(m_tok.text.substr(0, 40)) +
               "')");
        }
        if (!v) fail("unknown variable " + describe(m_tok));
        s.is_variable = true;
        s.variable = std::move(*v);
      } else {
        fail("expected a variable or a quoted string, found " + describe(m_tok));
      }
      advance();
      return s;
    };
    Side lhs = side();
    std::string op;
    if (m_tok.kind == Token::Kind::Op) {
      op = m_tok.text;
      advance();
    } else if (at_word("in")) {
      op = "in";
      advance();
    } else if (at_word("not")) {
      advance();
      if (!at_word("in")) fail("expected 'in' after 'not', found " + describe(m_tok));
      op = "not in";
      advance();
    } else {
      fail("expected an operator, found " + describe(m_tok));
    }
    Side rhs = side();
    if (lhs.is_variable == rhs.is_variable) {
      fail(std::string(lhs.is_variable ? "compares two variables" : "compares two strings") +
           ": one side must be a variable, the other a quoted string");
    }
    Node n;
    n.clause.op = op;
    n.clause.variable_left = lhs.is_variable;
    n.clause.variable = lhs.is_variable ? lhs.variable : rhs.variable;
    n.clause.literal = lhs.is_variable ? rhs.literal : lhs.literal;
    if (n.clause.variable.kind == VarKind::Set && (n.clause.variable_left || (op != "in" && op != "not in"))) {
      fail("'" + n.clause.variable.name + "' is a set: only 'NAME' in " + n.clause.variable.name + " reads it");
    }
    return n;
  }

  std::string_view m_text;
  std::size_t m_pos = 0;
  std::size_t m_depth = 0;
  Token m_tok;
};

// ---------------------------------------------------------------------------------------------------
// Evaluating

bool string_op(const std::string& lhs, const std::string& op, const std::string& rhs, std::string_view marker) {
  if (op == "==") return lhs == rhs;
  if (op == "!=") return lhs != rhs;
  if (op == "<") return lhs < rhs;
  if (op == "<=") return lhs <= rhs;
  if (op == ">") return lhs > rhs;
  if (op == ">=") return lhs >= rhs;
  if (op == "in") return rhs.find(lhs) != std::string::npos;
  if (op == "not in") return rhs.find(lhs) == std::string::npos;
  if (op == "===") return ascii_lower(lhs) == ascii_lower(rhs);
  throw bad_input("invalid marker " + quoted(marker) + ": '" + printable(std::string_view(lhs).substr(0, 40)) + "' " +
                  op + " '" + printable(std::string_view(rhs).substr(0, 40)) +
                  "' compares strings that are not versions");
}

bool eval_clause(const Clause& c, const MarkerEnv& env, const std::string& extra, std::string_view marker) {
  const Variable& var = c.variable;
  if (var.kind == VarKind::Set && var.name.rfind("variant_", 0) == 0) {
    // Properties compared as written, white space around "::" aside.
    const auto squeeze = [](std::string_view s) {
      std::string out;
      for (const char ch : s) {
        if (ch != ' ' && ch != '\t') out.push_back(ch);
      }
      return out;
    };
    const auto& set = var.name == "variant_namespaces" ? env.variant_namespaces
                      : var.name == "variant_features" ? env.variant_features
                                                       : env.variant_properties;
    const std::string want = squeeze(c.literal);
    const bool member = std::any_of(set.begin(), set.end(), [&](const std::string& s) { return squeeze(s) == want; });
    return c.op == "in" ? member : !member;
  }
  if (var.kind == VarKind::Set) {
    const auto& set = var.name == "extras" ? env.extras : env.dependency_groups;
    const std::string want = wheel::normalize_project_name(c.literal);
    const bool member = std::any_of(set.begin(), set.end(),
                                    [&](const std::string& s) { return wheel::normalize_project_name(s) == want; });
    return c.op == "in" ? member : !member;
  }
  std::string value;
  if (var.kind == VarKind::Extra) {
    value = extra;
  } else if (auto it = env.values.find(var.name); it != env.values.end()) {
    value = it->second;
  }
  std::string literal = c.literal;
  if (var.kind == VarKind::Extra) {
    if (!value.empty()) value = wheel::normalize_project_name(value);
    literal = wheel::normalize_project_name(literal);
  }
  const std::string& lhs = c.variable_left ? value : literal;
  const std::string& rhs = c.variable_left ? literal : value;
  if (var.kind == VarKind::Version && c.op != "in" && c.op != "not in") {
    if (auto r = wheel::version_in(c.op + rhs, lhs)) return *r;
  }
  return string_op(lhs, c.op, rhs, marker);
}

// And/or over an explicit stack would be the same: the tree's depth is bounded by k_max_parentheses.
bool eval_node(const Node& n, const MarkerEnv& env, const std::string& extra, std::string_view marker) {
  switch (n.kind) {
    case Node::Kind::Clause: return eval_clause(n.clause, env, extra, marker);
    case Node::Kind::And:
      return std::all_of(n.children.begin(), n.children.end(),
                         [&](const Node& c) { return eval_node(c, env, extra, marker); });
    case Node::Kind::Or:
      return std::any_of(n.children.begin(), n.children.end(),
                         [&](const Node& c) { return eval_node(c, env, extra, marker); });
  }
  return false;
}

Node parse_marker(std::string_view marker) {
  return Parser(marker).parse();
}

// "3.12", "3.12.4", "3.13t" -> ("3.12", "3.12.0"), ("3.12", "3.12.4"), ("3.13", "3.13.0"); nullopt when
// the text does not start with MAJOR.MINOR.
std::optional<std::pair<std::string, std::string>> python_versions(std::string_view text) {
  text = trim(text);
  if (!text.empty() && (text.back() == 't' || text.back() == 'T')) text.remove_suffix(1);
  const auto parts = split(text, ".", true);
  if (parts.size() < 2 || !small_number(parts[0]) || !small_number(parts[1])) return std::nullopt;
  const std::string short_version = parts[0] + "." + parts[1];
  std::string full = short_version + ".0";
  if (parts.size() >= 3 && !parts[2].empty()) full = std::string(text);
  return std::make_pair(short_version, full);
}

}  // namespace

std::optional<bool> version_satisfies(std::string_view specifiers, std::string_view version) {
  return wheel::version_in(specifiers, version);
}

MarkerEnv marker_env(const image::Image& image, const image::Python* python) {
  MarkerEnv env;
  auto& v = env.values;
  v["implementation_name"] = "cpython";
  v["platform_python_implementation"] = "CPython";
  v["sys_platform"] = "linux";
  v["platform_system"] = "Linux";
  v["os_name"] = "posix";
  v["platform_release"] = "";
  v["platform_version"] = "";
  v["platform_machine"] = image.arch.known() ? wheel::tag_arch_of(*image.arch.value) : "";
  std::string version;
  if (python != nullptr) {
    version = python->version;
  } else if (!image.pythons.empty()) {
    version = image.pythons.front().version;
  } else if (image.python.known()) {
    version = *image.python.value;
  }
  if (auto pv = python_versions(version)) {
    v["python_version"] = pv->first;
    v["python_full_version"] = pv->second;
    v["implementation_version"] = pv->second;
  }
  return env;
}

void set_variant(MarkerEnv& env, const WheelProfile& wheel) {
  env.variant_namespaces.clear();
  env.variant_features.clear();
  env.variant_properties.clear();
  env.values["variant_label"] = wheel.filename.variant.value_or("");
  const auto d = variant::declared(wheel);
  const variant::Properties* props = d ? d->properties() : nullptr;
  if (props == nullptr) return;
  for (const auto& [ns, features] : *props) {
    env.variant_namespaces.push_back(ns);
    for (const auto& [feature, values] : features) {
      env.variant_features.push_back(ns + " :: " + feature);
      for (const auto& v : values) env.variant_properties.push_back(variant::property_text(ns, feature, v));
    }
  }
}

bool evaluate_marker(std::string_view marker, const MarkerEnv& env) {
  if (trim(marker).empty()) return true;
  const Node tree = parse_marker(marker);
  if (env.extras.empty()) return eval_node(tree, env, "", marker);
  return std::any_of(env.extras.begin(), env.extras.end(),
                     [&](const std::string& extra) { return eval_node(tree, env, extra, marker); });
}

void check_marker(std::string_view marker) {
  if (!trim(marker).empty()) parse_marker(marker);
}

Requirement read_requirement(std::string_view text) {
  Requirement r;
  r.text = std::string(text);
  const std::string_view t = trim(text);
  std::size_t i = 0;
  while (i < t.size() &&
         (std::isalnum(static_cast<unsigned char>(t[i])) != 0 || t[i] == '-' || t[i] == '_' || t[i] == '.'))
    ++i;
  if (i == 0 || std::isalnum(static_cast<unsigned char>(t[0])) == 0) {
    r.error = "it does not start with a distribution name";
    return r;
  }
  r.name = std::string(t.substr(0, i));
  r.normalized = wheel::normalize_project_name(r.name);
  std::string_view rest = t.substr(i);
  const auto semi = rest.find(';');
  if (semi != std::string_view::npos) {
    r.marker = std::string(trim(rest.substr(semi + 1)));
    rest = rest.substr(0, semi);
    try {
      check_marker(r.marker);
    } catch (const Error& e) {
      r.error = "its marker does not parse: " + std::string(e.what());
      return r;
    }
    r.extra_only = r.marker.find("extra") != std::string::npos;
  }
  std::string spec(trim(rest));
  if (!spec.empty() && spec.front() == '[') {
    const auto close = spec.find(']');
    if (close == std::string::npos) {
      r.error = "its extras are not closed with ]";
      return r;
    }
    spec = std::string(trim(std::string_view(spec).substr(close + 1)));
  }
  if (!spec.empty() && spec.front() == '@') {
    r.url = true;
    return r;
  }
  if (!spec.empty() && spec.front() == '(') {
    if (spec.back() != ')') {
      r.error = "its parenthesis is not closed";
      return r;
    }
    spec = std::string(trim(std::string_view(spec).substr(1, spec.size() - 2)));
  }
  if (!spec.empty() && !wheel::parse_specifier_set(spec)) {
    r.error = "'" + spec + "' is not a PEP 440 version specifier";
    return r;
  }
  r.specifier = spec;
  return r;
}

}  // namespace wheelcheck::lock
