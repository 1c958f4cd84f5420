// Lock files: an environment written down as the files an installer would install. Three formats:
//   - PEP 751's pylock.toml (pylock.toml, pylock.NAME.toml), read with toml++: [[packages]] with name,
//     version, marker, requires-python, index, wheels (each with url or path, hashes, size, name) and sdist;
//   - pip's installation report (`pip install --dry-run --report FILE`, JSON): "install" entries with
//     download_info (url, archive_info.hashes) and metadata (name, version, requires_python);
//   - a pinned requirements file: NAME==VERSION lines with environment markers and --hash options,
//     direct references (NAME @ URL), and the options --index-url/-i, --extra-index-url, --find-links/-f,
//     --no-index, -r/--requirement (nested files) and -c (constraints: ignored, said in a warning).
// Each package says which files it may be installed from; pick_wheel() chooses the one an installer would
// pick for an image (tags, Python, Requires-Python), markers are evaluated for the image (PEP 508).
// Readers: inspector/env/lock.cpp (which format, load, parse), pylock.cpp, pip_report.cpp and
// requirements.cpp (one a format), markers.cpp (PEP 508), pick.cpp (pick_wheel, files_for).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelcheck/image.hpp"
#include "wheelcheck/index.hpp"

namespace wheelcheck {
struct WheelProfile;
}
namespace wheelcheck::variant {
struct File;
}

