// Container images read without running them (docs/images.md): a reference (a registry's image, an OCI
// image layout, an OCI or `docker save` archive) becomes a root folder in the cache holding what a probe
// reads (probes/probe.cpp), laid out from the image's layers as a container runtime applies them, and the
// facts of the image's config (Env, User). `probe REF` and `--image REF` probe that folder.
//
//   inspector/container/reference.cpp   references and platforms, parsed
//   inspector/container/tar.cpp         tar headers (ustar, GNU, pax), read from a stream or indexed in a file
//   inspector/container/streams.cpp     byte streams: a file's bytes, gzip (ISA-L), zstd, plain; hashed
//   inspector/container/apply.cpp       a layer applied to a root: whiteouts, opaque folders, links, kept files
//   inspector/container/sources.cpp     where blobs come from: a layout, an archive, a registry
//   inspector/container/registry.cpp    the registry's HTTP API v2: manifests, blobs, credentials, tokens
//   inspector/container/pull.cpp        a reference to a verified root, cached by digest
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelcheck::container {

// --- References ---------------------------------------------------------------------------------------

enum class Transport { Registry, OciLayout, OciArchive, DockerArchive };

struct Reference {
  Transport transport = Transport::Registry;
  std::string text;  // as given
  // Registry: docker://HOST[:PORT]/REPO[:TAG][@sha256:HEX]; Docker Hub's short names as docker expands them.
  std::string registry;    // "registry-1.docker.io" for Docker Hub
  std::string repository;  // "library/debian"
  std::string tag;         // "" when only a digest names it; Registry without either: "latest"
  std::string digest;      // "sha256:HEX" or ""
  // The others: the file or folder, and the tag (OCI: the ref.name annotation; docker-archive: REPO:TAG).
  std::string path;
  std::string what() const;  // the reference for messages (credentials never appear in one)
};

// Whether `text` names an image by transport ("docker://", "oci:", "oci-archive:", "docker-archive:").
bool is_reference(std::string_view text);
// Throws Error(Usage) saying what a well-formed reference looks like.
Reference parse_reference(std::string_view text);

// An image index's platform: os/architecture[/variant], as OCI names them ("linux/arm64/v8").
struct Platform {
  std::string os = "linux";
  std::string architecture;
  std::string variant;
  std::string str() const;
  bool empty() const { return architecture.empty(); }
};
// "linux/amd64", "arm64" (linux assumed), "linux/arm/v7"; throws Error(Usage).
Platform parse_platform(std::string_view text);
// The OCI architecture of an ELF machine name (elf::machine_name: "x86_64" -> amd64, "aarch64" -> arm64);
// nullopt for one OCI does not name.
std::optional<Platform> platform_of_machine(std::string_view machine);
// This machine's.
Platform host_platform();

// --- Pulling --------------------------------------------------------------------------------------------

struct Limits {
  std::uint64_t max_manifest = std::uint64_t{4} << 20;  // a manifest, index or config (the registry's own cap)
  std::uint64_t max_member = std::uint64_t{16} << 30;   // one file in a layer
  std::uint64_t max_layer = std::uint64_t{64} << 30;    // one layer, decompressed
  std::uint64_t max_ratio = 1000;                       // decompressed to compressed, past 64 MiB: a bomb
  std::uint64_t max_entries = 2'000'000;                // entries of one layer
  int max_layers = 256;
};

struct PullOptions {
  std::string cache_dir;                   // the profile cache's folder; images go to <cache_dir>/images
  std::optional<Platform> platform;        // --platform
  std::optional<Platform> wheel_platform;  // the wheels' (check): an index picks it when --platform is not given
  Limits limits;
  long low_speed_time_s = 30;  // a registry that stalls this long fails (--low-speed-time)
  long max_redirects = 10;     // --max-redirects
  int retries = 2;             // --retries: of a request after a timeout or a server error
  long connect_timeout_s = 15;
  std::string ca_file;   // extra CA bundle (a registry with a private CA)
  bool offline = false;  // WHEELCHECK_OFFLINE: a registry reference is served from the cache only
  std::function<void(const std::string&)> progress;
};

struct PulledImage {
  std::string root;       // the folder the probe reads (in the cache; never written to after the pull)
  std::string reference;  // as given
  std::string digest;     // the manifest's ("sha256:..."); docker-archive: the config's, its image ID
  std::string config_digest;
  Platform platform;
  std::string platform_note;  // how it was chosen: "--platform", "the wheel's architecture", "the only one", ...
  std::map<std::string, std::string> env;  // the config's Env
  std::string user;                        // the config's User ("" = root)
  bool cached = false;                     // the root was in the cache (no layer read)
  std::vector<std::string> notes;          // what a person should know (a hard link whose target was not kept)
};

// The image's root, pulled into the cache unless it is there already. Throws Error(BadInput) for an
// image that cannot be read, lies about a digest or size, or holds a hostile layer; Error(Usage) for a
// reference that names nothing (no such tag); Error(Io) when the cache cannot be written.
PulledImage pull(const Reference& ref, const PullOptions& options);

// The cache folder's images part, and whether a path lies inside it.
std::string images_dir(const std::string& cache_dir);

}  // namespace wheelcheck::container
