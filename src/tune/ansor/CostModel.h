/// The auto-scheduler's cost model interface: it learns from measured schedules (their states
/// and throughputs) and scores unmeasured ones, higher for faster, so that the evolutionary
/// search measures only the most promising. Scores only rank: their scale means nothing.
/// `RandomCostModel` scores uniformly at random (TVM's RandomModel): the search without a
/// model, and the baseline a learned model must beat.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "schedule/State.h"

namespace tessel::tune::ansor {

class CostModel {
 public:
  virtual ~CostModel() = default;
  /// Adds measurements (throughput in FLOPs per second; 0 for a failed one) and retrains.
  virtual void update(const std::vector<const schedule::State*>& states, const std::vector<double>& throughputs) = 0;
  /// One score per state.
  virtual std::vector<double> predict(const std::vector<const schedule::State*>& states) = 0;
};

class RandomCostModel : public CostModel {
 public:
  explicit RandomCostModel(uint64_t seed = 0) : rng_(seed) {}
  void update(const std::vector<const schedule::State*>&, const std::vector<double>&) override {}
  std::vector<double> predict(const std::vector<const schedule::State*>& states) override {
    std::uniform_real_distribution<double> uniform(0, 1);
    std::vector<double> scores;
    for (size_t i = 0; i < states.size(); ++i) scores.push_back(uniform(rng_));
    return scores;
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace tessel::tune::ansor
