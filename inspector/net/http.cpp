/*
 * The HTTP client of wheelcheck (libcurl's easy interface).
 *
 * Every operation (get, stat, get_range, download) is one loop of attempts around a single libcurl
 * transfer:
 *
 *   1. An easy handle is leased from a small pool (handles keep libcurl's connection cache, so requests to
 *      one host reuse their connection); a lease resets the handle's options, never its connections. The
 *      pool and all shared state (stats, the per-host HTTP/2 record, the jitter generator) sit behind one
 *      mutex, so every method may be called from several threads at once; each thread gets its own handle
 *      (stats() hands out a reference to counters other threads may still be updating: read it when no
 *      request is in flight). SIGPIPE is blocked in the calling thread during a transfer, never ignored
 *      process-wide. download() to one `dest` from two threads at once is not supported.
 *   2. The common options: connect timeout, low-speed limit (the only timeout of a body, so a large download
 *      is never cut by a wall clock), redirects (http/https only, at most max_redirects; credentials from
 *      the URL are never sent to another host: CURLOPT_UNRESTRICTED_AUTH stays off), optional .netrc,
 *      the User-Agent, and HTTP/2 over TLS unless the host has been moved to HTTP/1.1.
 *   3. The answer is classified. Done: a 2xx (or a 304 to a conditional GET). Retry: a timeout, a refused or
 *      reset connection, an empty or short answer, an HTTP/2 framing or stream error, or HTTP 408, 429,
 *      500, 502, 503, 504. Fail at once: anything else (a 404 says "not found"), a redirect loop, a body over
 *      its cap, a 200 where a 206 was required.
 *   4. A retry waits with exponential backoff and full jitter: a uniform draw in [0, min(max, initial *
 *      2^(n-1))] milliseconds, or what Retry-After asks (delta-seconds or an HTTP-date) when the server says;
 *      a Retry-After over retry_after_max_s is an error rather than a wait. Each retry is logged.
 *   5. HTTP/2 failures are counted per host; after http2_failures_before_http1 of them the host uses
 *      HTTP/1.1 for the rest of the Client's life (logged once, stats.http1_fallbacks). The host is the one
 *      of the URL asked for (after a redirect to another host, the first host's choice applies).
 *
 * download() keeps `dest.part` and `dest.part.json` ({url (redacted), validator, bytes}); each attempt asks
 * for the rest of the part with Range + If-Range (the validator: a strong ETag, else Last-Modified). A 206
 * must start exactly where the part ends; a 200 means the file changed (or ranges are not honoured): the
 * part is truncated and the hash restarted. The sha256 is computed while writing (after hashing the bytes
 * already in the part), and only a match is fsynced and renamed into place; a mismatch removes both part
 * files.
 */
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

