// Package indexes: a project's page in the simple repository API, as PEP 691 JSON or PEP 503 HTML
// (decided by the response's Content-Type), with the fields of PEP 592 (yanked), PEP 658/714 (core
// metadata), PEP 700 (versions, size, upload-time) and the API version check of PEP 629.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wheelcheck::index {

// The Accept header of a project page request: JSON preferred, HTML accepted (PEP 691).
inline constexpr const char* k_accept =
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01";

// One file of a project page.
struct File {
  std::string filename;                        // as the link names it (the URL's last segment, decoded)
  std::string url;                             // absolute, without the #fragment
  std::map<std::string, std::string> hashes;   // algorithm -> lower-case hex ("sha256")
  std::optional<std::string> requires_python;  // HTML-unescaped
  bool yanked = false;
  std::string yanked_reason;  // "" when yanked without a reason
  // PEP 658/714: the core metadata is served at url + ".metadata"; its hashes when given.
  bool core_metadata = false;
  std::map<std::string, std::string> core_metadata_hashes;
  std::optional<std::uint64_t> size;       // PEP 700 (JSON only)
  std::optional<std::string> upload_time;  // PEP 700, ISO 8601 as given
  std::string sha256() const;              // hashes["sha256"] or ""
};

struct ProjectPage {
  std::string name;                   // as the page gives it (JSON "name"), else as asked
  std::string url;                    // the final URL the page came from
  std::string format;                 // "json" or "html"
  std::string api_version;            // "1.1"; "1.0" when the page does not say (PEP 629)
  std::vector<File> files;            // in page order
  std::vector<std::string> versions;  // PEP 700 (JSON with api-version >= 1.1); empty otherwise
  std::vector<std::string> warnings;  // a newer minor API version, links that could not be read, ...
};

// Parses a project page. `content_type` decides: application/vnd.pypi.simple.v1+json is JSON;
// text/html and application/vnd.pypi.simple.v1+html (or no type) are HTML, parsed by gumbo (an HTML5
// parser: entities, unquoted attributes and broken markup as a browser would read them). Links are
// resolved against <base href> when present, else `final_url`. A newer major API version (PEP 629)
// throws Error(BadInput); a newer minor adds a warning. Any other content type, or JSON that is not a
// project page, throws Error(BadInput) naming the URL.
ProjectPage parse_project_page(std::string_view body, std::string_view content_type, const std::string& final_url,
                               const std::string& project);

// The URL of a project's page on an index: "<index>/<normalized name>/" (PEP 503).
std::string project_url(const std::string& index_url, std::string_view project);

}  // namespace wheelcheck::index
