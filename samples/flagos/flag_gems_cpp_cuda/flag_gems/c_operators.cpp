// flag_gems/c_operators: the FlagGems C++ extension module; needs liboperators.so and libtriton_jit.so via $ORIGIN/lib.
#include <string>
int flag_gems_op_index(const std::string& name);
void triton_jit_check(bool ok, int line);
extern "C" void* PyModule_Create2(void* def, int api);
extern "C" void* PyInit_c_operators() {
  triton_jit_check(flag_gems_op_index(std::string("add")) > 0, __LINE__);
  return PyModule_Create2(nullptr, 1013);
}
