// Lock files: the three formats an environment is written down in, read into one model (lock.hpp).
//
//   pylock.toml (PEP 751), read with toml++ (header-only, exceptions on). The top level's lock-version
//     ("1.0": a newer major is refused, a newer minor read with a warning), requires-python and
//     [[packages]]: name, version, marker (checked as PEP 508), requires-python, index, wheels (name, url or
//     path, size, hashes), sdist, and vcs / directory / archive (installed from neither a wheel nor an
//     sdist: `other`, in words; an archive whose file is a .whl is a wheel). A file's name is its `name`,
//     else its URL's or path's last segment, percent-decoded; a relative path resolves against the lock's
//     folder. Every field is type-checked and an error names FILE:LINE (toml++'s source regions). Before
//     toml++ sees the text, the depth of its dotted keys is bounded (toml_key_depth below): toml++ bounds
//     nested arrays and inline tables itself (TOML_MAX_NESTED_VALUES), but a key of 300,000 dotted parts
//     overflows its recursion.
//   pip's installation report (`pip install --dry-run --report`, JSON with nlohmann): "version" "1" and an
//     "install" list; each entry's download_info (url, archive_info's hashes or hash, dir_info, vcs_info),
//     metadata (name, version, requires_python) and is_yanked. pip evaluated the markers already. Nesting
//     is bounded before nlohmann builds the tree.
//   a requirements file, read as pip's req_file.py reads it: lines joined at a trailing backslash (a
//     comment line ends the run), comments (a '#' at the start or after white space) dropped, then each
//     line split at its first word that starts with '-' into the requirement and its options (shlex
//     quoting). Requirements: NAME[extras] ==VERSION ; marker, NAME @ URL, a wheel's or an sdist's path or
//     URL, with --hash per line; only an exact ==/=== pin counts as a lock's. Options of the file:
//     -i/--index-url, --extra-index-url, -f/--find-links and --no-index (for every package of the files
//     read, as pip makes them global), -r/--requirement (a nested file, relative to the one naming it; a
//     cycle is an error), -c/--constraint (a warning), -e/--editable (installed from neither), and the
//     ones that change nothing here (--pre, --only-binary, ...: a warning). ${VAR} is left as written,
//     with a warning.
//
// Whatever the input, an error is an Error(BadInput) naming where; untrusted text in a message is made
// printable and cut short, and warnings are bounded.
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "wheelcheck/error.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::lock {

bool File::is_wheel() const {
  return filename.size() > 4 && ascii_lower(std::string_view(filename).substr(filename.size() - 4)) == ".whl";
}

std::string File::sha256() const {
  auto it = hashes.find("sha256");
  return it == hashes.end() ? "" : it->second;
}

std::string File::where() const {
  return url.empty() ? path : url;
}

std::string format_name(Format format) {
  switch (format) {
    case Format::Pylock: return "pylock.toml";
    case Format::PipReport: return "pip installation report";
    case Format::Requirements: return "requirements file";
  }
  return "lock";
}

namespace {

constexpr std::size_t k_max_warnings = 100;           // then one line counting the rest
constexpr std::size_t k_max_toml_key_depth = 128;     // dotted key parts and inline tables, one path
constexpr std::size_t k_max_toml_tables = 1'000'000;  // tables and arrays in all (a big lock has 100,000)
constexpr std::size_t k_max_json_depth = 64;          // a report is 5 deep
constexpr std::size_t k_max_include_depth = 32;       // -r within -r
constexpr std::size_t k_shown = 200;                  // how much untrusted text a message quotes
constexpr std::uint64_t k_understood_lock_major = 1;
constexpr std::uint64_t k_understood_lock_minor = 0;

// Untrusted text for a message: printable, at most k_shown characters.
std::string shown(std::string_view s) {
  if (s.size() <= k_shown) return printable(s);
  return printable(s.substr(0, k_shown)) + "...";
}

class Warnings {
 public:
  explicit Warnings(std::vector<std::string>& out) : m_out(out) {}
  void add(std::string message) {
    if (m_out.size() < k_max_warnings) {
      m_out.push_back(std::move(message));
    } else {
      ++m_dropped;
    }
  }
  void finish() {
    if (m_dropped > 0) m_out.push_back(std::to_string(m_dropped) + " more warnings not shown");
  }

 private:
  std::vector<std::string>& m_out;
  std::size_t m_dropped = 0;
};

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && ascii_lower(s.substr(s.size() - suffix.size())) == suffix;
}

// ---------------------------------------------------------------------------------------------------
// Where files are: URLs, paths, their names

bool is_http_url(std::string_view s) {
  return starts_with_ci(s, "http://") || starts_with_ci(s, "https://");
}

// "git+https://...", "https://...", "file:///...": a scheme and "://".
bool has_scheme(std::string_view s) {
  const auto colon = s.find("://");
  if (colon == std::string_view::npos || colon == 0) return false;
  return std::all_of(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' || c == '-' ||
           c == '.';
  });
}

// "URL#frag" -> ("URL", "frag").
std::pair<std::string, std::string> split_fragment(std::string_view url) {
  const auto hash = url.find('#');
  if (hash == std::string_view::npos) return {std::string(url), ""};
  return {std::string(url.substr(0, hash)), std::string(url.substr(hash + 1))};
}

// The last '/'-separated segment of a URL (without its query) or path, percent-decoded for a URL.
std::string last_segment(std::string_view location, bool url) {
  if (url) location = location.substr(0, location.find_first_of("?#"));
  while (!location.empty() && location.back() == '/') location.remove_suffix(1);
  const auto slash = location.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? location : location.substr(slash + 1);
  return url ? percent_decode(last) : std::string(last);
}

