// Wheels: the file name grammar (PEP 427 and the binary distribution format spec), PEP 440 versions and
// specifiers (inspector/wheel/version.cpp), what the parts of a tag say (inspector/wheel/tags.cpp), the
// .dist-info files (WHEEL, METADATA, RECORD), and the zip container read with libzip under limits.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelcheck/bytes.hpp"
#include "wheelcheck/problem.hpp"

namespace wheelcheck::wheel {

struct Tag {
  std::string python;    // cp312, py3
  std::string abi;       // cp312, abi3, none
  std::string platform;  // manylinux_2_28_x86_64, linux_x86_64, any
  bool operator==(const Tag&) const = default;
};

// name-version(-build)?-python-abi-platform(-label)?.whl, with compressed tag sets expanded. The label is a
// wheel variant's (PEP 825 draft: ^[0-9a-z_.]+$; "null" is the variant with no properties): a six-part name
// is a build tag when its third part starts with a digit (a Python tag never does), else a label.
struct Filename {
  std::string filename;
  std::string name;     // as written (underscores), see normalized_name()
  std::string version;  // "2.10.0+cu130": %2B decoded
  std::optional<std::string> build;
  std::vector<Tag> tags;
  std::optional<std::string> variant;   // the variant label ("cuda13.0", "null"); none for a plain wheel
  std::string normalized_name() const;  // PEP 503: lower case, runs of -_. become -
};
Filename parse_filename(std::string_view filename);  // throws Error(BadInput)
// The file name a wheel should have (PEP 427, the binary distribution format's escaping: runs of -_. in the
// name become _, - in the version becomes _), with its tags compressed where they are one product
// (cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64); throws Error(BadInput) when a part is empty.
std::string canonical_filename(std::string_view name, std::string_view version, const std::optional<std::string>& build,
                               const std::vector<std::string>& tags,
                               const std::optional<std::string>& variant = std::nullopt);
// Whether `label` is a variant label (PEP 825: one or more of [0-9a-z_.]).
bool valid_variant_label(std::string_view label);
std::string normalize_project_name(std::string_view name);  // PEP 503

// ---------------------------------------------------------------------------------------------------
// PEP 440 versions and specifiers (inspector/wheel/version.cpp), read as pip's vendored packaging reads
// them, with its normalisations ("v" prefix, case, "-"/"_"/"." separators, alpha/beta/c/pre/preview,
// rev/r, the implicit post release "1.0-1").

struct Version {
  std::uint64_t epoch = 0;
  std::vector<std::uint64_t> release;
  std::optional<std::pair<int, std::uint64_t>> pre;  // 0 a, 1 b, 2 rc
  std::optional<std::uint64_t> post;
  std::optional<std::uint64_t> dev;
  std::vector<std::string> local;  // lower case

