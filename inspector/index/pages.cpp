// Project pages of the simple repository API, the two formats an index may serve:
//
//   PEP 691 JSON (application/vnd.pypi.simple.v1+json, or .latest+json): an object with "meta"
//     ("api-version"), "name", "files" (each "filename", "url", "hashes", "requires-python", "yanked",
//     "core-metadata" / "dist-info-metadata", "size", "upload-time") and "versions" (PEP 700). Every
//     field is type-checked: a field of the wrong type throws bad_input naming the field and the page.
//     The body's nesting depth is counted before nlohmann parses it (at most k_max_json_depth), so a
//     hostile document of nested brackets is refused before it is turned into a tree.
//   PEP 503 HTML (text/html, application/vnd.pypi.simple.v1+html, or no type at all): parsed by gumbo,
//     an HTML5 parser, so entities, unquoted attributes and broken markup read as a browser reads them.
//     Every <a href> of the document is a file; the first <base href> (itself resolved against the final
//     URL) is the base of the links. The fragment "#<alg>=<hex>" is a hash; data-requires-python,
//     data-yanked (PEP 592) and data-core-metadata / data-dist-info-metadata (PEP 658/714) are read;
//     <meta name="pypi:repository-version"> gives the API version (PEP 629). The tree is walked with an
//     explicit stack: a deep document cannot overflow ours.
//
// Both check the API version: a newer major throws, a newer minor warns. Links that cannot be read (no
// href, no file name, an unresolvable URL, a malformed hash) are skipped or lose their hash, with a
// warning; a page of more than k_max_links links is refused, and so is HTML nested deeper than
// k_max_html_depth elements (gumbo's time grows with the square of the depth: see check_html_depth).
#include <gumbo.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>

#include "wheelcheck/error.hpp"
#include "wheelcheck/index.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/util.hpp"
#include "wheelcheck/wheel.hpp"