// file:///abs/path, file://localhost/abs/path -> /abs/path; nullopt for anything else.
std::optional<std::string> file_url_path(std::string_view url) {
  if (!starts_with_ci(url, "file://")) return std::nullopt;
  std::string_view rest = url.substr(7);
  rest = rest.substr(0, rest.find_first_of("?#"));
  if (starts_with_ci(rest, "localhost/")) rest.remove_prefix(9);
  if (rest.empty() || rest.front() != '/') return std::nullopt;
  return percent_decode(rest);
}

// A path relative to a file's folder ("" or "." for the working directory).
std::string resolve_path(const std::string& folder, std::string_view path) {
  if (path.empty() || path.front() == '/' || folder.empty() || folder == ".") return std::string(path);
  while (path.size() > 2 && path.substr(0, 2) == "./") path.remove_prefix(2);
  return join_path(folder, path);
}

std::string folder_of(const std::string& file) {
  return file.find('/') == std::string::npos ? std::string(".") : dir_name(file);
}

// The archive formats of sdists (and of the legacy ones pip still reads).
constexpr const char* k_sdist_extensions[] = {".tar.gz", ".tar.bz2", ".tar.xz", ".tar.lz", ".tar.lzma", ".tgz",
                                              ".tbz",    ".txz",     ".tlz",    ".zip",    ".tar"};

std::optional<std::string_view> sdist_stem(std::string_view filename) {
  for (const char* ext : k_sdist_extensions) {
    const std::string_view e(ext);
    if (filename.size() > e.size() && ends_with_ci(filename, e)) return filename.substr(0, filename.size() - e.size());
  }
  return std::nullopt;
}

// "sha256=HEX" (a URL fragment, pip's archive_info.hash) into `hashes`; false when it is not one.
bool add_hash_text(std::string_view text, std::map<std::string, std::string>& hashes) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  const std::string algorithm = ascii_lower(text.substr(0, eq));
  const std::string value = ascii_lower(text.substr(eq + 1));
  if (!Hasher::supported(algorithm) && algorithm != "md5" && algorithm != "sha1" && algorithm != "sha224") {
    return false;
  }
  if (algorithm == "sha256" && !is_sha256_hex(value)) return false;
  hashes[algorithm] = value;
  return true;
}

// A File at a URL or path as a lock writes it: http(s) URLs keep their URL (without the fragment, whose
// "sha256=HEX" is a hash), file:// URLs and paths become paths (relative ones against `folder`).
File file_at(std::string_view location, const std::string& folder) {
  File f;
  auto [base, fragment] = split_fragment(location);
  if (auto p = file_url_path(base)) {
    f.path = *p;
    f.filename = last_segment(f.path, false);
  } else if (has_scheme(base)) {
    f.url = base;
    f.filename = last_segment(base, true);
  } else {
    f.path = resolve_path(folder, base);
    f.filename = last_segment(base, false);
  }
  for (const auto& part : split(fragment, "&", false)) add_hash_text(part, f.hashes);
  return f;
}

// ---------------------------------------------------------------------------------------------------
// pylock.toml

// How deep one path of tables a TOML text can build: dotted key parts in headers and keys, plus the inline
// tables and arrays open around them; and how many tables and arrays it makes in all (each costs toml++
// about a hundred bytes: a 64 MB text of "{}," would ask for gigabytes). Strings and comments are skipped;
// dots in values (floats, times) do not count.
void toml_key_depth(std::string_view text, const std::string& path) {
  struct Frame {
    bool inline_table = false;  // else an array
    std::size_t key_dots = 0;   // dotted parts of the key being written in this inline table
  };
  std::vector<Frame> frames;    // open inline tables and arrays
  std::size_t header_dots = 0;  // of the last [table] header
  std::size_t top_key_dots = 0;
  bool key_position = true;  // reading a key (line start, after '{' or ',' in an inline table)
  bool in_header = false;
  bool line_start = true;
  std::size_t line = 1;
  std::size_t containers = 0;
  auto count = [&]() {
    if (++containers > k_max_toml_tables) {
      throw bad_input(path + ":" + std::to_string(line) + ": more than " + std::to_string(k_max_toml_tables) +
                      " tables and arrays");
    }
  };
  auto depth = [&]() {
    std::size_t d = header_dots + top_key_dots;
    for (const auto& f : frames) d += f.key_dots + 1;
    return d;
  };
  auto fail = [&]() {
    throw bad_input(path + ":" + std::to_string(line) + ": keys and inline tables nested deeper than " +
                    std::to_string(k_max_toml_key_depth));
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      if (frames.empty()) {
        key_position = true;
        top_key_dots = 0;
        in_header = false;
        line_start = true;
      }
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      const bool basic = c == '"';
      const std::string_view triple = basic ? "\"\"\"" : "'''";
      if (text.substr(i, 3) == triple) {
        std::size_t j = i + 3;
        while (j < text.size()) {
          if (basic && text[j] == '\\') {
            if (j + 1 < text.size() && text[j + 1] == '\n') ++line;
            j += 2;
            continue;
          }
          if (text[j] == '\n') ++line;
          if (text.substr(j, 3) == triple) {
            j += 3;
            for (int extra = 0; extra < 2 && j < text.size() && text[j] == c; ++extra) ++j;
            break;
          }
          ++j;
        }
        i = j;
      } else {
        std::size_t j = i + 1;
        while (j < text.size() && text[j] != c && text[j] != '\n') j += basic && text[j] == '\\' ? 2 : 1;
        i = j < text.size() && text[j] == c ? j + 1 : j;
      }
      line_start = false;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (line_start && frames.empty() && c == '[') {
      in_header = true;
      header_dots = 0;
      count();
    } else if (in_header) {
      if (c == '.' && ++header_dots > k_max_toml_key_depth) fail();
      if (c == ']') key_position = false;
    } else if (key_position) {
      if (c == '.') {
        if (frames.empty()) {
          ++top_key_dots;
        } else {
          ++frames.back().key_dots;
        }
        if (depth() > k_max_toml_key_depth) fail();
      } else if (c == '=') {
        key_position = false;
      } else if (c == '}' && !frames.empty()) {  // an empty inline table
        frames.pop_back();
        key_position = false;
      }
    } else if (c == '{' || c == '[') {
      count();
      frames.push_back(Frame{c == '{', 0});
      key_position = c == '{';
      if (depth() > k_max_toml_key_depth) fail();
    } else if ((c == '}' || c == ']') && !frames.empty()) {
      frames.pop_back();
    } else if (c == ',' && !frames.empty()) {
      frames.back().key_dots = 0;
      key_position = frames.back().inline_table;
    }
    line_start = false;
    ++i;
  }
}

