// The HTTP client (inspector/net/http.cpp) against real servers on loopback: tests/net/server.py (an index
// and file server with injectable faults and a request log), tests/net/h2_reset_server.py (HTTP/2 streams
// reset, HTTP/1.1 served) and Debian's nghttpd (HTTP/2 done right). Every fault is injected at run time
// through POST /_faults, and what the client sent is read back from GET /_stats.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <thread>

#include "net_server.hpp"
#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/net.hpp"
#include "wheelcheck/util.hpp"

namespace wheelcheck::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using net::Client;
using net::ClientOptions;

constexpr const char* k_json_type = "application/vnd.pypi.simple.v1+json";
constexpr const char* k_wheel = "demo-1.0-py3-none-any.whl";
constexpr const char* k_blob = "blob-2.0-py3-none-any.whl";  // 256 KiB of random bytes (not a zip: only bytes)
constexpr std::size_t k_blob_size = 256 * 1024;

std::string sha256_hex(const std::string& bytes) {
  Hasher h;
  h.update(bytes.data(), bytes.size());
  return to_hex(h.finish());
}

ClientOptions fast_options() {
  ClientOptions o;
  o.connect_timeout_s = 5;
  o.low_speed_time_s = 5;
  o.max_attempts = 4;
  o.backoff_initial_ms = 20;
  o.backoff_max_ms = 200;
  o.retry_after_max_s = 5;
  o.netrc_file = "/nonexistent/netrc";  // never the developer's own ~/.netrc
  return o;
}

// Runs f, expects Error(BadInput) whose message holds every one of `parts`; returns the message.
template <class F>
std::string expect_bad_input(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << "'" << p << "' not in: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no Error thrown";
  return "";
}

// One index server for the suite; each test starts with no faults and an empty request log.
class Http : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ::setenv("no_proxy", "127.0.0.1,localhost", 1);
    ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    s_root = std::make_unique<TempDir>();
    const std::string project = s_root->path() + "/idx/Demo_Project";
    fs::create_directories(project);
    const auto payload = s_root->write("payload.py", "print('hello')\n");
    make_wheel(*s_root, "idx/Demo_Project/" + std::string(k_wheel), {{"demo/__init__.py", payload}},
               {"--requires-python", ">=3.11"});
    std::mt19937 gen(42);
    s_blob.resize(k_blob_size);
    for (auto& c : s_blob) c = static_cast<char>(gen() & 0xFF);
    write_binary(project + "/" + k_blob, s_blob);
    s_wheel_bytes = read_file(project + "/" + k_wheel);
    s_server = std::make_unique<NetServer>(NetServer::index_server(s_root->path()));
  }
  static void TearDownTestSuite() {
    s_server.reset();
    s_root.reset();
  }
  void SetUp() override {
    server().clear_faults();
    server().clear_stats();
  }

  static NetServer& server() { return *s_server; }
  static std::string page_url() { return s_server->url("/idx/simple/demo-project/"); }
  static std::string file_url(const std::string& name) { return s_server->url("/idx/files/demo-project/" + name); }
  // The request log entries whose path matches.
  static std::vector<json> requests_for(const std::string& path) {
    std::vector<json> out;
    for (const auto& r : server().stats()) {
      if (r.at("path") == path) out.push_back(r);
    }
    return out;
  }

  static std::unique_ptr<TempDir> s_root;
  static std::unique_ptr<NetServer> s_server;
  static std::string s_blob;
  static std::string s_wheel_bytes;
};
std::unique_ptr<TempDir> Http::s_root;
std::unique_ptr<NetServer> Http::s_server;
std::string Http::s_blob;
std::string Http::s_wheel_bytes;

