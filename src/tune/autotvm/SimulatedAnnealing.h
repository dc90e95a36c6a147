/// A model-based optimizer over a config space: parallel simulated-annealing chains that walk
/// the space one knob at a time under a score function (the cost model's prediction) and
/// return the best configs they met. As AutoTVM's SimulatedAnnealingOptimizer: 128 chains,
/// up to 500 steps, a temperature falling linearly from 1 to 0, an early exit after 50 steps
/// in which the best set did not change, and chains that persist between calls, so each plan
/// starts where the last one ended. Two differences: score differences are divided by the
/// spread of the chains' first scores, so the temperature means the same whatever the scale
/// of the model's output (rank scores have none); and each config is scored once per call,
/// which bounds the work by the size of small spaces. Deterministic given the seed.
#pragma once
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "tune/autotvm/ConfigSpace.h"

namespace tessel::tune::autotvm {

struct SimulatedAnnealingOptions {
  int parallelSize = 128;  ///< chains
  int maxSteps = 500;
  int earlyStop = 50;      ///< steps without a change of the best set before stopping
  double temperatureStart = 1.0, temperatureEnd = 0.0;
  bool persistent = true;  ///< keep the chains' positions between calls
};

class SimulatedAnnealing {
 public:
  /// Scores of a batch of config indices; higher is better, -infinity for configs to avoid.
  using ScoreFunction = std::function<std::vector<double>(const std::vector<uint64_t>&)>;

  explicit SimulatedAnnealing(SimulatedAnnealingOptions options = {}, uint64_t seed = 0);

  /// The (up to) `count` best-scoring configs found, best first, none of them `excluded`.
  std::vector<uint64_t> findMaximums(const ConfigSpace& space, const ScoreFunction& score, size_t count,
                                     const std::function<bool(uint64_t)>& excluded);
  /// How many configs the last call scored.
  size_t lastScored() const { return lastScored_; }

 private:
  /// The index of a config with one knob (of more than one option) changed.
  uint64_t neighbor(const ConfigSpace& space, uint64_t index);

  SimulatedAnnealingOptions options_;
  std::mt19937_64 rng_;
  std::vector<uint64_t> points_;  // the chains' positions, kept between calls when persistent
  size_t lastScored_ = 0;
};

}  // namespace tessel::tune::autotvm
