/// The feature vectors of one task's configs, computed once per config index and kept: the
/// simulated annealing revisits configs many times and every refit needs the measured ones
/// again, while itervar and curve features cost a schedule replay each. Misses of a batch are
/// extracted in parallel on a thread pool. A config whose template fails to instantiate gets
/// a zero vector and is marked invalid (the tuner never prefers it).
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "support/ThreadPool.h"
#include "tune/autotvm/Features.h"
#include "tune/autotvm/TuningTask.h"

namespace tessel::tune::autotvm {

class FeatureCache {
 public:
  /// numThreads: 0 for every hardware thread. Itervar and curve need the task's `instantiate`.
  FeatureCache(TuningTaskPtr task, FeatureType type, int numThreads = 0);

  FeatureType type() const { return type_; }
  size_t length() const { return length_; }
  const TuningTask& task() const { return *task_; }

  /// Extracts the features of those of `indices` not yet cached (in parallel).
  void ensure(const std::vector<uint64_t>& indices);
  /// A row-major matrix of the configs' features (ensure()s them first).
  std::vector<float> matrix(const std::vector<uint64_t>& indices);
  /// The cached vector of a config; ensure()s it.
  const std::vector<float>& features(uint64_t index);
  /// False if the config failed to instantiate; ensure()s it.
  bool valid(uint64_t index);
  size_t size() const { return cache_.size(); }

 private:
  struct Entry {
    std::vector<float> features;
    bool valid = true;
  };
  Entry extract(uint64_t index) const;

  TuningTaskPtr task_;
  FeatureType type_;
  size_t length_;
  int numThreads_;
  std::unique_ptr<ThreadPool> pool_;  // made on the first batch that needs more than one thread
  std::unordered_map<uint64_t, Entry> cache_;
};

}  // namespace tessel::tune::autotvm
