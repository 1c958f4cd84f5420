// A folder treated as an image's "/": every path is resolved inside it, as chroot(2) would, so that a
// probe never reads a file of the host. Also the loader's configuration read from such a root:
// etc/ld.so.conf (with its include globs) and etc/ld.so.cache (the old "ld.so-1.7.0" format, the new
// "glibc-ld.so.cache1.1" format, and the two concatenated, as `ldconfig -c compat` writes them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelcheck/problem.hpp"

namespace wheelcheck::probe {

class RootFs {
 public:
  // Throws Error(Usage) when host_root is not a readable directory.
  explicit RootFs(std::string host_root);
  const std::string& host_root() const { return m_root; }

  struct Resolved {
    std::string image_path;  // canonical, absolute, inside the image ("/usr/lib/x86_64-linux-gnu/libc.so.6")
    std::string host_path;   // host_root + image_path: the only path ever opened
    bool escaped = false;    // a relative link climbed above "/": clamped at the root, as chroot does
  };
  // Follows every symlink component inside the root (absolute targets are re-rooted, ".." stops at the
  // root, at most 40 links as the kernel allows). nullopt when a component is missing or the chain loops;
  // loops, escapes and unreadable components are appended to `findings` when it is given.
  std::optional<Resolved> resolve(std::string_view image_path, std::vector<Problem>* findings = nullptr) const;

  enum class Type { Missing, File, Directory, Other };
  Type type(std::string_view image_path) const;  // after resolution; Missing on any failure

  // Reads a regular file. Throws Error(BadInput) naming the image path when it is missing, not a regular
  // file, unreadable, or larger than max_size.
  std::string read_file(std::string_view image_path, std::uint64_t max_size = std::uint64_t{64} << 20) const;
  // Like read_file, for probes that go on: a missing file is nullopt without a finding; one that cannot be
  // read is nullopt and a Problem ("unreadable", "too-large", "symlink-loop", ...) naming the image path.
  std::optional<std::string> try_read_file(std::string_view image_path, std::vector<Problem>& findings,
                                           std::uint64_t max_size = std::uint64_t{64} << 20) const;

  // The entry names of a directory (not "." or ".."), sorted; empty when it is not a directory.
  std::vector<std::string> list_dir(std::string_view image_path) const;

  // Image paths matching an absolute glob (fnmatch rules per component: * ? [...]), sorted. Components
  // without wildcards are taken as they are. Used for `include /etc/ld.so.conf.d/*.conf`.
  std::vector<std::string> glob(std::string_view pattern) const;

 private:
  std::string m_root;  // no trailing slash ("" never: "/" stays "/")
};

// etc/ld.so.conf as ldconfig reads it: one folder per line (the whole line: glibc's ldconfig splits on
// nothing, "/a:/b" is one folder named so), '#' comments, `include GLOB...` (words separated by blanks;
// relative globs are relative to the including file's folder) followed recursively with a depth limit
// and loop detection ("malformed-conf"), `hwcap` lines ignored, a "=libc6"-style type suffix dropped.
// Folders in order of first appearance, without duplicates (the same text, or the same folder reached
// through links), trailing slashes removed; folders that do not exist are kept (ldconfig skips them);
// a relative folder is left out with a "malformed-conf" finding. A missing ld.so.conf gives an empty list.
struct LdSoConf {
  std::vector<std::string> dirs;
  std::vector<std::string> files;  // every conf file read, in order
};
LdSoConf read_ld_so_conf(const RootFs& root, std::vector<Problem>& findings,
                         std::string_view conf_path = "/etc/ld.so.conf");

// One entry of ld.so.cache: what `ldconfig -p` prints as "libz.so.1 (libc6,x86-64) => /lib/.../libz.so.1".
struct CacheEntry {
  std::string soname;  // the key
  std::string path;    // the value: an image path
  std::int32_t flags = 0;
  std::uint64_t hwcap = 0;  // new format only
  std::string arch;         // ldconfig's words for flags: "libc6,x86-64", "libc6,AArch64", "libc6", ...
  std::string hwcaps;       // the glibc-hwcaps subfolder ("x86-64-v3") of an entry that has one, else ""
  bool operator==(const CacheEntry&) const = default;
};
struct LdSoCache {
  std::string format;               // "new", "old", "compat" (old followed by new: the new part is used), "none"
  std::vector<CacheEntry> entries;  // in file order (ldconfig sorts them as the loader searches them)
  std::string generator;            // "ldconfig (Debian GLIBC 2.36-9) stable release version 2.36", if recorded
};
// Parses cache bytes, in either byte order (the new header's flag says which; an old header's is guessed
// from its count). Throws Error(BadInput) with a precise message for a malformed cache (bad magic,
// counts or string offsets out of bounds, unterminated strings); never reads past `bytes`.
LdSoCache parse_ld_so_cache(std::string_view bytes);
// Reads /etc/ld.so.cache from the root; a missing file is format "none"; a malformed one adds a
// "malformed-cache" finding and returns format "none".
LdSoCache read_ld_so_cache(const RootFs& root, std::vector<Problem>& findings,
                           std::string_view cache_path = "/etc/ld.so.cache");
// ldconfig's arch words for an entry's flags ("libc6,x86-64"), as `ldconfig -p` prints them; every ABI
// value glibc defines is named (LoongArch's 0x1100/0x1200 as ",soft-float"/",double-float", which glibc
// 2.36's `ldconfig -p` still prints as ",4352"/",4608"); an unknown one is printed as a number, as there.
std::string cache_flags_name(std::int32_t flags);

}  // namespace wheelcheck::probe
