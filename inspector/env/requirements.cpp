// A pinned requirements file, read as pip's req_file.py reads it: lines joined at a trailing backslash (a
// comment line ends the run), comments (a '#' at the start or after white space) dropped, then each line
// split at its first word that starts with '-' into the requirement and its options (shlex quoting).
// Requirements: NAME[extras] ==VERSION ; marker, NAME @ URL, a wheel's or an sdist's path or URL, with
// --hash per line; only an exact ==/=== pin counts as a lock's. Options of the file: -i/--index-url,
// --extra-index-url, -f/--find-links (a folder beside the file naming it when one is there, else from the
// working folder, as pip reads it) and --no-index (for every package of the files read, as pip makes them
// global), -r/--requirement (a nested file, relative to the one naming it; a cycle is an error),
// -c/--constraint (a warning), -e/--editable (installed from neither), and the ones that change nothing
// here (--pre, --only-binary, ...: a warning). ${VAR} is left as written, with a warning.
#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "inspector/env/lock_detail.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::lock::detail {

namespace {

constexpr std::size_t k_max_include_depth = 32;  // -r within -r

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

  // Where pip reads a --find-links of a requirements file (req_file.py, handle_option_line): a path relative
  // to the file's folder when that exists, else as written (pip reads it from the working folder then, and
  // ignores it, with a warning, when it is not there either). URLs are as written.
  std::string find_links_location(const std::string& value, const std::string& path, const std::string& where) {
    if (is_http_url(value) || has_scheme(value)) return value;
    const std::string beside = resolve_path(folder_of(path), value);
    std::error_code ec;
    if (std::filesystem::exists(beside, ec)) return beside;
    if (!std::filesystem::exists(value, ec)) {
      m_warnings.add(where + ": --find-links " + shown(value) + ": " +
                     (beside == value ? shown(value) + " does not exist"
                                      : "neither " + shown(beside) + " (beside the requirements file) nor " +
                                            shown(value) + " (from the working folder) exists") +
                     ": pip ignores it");
    }
    return value;
  }

  void file_options(const std::vector<Option>& options, const std::string& path, const std::string& where) {
    bool find_links_seen = false;
    for (const Option& o : options) {
      if (o.name == "--index-url") {
        m_index_url = o.value;
      } else if (o.name == "--extra-index-url") {
        m_extra_index_urls.push_back(o.value);
      } else if (o.name == "--find-links") {
        if (find_links_seen) {
          m_warnings.add(where + ": --find-links " + shown(o.value) +
                         " is ignored: pip reads only the first --find-links of a line");
          continue;
        }
        find_links_seen = true;
        m_find_links.push_back(find_links_location(o.value, path, where));
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

}  // namespace

void read_requirements(std::string_view text, const std::string& path, Lock& lock) {
  RequirementsReader(lock).read(text, path);
}

}  // namespace wheelcheck::lock::detail
