// Internal to inspector/python/: Python's tokens, as far as source.cpp needs them (tokens.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelcheck::python::source {

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

// The logical lines of `text`. all: every line's tokens; else only those of imports and block headers (the
// other lines scanned, making no tokens), and *saw_loader says whether a loader's name passed by.
std::vector<LogicalLine> tokenize(std::string_view text, bool all, bool* saw_loader);
// The tokens of a partial line, its text read again in full.
Tokens retokenize(std::string_view text, const LogicalLine& line);

bool name_char(char c);
bool is_op(const Tokens& t, std::size_t i, std::string_view op);
bool is_name(const Tokens& t, std::size_t i, std::string_view name);
// The index of the bracket that closes the one at `open` (t.size() when it is never closed).
std::size_t closing(const Tokens& t, std::size_t open);
// The first operator `op` at bracket depth 0 in [b, e), or e.
std::size_t find_top(const Tokens& t, std::size_t b, std::size_t e, std::string_view op);
std::vector<std::pair<std::size_t, std::size_t>> split_top(const Tokens& t, std::size_t b, std::size_t e,
                                                           std::string_view op);
// Tokens as text, for evidence and conditions (shortened past 160 characters).
std::string text_of(const Tokens& t, std::size_t b, std::size_t e);

}  // namespace wheelcheck::python::source
