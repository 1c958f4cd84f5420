// Test servers for the network tests: a background process (tests/net/server.py, h2_reset_server.py, nghttpd
// or any command) that is started, waited for until it listens, and killed when the helper goes out of scope.
// A command that prints "PORT <n>" on stdout (the Python servers) tells its port; for one that does not
// (nghttpd), pick a port with free_port() and pass it: the helper then waits until it accepts connections.
// The child gets PR_SET_PDEATHSIG, so a crashed test run leaves no server behind.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wheelcheck::test {

class NetServer {
 public:
  // argv[0] is looked up on PATH. Throws std::runtime_error when the server does not come up in `timeout`.
  explicit NetServer(std::vector<std::string> argv, std::optional<int> fixed_port = std::nullopt,
                     std::chrono::milliseconds timeout = std::chrono::seconds(20));
  ~NetServer();
  NetServer(const NetServer&) = delete;
  NetServer& operator=(const NetServer&) = delete;

  // python3 tests/net/server.py --root ROOT <extra...>
  static std::vector<std::string> index_server(const std::string& root, const std::vector<std::string>& extra = {});

  int port() const { return m_port; }
  // "http://127.0.0.1:<port><path>" (scheme and host overridable).
  std::string url(const std::string& path, const std::string& host = "127.0.0.1",
                  const std::string& scheme = "http") const;

  // tests/net/server.py's control paths.
  nlohmann::json stats() const;                        // GET /_stats
  void clear_stats() const;                            // DELETE /_stats
  void add_faults(const nlohmann::json& rules) const;  // POST /_faults (a list of rules, or one)
  void clear_faults() const;                           // DELETE /_faults

 private:
  int m_pid = -1;
  int m_port = 0;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_port();

// One plain HTTP request with libcurl (no retries): the status, and the body into `body` when given.
long http_request(const std::string& method, const std::string& url, const std::string& payload = "",
                  std::string* body = nullptr);

}  // namespace wheelcheck::test