class PylockReader {
 public:
  PylockReader(const std::string& path, Lock& lock)
      : m_path(path), m_folder(folder_of(path)), m_lock(lock), m_warnings(lock.warnings) {}

  void read(std::string_view text) {
    toml_key_depth(text, m_path);
    toml::table root;
    try {
      root = toml::parse(text, std::string_view(m_path));
    } catch (const toml::parse_error& e) {
      const auto line = e.source().begin.line;
      throw bad_input(m_path + (line > 0 ? ":" + std::to_string(line) : std::string()) +
                      ": not valid TOML: " + shown(e.description()));
    }
    read_version(root);
    if (auto rp = string_of(root, "requires-python", "requires-python")) m_lock.requires_python = *rp;
    const toml::node* packages = root.get("packages");
    if (packages == nullptr) throw bad_input(m_path + ": no [[packages]]: not a pylock.toml (PEP 751)");
    const toml::array* list = packages->as_array();
    if (list == nullptr) fail(*packages, "packages must be an array of tables ([[packages]])");
    for (std::size_t i = 0; i < list->size(); ++i) {
      const toml::node& n = *list->get(i);
      const std::string what = "packages[" + std::to_string(i) + "]";
      const toml::table* t = n.as_table();
      if (t == nullptr) fail(n, what + " must be a table");
      m_lock.packages.push_back(read_package(*t, what));
    }
    static const char* const known[] = {"lock-version", "environments",      "requires-python",
                                        "extras",       "dependency-groups", "default-groups",
                                        "created-by",   "packages",          "tool"};
    warn_unknown(root, known, "");
    m_warnings.finish();
  }

 private:
  std::string at(const toml::node& n) const {
    const auto line = n.source().begin.line;
    return line > 0 ? m_path + ":" + std::to_string(line) : m_path;
  }

  [[noreturn]] void fail(const toml::node& n, const std::string& what) const { throw bad_input(at(n) + ": " + what); }

  void read_version(const toml::table& root) {
    const toml::node* n = root.get("lock-version");
    if (n == nullptr) throw bad_input(m_path + ": no lock-version: not a pylock.toml (PEP 751)");
    const auto* s = n->as_string();
    if (s == nullptr) fail(*n, "lock-version must be a string (\"1.0\")");
    const std::string& text = s->get();
    const auto parts = split(text, ".", true);
    const auto major = parts.size() == 2 ? small_number(parts[0]) : std::nullopt;
    const auto minor = parts.size() == 2 ? small_number(parts[1]) : std::nullopt;
    if (!major || !minor) fail(*n, "lock-version '" + shown(text) + "' is not MAJOR.MINOR");
    const auto ma = static_cast<std::uint64_t>(*major), mi = static_cast<std::uint64_t>(*minor);
    if (ma != k_understood_lock_major) {
      fail(*n, "lock-version " + shown(text) + " is not one wheelcheck reads (it reads " +
                   std::to_string(k_understood_lock_major) + "." + std::to_string(k_understood_lock_minor) +
                   (ma > k_understood_lock_major ? "; a newer major version may change what every key means)" : ")"));
    }
    if (mi > k_understood_lock_minor) {
      m_warnings.add(at(*n) + ": lock-version " + shown(text) + " is newer than the " +
                     std::to_string(k_understood_lock_major) + "." + std::to_string(k_understood_lock_minor) +
                     " wheelcheck reads: keys it does not know are ignored");
    }
  }

  template <std::size_t N>
  void warn_unknown(const toml::table& t, const char* const (&known)[N], const std::string& what) {
    for (const auto& [key, value] : t) {
      const std::string_view k = key.str();
      if (std::none_of(std::begin(known), std::end(known), [&](const char* s) { return k == s; })) {
        m_warnings.add(at(value) + ": " + (what.empty() ? "" : what + ".") + shown(k) +
                       " is not a key wheelcheck reads");
      }
    }
  }

