// Starting and stopping test servers (see net_server.hpp): fork + exec with stdout on a pipe, read until
// "PORT <n>" (or poll the fixed port with connect()), SIGTERM then SIGKILL in the destructor.
#include "net_server.hpp"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <stdexcept>
#include <thread>

#include "support.hpp"

namespace wheelcheck::test {

namespace {

bool can_connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

std::size_t collect(char* data, std::size_t size, std::size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

void stop_child(int pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 50; ++i) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

}  // namespace

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot find a free port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

NetServer::NetServer(std::vector<std::string> argv, std::optional<int> fixed_port, std::chrono::milliseconds timeout) {
  if (argv.empty()) throw std::runtime_error("NetServer: no command");
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    if (fixed_port) {
      const int null_fd = ::open("/dev/null", O_WRONLY);  // nothing to read from it; never a full pipe
      if (null_fd >= 0) ::dup2(null_fd, STDOUT_FILENO);
    } else {
      ::dup2(out[1], STDOUT_FILENO);
    }
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  m_pid = pid;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string seen;
  bool ok = false;
  if (fixed_port) {
    m_port = *fixed_port;
    while (std::chrono::steady_clock::now() < deadline) {
      if (can_connect(m_port)) {
        ok = true;
        break;
      }
      if (::waitpid(m_pid, nullptr, WNOHANG) == m_pid) {
        m_pid = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  } else {
    while (!ok && std::chrono::steady_clock::now() < deadline) {
      pollfd p{out[0], POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[256];
      const auto n = ::read(out[0], buf, sizeof buf);
      if (n <= 0) break;  // the server exited
      seen.append(buf, static_cast<std::size_t>(n));
      const auto at = seen.find("PORT ");
      if (at != std::string::npos && seen.find('\n', at) != std::string::npos) {
        m_port = std::stoi(seen.substr(at + 5));
        ok = true;
      }
    }
  }
  // Keep reading nothing more: the Python servers print only the one line. The pipe's read end is closed
  // so that a chatty server gets EPIPE rather than blocking (nghttpd is quiet without -v).
  ::close(out[0]);
  if (!ok) {
    stop_child(m_pid);
    m_pid = -1;
    std::string cmd;
    for (const auto& a : argv) cmd += a + " ";
    throw std::runtime_error("test server did not start: " + cmd + "(output: " + seen + ")");
  }
}

NetServer::~NetServer() {
  stop_child(m_pid);
}

std::vector<std::string> NetServer::index_server(const std::string& root, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {"python3", source_dir() + "/tests/net/server.py", "--root", root};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

std::string NetServer::url(const std::string& path, const std::string& host, const std::string& scheme) const {
  return scheme + "://" + host + ":" + std::to_string(m_port) + path;
}

long http_request(const std::string& method, const std::string& url, const std::string& payload, std::string* body) {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> c(curl_easy_init(), &curl_easy_cleanup);
  if (!c) throw std::runtime_error("curl_easy_init failed");
  std::string sink;
  curl_easy_setopt(c.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(c.get(), CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(c.get(), CURLOPT_NOPROXY, "*");
  curl_easy_setopt(c.get(), CURLOPT_TIMEOUT, 10L);
  curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &sink);
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(nullptr, &curl_slist_free_all);
  if (!payload.empty()) {
    headers.reset(curl_slist_append(nullptr, "Content-Type: application/json"));
    curl_easy_setopt(c.get(), CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(c.get(), CURLOPT_POSTFIELDS, payload.c_str());
    curl_easy_setopt(c.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
  }
  const auto rc = curl_easy_perform(c.get());
  if (rc != CURLE_OK) throw std::runtime_error(method + " " + url + ": " + curl_easy_strerror(rc));
  long status = 0;
  curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &status);
  if (body != nullptr) *body = std::move(sink);
  return status;
}

nlohmann::json NetServer::stats() const {
  std::string body;
  const auto status = http_request("GET", url("/_stats"), "", &body);
  if (status != 200) throw std::runtime_error("GET /_stats: HTTP " + std::to_string(status));
  return nlohmann::json::parse(body);
}

void NetServer::clear_stats() const {
  http_request("DELETE", url("/_stats"));
}

void NetServer::add_faults(const nlohmann::json& rules) const {
  const auto list = rules.is_array() ? rules : nlohmann::json::array({rules});
  const auto status = http_request("POST", url("/_faults"), list.dump());
  if (status != 200) throw std::runtime_error("POST /_faults: HTTP " + std::to_string(status));
}

void NetServer::clear_faults() const {
  http_request("DELETE", url("/_faults"));
}

}  // namespace wheelcheck::test
