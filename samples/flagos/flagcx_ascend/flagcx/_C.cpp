// flagcx/_C: FlagCX's torch extension (Ascend, aarch64); needs libflagcx.so beside it and libtorch_npu.so.
extern "C" int flagcxGetUniqueId(void* id);
namespace c10_npu {
signed char current_device();
}
extern "C" void* PyModule_Create2(void* def, int api);
extern "C" void* PyInit__C() {
  char id[128];
  return c10_npu::current_device() >= 0 && flagcxGetUniqueId(id) == 0 ? PyModule_Create2(nullptr, 1013) : nullptr;
}
