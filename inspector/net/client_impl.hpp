// Client::Impl: the state and the attempt loop behind net::Client (see http.cpp's opening comment), shared
// by http.cpp (get, stat, get_range) and download.cpp (download with resume). Private to inspector/net/;
// both files stay out of the unity batches.
#pragma once

#include <curl/curl.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "inspector/net/http_support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::net {

namespace client_detail {

using namespace detail;  // NOLINT: the client's own helpers

using Clock = std::chrono::steady_clock;

constexpr std::size_t k_max_pool = 8;  // idle handles kept for reuse
constexpr auto k_progress_interval = std::chrono::milliseconds(100);

// libcurl's global state, initialised once before the first handle.
inline void global_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw bad_input("libcurl could not be initialised");
  });
}

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

struct EasyDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
using Easy = std::unique_ptr<CURL, EasyDeleter>;

}  // namespace client_detail

using namespace client_detail;  // NOLINT

struct Client::Impl {
  ClientOptions options;
  std::string user_agent;
  std::string netrc_file;  // "" = none

  std::mutex mutex;  // everything below
  Stats stats;
  std::vector<Easy> idle;
  std::map<std::string, int> http2_failures;
  std::set<std::string> http1_hosts;
  std::mt19937_64 random{std::random_device{}()};

  explicit Impl(ClientOptions o) : options(std::move(o)) {
    global_init();
    user_agent = options.user_agent;
    if (user_agent.empty()) {
      user_agent = std::string("wheelcheck/") + WHEELCHECK_VERSION + " (libcurl/" +
                   curl_version_info(CURLVERSION_NOW)->version + ")";
    }
    std::string netrc = options.netrc_file;
    if (netrc.empty()) netrc = getenv_or("NETRC", "");
    if (netrc.empty()) {
      const auto home = getenv_or("HOME", "");
      if (!home.empty()) netrc = home + "/.netrc";
    }
    std::error_code ec;
    if (!netrc.empty() && std::filesystem::is_regular_file(netrc, ec)) netrc_file = netrc;
    if (options.max_attempts < 1) options.max_attempts = 1;
    // A libcurl without a CA bundle of its own (the static build's) verifies with the host's.
    const auto* info = curl_version_info(CURLVERSION_NOW);
    if (options.ca_file.empty() && info->cainfo == nullptr && info->capath == nullptr) {
      options.ca_file = find_ca_bundle();
    }
  }

  void log(const std::string& message) {
    if (options.log) options.log(message);
  }

  // A handle from the pool (or a new one), its options reset; back into the pool when the lease ends.
  class Lease {
   public:
    explicit Lease(Impl& impl) : m_impl(impl) {
      {
        std::lock_guard lock(impl.mutex);
        if (!impl.idle.empty()) {
          m_easy = std::move(impl.idle.back());
          impl.idle.pop_back();
        }
      }
      if (!m_easy) {
        m_easy.reset(curl_easy_init());
        if (!m_easy) throw std::bad_alloc();
      }
      curl_easy_reset(m_easy.get());
    }
    ~Lease() {
      std::lock_guard lock(m_impl.mutex);
      if (!m_discard && m_impl.idle.size() < k_max_pool) m_impl.idle.push_back(std::move(m_easy));
    }
    // Not back into the pool: its cached connections (an HTTP/2 one to a host now on HTTP/1.1) go with it.
    void discard() { m_discard = true; }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    CURL* get() const { return m_easy.get(); }

   private:
    Impl& m_impl;
    Easy m_easy;
    bool m_discard = false;
  };

  bool use_http1(const std::string& host) {
    if (!options.http2) return true;
    std::lock_guard lock(mutex);
    return http1_hosts.count(host) != 0;
  }

