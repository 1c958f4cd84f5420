// flagcx/libflagcx.so of the CUDA 13 FlagCX build: needs libcudart.so.13.
#include <stdexcept>
extern "C" int cudaGetDeviceCount(int* count);
extern "C" int flagcxGetDeviceCount(int* count) {
  if (cudaGetDeviceCount(count) != 0) throw std::runtime_error("flagcx: CUDA runtime error");
  return 0;
}
