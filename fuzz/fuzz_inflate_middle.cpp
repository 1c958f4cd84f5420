// libFuzzer's entry for the inflate_middle target: the bytes go to wheelcheck::fuzz::fuzz_inflate_middle
// (fuzz/entries.cpp).
#include <cstddef>
#include <cstdint>

#include "fuzz/entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return wheelcheck::fuzz::fuzz_inflate_middle(data, size);
}
