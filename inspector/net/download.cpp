// net::Client::download: a whole file, resumed with Range + If-Range and verified against its sha256
// before it lands (http.cpp's opening comment describes the part files and the attempt loop).
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

namespace wheelcheck::net {

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
  download(url, dest, expected_sha256, progress, RequestOptions{});
}

void Client::download(const std::string& url, const std::string& dest, const std::string& expected_sha256,
                      const std::function<void(const DownloadProgress&)>& progress, const RequestOptions& request) {
  auto& impl = *m_impl;
  const std::uint64_t max_bytes = request.max_bytes != 0 ? request.max_bytes : impl.options.max_download_bytes;
  const std::string limit_hint = request.limit_hint.empty() ? "raise it with --max-download-size" : request.limit_hint;
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
    if (part.size() + n > max_bytes) {
      tr.stop_failure = "the download of " + redacted + " is larger than the limit of " + format_size(max_bytes) +
                        " (" + limit_hint + ")";
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
      t.headers.insert(t.headers.end(), request.headers.begin(), request.headers.end());
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