namespace wheelcheck::index {

namespace {

using Json = nlohmann::json;

constexpr std::size_t k_max_links = 1'000'000;
constexpr std::size_t k_max_json_depth = 64;
constexpr std::size_t k_max_warnings = 100;  // then one line counting the rest
constexpr int k_gumbo_max_errors = 1000;
constexpr int k_understood_major = 1;
constexpr int k_understood_minor = 1;

// ---------------------------------------------------------------------------------------------------
// Warnings: kept for people, bounded so that a hostile page cannot fill memory with them.

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

// ---------------------------------------------------------------------------------------------------
// What every format shares: the content type, the API version, hashes, URLs.

enum class Format { Pep691Json, Pep503Html };

Format format_of(std::string_view content_type, const std::string& page) {
  const auto type = ascii_lower(trim(content_type.substr(0, content_type.find(';'))));
  if (type == "application/vnd.pypi.simple.v1+json" || type == "application/vnd.pypi.simple.latest+json") {
    return Format::Pep691Json;
  }
  if (type.empty() || type == "text/html" || type == "application/vnd.pypi.simple.v1+html" ||
      type == "application/vnd.pypi.simple.latest+html") {
    return Format::Pep503Html;
  }
  throw bad_input("index page " + page + ": unsupported content type '" + std::string(content_type) +
                  "' (expected application/vnd.pypi.simple.v1+json or text/html)");
}

// PEP 629: "<major>.<minor>". A newer major is a format we cannot read; a newer minor only adds to it.
void check_api_version(const std::string& version, const std::string& page, Warnings& warnings) {
  const auto text = trim(version);
  const auto dot = text.find('.');
  int major = -1;
  int minor = -1;
  const auto parse = [](std::string_view digits, int& value) {
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) return false;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    return ec == std::errc{} && end == digits.data() + digits.size();
  };
  if (dot == std::string_view::npos || !parse(text.substr(0, dot), major) || !parse(text.substr(dot + 1), minor)) {
    throw bad_input("index page " + page + ": api-version '" + version + "' is not <major>.<minor> (PEP 629)");
  }
  if (major > k_understood_major) {
    throw bad_input("index page " + page + ": api-version " + std::string(text) +
                    " is a newer major than wheelcheck understands (1.x)");
  }
  if (major == k_understood_major && minor > k_understood_minor) {
    warnings.add("index page " + page + ": api-version " + std::string(text) +
                 " is newer than wheelcheck knows (1.1); reading it as 1.1");
  }
}

// The length of a digest in hex, for the algorithms whose length we know (0: any length).
std::size_t digest_hex_length(const std::string& algorithm) {
  if (algorithm == "md5") return 32;
  if (algorithm == "sha1") return 40;
  if (algorithm == "sha224") return 56;
  if (algorithm == "sha256") return 64;
  if (algorithm == "sha384") return 96;
  if (algorithm == "sha512") return 128;
  return 0;
}

// Adds algorithm -> lower-case hex to `hashes`, or warns when the value is not a digest.
void add_hash(const std::string& algorithm, std::string_view value, std::map<std::string, std::string>& hashes,
              const std::string& where, Warnings& warnings) {
  const auto alg = ascii_lower(trim(algorithm));
  const auto hex = ascii_lower(trim(value));
  const auto expected = digest_hex_length(alg);
  const bool all_hex = !hex.empty() && hex.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (alg.empty() || !all_hex || (expected != 0 && hex.size() != expected)) {
    warnings.add(where + ": ignoring malformed hash '" + algorithm + "=" + std::string(value) + "'");
    return;
  }
  hashes[alg] = hex;
}

// "<alg>=<hex>" (a URL fragment, a data-core-metadata value) into `hashes`.
void add_hash_pair(std::string_view pair, std::map<std::string, std::string>& hashes, const std::string& where,
                   Warnings& warnings) {
  const auto eq = pair.find('=');
  if (eq == std::string_view::npos) {
    warnings.add(where + ": ignoring '" + std::string(pair) + "', not <algorithm>=<hex>");
    return;
  }
  add_hash(std::string(pair.substr(0, eq)), pair.substr(eq + 1), hashes, where, warnings);
}

// A resolved URL without its fragment; the fragment, if any, in `fragment`.
std::string split_fragment(const std::string& url, std::string& fragment) {
  const auto hash = url.find('#');
  if (hash == std::string::npos) {
    fragment.clear();
    return url;
  }
  fragment = url.substr(hash + 1);
  return url.substr(0, hash);
}

// The last path segment of a URL (without query and fragment), percent-decoded.
std::string filename_of(const std::string& url) {
  std::string_view path(url);
  path = path.substr(0, path.find_first_of("?#"));
  const auto scheme = path.find("://");
  const auto path_start = scheme == std::string_view::npos ? 0 : path.find('/', scheme + 3);
  if (path_start == std::string_view::npos) return "";
  path = path.substr(path_start);
  return percent_decode(path.substr(path.rfind('/') + 1));
}

// ---------------------------------------------------------------------------------------------------
// PEP 691 JSON.

// The deepest nesting of arrays and objects, strings skipped; refuses past the limit without reading on.
void check_json_depth(std::string_view body, const std::string& page) {
  if (json_deeper_than(body, k_max_json_depth)) {
    throw bad_input("index page " + page + ": JSON nested deeper than " + std::to_string(k_max_json_depth) + " levels");
  }
}

// Type-checked reads of the fields of one JSON object; each error names the field and the page.
class JsonFields {
 public:
  JsonFields(const Json& object, std::string path, const std::string& page)
      : m_object(object), m_path(std::move(path)), m_page(page) {}

  const Json* find(const char* key) const {
    const auto it = m_object.find(key);
    return it == m_object.end() ? nullptr : &*it;
  }

  [[noreturn]] void wrong_type(const char* key, const char* expected) const {
    throw bad_input("index page " + m_page + ": \"" + field(key) + "\" is not " + expected);
  }

  std::string field(const char* key) const { return m_path.empty() ? key : m_path + "." + key; }

  std::optional<std::string> string(const char* key) const {
    const auto* value = find(key);
    if (value == nullptr) return std::nullopt;
    if (!value->is_string()) wrong_type(key, "a string");
    return value->get_ref<const std::string&>();
  }

  std::string required_string(const char* key) const {
    auto value = string(key);
    if (!value) throw bad_input("index page " + m_page + ": \"" + field(key) + "\" is missing");
    return *value;
  }

  std::optional<std::string> string_or_null(const char* key) const {
    const auto* value = find(key);
    if (value == nullptr || value->is_null()) return std::nullopt;
    if (!value->is_string()) wrong_type(key, "a string or null");
    return value->get_ref<const std::string&>();
  }

