#include "tune/autotvm/BasicTuners.h"

#include <algorithm>

#include "support/Error.h"

namespace tessel::tune::autotvm {

std::optional<uint64_t> randomUnproposed(Tuner& tuner, std::mt19937_64& rng) {
  uint64_t size = tuner.task().space->size();
  if (!tuner.hasNext()) return std::nullopt;
  std::uniform_int_distribution<uint64_t> any(0, size - 1);
  for (int attempt = 0; attempt < 64; ++attempt) {
    uint64_t i = any(rng);
    if (!tuner.wasProposed(i)) return i;
  }
  // Mostly explored: pick among what is left.
  std::vector<uint64_t> left;
  for (uint64_t i = 0; i < size; ++i)
    if (!tuner.wasProposed(i)) left.push_back(i);
  if (left.empty()) return std::nullopt;
  return left[std::uniform_int_distribution<size_t>(0, left.size() - 1)(rng)];
}

std::vector<uint64_t> RandomTuner::nextBatch(size_t batchSize) {
  std::vector<uint64_t> batch;
  while (batch.size() < batchSize) {
    auto i = randomUnproposed(*this, rng());
    if (!i) break;
    propose(*i);
    batch.push_back(*i);
  }
  return batch;
}

std::vector<uint64_t> GridSearchTuner::nextBatch(size_t batchSize) {
  std::vector<uint64_t> batch;
  uint64_t size = task().space->size();
  while (batch.size() < batchSize && next_ < size) {
    uint64_t i = next_++;
    if (propose(i)) batch.push_back(i);
  }
  return batch;
}

GATuner::GATuner(TuningTaskPtr task, uint64_t seed, GATunerOptions options) : Tuner(std::move(task), seed), options_(options) {
  TESSEL_CHECK(options_.populationSize >= 2, "ga tuner: the population needs at least 2 members, got {}", options_.populationSize);
  TESSEL_CHECK(options_.eliteCount < options_.populationSize, "ga tuner: {} elites in a population of {}", options_.eliteCount,
               options_.populationSize);
  TESSEL_CHECK(options_.mutationProbability >= 0 && options_.mutationProbability <= 1,
               "ga tuner: mutation probability {} is not in [0, 1]", options_.mutationProbability);
}

void GATuner::update(const std::vector<Trial>& trials) {
  population_.insert(population_.end(), trials.begin(), trials.end());
  std::stable_sort(population_.begin(), population_.end(),
                   [](const Trial& a, const Trial& b) { return a.flopsPerSecond > b.flopsPerSecond; });
  if (population_.size() > options_.populationSize) population_.resize(options_.populationSize);
}

uint64_t GATuner::breed() {
  const ConfigSpace& space = *task().space;
  // Parents in proportion to throughput (failed configs weigh a little, so a population of
  // failures still breeds).
  std::vector<double> weights;
  for (const Trial& t : population_) weights.push_back(t.flopsPerSecond + 1e-9);
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
  auto a = space.get(population_[pick(rng())].index).choices();
  auto b = space.get(population_[pick(rng())].index).choices();
  std::bernoulli_distribution coin(0.5), mutate(options_.mutationProbability);
  std::vector<size_t> child(a.size());
  for (size_t k = 0; k < a.size(); ++k) {
    child[k] = coin(rng()) ? a[k] : b[k];
    if (mutate(rng())) child[k] = std::uniform_int_distribution<size_t>(0, space.knobs()[k].options.size() - 1)(rng());
  }
  return space.fromChoices(child).index();
}

std::vector<uint64_t> GATuner::nextBatch(size_t batchSize) {
  std::vector<uint64_t> batch;
  // The first generation is random; later ones are bred from the measured population.
  while (batch.size() < batchSize && hasNext()) {
    std::optional<uint64_t> next;
    if (population_.size() >= 2) {
      for (int attempt = 0; attempt < 32 && !next; ++attempt) {
        uint64_t child = breed();
        if (!wasProposed(child)) next = child;
      }
    }
    if (!next) next = randomUnproposed(*this, rng());
    if (!next) break;
    propose(*next);
    batch.push_back(*next);
  }
  return batch;
}

}  // namespace tessel::tune::autotvm
