// Internal to inspector/container/: streams, tar, layers and blob sources (include/wheelcheck/container.hpp
// lists the files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/container.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::container::detail {

// --- Streams (streams.cpp) ------------------------------------------------------------------------------

// Bytes read in order; read() returns 0 at the end, throws Error(BadInput) for a malformed stream.
class Stream {
 public:
  virtual ~Stream() = default;
  virtual std::size_t read(char* buf, std::size_t n) = 0;
  // Reads exactly n bytes; false when the stream ends first (after reading what there was).
  bool read_full(char* buf, std::size_t n);
};

// A blob's bytes, checked: the bytes there (`available`: the file's or the archive member's size) must be
// the `size` the manifest declares (else Error(BadInput) at once); their sha256 is checked against `digest`
// ("sha256:HEX"; "" checks nothing, the caller checks another way) at finish(), which reads what the
// consumer left (a tar's padding, a compressed stream's trailer) and throws Error(BadInput) on a mismatch.
class VerifiedFile : public Stream {
 public:
  // `fd` is borrowed; the blob is the file's bytes [offset, offset + size).
  VerifiedFile(int fd, std::uint64_t offset, std::uint64_t available, std::uint64_t size, std::string digest,
               std::string what);
  std::size_t read(char* buf, std::size_t n) override;
  void finish();
  std::uint64_t consumed() const { return m_done; }

 private:
  int m_fd;
  std::uint64_t m_offset;
  std::uint64_t m_size;
  std::string m_digest;
  std::string m_what;
  std::uint64_t m_done = 0;
  Hasher m_hash;
};

// A stream that hashes what passes (the decompressed layer, against the config's diff_id).
class HashingStream : public Stream {
 public:
  explicit HashingStream(Stream& in) : m_in(in) {}
  std::size_t read(char* buf, std::size_t n) override;
  std::uint64_t count() const { return m_count; }
  // Reads to the end, then the "sha256:HEX" of everything.
  std::string finish();

 private:
  Stream& m_in;
  Hasher m_hash;
  std::uint64_t m_count = 0;
};

// The decompressed stream of a layer, by its first bytes: gzip (1f 8b), zstd (28 b5 2f fd), else plain.
// Stops with Error(BadInput) past limits.max_layer bytes, or past limits.max_ratio times the compressed
// bytes once 64 MiB have come out (a decompression bomb). `compressed_count` is what was read from `in`.
std::unique_ptr<Stream> decompressing(Stream& in, const Limits& limits, const std::string& what);

// --- Tar (tar.cpp) --------------------------------------------------------------------------------------

struct TarEntry {
  std::string path;  // as written, pax and GNU long names applied
  char type = '0';   // '0' file, '1' hard link, '2' symlink, '3' char, '4' block, '5' dir, '6' fifo
  std::uint64_t size = 0;
  std::string link;
  std::uint32_t mode = 0644;
  std::uint64_t data_offset = 0;  // where its data starts in the tar
};

// Reads a tar stream entry by entry: ustar, GNU (long names, base-256 sizes) and pax (path, linkpath,
// size) headers; a header whose checksum is wrong, a size past limits.max_member, or an archive that ends
// inside an entry is Error(BadInput) naming `what`.
class TarReader {
 public:
  TarReader(Stream& in, const Limits& limits, std::string what);
  // The next entry (the rest of the previous one's data skipped); false at the end of the archive.
  bool next(TarEntry& entry);
  // The current entry's data, in order; 0 at its end.
  std::size_t read_data(char* buf, std::size_t n);
  const std::string& what() const { return m_what; }

 private:
  void skip(std::uint64_t n);
  std::string read_extension(std::uint64_t size);
  Stream& m_in;
  Limits m_limits;
  std::string m_what;
  std::uint64_t m_left = 0;     // data of the current entry not read yet
  std::uint64_t m_padding = 0;  // after it, to the next 512-byte block
  std::uint64_t m_position = 0;
  std::uint64_t m_entries = 0;
};

// The members of a plain tar file (an archive of an image), by their path without "./": where each one's
// data lies in the file. Error(BadInput) for a malformed archive.
struct Member {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  char type = '0';
  std::string link;
};
std::map<std::string, Member> index_tar_file(int fd, const Limits& limits, const std::string& what);

// A path inside an image, as the runtime reads it: without "./" and leading '/', "." components dropped
// ("" for the root itself); nullopt when a ".." component is in it (a traversal, refused).
std::optional<std::string> clean_image_path(std::string_view path);

// --- Layers (apply.cpp) ---------------------------------------------------------------------------------

// Whether a regular file at this path (clean, no leading '/') is one a probe reads: a shared library, a
// Python interpreter, a distribution's metadata, a Python's os.py, the loader's configuration and cache,
// os-release, the apk database, a CUDA toolkit's version files.
bool kept_file(std::string_view path);

