// The one error model of wheelcheck: low layers throw wheelcheck::Error with a kind and a message;
// the command line catches it once and maps the kind to a documented exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace wheelcheck {

enum class ErrorKind {
  Usage,     // the command line was wrong
  BadInput,  // a wheel, ELF, or file that is malformed, hostile or unreadable
  Io,        // the operating system refused (permissions, disk full)
  Internal,  // a bug in wheelcheck
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), m_kind(kind) {}
  ErrorKind kind() const noexcept { return m_kind; }

 private:
  ErrorKind m_kind;
};

// Shorthands that read well at the throw site: throw bad_input("...").
Error bad_input(const std::string& message);
Error usage_error(const std::string& message);
Error io_error(const std::string& message);  // appends strerror(errno)

// Exit codes shared by every subcommand (documented in README.md and `wheelcheck --help`).
// The verdict commands' 1, 3 and 4 come from verdict::exit_code.
inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_bad_input = 2;
inline constexpr int k_exit_internal = 70;

}  // namespace wheelcheck
