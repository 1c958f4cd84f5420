// Image descriptions: what a target image (a container image, a packaging target) provides to a wheel's
// native code, each fact with where it came from. The schema is docs/image.schema.json; the loader, the
// checker and `wheelcheck image show` read the same model.
//
// A description may be composed from layers: "layers": ["ubuntu24.04", "cuda13.0-runtime", "python3.12"]
// applies each named description in order, then the file's own facts on top. Facts override; lists of
// libraries, Pythons and distributions merge by key (path, version, name), later layers winning.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "wheelcheck/problem.hpp"

namespace wheelcheck::policy {
class Policies;
}

namespace wheelcheck::image {

inline constexpr std::string_view k_schema = "wheelcheck-image/1";
// The literal a distribution's location may hold in a layer: the image's first site-packages folder.
inline constexpr std::string_view k_site_placeholder = "{site-packages}";

// How a fact is known: read from real files (probed), written by a person from a cited source
// (declared), or computed from other data (derived: a policy file, another fact).
enum class Origin { Declared, Probed, Derived, Assumed };
std::string origin_name(Origin origin);
Origin parse_origin(std::string_view text);  // throws Error(BadInput)

// What a description is: a whole image (listed by `wheelcheck images`), or a layer other descriptions
// name in "layers". Written as "image" and "layer".
enum class ImageKind { Image, Layer };
std::string image_kind_name(ImageKind kind);
ImageKind parse_image_kind(std::string_view text);  // throws Error(BadInput)

// Whether the CI uses an image today (current), or plans to move to it (planned: declared beside today's
// image of its platform, with a note saying what the switch waits on). Written as "current" and "planned".
enum class ImageStatus { Current, Planned };
std::string image_status_name(ImageStatus status);
ImageStatus parse_image_status(std::string_view text);  // throws Error(BadInput)

// The CUDA toolkit or a vendor's: MACA (MetaX), CANN (Ascend), DTK (Hygon), TopsRider (Enflame), MUSA
// (Moore Threads), the PPU SDK (T-Head), Neuware (Cambricon), CoreX (Iluvatar), XRE (Kunlunxin), TangRT
// (Sunrise), TSM (TsingMicro). Written as "cuda", "maca", "cann", "dtk", "tops", "musa", "ppu", "neuware",
// "corex", "xre", "tangrt", "tsm".
enum class ToolkitKind { Cuda, Maca, Cann, Dtk, Tops, Musa, Ppu, Neuware, Corex, Xre, Tangrt, Tsm };
// The vendor a toolkit is made by, for people ("NVIDIA", "Ascend", "Cambricon", ...).
std::string toolkit_vendor(ToolkitKind kind);
std::string toolkit_kind_name(ToolkitKind kind);
ToolkitKind parse_toolkit_kind(std::string_view text);  // throws Error(BadInput)
// The vendor's word for its accelerator, as in "NPU driver": "GPU" (NVIDIA, MetaX, Moore Threads, Iluvatar),
// "NPU" (Ascend), "DCU" (Hygon), "GCU" (Enflame), "PPU" (T-Head), "MLU" (Cambricon), "XPU" (Kunlunxin);
// "accelerator" where the vendor's word is not known here (Sunrise, TsingMicro).
std::string toolkit_device(ToolkitKind kind);

// One fact that may be unknown. An unknown fact has no value and says why.
struct Fact {
  std::optional<std::string> value;
  std::string note;  // how it was found, or why it is unknown
  Origin origin = Origin::Declared;
  std::string layer;  // the description that set it (filled by composition)
  bool set = false;   // the description says something about it (known or unknown)

