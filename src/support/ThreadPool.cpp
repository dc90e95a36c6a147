#include "support/ThreadPool.h"

#include <atomic>
#include <exception>

namespace tessel {

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::workerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop();
    }
    task();
  }
}

void ThreadPool::parallelFor(int count, const std::function<void(int)>& body) {
  std::atomic<int> next{0};
  std::atomic<int> remaining{size()};
  std::mutex doneMutex;
  std::condition_variable done;
  std::exception_ptr firstError;
  for (int w = 0; w < size(); ++w) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push([&] {
        for (int i = next++; i < count; i = next++) {
          try {
            body(i);
          } catch (...) {
            std::lock_guard lock(doneMutex);
            if (!firstError) firstError = std::current_exception();
          }
        }
        std::lock_guard lock(doneMutex);
        if (--remaining == 0) done.notify_all();
      });
    }
    wake_.notify_one();
  }
  std::unique_lock lock(doneMutex);
  done.wait(lock, [&] { return remaining == 0; });
  if (firstError) std::rethrow_exception(firstError);
}

}  // namespace tessel