TEST_F(Http, PageNegotiatesJsonAndHtml) {
  Client client(fast_options());
  const auto j = client.get(page_url(), std::string(k_json_type) + ", text/html;q=0.1");
  EXPECT_EQ(j.status, 200);
  EXPECT_EQ(j.content_type, k_json_type);
  const auto doc = json::parse(j.body);
  EXPECT_EQ(doc.at("meta").at("api-version"), "1.1");
  ASSERT_EQ(doc.at("files").size(), 2u);
  EXPECT_EQ(doc.at("files")[1].at("filename"), k_wheel);
  EXPECT_EQ(doc.at("files")[1].at("requires-python"), ">=3.11");
  EXPECT_EQ(doc.at("files")[1].at("hashes").at("sha256"), sha256_hex(s_wheel_bytes));
  EXPECT_EQ(j.headers.count("etag"), 1u);
  EXPECT_EQ(j.http_version, 11);

  const auto h = client.get(page_url(), "text/html");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.content_type.rfind("text/html", 0), 0u) << h.content_type;
  EXPECT_NE(h.body.find("data-requires-python=\"&gt;=3.11\""), std::string::npos) << h.body;
  EXPECT_NE(h.body.find("../../files/demo-project/" + std::string(k_wheel) + "#sha256=" + sha256_hex(s_wheel_bytes)),
            std::string::npos);

  // JSON preferred by a lower q for HTML; HTML when JSON is refused (q=0).
  EXPECT_EQ(client.get(page_url(), "text/html;q=0.2, application/vnd.pypi.simple.v1+json;q=0.9").content_type,
            k_json_type);
  EXPECT_EQ(client.get(page_url(), "application/vnd.pypi.simple.v1+json;q=0, */*").content_type.rfind("text/html", 0),
            0u);

  // A non-normalized name is redirected to the normalized URL.
  const auto r = client.get(server().url("/idx/simple/Demo_Project/"), "text/html");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.url, page_url());

  // What was sent: the Accept header and the User-Agent.
  const auto log = requests_for("/idx/simple/demo-project/");
  ASSERT_GE(log.size(), 2u);
  EXPECT_EQ(log[0].at("accept"), std::string(k_json_type) + ", text/html;q=0.1");
  EXPECT_EQ(log[0].at("user_agent").get<std::string>().rfind("wheelcheck/0.1.0 (libcurl/", 0), 0u)
      << log[0].at("user_agent");
  EXPECT_EQ(client.stats().requests, 6u);
}

// Nothing listens on the port: a refused connection is tried twice, not the whole retry budget (a runner
// without the index must not wait through every backoff).
TEST(HttpRefused, ARefusedConnectionIsTriedTwice) {
  ::setenv("no_proxy", "127.0.0.1,localhost", 1);
  ::setenv("NO_PROXY", "127.0.0.1,localhost", 1);
  // A port that was free a moment ago: bound, then closed.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  ::close(fd);
  auto o = fast_options();
  o.max_attempts = 5;
  Client client(o);
  expect_bad_input([&] { client.get("http://127.0.0.1:" + std::to_string(port) + "/simple/x/"); },
                   {"2 attempts", "nothing listens there"});
  EXPECT_EQ(client.stats().retries, 1U);
}

TEST_F(Http, UserAgentOverride) {
  auto o = fast_options();
  o.user_agent = "custom-agent/9";
  Client client(o);
  client.get(page_url());
  const auto log = requests_for("/idx/simple/demo-project/");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].at("user_agent"), "custom-agent/9");
}

TEST_F(Http, ConditionalGetAnswers304) {
  Client client(fast_options());
  const auto first = client.get(page_url(), "text/html");
  ASSERT_FALSE(first.validators.etag.empty());
  const auto second = client.get(page_url(), "text/html", first.validators);
  EXPECT_EQ(second.status, 304);
  EXPECT_TRUE(second.not_modified());
  EXPECT_TRUE(second.body.empty());
  EXPECT_EQ(second.validators.etag, first.validators.etag);
  EXPECT_EQ(client.stats().not_modified, 1u);
  const auto log = requests_for("/idx/simple/demo-project/");
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1].at("if_none_match"), first.validators.etag);
}

