// Requests overlapped across wheels: worker threads with a client each, a per-host limit (see ahead.hpp).
#include "inspector/scan/ahead.hpp"

#include <utility>

namespace wheelcheck::scan::detail {

namespace {

// The scheme, host and port of a URL ("" for what is not one): what the per-host limit counts.
std::string ahead_host(const std::string& url) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  auto end = url.find_first_of("/?#", scheme + 3);
  std::string authority = url.substr(0, end == std::string::npos ? url.size() : end);
  if (const auto at = authority.rfind('@'); at != std::string::npos && at > scheme)
    authority = authority.substr(0, scheme + 3) + authority.substr(at + 1);
  return authority;
}

}  // namespace

Ahead::Ahead(std::size_t workers, std::size_t per_host, const net::ClientOptions& options, net::Client& own)
    : m_per_host(per_host == 0 ? 1 : per_host), m_own(own) {
  for (std::size_t k = 0; k < workers; ++k) m_clients.push_back(std::make_unique<net::Client>(options));
  for (std::size_t k = 0; k < workers; ++k) m_threads.emplace_back([this, k] { work(k); });
}

Ahead::~Ahead() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
    m_queue.clear();  // their futures report a broken promise, and nobody waits on them any more
  }
  m_cv.notify_all();
  for (auto& t : m_threads) t.join();
}

std::shared_future<void> Ahead::submit(const std::string& url, Job job) {
  std::packaged_task<void(net::Client&)> task(std::move(job));
  std::shared_future<void> done = task.get_future().share();
  if (m_threads.empty()) {
    task(m_own);
    return done;
  }
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_queue.push_back({ahead_host(url), std::move(task)});
  }
  m_cv.notify_one();
  return done;
}

void Ahead::work(std::size_t k) {
  net::Client& client = *m_clients[k];
  std::unique_lock<std::mutex> lock(m_mutex);
  for (;;) {
    auto it = m_queue.end();
    m_cv.wait(lock, [&] {
      if (m_stop) return true;
      for (it = m_queue.begin(); it != m_queue.end(); ++it) {
        if (m_busy[it->host] < m_per_host) return true;  // the oldest job whose host has room
      }
      return false;
    });
    if (m_stop) return;
    Task task = std::move(*it);
    m_queue.erase(it);
    ++m_busy[task.host];
    lock.unlock();
    task.run(client);
    lock.lock();
    --m_busy[task.host];
    m_cv.notify_all();
  }
}

net::Stats Ahead::stats() const {
  net::Stats s = m_own.stats();
  std::lock_guard<std::mutex> lock(m_mutex);
  for (const auto& c : m_clients) {
    const auto& t = c->stats();
    s.requests += t.requests;
    s.retries += t.retries;
    s.bytes_received += t.bytes_received;
    s.not_modified += t.not_modified;
    s.http1_fallbacks += t.http1_fallbacks;
  }
  return s;
}

}  // namespace wheelcheck::scan::detail