namespace {

using namespace detail;  // NOLINT: the client's own helpers
using Clock = std::chrono::steady_clock;

constexpr std::size_t k_max_pool = 8;  // idle handles kept for reuse
constexpr auto k_progress_interval = std::chrono::milliseconds(100);

// libcurl's global state, initialised once before the first handle.
void global_init() {
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

}  // namespace

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

Client::Client(ClientOptions options) : m_impl(std::make_unique<Impl>(std::move(options))) {}
Client::~Client() = default;

const Stats& Client::stats() const {
  return m_impl->stats;
}

Response Client::get(const std::string& url, const std::string& accept, const Validators& validators) {
  auto& impl = *m_impl;
  Transfer t;
  t.url = url;
  t.compressed = true;
  t.max_body = impl.options.max_page_bytes;
  t.headers.push_back("Accept: " + (accept.empty() ? std::string("*/*") : accept));
  if (!validators.etag.empty()) t.headers.push_back("If-None-Match: " + validators.etag);
  if (!validators.last_modified.empty()) t.headers.push_back("If-Modified-Since: " + validators.last_modified);
  impl.with_retries("GET", url, [&] {
    impl.perform(t);
    return Impl::judge(t, !validators.empty());
  });
  Response r;
  r.status = t.status;
  r.url = t.final_url;
  r.headers = t.response_headers;
  r.content_type = t.header("content-type");
  r.validators = validators_of(t.response_headers);
  if (r.status == 304) {
    // A 304 may omit the validators; the caller's still hold.
    if (r.validators.empty()) r.validators = validators;
  } else {
    r.body = std::move(t.body);
  }
  r.http_version = t.http_version;
  return r;
}

namespace {

// A file's size, range support and validators from a 206 or 200 answer to a probe (stat, stat_with_tail).
RemoteFile remote_file_of(const Transfer& t) {
  RemoteFile f;
  f.url = t.final_url;
  const auto v = validators_of(t.response_headers);
  f.validators.etag = (!v.etag.empty() && v.etag.rfind("W/", 0) != 0) ? v.etag : "";
  f.validators.last_modified = v.last_modified;
  if (t.status == 206) {
    f.ranges = true;
    f.size = parse_content_range(t.header("content-range"))->size;
  } else if (t.status == 200) {
    f.ranges = false;
    const auto length = t.header("content-length");
    if (!length.empty() && length.size() <= 19 &&
        std::all_of(length.begin(), length.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      f.size = std::stoull(length);
    }  // else 0: unknown (a chunked answer)
  }
  return f;
}

}  // namespace

RemoteFile Client::stat(const std::string& url) {
  auto& impl = *m_impl;
  Transfer t;
  t.url = url;
  t.headers.push_back("Range: bytes=0-0");
  t.headers.push_back("Accept-Encoding: identity");
  t.sink = [](Transfer& tr, const char* data, std::size_t n) {
    const long status = tr.current_status();
    if (status == 200) {  // no ranges: the length is in the headers; the body is not wanted
      tr.stop_ok = true;
      return false;
    }
    if (tr.body.size() + n > 4096) {  // a 206 to bytes=0-0 is one byte; an error page is small
      tr.stop_ok = status >= 300;
      if (!tr.stop_ok) tr.stop_failure = "an answer to a one-byte range that does not end";
      return false;
    }
    tr.body.append(data, n);
    return true;
  };
  impl.with_retries("GET", url, [&] {
    impl.perform(t);
    auto j = Impl::judge(t, false);
    if (j.verdict == Verdict::Fail && t.status == 416) {
      // An empty file: "bytes */0".
      const auto cr = parse_content_range(t.header("content-range"));
      if (cr && cr->unsatisfied && cr->size_known && cr->size == 0) return Judgement{};
    }
    if (j.verdict != Verdict::Done) return j;
    if (t.status == 206) {
      const auto cr = parse_content_range(t.header("content-range"));
      if (!cr || cr->unsatisfied || !cr->size_known || cr->first != 0 || cr->last != 0) {
        j.verdict = Verdict::Fail;
        j.failure = "a 206 answer with an unusable Content-Range '" + t.header("content-range") + "'";
      }
    } else if (t.status != 200) {
      j.verdict = Verdict::Fail;
      j.failure = http_failure(t.status, t.final_url);
    }
    return j;
  });
  return remote_file_of(t);
}

RemoteFile Client::stat_with_tail(const std::string& url, std::uint64_t suffix, std::string& tail) {
  tail.clear();
  if (suffix == 0) return stat(url);
  auto& impl = *m_impl;
  Transfer t;
  t.url = url;
  t.headers.push_back("Range: bytes=-" + std::to_string(suffix));
  t.headers.push_back("Accept-Encoding: identity");
  t.sink = [suffix](Transfer& tr, const char* data, std::size_t n) {
    const long status = tr.current_status();
    if (status == 200) {  // no ranges: the length is in the headers; the body is not wanted here
      tr.stop_ok = true;
      return false;
    }
    const std::uint64_t most = status == 206 ? suffix : 4096;  // an error page is small
    if (tr.body.size() + n > most) {
      tr.stop_ok = status >= 300;
      if (!tr.stop_ok) tr.stop_failure = "an answer to a suffix range longer than the range";
      return false;
    }
    tr.body.append(data, n);
    return true;
  };
  bool refused = false;
  impl.with_retries("GET", url, [&] {
    impl.perform(t);
    auto j = Impl::judge(t, false);
    if (j.verdict == Verdict::Fail && (t.status == 416 || t.status == 501)) {
      refused = true;  // stat() below tells an empty file from a server that refuses suffixes
      return Judgement{};
    }
    if (j.verdict != Verdict::Done) return j;
    if (t.status == 206) {
      const auto cr = parse_content_range(t.header("content-range"));
      if (!cr || cr->unsatisfied || !cr->size_known || cr->last + 1 != cr->size ||
          cr->last - cr->first + 1 != std::min(suffix, cr->size) || t.body.size() != cr->last - cr->first + 1) {
        refused = true;  // not the suffix asked for: ask the plain way
      }
    } else if (t.status != 200) {
      j.verdict = Verdict::Fail;
      j.failure = http_failure(t.status, t.final_url);
    }
    return j;
  });
  if (refused) return stat(url);
  auto f = remote_file_of(t);
  if (t.status == 206) tail = std::move(t.body);
  return f;
}

std::string Client::get_range(const RemoteFile& file, std::uint64_t offset, std::uint64_t length) {
  if (length == 0) return "";
  if (offset > file.size || length > file.size - offset) {
    throw bad_input("range " + std::to_string(offset) + "+" + std::to_string(length) + " is outside " +
                    redact_url(file.url) + " (" + std::to_string(file.size) + " bytes)");
  }
  auto& impl = *m_impl;
  const std::uint64_t last = offset + length - 1;
  const std::string expected =
      "bytes " + std::to_string(offset) + "-" + std::to_string(last) + "/" + std::to_string(file.size);
  Transfer t;
  t.url = file.url;
  t.headers.push_back("Range: bytes=" + std::to_string(offset) + "-" + std::to_string(last));
  t.headers.push_back("Accept-Encoding: identity");
  if (const auto v = if_range_value(file.validators); !v.empty()) t.headers.push_back("If-Range: " + v);
  t.sink = [length](Transfer& tr, const char* data, std::size_t n) {
    const long status = tr.current_status();
    if (status == 200) {
      tr.stop_failure = "the server answered 200 (the whole file) to a range request for " + redact_url(tr.url) +
                        ": the file changed or ranges are not honoured";
      return false;
    }
    if (status == 206 && tr.body.size() + n > length) {
      tr.stop_failure = "the server sent more than the " + std::to_string(length) + " bytes asked for";
      return false;
    }
    if (tr.body.size() + n > std::max<std::uint64_t>(length, 65536)) {
      tr.stop_ok = true;  // an error page that does not end; the status says what happened
      return false;
    }
    tr.body.append(data, n);
    return true;
  };
  impl.with_retries("GET", file.url, [&] {
    impl.perform(t);
    auto j = Impl::judge(t, false);
    if (j.verdict != Verdict::Done) return j;
    if (t.status != 206) {
      j.verdict = Verdict::Fail;
      j.failure = "HTTP " + std::to_string(t.status) + " where a 206 (partial content) was required";
    } else if (trim(t.header("content-range")) != expected) {
      j.verdict = Verdict::Fail;
      j.failure = "Content-Range '" + t.header("content-range") + "' where '" + expected + "' was asked for";
    } else if (t.body.size() != length) {
      j.verdict = Verdict::Retry;
      j.failure = "a short range: " + std::to_string(t.body.size()) + " of " + std::to_string(length) + " bytes";
    }
    return j;
  });
  return std::move(t.body);
}

namespace {

// The part file of a download: an open descriptor, its length, and the hash of its bytes so far.
class PartFile {
 public:
  explicit PartFile(const std::string& path) : m_path(path) {
    m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (m_fd < 0) throw io_error("cannot open " + path);
  }
  ~PartFile() { close(); }
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  // Hashes what the file holds and positions at its end (a resume).
  void adopt() {
    m_hasher = std::make_unique<Hasher>("sha256");
    m_size = 0;
    std::vector<char> buf(std::size_t{1} << 20);
    if (::lseek(m_fd, 0, SEEK_SET) < 0) throw io_error("cannot seek " + m_path);
    for (;;) {
      const auto n = ::read(m_fd, buf.data(), buf.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        throw io_error("cannot read " + m_path);
      }
      if (n == 0) break;
      m_hasher->update(buf.data(), static_cast<std::size_t>(n));
      m_size += static_cast<std::uint64_t>(n);
    }
  }
  // Empties the file and restarts the hash (a 200 answer, or a fresh start).
  void truncate() {
    if (::ftruncate(m_fd, 0) != 0) throw io_error("cannot truncate " + m_path);
    if (::lseek(m_fd, 0, SEEK_SET) < 0) throw io_error("cannot seek " + m_path);
    m_hasher = std::make_unique<Hasher>("sha256");
    m_size = 0;
  }
  void append(const char* data, std::size_t n) {
    std::size_t done = 0;
    while (done < n) {
      const auto w = ::write(m_fd, data + done, n - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw io_error("cannot write " + m_path);
      }
      done += static_cast<std::size_t>(w);
    }
    m_hasher->update(data, n);
    m_size += n;
  }
  std::uint64_t size() const { return m_size; }
  std::string finish_hex() { return to_hex(m_hasher->finish()); }
  void sync() {
    if (::fsync(m_fd) != 0) throw io_error("cannot fsync " + m_path);
  }
  void close() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
  }

