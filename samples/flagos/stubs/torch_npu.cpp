// Build-only stand-in for torch_npu's libtorch_npu.so (aarch64): one C++ function of its device API.
namespace c10_npu {
signed char current_device() {
  return 0;
}
}  // namespace c10_npu
