// The HTTP client (libcurl): index pages, byte ranges of remote wheels, whole downloads. Built to survive
// a flaky network: timeouts, a low-speed limit, retries with exponential backoff and jitter (honouring
// Retry-After), HTTP/1.1 for a host whose HTTP/2 streams keep failing, resumed downloads checked with
// If-Range and Content-Range, and every wheel verified against its sha256 before it reaches the cache.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wheelcheck/error.hpp"

namespace wheelcheck::net {

struct ClientOptions {
  long connect_timeout_s = 15;
  long low_speed_limit = 1024;  // bytes per second, below which for low_speed_time_s a transfer fails
  long low_speed_time_s = 30;
  int max_attempts = 6;           // one try and five retries
  long backoff_initial_ms = 500;  // doubled each retry, with full jitter, up to backoff_max_ms
  long backoff_max_ms = 30000;
  long retry_after_max_s = 300;         // a longer Retry-After is an error, not a wait
  int http2_failures_before_http1 = 2;  // HTTP/2 stream errors on one host before HTTP/1.1 for it
  long max_redirects = 10;
  std::uint64_t max_page_bytes = std::uint64_t{64} << 20;      // an index page larger than this is refused
  std::uint64_t max_download_bytes = std::uint64_t{16} << 30;  // a whole download (a wheel) larger than this
  std::string netrc_file;                                      // "" = $NETRC, else ~/.netrc (optional: absence is fine)
  std::string user_agent;                                      // "" = "wheelcheck/<version> (libcurl/<version>)"
  bool http2 = true;    // try HTTP/2 (over TLS; h2c is never attempted on http://)
  std::string ca_file;  // extra CA bundle, for tests with a self-signed server
  // Each retry and each fallback, for people (progress line, --verbose).
  std::function<void(const std::string&)> log;
};

// What every request did, for progress lines, tests and benchmarks.
struct Stats {
  std::uint64_t requests = 0;  // HTTP requests sent, retries included
  std::uint64_t retries = 0;
  std::uint64_t bytes_received = 0;   // body bytes, all requests
  std::uint64_t not_modified = 0;     // 304 answers
  std::uint64_t http1_fallbacks = 0;  // hosts moved to HTTP/1.1
};

// The validators of an earlier answer, for a conditional request (If-None-Match / If-Modified-Since).
struct Validators {
  std::string etag;
  std::string last_modified;
  bool empty() const { return etag.empty() && last_modified.empty(); }
};

struct Response {
  long status = 0;                             // the final status; 304 when the validators still hold
  std::string url;                             // the final URL, after redirects
  std::string content_type;                    // as sent, parameters included
  Validators validators;                       // ETag / Last-Modified of this answer
  std::string body;                            // empty on 304
  std::map<std::string, std::string> headers;  // lower-case names, last value wins
  int http_version = 0;                        // 11 or 2 (20), as libcurl reports the protocol used
  bool not_modified() const { return status == 304; }
};

// A remote file's size and whether its server answers byte ranges (learnt from a 206 to a one-byte
// range request, never from Accept-Ranges alone).
struct RemoteFile {
  std::string url;  // final, after redirects
  std::uint64_t size = 0;
  bool ranges = false;
  Validators validators;  // for If-Range: a strong ETag, else Last-Modified
};

// What a caller adds to one request: headers (Authorization for a registry), statuses answered rather
// than thrown (a 401 whose WWW-Authenticate says how to log in), and a cap on the body below the client's.
struct RequestOptions {
  std::vector<std::string> headers;  // "Name: value"
  std::vector<long> pass_statuses;   // returned as the Response, not thrown (get only)
  std::uint64_t max_bytes = 0;       // 0: the client's limit (max_page_bytes, max_download_bytes)
  std::string limit_hint;            // how to raise max_bytes, for the error ("" = the client's option)
};

struct DownloadProgress {
  std::string what;
  std::uint64_t done = 0;
  std::uint64_t total = 0;  // 0 when unknown
  double bytes_per_second = 0;
};

// A 404 or 410: the URL names nothing (a project that is not on this index). A BadInput error.
class NotFound : public Error {
 public:
  explicit NotFound(const std::string& message) : Error(ErrorKind::BadInput, message) {}
};

class Client {
 public:
  explicit Client(ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // GET with the given Accept header and, when given, validators. Retries as described above; throws
  // Error(BadInput) once the retries are spent, naming the URL, the last failure and the attempts made.
  // A 4xx other than 408/429 is not retried: it throws at once (404 says "not found").
  Response get(const std::string& url, const std::string& accept = "*/*", const Validators& validators = {});
  Response get(const std::string& url, const std::string& accept, const Validators& validators,
               const RequestOptions& request);

  // The size and range support of a file (GET bytes=0-0, falling back to the 200 answer's length).
  RemoteFile stat(const std::string& url);
  // The same in a request that also brings the file's last `suffix` bytes (GET bytes=-N): the size, range
  // support and a zip's central directory in one answer; a file of at most `suffix` bytes arrives whole.
  // `tail` receives those bytes (empty when the server answered without them). A server that refuses
  // suffix ranges (416 on a file that is not empty, 501, an unusable Content-Range) gets stat()'s request.
  RemoteFile stat_with_tail(const std::string& url, std::uint64_t suffix, std::string& tail);

  // Bytes [offset, offset+length) of `file`. Sends Range and If-Range (the file's validator); requires a
  // 206 whose Content-Range names exactly that range and the file's size; a 200 (the file changed, or
  // ranges are not honoured) throws Error(BadInput). Retried like get().
  std::string get_range(const RemoteFile& file, std::uint64_t offset, std::uint64_t length);

  // The whole file into `dest`, atomically: bytes go to `dest + ".part"` (kept between runs with its
  // validator beside it, `dest + ".part.json"`), a retry or a later run resumes it with Range + If-Range
  // (a 200 answer starts over), and only when the sha256 (hex) matches is it renamed to `dest`. A
  // mismatch deletes the partial file and throws Error(BadInput): bad bytes never reach `dest`.
  // `expected_sha256` "" skips the check (the caller then says the file is unverified).
  void download(const std::string& url, const std::string& dest, const std::string& expected_sha256,
                const std::function<void(const DownloadProgress&)>& progress = {});
  // The same with the request's headers and cap (a registry's blob: its Authorization, its declared size).
  void download(const std::string& url, const std::string& dest, const std::string& expected_sha256,
                const std::function<void(const DownloadProgress&)>& progress, const RequestOptions& request);

  const Stats& stats() const;
  const ClientOptions& options() const;  // what it was made with (a bounded copy starts from these)

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// libcurl's URL parser: `reference` resolved against `base` as RFC 3986 says (relative links of an index
// page against its final URL or its <base href>). Throws Error(BadInput) for an unparseable URL.
std::string resolve_url(const std::string& base, const std::string& reference);
// The host of a URL ("" when it has none): the unit of the HTTP/2 fallback and of credentials.
std::string url_host(const std::string& url);
// The URL with any user:password removed, for printing and for reports.
std::string redact_url(const std::string& url);
bool is_url(const std::string& text);  // http:// or https://
// WHEELCHECK_OFFLINE is set and not "0": no lookup opens a socket (an environment's indexes, an image's
// published distributions); each place not asked says so.
bool offline();

}  // namespace wheelcheck::net
