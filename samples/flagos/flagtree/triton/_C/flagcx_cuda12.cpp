// triton/_C/libflagcx.so as FlagTree's build copies it: a FlagCX built for CUDA 12 (needs libcudart.so.12).
#include <stdexcept>
extern "C" int cudaGetDeviceCount(int* count);
extern "C" int cudaSetDevice(int device);
extern "C" int flagcxInit(int device) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != 0 || device >= n) throw std::runtime_error("flagcx: no such device");
  return cudaSetDevice(device);
}
