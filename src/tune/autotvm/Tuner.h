/// The tuner interface: a search over a task's config space that proposes batches of configs
/// and learns from their measured costs. The tuning loop (Tune.h) measures, logs and counts;
/// tuners only choose. Every tuner proposes each config at most once, so the number of trials
/// is capped by the space's size.
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tune/autotvm/TuningTask.h"

namespace tessel::tune::autotvm {

/// A measured config: its index and its throughput (FLOPs per second, 0 for a failed trial).
struct Trial {
  uint64_t index = 0;
  double flopsPerSecond = 0;
};

class Tuner {
 public:
  explicit Tuner(TuningTaskPtr task, uint64_t seed = 0) : task_(std::move(task)), rng_(seed) {}
  virtual ~Tuner() = default;

  /// Up to `batchSize` configs not proposed before (fewer only when the space runs out).
  virtual std::vector<uint64_t> nextBatch(size_t batchSize) = 0;
  /// The results of configs this tuner proposed (or that a resumed log already holds).
  virtual void update(const std::vector<Trial>& trials) { (void)trials; }
  /// Measurements of other tasks (transfer learning); ignored by tuners without a model.
  virtual void loadHistory(const std::vector<std::pair<TuningTaskPtr, std::vector<Trial>>>& history) { (void)history; }
  /// False once every config has been proposed.
  bool hasNext() const { return proposed_.size() < task_->space->size(); }
  /// Marks configs as already measured (a resumed run) so they are never proposed again.
  void markProposed(uint64_t index) { proposed_.insert(index); }
  bool wasProposed(uint64_t index) const { return proposed_.count(index) > 0; }
  const TuningTask& task() const { return *task_; }

 protected:
  /// Records a proposal; false if it was proposed before.
  bool propose(uint64_t index) { return proposed_.insert(index).second; }
  std::mt19937_64& rng() { return rng_; }
  TuningTaskPtr task_;

 private:
  std::mt19937_64 rng_;
  std::set<uint64_t> proposed_;
};

/// Error "Invalid tuner: NAME" unless `name` is one makeTuner knows (checked before any work).
void checkTunerName(const std::string& name);

/// random, gridsearch, ga, xgb (xgb_knob, xgb_itervar, xgb_curve, xgb-rank, xgb_knob-rank, ...).
/// Error "Invalid tuner: NAME" otherwise.
std::unique_ptr<Tuner> makeTuner(const std::string& name, TuningTaskPtr task, uint64_t seed = 0);

}  // namespace tessel::tune::autotvm
