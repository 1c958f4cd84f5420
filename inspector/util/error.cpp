#include <cerrno>
#include <cstring>

#include "wheelcheck/error.hpp"

namespace wheelcheck {

Error bad_input(const std::string& message) {
  return Error(ErrorKind::BadInput, message);
}
Error usage_error(const std::string& message) {
  return Error(ErrorKind::Usage, message);
}
Error io_error(const std::string& message) {
  const int saved = errno;
  return Error(ErrorKind::Io, saved != 0 ? message + ": " + std::strerror(saved) : message);
}

}  // namespace wheelcheck