  std::optional<std::string> string_of(const toml::table& t, std::string_view key, const std::string& what) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return std::nullopt;
    const auto* s = n->as_string();
    if (s == nullptr) fail(*n, what + " must be a string");
    return s->get();
  }

  const toml::table* table_of(const toml::table& t, std::string_view key, const std::string& what) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return nullptr;
    const toml::table* tab = n->as_table();
    if (tab == nullptr) fail(*n, what + " must be a table");
    return tab;
  }

  void check_marker_at(const toml::node& n, const std::string& marker, const std::string& what) const {
    try {
      check_marker(marker);
    } catch (const Error& e) {
      fail(n, what + ": " + e.what());
    }
  }

  // A wheel, an sdist or an archive: name, url, path, size, hashes (upload-time and subdirectory read,
  // not used).
  File read_file(const toml::table& t, const std::string& what) {
    File f;
    const auto url = string_of(t, "url", what + ".url");
    const auto path = string_of(t, "path", what + ".path");
    if (url) {
      f = file_at(*url, m_folder);
    } else if (path) {
      f.path = resolve_path(m_folder, *path);
      f.filename = last_segment(*path, false);
    } else {
      fail(t, what + " has neither url nor path");
    }
    if (url && path && f.path.empty()) f.path = resolve_path(m_folder, *path);
    if (auto name = string_of(t, "name", what + ".name")) f.filename = *name;
    if (f.filename.empty()) fail(t, what + ": no file name in its url or path, and no name");
    if (const toml::node* n = t.get("size")) {
      const auto* i = n->as_integer();
      if (i == nullptr || i->get() < 0) fail(*n, what + ".size must be a non-negative integer");
      f.size = static_cast<std::uint64_t>(i->get());
    }
    if (const toml::table* hashes = table_of(t, "hashes", what + ".hashes")) {
      for (const auto& [key, value] : *hashes) {
        const std::string algorithm = ascii_lower(key.str());
        const auto* s = value.as_string();
        if (s == nullptr) fail(value, what + ".hashes." + shown(algorithm) + " must be a string");
        const std::string hex = ascii_lower(s->get());
        if (algorithm == "sha256" && !is_sha256_hex(hex)) {
          fail(value, what + ".hashes.sha256 '" + shown(hex) + "' is not 64 hex digits");
        }
        f.hashes[algorithm] = hex;
      }
    }
    static const char* const known[] = {"name", "url", "path", "size", "hashes", "upload-time", "subdirectory"};
    warn_unknown(t, known, what);
    return f;
  }

  Package read_package(const toml::table& t, const std::string& what) {
    Package p;
    p.source = at(t);
    const auto name = string_of(t, "name", what + ".name");
    if (!name || name->empty()) fail(t, what + " has no name");
    p.name = *name;
    const std::string named = what + " (" + shown(p.name) + ")";
    if (auto v = string_of(t, "version", named + ".version")) p.version = *v;
    if (auto m = string_of(t, "marker", named + ".marker")) {
      check_marker_at(*t.get("marker"), *m, named + ".marker");
      p.marker = *m;
    }
    if (auto rp = string_of(t, "requires-python", named + ".requires-python")) p.requires_python = *rp;
    if (auto index = string_of(t, "index", named + ".index")) p.indexes.push_back(*index);
    if (const toml::node* n = t.get("wheels")) {
      const toml::array* wheels = n->as_array();
      if (wheels == nullptr) fail(*n, named + ".wheels must be an array of tables");
      for (std::size_t i = 0; i < wheels->size(); ++i) {
        const toml::node& w = *wheels->get(i);
        const std::string wwhat = named + ".wheels[" + std::to_string(i) + "]";
        if (w.as_table() == nullptr) fail(w, wwhat + " must be a table");
        p.wheels.push_back(read_file(*w.as_table(), wwhat));
      }
    }
    if (const toml::table* sdist = table_of(t, "sdist", named + ".sdist"))
      p.sdist = read_file(*sdist, named + ".sdist");
    if (const toml::table* archive = table_of(t, "archive", named + ".archive")) {
      File f = read_file(*archive, named + ".archive");
      if (f.is_wheel()) {
        p.wheels.push_back(std::move(f));
      } else {
        p.other = "an archive (" + shown(f.where()) + ")";
      }
    }
    if (const toml::table* vcs = table_of(t, "vcs", named + ".vcs")) {
      const auto type = string_of(*vcs, "type", named + ".vcs.type");
      const auto url = string_of(*vcs, "url", named + ".vcs.url");
      const auto path = string_of(*vcs, "path", named + ".vcs.path");
      const auto commit = string_of(*vcs, "commit-id", named + ".vcs.commit-id");
      p.other = "a " + shown(type.value_or("vcs")) + " checkout of " +
                shown(url ? *url : resolve_path(m_folder, path.value_or("?"))) +
                (commit ? " at " + shown(*commit) : std::string());
    }
    if (const toml::table* dir = table_of(t, "directory", named + ".directory")) {
      const auto path = string_of(*dir, "path", named + ".directory.path");
      const toml::node* editable = dir->get("editable");
      const bool is_editable = editable != nullptr && editable->value_or(false);
      p.other = std::string(is_editable ? "an editable install of" : "a") + " local directory (" +
                shown(resolve_path(m_folder, path.value_or("?"))) + ")";
    }
    static const char* const known[] = {
        "name", "version",   "marker",       "requires-python",        "index", "wheels",     "sdist", "archive",
        "vcs",  "directory", "dependencies", "attestation-identities", "tool",  "upload-time"};
    warn_unknown(t, known, named);
    return p;
  }

  const std::string& m_path;
  std::string m_folder;
  Lock& m_lock;
  Warnings m_warnings;
};

// ---------------------------------------------------------------------------------------------------
// pip's installation report

using Json = nlohmann::json;

