# The fuzz targets' entry points as a library: linked by the libFuzzer executables (fuzz/CMakeLists.txt)
# and by the normal test suite, which replays fuzz/regressions through them (tests/CMakeLists.txt).
if(NOT TARGET wheelcheck_fuzz_entries)
  add_library(wheelcheck_fuzz_entries STATIC ${PROJECT_SOURCE_DIR}/fuzz/entries.cpp
                                             ${PROJECT_SOURCE_DIR}/fuzz/entries_python.cpp
                                             ${PROJECT_SOURCE_DIR}/fuzz/entries_layer.cpp)
  target_include_directories(wheelcheck_fuzz_entries PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(wheelcheck_fuzz_entries PRIVATE ${WHEELCHECK_WARNINGS} ${WHEELCHECK_FUZZ_COMPILE})
  target_link_libraries(wheelcheck_fuzz_entries PUBLIC wheelcheck_core)
endif()
