// Stage 6 of the probe, the C and C++ runtimes: which C library the root's loader brings and its
// version, and the newest versions libstdc++ defines. glibc's version is the newest GLIBC_ version
// definition of the libc.so.6 the loader would load; musl records its version in no file of its own, so
// it is the apk database's (Alpine), else unknown; GLIBCXX_ and CXXABI_ are the newest definitions of
// libstdc++.so.6.
#include <optional>

#include "probes/detail.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::probe {

using image::Fact;
using image::Origin;

namespace {

// The newest PREFIX<number> among version definitions ("GLIBC_" -> "2.36").
std::optional<std::string> newest(const std::vector<std::string>& versions, std::string_view prefix) {
  std::optional<std::string> best;
  for (const auto& v : versions) {
    if (v.size() <= prefix.size() || v.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string number = v.substr(prefix.size());
    if (!compare_dotted(number, number)) continue;  // digits and dots only
    if (!best || dotted_less(*best, number)) best = number;
  }
  return best;
}

// musl's version from the apk database (/lib/apk/db/installed): the V: line of the package P:musl.
std::optional<std::string> apk_musl_version(const RootFs& root) {
  try {
    const std::string db = root.read_file("/lib/apk/db/installed", std::uint64_t{64} << 20);
    const auto pos = db.find("\nP:musl\n");
    const auto start = db.rfind("P:musl\n", 0) == 0 ? 0 : (pos == std::string::npos ? std::string::npos : pos + 1);
    if (start == std::string::npos) return std::nullopt;
    const auto v = db.find("\nV:", start);
    if (v == std::string::npos) return std::nullopt;
    std::string ver = db.substr(v + 3, db.find('\n', v + 3) - (v + 3));
    if (auto dash = ver.find("-r"); dash != std::string::npos) ver.resize(dash);
    return ver;
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

void derive_c_runtime(const RootFs& root, const Interpreter& interp, const SystemLookup& system, image::Image& im) {
  if (interp.musl) {
    im.libc_kind = Fact::known_as("musl", "program interpreter " + interp.path, Origin::Probed);
    const std::optional<std::string> version = apk_musl_version(root);
    im.libc_version = version
                          ? Fact::known_as(*version, "package musl in /lib/apk/db/installed", Origin::Probed)
                          : Fact::unknown("musl does not record its version in its files, and no apk database says it",
                                          Origin::Probed);
  } else if (const image::Library* libc = system.find("libc.so.6")) {
    im.libc_kind = Fact::known_as("glibc", libc->path, Origin::Probed);
    if (auto v = newest(libc->versions, "GLIBC_")) {
      im.libc_version = Fact::known_as(*v, "newest GLIBC_ version definition of " + libc->path, Origin::Probed);
    } else {
      im.libc_version = Fact::unknown(libc->path + " defines no GLIBC_ versions", Origin::Probed);
    }
  } else {
    im.libc_kind = Fact::unknown("no libc.so.6 or musl loader found in the loader's folders", Origin::Probed);
    im.libc_version = Fact::unknown("no C library found", Origin::Probed);
  }
  if (const image::Library* cxx = system.find("libstdc++.so.6")) {
    if (auto v = newest(cxx->versions, "GLIBCXX_")) {
      im.glibcxx = Fact::known_as(*v, "newest GLIBCXX_ version definition of " + cxx->path, Origin::Probed);
    }
    if (auto v = newest(cxx->versions, "CXXABI_")) {
      im.cxxabi = Fact::known_as(*v, "newest CXXABI_ version definition of " + cxx->path, Origin::Probed);
    }
  } else {
    im.glibcxx = Fact::unknown("no libstdc++.so.6 in the loader's folders", Origin::Probed);
  }
}

}  // namespace wheelcheck::probe
