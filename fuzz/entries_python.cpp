// The python target (fuzz/entries.hpp): the Python source reader on any bytes, and its two tokenizer passes
// held against each other (inspector/python/tokens.cpp). The first pass of a file keeps only imports and
// block headers and passes over every other line sixteen bytes at a time; the full pass makes every token.
// Where a line ends must not depend on which pass read it.
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fuzz/entries.hpp"
#include "inspector/python/tokens.hpp"
#include "wheelcheck/python.hpp"

namespace wheelcheck::fuzz {

namespace {

[[noreturn]] void python_fail(const std::string& what, const python::source::LogicalLine& l) {
  throw std::logic_error("fuzz: python: " + what + " (line " + std::to_string(l.line) + ", offset " +
                         std::to_string(l.begin) + ")");
}

}  // namespace

int fuzz_python(const std::uint8_t* data, std::size_t size) {
  const std::string_view text =
      size == 0 ? std::string_view{} : std::string_view(reinterpret_cast<const char*>(data), size);
  for (const char* file : {"pkg/m.py", "pkg/__init__.py"}) {
    const python::Module m = python::read_module(file, text);
    for (const auto& l : m.loads)
      if (l.line < 1) throw std::logic_error("fuzz: python: a load at line " + std::to_string(l.line));
  }
  namespace src = python::source;
  bool first_saw = false, full_saw = false;
  const auto first = src::tokenize(text, false, &first_saw);
  const auto full = src::tokenize(text, true, &full_saw);
  // A loader's name among the full pass's names is one the first pass saw (it may see more: a name it
  // confirms by its letters, "XCDLL").
  if (full_saw && !first_saw) throw std::logic_error("fuzz: python: the first pass missed a loader's name");
  std::map<std::size_t, const src::LogicalLine*> by_start;
  for (const auto& l : full) by_start.emplace(l.begin, &l);
  for (const auto& l : first) {
    const auto it = by_start.find(l.begin);
    if (it == by_start.end()) python_fail("a line of the first pass that the full pass does not have", l);
    const src::LogicalLine& f = *it->second;
    if (f.indent != l.indent || f.line != l.line) python_fail("the passes disagree on its indent or line", l);
    // A header of the first pass keeps its keyword (and a ':' of its own); an import, a prefix of its tokens.
    const std::size_t n = l.partial ? 1 : l.tokens.size();
    if (n > f.tokens.size()) python_fail("more tokens than the full pass has", l);
    for (std::size_t i = 0; i < n; ++i)
      if (l.tokens[i].kind != f.tokens[i].kind || l.tokens[i].text != f.tokens[i].text ||
          l.tokens[i].line != f.tokens[i].line)
        python_fail("token " + std::to_string(i) + " differs", l);
    if (!l.partial && l.end != f.end) python_fail("the passes disagree on where it ends", l);
  }
  // And the other way: every line of the full pass that starts with an import's or a block header's keyword
  // is one the first pass kept.
  static const std::set<std::string, std::less<>> kept = {"import", "from",  "def",   "class", "if",     "elif",
                                                          "else",   "for",   "while", "try",   "except", "finally",
                                                          "with",   "async", "match", "case"};
  std::set<std::size_t> first_starts;
  for (const auto& l : first) first_starts.insert(l.begin);
  for (const auto& f : full)
    if (!f.tokens.empty() && f.tokens[0].kind == src::PyToken::Name && kept.count(f.tokens[0].text) != 0 &&
        first_starts.count(f.begin) == 0)
      python_fail("a line the first pass should have kept", f);
  return 0;
}

}  // namespace wheelcheck::fuzz
