// What the readers of lock files share (include/wheelcheck/lock.hpp): the entry point of each format's
// reader (pylock.cpp, pip_report.cpp, requirements.cpp), called by lock::parse (lock.cpp), and the helpers
// lock.cpp keeps for all three: bounded warnings, untrusted text made fit for a message, and where a file
// named by a URL or a path is.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelcheck/lock.hpp"

namespace wheelcheck::lock::detail {

// Each reads `text` (the file `path`; relative paths resolve against its folder) into `lock`'s packages
// and warnings, throwing Error(BadInput) naming FILE[:LINE] for anything malformed.
void read_pylock(std::string_view text, const std::string& path, Lock& lock);
void read_pip_report(std::string_view text, const std::string& path, Lock& lock);
void read_requirements(std::string_view text, const std::string& path, Lock& lock);

inline constexpr std::size_t k_max_warnings = 100;  // then one line counting the rest
inline constexpr std::size_t k_shown = 200;         // how much untrusted text a message quotes

// Untrusted text for a message: printable, at most k_shown characters.
std::string shown(std::string_view s);

// A lock's warnings, at most k_max_warnings of them; finish() adds one line counting those dropped.
class Warnings {
 public:
  explicit Warnings(std::vector<std::string>& out) : m_out(out) {}
  void add(std::string message);
  void finish();

 private:
  std::vector<std::string>& m_out;
  std::size_t m_dropped = 0;
};

bool ends_with_ci(std::string_view s, std::string_view suffix);  // `suffix` in lower case

// ---------------------------------------------------------------------------------------------------
// Where files are: URLs, paths, their names

bool is_http_url(std::string_view s);
// "git+https://...", "https://...", "file:///...": a scheme and "://".
bool has_scheme(std::string_view s);
// "URL#frag" -> ("URL", "frag").
std::pair<std::string, std::string> split_fragment(std::string_view url);
// The last '/'-separated segment of a URL (without its query) or path, percent-decoded for a URL.
std::string last_segment(std::string_view location, bool url);
// A path relative to a file's folder ("" or "." for the working directory).
std::string resolve_path(const std::string& folder, std::string_view path);
// The folder of a file, "." when its name has none.
std::string folder_of(const std::string& file);
// An sdist's file name without its archive extension (.tar.gz, .zip, ...); nullopt for any other name.
std::optional<std::string_view> sdist_stem(std::string_view filename);
// "sha256=HEX" (a URL fragment, pip's archive_info.hash) into `hashes`; false when it is not one.
bool add_hash_text(std::string_view text, std::map<std::string, std::string>& hashes);
// A File at a URL or path as a lock writes it: http(s) URLs keep their URL (without the fragment, whose
// "sha256=HEX" is a hash), file:// URLs and paths become paths (relative ones against `folder`).
File file_at(std::string_view location, const std::string& folder);

}  // namespace wheelcheck::lock::detail
