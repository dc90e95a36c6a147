#include "tune/ansor/Annotation.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "support/Error.h"
#include "tune/ansor/GpuAnnotation.h"

namespace tessel::tune::ansor {

using namespace schedule;

namespace {

bool holdsStages(const State& state, const Stage& s, int iterator) {
  for (auto& other : state.stages())
    if (other.attach == AttachKind::At && other.attachStage == s.name() && other.attachIterator == iterator) return true;
  return false;
}

/// Entry i: the iterations of the first i + 1 of `loops` fused.
std::vector<int64_t> fusedExtents(const State& state, const std::string& stage, const std::vector<std::string>& loops) {
  const Stage& s = state.stage(stage);
  std::vector<int64_t> extents;
  int64_t extent = 1;
  for (const std::string& loop : loops) extents.push_back(extent *= s.iterator(s.leafByName(loop)).extent);
  return extents;
}

bool hasLoops(const Stage& s) { return !s.isPlaceholder() && s.attach != AttachKind::Inline && !s.leaves.empty(); }

class Annotator {
 public:
  Annotator(const te::ComputeDAG& dag, SplitFactorizations& factorizations, std::mt19937_64& rng, const AnnotationOptions& options)
      : factorizations_(factorizations), rng_(rng), options_(options) {
    result_.state = State(dag);
    result_.state.inferBounds();
  }

  AnnotatedState run(const Sketch& sketch) {
    result_.sketchLength = sketch.steps.size();
    for (const StepPtr& step : sketch.steps) {
      auto split = dynamic_cast<const SplitStep*>(step.get());
      if (!split) {
        apply(step);
        continue;
      }
      const Stage& s = state().stage(split->stage);
      int64_t extent = s.iterator(s.leafByName(split->iterator)).extent;
      apply(std::make_shared<SplitStep>(split->stage, split->iterator, factorizations_.sample(extent, split->factors.size(), rng_)));
      tiled_.insert(split->stage);
    }
    for (int i = int(state().stages().size()) - 1; i >= 0; --i) changeComputeLocation(state().stages()[size_t(i)].name());
    for (size_t i = 0; i < state().stages().size(); ++i) {
      std::string name = state().stages()[i].name();
      if (!hasLoops(state().stage(name))) continue;
      if (state().stage(name).attach == AttachKind::Root) parallelize(name);
      vectorize(name);
      if (state().stage(name).attach == AttachKind::Root) unroll(name);
    }
    return std::move(result_);
  }

 private:
  State& state() { return result_.state; }

  void apply(StepPtr step) {
    step->apply(result_.state);
    result_.steps.push_back(std::move(step));
  }

  template <class T>
  const T& pick(const std::vector<T>& values) {
    return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng_)];
  }

  /// A stage the sketch left at the root stays there or moves into a loop of its only
  /// consumer (outside the consumer's reduce loops), each choice equally likely. A stage whose
  /// loops the sketch split (the outer stage of a cache write follows its cache's tiles) holds
  /// a tile structure: moving it into a consumer that reads it with reuse would recompute
  /// whole tiles per consumer iteration, so it stays (as TVM's rule skips tiled stages).
  void changeComputeLocation(const std::string& name) {
    const Stage& s = state().stage(name);
    bool split = std::any_of(s.relations.begin(), s.relations.end(), [](const IterRelation& r) { return r.kind == IterRelation::Kind::Split; });
    if (!hasLoops(s) || s.attach != AttachKind::Root || state().isOutput(name) || tiled_.count(name) || split) return;
    auto consumers = state().effectiveConsumers(name);
    if (consumers.size() != 1) return;
    const Stage& consumer = state().stage(consumers.front());
    std::vector<std::string> loops;
    for (int id : consumer.leaves) {
      if (consumer.iterator(id).kind == IteratorKind::Reduce) break;
      loops.push_back(consumer.iterator(id).name);
    }
    size_t choice = std::uniform_int_distribution<size_t>(0, loops.size())(rng_);
    if (choice == loops.size()) return;  // the root
    apply(std::make_shared<ComputeAtStep>(name, consumer.name(), loops[choice]));
  }

  /// Fuses the parallelizable outer loops until the loop has more than 16 iterations per core
  /// (TVM's InitParallel; mutations change the count) and parallelizes the result.
  void parallelize(const std::string& name) {
    std::vector<std::string> outer = parallelizableOuterLoops(state(), name);
    if (outer.empty()) return;
    std::vector<int64_t> extents = fusedExtents(state(), name, outer);
    size_t count = 1;
    while (count < outer.size() && extents[count - 1] <= 16 * options_.cores) ++count;
    outer.resize(count);
    std::string loop = fuseLoops(name, outer);
    const Stage& after = state().stage(name);
    if (after.iterator(after.leafByName(loop)).extent > 1) apply(std::make_shared<AnnotateStep>(name, loop, Annotation::Parallel));
  }

