// libFuzzer's entry for the python target: the bytes go to wheelcheck::fuzz::fuzz_python
// (fuzz/entries_python.cpp).
#include <cstddef>
#include <cstdint>

#include "fuzz/entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return wheelcheck::fuzz::fuzz_python(data, size);
}
