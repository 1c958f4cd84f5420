// The db's image names that the tests of the db and of `wheelcheck images` both look for: the seven FlagOS
// images and the packaging targets' short names.
#pragma once

namespace wheelcheck::test {

inline constexpr const char* k_flagos[] = {"cuda13.0", "metax-maca3.8", "ascend-cann9", "dcu-dtk26.04",
                                           "gcu-tops", "musa5.1",       "ppu"};
inline constexpr const char* k_targets[] = {"manylinux2014", "manylinux_2_28", "manylinux_2_34", "manylinux_2_39",
                                            "musllinux_1_2"};

}  // namespace wheelcheck::test