// A root folder the layers are applied to in order, as a runtime applies them: whiteouts (.wh.NAME) delete
// from the layers below, an opaque marker (.wh..wh..opq) empties its folder of what those layers put
// there, a later entry replaces an earlier one, folders' symbolic links are followed inside the root (".."
// stops at its /) and never out of it. Regular files are written only when kept_file() keeps them; every
// folder, symbolic link and hard link is made. A hard link, device, or name that leaves the root is
// Error(BadInput). Nothing is ever written outside the root: every step is openat() with O_NOFOLLOW.
class RootWriter {
 public:
  explicit RootWriter(const std::string& root);
  ~RootWriter();
  RootWriter(const RootWriter&) = delete;
  RootWriter& operator=(const RootWriter&) = delete;
  void apply(TarReader& layer, const Limits& limits, std::vector<std::string>& notes);
  std::uint64_t files_written() const { return m_files; }
  std::uint64_t bytes_written() const { return m_bytes; }

 private:
  struct Parent;
  std::optional<Parent> parent_of(const std::vector<std::string>& parts, bool create, const std::string& what);
  // parent_of, kept for the next entry in the same folder (most of a layer): valid until a link or a folder
  // is made or removed. Null where parent_of is nullopt.
  const Parent* cached_parent(const std::vector<std::string>& parts, bool create, const std::string& what);
  std::unique_ptr<Parent> m_cache;
  std::string m_cache_key;
  bool m_cache_valid = false;
  void remove_at(int dir_fd, const std::string& name);
  void empty_folder(int dir_fd, const std::string& path, const std::set<std::string>& keep);
  int m_root_fd = -1;
  std::string m_root;
  std::uint64_t m_files = 0;
  std::uint64_t m_bytes = 0;
};

// --- Blob sources (sources.cpp, registry.cpp) ------------------------------------------------------------

struct Descriptor {
  std::string media_type;
  std::string digest;  // "sha256:HEX" of the stored bytes ("" for docker-archive's layers)
  std::uint64_t size = 0;
  std::string diff_id;  // the decompressed bytes' digest, where the stored one is unknown (docker-archive)
  std::string path;     // docker-archive: the member holding it
  Platform platform;    // an index's entry
  std::map<std::string, std::string> annotations;
};

// A "sha256:HEX" digest, checked: the algorithm OCI requires every implementation to read, 64 hex digits.
// Throws Error(BadInput) naming `where` for anything else.
std::string checked_digest(const std::string& digest, const std::string& where);
std::string sha256_digest(std::string_view bytes);
// A descriptor of an OCI index or manifest (mediaType, digest, size, platform, annotations), checked.
Descriptor descriptor_of(const nlohmann::json& j, const std::string& where);

// Where an image's blobs come from.
class Source {
 public:
  virtual ~Source() = default;
  // The top of the reference: an index, a manifest (its bytes, checked against a digest the reference
  // names), or docker-archive's own manifest entry.
  struct Top {
    std::string body;
    std::string media_type;
    std::string digest;  // of body ("sha256:...")
  };
  virtual Top top() = 0;
  // A manifest, index or config by descriptor: its bytes, checked against its digest and size.
  virtual std::string small_blob(const Descriptor& d, const std::string& what) = 0;
  // A layer: a stream of its stored bytes, finished (checked) by the caller through VerifiedFile::finish.
  virtual std::unique_ptr<VerifiedFile> layer(const Descriptor& d, const std::string& what) = 0;
  // For a registry: the tag's digest when a conditional request says it has not moved (warm path).
  virtual bool is_archive() const { return false; }
};

std::unique_ptr<Source> open_layout(const Reference& ref, const Limits& limits);
std::unique_ptr<Source> open_oci_archive(const Reference& ref, const Limits& limits);
std::unique_ptr<Source> open_docker_archive(const Reference& ref, const Limits& limits);
// docker-archive's manifest.json implies the manifest: its layers (member path, size, diff_id) and the
// config's size, known after top(); null and 0 for any other source.
const std::vector<Descriptor>* docker_archive_layers(const Source& source);
std::uint64_t docker_archive_config_size(const Source& source);
std::unique_ptr<Source> open_registry(const Reference& ref, const PullOptions& options, const std::string& images);

// The media types read.
inline constexpr const char* k_oci_index = "application/vnd.oci.image.index.v1+json";
inline constexpr const char* k_oci_manifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr const char* k_docker_list = "application/vnd.docker.distribution.manifest.list.v2+json";
inline constexpr const char* k_docker_manifest = "application/vnd.docker.distribution.manifest.v2+json";
// docker-archive's manifest.json entry, as a source's top (not a registry media type).
inline constexpr const char* k_docker_archive_entry = "wheelcheck/docker-archive-entry";
bool is_index_type(std::string_view media_type);
bool is_manifest_type(std::string_view media_type);
// The media type of a JSON document that may not say it (a Docker v2 manifest says; an OCI one may not).
std::string media_type_of(const nlohmann::json& doc, const std::string& declared);
nlohmann::json parse_json_blob(const std::string& body, const std::string& what);
// A member of a JSON object that is a string; "" when absent or not a string (nlohmann's value() trips GCC
// 12's -Wnull-dereference at -O2).
std::string json_text(const nlohmann::json& object, const char* key);

}  // namespace wheelcheck::container::detail