TEST_F(Http, RetriesA500ThenSucceeds) {
  server().add_faults({{"path", "/simple/demo-project/"}, {"fault", "status"}, {"code", 500}});
  std::vector<std::string> logged;
  auto o = fast_options();
  o.log = [&](const std::string& m) { logged.push_back(m); };
  Client client(o);
  const auto r = client.get(page_url(), "text/html");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(client.stats().retries, 1u);
  EXPECT_EQ(client.stats().requests, 2u);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("HTTP 500"), std::string::npos) << logged[0];
}

TEST_F(Http, HonoursRetryAfter) {
  server().add_faults({{"path", "/simple/"}, {"fault", "status"}, {"code", 429}, {"retry_after", 1}});
  Client client(fast_options());
  const auto start = std::chrono::steady_clock::now();
  const auto r = client.get(page_url(), "text/html");
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.status, 200);
  EXPECT_GE(elapsed, std::chrono::milliseconds(950));
  EXPECT_EQ(client.stats().retries, 1u);
}

TEST_F(Http, RetryAfterOverTheLimitIsAnError) {
  server().add_faults({{"path", "/simple/"}, {"fault", "status"}, {"code", 503}, {"retry_after", 3600}});
  Client client(fast_options());
  const auto start = std::chrono::steady_clock::now();
  expect_bad_input([&] { client.get(page_url()); }, {"3600", "HTTP 503"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST_F(Http, AttemptsExhaustedNamesUrlAndAttempts) {
  server().add_faults({{"path", "/simple/"}, {"fault", "status"}, {"code", 503}, {"count", -1}});
  auto o = fast_options();
  o.max_attempts = 3;
  Client client(o);
  expect_bad_input([&] { client.get(page_url()); }, {page_url(), "3 attempts", "HTTP 503 (service unavailable)"});
  EXPECT_EQ(client.stats().requests, 3u);
  EXPECT_EQ(client.stats().retries, 2u);
}

TEST_F(Http, NotFoundIsNotRetried) {
  Client client(fast_options());
  expect_bad_input([&] { client.get(server().url("/idx/simple/no-such-project/")); },
                   {"HTTP 404 (not found)", "no-such-project", "1 attempt"});
  EXPECT_EQ(client.stats().requests, 1u);
  EXPECT_EQ(client.stats().retries, 0u);
}

TEST_F(Http, TruncatedBodyIsRetried) {
  server().add_faults({{"path", "/simple/demo-project/"}, {"fault", "truncate"}, {"bytes", 10}});
  Client client(fast_options());
  const auto r = client.get(page_url(), "text/html");
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("</html>"), std::string::npos);
  EXPECT_EQ(client.stats().retries, 1u);
}

TEST_F(Http, ResetIsRetried) {
  server().add_faults({{"path", "/simple/demo-project/"}, {"fault", "reset"}, {"count", 2}});
  Client client(fast_options());
  const auto r = client.get(page_url(), "text/html");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(client.stats().retries, 2u);
}

TEST_F(Http, SlowBodyTimesOutThenRetries) {
  server().add_faults({{"path", "/simple/demo-project/"}, {"fault", "slow"}, {"rate", 50}});
  auto o = fast_options();
  o.low_speed_limit = 1024;
  o.low_speed_time_s = 1;
  std::vector<std::string> logged;
  o.log = [&](const std::string& m) { logged.push_back(m); };
  Client client(o);
  const auto start = std::chrono::steady_clock::now();
  const auto r = client.get(page_url(), "text/html");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(client.stats().retries, 1u);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("imeout"), std::string::npos) << logged[0];
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(Http, RedirectLoopIsAnError) {
  server().add_faults({{"path", "/simple/"}, {"fault", "redirect_loop"}});
  auto o = fast_options();
  o.max_redirects = 5;
  Client client(o);
  expect_bad_input([&] { client.get(page_url()); }, {"redirect", page_url()});
  EXPECT_EQ(client.stats().retries, 0u);   // not retried
  EXPECT_EQ(client.stats().requests, 6u);  // the first request and five redirects
}

TEST_F(Http, PageOverTheSizeLimitIsRefused) {
  auto o = fast_options();
  o.max_page_bytes = 100;
  Client client(o);
  expect_bad_input([&] { client.get(page_url(), "text/html"); }, {"larger than the limit", "100 bytes"});
}

TEST_F(Http, NeverEndingBodyIsBounded) {
  server().add_faults({{"path", "/files/"}, {"fault", "never_end"}, {"count", -1}});
  auto o = fast_options();
  o.max_attempts = 2;
  o.low_speed_time_s = 1;
  Client client(o);
  const auto start = std::chrono::steady_clock::now();
  expect_bad_input([&] { client.get(file_url(k_blob)); }, {"2 attempts", "imeout"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));
}

// Credentials.

// A second server that wants Basic authorization alice:s3cret on everything but /_*.
struct AuthServer {
  AuthServer() {
    fs::create_directories(root.path() + "/idx/demo");
    root.write("idx/demo/" + std::string(k_blob), "bytes");
    server = std::make_unique<NetServer>(NetServer::index_server(root.path(), {"--auth", "alice:s3cret"}));
  }
  TempDir root;
  std::unique_ptr<NetServer> server;
};

TEST_F(Http, RedirectToAnotherHostDropsCredentials) {
  AuthServer auth;
  auto& m_server = auth.server;
  Client client(fast_options());
  const auto with_credentials = "http://alice:s3cret@127.0.0.1:" + std::to_string(m_server->port());
  // The credentials work on their own host.
  EXPECT_EQ(client.get(with_credentials + "/idx/simple/demo/").status, 200);
  // A redirect to another host name (the same server) must not carry them along.
  m_server->add_faults(
      {{"path", "/simple/demo/"}, {"fault", "redirect"}, {"to", m_server->url("/idx/simple/demo/", "localhost")}});
  const auto message = expect_bad_input([&] { client.get(with_credentials + "/idx/simple/demo/"); }, {"HTTP 401"});
  EXPECT_EQ(message.find("s3cret"), std::string::npos) << message;
  int first_host = 0, second_host = 0;
  for (const auto& r : m_server->stats()) {
    const auto host = r.at("host").get<std::string>();
    if (host.rfind("127.0.0.1:", 0) == 0) {
      ++first_host;
      EXPECT_TRUE(r.at("authorization").get<bool>());
    } else if (host.rfind("localhost:", 0) == 0) {
      ++second_host;
      EXPECT_FALSE(r.at("authorization").get<bool>()) << r.dump();
    }
  }
  EXPECT_EQ(first_host, 2);
  EXPECT_EQ(second_host, 1);
}

TEST_F(Http, NetrcSuppliesCredentials) {
  AuthServer auth;
  auto& m_server = auth.server;
  TempDir dir;
  const auto netrc = dir.write("netrc", "machine 127.0.0.1 login alice password s3cret\n");
  const auto url = m_server->url("/idx/simple/demo/");
  {
    Client client(fast_options());  // no netrc: refused at once
    expect_bad_input([&] { client.get(url); }, {"HTTP 401 (unauthorized)"});
  }
  {
    auto o = fast_options();
    o.netrc_file = netrc;
    Client client(o);
    EXPECT_EQ(client.get(url).status, 200);
  }
  {
    auto o = fast_options();
    o.netrc_file.clear();
    const char* old = std::getenv("NETRC");
    const std::string saved = old != nullptr ? old : "";
    ::setenv("NETRC", netrc.c_str(), 1);
    Client client(o);
    if (old != nullptr) {
      ::setenv("NETRC", saved.c_str(), 1);
    } else {
      ::unsetenv("NETRC");
    }
    EXPECT_EQ(client.get(url).status, 200);
  }
}

// Ranges.

TEST_F(Http, StatLearnsSizeAndRanges) {
  Client client(fast_options());
  const auto f = client.stat(file_url(k_blob));
  EXPECT_TRUE(f.ranges);
  EXPECT_EQ(f.size, k_blob_size);
  EXPECT_EQ(f.url, file_url(k_blob));
  EXPECT_FALSE(f.validators.etag.empty());
  const auto log = requests_for("/idx/files/demo-project/" + std::string(k_blob));
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].at("range"), "bytes=0-0");
  EXPECT_EQ(log[0].at("status"), 206);
}

