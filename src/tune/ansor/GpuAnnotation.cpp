#include "tune/ansor/GpuAnnotation.h"

#include <algorithm>
#include <map>

#include "support/Error.h"
#include "tune/ansor/GpuStateLimits.h"

namespace tessel::tune::ansor {

using namespace schedule;

namespace {

/// Tries before a state that misses a bound's minimum or the counting check is returned anyway.
constexpr int kGpuAnnotationTries = 8;

class GpuAnnotator {
 public:
  GpuAnnotator(const te::ComputeDAG& dag, const Sketch& sketch, SplitFactorizations& factorizations, std::mt19937_64& rng,
               const AnnotationOptions& options)
      : dag_(dag), sketch_(sketch), factorizations_(factorizations), rng_(rng), options_(options) {
    lastStepOfBound_.assign(sketch.bounds.size(), 0);
    for (size_t b = 0; b < sketch.bounds.size(); ++b)
      for (auto [step, factor] : sketch.bounds[b].factors) {
        boundsOfStep_[step].push_back({b, factor});
        lastStepOfBound_[b] = std::max(lastStepOfBound_[b], step);
      }
  }

  AnnotatedState run() {
    AnnotatedState state;
    for (int attempt = 0; attempt < kGpuAnnotationTries; ++attempt) {
      std::vector<int64_t> products = fill(state);
      unroll(state);
      bool reachesMinimums = true;
      for (size_t b = 0; b < products.size(); ++b) reachesMinimums = reachesMinimums && products[b] >= sketch_.bounds[b].atLeast;
      if (reachesMinimums && !gpuLimitViolation(state.state, *options_.gpu)) break;
    }
    return state;
  }

 private:
  /// The sketch's steps with its holes filled; returns the bounded products reached.
  std::vector<int64_t> fill(AnnotatedState& result) {
    result = {};
    result.sketchLength = sketch_.steps.size();
    result.state = State(dag_);
    result.state.inferBounds();
    // Bounds are inferred where a split reads an extent and once at the end, not after every step.
    result.state.setBoundsDeferred(true);
    std::vector<int64_t> products(sketch_.bounds.size(), 1);
    for (size_t i = 0; i < sketch_.steps.size(); ++i) {
      auto split = dynamic_cast<const SplitStep*>(sketch_.steps[i].get());
      if (!split || split->nparts > 0) {
        apply(result, sketch_.steps[i]);
        continue;
      }
      result.state.ensureBounds();
      const Stage& s = result.state.stage(split->stage);
      int64_t extent = s.iterator(s.leafByName(split->iterator)).extent;
      const auto& all = factorizations_.all(extent, split->factors.size());
      // The factorizations that keep every bounded product within its limit so far, and that
      // reach its minimum where this split is the product's last factor; failing that, those
      // within the limits; failing that, any.
      std::vector<size_t> fitting, withinLimits;
      auto found = boundsOfStep_.find(i);
      for (size_t k = 0; k < all.size(); ++k) {
        bool within = true, reaches = true;
        if (found != boundsOfStep_.end())
          for (auto [b, factor] : found->second) {
            int64_t product = products[b] * all[k][factor];
            within = within && product <= sketch_.bounds[b].atMost;
            reaches = reaches && (lastStepOfBound_[b] != i || product >= sketch_.bounds[b].atLeast);
          }
        if (within) withinLimits.push_back(k);
        if (within && reaches) fitting.push_back(k);
      }
      const std::vector<size_t>& choices = !fitting.empty() ? fitting : withinLimits;
      const std::vector<int64_t>& factors =
          choices.empty() ? all[std::uniform_int_distribution<size_t>(0, all.size() - 1)(rng_)]
                          : all[choices[std::uniform_int_distribution<size_t>(0, choices.size() - 1)(rng_)]];
      if (found != boundsOfStep_.end())
        for (auto [b, factor] : found->second) products[b] *= factors[factor];
      apply(result, std::make_shared<SplitStep>(split->stage, split->iterator, factors));
    }
    result.state.setBoundsDeferred(false);
    return products;
  }

  /// auto_unroll_max_step on the outermost loop of every stage with a reduction (TVM's GPU rule).
  void unroll(AnnotatedState& result) {
    std::vector<std::pair<std::string, std::string>> loops;
    for (const Stage& s : result.state.stages()) {
      if (s.isPlaceholder() || s.attach == AttachKind::Inline || s.leaves.empty()) continue;
      bool reduces = false;
      for (int id : s.leaves) reduces = reduces || s.iterator(id).kind == IteratorKind::Reduce;
      if (reduces) loops.emplace_back(s.name(), s.iterator(s.leaves.front()).name);
    }
    const auto& steps = options_.autoUnrollSteps;
    for (auto& [stage, loop] : loops) {
      int64_t value = steps[std::uniform_int_distribution<size_t>(0, steps.size() - 1)(rng_)];
      apply(result, std::make_shared<PragmaStep>(stage, loop, "auto_unroll_max_step", std::to_string(value)));
    }
  }

  static void apply(AnnotatedState& result, StepPtr step) {
    step->apply(result.state);
    result.steps.push_back(std::move(step));
  }

  const te::ComputeDAG& dag_;
  const Sketch& sketch_;
  SplitFactorizations& factorizations_;
  std::mt19937_64& rng_;
  const AnnotationOptions& options_;
  std::map<size_t, std::vector<std::pair<size_t, size_t>>> boundsOfStep_;  ///< step -> (bound, factor index)
  std::vector<size_t> lastStepOfBound_;  ///< per bound, the last split with a factor in it
};

}  // namespace

AnnotatedState annotateGpuRandomly(const te::ComputeDAG& dag, const Sketch& sketch, SplitFactorizations& factorizations,
                                   std::mt19937_64& rng, const AnnotationOptions& options) {
  TESSEL_CHECK(options.gpu.has_value(), "GPU annotation needs the device's limits");
  return GpuAnnotator(dag, sketch, factorizations, rng, options).run();
}

}  // namespace tessel::tune::ansor
