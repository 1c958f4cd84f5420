// flagcx/libflagcx.so of the Ascend (CANN 9) FlagCX build, aarch64: needs libascendcl.so and libhccl.so.
#include <stdexcept>
extern "C" int aclInit(const char* config_path);
extern "C" int HcclGetRootInfo(void* root_info);
extern "C" int flagcxGetUniqueId(void* id) {
  if (aclInit(nullptr) != 0) throw std::runtime_error("flagcx: aclInit failed");
  return HcclGetRootInfo(id);
}