TEST_F(Http, StatWithoutRangesStopsEarly) {
  server().add_faults({{"path", "/files/"}, {"fault", "no_ranges"}});
  Client client(fast_options());
  const auto f = client.stat(file_url(k_blob));
  EXPECT_FALSE(f.ranges);
  EXPECT_EQ(f.size, k_blob_size);
  EXPECT_LT(client.stats().bytes_received, k_blob_size);  // the body was abandoned, not downloaded
}

TEST_F(Http, StatRetriesAndReportsMissingFiles) {
  server().add_faults({{"path", "/files/"}, {"fault", "status"}, {"code", 503}});
  Client client(fast_options());
  EXPECT_EQ(client.stat(file_url(k_blob)).size, k_blob_size);
  EXPECT_EQ(client.stats().retries, 1u);
  expect_bad_input([&] { client.stat(file_url("missing-1.0-py3-none-any.whl")); }, {"HTTP 404 (not found)"});
}

TEST_F(Http, GetRangeReturnsExactBytes) {
  Client client(fast_options());
  const auto f = client.stat(file_url(k_blob));
  EXPECT_EQ(client.get_range(f, 1000, 5000), s_blob.substr(1000, 5000));
  EXPECT_EQ(client.get_range(f, k_blob_size - 7, 7), s_blob.substr(k_blob_size - 7));
  const auto log = requests_for("/idx/files/demo-project/" + std::string(k_blob));
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[1].at("range"), "bytes=1000-5999");
  EXPECT_EQ(log[1].at("if_range"), f.validators.etag);
  EXPECT_THROW(client.get_range(f, k_blob_size - 1, 2), Error);  // outside the file
}

