// flag_gems/aten_patch: the FlagGems extension that patches aten operators; needs liboperators.so via $ORIGIN/lib.
#include <string>
int flag_gems_op_index(const std::string& name);
extern "C" void* PyModule_Create2(void* def, int api);
extern "C" void* PyInit_aten_patch() {
  return flag_gems_op_index(std::string("mm")) > 0 ? PyModule_Create2(nullptr, 1013) : nullptr;
}
