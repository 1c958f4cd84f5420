// Lock files: the three formats an environment is written down in, read into one model (lock.hpp).
//
// Each format has its reader: pylock.toml (PEP 751, with toml++) in pylock.cpp, pip's installation report
// (JSON) in pip_report.cpp, a pinned requirements file in requirements.cpp. This file decides which one a
// file is (is_lock_path, load: by its name, else by its content), hands the text to it (parse), and keeps
// what the three share (lock_detail.hpp): where a file named by a URL or a path is and what it is called,
// hashes in a URL's fragment, sdist names, bounded warnings.
//
// Whatever the input, an error is an Error(BadInput) naming where; untrusted text in a message is made
// printable and cut short, and warnings are bounded.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "inspector/env/lock_detail.hpp"
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

namespace detail {

namespace {

// file:///abs/path, file://localhost/abs/path -> /abs/path; nullopt for anything else.
std::optional<std::string> file_url_path(std::string_view url) {
  if (!starts_with_ci(url, "file://")) return std::nullopt;
  std::string_view rest = url.substr(7);
  rest = rest.substr(0, rest.find_first_of("?#"));
  if (starts_with_ci(rest, "localhost/")) rest.remove_prefix(9);
  if (rest.empty() || rest.front() != '/') return std::nullopt;
  return percent_decode(rest);
}

}  // namespace

std::string shown(std::string_view s) {
  if (s.size() <= k_shown) return printable(s);
  return printable(s.substr(0, k_shown)) + "...";
}

void Warnings::add(std::string message) {
  if (m_out.size() < k_max_warnings) {
    m_out.push_back(std::move(message));
  } else {
    ++m_dropped;
  }
}

void Warnings::finish() {
  if (m_dropped > 0) m_out.push_back(std::to_string(m_dropped) + " more warnings not shown");
}

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

}  // namespace detail

namespace {

// ---------------------------------------------------------------------------------------------------
// Which format

std::string base_of(std::string_view path) {
  if (detail::has_scheme(path)) path = path.substr(0, path.find_first_of("?#"));
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
  if (detail::ends_with_ci(base, ".json")) return Format::PipReport;
  if (detail::ends_with_ci(base, ".txt") || detail::ends_with_ci(base, ".in")) return Format::Requirements;
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return Format::PipReport;
  if (text.find("lock-version") != std::string_view::npos) return Format::Pylock;
  return Format::Requirements;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> sdist_name_version(std::string_view filename,
                                                                      std::string_view project) {
  const auto stem = detail::sdist_stem(filename);
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
  if (detail::ends_with_ci(base, ".whl")) return false;
  return is_pylock_name(base) || detail::ends_with_ci(base, ".json") || detail::ends_with_ci(base, ".txt") ||
         detail::ends_with_ci(base, ".in");
}

Lock parse(std::string_view text, Format format, const std::string& path) {
  Lock lock;
  lock.format = format;
  lock.path = path;
  if (text.size() > k_max_lock_size) throw bad_input(path + " is larger than " + format_size(k_max_lock_size));
  switch (format) {
    case Format::Pylock: detail::read_pylock(text, path, lock); break;
    case Format::PipReport: detail::read_pip_report(text, path, lock); break;
    case Format::Requirements: detail::read_requirements(text, path, lock); break;
  }
  return lock;
}

Lock load(const std::string& path) {
  const std::string text = read_text_file(path, k_max_lock_size);
  return parse(text, format_of(path, text), path);
}

}  // namespace wheelcheck::lock
