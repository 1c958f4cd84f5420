// libFuzzer's entry for the layer target: the bytes go to wheelcheck::fuzz::fuzz_layer
// (fuzz/entries_layer.cpp).
#include <cstddef>
#include <cstdint>

#include "fuzz/entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return wheelcheck::fuzz::fuzz_layer(data, size);
}
