# The fully static build (scripts/package.sh): every library wheelcheck links comes as a static archive
# from two folders package.sh prepares, never from the host:
#   WHEELCHECK_STATIC_SYSROOT  Debian's -dev packages for the target architecture, unpacked (OpenSSL,
#                              zlib, LIEF with the mbed TLS it needs, gumbo, zstd, sqlite3, fmt, nlohmann-json,
#                              CLI11, toml++)
#   WHEELCHECK_STATIC_PREFIX   what package.sh built from Debian's sources (libzip, ISA-L, libcurl with
#                              nghttp2)
# It defines the same targets the ordinary build gets from pkg-config and find_package, so the rest of
# CMakeLists.txt does not know the difference. fmt is used header-only (Debian ships no libfmt.a).
set(WHEELCHECK_STATIC_SYSROOT "" CACHE PATH "Debian -dev packages unpacked for the target architecture")
set(WHEELCHECK_STATIC_PREFIX "" CACHE PATH "Static libraries built from source for the target architecture")
set(WHEELCHECK_TRIPLET "" CACHE STRING "The target's multiarch triplet (x86_64-linux-gnu, aarch64-linux-gnu)")
foreach(v WHEELCHECK_STATIC_SYSROOT WHEELCHECK_STATIC_PREFIX WHEELCHECK_TRIPLET)
  if(NOT ${v})
    message(FATAL_ERROR "WHEELCHECK_STATIC needs ${v} (scripts/package.sh sets it)")
  endif()
endforeach()
set(_sys_inc ${WHEELCHECK_STATIC_SYSROOT}/usr/include)
set(_sys_lib ${WHEELCHECK_STATIC_SYSROOT}/usr/lib/${WHEELCHECK_TRIPLET})
set(_pre_inc ${WHEELCHECK_STATIC_PREFIX}/include)
set(_pre_lib ${WHEELCHECK_STATIC_PREFIX}/lib)

# wheelcheck_static_library(TARGET ARCHIVE [DEPENDS target...]): an imported static archive whose headers
# are the two include folders (the multiarch one holds opensslconf.h).
function(wheelcheck_static_library target archive)
  cmake_parse_arguments(arg "" "" "DEPENDS" ${ARGN})
  if(NOT EXISTS ${archive})
    message(FATAL_ERROR "${target}: ${archive} is missing (run scripts/package.sh)")
  endif()
  add_library(${target} STATIC IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES IMPORTED_LOCATION ${archive}
    INTERFACE_INCLUDE_DIRECTORIES "${_pre_inc};${_sys_inc};${_sys_inc}/${WHEELCHECK_TRIPLET}"
    INTERFACE_LINK_LIBRARIES "${arg_DEPENDS}")
endfunction()

find_package(Threads REQUIRED)
wheelcheck_static_library(ZLIB::ZLIB ${_sys_lib}/libz.a)
wheelcheck_static_library(OpenSSL::Crypto ${_sys_lib}/libcrypto.a DEPENDS Threads::Threads)
wheelcheck_static_library(OpenSSL::SSL ${_sys_lib}/libssl.a DEPENDS OpenSSL::Crypto)
wheelcheck_static_library(wheelcheck_nghttp2 ${_pre_lib}/libnghttp2.a)
wheelcheck_static_library(PkgConfig::CURL ${_pre_lib}/libcurl.a
  DEPENDS wheelcheck_nghttp2 OpenSSL::SSL ZLIB::ZLIB Threads::Threads)
set_property(TARGET PkgConfig::CURL APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS CURL_STATICLIB)
wheelcheck_static_library(PkgConfig::LIBZIP ${_pre_lib}/libzip.a DEPENDS ZLIB::ZLIB)
wheelcheck_static_library(PkgConfig::ISAL ${_pre_lib}/libisal.a)
wheelcheck_static_library(PkgConfig::GUMBO ${_sys_lib}/libgumbo.a)
wheelcheck_static_library(PkgConfig::ZSTD ${_sys_lib}/libzstd.a)
wheelcheck_static_library(PkgConfig::SQLITE3 ${_sys_lib}/libsqlite3.a DEPENDS Threads::Threads)
wheelcheck_static_library(wheelcheck_mbedcrypto ${_sys_lib}/libmbedcrypto.a)
wheelcheck_static_library(wheelcheck_mbedx509 ${_sys_lib}/libmbedx509.a DEPENDS wheelcheck_mbedcrypto)
wheelcheck_static_library(wheelcheck_lief ${_sys_lib}/libLIEF.a DEPENDS wheelcheck_mbedx509 wheelcheck_mbedcrypto)
set(LIEF_LIBRARY wheelcheck_lief)
set(LIEF_INCLUDE_DIR ${_sys_inc})

foreach(target fmt::fmt nlohmann_json::nlohmann_json CLI11::CLI11)
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${_sys_inc})
endforeach()
set_property(TARGET fmt::fmt PROPERTY INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY=1)
# toml++ (pylock.toml) is header-only too: inspector/env/pylock.cpp defines TOML_HEADER_ONLY.
if(NOT EXISTS ${_sys_inc}/toml++/toml.h)
  message(FATAL_ERROR "toml++: ${_sys_inc}/toml++/toml.h is missing (libtomlplusplus-dev; run scripts/package.sh)")
endif()
set(TOMLPP_INCLUDE_DIR ${_sys_inc})
