// triton/_C/libtriton.so: FlagTree's compiler core (plain C++, no CUDA).
#include <stdexcept>
#include <string>
int triton_compile(const std::string& ir) {
  if (ir.empty()) throw std::invalid_argument("triton: empty module");
  return static_cast<int>(ir.size());
}
