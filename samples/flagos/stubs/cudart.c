/* Build-only stand-in for the CUDA runtime (libcudart.so.12 / .13, soname set by the build): two entry points. */
int cudaGetDeviceCount(int* count) {
  *count = 0;
  return 0;
}
int cudaSetDevice(int device) {
  return device < 0;
}
