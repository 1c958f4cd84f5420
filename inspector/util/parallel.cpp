// One thread pool for the stages that fan out (members of a wheel, files of a root, export tables).
#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

#include "wheelcheck/util.hpp"

namespace wheelcheck {

unsigned default_threads() {
  return std::max(1U, std::thread::hardware_concurrency());
}

void parallel_for(std::size_t count, unsigned threads, const std::function<void(std::size_t, unsigned)>& body) {
  if (count == 0) return;
  if (threads == 0) threads = default_threads();
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, count));
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::exception_ptr> errors(threads);
  auto worker = [&](unsigned w) {
    try {
      for (std::size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < count;) body(i, w);
    } catch (...) {  // every exception, so that no thread is left joinable behind it
      errors[w] = std::current_exception();
      failed = true;
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (unsigned w = 1; w < threads; ++w) pool.emplace_back(worker, w);
  worker(0);
  for (auto& t : pool) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace wheelcheck