TEST_F(Http, GetRangeFromSeveralThreads) {
  Client client(fast_options());
  const auto f = client.stat(file_url(k_blob));
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        const std::uint64_t offset = static_cast<std::uint64_t>(t * 40000 + i * 3000);
        if (client.get_range(f, offset, 2500) == s_blob.substr(offset, 2500)) ++good;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 20);
  EXPECT_EQ(client.stats().requests, 21u);
}

TEST_F(Http, GetRangeIgnoredIsAnError) {
  Client client(fast_options());
  const auto f = client.stat(file_url(k_blob));
  server().add_faults({{"path", "/files/"}, {"fault", "no_ranges"}});
  expect_bad_input([&] { client.get_range(f, 10, 10); }, {"200"});
  EXPECT_LT(client.stats().bytes_received, k_blob_size);
}

// Downloads.

TEST_F(Http, DownloadVerifiesAndLandsAtomically) {
  TempDir dir;
  const auto dest = dir.file("blob.whl");
  Client client(fast_options());
  std::vector<net::DownloadProgress> seen;
  client.download(file_url(k_blob), dest, sha256_hex(s_blob),
                  [&](const net::DownloadProgress& p) { seen.push_back(p); });
  EXPECT_EQ(read_file(dest), s_blob);
  EXPECT_FALSE(fs::exists(dest + ".part"));
  EXPECT_FALSE(fs::exists(dest + ".part.json"));
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().done, k_blob_size);
  EXPECT_EQ(seen.back().total, k_blob_size);
}

