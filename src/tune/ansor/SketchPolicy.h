/// The auto-scheduler's search policy (TVM's SketchPolicy): sketches of the task's DAG, filled
/// by random annotation and improved by an evolutionary search that a cost model guides. One
/// batch:
///
///   1. sample random annotated states until `initPopulation` new ones (never measured)
///   2. add the best measured states (`measuredRatio` of the population size)
///   3. evolve for `generations`: the cost model scores the population, the best unmeasured
///      states so far are kept (twice the batch), parents are drawn in proportion to their
///      score and mutated (with `mutationProbability`, by the weights of Mutations.h) or copied
///   4. propose the best kept states, with `epsGreedy` of the batch random states instead
///
/// Measured schedules teach the cost model and join the measured best; states are told apart
/// by their step lists' JSON, so a schedule is never proposed twice, nor one of a resumed log.
/// On a GPU (forGpu), a random or mutated state that the device's limits refuse by count is
/// dropped before the cost model sees it.
#pragma once
#include <map>
#include <memory>
#include <random>
#include <set>

#include "tune/ansor/CostModel.h"
#include "tune/ansor/Mutations.h"
#include "tune/ansor/SearchPolicy.h"
#include "tune/ansor/Sketches.h"

namespace tessel::tune::ansor {

struct SketchPolicyOptions {
  size_t populationSize = 2048;
  int generations = 4;
  double mutationProbability = 0.85;
  double epsGreedy = 0.05;
  size_t initPopulation = 50;
  double measuredRatio = 0.2;
  /// Until the cost model has learned from this many measurements, part of each batch goes to
  /// mutations of the fastest measured schedules (the default schedule, measured first, above
  /// all): all of the batch at first, less with each measurement, none from here on. A model of
  /// a handful of points ranks far-away states by chance, and a first batch of random sketch
  /// states is mostly several times slower than a good default; its neighbours are not.
  int64_t neighbourTrials = 64;
  int64_t maxInnermostFactor = 64;
  MutationWeights mutationWeights;
  SketchOptions sketch;
  AnnotationOptions annotation;
  uint64_t seed = 0;

  /// The GPU policy (TVM's): GPU sketches and annotation for a device with these limits, GPU
  /// mutation weights; states over the limits by count (GpuStateLimits.h) are never proposed.
  static SketchPolicyOptions forGpu(const passes::GpuLimits& limits);
};

class SketchPolicy : public SearchPolicy {
 public:
  SketchPolicy(te::ComputeDAG dag, std::shared_ptr<CostModel> model, SketchPolicyOptions options = {});

  std::vector<std::vector<schedule::StepPtr>> nextBatch(size_t count) override;
  void update(const std::vector<MeasuredSchedule>& measured) override;

  const std::vector<Sketch>& sketches() const { return sketches_; }
  /// States the cost model scored so far (what "explored" counts in the search's speed).
  int64_t statesScored() const { return statesScored_; }
  /// The measured schedules the search builds on (those that replay), fastest first.
  const std::vector<std::pair<double, AnnotatedState>>& measuredBest() const { return measuredBest_; }

 private:
  /// Up to `count` random annotated states not measured or proposed (fewer after many
  /// repeats: the space may be small).
  std::vector<AnnotatedState> sampleNew(size_t count);
  /// Up to `count` new states one mutation away from the fastest measured ones, the model's
  /// best of many such mutants, best first.
  std::vector<AnnotatedState> neighbours(size_t count);
  /// The best `keep` unmeasured states the evolution met, best first.
  std::vector<AnnotatedState> evolve(std::vector<AnnotatedState> population, size_t keep);
  /// The sketch a measured step list was made from (its steps up to tile sizes), if any.
  std::optional<size_t> sketchLengthOf(const std::vector<schedule::StepPtr>& steps) const;

  te::ComputeDAG dag_;
  std::shared_ptr<CostModel> model_;
  SketchPolicyOptions options_;
  std::mt19937_64 rng_;
  SplitFactorizations factorizations_;
  std::vector<Sketch> sketches_;
  std::vector<std::string> sketchShapes_;  ///< each sketch's JSON without split factors
  std::set<std::string> seen_;             ///< keys of measured and proposed schedules
  std::vector<std::pair<double, AnnotatedState>> measuredBest_;
  int64_t measuredCount_ = 0;  ///< schedules the policy learned of, failed ones included
  int64_t statesScored_ = 0;
};

/// How the search tells schedules apart: the JSON text of the step list.
std::string scheduleKey(const std::vector<schedule::StepPtr>& steps);

}  // namespace tessel::tune::ansor