void check_json_depth(std::string_view body, const std::string& path) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > k_max_json_depth) {
        throw bad_input(path + ": JSON nested deeper than " + std::to_string(k_max_json_depth) +
                        ": not a pip installation report");
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

const Json* member(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::optional<std::string> json_string(const Json& object, const char* key, const std::string& what) {
  const Json* v = member(object, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) throw bad_input(what + "." + key + " must be a string");
  return v->get<std::string>();
}

const Json* json_object(const Json& object, const char* key, const std::string& what) {
  const Json* v = member(object, key);
  if (v == nullptr) return nullptr;
  if (!v->is_object()) throw bad_input(what + "." + key + " must be an object");
  return v;
}

Package read_install(const Json& item, const std::string& what, const std::string& folder) {
  if (!item.is_object()) throw bad_input(what + " must be an object");
  Package p;
  p.source = what;
  const Json* metadata = json_object(item, "metadata", what);
  if (metadata == nullptr) throw bad_input(what + " has no metadata");
  const auto name = json_string(*metadata, "name", what + ".metadata");
  if (!name || name->empty()) throw bad_input(what + ".metadata has no name");
  p.name = *name;
  const std::string named = what + " (" + shown(p.name) + ")";
  p.source = named;
  p.version = json_string(*metadata, "version", named + ".metadata").value_or("");
  p.requires_python = json_string(*metadata, "requires_python", named + ".metadata");
  const Json* info = json_object(item, "download_info", named);
  if (info == nullptr) throw bad_input(named + " has no download_info");
  const auto url = json_string(*info, "url", named + ".download_info");
  if (!url || url->empty()) throw bad_input(named + ".download_info has no url");
  File f = file_at(*url, folder);
  if (const Json* archive = json_object(*info, "archive_info", named + ".download_info")) {
    if (const Json* hashes = json_object(*archive, "hashes", named + ".download_info.archive_info")) {
      for (const auto& [algorithm, value] : hashes->items()) {
        if (!value.is_string()) throw bad_input(named + ".download_info.archive_info.hashes values must be strings");
        const std::string alg = ascii_lower(algorithm), hex = ascii_lower(value.get<std::string>());
        if (alg == "sha256" && !is_sha256_hex(hex)) {
          throw bad_input(named + ": sha256 '" + shown(hex) + "' is not 64 hex digits");
        }
        f.hashes[alg] = hex;
      }
    }
    if (auto hash = json_string(*archive, "hash", named + ".download_info.archive_info")) {
      if (!add_hash_text(*hash, f.hashes)) {
        throw bad_input(named + ": archive_info.hash '" + shown(*hash) + "' is not ALGORITHM=HEX");
      }
    }
  }
  if (const Json* yanked = member(item, "is_yanked")) {
    if (!yanked->is_boolean()) throw bad_input(named + ".is_yanked must be true or false");
    f.yanked = yanked->get<bool>();
  }
  if (const Json* dir = json_object(*info, "dir_info", named + ".download_info")) {
    const Json* editable = member(*dir, "editable");
    const bool is_editable = editable != nullptr && editable->is_boolean() && editable->get<bool>();
    p.other = std::string(is_editable ? "an editable install of" : "a") + " local directory (" + shown(f.where()) + ")";
  } else if (const Json* vcs = json_object(*info, "vcs_info", named + ".download_info")) {
    const auto kind = json_string(*vcs, "vcs", named + ".download_info.vcs_info");
    const auto commit = json_string(*vcs, "commit_id", named + ".download_info.vcs_info");
    p.other = "a " + shown(kind.value_or("vcs")) + " checkout of " + shown(f.where()) +
              (commit ? " at " + shown(*commit) : std::string());
  } else if (f.is_wheel()) {
    p.wheels.push_back(std::move(f));
  } else {
    p.sdist = std::move(f);
  }
  return p;
}

void read_report(std::string_view text, const std::string& path, Lock& lock) {
  check_json_depth(text, path);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    throw bad_input(path + ": not JSON: " + shown(e.what()));
  }
  if (!j.is_object() || !j.contains("install") || !j["install"].is_array()) {
    throw bad_input(path +
                    " is not a pip installation report (pip install --dry-run --report FILE): no \"install\" list");
  }
  if (const Json* version = member(j, "version")) {
    if (!version->is_string()) throw bad_input(path + ": version must be a string (\"1\")");
    const std::string v = version->get<std::string>();
    const std::string major = v.substr(0, v.find('.'));
    if (major != "1") {
      throw bad_input(path + ": installation report version " + shown(v) + " is not one wheelcheck reads (it reads 1)");
    }
  }
  Warnings warnings(lock.warnings);
  const std::string folder = folder_of(path);
  const Json& install = j["install"];
  for (std::size_t i = 0; i < install.size(); ++i) {
    lock.packages.push_back(read_install(install[i], path + ": install[" + std::to_string(i) + "]", folder));
  }
  if (const Json* env = json_object(j, "environment", path)) {
    std::vector<std::string> facts;
    for (const char* key : {"python_full_version", "platform_machine", "sys_platform"}) {
      if (const Json* v = member(*env, key); v != nullptr && v->is_string()) {
        facts.push_back(std::string(key) + " " + shown(v->get<std::string>()));
      }
    }
    if (!facts.empty()) {
      warnings.add(path + ": pip resolved this report for " + join(facts, ", ") +
                   ": its markers were evaluated there, not for the image");
    }
  }
  warnings.finish();
}

// ---------------------------------------------------------------------------------------------------
// Requirements files

struct Line {
  std::size_t number = 0;
  std::string text;
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

// pip's COMMENT_RE, (^|\s+)#.*$: where the comment starts (with the white space before it), or npos.
std::size_t comment_start(std::string_view line) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '#') continue;
    if (i == 0) return 0;
    if (!is_space(line[i - 1])) continue;
    std::size_t s = i;
    while (s > 0 && is_space(line[s - 1])) --s;
    return s;
  }
  return std::string_view::npos;
}

bool is_comment_line(std::string_view line) {
  const std::size_t first = line.find_first_not_of(" \t\r\f\v");
  return first != std::string_view::npos && line[first] == '#';
}

// The file's logical lines: continuation lines joined, comments dropped, blank lines skipped (pip's
// join_lines and ignore_comments).
std::vector<Line> logical_lines(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<Line> out;
  std::string joined;
  std::size_t joined_from = 0;
  bool joining = false;
  auto emit = [&](std::size_t number, std::string line) {
    const std::size_t c = comment_start(line);
    if (c != std::string::npos) line.resize(c);
    const std::string_view t = trim(line);
    if (!t.empty()) out.push_back(Line{number, std::string(t)});
  };
  std::size_t number = 0, start = 0;
  while (start <= text.size()) {
    const std::size_t nl = text.find('\n', start);
    std::string_view raw = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    ++number;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    const bool comment = is_comment_line(raw);
    if (raw.empty() || raw.back() != '\\' || comment) {
      if (joining) {
        joined += comment ? " " + std::string(raw) : std::string(raw);
        emit(joined_from, std::move(joined));
        joined.clear();
        joining = false;
      } else {
        emit(number, std::string(raw));
      }
    } else {
      if (!joining) joined_from = number;
      joining = true;
      raw.remove_suffix(1);
      joined += raw;
    }
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  if (joining) emit(joined_from, std::move(joined));
  return out;
}

// The words of an options string, as shlex.split reads them (quotes, backslash escapes).
std::vector<std::string> shell_words(std::string_view s, const std::string& where) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (is_space(c)) {
      if (in_word) out.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\'' || c == '"') {
      const std::size_t end = s.find(c, i + 1);
      if (end == std::string_view::npos) throw bad_input(where + ": unterminated quote in the options");
      word += s.substr(i + 1, end - i - 1);
      in_word = true;
      i = end;
    } else if (c == '\\' && i + 1 < s.size()) {
      word += s[++i];
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(std::move(word));
  return out;
}

// pip's break_args_options: the words before the first that starts with '-' are the requirement.
std::pair<std::string, std::string> break_args_options(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i < line.size() && line[i] == '-') return {std::string(trim(line.substr(0, i))), std::string(line.substr(i))};
    while (i < line.size() && !is_space(line[i])) ++i;
  }
  return {std::string(trim(line)), ""};
}