// A download larger than max_download_bytes stops at the limit, is not retried, and lands nothing.
TEST_F(Http, DownloadOverTheSizeLimitIsRefused) {
  TempDir dir;
  const auto dest = dir.file("blob.whl");
  auto o = fast_options();
  o.max_download_bytes = k_blob_size / 2;
  Client client(o);
  expect_bad_input([&] { client.download(file_url(k_blob), dest, sha256_hex(s_blob)); },
                   {"larger than the limit", "--max-download-size"});
  EXPECT_EQ(client.stats().retries, 0u);
  EXPECT_FALSE(fs::exists(dest));
  if (fs::exists(dest + ".part")) EXPECT_LE(fs::file_size(dest + ".part"), k_blob_size / 2);
}

TEST_F(Http, DownloadWithWrongHashLeavesNothing) {
  server().add_faults({{"path", "/files/"}, {"fault", "wrong_hash"}});
  TempDir dir;
  const auto dest = dir.file("blob.whl");
  Client client(fast_options());
  expect_bad_input([&] { client.download(file_url(k_blob), dest, sha256_hex(s_blob)); },
                   {"sha256 mismatch for " + file_url(k_blob), "expected " + sha256_hex(s_blob)});
  EXPECT_FALSE(fs::exists(dest));
  EXPECT_FALSE(fs::exists(dest + ".part"));
  EXPECT_FALSE(fs::exists(dest + ".part.json"));
}

TEST_F(Http, InterruptedDownloadResumesWithRange) {
  server().add_faults({{"path", "/files/"}, {"fault", "truncate"}, {"bytes", 100000}});
  TempDir dir;
  const auto dest = dir.file("blob.whl");
  Client client(fast_options());
  client.download(file_url(k_blob), dest, sha256_hex(s_blob));
  EXPECT_EQ(read_file(dest), s_blob);
  EXPECT_EQ(client.stats().retries, 1u);
  const auto log = requests_for("/idx/files/demo-project/" + std::string(k_blob));
  ASSERT_EQ(log.size(), 2u);
  EXPECT_TRUE(log[0].at("range").is_null());
  EXPECT_EQ(log[1].at("range"), "bytes=100000-");
  EXPECT_EQ(log[1].at("status"), 206);
  EXPECT_EQ(log[1].at("bytes_sent"), k_blob_size - 100000);
}

TEST_F(Http, DownloadResumesAPartFromAnEarlierRun) {
  TempDir dir;
  const auto dest = dir.file("blob.whl");
  {
    // A first run that fails after 60000 bytes: truncate once, then the server resets every connection.
    server().add_faults(json::array({{{"path", "/files/"}, {"fault", "truncate"}, {"bytes", 60000}},
                                     {{"path", "/files/"}, {"fault", "reset"}, {"count", -1}}}));
    auto o = fast_options();
    o.max_attempts = 2;
    Client client(o);
    EXPECT_THROW(client.download(file_url(k_blob), dest, sha256_hex(s_blob)), Error);
    EXPECT_FALSE(fs::exists(dest));
    EXPECT_EQ(fs::file_size(dest + ".part"), 60000u);
    EXPECT_TRUE(fs::exists(dest + ".part.json"));
  }
  server().clear_faults();
  server().clear_stats();
  Client client(fast_options());
  client.download(file_url(k_blob), dest, sha256_hex(s_blob));
  EXPECT_EQ(read_file(dest), s_blob);
  const auto log = requests_for("/idx/files/demo-project/" + std::string(k_blob));
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].at("range"), "bytes=60000-");
  EXPECT_FALSE(fs::exists(dest + ".part.json"));
}

// HTTP/2.

// A throwaway self-signed certificate for 127.0.0.1 and localhost, or "" (with the reason) without openssl.
bool make_certificate(const TempDir& dir, std::string& why) {
  if (!have_program("openssl")) {
    why = "the openssl command is not installed";
    return false;
  }
  const auto r =
      run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
          "-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " +
          shell_quote(dir.file("key.pem")) + " -out " + shell_quote(dir.file("cert.pem")));
  if (r.exit_code != 0) {
    why = "openssl could not make a certificate: " + r.err;
    return false;
  }
  return true;
}

