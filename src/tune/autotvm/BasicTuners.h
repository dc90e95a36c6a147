/// The tuners without a cost model: `random` (uniform over the configs not tried yet),
/// `gridsearch` (every config once, in index order) and `ga` (a genetic algorithm over knob
/// choices: a population of the best configs so far, elites kept, children by uniform
/// crossover of two parents picked in proportion to their throughput, each knob mutated with
/// a probability).
#pragma once
#include "tune/autotvm/Tuner.h"

namespace tessel::tune::autotvm {

class RandomTuner : public Tuner {
 public:
  using Tuner::Tuner;
  std::vector<uint64_t> nextBatch(size_t batchSize) override;
};

class GridSearchTuner : public Tuner {
 public:
  using Tuner::Tuner;
  std::vector<uint64_t> nextBatch(size_t batchSize) override;

 private:
  uint64_t next_ = 0;
};

struct GATunerOptions {
  size_t populationSize = 100;
  size_t eliteCount = 3;
  double mutationProbability = 0.1;
};

class GATuner : public Tuner {
 public:
  GATuner(TuningTaskPtr task, uint64_t seed = 0, GATunerOptions options = {});
  std::vector<uint64_t> nextBatch(size_t batchSize) override;
  void update(const std::vector<Trial>& trials) override;

 private:
  uint64_t breed();
  GATunerOptions options_;
  std::vector<Trial> population_;  ///< the best measured configs, best first
};

/// A config not proposed yet, uniformly at random (by rejection while the space is mostly
/// unexplored, by enumeration once it is nearly full); nothing if every config was proposed.
std::optional<uint64_t> randomUnproposed(Tuner& tuner, std::mt19937_64& rng);

}  // namespace tessel::tune::autotvm
