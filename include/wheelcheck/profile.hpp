// A wheel's native profile: what `wheelcheck inspect` prints and every later stage (resolve, bind,
// verdict) reads. Computed once per wheel content (sha256) and kept in the profile cache.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelcheck/cuda.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/python.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck {

inline constexpr int k_profile_schema_version = 1;

struct MemberProfile {
  std::string path;
  std::uint64_t size = 0;
  std::optional<elf::Binary> elf;     // absent when `error` says why the ELF could not be read
  std::optional<cuda::Fatbins> cuda;  // the GPU code its fatbins hold (read with the ELF); absent without any
  std::string error;
  // The NumPy C API its code imports, from the module name its compiled-in _import_array() asks for: 2
  // ("numpy._core._multiarray_umath", NumPy 2's headers), 1 ("numpy.core._multiarray_umath" or
  // "numpy.core.multiarray" alone: NumPy 1.x's, which NumPy 2 refuses). Read from the bytes of Python
  // extension modules and of libraries named *python* (libtorch_python.so) in a full read only; absent when
  // not found or not read (headers-only).
  std::optional<int> numpy_c_api;
};

struct WheelProfile {
  int schema_version = k_profile_schema_version;
  wheel::Filename filename;
  std::string sha256;  // hex, of the whole wheel file
  std::uint64_t size = 0;
  wheel::WheelFile wheel_file;
  wheel::Metadata metadata;
  bool record_verified = false;                 // RECORD was present and every check passed
  std::vector<wheel::Problem> record_problems;  // RECORD: unlisted, missing, mismatched files
  std::vector<wheel::Problem> problems;         // the archive and its members: unsafe names, corrupt data
  std::vector<MemberProfile> members;           // the ELF members, in archive order
  std::uint64_t member_count = 0;               // all members, ELF or not
  // Members with GPU device code that is not ELF, by name (.bc LLVM bitcode, .cubin, .ptx, .fatbin): what a
  // compiler links at run time (FlagCX's libflagcx_device.bc), which rules' routes may name.
  std::vector<std::string> device_code;
  // *.dist-info/variant.json as the wheel holds it (a wheel variant's properties, PEP 825 draft; read with
  // variant::parse); "" when it has none.
  std::string variant_json;
  // Its Python sources as read (python.hpp): the native files they load and the modules they import.
  python::Sources python;
  std::string reader;              // "fast" or "lief"
  std::string integrity = "full";  // "full", or "headers-only" (k_integrity_headers)
  std::string source;              // the URL a remote wheel was read from; "" for a file
  bool has_problems() const;
};

struct Progress {
  std::uint64_t bytes_done = 0;
  std::uint64_t bytes_total = 0;
  std::string current;
};

// How much of a wheel is read. Full: every byte of every member (RECORD verified, CRC-32s checked,
// the whole-file sha256). Headers: only what the ELF reader needs from each member (its start and, for
// a large deflate member, its end decoded on its own), plus WHEEL and METADATA; nothing is verified.
enum class Verify { Full, Headers };
inline constexpr const char* k_integrity_full = "full";
inline constexpr const char* k_integrity_headers = "headers-only";

struct InspectOptions {
  elf::ReaderKind reader = elf::ReaderKind::Fast;
  Verify verify = Verify::Full;
  bool verify_record = true;
  unsigned threads = 0;  // 0: one per core
  wheel::ArchiveLimits limits;
  elf::ReaderLimits elf_limits;
  std::function<void(const Progress&)> progress;  // called from worker threads, serialised
  // Verify::Headers on a local path: a wheel smaller than this is read in full instead (integrity "full":
  // it reads and verifies more, and below this size it costs less than the headers-only read's fixed
  // work). 0: never. The command line sets k_read_whole_below; a RandomAccess (a URL) is never read whole.
  std::uint64_t read_whole_below = 0;
  // Read the .py members for the native files they load (python::Sources). A headers-only read that skips
  // them says so (the check then makes it a condition: what they load at import is not known).
  bool python_sources = true;
};
// Measured on the corpus (inspector/profile/inspect.cpp says how).
extern const std::uint64_t k_read_whole_below;

// The rule of a headers-only read: members whose names say that no dynamic loader and no Python importer
// can load them are never opened (inspector/profile/inspect.cpp lists them: Python sources and bytecode,
// C/C++/CUDA sources and headers, text, data and configuration, static archives and objects, and
// everything under .dist-info/). A deny list: a name not on it is opened and its magic read, so a library
// with an unusual name (foo/_C, libx.so.1.2) is never missed. The full read opens every member.
bool never_loaded(std::string_view member_name);

