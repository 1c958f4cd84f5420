// The two c10 declarations of PyTorch 2.6's headers that libtriton_jit.so uses (compiled with the old C++ ABI).
#pragma once
#include <string>
namespace c10 {
namespace detail {
[[noreturn]] void torchCheckFail(const char* func, const char* file, unsigned int line, const std::string& msg);
}  // namespace detail
class MessageLogger {  // 2.6: MessageLogger(const char*, int, int); 2.14: MessageLogger(SourceLocation, int, bool)
 public:
  MessageLogger(const char* file, int line, int severity);

 private:
  int severity_;
};
}  // namespace c10
