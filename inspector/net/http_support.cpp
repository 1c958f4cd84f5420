// The HTTP client's helpers (see http_support.hpp): status words, retry classification, header parsing,
// and libcurl's header and body callbacks.
#include "inspector/net/http_support.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>

#include "wheelcheck/util.hpp"

namespace wheelcheck::net::detail {

std::string reason_phrase(long status) {
  switch (status) {
    case 400: return "bad request";
    case 401: return "unauthorized";
    case 403: return "forbidden";
    case 404: return "not found";
    case 405: return "method not allowed";
    case 406: return "not acceptable";
    case 408: return "request timeout";
    case 410: return "gone";
    case 416: return "range not satisfiable";
    case 429: return "too many requests";
    case 500: return "internal server error";
    case 502: return "bad gateway";
    case 503: return "service unavailable";
    case 504: return "gateway timeout";
    default: return status >= 500 ? "server error" : status >= 400 ? "client error" : "unexpected status";
  }
}

std::string http_failure(long status, const std::string& url) {
  return "HTTP " + std::to_string(status) + " (" + reason_phrase(status) + ") for " + redact_url(url);
}

bool retryable_status(long status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

bool retryable_code(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_COULDNT_CONNECT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return true;
    default: return false;
  }
}

const std::vector<std::string> k_ca_bundles = {
    "/etc/ssl/certs/ca-certificates.crt",                 // Debian, Ubuntu, Arch, Gentoo
    "/etc/pki/tls/certs/ca-bundle.crt",                   // Fedora, RHEL, CentOS, Alma, Rocky
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // the same, newer releases
    "/etc/ssl/ca-bundle.pem",                             // openSUSE
    "/etc/ssl/cert.pem",                                  // Alpine, macOS-like layouts
};

std::string find_ca_bundle(const std::vector<std::string>& candidates) {
  if (const char* env = std::getenv("SSL_CERT_FILE"); env != nullptr && *env != '\0') return env;
  for (const auto& c : candidates) {
    if (is_file(c)) return c;
  }
  return "";
}

int map_http_version(long v) {
  switch (v) {
    case CURL_HTTP_VERSION_1_0: return 10;
    case CURL_HTTP_VERSION_1_1: return 11;
    case CURL_HTTP_VERSION_2_0: return 2;
#ifdef CURL_HTTP_VERSION_3
    case CURL_HTTP_VERSION_3: return 3;
#endif
    default: return 0;
  }
}

std::optional<ContentRange> parse_content_range(const std::string& value) {
  const std::string v(trim(value));
  if (ascii_lower(v.substr(0, 6)) != "bytes ") return std::nullopt;
  const std::string rest(trim(v.substr(6)));
  const auto slash = rest.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const auto range = rest.substr(0, slash), total = rest.substr(slash + 1);
  auto number = [](const std::string& s, std::uint64_t& out) {
    if (s.empty() || s.size() > 19 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    out = std::stoull(s);
    return true;
  };
  ContentRange cr;
  if (total == "*") {
    cr.size_known = false;
  } else if (!number(total, cr.size)) {
    return std::nullopt;
  }
  if (range == "*") {
    cr.unsatisfied = true;
    return cr;
  }
  const auto dash = range.find('-');
  if (dash == std::string::npos || !number(range.substr(0, dash), cr.first) ||
      !number(range.substr(dash + 1), cr.last) || cr.last < cr.first) {
    return std::nullopt;
  }
  return cr;
}

Validators validators_of(const std::map<std::string, std::string>& headers) {
  Validators v;
  if (auto it = headers.find("etag"); it != headers.end()) v.etag = it->second;
  if (auto it = headers.find("last-modified"); it != headers.end()) v.last_modified = it->second;
  return v;
}

std::string if_range_value(const Validators& v) {
  if (!v.etag.empty() && v.etag.rfind("W/", 0) != 0) return v.etag;
  return v.last_modified;
}

extern "C" std::size_t header_callback(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  try {
    const std::string line(data, n);
    if (line.rfind("HTTP/", 0) == 0) {
      t.response_headers.clear();  // a new answer (after a redirect or a 100 Continue)
    } else if (const auto colon = line.find(':'); colon != std::string::npos && colon > 0) {
      t.response_headers[ascii_lower(trim(line.substr(0, colon)))] = std::string(trim(line.substr(colon + 1)));
    }
  } catch (...) {
    t.exception = std::current_exception();
    return 0;
  }
  return n;
}

extern "C" std::size_t write_callback(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  try {
    t.received += n;
    if (t.sink) return t.sink(t, data, n) ? n : 0;
    if (t.max_body != 0 && t.body.size() + n > t.max_body) {
      t.stop_failure = "the answer from " + redact_url(t.url) + " is larger than the limit of " +
                       format_size(t.max_body) + " (" + std::to_string(t.max_body) + " bytes; " +
                       (t.limit_hint.empty() ? std::string("raise it with --max-page-size") : t.limit_hint) + ")";
      return 0;
    }
    t.body.append(data, n);
  } catch (...) {
    t.exception = std::current_exception();
    return 0;
  }
  return n;
}

long parse_retry_after(const std::string& value) {
  const std::string v(trim(value));
  if (v.empty()) return -1;
  if (std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (v.size() > 9) return 1000000000L;
    return std::stol(v);
  }
  const time_t when = curl_getdate(v.c_str(), nullptr);
  if (when == -1) return -1;
  const time_t now = std::time(nullptr);
  return when > now ? static_cast<long>(when - now) : 0;
}

}  // namespace wheelcheck::net::detail