struct Option {
  std::string name;   // the long name: "--index-url"
  std::string value;  // "" for a flag
};

struct OptionSpec {
  const char* long_name;
  const char* short_name;  // "" when none
  bool takes_value;
};

constexpr OptionSpec k_file_options[] = {
    {"--index-url", "-i", true},
    {"--extra-index-url", "", true},
    {"--find-links", "-f", true},
    {"--no-index", "", false},
    {"--requirement", "-r", true},
    {"--constraint", "-c", true},
    {"--editable", "-e", true},
    {"--pre", "", false},
    {"--prefer-binary", "", false},
    {"--only-binary", "", true},
    {"--no-binary", "", true},
    {"--trusted-host", "", true},
    {"--require-hashes", "", false},
    {"--use-feature", "", true},
    {"--hash", "", true},
    {"--config-settings", "-C", true},
    {"--global-option", "", true},
    {"--install-option", "", true},
};

// Options as optparse reads them: --name=value, --name value, -xvalue, -x value.
std::vector<Option> parse_options(const std::vector<std::string>& words, const std::string& where) {
  std::vector<Option> out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const OptionSpec* spec = nullptr;
    std::optional<std::string> attached;
    for (const auto& s : k_file_options) {
      const std::string_view lname(s.long_name), sname(s.short_name);
      if (w == lname || (!sname.empty() && w == sname)) {
        spec = &s;
      } else if (s.takes_value && w.size() > lname.size() && w.compare(0, lname.size(), lname) == 0 &&
                 w[lname.size()] == '=') {
        spec = &s;
        attached = w.substr(lname.size() + 1);
      } else if (s.takes_value && !sname.empty() && w.size() > 2 && w.compare(0, 2, sname) == 0 && w[1] != '-') {
        spec = &s;
        attached = w.substr(2);
      }
      if (spec != nullptr) break;
    }
    if (spec == nullptr) {
      throw bad_input(where + ": " +
                      (w.empty() || w[0] != '-' ? "unexpected '" + shown(w) + "' after the options"
                                                : "unknown option " + shown(w)));
    }
    Option o{spec->long_name, ""};
    if (spec->takes_value) {
      if (attached) {
        o.value = *attached;
      } else if (i + 1 < words.size()) {
        o.value = words[++i];
      } else {
        throw bad_input(where + ": " + w + " needs a value");
      }
    }
    out.push_back(std::move(o));
  }
  return out;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// "URL ; marker" (pip needs white space before the ';' of a URL, which may itself hold one).
std::pair<std::string, std::string> split_url_marker(std::string_view s) {
  for (std::size_t i = 1; i < s.size(); ++i) {
    if (s[i] == ';' && is_space(s[i - 1])) {
      return {std::string(trim(s.substr(0, i))), std::string(trim(s.substr(i + 1)))};
    }
  }
  return {std::string(trim(s)), ""};
}

// "#egg=name&subdirectory=x" -> "name".
std::string egg_name(std::string_view fragment) {
  for (const auto& part : split(fragment, "&", false)) {
    if (part.compare(0, 4, "egg=") == 0) return part.substr(4);
  }
  return "";
}

class RequirementsReader {
 public:
  explicit RequirementsReader(Lock& lock) : m_lock(lock), m_warnings(lock.warnings) {}

  void read(std::string_view text, const std::string& path) {
    read_file(text, path);
    std::vector<std::string> indexes;
    if (!m_no_index) {
      indexes.push_back(m_index_url.value_or(k_default_index));
      for (const auto& e : m_extra_index_urls) {
        if (std::find(indexes.begin(), indexes.end(), e) == indexes.end()) indexes.push_back(e);
      }
    }
    for (auto& p : m_lock.packages) {
      p.indexes = indexes;
      p.find_links = m_find_links;
    }
    m_warnings.finish();
  }

 private:
  void read_file(std::string_view text, const std::string& path) {
    std::error_code ec;
    std::string key = std::filesystem::weakly_canonical(path, ec).string();
    if (ec || key.empty()) key = path;
    m_stack.push_back(Included{key, path});
    for (const Line& line : logical_lines(text)) {
      const std::string where = path + ":" + std::to_string(line.number);
      if (line.text.find("${") != std::string::npos) {
        m_warnings.add(where + ": ${...} is not expanded: wheelcheck reads the line as written");
      }
      auto [args, options] = break_args_options(line.text);
      const auto parsed = parse_options(shell_words(options, where), where);
      if (args.empty()) {
        file_options(parsed, path, where);
      } else {
        requirement(args, parsed, where);
      }
    }
    m_stack.pop_back();
  }

