// Small helpers shared by the pipeline stages, one home for each: strings (inspector/util/strings.cpp),
// files (files.cpp), hashing (hash.cpp), a thread pool (parallel.cpp), terminal colour, a streaming JSON
// writer (json_writer.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct stat;

namespace wheelcheck {

// A digest over a stream of chunks (OpenSSL's EVP: SHA-NI where the CPU has it). Algorithms: the ones
// RECORD may name, sha256 (the default), sha384, sha512; throws Error(BadInput) for any other.
class Hasher {
 public:
  explicit Hasher(std::string_view algorithm = "sha256");
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  static bool supported(std::string_view algorithm);
  void update(const void* data, std::size_t size);
  std::vector<std::uint8_t> finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

std::string to_hex(std::span<const std::uint8_t> bytes);
// URL percent escapes decoded ("2.10.0%2Bcu130" -> "2.10.0+cu130"); a '%' not followed by two hex
// digits stays as it is.
std::string percent_decode(std::string_view s);
std::string ascii_lower(std::string_view s);                       // A-Z -> a-z, nothing else (HTTP names, hex, tags)
bool starts_with_ci(std::string_view s, std::string_view prefix);  // ASCII case-insensitive
std::string_view trim(std::string_view s);                         // without leading and trailing ASCII white space
std::string join(const std::vector<std::string>& items, std::string_view sep);
// The parts between any of `separators`; empty parts kept only when asked ("a::b" -> a, "", b).
std::vector<std::string> split(std::string_view s, std::string_view separators, bool keep_empty);
bool is_sha256_hex(std::string_view s);  // 64 lower-case hex digits
// Whether JSON text nests arrays and objects deeper than `limit` (strings skipped; it stops at the first
// level past it): checked before a parser that recurses is given untrusted text.
bool json_deeper_than(std::string_view text, std::size_t limit);
// 1 to 6 decimal digits and nothing else, as a number: tag and version parts ("2_28", "3.12").
std::optional<int> small_number(std::string_view digits);

// Dotted version numbers ("2.38" against "2.4", a driver "580.65.06" against "535.54.03"): compared
// number by number, a missing number counting as 0 ("13" == "13.0"). nullopt unless both are digits and
// single dots. PEP 440 versions (pre-releases, local labels) are wheel::compare_versions.
std::optional<int> compare_dotted(std::string_view a, std::string_view b);
// A total order for sorting: compare_dotted where both parse, else what does not parse first, else text.
bool dotted_less(std::string_view a, std::string_view b);
std::string base64url_nopad(std::span<const std::uint8_t> bytes);
std::string sha256_file_hex(const std::string& path);

// Files.
std::string read_text_file(const std::string& path, std::uint64_t max_size = std::uint64_t{256} << 20);
// Writes a whole file so that it is either the old one or the new one, never half: a temporary file
// beside it ("NAME.tmp.<pid>-<n>", locked while written), every write and the close checked (a full disk
// is an Error(Io) with the reason), then a rename; with `durable`, fsynced before the rename and the
// folder after it. Leftovers of dead processes in that folder are removed first (sweep_temporaries).
void write_file_atomic(const std::string& path, std::string_view content, bool durable = false);
// The same for content made a piece at a time: `produce` calls its argument with each piece. sweep false: the
// caller swept the folder once for the many files it writes there.
void write_file_atomic_with(const std::string& path,
                            const std::function<void(const std::function<void(std::string_view)>&)>& produce,
                            bool durable = false, bool sweep = true);
// The temporary-file name of the calling process for a final name (unique per call).
std::string temporary_name(const std::string& final_name);
// Removes the temporaries (NAME.tmp.<pid>-<n>) of the folder that no process holds: their lock is free
// and their process is gone, or they are older than a day. Once per folder and process; never follows a
// link; errors are ignored (a folder that cannot be swept costs space, never an answer). The _at form is
// for a folder of the cache's own, where the older name NAME.tmp.<pid> is also ours.
void sweep_temporaries(const std::string& dir);
void sweep_temporaries_at(int dir_fd, const std::string& dir_key);
// Why a folder (its fstat) is not private to the user, or "" when it is: it must be owned by the
// effective user and writable by nobody else (group write only when the group is the user's own
// primary group, as umask 002 gives on systems with a group per user).
std::string not_private_reason(const struct ::stat& st);
// An exclusive flock(2) on a file (created if absent), held until destroyed. acquire() waits, calling
// on_wait once first when another process holds it. A transient lock removes its file when released
// (safely: a lock taken on a file since removed is retaken on the new one).
class FileLock {
 public:
  static FileLock acquire(const std::string& path, const std::function<void()>& on_wait = {}, bool transient = false);
  FileLock(FileLock&& other) noexcept
      : m_fd(std::exchange(other.m_fd, -1)), m_path(std::move(other.m_path)), m_transient(other.m_transient) {}
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

