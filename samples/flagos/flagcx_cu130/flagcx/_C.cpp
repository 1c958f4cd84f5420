// flagcx/_C: FlagCX's torch extension (CUDA 13 build); needs libflagcx.so beside it (RUNPATH $ORIGIN).
extern "C" int flagcxGetDeviceCount(int* count);
extern "C" void* PyModule_Create2(void* def, int api);
extern "C" void* PyInit__C() {
  int n = 0;
  return flagcxGetDeviceCount(&n) == 0 ? PyModule_Create2(nullptr, 1013) : nullptr;
}
