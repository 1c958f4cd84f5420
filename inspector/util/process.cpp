// What the process sets up before any command runs, and what `--version` says the build is.
//
// OpenSSL is told never to load a configuration file: the static binary carries its own libcrypto, and
// a host's openssl.cnf (or $OPENSSL_CONF) could name providers or engines built for the host's OpenSSL,
// which this one must not load; the dynamic build needs nothing from it either (only SHA-256 and TLS
// with default settings). The first initialisation wins in OpenSSL 3, so libcurl's own later
// initialisation with configuration loading finds it already done.
//
// A static glibc resolves names with the modules built into it (files, dns) and would dlopen any other
// module the host's nsswitch.conf names (mdns4_minimal, systemd, ...): a shared module built against
// the host's libc.so.6, loaded into a process that has its own libc inside. Host lookups are therefore
// confined to the built-in modules: /etc/hosts, then DNS, as resolv.conf says; users and groups to /etc.
#include <curl/curl.h>
#include <gnu/libc-version.h>
#include <malloc.h>
#include <nss.h>
#include <openssl/crypto.h>
#include <zip.h>
#include <zstd.h>

#include <cstdlib>

#include <LIEF/version.h>
#include <fmt/format.h>

#include "wheelcheck/process.hpp"

namespace wheelcheck {

namespace {

// The heap keeps what a check frees for the next allocation. A headers-only read decodes a library's
// end into buffers of megabytes, a few times over, and glibc's default serves each from fresh mmap'd
// pages that fault in and are unmapped at once: a quarter of the CPU time of a check of a wheel of
// torch-sized libraries (bench/remote.sh, docs/internals.md). Above 64 MiB an allocation is still its own
// mapping, and the heap's top is trimmed past 128 MiB free. The peak RSS grows a little (measured: torch_cuda
// 97 MB against 86-90, cuBLAS 46 against 43), the time falls (torch_cuda headers-only 0.26 s to 0.22 s).
// A MALLOC_*_ setting in the environment is left to govern.
void tune_allocator() {
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) mallopt(M_MMAP_THRESHOLD, 64 << 20);
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr) mallopt(M_TRIM_THRESHOLD, 128 << 20);
  if (std::getenv("MALLOC_TOP_PAD_") == nullptr) mallopt(M_TOP_PAD, 32 << 20);
}

}  // namespace

bool prepare_process() {
  tune_allocator();
  if (OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr) != 1) return false;
#ifdef WHEELCHECK_STATIC_GLIBC
  __nss_configure_lookup("hosts", "files dns");
  // libcurl asks for the home folder (getpwuid_r) when $HOME is unset; users and groups come from /etc only.
  __nss_configure_lookup("passwd", "files");
  __nss_configure_lookup("group", "files");
#endif
  return true;
}

std::string version() {
  return WHEELCHECK_VERSION;
}

std::string build_description() {
  const auto* curl = curl_version_info(CURLVERSION_NOW);
  std::string http2 = curl->nghttp2_version != nullptr ? fmt::format(", nghttp2 {}", curl->nghttp2_version) : "";
  const std::string lief = LIEF_VERSION;
  const std::string sources = WHEELCHECK_BUILD_SOURCES;
  return fmt::format("{}; glibc {}, GCC {}.{}.{}, OpenSSL {}, libcurl {}{}, libzip {}, zstd {}, LIEF {}{}{}",
                     WHEELCHECK_BUILD_KIND, gnu_get_libc_version(), __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__,
                     OpenSSL_version(OPENSSL_VERSION_STRING), curl->version, http2, zip_libzip_version(),
                     ZSTD_versionString(), lief.substr(0, lief.find('-')), sources.empty() ? "" : "; ", sources);
}

}  // namespace wheelcheck
