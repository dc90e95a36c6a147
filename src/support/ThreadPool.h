/// A fixed pool of worker threads with a blocking parallel-for, used by the compiler side
/// (parallel builds, the fuzzer) — generated kernels use OpenMP, not this pool.
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace tessel {

class ThreadPool {
 public:
  explicit ThreadPool(int threads = 0);  ///< 0 = hardware concurrency
  ~ThreadPool();
  int size() const { return int(workers_.size()); }
  /// Runs body(i) for i in [0, count) on the pool and waits; rethrows the first exception.
  void parallelFor(int count, const std::function<void(int)>& body);

 private:
  void workerLoop();
  std::vector<std::thread> workers_;
  std::queue<std::function<void()>> tasks_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

}  // namespace tessel