bool curl_has_http2() {
  const auto* info = curl_version_info(CURLVERSION_NOW);
  return (info->features & CURL_VERSION_HTTP2) != 0;
}

TEST_F(Http, Http2FallsBackToHttp1AfterStreamResets) {
  if (!curl_has_http2()) GTEST_SKIP() << "this libcurl has no HTTP/2";
  TempDir dir;
  std::string why;
  if (!make_certificate(dir, why)) GTEST_SKIP() << why;
  for (const std::string mode : {"rst", "goaway"}) {
    SCOPED_TRACE(mode);
    NetServer h2({"python3", source_dir() + "/tests/net/h2_reset_server.py", "--cert", dir.file("cert.pem"), "--key",
                  dir.file("key.pem"), "--mode", mode});
    auto o = fast_options();
    o.ca_file = dir.file("cert.pem");
    o.http2 = true;
    o.http2_failures_before_http1 = 2;
    std::vector<std::string> logged;
    o.log = [&](const std::string& m) { logged.push_back(m); };
    Client client(o);
    const auto r = client.get(h2.url("/x", "127.0.0.1", "https"));
    EXPECT_EQ(r.body, "ok /x http/1.1\n");
    EXPECT_EQ(r.http_version, 11);
    EXPECT_EQ(client.stats().http1_fallbacks, 1u);
    EXPECT_EQ(client.stats().retries, 2u);
    // Later requests to the host go straight to HTTP/1.1.
    EXPECT_EQ(client.get(h2.url("/y", "127.0.0.1", "https")).body, "ok /y http/1.1\n");
    EXPECT_EQ(client.stats().retries, 2u);
    int fallback_lines = 0;
    for (const auto& m : logged) fallback_lines += m.find("HTTP/1.1 for it") != std::string::npos ? 1 : 0;
    EXPECT_EQ(fallback_lines, 1);
  }
}

TEST_F(Http, Http2ServedByNghttpd) {
  if (!curl_has_http2()) GTEST_SKIP() << "this libcurl has no HTTP/2";
  if (!have_program("nghttpd")) GTEST_SKIP() << "nghttpd is not installed (Debian package nghttp2-server)";
  TempDir dir;
  std::string why;
  if (!make_certificate(dir, why)) GTEST_SKIP() << why;
  fs::create_directories(dir.file("htdocs"));
  const std::string content = "served over h2\n";
  dir.write("htdocs/hello.txt", content);
  // nghttpd takes a port number, not a socket: another process (the other suite runs beside this one) can
  // bind the port free_port() found before nghttpd does. A server that did not start gets another port.
  std::unique_ptr<NetServer> server;
  for (int attempt = 1; server == nullptr; ++attempt) {
    const int port = free_port();
    try {
      server = std::make_unique<NetServer>(
          std::vector<std::string>{"nghttpd", "--htdocs=" + dir.file("htdocs"), std::to_string(port),
                                   dir.file("key.pem"), dir.file("cert.pem")},
          port);
    } catch (const std::runtime_error&) {
      if (attempt == 3) throw;
    }
  }
  NetServer& h2 = *server;
  auto o = fast_options();
  o.ca_file = dir.file("cert.pem");
  Client client(o);
  const auto r = client.get(h2.url("/hello.txt", "127.0.0.1", "https"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, content);
  EXPECT_EQ(r.http_version, 2);
  const auto f = client.stat(h2.url("/hello.txt", "127.0.0.1", "https"));
  EXPECT_EQ(f.size, content.size());
  EXPECT_EQ(client.stats().http1_fallbacks, 0u);
}

}  // namespace
}  // namespace wheelcheck::test
