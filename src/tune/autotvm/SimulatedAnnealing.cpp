#include "tune/autotvm/SimulatedAnnealing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "support/Error.h"

namespace tessel::tune::autotvm {

SimulatedAnnealing::SimulatedAnnealing(SimulatedAnnealingOptions options, uint64_t seed)
    : options_(options), rng_(seed) {
  TESSEL_CHECK(options_.parallelSize >= 1 && options_.maxSteps >= 0 && options_.earlyStop >= 1,
               "simulated annealing: parallel size {}, steps {}, early stop {}", options_.parallelSize, options_.maxSteps,
               options_.earlyStop);
}

uint64_t SimulatedAnnealing::neighbor(const ConfigSpace& space, uint64_t index) {
  // Mixed radix with the first knob fastest: changing knob k moves the index by a multiple of
  // the product of the sizes of the knobs before it.
  const std::vector<Knob>& knobs = space.knobs();
  std::vector<size_t> movable;
  for (size_t k = 0; k < knobs.size(); ++k)
    if (knobs[k].options.size() > 1) movable.push_back(k);
  if (movable.empty()) return index;
  size_t k = movable[std::uniform_int_distribution<size_t>(0, movable.size() - 1)(rng_)];
  uint64_t stride = 1;
  for (size_t j = 0; j < k; ++j) stride *= knobs[j].options.size();
  uint64_t size = knobs[k].options.size();
  uint64_t old = (index / stride) % size;
  uint64_t next = std::uniform_int_distribution<uint64_t>(0, size - 2)(rng_);
  if (next >= old) ++next;
  return index - old * stride + next * stride;
}

std::vector<uint64_t> SimulatedAnnealing::findMaximums(const ConfigSpace& space, const ScoreFunction& score, size_t count,
                                                       const std::function<bool(uint64_t)>& excluded) {
  const uint64_t size = space.size();
  lastScored_ = 0;
  if (count == 0 || size == 0) return {};
  std::uniform_int_distribution<uint64_t> anyConfig(0, size - 1);
  if (!options_.persistent || points_.size() != size_t(options_.parallelSize) ||
      std::any_of(points_.begin(), points_.end(), [&](uint64_t p) { return p >= size; })) {
    points_.clear();
    for (int i = 0; i < options_.parallelSize; ++i) points_.push_back(anyConfig(rng_));
  }

  // The model does not change during a call: score every config once.
  std::unordered_map<uint64_t, double> known;
  auto scoresOf = [&](const std::vector<uint64_t>& batch) {
    std::vector<uint64_t> missing;
    for (uint64_t p : batch)
      if (!known.count(p)) {
        known.emplace(p, 0.0);
        missing.push_back(p);
      }
    if (!missing.empty()) {
      std::vector<double> fresh = score(missing);
      TESSEL_CHECK(fresh.size() == missing.size(), "simulated annealing: {} scores for {} configs", fresh.size(),
                   missing.size());
      for (size_t i = 0; i < missing.size(); ++i) known[missing[i]] = fresh[i];
    }
    std::vector<double> out;
    out.reserve(batch.size());
    for (uint64_t p : batch) out.push_back(known[p]);
    return out;
  };

  // The best set: a min-heap on (score, index) so that ties resolve the same way every run.
  using Entry = std::pair<double, uint64_t>;
  std::vector<Entry> heap;
  std::unordered_set<uint64_t> inHeap;
  auto consider = [&](uint64_t p, double s) {
    if (!std::isfinite(s) || inHeap.count(p) || excluded(p)) return false;
    if (heap.size() < count) {
      heap.emplace_back(s, p);
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
    } else if (Entry(s, p) > heap.front()) {
      inHeap.erase(heap.front().second);
      std::pop_heap(heap.begin(), heap.end(), std::greater<>());
      heap.back() = Entry(s, p);
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
    } else {
      return false;
    }
    inHeap.insert(p);
    return true;
  };

  std::vector<double> scores = scoresOf(points_);
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (size_t i = 0; i < points_.size(); ++i) {
    consider(points_[i], scores[i]);
    if (std::isfinite(scores[i])) low = std::min(low, scores[i]), high = std::max(high, scores[i]);
  }
  double spread = high > low ? high - low : 1.0;

  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  double temperature = options_.temperatureStart;
  double cooling = (options_.temperatureStart - options_.temperatureEnd) / (options_.maxSteps + 1);
  std::vector<uint64_t> next(points_.size());
  for (int step = 0, lastChange = 0; step < options_.maxSteps && step < lastChange + options_.earlyStop; ++step) {
    for (size_t i = 0; i < points_.size(); ++i) next[i] = neighbor(space, points_[i]);
    std::vector<double> nextScores = scoresOf(next);
    for (size_t i = 0; i < points_.size(); ++i) {
      if (consider(next[i], nextScores[i])) lastChange = step;
      double gain = (nextScores[i] - scores[i]) / spread;
      // An improvement is always taken; a step down with probability exp(gain / T). From an
      // unscorable config any step is taken; into one, none.
      bool accept;
      if (!std::isfinite(scores[i])) accept = true;
      else if (!std::isfinite(nextScores[i])) accept = false;
      else accept = uniform(rng_) < std::exp(std::min(gain / (temperature + 1e-5), 1.0));
      if (accept) points_[i] = next[i], scores[i] = nextScores[i];
    }
    temperature -= cooling;
  }
  lastScored_ = known.size();

  std::sort(heap.begin(), heap.end(), std::greater<>());
  std::vector<uint64_t> best;
  for (const Entry& e : heap) best.push_back(e.second);
  return best;
}

}  // namespace tessel::tune::autotvm