  bool known() const { return value.has_value(); }
  std::string text() const { return value ? *value : "unknown"; }
  static Fact known_as(std::string value, std::string note, Origin origin);
  static Fact unknown(std::string why, Origin origin = Origin::Declared);
};

// A shared library the image provides: one real file, reachable under one or more names.
struct Library {
  std::string path;                   // canonical image path of the real file; "" when declared without one
  std::vector<std::string> names;     // image paths that reach it in the loader's folders (symlinks, copies)
  std::string soname;                 // DT_SONAME; empty when it has none
  std::string machine;                // elf::machine_name(); empty when declared without it
  int elf_class = 0;                  // 32 or 64; 0 when unknown
  std::vector<std::string> needed;    // DT_NEEDED
  std::vector<std::string> versions;  // version definitions (GLIBC_2.2.5, ...), from the file or a policy
  std::string exports;                // export table reference (relative to the exports folder); "" = none
  std::string exports_file;           // that reference resolved to a file (filled on load, not written)
  std::string exports_unknown;        // why there is no table (declared libraries, too-large files)
  std::string exports_upto;           // a table shared with a newer build: only versions <= this one count
  // exports_file is an earlier build's table, partial for this library (what it lacks is unknown, not
  // absent), and this says whose and why: a declared CUDA runtime given the table of an earlier minor of its
  // major (Db::lend_runtime_tables, not written), or a description's "exports_floor" (Ubuntu 24.04's GCC 14
  // runtime libraries bound against GCC 12's tables: each keeps every symbol version of earlier releases).
  std::string exports_lent;
  // Its own search paths and needs, as its dynamic section says (see DynamicFacts).
  std::vector<std::string> rpath, runpath;  // DT_RPATH, DT_RUNPATH entries, unexpanded ($ORIGIN kept)
  std::uint64_t flags_1 = 0;                // DT_FLAGS_1 (DF_1_NODEFLIB = 0x800)
  std::vector<std::string> version_needs;   // DT_VERNEED, non-weak: "libc.so.6 GLIBC_2.38"
  // The description records the four above (a probe does; "dynamic_recorded" in JSON). Without it they
  // are unknown, not empty: an older or hand-written description, whose libraries are searched without them.
  bool dynamic_recorded = false;
  // Not in the image's files: the container runtime mounts it from the host when the container starts
  // (NVIDIA's libcuda.so.1, Ascend's driver folder); says how. Present at run time, its version the host's.
  std::string host;
  Origin origin = Origin::Declared;
  std::string layer;
};

// A folder the container runtime mounts from the host at run time ("/usr/local/Ascend/driver"): what is
// in it is the host's, not the image's.
struct HostMount {
  std::string path;
  std::string note;
};

// Environment that reaches only bash processes: written to /etc/profile.d and loaded through BASH_ENV
// (FlagOS's runtime images), so a direct `python` or `sh` does not see it. Its LD_LIBRARY_PATH counts for
// the loader as the image's users run it (through bash), and every answer that depends on it says so.
struct BashEnv {
  std::string note;                         // how it is loaded ("BASH_ENV=/etc/bash_env.sh sources ...")
  std::map<std::string, std::string> vars;  // variable -> value
  std::string layer;
};

struct Python {
  std::string version;                     // "3.12"
  std::vector<std::string> abi_tags;       // "cp312", "abi3"; "cp313t" for a free-threaded build
  std::string executable;                  // "" when none was found
  std::vector<std::string> site_packages;  // image paths
  // The interpreter's own dynamic symbols (CPython's C API: the executable exports them, or its
  // libpython), which every extension module it imports binds against first; "" when unknown.
  std::string exports;       // export table reference, as for libraries
  std::string exports_file;  // resolved (not serialized)
  // Without `exports`: a table of the stable ABI symbols this version surely exports (a subset: a symbol
  // it lacks may still be exported); "" when none applies.
  std::string stable_abi;
  std::string stable_abi_file;      // resolved (not serialized)
  std::vector<std::string> needed;  // the executable's DT_NEEDED: loaded into every process it runs
  Origin origin = Origin::Declared;
  std::string layer;
};

// A library a Python distribution ships (torch/lib/libc10.so), relative to the distribution's location.
struct DistLibrary {
  std::string path;  // relative to Distribution::location ("torch/lib/libc10.so")
  std::string soname;
  std::string machine;
  int elf_class = 0;
  std::vector<std::string> needed;
  std::vector<std::string> versions;
  // The versions it needs of other libraries (DT_VERNEED), "libc.so.6 GLIBC_2.38": what decides whether the
  // distribution can be imported in the image at all.
  std::vector<std::string> version_needs;
  std::vector<std::string> rpath, runpath;  // as for Library
  std::uint64_t flags_1 = 0;
  bool dynamic_recorded = false;
  std::string exports;
  std::string exports_file;
  std::string exports_unknown;
};

// Where a distribution's wheel is published, so that its export tables can be read from the very wheel the
// image installs (inspector/env/published.cpp): a package index (PEP 503/691) and a requirement that pins
// one version ("torch==2.10.0+cpu"), the file an installer would pick there for the image's Python and
// platform; or the wheel's URL, with its sha256 when known.
struct Published {
  std::string index;        // "https://download.pytorch.org/whl/cpu"
  std::string requirement;  // "torch==2.10.0+cpu"
  std::string url;          // a wheel's URL (instead of index and requirement)
  std::string sha256;       // with url: the wheel's sha256 (lower-case hex), "" when unknown
  std::string where() const { return !url.empty() ? url : index; }
};

struct Distribution {
  std::string name;      // as METADATA spells it ("torch")
  std::string version;   // "2.10.0+cpu"
  std::string location;  // site-packages folder (image path), or k_site_placeholder in a layer
  std::string python;    // "3.12" when known
  std::vector<DistLibrary> libraries;
  std::string exports_unknown;         // why its libraries have no export tables (a declared distribution)
  std::optional<bool> cxx11_abi;       // built with _GLIBCXX_USE_CXX11_ABI=1 (PyTorch wheels since 2.7), when known
  std::optional<Published> published;  // where its wheel is published (its tables can be read from there)
  std::string note;                    // for people: how it is reached ("/opt/flagtree, on PYTHONPATH under bash")
  // The published wheel its libraries' facts and tables were read from, in words ("" when none was):
  // filled on the fly (not serialized; `image fill` writes a layer that records it in `sources`).
  std::string filled_from;
  Origin origin = Origin::Declared;
  std::string layer;
};

// The CUDA toolkit or a vendor's (MACA, CANN, DTK, TopsRider, MUSA, PPU SDK).
struct Toolkit {
  ToolkitKind kind = ToolkitKind::Cuda;
  Fact version;  // toolkit version ("13.0")
  Fact runtime;  // runtime library version ("13.0.96"), when it differs or is all that is known
  // The toolkit's published minimum driver ("610.43.02" for CUDA 13.3 GA), or why it is unknown. Not the
  // image's driver: that is the host's (Image::driver).
  Fact driver_floor;
  std::vector<std::string> runtime_sonames;  // sonames a wheel built for it needs ("libcudart.so.13")
};

struct CacheEntry {
  std::string soname;
  std::string path;
  std::string arch;  // ldconfig's words: "libc6,x86-64"
};

struct Loader {
  Fact default_dirs_note;                 // how the default folders were chosen
  std::vector<std::string> default_dirs;  // the loader's built-in system folders for this arch
  std::vector<std::string> conf_dirs;     // etc/ld.so.conf and its includes
  std::vector<std::string> conf_files;
  std::string cache_format;       // "new", "old", "compat", "none", "" (not probed)
  std::vector<CacheEntry> cache;  // ld.so.cache entries, in cache order
  std::vector<std::string> ld_library_path;
  // Symbolic links to folders on the paths the loader searches ("/lib" -> "/usr/lib" on a merged /usr), by
  // the link's canonical path: what the kernel follows when a search path climbs with ".." ($ORIGIN/../x
  // from /lib/x86_64-linux-gnu is /usr/lib/x there). A probe records them; empty: paths are taken as written.
  std::map<std::string, std::string> dir_links;
};

// Whether the description lists every library of the image (docs/images.md, "Unknown is not absent"). A
// need that nothing in a complete inventory provides is known absent (an error); in a partial one it is
// only not stated (a condition), unless the image states its absence otherwise (verdict::absence_of).
// Written "inventory": {"complete": true, "note": "...", "absent": ["libtinfo.so.5"]}.
struct Inventory {
  // As written; nullopt: the default, complete for a probed description (what `probe` read is all there
  // is), partial for a declared one. Composition: a description that says nothing is complete only when
  // it is probed and so is everything under it.
  std::optional<bool> stated;
  bool complete = false;  // the answer for this (composed) description: not serialized
  std::string note;       // how it was established, or what it leaves out
  // Sonames the description states are not in the image (the release's archive has no package for them:
  // Ubuntu 24.04 dropped libtinfo5), and those --assume library=!NAME adds. Merged over layers.
  std::vector<std::string> absent;
  std::string layer;  // the description whose statement decides (filled on load, not serialized)
};

struct Image {
  std::string schema{k_schema};
  std::string name;
  std::string summary;
  ImageKind kind = ImageKind::Image;
  ImageStatus status = ImageStatus::Current;
  std::string planned_note;  // a planned image: what the switch to it waits on
  std::string group;         // "flagos", "generated", "target", "" for the user's own
  std::string policy;        // a packaging target: the platform tag whose policy it is ("manylinux_2_17_x86_64")
  Origin origin = Origin::Declared;
  std::string generated_by;  // the committed command that regenerates this file
  std::vector<std::string> sources;
  std::vector<std::string> layers;  // as written; composition applies them
  std::string exports_dir;          // where export references resolve, relative to the file's folder
  std::string file;                 // the file it was loaded from (not serialized)