// Reads a wheel (never from the cache). Throws Error(BadInput) when the file is not a readable zip.
WheelProfile inspect_wheel(const std::string& path, const InspectOptions& options = {});
// The same through a RandomAccess (a remote wheel); `filename` is the wheel's file name, `sha256` what
// the index says it is (kept as the profile's, unverified, in headers mode; "" when unknown). Full mode
// through a RandomAccess reads every byte and computes the sha256 itself.
WheelProfile inspect_wheel(std::shared_ptr<const RandomAccess> file, const std::string& filename,
                           const std::string& sha256, const InspectOptions& options = {});

// The profile cache: $WHEELCHECK_CACHE_DIR, else $XDG_CACHE_HOME/wheelcheck, else ~/.cache/wheelcheck.
namespace cache_folder {
class Folder;
}

constexpr std::uint64_t k_default_cache_max_size = std::uint64_t{4} << 30;  // --cache-max-size

// The profile cache (inspector/profile/cache.cpp): entries that prove themselves (kind, key, CRC-64), in a
// folder private to the user, reached without following links, capped in size (least recently used go).
class ProfileCache {
 public:
  // Opens DIR, creating it. Throws Error(Io) when it cannot be used: not writable, not owned by the
  // user, or writable by others (a cache anyone can write could forge verdicts).
  explicit ProfileCache(std::string dir, std::uint64_t max_size = k_default_cache_max_size);
  // $WHEELCHECK_CACHE_DIR, else $XDG_CACHE_HOME/wheelcheck, else $HOME/.cache/wheelcheck, else "" (no cache:
  // never a shared folder such as /tmp).
  static std::string default_dir();
  const std::string& dir() const { return m_dir; }
  // The wheel's sha256 from the stat index, when the file is unchanged since it was hashed (same
  // size, mtime to the nanosecond, inode and device); nullopt otherwise. Never hashes the file.
  std::optional<std::string> known_sha256(const std::string& path) const;
  void remember_sha256(const std::string& path, const std::string& sha256) const;
  std::optional<WheelProfile> load(const std::string& sha256, const std::string& reader) const;
  // The cached JSON rendering (what `inspect --json` prints), checked, and whether the profile had no
  // problems (what decides inspect's exit code), without decoding the profile.
  struct Rendering {
    std::shared_ptr<const void> bytes;  // the cached entry, mapped: json is a view into it
    std::string_view json;
    bool clean = false;
  };
  std::optional<Rendering> load_json(const std::string& sha256, const std::string& reader) const;
  void store(const WheelProfile& profile) const;
  void store_json(const WheelProfile& profile) const;  // the JSON rendering alone (it was a miss)
  // A small text derived from a cached profile and other data that `name` identifies (the policies'
  // digest): read back without decoding the profile; nullopt when absent.
  std::optional<std::string> load_derived(const std::string& sha256, const std::string& reader,
                                          const std::string& name) const;
  void store_derived(const std::string& sha256, const std::string& reader, const std::string& name,
                     std::string_view text) const;
  // DIR/downloads, a real folder of the cache (whole downloads land there while they are checked).
  std::string downloads_dir() const;

 private:
  std::string m_dir;
  std::shared_ptr<const cache_folder::Folder> m_folder;
};

// The cache's key of a profile: its reader ("fast", "lief"), or for a headers-only profile of a URL
// (never hashed: its sha256 is the index's claim) "fast-headers-<digest of the URL>" (headers_key).
std::string cache_key(const WheelProfile& profile);
std::string headers_key(const std::string& reader, const std::string& source);

// inspect with the cache in front: a hit reads no member data.
struct CachedInspect {
  WheelProfile profile;
  bool from_cache = false;
  std::string cache_error = {};  // why the profile could not be cached (the answer stands; empty if it was)
};
CachedInspect inspect_cached(const std::string& path, const InspectOptions& options, const ProfileCache* cache);

// Renderings: JSON for machines (schema in docs/inspect.schema.json), text for people.
std::string profile_to_json(const WheelProfile& profile);
// The same, streamed to a file in pieces of about 1 MB (a torch profile's JSON is tens of MB). `head`, a
// JSON object ({"consistent_with": ...}), puts its members first in the same document.
void write_profile_json(const WheelProfile& profile, std::FILE* out, std::string_view head = {});
std::string profile_to_text(const WheelProfile& profile, bool color);

// The cache's own compact binary form (fast to load: a warm `inspect` must take milliseconds).
std::string serialize_profile(const WheelProfile& profile);
WheelProfile deserialize_profile(std::string_view bytes);  // throws Error(BadInput) when damaged

}  // namespace wheelcheck
