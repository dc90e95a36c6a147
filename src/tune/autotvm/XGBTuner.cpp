#include "tune/autotvm/XGBTuner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "support/Error.h"

namespace tessel::tune::autotvm {

namespace {

XGBoostOptions costModelOptions(const XGBTunerOptions& options, uint64_t seed) {
  XGBoostOptions out;
  out.loss = parseLossType(options.lossType);
  out.numThreads = options.numThreads;
  out.rounds = options.boostRounds;
  out.seed = seed;
  return out;
}

double usableThroughput(double flopsPerSecond) {
  return std::isfinite(flopsPerSecond) && flopsPerSecond > 0 ? flopsPerSecond : 0.0;
}

}  // namespace

XGBTuner::XGBTuner(TuningTaskPtr task, const XGBTunerOptions& options, uint64_t seed)
    : Tuner(task, seed),
      options_(options),
      features_(task, parseFeatureType(options.featureType), options.numThreads),
      model_(costModelOptions(options, seed)),
      annealing_(options.annealing, seed * 0x9E3779B97F4A7C15ull + 1),
      nextFitAt_(size_t(std::max(1, std::min(options.planSize, std::max(1, options.firstFit))))) {
  TESSEL_CHECK(options_.planSize >= 1, "xgb tuner: plan size must be positive, got {}", options_.planSize);
  TESSEL_CHECK(options_.epsilon >= 0 && options_.epsilon <= 1, "xgb tuner: epsilon must be in [0, 1], got {}",
               options_.epsilon);
  TESSEL_CHECK(options_.diversityFilterRatio == 0 || options_.diversityFilterRatio >= 1,
               "xgb tuner: the diversity filter ratio must be 0 (off) or at least 1, got {}", options_.diversityFilterRatio);
}

std::vector<double> XGBTuner::predict(const std::vector<uint64_t>& indices) {
  std::vector<double> scores = model_.predict(features_.matrix(indices), features_.length());
  for (size_t i = 0; i < indices.size(); ++i)
    if (!features_.valid(indices[i])) scores[i] = -std::numeric_limits<double>::infinity();
  return scores;
}

uint64_t XGBTuner::randomUnproposed() {
  const uint64_t size = task_->space->size();
  std::uniform_int_distribution<uint64_t> anyConfig(0, size - 1);
  for (int attempt = 0; attempt < 64; ++attempt) {
    uint64_t pick = anyConfig(rng());
    if (!wasProposed(pick)) return pick;
  }
  // Most of the space is taken: walk it from a random start (hasNext() holds, so one is free).
  uint64_t start = anyConfig(rng());
  for (uint64_t i = 0; i < size; ++i)
    if (!wasProposed((start + i) % size)) return (start + i) % size;
  fail("xgb tuner: no unproposed config left in a space of {}", size);
}

const std::vector<uint64_t>& XGBTuner::plan() {
  fitIfDue();
  return plan_;
}

std::vector<uint64_t> XGBTuner::nextBatch(size_t batchSize) {
  fitIfDue();
  std::vector<uint64_t> batch;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  while (batch.size() < batchSize && hasNext()) {
    while (planPosition_ < plan_.size() && wasProposed(plan_[planPosition_])) ++planPosition_;
    // Draw the coin only when there is a plan, so that the random phase consumes the same
    // random numbers whatever epsilon is.
    bool fromPlan = planPosition_ < plan_.size() && !(options_.epsilon > 0 && uniform(rng()) < options_.epsilon);
    uint64_t pick;
    if (fromPlan) {
      pick = plan_[planPosition_++];
      ++modelPicks_;
    } else {
      pick = randomUnproposed();
      ++randomPicks_;
    }
    propose(pick);
    batch.push_back(pick);
  }
  return batch;
}

void XGBTuner::update(const std::vector<Trial>& trials) {
  for (const Trial& trial : trials) {
    measured_.push_back(trial.index);
    throughput_.push_back(usableThroughput(trial.flopsPerSecond));
  }
}

void XGBTuner::fitIfDue() {
  if (measured_.size() >= nextFitAt_) fitAndPlan();
}

void XGBTuner::fitAndPlan() {
  // Nothing to learn from until two trials differ (e.g. everything failed so far).
  bool informative = std::any_of(throughput_.begin(), throughput_.end(), [&](double y) { return y != throughput_[0]; });
  if (!informative) return;
  model_.fit(features_.matrix(measured_), features_.length(), throughput_);
  ++fits_;
  // Refit after as many new trials as there are now (16, 32, 64, ...), then every planSize.
  nextFitAt_ = measured_.size() + std::min(measured_.size(), size_t(options_.planSize));
  replan();
}

void XGBTuner::replan() {
  size_t want = size_t(options_.planSize);
  if (options_.diversityFilterRatio > 0) want = size_t(std::ceil(double(want) * options_.diversityFilterRatio));
  std::vector<uint64_t> candidates = annealing_.findMaximums(
      *task_->space, [&](const std::vector<uint64_t>& indices) { return predict(indices); }, want,
      [&](uint64_t index) { return wasProposed(index); });
  plan_ = options_.diversityFilterRatio > 0 ? diversePick(candidates, size_t(options_.planSize)) : candidates;
  planPosition_ = 0;
}

std::vector<uint64_t> XGBTuner::diversePick(const std::vector<uint64_t>& candidates, size_t count) {
  if (candidates.size() <= count) return candidates;
  std::vector<double> scores = predict(candidates);
  double low = *std::min_element(scores.begin(), scores.end()), high = *std::max_element(scores.begin(), scores.end());
  const ConfigSpace& space = *task_->space;
  std::vector<std::vector<size_t>> choices;
  for (uint64_t index : candidates) choices.push_back(space.get(index).choices());
  size_t knobs = space.knobs().size();
  // As AutoTVM's submodular pick: each knob value new to the plan is worth the whole score
  // range, so the plan covers as many values as the candidates offer and the score orders the
  // rest; the ratio (how far down the predicted ranking candidates come from) is the trade-off.
  const double knobWeight = 1.0;
  std::vector<std::set<size_t>> seen(knobs);
  std::vector<bool> taken(candidates.size(), false);
  std::vector<uint64_t> picked;
  while (picked.size() < count) {
    size_t best = candidates.size();
    double bestGain = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (taken[i]) continue;
      double normalized = std::isfinite(scores[i]) && high > low ? (scores[i] - low) / (high - low) : 0.0;
      double gain = normalized;
      for (size_t k = 0; k < knobs; ++k) gain += seen[k].count(choices[i][k]) ? 0.0 : knobWeight;
      if (gain > bestGain) bestGain = gain, best = i;
    }
    taken[best] = true;
    for (size_t k = 0; k < knobs; ++k) seen[k].insert(choices[best][k]);
    picked.push_back(candidates[best]);
  }
  return picked;
}