 private:
  std::string m_path;
  int m_fd = -1;
  std::uint64_t m_size = 0;
  std::unique_ptr<Hasher> m_hasher;
};

struct PartState {
  std::string url;        // redacted
  std::string validator;  // for If-Range
  std::uint64_t bytes = 0;
};

std::optional<PartState> read_part_state(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  try {
    const auto doc = nlohmann::json::parse(read_text_file(path, 1 << 20));
    PartState s;
    s.url = doc.at("url").get<std::string>();
    s.validator = doc.at("validator").get<std::string>();
    s.bytes = doc.at("bytes").get<std::uint64_t>();
    return s;
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable: start over
  }
}

void write_part_state(const std::string& path, const PartState& s) {
  nlohmann::json doc = {{"url", s.url}, {"validator", s.validator}, {"bytes", s.bytes}};
  write_file_atomic(path, doc.dump() + "\n");
}

void remove_quietly(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

}  // namespace

void Client::download(const std::string& url, const std::string& dest, const std::string& expected_sha256,
                      const std::function<void(const DownloadProgress&)>& progress) {
  auto& impl = *m_impl;
  const std::string part_path = dest + ".part";
  const std::string state_path = dest + ".part.json";
  const std::string redacted = redact_url(url);

  PartState state;
  state.url = redacted;
  const auto previous = read_part_state(state_path);
  const bool resumable = previous && previous->url == redacted && !previous->validator.empty();
  PartFile part(part_path);
  if (resumable) {
    part.adopt();
    state.validator = previous->validator;
  } else {
    part.truncate();
  }
  state.bytes = part.size();

  std::uint64_t total = 0;
  const auto started = Clock::now();
  auto last_report = Clock::time_point{};
  std::uint64_t session_bytes = 0;
  auto report = [&](bool force) {
    if (!progress) return;
    const auto now = Clock::now();
    if (!force && now - last_report < k_progress_interval) return;
    last_report = now;
    const double seconds = std::chrono::duration<double>(now - started).count();
    DownloadProgress p;
    p.what = redacted;
    p.done = part.size();
    p.total = total;
    p.bytes_per_second = seconds > 0 ? static_cast<double>(session_bytes) / seconds : 0.0;
    progress(p);
  };

  bool complete = false;  // a 416 to a resume: the part already holds the whole file
  Transfer t;
  t.url = url;
  bool started_body = false;
  t.sink = [&](Transfer& tr, const char* data, std::size_t n) {
    const long status = tr.current_status();
    if (status < 200 || status >= 300) return true;  // an error page: the status is judged afterwards
    if (!started_body) {
      started_body = true;
      if (status == 206) {
        const auto cr = parse_content_range(tr.header("content-range"));
        if (!cr || cr->unsatisfied || cr->first != part.size()) {
          tr.stop_failure = "a 206 answer whose Content-Range '" + tr.header("content-range") +
                            "' does not continue the " + std::to_string(part.size()) + " bytes already here";
          tr.stop_retryable = true;
          part.truncate();  // the next attempt starts over
          return false;
        }
        if (cr->size_known) total = cr->size;
      } else {
        if (part.size() != 0) {
          impl.log("restarting " + redacted + " from the beginning: the server sent the whole file");
          part.truncate();
        }
        const auto length = tr.header("content-length");
        total = 0;
        if (!length.empty() && length.size() <= 19 &&
            std::all_of(length.begin(), length.end(), [](char c) { return c >= '0' && c <= '9'; })) {
          total = std::stoull(length);
        }
      }
      state.validator = if_range_value(validators_of(tr.response_headers));
      state.bytes = part.size();
      write_part_state(state_path, state);
    }
    if (part.size() + n > impl.options.max_download_bytes) {
      tr.stop_failure = "the download of " + redacted + " is larger than the limit of " +
                        format_size(impl.options.max_download_bytes) + " (raise it with --max-download-size)";
      return false;
    }
    part.append(data, n);
    session_bytes += n;
    report(false);
    return true;
  };

  try {
    impl.with_retries("download of", url, [&] {
      started_body = false;
      complete = false;
      t.headers.clear();
      t.headers.push_back("Accept-Encoding: identity");
      if (part.size() > 0 && state.validator.empty()) part.truncate();  // nothing to check a resume against
      if (part.size() > 0) {
        t.headers.push_back("Range: bytes=" + std::to_string(part.size()) + "-");
        t.headers.push_back("If-Range: " + state.validator);
      }
      impl.perform(t);
      state.bytes = part.size();
      if (!state.validator.empty()) write_part_state(state_path, state);
      auto j = Impl::judge(t, false);
      if (j.verdict == Verdict::Fail && t.status == 416 && part.size() > 0) {
        const auto cr = parse_content_range(t.header("content-range"));
        if (cr && cr->unsatisfied && cr->size_known && cr->size == part.size()) {
          complete = true;
          total = cr->size;
          return Judgement{};
        }
        // The part is longer than the file, or the server will not say: start over.
        part.truncate();
        j.verdict = Verdict::Retry;
      }
      if (j.verdict == Verdict::Done && total != 0 && part.size() != total) {
        j.verdict = Verdict::Retry;
        j.failure =
            "the transfer ended after " + std::to_string(part.size()) + " of " + std::to_string(total) + " bytes";
      }
      return j;
    });
  } catch (...) {
    part.close();  // the part and its state stay for a later run to resume
    throw;
  }
  static_cast<void>(complete);
  report(true);

  part.sync();
  const std::string actual = part.finish_hex();
  part.close();
  if (!expected_sha256.empty() && ascii_lower(expected_sha256) != actual) {
    remove_quietly(part_path);
    remove_quietly(state_path);
    throw bad_input("sha256 mismatch for " + redacted + ": expected " + ascii_lower(expected_sha256) + ", got " +
                    actual);
  }
  if (std::rename(part_path.c_str(), dest.c_str()) != 0) throw io_error("cannot rename " + part_path + " to " + dest);
  remove_quietly(state_path);
  // The rename itself reaches the disk with the folder.
  const auto folder = std::filesystem::path(dest).parent_path().string();
  const int dir_fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    static_cast<void>(::fsync(dir_fd));
    ::close(dir_fd);
  }
}

}  // namespace wheelcheck::net
