// libFuzzer's entry for the demangle target: the bytes go to wheelcheck::fuzz::fuzz_demangle (fuzz/entries.cpp).
#include <cstddef>
#include <cstdint>

#include "fuzz/entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return wheelcheck::fuzz::fuzz_demangle(data, size);
}
