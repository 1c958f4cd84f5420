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

#include "inspector/net/client_impl.hpp"
#include "inspector/net/http_support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::net {

Client::Client(ClientOptions options) : m_impl(std::make_unique<Impl>(std::move(options))) {}
Client::~Client() = default;

const Stats& Client::stats() const {
  return m_impl->stats;
}

const ClientOptions& Client::options() const {
  return m_impl->options;
}

Response Client::get(const std::string& url, const std::string& accept, const Validators& validators) {
  return get(url, accept, validators, RequestOptions{});
}

Response Client::get(const std::string& url, const std::string& accept, const Validators& validators,
                     const RequestOptions& request) {
  auto& impl = *m_impl;
  Transfer t;
  t.url = url;
  t.compressed = true;
  t.max_body = request.max_bytes != 0 ? request.max_bytes : impl.options.max_page_bytes;
  t.limit_hint = request.limit_hint;
  t.headers.push_back("Accept: " + (accept.empty() ? std::string("*/*") : accept));
  if (!validators.etag.empty()) t.headers.push_back("If-None-Match: " + validators.etag);
  if (!validators.last_modified.empty()) t.headers.push_back("If-Modified-Since: " + validators.last_modified);
  t.headers.insert(t.headers.end(), request.headers.begin(), request.headers.end());
  impl.with_retries("GET", url, [&] {
    impl.perform(t);
    auto j = Impl::judge(t, !validators.empty());
    if (j.verdict == Verdict::Fail && j.status != 0 &&
        std::find(request.pass_statuses.begin(), request.pass_statuses.end(), j.status) !=
            request.pass_statuses.end()) {
      return Judgement{};
    }
    return j;
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

}  // namespace wheelcheck::net