namespace wheelcheck::lock {

enum class Format { Pylock, PipReport, Requirements };
std::string format_name(Format format);  // "pylock.toml", "pip installation report", "requirements file"

// One distribution file a lock (or an index page) names.
struct File {
  // The wheel's or sdist's file name: pylock `name`, else the URL's or path's last segment, percent-decoded.
  std::string filename;
  std::string url;   // absolute http(s) URL, without a #fragment; "" when the lock gives only a path
  std::string path;  // a local file (pylock `path` resolved against the lock's folder, file:// URLs, a path line)
  std::map<std::string, std::string> hashes;  // algorithm -> lower-case hex ("sha256")
  std::optional<std::uint64_t> size;
  std::optional<std::string> requires_python;  // of this file (an index page's data-requires-python)
  bool yanked = false;
  bool is_wheel() const;       // the file name ends in .whl
  std::string sha256() const;  // hashes["sha256"] or ""
  std::string where() const;   // url, else path
};

struct Package {
  std::string name;       // as the lock writes it
  std::string version;    // the pinned version ("2.10.0+cpu"); "" when the lock pins none
  std::string specifier;  // a requirements line's version specifier as written ("==2.10.0+cpu"); "" otherwise
  std::string marker;     // the PEP 508 environment marker; "" when none
  std::optional<std::string> requires_python;
  std::vector<File> wheels;   // the wheels the lock lists (pylock wheels, a pip report's wheel URL, a direct reference)
  std::optional<File> sdist;  // an sdist the lock lists (pylock sdist, a pip report's non-wheel URL)
  std::string other;          // installed from neither (pylock vcs/directory/archive of a non-wheel): in words
  std::vector<std::string> indexes;     // where its files come from when `wheels` is empty and nothing else
                                        // is listed: pylock `index`; requirements: --index-url (pip's default
                                        // k_default_index when the files name none) then --extra-index-url,
                                        // for every package of the file; none with --no-index
  std::vector<std::string> find_links;  // requirements: --find-links (folders or pages of links); a relative
                                        // folder as pip reads it: beside the requirements file when it is
                                        // there, else as written (from the working folder)
  std::vector<std::string> hashes;  // the sha256 values the lock allows (requirements --hash=sha256:HEX), lower case
  std::string source;               // where it is written, for messages ("pylock.toml:12", "reqs.txt:3")
  bool from_index() const { return wheels.empty() && !sdist && other.empty(); }
};

// pip's default index, which a requirements file without --index-url (and without --no-index) uses.
inline constexpr const char* k_default_index = "https://pypi.org/simple";
// The largest lock file read (load() refuses a larger one before reading it).
inline constexpr std::uint64_t k_max_lock_size = std::uint64_t{64} << 20;

struct Lock {
  Format format = Format::Requirements;
  std::string path;
  std::optional<std::string> requires_python;  // pylock's top-level requires-python
  std::vector<Package> packages;               // in the lock's order
  std::vector<std::string> warnings;           // what was read but not used (constraints, unknown keys)
};

// Whether a command-line argument names a lock file rather than a wheel: pylock.toml, pylock.*.toml, a
// .json file, a .txt or .in file (requirements). A .whl never is. Decided by the name alone (its last
// '/'-separated part, ASCII case-insensitive; a URL's query and fragment are not part of the name).
bool is_lock_path(std::string_view path);
// An sdist's file name as (name, version): NAME-VERSION.tar.gz (or .zip, .tar.bz2, ...), split where the
// name is `project` (normalised, PEP 503) when given, else at the last '-'; nullopt for any other name.
std::optional<std::pair<std::string, std::string>> sdist_name_version(std::string_view filename,
                                                                      std::string_view project = "");
// Reads a lock file; the format is decided by its name and content (a JSON object with "install" is a pip
// report). Throws Error(BadInput) naming FILE[:LINE] for anything malformed, an unpinned requirement, an
// unsupported lock-version, or a file larger than k_max_lock_size (64 MB).
Lock load(const std::string& path);
// The same for text already read; `path` names it in messages, and relative paths (pylock `path`, a
// requirements file's -r) resolve against its folder. A requirements file's -r files are read from disk.
Lock parse(std::string_view text, Format format, const std::string& path);

// PEP 508 environment markers, evaluated for an image's Python (python_version, python_full_version,
// implementation_name, platform_python_implementation, implementation_version, sys_platform,
// platform_system, platform_machine, os_name, platform_release, platform_version, extra), and PEP 751's
// set-valued `extras` and `dependency_groups` ('dev' in dependency_groups). The legacy spellings packaging
// still reads (os.name, sys.platform, platform.machine, python_implementation, ...) are accepted.
struct MarkerEnv {
  std::map<std::string, std::string> values;   // a variable missing here compares as ""
  std::vector<std::string> extras;             // for `extra == "..."` (none: such a clause is false; with
                                               // several, the marker holds when it holds for one, as pip asks)
  std::vector<std::string> dependency_groups;  // PEP 751 `'NAME' in dependency_groups`
  // The wheel variant being installed (PEP 825 draft): `'nvidia' in variant_namespaces`,
  // `'nvidia :: sm_arch' in variant_features`, `'nvidia :: sm_arch :: 90_real' in variant_properties`,
  // `variant_label == 'cuda13.0'`. Empty sets and "" for a plain wheel.
  std::vector<std::string> variant_namespaces, variant_features, variant_properties;
};
// The environment of `python` (null: the image's default) in `image`: CPython on Linux, the image's arch.
MarkerEnv marker_env(const image::Image& image, const image::Python* python);
// The variant markers of a wheel (its label and variant.json's properties for it) set in `env`.
void set_variant(MarkerEnv& env, const WheelProfile& wheel);
// True when the marker holds ("" always holds). Comparisons of a version variable (python_version,
// python_full_version, implementation_version, platform_release) are PEP 440's where both sides parse,
// else string comparison, as packaging does. Throws Error(BadInput) for a malformed marker.
bool evaluate_marker(std::string_view marker, const MarkerEnv& env);
// Throws Error(BadInput) when `marker` is not a PEP 508 marker (what evaluate_marker would refuse to parse).
void check_marker(std::string_view marker);
// A Requires-Dist value as installers read it (PEP 508): NAME [EXTRAS] (SPECIFIER | @ URL) [; MARKER], each part
// checked (the specifier as PEP 440's, the marker as check_marker's). The check's Requires-Dist pins and the
// publisher check (`wheelcheck lint`) read Requires-Dist with it.
struct Requirement {
  std::string text;
  std::string name;         // as written ("torch_npu")
  std::string normalized;   // PEP 503 ("torch-npu")
  std::string specifier;    // "" when none; parentheses removed
  std::string marker;       // "" when none
  bool url = false;         // a direct reference (NAME @ URL)
  bool extra_only = false;  // its marker names an extra: installed only when that extra is asked for
  std::string error;        // why it does not parse ("" when it does)
};
Requirement read_requirement(std::string_view text);
// Whether `version` is in the PEP 440 specifier set `specifiers` (pre-releases admitted, as markers and
// pins ask: "==2.10.0" holds for "2.10.0+cpu", "==2.10.0+cpu" only for that, "===X" is text equality);
// nullopt when either does not parse. wheel::version_in, under the name the lock's readers know.
std::optional<bool> version_satisfies(std::string_view specifiers, std::string_view version);

// The wheel an installer picks for `image` among `files`: those whose file name parses, whose tags the
// image's Python and platform accept and whose Requires-Python (the file's, else the package's) the Python
// satisfies (verdict::check_wheel_tags: a finding of severity Error refuses the wheel; a Condition, an
// image fact left unknown, does not), yanked files last, then as pip's candidate order: the higher
// version, then pip's tag priority for the image's default Python (the interpreter's own cpXY-cpXY,
// cpXY-abi3, cpXY-none, lower abi3; then pyXY/py3-none; then the -any tags; within each, platforms from
// the newest manylinux down, musllinux, linux_<arch>, any), then the higher build tag, then the files'
// order. Where the package lists hashes (requirements --hash) and one of the wheels for the image has a
// listed sha256, wheels of another known sha256 are passed over (pip's filter_unallowed_hashes); where none
// has one, the pick stands and its file fails the lock's hash (the caller says so: an integrity failure).
// Files that are not wheels (an sdist from files_for) are never picked. `file` is null when none
// fits; `why` then says so for people ("3 wheels, none for cuda13.0 (x86_64, CPython 3.12, glibc 2.39):
// built for aarch64 (2 wheels: ...); built for CPython 3.11 (a-1.0-cp311-...whl)", "only an sdist (FILE):
// `--only-binary :all:` refuses it"); it is "" when a file is picked.
//
// Wheel variants (PEP 825 draft; `release` is the release's -variants.json from the index, null when it has
// none): within one version, an installer with variant support prefers the compatible variants in the
// drafts' order (variant::order for the image), then the null variant, then plain wheels; a variant whose
// properties the image does not support is refused, and one whose support waits on a fact the image leaves
// unknown is passed over, its facts in `depends_on`. Without `release`, variant wheels are refused (no
// installer takes them). `without_variants` is what an installer without variant support takes (pip: plain
// wheels only; variant file names are not wheel names to it).
struct Pick {
  const File* file = nullptr;  // points into `files`
  std::string why;
  std::string variant;                  // the picked file's variant label ("" for a plain wheel)
  std::string variant_note;             // how the variant was chosen, in words ("" when no variant was in play)
  std::vector<std::string> depends_on;  // facts the pick waits on (variants whose support is unknown)
  std::vector<std::string> undecided;   // the labels that wait on them
  const File* without_variants = nullptr;
};
Pick pick_wheel(const std::vector<File>& files, const Package& package, const image::Image& image,
                const variant::File* release = nullptr);

// An index page's files as lock files, keeping those of the package's pinned version (its specifier, or
// version: PEP 440 equality, a local label only where the pin has one; all of them when it pins none); the
// package's hashes are pick_wheel's to weigh. The version is read from the file name (a wheel's, or an sdist's
// NAME-VERSION.EXT); files of another project, and files that are neither wheels nor sdists, are left out.
std::vector<File> files_for(const index::ProjectPage& page, const Package& package);
// The release's variants file on an index page (PEP 825 draft: NAME-VERSION-variants.json beside the
// wheels): the one of the package's project and pinned version (PEP 440 equal; the page's first when the
// package pins none). Null when the page links none.
const index::File* variants_file(const index::ProjectPage& page, const Package& package);

}  // namespace wheelcheck::lock
