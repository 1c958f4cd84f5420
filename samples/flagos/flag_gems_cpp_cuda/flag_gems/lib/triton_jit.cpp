// flag_gems/lib/libtriton_jit.so: built against PyTorch 2.6 headers (old ABI); needs c10 symbols 2.10 lacks.
#include "c10.h"
void triton_jit_check(bool ok, int line) {
  c10::MessageLogger logger("triton_jit.cpp", line, 0);
  if (!ok) {
    c10::detail::torchCheckFail(__func__, "triton_jit.cpp", static_cast<unsigned>(line), std::string("launch failed"));
  }
}
