// Pieces of the HTTP client (inspector/net/http.cpp) that are not the client itself: one transfer's
// description and answer, the classification helpers of the retry loop, header parsing, SIGPIPE.
#pragma once

#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>

#include <array>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "wheelcheck/net.hpp"

namespace wheelcheck::net::detail {

std::string reason_phrase(long status);
// "HTTP 404 (not found) for URL"
std::string http_failure(long status, const std::string& url);
bool retryable_status(long status);       // 408, 429, 500, 502, 503, 504
bool retryable_code(CURLcode code);       // timeouts, refused or reset connections, short answers, HTTP/2 errors
int map_http_version(long curl_version);  // 10, 11, 2, 3; 0 unknown

// The CA bundle for a libcurl built without one (the static binary runs on hosts whose bundle lives in
// different places): $SSL_CERT_FILE when set, else the first of the distributions' usual files that
// exists (Debian/Ubuntu, Fedora/RHEL, openSUSE, Alpine); "" when none does.
extern const std::vector<std::string> k_ca_bundles;
std::string find_ca_bundle(const std::vector<std::string>& candidates = k_ca_bundles);

// Content-Range: "bytes A-B/SIZE", or "bytes */SIZE" for an unsatisfiable range.
struct ContentRange {
  std::uint64_t first = 0, last = 0, size = 0;
  bool unsatisfied = false;  // "*/SIZE"
  bool size_known = true;
};
std::optional<ContentRange> parse_content_range(const std::string& value);

Validators validators_of(const std::map<std::string, std::string>& headers);
// The If-Range value of an answer: its strong ETag, else its Last-Modified ("" when neither).
std::string if_range_value(const Validators& v);
// Retry-After: delta-seconds or an HTTP-date; -1 when absent or unreadable.
long parse_retry_after(const std::string& value);

// SIGPIPE blocked in this thread for the life of the guard (OpenSSL may write to a socket the peer has
// reset; CURLOPT_NOSIGNAL keeps libcurl from changing the process-wide disposition, which is not safe with
// several threads). A SIGPIPE raised meanwhile is consumed before the old mask returns.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&m_pipe);
    sigaddset(&m_pipe, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    m_was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    m_blocked = pthread_sigmask(SIG_BLOCK, &m_pipe, &m_old) == 0;
  }
  ~SigpipeGuard() {
    if (!m_blocked) return;
    if (!m_was_pending) {
      sigset_t pending;
      sigemptyset(&pending);
      if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
        const timespec zero{0, 0};
        static_cast<void>(sigtimedwait(&m_pipe, nullptr, &zero));
      }
    }
    pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t m_pipe{};
  sigset_t m_old{};
  bool m_was_pending = false;
  bool m_blocked = false;
};

// The result of one attempt, as the retry loop sees it.
enum class Verdict { Done, Retry, Fail };
struct Judgement {
  Verdict verdict = Verdict::Done;
  std::string failure;  // for Retry and Fail
  long retry_after_s = -1;
  long status = 0;       // the HTTP status of a failed answer, 0 for a transport failure
  bool refused = false;  // nothing listens there (connection refused): tried twice at most, not max_attempts
};
// How often a refused connection is tried: once more (a server restarting), not the whole retry budget.
inline constexpr int k_refused_attempts = 2;

// One transfer: the request's description and, once performed, what came back.
struct Transfer {
  // Request.
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  bool compressed = false;           // Accept-Encoding: whatever libcurl decodes (pages only)
  std::uint64_t max_body = 0;        // 0 = no cap (the sink decides)
  std::string limit_hint;            // how to raise max_body, for the error ("" = --max-page-size)
  // Called for each body chunk of the final answer (not of redirects); returns false to stop the transfer
  // (after setting stop_ok or stop_failure). Unset: the body is collected into `body`.
  std::function<bool(Transfer&, const char*, std::size_t)> sink;

  // Response.
  CURL* curl = nullptr;
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string final_url;
  int http_version = 0;
  std::map<std::string, std::string> response_headers;
  std::string body;
  std::uint64_t received = 0;
  bool stop_ok = false;      // the sink stopped the transfer on purpose: not a failure
  std::string stop_failure;  // the sink stopped it because of this failure
  bool stop_retryable = false;
  std::exception_ptr exception;  // thrown inside a callback, rethrown after the transfer
  std::array<char, CURL_ERROR_SIZE> error_buffer{};

  long current_status() const {
    long s = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &s);
    return s;
  }
  std::string header(const std::string& name) const {
    const auto it = response_headers.find(name);
    return it == response_headers.end() ? "" : it->second;
  }
};

extern "C" std::size_t header_callback(char* data, std::size_t size, std::size_t count, void* user);
extern "C" std::size_t write_callback(char* data, std::size_t size, std::size_t count, void* user);

}  // namespace wheelcheck::net::detail