 private:
  FileLock(int fd, std::string path, bool transient) : m_fd(fd), m_path(std::move(path)), m_transient(transient) {}
  int m_fd = -1;
  std::string m_path;
  bool m_transient = false;
};
void make_dirs(const std::string& path);
// '/'-separated paths as strings (a zip member, a path inside an image root): "a/b/c" -> "c" and "a/b";
// a name without '/' has the folder ".", and a file at the root has "/".
std::string base_name(std::string_view path);
std::string dir_name(std::string_view path);
std::string join_path(std::string_view dir, std::string_view name);  // no "//" after the root "/"
bool is_dir(const std::string& path);                                // follows symbolic links
bool is_file(const std::string& path);                               // a regular file, following symbolic links
std::string getenv_or(const char* name, const std::string& fallback);

// Untrusted text (a member name, an ELF string) made safe for a terminal or a log: control characters
// (NUL, ESC, newline, ...) and DEL written as \xNN, so a name can neither cut a report short nor rewrite
// the terminal or forge a line. Everything else, UTF-8 included, is kept.
std::string printable(std::string_view text);

// Human sizes: "8G", "512M", "100k", "123" -> bytes. Throws Error(Usage).
std::uint64_t parse_size(std::string_view text);
std::string format_size(std::uint64_t bytes);

// The buffer a reader fills from a stream that should hold `expected` bytes: `cap` bytes, or fewer for a
// short stream (its bytes and one more, so that one read also meets a stream longer than it declares),
// never under 4 KiB (nor over `cap`). Its bytes are left uninitialized: a reader writes each byte it uses
// first. A wheel is mostly small members (torch's 15,000 files); a 1 MiB buffer, zeroed, for each of them
// cost more than reading them, and under AddressSanitizer each fresh large buffer is fresh pages.
class ReadBuffer {
 public:
  ReadBuffer(std::uint64_t expected, std::size_t cap)
      : m_size(expected >= cap ? cap
                               : std::max(std::min<std::size_t>(4096, cap), static_cast<std::size_t>(expected) + 1)),
        m_bytes(new std::byte[m_size]) {}
  std::byte* data() const { return m_bytes.get(); }
  std::size_t size() const { return m_size; }
  std::span<std::byte> span() const { return {m_bytes.get(), m_size}; }

 private:
  std::size_t m_size;
  std::unique_ptr<std::byte[]> m_bytes;
};

// Calls body(index, worker) for every index below count on up to `threads` threads (0: one per CPU;
// worker 0 is the calling thread), handing indices out in order. The first exception stops the hand-out
// and is rethrown once every thread has finished.
unsigned default_threads();
void parallel_for(std::size_t count, unsigned threads, const std::function<void(std::size_t, unsigned)>& body);

// ANSI colour for text meant for a terminal; plain text when off (not a terminal, NO_COLOR, TERM=dumb).
struct Paint {
  bool on = false;
  std::string wrap(std::string_view code, std::string_view s) const {
    return on ? "\033[" + std::string(code) + "m" + std::string(s) + "\033[0m" : std::string(s);
  }
  std::string bold(std::string_view s) const { return wrap("1", s); }
  std::string dim(std::string_view s) const { return wrap("2", s); }
  std::string red(std::string_view s) const { return wrap("31;1", s); }
  std::string green(std::string_view s) const { return wrap("32", s); }
  std::string yellow(std::string_view s) const { return wrap("33", s); }
};

// A streaming JSON writer: constant memory however large the document.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : m_out(out) {}
  // With a sink, the buffer is handed to it (and emptied) whenever it passes about 1 MB.
  JsonWriter(std::string& out, std::function<void(std::string&)> sink) : m_out(out), m_sink(std::move(sink)) {}
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view v);
  JsonWriter& value(const char* v) { return value(std::string_view(v)); }
  JsonWriter& value(const std::string& v) { return value(std::string_view(v)); }
  JsonWriter& value(bool v);
  JsonWriter& value(std::int64_t v);
  JsonWriter& value(std::uint64_t v);
  JsonWriter& value(int v) { return value(static_cast<std::int64_t>(v)); }
  JsonWriter& value(unsigned v) { return value(static_cast<std::uint64_t>(v)); }
  JsonWriter& null();
  template <class T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

 private:
  void separate();
  std::string& m_out;
  std::function<void(std::string&)> m_sink;
  std::vector<bool> m_first;  // one per open container: no element written yet
  bool m_after_key = false;
};
void append_json_string(std::string& out, std::string_view s);

}  // namespace wheelcheck