  Fact arch;
  Fact python;     // a Python version stated without an install's details (or unknown); see pythons
  Fact libc_kind;  // "glibc" or "musl"
  Fact libc_version;
  Fact glibcxx;  // newest GLIBCXX_ version of libstdc++.so.6
  Fact cxxabi;   // newest CXXABI_ version
  Loader loader;
  std::vector<Library> libraries;
  std::vector<Python> pythons;
  std::vector<Distribution> distributions;
  std::optional<Toolkit> toolkit;
  Fact driver;     // GPU driver version
  Fact gpu_archs;  // "sm_90,sm_100" or unknown
  Fact chips;      // the accelerator models as stated ("NVIDIA H20", "Ascend 910B")
  // The x86-64 level of the CPUs it runs on ("x86-64-v3"): a fact of the runner, not of the image's files,
  // so unknown unless stated (--assume isa=x86-64-v3, a description's "assumed" block).
  Fact isa_level;
  std::string release;    // the vendor stack's release the image is built for ("2.2.0")
  std::string image_ref;  // the image's reference ("harbor.baai.ac.cn/flagos-runtime/...:2.2.0")
  // A probe of a container image (`probe docker://...`): the reference as given, the manifest's digest,
  // the platform chosen, the config's digest and User ("from" in JSON; docs/images.md). Empty otherwise.
  struct PulledFrom {
    std::string reference;
    std::string digest;
    std::string platform;
    std::string config;
    std::string user;  // "" = root (the config names none)
    bool empty() const { return digest.empty(); }
  } from;
  std::map<std::string, std::string> env;  // the process environment every process has (Docker ENV)
  BashEnv bash_env;                        // environment only bash processes have (BASH_ENV)
  std::vector<HostMount> host_mounts;
  // LD_LIBRARY_PATH folders that come from bash_env only (filled after composition, not serialized).
  std::vector<std::string> bash_only_dirs;
  std::vector<Problem> findings;  // what a probe could not use
  Inventory inventory;
  // Facts stated for a runner type ("assumed": {"driver": "580.95.05"}): applied when the description is
  // loaded (image::assume), each listed in every answer that uses it.
  std::map<std::string, std::string> assumed;
  std::vector<std::string> assumptions;  // the assumptions applied, in words (not serialized)
  // Wheel variant properties stated for the machine (--assume NS::FEATURE=V1,V2, a user's static list in
  // PEP 850's words): "nvidia::sm_arch" -> its supported values, best first; empty: none (not serialized:
  // the "assumed" block holds them).
  std::map<std::string, std::vector<std::string>> variant_properties;

