#include "tune/ansor/SketchPolicy.h"

#include <algorithm>
#include <cmath>

#include "support/Error.h"
#include "tune/ansor/GpuStateLimits.h"

namespace tessel::tune::ansor {

using namespace schedule;

std::string scheduleKey(const std::vector<StepPtr>& steps) { return stepsToJson(steps).dump(); }

namespace {

/// A step list's JSON with the factors of its splits left out: what a sketch and the
/// schedules annotated from it share.
std::string shapeOf(const std::vector<StepPtr>& steps) {
  nlohmann::json j = stepsToJson(steps);
  for (auto& step : j)
    if (step["step"] == "split") step.erase("factors");
  return j.dump();
}

}  // namespace

SketchPolicyOptions SketchPolicyOptions::forGpu(const passes::GpuLimits& limits) {
  SketchPolicyOptions options;
  options.sketch = SketchOptions::forGpu(limits);
  options.annotation = AnnotationOptions::forGpu(limits);
  options.mutationWeights = MutationWeights::forGpu();
  return options;
}

SketchPolicy::SketchPolicy(te::ComputeDAG dag, std::shared_ptr<CostModel> model, SketchPolicyOptions options)
    : dag_(std::move(dag)), model_(std::move(model)), options_(std::move(options)), rng_(options_.seed),
      factorizations_(options_.maxInnermostFactor) {
  TESSEL_CHECK(model_ != nullptr, "the sketch policy needs a cost model");
  TESSEL_CHECK(options_.populationSize >= 1 && options_.generations >= 0, "the sketch policy needs a population of at least 1");
  sketches_ = generateSketches(dag_, options_.sketch);
  for (auto& s : sketches_) sketchShapes_.push_back(shapeOf(s.steps));
}

std::optional<size_t> SketchPolicy::sketchLengthOf(const std::vector<StepPtr>& steps) const {
  for (size_t k = 0; k < sketches_.size(); ++k) {
    size_t length = sketches_[k].steps.size();
    if (steps.size() < length) continue;
    if (shapeOf(std::vector<StepPtr>(steps.begin(), steps.begin() + long(length))) == sketchShapes_[k]) return length;
  }
  return std::nullopt;
}

std::vector<AnnotatedState> SketchPolicy::sampleNew(size_t count) {
  std::vector<AnnotatedState> states;
  std::set<std::string> keys;
  // Small spaces run out of new states: give up after many repeats rather than loop.
  for (size_t tries = 0; states.size() < count && tries < 20 * count + 100; ++tries) {
    const Sketch& sketch = sketches_[std::uniform_int_distribution<size_t>(0, sketches_.size() - 1)(rng_)];
    AnnotatedState s = annotateRandomly(dag_, sketch, factorizations_, rng_, options_.annotation);
    if (options_.annotation.gpu && gpuLimitViolation(s.state, *options_.annotation.gpu)) continue;
    std::string key = scheduleKey(s.steps);
    if (seen_.count(key) || !keys.insert(key).second) continue;
    states.push_back(std::move(s));
  }
  return states;
}

std::vector<AnnotatedState> SketchPolicy::evolve(std::vector<AnnotatedState> population, size_t keep) {
  std::map<std::string, std::pair<double, AnnotatedState>> best;  // unmeasured, by key
  auto worstKept = [&] {
    auto it = std::min_element(best.begin(), best.end(), [](auto& a, auto& b) { return a.second.first < b.second.first; });
    return it;
  };
  for (int generation = 0; generation <= options_.generations && !population.empty(); ++generation) {
    std::vector<const State*> states;
    for (auto& s : population) states.push_back(&s.state);
    std::vector<double> scores = model_->predict(states);
    statesScored_ += int64_t(states.size());
    for (size_t i = 0; i < population.size(); ++i) {
      std::string key = scheduleKey(population[i].steps);
      if (seen_.count(key) || best.count(key)) continue;
      if (best.size() < keep) {
        best.emplace(key, std::make_pair(scores[i], population[i]));
      } else if (auto worst = worstKept(); scores[i] > worst->second.first) {
        best.erase(worst);
        best.emplace(key, std::make_pair(scores[i], population[i]));
      }
    }
    if (generation == options_.generations) break;
    // Parents in proportion to their score above the population's lowest (scores only rank).
    double lowest = *std::min_element(scores.begin(), scores.end());
    double highest = *std::max_element(scores.begin(), scores.end());
    std::vector<double> weights;
    for (double s : scores) weights.push_back(highest > lowest ? (s - lowest) / (highest - lowest) + 1e-3 : 1.0);
    std::discrete_distribution<size_t> parent(weights.begin(), weights.end());
    std::bernoulli_distribution mutates(options_.mutationProbability);
    std::vector<AnnotatedState> children;
    for (size_t tries = 0; children.size() < options_.populationSize && tries < 3 * options_.populationSize; ++tries) {
      const AnnotatedState& p = population[parent(rng_)];
      if (!mutates(rng_)) {
        children.push_back(p);
        continue;
      }
      auto child = mutate(dag_, p, pickMutation(options_.mutationWeights, rng_), factorizations_, options_.annotation, rng_);
      if (child) children.push_back(std::move(*child));
    }
    population = std::move(children);
  }
  std::vector<std::pair<double, AnnotatedState>> ranked;
  for (auto& [key, entry] : best) ranked.push_back(std::move(entry));
  std::stable_sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::vector<AnnotatedState> out;
  for (auto& [score, state] : ranked) out.push_back(std::move(state));
  return out;
}

std::vector<AnnotatedState> SketchPolicy::neighbours(size_t count) {
  if (count == 0 || measuredBest_.empty()) return {};
  // Parents: the three fastest measured schedules, the fastest most often.
  const std::vector<double> weights = {4.0, 2.0, 1.0};
  std::discrete_distribution<size_t> parent(weights.begin(), weights.begin() + long(std::min(weights.size(), measuredBest_.size())));
  std::vector<AnnotatedState> mutants;
  std::set<std::string> keys;
  const size_t wanted = std::max<size_t>(64, 8 * count);
  for (size_t tries = 0; mutants.size() < wanted && tries < 4 * wanted; ++tries) {
    const AnnotatedState& from = measuredBest_[parent(rng_)].second;
    auto child = mutate(dag_, from, pickMutation(options_.mutationWeights, rng_), factorizations_, options_.annotation, rng_);
    if (!child) continue;
    std::string key = scheduleKey(child->steps);
    if (seen_.count(key) || !keys.insert(key).second) continue;
    mutants.push_back(std::move(*child));
  }
  if (mutants.empty()) return {};
  std::vector<const State*> states;
  for (auto& m : mutants) states.push_back(&m.state);
  std::vector<double> scores = model_->predict(states);
  statesScored_ += int64_t(states.size());
  std::vector<size_t> order(mutants.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  std::vector<AnnotatedState> out;
  for (size_t i = 0; i < order.size() && out.size() < count; ++i) out.push_back(std::move(mutants[order[i]]));
  return out;
}

std::vector<std::vector<StepPtr>> SketchPolicy::nextBatch(size_t count) {
  if (count == 0) return {};
  size_t randomCount = size_t(std::floor(options_.epsGreedy * double(count)));
  const double youth = options_.neighbourTrials > 0 ? 1.0 - double(measuredCount_) / double(options_.neighbourTrials) : 0.0;
  size_t neighbourCount = youth > 0 ? std::min(count - randomCount, size_t(std::ceil(youth * double(count)))) : 0;
  std::vector<AnnotatedState> near = neighbours(neighbourCount);
  std::vector<AnnotatedState> population = sampleNew(options_.initPopulation);
  // Random states for the eps-greedy share, kept apart from the evolution's.
  std::vector<AnnotatedState> random = sampleNew(3 * randomCount);
  size_t measured = std::min(measuredBest_.size(), size_t(options_.measuredRatio * double(options_.populationSize)));
  for (size_t i = 0; i < measured; ++i) population.push_back(measuredBest_[i].second);
  std::vector<AnnotatedState> best = evolve(std::move(population), 2 * count);

  std::vector<std::vector<StepPtr>> batch;
  auto take = [&](std::vector<AnnotatedState>& from, size_t until) {
    for (auto& s : from) {
      if (batch.size() >= until) break;
      if (seen_.insert(scheduleKey(s.steps)).second) batch.push_back(s.steps);
    }
  };
  take(near, near.size());
  take(best, count - randomCount);
  take(random, count);
  take(best, count);  // too few random ones: more of the best
  return batch;
}

void SketchPolicy::update(const std::vector<MeasuredSchedule>& measured) {
  std::vector<AnnotatedState> states;
  std::vector<double> throughputs;
  measuredCount_ += int64_t(measured.size());
  for (const MeasuredSchedule& m : measured) {
    seen_.insert(scheduleKey(m.steps));
    State state;
    try {
      state = replay(dag_, m.steps);
    } catch (const Error&) {
      continue;  // a record of another version of the rules: measured, but nothing to learn
    }
    // A schedule of none of the sketches (the default schedule, measured first) mutates as if
    // its whole list were its sketch: its tile sizes change, its annotations stay. The search
    // then explores around the default's structure, which the sketches do not generate.
    auto length = sketchLengthOf(m.steps);
    states.push_back({m.steps, length.value_or(m.steps.size()), std::move(state)});
    throughputs.push_back(m.flopsPerSecond);
    if (m.flopsPerSecond > 0) measuredBest_.emplace_back(m.flopsPerSecond, states.back());
  }
  std::stable_sort(measuredBest_.begin(), measuredBest_.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::vector<const State*> pointers;
  for (auto& s : states) pointers.push_back(&s.state);
  if (!pointers.empty()) model_->update(pointers, throughputs);
}

}  // namespace tessel::tune::ansor