  bool is_prerelease() const { return pre.has_value() || dev.has_value(); }
  Version public_version() const {
    Version v = *this;
    v.local.clear();
    return v;
  }
  Version base_version() const {
    Version v;
    v.epoch = epoch;
    v.release = release;
    return v;
  }
};
// nullopt when `text` (white space around it aside) is not a valid version.
std::optional<Version> parse_version(std::string_view text);
// packaging's order: <0, 0, >0.
int compare(const Version& a, const Version& b);
// PEP 440 order of two versions: <0, 0, >0; nullopt when either is not a valid version.
std::optional<int> compare_versions(std::string_view a, std::string_view b);

// One clause of a specifier set: ">=3.10", "==3.12.*", "~=3.11", "===foo".
struct Specifier {
  std::string op;  // ==, !=, <=, >=, <, >, ~=, ===
  Version version;
  bool wildcard = false;  // ==X.Y.* / !=X.Y.*
  std::string arbitrary;  // the text of an === clause, lower case
};
// Comma-separated clauses (empty ones dropped, as packaging does); nullopt when any clause is invalid.
std::optional<std::vector<Specifier>> parse_specifier_set(std::string_view text);

// PEP 440 specifier sets against a Python version ("3.12" or "3.12.4"): ">=3.10,<3.14", "~=3.11",
// "==3.12.*", "!=3.13.0". The Python is compared as pip compares sys.version_info[:3]: major.minor.micro,
// any suffix dropped, a missing micro counting as 0. nullopt when either cannot be parsed.
std::optional<bool> python_satisfies(std::string_view specifiers, std::string_view python_version);
// Whether the version `version` is in the specifier set `specifiers`, pre-releases admitted (as PEP 508
// markers ask, packaging's contains(version, prereleases=True), and a lock's pins): the whole version is
// compared, its local label ignored unless a clause has one ("==2.10.0" holds for "2.10.0+cpu",
// "==2.10.0+cpu" only for that), and "===X" is text equality (ASCII case-insensitive). nullopt when the
// set does not parse, or when the version does not and a clause other than === needs it.
std::optional<bool> version_in(std::string_view specifiers, std::string_view version);

// ---------------------------------------------------------------------------------------------------
// What the parts of a tag say (inspector/wheel/tags.cpp), as packaging.tags spells them.

std::string tag_text(const Tag& tag);  // "cp312-cp312-manylinux_2_28_x86_64"

// A Python tag: "cp312" -> {cp, 3, 12}; "py3" -> {py, 3, -1}; "pp310" -> {pp, 3, 10}.
struct Interpreter {
  std::string impl;
  int major = -1;
  int minor = -1;
  bool valid = false;
};
Interpreter parse_interpreter(std::string_view python_tag);

// A platform tag: "any"; manylinux_A_B_<arch> and the legacy aliases manylinux1 (= 2_5), manylinux2010
// (= 2_12) and manylinux2014 (= 2_17), with the glibc floor A.B; musllinux_A_B_<arch> with the musl floor;
// linux_<arch> (a local build); the tags of other operating systems (macOS, Windows, ...); else Unknown.
struct Platform {
  enum class Kind { Any, Manylinux, Musllinux, Linux, Foreign, Unknown };
  Kind kind = Kind::Unknown;
  std::vector<std::uint64_t> floor;  // the libc floor of manylinux / musllinux
  std::string policy;                // "manylinux_2_28", "manylinux2014 = manylinux_2_17", "musllinux_1_2"
  std::string arch;
  std::string os;  // for a foreign tag: "macOS", "Windows", ...
};
Platform parse_platform(std::string_view platform_tag);

// Machine names of platform tags (uname -m) as elf::machine_name writes them: "amd64" -> "x86_64",
// "armv7l" -> "armhf", "i386" -> "i686", ...
std::string normalize_arch(std::string_view arch);
// Whether a platform tag's arch is the image's (mips64 stands for either byte order, as uname -m says).
bool arch_matches(std::string_view tag_arch, std::string_view image_arch);
// The platform tag spelling of an image arch ("armhf" -> "armv7l").
std::string tag_arch_of(std::string_view image_arch);

// RFC 822 style header block: "Key: value" lines, continuation lines, then an optional body.
using HeaderFields = std::multimap<std::string, std::string>;
HeaderFields parse_headers(std::string_view text);

struct WheelFile {  // .dist-info/WHEEL
  std::string wheel_version;
  std::string generator;
  std::optional<bool> root_is_purelib;
  std::vector<std::string> tags;
  std::optional<std::string> build;
};
WheelFile parse_wheel_file(std::string_view text);

// What an installer's reading of METADATA loses or doubts (email headers, as pip and packaging read them: the
// first blank line ends the headers, everything after it is the description).
struct MetadataIssue {
  enum class Kind {
    AfterHeaders,  // "after-headers": a known field written after the blank line that ends the headers
    Duplicate,     // "duplicate": a field that may appear once, written more than once
  };
  Kind kind = Kind::AfterHeaders;
  std::string field;         // as written the first time ("Requires-Dist")
  std::size_t line = 0;      // 1-based line of its first such occurrence
  std::size_t count = 0;     // how many lines
  std::size_t end_line = 0;  // AfterHeaders: the blank line that ended the headers
};
std::string metadata_issue_name(MetadataIssue::Kind kind);  // "after-headers", "duplicate"
// In words: "80 Requires-Dist lines (from line 13) after the blank line 12 that ends the headers: installers
// read them as the description and ignore them"; "Version written 2 times (line 3 first): ...".
std::string metadata_issue_text(const MetadataIssue& issue);

struct Metadata {  // .dist-info/METADATA
  std::string metadata_version;
  std::string name;
  std::string version;
  std::vector<std::string> requires_dist;
  std::optional<std::string> requires_python;
  std::vector<MetadataIssue> issues;  // in the order found
};
// The fields of the core metadata specification (lower case), and those of them that may appear once.
bool metadata_field_known(std::string_view lower_name);
bool metadata_field_single(std::string_view lower_name);
Metadata parse_metadata(std::string_view text);

struct RecordEntry {
  std::string path;
  std::string algorithm;  // sha256; empty for RECORD itself
  std::string digest;     // urlsafe base64 without padding, as written
  std::optional<std::uint64_t> size;
};
// RECORD is CSV (RFC 4180 quoting). Throws Error(BadInput) for a malformed line.
std::vector<RecordEntry> parse_record(std::string_view text);

// A problem found in the archive or its RECORD (see wheelcheck/problem.hpp).
using Problem = wheelcheck::Problem;

struct ArchiveLimits {
  std::uint64_t max_member_size = std::uint64_t{8} << 30;  // uncompressed, one member
  std::uint64_t max_total_size = std::uint64_t{32} << 30;  // uncompressed, all members together
  std::uint64_t max_members = 200000;
  std::uint64_t max_metadata_size = std::uint64_t{64} << 20;  // WHEEL, METADATA, RECORD each
  // Uncompressed / compressed, for members over 16 MiB: real libraries compress 2-5 times, a zip bomb of
  // zeros about 1000 times (deflate's ceiling is 1032).
  std::uint64_t max_ratio = 100;
};

struct MemberInfo {
  std::uint64_t index = 0;
  std::string name;
  std::uint64_t size = 0;             // uncompressed, as declared
  std::uint64_t compressed_size = 0;  // as declared
  std::uint16_t method = 0;           // 0 stored, 8 deflate, ...
  std::uint32_t crc = 0;
  bool encrypted = false;
  bool directory = false;
  bool symlink = false;  // unix mode S_IFLNK in the external attributes
  bool refused = false;  // never read: encrypted, a link, or over a limit (problems() says which)
};

// Random access to one member's uncompressed bytes, for a headers-only read that must not inflate a
// whole 1 GB member to learn what its first and last few MB say. Deflate members are served from a
// forward inflate of their start (kept in memory up to a limit) or from their end decoded on its own
// (inspector/wheel/deflate_tail.cpp) or from a piece of their middle decoded on its own and placed by
// content the headers predict (inspector/wheel/deflate_middle.cpp); stored members are read where they lie. Nothing
// here checks the CRC-32 (the whole member is never read): callers say so (integrity "headers-only").
class MemberReader {
 public:
  virtual ~MemberReader() = default;
  // Fills `out` with the member's bytes at [offset, offset + out.size()). Throws Error(BadInput) for
  // corrupt data or a range outside the member.
  virtual void read(std::uint64_t offset, std::span<std::byte> out) = 0;
  // Uncompressed bytes inflated so far from the member's start, and the compressed bytes of its end
  // that were decoded on their own (for benchmarks and tests).
  virtual std::uint64_t inflated_from_start() const = 0;
  virtual std::uint64_t tail_bytes() const = 0;
  // Compressed bytes decoded to reach the member's middle (deflate_middle.cpp), and how many such pieces
  // were placed by the hints' content.
  virtual std::uint64_t middle_bytes() const { return 0; }
  virtual std::uint64_t middle_pieces() const { return 0; }
  // Whether hints help this reader (a large deflate member), and the hints themselves: content the
  // file's headers predict (bytes.hpp), so that a read in the middle can be placed without inflating
  // up to it. A reader may ignore them; reads answer the same bytes either way.
  virtual bool takes_hints() const { return false; }
  virtual void expect(const ContentHint& /*hint*/) {}
};

// A read-only wheel. Not thread safe: each thread opens its own (cheap: the central directory only).
class ZipArchive {
 public:
  static std::unique_ptr<ZipArchive> open(const std::string& path, const ArchiveLimits& limits = {});
  // The same through a RandomAccess (a remote wheel read in byte ranges); `name` is for messages.
  // `every_local_header`: compare every member's local header with the central directory at open
  // (inspector/wheel/zip_check.cpp; a path always does). A headers-only read passes false: for a wheel of
  // 1,900 Python files it is 1,900 reads spread over the whole file, for members that are never read;
  // each member's local header is then checked when the member is first read.
  static std::unique_ptr<ZipArchive> open(std::shared_ptr<const RandomAccess> file, const ArchiveLimits& limits = {},
                                          bool every_local_header = true);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  const std::vector<MemberInfo>& members() const { return m_members; }
  const std::string& path() const { return m_path; }
  // Problems found in the central directory: unsafe names, duplicates, encrypted members, symbolic links,
  // members over a limit (size, compression ratio), local headers that disagree with it (header-mismatch)
  // and members sharing bytes (overlapping-members). A damaged end record or directory throws instead.
  const std::vector<Problem>& problems() const { return m_problems; }
  std::optional<std::uint64_t> find(std::string_view name) const;
  // A forward stream of the member's uncompressed bytes. Inflates raw deflate data with ISA-L (other
  // methods through libzip), checks the CRC-32 at the end, and stops with Error(BadInput) as soon as the
  // output passes the declared size or the limits: a member cannot make us inflate more than it says.
  std::unique_ptr<ByteStream> open_member(std::uint64_t index) const;
  // A whole small member (WHEEL, METADATA, RECORD), at most limits.max_metadata_size.
  std::string read_small(std::uint64_t index) const;
  // Random access to one member (see MemberReader). The archive must outlive the reader.
  std::unique_ptr<MemberReader> random_member(std::uint64_t index) const;
  // Advice for a wheel opened through a RandomAccess: these members will be read from their start. Their
  // local headers and first `head` compressed bytes go to RandomAccess::prefetch at once (remotely: one
  // request per run of nearby members, not one per member). Nothing for a path, or when the central
  // directory cannot be walked (the reads then come one by one, as they would anyway).
  void prefetch_heads(std::span<const std::uint64_t> indices, std::uint64_t head) const;

 private:
  ZipArchive() = default;
  struct Handle;
  static std::unique_ptr<ZipArchive> open_handle(std::unique_ptr<ZipArchive> a, int code);
  std::unique_ptr<Handle> m_handle;
  std::shared_ptr<const RandomAccess> m_file;  // set when opened through a RandomAccess
  std::string m_path;
  ArchiveLimits m_limits;
  std::vector<MemberInfo> m_members;
  std::vector<Problem> m_problems;
};

// Checks a member name for the traps of path traversal: absolute, "..", backslashes, NUL, drive letters.
std::optional<std::string> unsafe_member_name(std::string_view name);

}  // namespace wheelcheck::wheel