  const Json* object(const char* key) const {
    const auto* value = find(key);
    if (value != nullptr && !value->is_object()) wrong_type(key, "an object");
    return value;
  }

  const Json* array(const char* key) const {
    const auto* value = find(key);
    if (value != nullptr && !value->is_array()) wrong_type(key, "an array");
    return value;
  }

  // {"sha256": "<hex>", ...}: every value a string.
  std::map<std::string, std::string> hashes(const Json& value, const char* key, Warnings& warnings) const {
    std::map<std::string, std::string> out;
    for (const auto& [algorithm, digest] : value.items()) {
      if (!digest.is_string()) wrong_type(key, "an object of strings");
      add_hash(algorithm, digest.get_ref<const std::string&>(), out, m_page + " " + field(key), warnings);
    }
    return out;
  }

  const std::string& path() const { return m_path; }

 private:
  const Json& m_object;
  std::string m_path;
  const std::string& m_page;
};

// PEP 592: false, true, or a reason (which means true).
void read_yanked(const JsonFields& fields, File& file) {
  const auto* value = fields.find("yanked");
  if (value == nullptr || value->is_null()) return;
  if (value->is_boolean()) {
    file.yanked = value->get<bool>();
  } else if (value->is_string()) {
    file.yanked = true;
    file.yanked_reason = value->get_ref<const std::string&>();
  } else {
    fields.wrong_type("yanked", "a boolean or a string");
  }
}

// PEP 658/714: "core-metadata" (or the older "dist-info-metadata"): false, true, or the file's hashes.
void read_core_metadata(const JsonFields& fields, File& file, Warnings& warnings) {
  const char* key = fields.find("core-metadata") != nullptr ? "core-metadata" : "dist-info-metadata";
  const auto* value = fields.find(key);
  if (value == nullptr || value->is_null()) return;
  if (value->is_boolean()) {
    file.core_metadata = value->get<bool>();
  } else if (value->is_object()) {
    file.core_metadata = true;
    file.core_metadata_hashes = fields.hashes(*value, key, warnings);
  } else {
    fields.wrong_type(key, "a boolean or an object of hashes");
  }
}

void read_size(const JsonFields& fields, File& file) {
  const auto* value = fields.find("size");
  if (value == nullptr) return;
  if (!value->is_number_unsigned()) fields.wrong_type("size", "a non-negative integer");
  file.size = value->get<std::uint64_t>();
}

std::optional<File> read_json_file(const Json& entry, std::size_t index, const std::string& final_url,
                                   const std::string& page, Warnings& warnings) {
  const auto path = "files[" + std::to_string(index) + "]";
  if (!entry.is_object()) throw bad_input("index page " + page + ": \"" + path + "\" is not an object");
  const JsonFields fields(entry, path, page);
  File file;
  file.filename = fields.required_string("filename");
  const auto url = fields.required_string("url");
  if (file.filename.empty() || url.empty()) {
    warnings.add("index page " + page + ": skipping " + path + ", its filename or url is empty");
    return std::nullopt;
  }
  if (const auto* hashes = fields.object("hashes")) file.hashes = fields.hashes(*hashes, "hashes", warnings);
  std::string fragment;
  try {
    file.url = split_fragment(net::resolve_url(final_url, url), fragment);
  } catch (const Error& e) {
    warnings.add("index page " + page + ": skipping " + path + ": " + e.what());
    return std::nullopt;
  }
  if (!fragment.empty() && fragment.find('=') != std::string::npos) {
    std::map<std::string, std::string> from_fragment;
    add_hash_pair(fragment, from_fragment, page + " " + path + ".url", warnings);
    file.hashes.insert(from_fragment.begin(), from_fragment.end());  // "hashes" wins
  }
  file.requires_python = fields.string_or_null("requires-python");
  read_yanked(fields, file);
  read_core_metadata(fields, file, warnings);
  read_size(fields, file);
  file.upload_time = fields.string_or_null("upload-time");
  return file;
}

void parse_json_page(std::string_view body, const std::string& final_url, const std::string& page, ProjectPage& out,
                     Warnings& warnings) {
  check_json_depth(body, page);
  Json document;
  try {
    document = Json::parse(body);
  } catch (const Json::exception& e) {
    throw bad_input("index page " + page + ": not JSON (" + e.what() + ")");
  }
  if (!document.is_object()) throw bad_input("index page " + page + ": the JSON page is not an object");
  const JsonFields top(document, "", page);

  if (const auto* meta = top.object("meta")) {
    const JsonFields meta_fields(*meta, "meta", page);
    if (auto version = meta_fields.string("api-version")) out.api_version = *version;
  }
  check_api_version(out.api_version, page, warnings);
  if (auto name = top.string("name")) out.name = *name;

  const auto* files = top.array("files");
  if (files == nullptr) throw bad_input("index page " + page + ": \"files\" is missing (not a project page)");
  if (files->size() > k_max_links) {
    throw bad_input("index page " + page + ": more than " + std::to_string(k_max_links) + " files");
  }
  for (std::size_t i = 0; i < files->size(); ++i) {
    if (auto file = read_json_file((*files)[i], i, final_url, page, warnings)) out.files.push_back(std::move(*file));
  }

  if (const auto* versions = top.array("versions")) {
    for (const auto& version : *versions) {
      if (!version.is_string()) top.wrong_type("versions", "an array of strings");
      out.versions.push_back(version.get_ref<const std::string&>());
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// PEP 503 HTML.

// Gumbo 0.10 has no limit of its own on nesting, and its tree builder is quadratic in it: each start tag
// looks down the whole stack of open elements (100,000 nested <div> take half a minute). So before
// gumbo sees a page, a light scan of its tags estimates the deepest nesting: a stack of open elements
// where void elements are not pushed, an end tag pops to its element (a stray one is ignored), the
// start tags that HTML closes implicitly close their like (<li>, <p>, <tr>, <td>, <a>, ...), formatting
// elements left open by another's end tag still count (HTML reopens them), comments and the text of
// <script>, <style>, <title> and <textarea> are skipped. The scan only decides whether
// the page is too deep to parse; gumbo alone reads it. Index pages are a few levels deep.
constexpr std::size_t k_max_html_depth = 256;

bool is_void_element(std::string_view name) {
  static constexpr std::string_view k_void[] = {"area",  "base", "br",   "col",   "embed",  "hr",    "img",
                                                "input", "link", "meta", "param", "source", "track", "wbr"};
  for (const auto v : k_void) {
    if (name == v) return true;
  }
  return false;
}

using Names = std::span<const std::string_view>;

bool is_one_of(std::string_view name, Names names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// HTML's implied end tags, as the scan models them: a start tag closes the nearest open element of
// `closes`, unless an element of `scope` (the boundary HTML gives that search) comes first.
struct ImpliedEnd {
  Names closes;
  Names scope;
};

constexpr std::string_view k_button_scope[] = {"applet", "button", "caption", "html",     "marquee",
                                               "object", "table",  "td",      "template", "th"};
constexpr std::string_view k_list_scope[] = {"applet", "body", "button", "caption",  "dl", "html", "marquee", "menu",
                                             "object", "ol",   "table",  "template", "td", "th",   "ul"};
constexpr std::string_view k_table_scope[] = {"html", "table", "template"};
constexpr std::string_view k_formatting_scope[] = {"applet", "caption", "html",     "marquee",
                                                   "object", "td",      "template", "th"};
// Start tags that close an open <p> (in button scope) before they open.
constexpr std::string_view k_closes_p[] = {
    "address", "article", "aside", "blockquote", "dd", "details", "dialog", "div",     "dl",    "dt",     "fieldset",
    "figure",  "footer",  "form",  "h1",         "h2", "h3",      "h4",     "h5",      "h6",    "header", "hr",
    "li",      "main",    "menu",  "nav",        "ol", "p",       "pre",    "section", "table", "ul"};

constexpr std::string_view k_li[] = {"li"};
constexpr std::string_view k_dt_dd[] = {"dt", "dd"};
constexpr std::string_view k_tr[] = {"tr"};
constexpr std::string_view k_td_th[] = {"td", "th"};
constexpr std::string_view k_a[] = {"a"};
constexpr std::string_view k_option[] = {"option"};
constexpr std::string_view k_select_scope[] = {"html", "select"};
constexpr std::string_view k_p[] = {"p"};

std::vector<ImpliedEnd> implied_ends(std::string_view name) {
  std::vector<ImpliedEnd> ends;
  if (name == "li") ends.push_back({k_li, k_list_scope});
  if (name == "dt" || name == "dd") ends.push_back({k_dt_dd, k_list_scope});
  if (name == "tr") ends.push_back({k_tr, k_table_scope});
  if (name == "td" || name == "th") ends.push_back({k_td_th, k_table_scope});
  if (name == "a") ends.push_back({k_a, k_formatting_scope});
  if (name == "option") ends.push_back({k_option, k_select_scope});
  if (is_one_of(name, k_closes_p)) ends.push_back({k_p, k_button_scope});
  return ends;
}

constexpr std::string_view k_formatting[] = {"a",    "b", "big",   "code",   "em",     "font", "i",
                                             "nobr", "s", "small", "strike", "strong", "tt",   "u"};
// Closing one of these clears the active formatting elements opened inside it.
constexpr std::string_view k_formatting_markers[] = {"applet", "caption", "marquee", "object", "td", "template", "th"};

// The stack of open elements as the scan models it. A formatting element (<b>, <a>, ...) closed by
// another element's end tag stays active in HTML, and is opened again (reconstructed) before the next
// content: the model keeps it in m_pending and counts it, so that a page cannot hide its depth there.
class OpenElements {
 public:
  void start_tag(const std::string& name) {
    m_open.insert(m_open.end(), m_pending.begin(), m_pending.end());  // reconstruction
    m_pending.clear();
    for (const auto& end : implied_ends(name)) close_implied(end);
    m_open.push_back(name);
  }

  void end_tag(const std::string& name) {
    for (auto it = m_open.rbegin(); it != m_open.rend(); ++it) {
      if (*it == name) {
        pop_from(std::prev(it.base()));
        return;
      }
    }
    const auto pending = std::find(m_pending.rbegin(), m_pending.rend(), name);
    if (pending != m_pending.rend()) m_pending.erase(std::prev(pending.base()));
  }

  std::size_t depth() const { return m_open.size() + m_pending.size(); }

 private:
  void close_implied(const ImpliedEnd& end) {
    for (auto it = m_open.rbegin(); it != m_open.rend(); ++it) {
      if (is_one_of(*it, end.closes)) {
        pop_from(std::prev(it.base()));
        return;
      }
      if (is_one_of(*it, end.scope)) return;
    }
  }

  // Pops `first` (the element closed) and everything above it.
  void pop_from(std::vector<std::string>::iterator first) {
    std::vector<std::string> still_active;
    bool marker = is_one_of(*first, k_formatting_markers);
    for (auto it = std::next(first); it != m_open.end(); ++it) {
      marker = marker || is_one_of(*it, k_formatting_markers);
      if (is_one_of(*it, k_formatting)) still_active.push_back(*it);
    }
    m_open.erase(first, m_open.end());
    if (marker) {
      m_pending.clear();
    } else {
      m_pending.insert(m_pending.end(), still_active.begin(), still_active.end());
    }
  }

  std::vector<std::string> m_open;
  std::vector<std::string> m_pending;
};

bool is_tag_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == ':';
}

// The index of the '>' that ends the tag whose name ends at `i`, quoted attribute values skipped.
std::size_t tag_end(std::string_view body, std::size_t i) {
  char quote = 0;
  char previous = 0;
  for (; i < body.size(); ++i) {
    const char c = body[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if ((c == '"' || c == '\'') && previous == '=') {
      quote = c;
    } else if (c == '>') {
      return i;
    }
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f') previous = c;
  }
  return std::string_view::npos;
}

// Where "</name" starts (any case) at or after `from`; the body's size when nowhere.
std::size_t find_end_tag(std::string_view body, const std::string& name, std::size_t from) {
  for (auto i = body.find("</", from); i != std::string_view::npos; i = body.find("</", i + 2)) {
    if (ascii_lower(body.substr(i + 2, name.size())) == name) return i;
  }
  return body.size();
}

void check_html_depth(std::string_view body, const std::string& page) {
  OpenElements open;
  std::size_t i = 0;
  while ((i = body.find('<', i)) != std::string_view::npos) {
    if (body.substr(i, 4) == "<!--") {
      i = body.find("-->", i + 4);
      if (i == std::string_view::npos) return;
      i += 3;
      continue;
    }
    const bool end_tag = i + 1 < body.size() && body[i + 1] == '/';
    std::size_t name_end = i + 1 + (end_tag ? 1 : 0);
    const auto name_start = name_end;
    while (name_end < body.size() && is_tag_name_char(body[name_end])) ++name_end;
    if (name_end == name_start) {  // "<!DOCTYPE", "<?", or a '<' in text
      ++i;
      continue;
    }
    const auto name = ascii_lower(body.substr(name_start, name_end - name_start));
    i = tag_end(body, name_end);
    if (i == std::string_view::npos) return;
    ++i;
    if (end_tag) {
      open.end_tag(name);
      continue;
    }
    if (name == "script" || name == "style" || name == "title" || name == "textarea") {
      i = find_end_tag(body, name, i);
      continue;
    }
    if (is_void_element(name)) continue;
    open.start_tag(name);
    if (open.depth() > k_max_html_depth) {
      throw bad_input("index page " + page + ": HTML nested deeper than " + std::to_string(k_max_html_depth) +
                      " elements");
    }
  }
}

struct GumboDeleter {
  void operator()(GumboOutput* output) const { gumbo_destroy_output(&kGumboDefaultOptions, output); }
};
using GumboTree = std::unique_ptr<GumboOutput, GumboDeleter>;

GumboTree parse_html(std::string_view body) {
  GumboOptions options = kGumboDefaultOptions;
  options.max_errors = k_gumbo_max_errors;
  GumboTree tree(gumbo_parse_with_options(&options, body.data(), body.size()));
  if (!tree) throw std::bad_alloc();
  return tree;
}

const char* attribute(const GumboElement& element, const char* name) {
  const GumboAttribute* found = gumbo_get_attribute(&element.attributes, name);
  return found == nullptr ? nullptr : found->value;
}

// What the walk of the tree finds: the links, in document order, and the elements that set the base
// and the API version (the first of each).
struct HtmlParts {
  std::vector<const GumboElement*> links;
  const char* base_href = nullptr;
  const char* api_version = nullptr;
};

void visit_element(const GumboElement& element, HtmlParts& parts, const std::string& page) {
  if (element.tag == GUMBO_TAG_A) {
    if (attribute(element, "href") == nullptr) return;
    if (parts.links.size() == k_max_links) {
      throw bad_input("index page " + page + ": more than " + std::to_string(k_max_links) + " links");
    }
    parts.links.push_back(&element);
  } else if (element.tag == GUMBO_TAG_BASE) {
    if (parts.base_href == nullptr) parts.base_href = attribute(element, "href");
  } else if (element.tag == GUMBO_TAG_META && parts.api_version == nullptr) {
    const char* name = attribute(element, "name");
    if (name != nullptr && ascii_lower(trim(name)) == "pypi:repository-version") {
      parts.api_version = attribute(element, "content");
      if (parts.api_version == nullptr) parts.api_version = "";
    }
  }
}

// Every element in document order, with an explicit stack (no recursion: depth is the page's to choose).
HtmlParts walk(const GumboNode* root, const std::string& page) {
  HtmlParts parts;
  std::vector<const GumboNode*> stack{root};
  while (!stack.empty()) {
    const GumboNode* node = stack.back();
    stack.pop_back();
    const GumboVector* children = nullptr;
    if (node->type == GUMBO_NODE_DOCUMENT) {
      children = &node->v.document.children;
    } else if (node->type == GUMBO_NODE_ELEMENT || node->type == GUMBO_NODE_TEMPLATE) {
      visit_element(node->v.element, parts, page);
      children = &node->v.element.children;
    }
    if (children == nullptr) continue;
    for (unsigned int i = children->length; i > 0; --i)
      stack.push_back(static_cast<const GumboNode*>(children->data[i - 1]));
  }
  return parts;
}

// The base of the links: the first <base href>, resolved against the final URL.
std::string link_base(const HtmlParts& parts, const std::string& final_url, const std::string& page,
                      Warnings& warnings) {
  if (parts.base_href == nullptr) return final_url;
  const auto href = std::string(trim(parts.base_href));
  if (href.empty()) return final_url;
  try {
    return net::resolve_url(final_url, href);
  } catch (const Error& e) {
    warnings.add("index page " + page + ": ignoring <base href=\"" + href + "\">: " + e.what());
    return final_url;
  }
}

std::optional<File> read_link(const GumboElement& link, const std::string& base, const std::string& page,
                              Warnings& warnings) {
  const auto href = std::string(trim(attribute(link, "href")));
  if (href.empty()) {
    warnings.add("index page " + page + ": skipping a link with an empty href");
    return std::nullopt;
  }
  const auto where = "index page " + page + ", link '" + href + "'";
  File file;
  std::string fragment;
  try {
    file.url = split_fragment(net::resolve_url(base, href), fragment);
  } catch (const Error& e) {
    warnings.add(where + ": skipped: " + e.what());
    return std::nullopt;
  }
  file.filename = filename_of(file.url);
  if (file.filename.empty()) {
    warnings.add(where + ": skipped, it names no file");
    return std::nullopt;
  }
  if (!fragment.empty()) add_hash_pair(fragment, file.hashes, where, warnings);

  if (const char* requires_python = attribute(link, "data-requires-python"); requires_python && *requires_python) {
    file.requires_python = requires_python;
  }
  if (const char* reason = attribute(link, "data-yanked")) {
    file.yanked = true;
    file.yanked_reason = reason;
  }
  const char* metadata = attribute(link, "data-core-metadata");
  if (metadata == nullptr) metadata = attribute(link, "data-dist-info-metadata");
  if (metadata != nullptr) {
    file.core_metadata = true;
    const auto value = trim(metadata);
    if (!value.empty() && ascii_lower(value) != "true")
      add_hash_pair(value, file.core_metadata_hashes, where, warnings);
  }
  return file;
}

// PEP 503 pages are UTF-8 text. Binary bytes (a NUL, or bytes that are not UTF-8) mean the server
// answered something else: an error page from a proxy, a truncated or garbled body. gumbo would read
// such bytes as a page with no links, hiding a broken index; refuse it instead.
void check_text(std::string_view body, const std::string& page) {
  std::size_t i = 0;
  while (i < body.size()) {
    const auto c = static_cast<unsigned char>(body[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = len != 0 && c != 0 && i + len <= body.size();
    for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(body[i + k]) & 0xC0) == 0x80;
    if (!ok) {
      throw bad_input(page + ": the page is not UTF-8 text (binary bytes at offset " + std::to_string(i) +
                      "): not an index page");
    }
    i += len;
  }
}

void parse_html_page(std::string_view body, const std::string& final_url, const std::string& page, ProjectPage& out,
                     Warnings& warnings) {
  check_text(body, page);
  check_html_depth(body, page);
  const auto tree = parse_html(body);
  const auto parts = walk(tree->document, page);
  if (parts.api_version != nullptr) out.api_version = parts.api_version;
  check_api_version(out.api_version, page, warnings);
  const auto base = link_base(parts, final_url, page, warnings);
  out.files.reserve(parts.links.size());
  for (const auto* link : parts.links) {
    if (auto file = read_link(*link, base, page, warnings)) out.files.push_back(std::move(*file));
  }
}

}  // namespace

std::string File::sha256() const {
  const auto it = hashes.find("sha256");
  return it == hashes.end() ? "" : it->second;
}

ProjectPage parse_project_page(std::string_view body, std::string_view content_type, const std::string& final_url,
                               const std::string& project) {
  const auto page = net::redact_url(final_url);
  ProjectPage out;
  out.name = project;
  out.url = final_url;
  out.api_version = "1.0";
  Warnings warnings(out.warnings);
  if (format_of(content_type, page) == Format::Pep691Json) {
    out.format = "json";
    parse_json_page(body, final_url, page, out, warnings);
  } else {
    out.format = "html";
    parse_html_page(body, final_url, page, out, warnings);
  }
  warnings.finish();
  return out;
}

std::string project_url(const std::string& index_url, std::string_view project) {
  std::string_view index(index_url);
  while (!index.empty() && index.back() == '/') index.remove_suffix(1);
  return std::string(index) + "/" + wheel::normalize_project_name(project) + "/";
}

}  // namespace wheelcheck::index
