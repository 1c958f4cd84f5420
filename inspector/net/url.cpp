// URLs through libcurl's own parser (CURLU), so that what we resolve is what libcurl will request.
#include <curl/curl.h>

#include <memory>

#include "wheelcheck/error.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::net {

namespace {

struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
using Url = std::unique_ptr<CURLU, UrlDeleter>;

struct CurlFree {
  void operator()(char* p) const { curl_free(p); }
};

Url parse(const std::string& text) {
  Url u(curl_url());
  if (!u) throw std::bad_alloc();
  if (const auto rc = curl_url_set(u.get(), CURLUPART_URL, text.c_str(), 0); rc != CURLUE_OK) {
    throw bad_input("not a URL: '" + redact_url(text) + "' (" + curl_url_strerror(rc) + ")");
  }
  return u;
}

std::string part(CURLU* u, CURLUPart which) {
  char* raw = nullptr;
  if (curl_url_get(u, which, &raw, 0) != CURLUE_OK || raw == nullptr) return "";
  std::unique_ptr<char, CurlFree> owned(raw);
  return raw;
}

}  // namespace

bool offline() {
  const std::string v = getenv_or("WHEELCHECK_OFFLINE", "");
  return !v.empty() && v != "0";
}

bool is_url(const std::string& text) {
  return text.rfind("http://", 0) == 0 || text.rfind("https://", 0) == 0;
}

std::string resolve_url(const std::string& base, const std::string& reference) {
  auto u = parse(base);
  if (const auto rc = curl_url_set(u.get(), CURLUPART_URL, reference.c_str(), 0); rc != CURLUE_OK) {
    throw bad_input("cannot resolve '" + reference + "' against " + redact_url(base) + " (" + curl_url_strerror(rc) +
                    ")");
  }
  return part(u.get(), CURLUPART_URL);
}

std::string url_host(const std::string& url) {
  try {
    auto u = parse(url);
    return part(u.get(), CURLUPART_HOST);
  } catch (const Error&) {
    return "";
  }
}

std::string redact_url(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const auto start = scheme + 3;
  const auto end = url.find_first_of("/?#", start);
  const auto at = url.rfind('@', end == std::string::npos ? url.size() : end);
  if (at == std::string::npos || at < start) return url;
  return url.substr(0, start) + "***@" + url.substr(at + 1);
}

}  // namespace wheelcheck::net