  // Unknown facts a verdict may depend on, in words: "driver version (not published for the runners)".
  std::vector<std::string> unknowns() const;
  const Distribution* distribution(std::string_view name) const;  // by normalized name
};

// The facts a user may state where a description leaves them unknown (--assume FACT=VALUE, a
// description's "assumed" block): driver, gpu_archs, toolkit_version, runtime (the toolkit's runtime
// library version), libc_version, python, glibcxx, isa (the runner's x86-64 level: isa=x86-64-v3), and library
// (a soname the image has, its exports unknown: library=libgomp.so.1; or has not: library=!libgomp.so.1; a comma
// list states several).
inline constexpr const char* k_assumable_facts =
    "driver, gpu_archs, toolkit_version, runtime, libc_version, python, glibcxx, isa (the runner CPUs' x86-64 "
    "level, x86-64-v1 to x86-64-v4), library (library=libgomp.so.1: "
    "present, exports unknown; library=!libgomp.so.1: absent), and wheel variant properties as "
    "NAMESPACE::FEATURE (nvidia::sm_arch=90_real; none: nothing)";
// Sets the fact (origin assumed) and records the assumption in image.assumptions, naming what the image
// said before; `source` says who states it ("--assume", "the description"). Throws Error(Usage) for a fact
// that cannot be assumed or a value of the wrong form.
void assume(Image& image, const std::string& fact, const std::string& value, const std::string& source);
// The same for FACT=VALUE assignments (the --assume options); Error(Usage) for one without "=".
void assume_all(Image& image, const std::vector<std::string>& assignments, const std::string& source);

// JSON (nlohmann::ordered_json keeps keys in the documented order, so output is deterministic).
// With `provenance`, every fact is written as an object with its origin and the layer that set it (what
// `wheelcheck image show --json` prints for a composed image); without, the compact form files use.
nlohmann::ordered_json to_json(const Image& image, bool provenance = false);
Image from_json(const nlohmann::json& j, std::string_view what);  // throws Error(BadInput) naming `what`
Image load_file(const std::string& path);                         // one file, layers not applied
// The text of a description file; throws Error(BadInput) naming `what` for text that is not JSON or not
// a description.
Image parse_description(std::string_view text, const std::string& what);
void save_file(const Image& image, const std::string& path);  // atomic

// Applies `layer` (already composed) under `image`: what the image states wins.
Image compose(const Image& base, const Image& top);

// The database of descriptions: db/images/*.json (listed), db/layers/*.json (building blocks), and the
// packaging targets, one per policy and architecture of db/policies (auditwheel's data), named by their
// platform tags ("manylinux_2_17_aarch64") and their aliases ("manylinux2014_aarch64"); a name without
// an architecture ("manylinux2014", "manylinux_2_28", "musllinux_1_2") is the x86_64 one.
class Db {
 public:
  // Finds db/: --db, $WHEELCHECK_DB, <exe>/../share/wheelcheck/db, <exe>/../db, the source tree's db/.
  static std::string locate(const std::string& explicit_dir = "");
  explicit Db(std::string dir);
  const std::string& dir() const { return m_dir; }