void XGBTuner::loadHistory(const std::vector<std::pair<TuningTaskPtr, std::vector<Trial>>>& history) {
  std::vector<float> rows;
  std::vector<double> throughput;
  std::vector<unsigned> groups;
  for (const auto& [task, trials] : history) {
    if (!task || trials.empty()) continue;
    bool sameTask = task.get() == task_.get() ||
                    (task->measure && task_->measure && task->measure->key() == task_->measure->key() &&
                     task->templateName == task_->templateName);
    // Knob features mean something only within one space.
    if (!isTransferable(features_.type()) && !sameTask) continue;
    std::vector<uint64_t> indices;
    for (const Trial& trial : trials) {
      indices.push_back(trial.index);
      throughput.push_back(usableThroughput(trial.flopsPerSecond));
    }
    std::vector<float> block;
    if (sameTask) {
      block = features_.matrix(indices);
    } else {
      FeatureCache other(task, features_.type(), options_.numThreads);
      block = other.matrix(indices);
    }
    rows.insert(rows.end(), block.begin(), block.end());
    groups.push_back(unsigned(indices.size()));
  }
  if (groups.empty()) return;
  model_.fitBase(rows, features_.length(), throughput, groups);
  replan();
}

std::unique_ptr<Tuner> makeXGBTuner(TuningTaskPtr task, const XGBTunerOptions& options, uint64_t seed) {
  return std::make_unique<XGBTuner>(std::move(task), options, seed);
}

}  // namespace tessel::tune::autotvm