  void file_options(const std::vector<Option>& options, const std::string& path, const std::string& where) {
    for (const Option& o : options) {
      if (o.name == "--index-url") {
        m_index_url = o.value;
      } else if (o.name == "--extra-index-url") {
        m_extra_index_urls.push_back(o.value);
      } else if (o.name == "--find-links") {
        m_find_links.push_back(is_http_url(o.value) || has_scheme(o.value) ? o.value
                                                                           : resolve_path(folder_of(path), o.value));
      } else if (o.name == "--no-index") {
        m_no_index = true;
      } else if (o.name == "--requirement") {
        include(o.value, path, where);
      } else if (o.name == "--constraint") {
        m_warnings.add(where + ": -c " + shown(o.value) +
                       " is ignored: constraints narrow a resolution, and a lock is already resolved");
      } else if (o.name == "--editable") {
        editable(o.value, where);
      } else if (o.name == "--hash" || o.name == "--config-settings" || o.name == "--global-option" ||
                 o.name == "--install-option") {
        throw bad_input(where + ": " + o.name + " belongs on a requirement's line");
      } else {
        m_warnings.add(where + ": " + o.name + " is ignored: it does not change which files a lock names");
      }
    }
  }

  void include(const std::string& target, const std::string& path, const std::string& where) {
    if (has_scheme(target)) {
      throw bad_input(where + ": -r " + shown(target) + ": wheelcheck reads local requirements files only");
    }
    const std::string file = resolve_path(folder_of(path), target);
    std::error_code ec;
    std::string key = std::filesystem::weakly_canonical(file, ec).string();
    if (ec || key.empty()) key = file;
    for (const auto& inc : m_stack) {
      if (inc.key != key) continue;
      std::vector<std::string> chain;
      for (const auto& i : m_stack) chain.push_back(shown(i.path));
      chain.push_back(shown(file));
      throw bad_input(where + ": -r " + shown(target) + " includes a file being read: a cycle (" + join(chain, " -> ") +
                      ")");
    }
    if (m_stack.size() >= k_max_include_depth) {
      throw bad_input(where + ": -r " + shown(target) + ": requirements files nested deeper than " +
                      std::to_string(k_max_include_depth));
    }
    std::string text;
    try {
      text = read_text_file(file, k_max_lock_size);
    } catch (const Error& e) {
      throw bad_input(where + ": -r " + shown(target) + ": " + e.what());
    }
    read_file(text, file);
  }

  void editable(const std::string& target, const std::string& where) {
    Package p;
    p.source = where;
    auto [base, fragment] = split_fragment(target);
    p.name = egg_name(fragment);
    if (p.name.empty()) p.name = last_segment(base, has_scheme(base));
    p.other = "an editable install of " + shown(base);
    m_lock.packages.push_back(std::move(p));
  }

  // Where a requirement's files are, for a direct reference (NAME @ URL) or a path or URL line.
  void locate(Package& p, const std::string& location, const std::string& where, bool named) {
    auto [base, fragment] = split_fragment(location);
    const bool vcs = has_scheme(base) && base.find('+') < base.find("://");
    File f = file_at(location, "");  // relative paths stay relative to the working directory, as pip reads them
    if (!named) {
      p.name = egg_name(fragment);
      if (p.name.empty() && f.is_wheel()) {
        try {
          p.name = wheel::parse_filename(f.filename).name;
        } catch (const Error& e) {
          throw bad_input(where + ": " + e.what());
        }
      }
    }
    if (vcs) {
      p.other = "a " + shown(base.substr(0, base.find('+'))) + " checkout of " + shown(base);
    } else if (f.is_wheel()) {
      try {
        const auto parsed = wheel::parse_filename(f.filename);
        p.version = parsed.version;
        if (p.name.empty()) p.name = parsed.name;
      } catch (const Error& e) {
        throw bad_input(where + ": " + e.what());
      }
      p.wheels.push_back(std::move(f));
    } else if (auto nv = sdist_name_version(f.filename, p.name)) {
      if (p.name.empty()) p.name = nv->first;
      p.version = nv->second;
      p.sdist = std::move(f);
    } else {
      if (p.name.empty()) p.name = f.filename;
      p.other = f.url.empty() ? "a local directory (" + shown(f.path) + ")" : "a download of " + shown(f.url);
    }
    if (p.name.empty()) throw bad_input(where + ": cannot tell the project of " + shown(location));
  }

  void marker_of(Package& p, const std::string& marker, const std::string& where) {
    if (marker.empty()) return;
    try {
      check_marker(marker);
    } catch (const Error& e) {
      throw bad_input(where + ": " + e.what());
    }
    p.marker = marker;
  }

