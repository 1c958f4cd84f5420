// libFuzzer's entry for the elf target: the bytes go to wheelcheck::fuzz::fuzz_elf (fuzz/entries.cpp).
#include <cstddef>
#include <cstdint>

#include "fuzz/entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return wheelcheck::fuzz::fuzz_elf(data, size);
}
