// Requests overlapped across wheels (inspector/scan/ahead.cpp): a cold scan waits on the network, not the CPU, so
// the pages and wheels ahead of the one being checked are fetched (and a wheel read) by worker threads, each with
// its own net::Client, at most `per_host` at once on one host. The scan takes their results in its own order, so
// what it reports does not depend on which answer came first.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "wheelcheck/net.hpp"

namespace wheelcheck::scan::detail {

class Ahead {
 public:
  using Job = std::function<void(net::Client&)>;
  // workers 0: no threads; submit() then runs each job at once on the caller's client.
  Ahead(std::size_t workers, std::size_t per_host, const net::ClientOptions& options, net::Client& own);
  ~Ahead();
  Ahead(const Ahead&) = delete;
  Ahead& operator=(const Ahead&) = delete;

  // Runs job on a worker once its host has a free connection. The future is ready when it has run (a job reports
  // its own failures: an exception it lets out is rethrown by get()).
  std::shared_future<void> submit(const std::string& url, Job job);
  std::size_t workers() const { return m_threads.size(); }
  net::Stats stats() const;  // every client's, summed

 private:
  struct Task {
    std::string host;
    std::packaged_task<void(net::Client&)> run;
  };
  void work(std::size_t k);

  std::size_t m_per_host;
  net::Client& m_own;
  std::vector<std::unique_ptr<net::Client>> m_clients;
  std::vector<std::thread> m_threads;
  mutable std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<Task> m_queue;
  std::map<std::string, std::size_t> m_busy;  // host -> requests running
  bool m_stop = false;
};

}  // namespace wheelcheck::scan::detail