  std::vector<std::string> image_names() const;       // sorted: the files, then the packaging targets
  std::vector<std::string> file_image_names() const;  // db/images only
  std::vector<std::string> layer_names() const;
  bool has(std::string_view name) const;
  // Loads and composes; throws Error(Usage) for an unknown name (with the close names), Error(BadInput)
  // for a malformed file or a layer cycle.
  Image get(std::string_view name) const;
  // A db name, a description file (layers resolved against the db), composed.
  Image resolve(const std::string& name_or_file) const;
  // db/policies, loaded once; throws Error(BadInput) when it is absent or malformed.
  const policy::Policies& policies() const;
  // The same, or null for a db without db/policies (a user's own); throws when they are malformed.
  const policy::Policies* policies_if_present() const;
  // The packaging target a name stands for ("manylinux2014" -> "manylinux_2_17_x86_64"); "" when none.
  std::string target_tag(std::string_view name) const;

 private:
  Image load_composed(std::string_view name, std::vector<std::string>& stack) const;
  Image compose_layers(Image image, std::vector<std::string>& stack) const;
  void lend_runtime_tables(Image& im) const;
  std::string path_of(std::string_view name) const;  // "" when absent
  std::string m_dir;
  mutable std::shared_ptr<const policy::Policies> m_policies;
};

// Text for people: the description with where each fact came from.
std::string render_text(const Image& image, bool color = false);

}  // namespace wheelcheck::image