  void requirement(const std::string& args, const std::vector<Option>& options, const std::string& where) {
    Package p;
    p.source = where;
    for (const Option& o : options) {
      if (o.name == "--hash") {
        const auto colon = o.value.find(':');
        const std::string algorithm = ascii_lower(o.value.substr(0, colon));
        const std::string hex = colon == std::string::npos ? "" : ascii_lower(o.value.substr(colon + 1));
        if (colon == std::string::npos || hex.empty()) {
          throw bad_input(where + ": --hash=" + shown(o.value) + " is not ALGORITHM:HEX");
        }
        if (algorithm != "sha256") {
          m_warnings.add(where + ": --hash=" + shown(algorithm) + ":... is not read (wheelcheck compares sha256)");
          continue;
        }
        if (!is_sha256_hex(hex)) throw bad_input(where + ": --hash=sha256:" + shown(hex) + " is not 64 hex digits");
        if (std::find(p.hashes.begin(), p.hashes.end(), hex) == p.hashes.end()) p.hashes.push_back(hex);
      } else if (o.name == "--config-settings" || o.name == "--global-option" || o.name == "--install-option") {
        m_warnings.add(where + ": " + o.name + " is ignored: it changes how an sdist is built, not which file");
      } else {
        throw bad_input(where + ": " + o.name + " must be on a line of its own");
      }
    }
    const std::string_view s = args;
    // A name, else a path or URL line.
    std::size_t n = 0;
    while (n < s.size() && is_name_char(s[n])) ++n;
    const bool path_like = n == 0 || has_scheme(s) || s.front() == '.' || s.front() == '/' ||
                           (n < s.size() && (s[n] == '/' || s[n] == ':')) || ends_with_ci(s.substr(0, n), ".whl") ||
                           sdist_stem(s.substr(0, n)).has_value();
    if (path_like) {
      auto [location, marker] = split_url_marker(s);
      locate(p, location, where, false);
      marker_of(p, marker, where);
      m_lock.packages.push_back(std::move(p));
      return;
    }
    if (!is_alnum(s[0]) || !is_alnum(s[n - 1]))
      throw bad_input(where + ": '" + shown(s.substr(0, n)) + "' is not a project name");
    p.name = std::string(s.substr(0, n));
    std::string_view rest = trim(s.substr(n));
    if (!rest.empty() && rest.front() == '[') {
      const auto close = rest.find(']');
      if (close == std::string_view::npos) throw bad_input(where + ": unterminated [extras] after " + shown(p.name));
      for (const auto& extra : split(rest.substr(1, close - 1), ",", false)) {
        const std::string_view e = trim(extra);
        if (e.empty() || !std::all_of(e.begin(), e.end(), is_name_char)) {
          throw bad_input(where + ": '" + shown(e) + "' is not an extra's name");
        }
      }
      rest = trim(rest.substr(close + 1));
    }
    if (!rest.empty() && rest.front() == '@') {
      auto [location, marker] = split_url_marker(trim(rest.substr(1)));
      if (location.empty()) throw bad_input(where + ": " + shown(p.name) + " @ needs a URL");
      if (location.find_first_of(" \t") != std::string::npos) {
        throw bad_input(where + ": unexpected text after the URL of " + shown(p.name) + " (a marker follows ' ; ')");
      }
      locate(p, location, where, true);
      marker_of(p, marker, where);
      m_lock.packages.push_back(std::move(p));
      return;
    }
    const auto semicolon = rest.find(';');
    std::string spec(trim(rest.substr(0, semicolon)));
    const std::string marker = semicolon == std::string_view::npos ? "" : std::string(trim(rest.substr(semicolon + 1)));
    if (spec.size() >= 2 && spec.front() == '(' && spec.back() == ')')
      spec = std::string(trim(spec.substr(1, spec.size() - 2)));
    spec.erase(std::remove_if(spec.begin(), spec.end(), is_space), spec.end());
    const std::string not_pinned =
        where + ": " + shown(p.name) + " is not pinned (==VERSION): a lock names one version";
    if (spec.empty()) throw bad_input(not_pinned);
    const auto clauses = wheel::parse_specifier_set(spec);
    if (!clauses) throw bad_input(where + ": '" + shown(spec) + "' is not a version specifier (PEP 440)");
    if (clauses->size() != 1 || ((*clauses)[0].op != "==" && (*clauses)[0].op != "===") || (*clauses)[0].wildcard) {
      throw bad_input(not_pinned);
    }
    p.specifier = spec;
    p.version = spec.substr((*clauses)[0].op.size());
    marker_of(p, marker, where);
    m_lock.packages.push_back(std::move(p));
  }

  struct Included {
    std::string key;   // canonical path
    std::string path;  // as named
  };
  Lock& m_lock;
  Warnings m_warnings;
  std::vector<Included> m_stack;
  std::optional<std::string> m_index_url;
  std::vector<std::string> m_extra_index_urls;
  std::vector<std::string> m_find_links;
  bool m_no_index = false;
};

// ---------------------------------------------------------------------------------------------------
// Which format

std::string base_of(std::string_view path) {
  if (has_scheme(path)) path = path.substr(0, path.find_first_of("?#"));
  const auto slash = path.rfind('/');
  return ascii_lower(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

bool is_pylock_name(const std::string& base) {
  return base == "pylock.toml" ||
         (base.size() > 12 && base.compare(0, 7, "pylock.") == 0 && base.compare(base.size() - 5, 5, ".toml") == 0);
}

Format format_of(const std::string& path, std::string_view text) {
  const std::string base = base_of(path);
  if (is_pylock_name(base)) return Format::Pylock;
  if (ends_with_ci(base, ".json")) return Format::PipReport;
  if (ends_with_ci(base, ".txt") || ends_with_ci(base, ".in")) return Format::Requirements;
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return Format::PipReport;
  if (text.find("lock-version") != std::string_view::npos) return Format::Pylock;
  return Format::Requirements;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> sdist_name_version(std::string_view filename,
                                                                      std::string_view project) {
  const auto stem = sdist_stem(filename);
  if (!stem) return std::nullopt;
  if (!project.empty() && stem->size() <= 1024) {  // (each try normalises a prefix: bounded for a hostile name)
    const std::string want = wheel::normalize_project_name(project);
    for (std::size_t dash = stem->find('-'); dash != std::string_view::npos; dash = stem->find('-', dash + 1)) {
      if (wheel::normalize_project_name(stem->substr(0, dash)) == want) {
        return std::make_pair(std::string(stem->substr(0, dash)), std::string(stem->substr(dash + 1)));
      }
    }
  }
  const auto dash = stem->rfind('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == stem->size()) return std::nullopt;
  return std::make_pair(std::string(stem->substr(0, dash)), std::string(stem->substr(dash + 1)));
}

bool is_lock_path(std::string_view path) {
  const std::string base = base_of(path);
  if (ends_with_ci(base, ".whl")) return false;
  return is_pylock_name(base) || ends_with_ci(base, ".json") || ends_with_ci(base, ".txt") || ends_with_ci(base, ".in");
}

Lock parse(std::string_view text, Format format, const std::string& path) {
  Lock lock;
  lock.format = format;
  lock.path = path;
  if (text.size() > k_max_lock_size) throw bad_input(path + " is larger than " + format_size(k_max_lock_size));
  switch (format) {
    case Format::Pylock: PylockReader(path, lock).read(text); break;
    case Format::PipReport: read_report(text, path, lock); break;
    case Format::Requirements: RequirementsReader(lock).read(text, path); break;
  }
  return lock;
}

Lock load(const std::string& path) {
  const std::string text = read_text_file(path, k_max_lock_size);
  return parse(text, format_of(path, text), path);
}

}  // namespace wheelcheck::lock