  // One attempt of `t`: performs it and fills the response half.
  void perform(Transfer& t) {
    Lease lease(*this);
    CURL* c = lease.get();
    t.curl = c;
    t.code = CURLE_OK;
    t.status = 0;
    t.response_headers.clear();
    t.body.clear();
    t.received = 0;
    t.stop_ok = false;
    t.stop_failure.clear();
    t.stop_retryable = false;
    t.exception = nullptr;
    t.error_buffer[0] = '\0';

    const auto host = url_host(t.url);
    const bool http1 = use_http1(host);
    Slist headers;
    for (const auto& h : t.headers) {
      curl_slist* next = curl_slist_append(headers.get(), h.c_str());
      if (next == nullptr) throw std::bad_alloc();
      static_cast<void>(headers.release());
      headers.reset(next);
    }

    curl_easy_setopt(c, CURLOPT_URL, t.url.c_str());
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, t.error_buffer.data());
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, options.max_redirects);
    curl_easy_setopt(c, CURLOPT_UNRESTRICTED_AUTH, 0L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, options.connect_timeout_s);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, options.low_speed_limit);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, options.low_speed_time_s);
    curl_easy_setopt(c, CURLOPT_USERAGENT, user_agent.c_str());
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION,
                     static_cast<long>(http1 ? CURL_HTTP_VERSION_1_1 : CURL_HTTP_VERSION_2TLS));
    if (!netrc_file.empty()) {
      curl_easy_setopt(c, CURLOPT_NETRC, static_cast<long>(CURL_NETRC_OPTIONAL));
      curl_easy_setopt(c, CURLOPT_NETRC_FILE, netrc_file.c_str());
    }
    if (!options.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options.ca_file.c_str());
    if (t.compressed) curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_callback);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_callback);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);

    {
      SigpipeGuard guard;
      t.code = curl_easy_perform(c);
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &t.status);
    char* effective = nullptr;
    if (curl_easy_getinfo(c, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective != nullptr) {
      t.final_url = effective;
    } else {
      t.final_url = t.url;
    }
    long version = 0;
    curl_easy_getinfo(c, CURLINFO_HTTP_VERSION, &version);
    t.http_version = map_http_version(version);
    // Unhook the callbacks' pointers to `t` and the header list before the handle goes back to the pool.
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);
    t.curl = nullptr;

    long redirects = 0;
    curl_easy_getinfo(c, CURLINFO_REDIRECT_COUNT, &redirects);
    {
      std::lock_guard lock(mutex);
      stats.requests += 1 + static_cast<std::uint64_t>(std::max(0L, redirects));
      stats.bytes_received += t.received;
      if (t.status == 304) ++stats.not_modified;
    }
    if (t.exception) std::rethrow_exception(t.exception);

    // HTTP/2 trouble on this host: count it, and move the host to HTTP/1.1 when it adds up.
    // A connection dropped before any answer tells no protocol (http_version 0): on https, where HTTP/2 was
    // offered, it counts too (a server that sends GOAWAY and closes is seen that way, depending on timing).
    const bool dropped =
        retryable_code(t.code) && t.code != CURLE_OPERATION_TIMEDOUT && t.code != CURLE_COULDNT_CONNECT;
    const bool h2_error =
        t.code == CURLE_HTTP2 || t.code == CURLE_HTTP2_STREAM ||
        (dropped && (t.http_version == 2 || (t.http_version == 0 && t.url.rfind("https://", 0) == 0)));
    if (h2_error && !http1 && !host.empty()) {
      bool fell_back = false;
      int failures = 0;
      {
        std::lock_guard lock(mutex);
        failures = ++http2_failures[host];
        if (failures >= options.http2_failures_before_http1 && http1_hosts.insert(host).second) {
          ++stats.http1_fallbacks;
          fell_back = true;
          idle.clear();  // no pooled handle may reuse an HTTP/2 connection to the host
        }
      }
      if (fell_back) {
        lease.discard();
        log("HTTP/2 failed " + std::to_string(failures) + " times on " + host + "; using HTTP/1.1 for it from now on");
      }
    }
  }

  // The common classification of a performed transfer (see the top of the file).
  static Judgement judge(const Transfer& t, bool allow_304) {
    Judgement j;
    if (!t.stop_failure.empty()) {
      j.verdict = t.stop_retryable ? Verdict::Retry : Verdict::Fail;
      j.failure = t.stop_failure;
      return j;
    }
    // A transfer the sink stopped on purpose is judged by its status alone.
    if (t.code != CURLE_OK && !(t.code == CURLE_WRITE_ERROR && t.stop_ok)) {
      std::string detail = t.error_buffer[0] != '\0' ? std::string(t.error_buffer.data()) : curl_easy_strerror(t.code);
      if (t.code == CURLE_TOO_MANY_REDIRECTS) {
        j.verdict = Verdict::Fail;
        j.failure = "a redirect loop (more redirects than the limit; raise it with --max-redirects): " + detail;
        return j;
      }
      j.verdict = retryable_code(t.code) ? Verdict::Retry : Verdict::Fail;
      j.refused = t.code == CURLE_COULDNT_CONNECT;
      j.failure = detail + " (" + curl_easy_strerror(t.code) + ")";
      if (t.code == CURLE_OPERATION_TIMEDOUT && t.status != 0) {
        j.failure += ": a body slower than the low-speed limit for --low-speed-time seconds";
      }
      return j;
    }
    if ((t.status >= 200 && t.status < 300) || (allow_304 && t.status == 304)) return j;
    j.failure = http_failure(t.status, t.final_url);
    j.status = t.status;
    if (retryable_status(t.status)) {
      j.verdict = Verdict::Retry;
      j.retry_after_s = parse_retry_after(t.header("retry-after"));
    } else {
      j.verdict = Verdict::Fail;
    }
    return j;
  }

  // Runs `attempt` until it is Done, Fails, or the attempts are spent; throws Error(BadInput) for the last two.
  void with_retries(const std::string& what, const std::string& url, const std::function<Judgement()>& attempt) {
    std::string last;
    for (int n = 1;; ++n) {
      const Judgement j = attempt();
      if (j.verdict == Verdict::Done) return;
      last = j.failure;
      const std::string attempts = std::to_string(n) + (n == 1 ? " attempt" : " attempts");
      if (j.verdict == Verdict::Fail) {
        const std::string message = what + " " + redact_url(url) + " failed: " + last + " (" + attempts + ")";
        if (j.status == 404 || j.status == 410) throw NotFound(message);
        throw bad_input(message);
      }
      if (j.refused && n >= std::min(options.max_attempts, k_refused_attempts)) {
        throw bad_input(what + " " + redact_url(url) + " failed: " + last + " (" + attempts +
                        ": nothing listens there, so it is not retried further)");
      }
      if (n >= options.max_attempts) {
        throw bad_input(what + " " + redact_url(url) + " failed after " + attempts + "; the last failure: " + last);
      }
      if (j.retry_after_s > options.retry_after_max_s) {
        throw bad_input(what + " " + redact_url(url) + " failed: " + last + "; the server asks to retry after " +
                        std::to_string(j.retry_after_s) + " s, more than the limit of " +
                        std::to_string(options.retry_after_max_s) + " s (" + attempts + ")");
      }
      long delay_ms = 0;
      if (j.retry_after_s >= 0) {
        delay_ms = j.retry_after_s * 1000;
      } else {
        const int shift = std::min(n - 1, 30);
        const long ceiling = std::min(options.backoff_max_ms, options.backoff_initial_ms << shift);
        std::lock_guard lock(mutex);
        delay_ms = std::uniform_int_distribution<long>(0, std::max(0L, ceiling))(random);
      }
      {
        std::lock_guard lock(mutex);
        ++stats.retries;
      }
      log("retrying " + redact_url(url) + " in " + std::to_string(delay_ms) + " ms (attempt " + std::to_string(n + 1) +
          " of " + std::to_string(options.max_attempts) + "): " + last);
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    }
  }
};

}  // namespace wheelcheck::net