  /// Fuses 1..n inner spatial loops (at most maxVectorSize iterations in all, none holding a
  /// stage or already annotated) and vectorizes the result when it has 2 or more.
  void vectorize(const std::string& name) {
    const Stage& s = state().stage(name);
    std::vector<std::string> inner;  // innermost first
    int64_t product = 1;
    for (size_t p = s.leaves.size(); p-- > 0;) {
      const Iterator& it = s.iterator(s.leaves[p]);
      if (it.kind == IteratorKind::Reduce || it.annotation != Annotation::None || !it.exactExtent || holdsStages(state(), s, it.id) ||
          product * it.extent > options_.maxVectorSize)
        break;
      product *= it.extent;
      inner.push_back(it.name);
    }
    if (inner.empty()) return;
    inner.resize(std::uniform_int_distribution<size_t>(1, inner.size())(rng_));
    std::reverse(inner.begin(), inner.end());
    std::string loop = fuseLoops(name, inner);
    const Stage& after = state().stage(name);
    if (after.iterator(after.leafByName(loop)).extent > 1) apply(std::make_shared<AnnotateStep>(name, loop, Annotation::Vectorize));
  }

  /// At root stages with a reduction or tiles, or holding other stages (a tiled producer
  /// computed inside its consumer's tiles unrolls with them).
  void unroll(const std::string& name) {
    const Stage& s = state().stage(name);
    bool holds = false;
    for (auto& other : state().stages()) holds = holds || (other.attach == AttachKind::At && other.attachStage == name);
    if (!s.op->reduction() && !tiled_.count(name) && !holds) return;
    std::string outermost = s.iterator(s.leaves.front()).name;
    apply(std::make_shared<PragmaStep>(name, outermost, "auto_unroll_max_step", std::to_string(pick(options_.autoUnrollSteps))));
  }

  /// The name of the loop that `loops` (adjacent, in order) become: fused if more than one.
  std::string fuseLoops(const std::string& name, const std::vector<std::string>& loops) {
    if (loops.size() == 1) return loops.front();
    apply(std::make_shared<FuseStep>(name, loops));
    const Stage& s = state().stage(name);
    return s.iterator(s.relations.back().fused).name;
  }

  SplitFactorizations& factorizations_;
  std::mt19937_64& rng_;
  const AnnotationOptions& options_;
  AnnotatedState result_;
  std::set<std::string> tiled_;
};

}  // namespace

std::vector<std::string> parallelizableOuterLoops(const State& state, const std::string& stage) {
  const Stage& s = state.stage(stage);
  std::vector<std::string> outer;
  for (size_t p = 0; p + 1 < s.leaves.size(); ++p) {
    const Iterator& it = s.iterator(s.leaves[p]);
    if (it.kind == IteratorKind::Reduce) break;
    outer.push_back(it.name);
    if (holdsStages(state, s, it.id)) break;
  }
  return outer;
}

std::vector<size_t> parallelFuseCounts(const State& state, const std::string& stage, const std::vector<std::string>& outer,
                                       const AnnotationOptions& options) {
  std::vector<int64_t> extents = fusedExtents(state, stage, outer);
  std::vector<size_t> counts;
  if (extents.empty()) return counts;
  const int64_t floor = std::min(4 * options.cores, extents.back());
  for (size_t count = 1; count <= extents.size(); ++count)
    if (extents[count - 1] >= floor) counts.push_back(count);
  return counts;
}

bool vectorizedLoopsAreSound(const State& state) {
  for (auto& s : state.stages())
    for (int leaf : s.leaves)
      if (s.iterator(leaf).annotation == Annotation::Vectorize && (!s.iterator(leaf).exactExtent || holdsStages(state, s, leaf)))
        return false;
  return true;
}

AnnotationOptions AnnotationOptions::forCpu(const target::CpuMachine& machine) {
  AnnotationOptions options;
  options.maxVectorSize = machine.lanes(4);
  options.cores = machine.cores;
  return options;
}

AnnotationOptions AnnotationOptions::forGpu(const passes::GpuLimits& limits) {
  AnnotationOptions options;
  options.autoUnrollSteps = {0, 16, 64, 512, 1024};
  options.gpu = limits;
  return options;
}

AnnotatedState annotateRandomly(const te::ComputeDAG& dag, const Sketch& sketch, SplitFactorizations& factorizations,
                                std::mt19937_64& rng, const AnnotationOptions& options) {
  try {
    if (options.gpu) return annotateGpuRandomly(dag, sketch, factorizations, rng, options);
    return Annotator(dag, factorizations, rng, options).run(sketch);
  } catch (const Error& e) {
    throw e.withContext(fmt::format("annotating the sketch '{}'", sketch.description));
  }
}

}  // namespace tessel::tune::ansor
