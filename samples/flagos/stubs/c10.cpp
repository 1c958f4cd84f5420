// Build-only stand-in for PyTorch's libc10.so (old C++ ABI): just the two functions libtriton_jit.so links.
#include "c10.h"
#include <stdexcept>
void c10::detail::torchCheckFail(const char*, const char*, unsigned int, const std::string& msg) {
  throw std::runtime_error(msg);
}
c10::MessageLogger::MessageLogger(const char*, int, int severity) : severity_(severity) {}
