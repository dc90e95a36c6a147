#include "tune/ansor/Mutations.h"

#include <fmt/format.h>

#include <set>

#include "support/Error.h"
#include "tune/ansor/DagAnalysis.h"
#include "tune/ansor/GpuStateLimits.h"

namespace tessel::tune::ansor {

using namespace schedule;

namespace {

template <class T>
const T& pick(const std::vector<T>& values, std::mt19937_64& rng) {
  return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
}

/// The candidate that `steps` replay to, if they do and it can be lowered (on a GPU: within the
/// device's limits, as far as counting tells).
std::optional<AnnotatedState> replayed(const te::ComputeDAG& dag, std::vector<StepPtr> steps, size_t sketchLength,
                                       const AnnotationOptions& options) {
  try {
    State state = replay(dag, steps);
    if (!vectorizedLoopsAreSound(state)) return std::nullopt;
    if (options.gpu && gpuLimitViolation(state, *options.gpu)) return std::nullopt;
    return AnnotatedState{std::move(steps), sketchLength, std::move(state)};
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<AnnotatedState> mutateTileSize(const te::ComputeDAG& dag, const AnnotatedState& parent,
                                             SplitFactorizations& factorizations, const AnnotationOptions& options,
                                             std::mt19937_64& rng) {
  std::vector<size_t> splits;
  for (size_t i = 0; i < parent.sketchLength; ++i)
    if (auto s = dynamic_cast<const SplitStep*>(parent.steps[i].get()); s && s->nparts == 0) splits.push_back(i);
  if (splits.empty()) return std::nullopt;
  size_t at = pick(splits, rng);
  const auto& split = static_cast<const SplitStep&>(*parent.steps[at]);
  // Every level's extent, the outermost first; their product is the axis' extent.
  int64_t product = 1;
  for (auto f : split.factors) product *= f;
  std::vector<int64_t> levels{splitLoopExtent(dag, parent.state, split.stage, split.iterator) / product};
  levels.insert(levels.end(), split.factors.begin(), split.factors.end());
  std::vector<size_t> sources;
  for (size_t l = 0; l < levels.size(); ++l)
    if (levels[l] > 1) sources.push_back(l);
  if (sources.empty()) return std::nullopt;
  size_t from = pick(sources, rng);
  std::vector<int64_t> divisors = divisorsOf(levels[from]);
  divisors.erase(divisors.begin());  // 1 moves nothing
  int64_t moved = pick(divisors, rng);
  size_t to = std::uniform_int_distribution<size_t>(0, levels.size() - 2)(rng);
  if (to >= from) ++to;
  levels[from] /= moved;
  levels[to] *= moved;
  if (levels.back() > factorizations.maxInnermost()) return std::nullopt;
  std::vector<StepPtr> steps = parent.steps;
  steps[at] = std::make_shared<SplitStep>(split.stage, split.iterator, std::vector<int64_t>(levels.begin() + 1, levels.end()));
  return replayed(dag, std::move(steps), parent.sketchLength, options);
}

std::optional<AnnotatedState> mutateAutoUnroll(const te::ComputeDAG& dag, const AnnotatedState& parent,
                                               const AnnotationOptions& options, std::mt19937_64& rng) {
  std::vector<size_t> pragmas;
  for (size_t i = parent.sketchLength; i < parent.steps.size(); ++i)
    if (auto p = dynamic_cast<const PragmaStep*>(parent.steps[i].get()); p && p->key == "auto_unroll_max_step") pragmas.push_back(i);
  if (pragmas.empty() || options.autoUnrollSteps.size() < 2) return std::nullopt;
  size_t at = pick(pragmas, rng);
  const auto& pragma = static_cast<const PragmaStep&>(*parent.steps[at]);
  std::vector<int64_t> others;
  for (auto v : options.autoUnrollSteps)
    if (std::to_string(v) != pragma.value) others.push_back(v);
  std::vector<StepPtr> steps = parent.steps;
  steps[at] = std::make_shared<PragmaStep>(pragma.stage, pragma.iterator, pragma.key, std::to_string(pick(others, rng)));
  return replayed(dag, std::move(steps), parent.sketchLength, options);
}

/// Stages the sketch neither tiled nor placed, with one consumer: where annotation chose (or
/// may choose) a compute location.
std::vector<std::string> movableStages(const AnnotatedState& parent) {
  std::set<std::string> sketchPlaced;
  for (size_t i = 0; i < parent.sketchLength; ++i) {
    if (auto s = dynamic_cast<const SplitStep*>(parent.steps[i].get())) sketchPlaced.insert(s->stage);
    if (auto c = dynamic_cast<const ComputeAtStep*>(parent.steps[i].get())) sketchPlaced.insert(c->stage);
  }
  std::vector<std::string> movable;
  for (auto& s : parent.state.stages()) {
    if (s.isPlaceholder() || s.attach == AttachKind::Inline || parent.state.isOutput(s.name()) || sketchPlaced.count(s.name()))
      continue;
    if (parent.state.effectiveConsumers(s.name()).size() == 1) movable.push_back(s.name());
  }
  return movable;
}

std::optional<AnnotatedState> mutateComputeLocation(const te::ComputeDAG& dag, const AnnotatedState& parent,
                                                    const AnnotationOptions& options, std::mt19937_64& rng) {
  auto movable = movableStages(parent);
  if (movable.empty()) return std::nullopt;
  std::string stage = pick(movable, rng);
  // Its compute_at (if any) goes; a new one comes first after the sketch, where annotation
  // puts them, among the consumer's loops as they are there.
  std::vector<StepPtr> steps;
  std::string current;  // the loop it is at now; empty: the root
  for (size_t i = 0; i < parent.steps.size(); ++i) {
    auto c = dynamic_cast<const ComputeAtStep*>(parent.steps[i].get());
    if (i >= parent.sketchLength && c && c->stage == stage) current = c->targetIterator;
    else steps.push_back(parent.steps[i]);
  }
  std::vector<StepPtr> sketchPart(steps.begin(), steps.begin() + long(parent.sketchLength));
  State atSketch = replay(dag, sketchPart);
  auto consumers = atSketch.effectiveConsumers(stage);
  if (consumers.size() != 1) return std::nullopt;
  std::string consumer = consumers.front();
  const Stage& c = atSketch.stage(consumer);
  std::vector<std::string> choices;
  if (!current.empty()) choices.push_back("");
  for (int id : c.leaves) {
    if (c.iterator(id).kind == IteratorKind::Reduce) break;
    if (c.iterator(id).name != current) choices.push_back(c.iterator(id).name);
  }
  if (choices.empty()) return std::nullopt;
  std::string loop = pick(choices, rng);
  if (!loop.empty()) steps.insert(steps.begin() + long(parent.sketchLength), std::make_shared<ComputeAtStep>(stage, consumer, loop));
  return replayed(dag, std::move(steps), parent.sketchLength, options);
}

std::optional<AnnotatedState> mutateParallel(const te::ComputeDAG& dag, const AnnotatedState& parent, const AnnotationOptions& options,
                                             std::mt19937_64& rng) {
  std::vector<size_t> parallel;
  for (size_t i = parent.sketchLength; i < parent.steps.size(); ++i)
    if (auto a = dynamic_cast<const AnnotateStep*>(parent.steps[i].get()); a && a->annotation == Annotation::Parallel)
      parallel.push_back(i);
  if (parallel.empty()) return std::nullopt;
  size_t at = pick(parallel, rng);
  const auto& annotate = static_cast<const AnnotateStep&>(*parent.steps[at]);
  // The fuse that made the parallel loop, if any, comes right before it.
  size_t first = at;
  size_t fusedCount = 1;
  if (at > parent.sketchLength)
    if (auto f = dynamic_cast<const FuseStep*>(parent.steps[at - 1].get()); f && f->stage == annotate.stage) {
      first = at - 1;
      fusedCount = f->iterators.size();
    }
  std::vector<StepPtr> steps(parent.steps.begin(), parent.steps.begin() + long(first));
  State before = replay(dag, steps);
  auto outer = parallelizableOuterLoops(before, annotate.stage);
  std::vector<size_t> counts = parallelFuseCounts(before, annotate.stage, outer, options);
  std::erase(counts, fusedCount);
  if (counts.empty()) return std::nullopt;
  size_t count = pick(counts, rng);
  outer.resize(count);
  std::string loop = outer.front();
  if (count > 1) {
    auto fuse = std::make_shared<FuseStep>(annotate.stage, outer);
    fuse->apply(before);
    const Stage& s = before.stage(annotate.stage);
    loop = s.iterator(s.relations.back().fused).name;
    steps.push_back(fuse);
  }
  steps.push_back(std::make_shared<AnnotateStep>(annotate.stage, loop, Annotation::Parallel));
  // Later steps on the old parallel loop (the unroll pragma) now name the new one.
  for (size_t i = at + 1; i < parent.steps.size(); ++i) {
    auto p = dynamic_cast<const PragmaStep*>(parent.steps[i].get());
    if (p && p->stage == annotate.stage && p->iterator == annotate.iterator) steps.push_back(std::make_shared<PragmaStep>(p->stage, loop, p->key, p->value));
    else steps.push_back(parent.steps[i]);
  }
  return replayed(dag, std::move(steps), parent.sketchLength, options);
}

}  // namespace

MutationKind pickMutation(const MutationWeights& w, std::mt19937_64& rng) {
  std::discrete_distribution<int> which({w.tileSize, w.autoUnroll, w.computeLocation, w.parallel});
  return MutationKind(which(rng));
}

std::optional<AnnotatedState> mutate(const te::ComputeDAG& dag, const AnnotatedState& parent, MutationKind kind,
                                     SplitFactorizations& factorizations, const AnnotationOptions& options, std::mt19937_64& rng) {
  // A mutation that breaks a step is no child (the replays inside catch the same).
  try {
    switch (kind) {
      case MutationKind::TileSize: return mutateTileSize(dag, parent, factorizations, options, rng);
      case MutationKind::AutoUnroll: return mutateAutoUnroll(dag, parent, options, rng);
      case MutationKind::ComputeLocation: return mutateComputeLocation(dag, parent, options, rng);
      case MutationKind::Parallel: return mutateParallel(dag, parent, options, rng);
    }
  } catch (const Error&) {
  }
  return std::nullopt;
}

namespace {

/// The extent of a root axis of the stage's operation, or of the DAG's operation of that name
/// (rfactor replaces the reduction it factors).
std::optional<int64_t> operationAxisExtent(const te::ComputeDAG& dag, const State& state, const std::string& stage,
                                           const std::string& axis) {
  std::vector<const te::OperationNode*> ops{state.stage(stage).op.get()};
  if (dag.opIndex(stage) >= 0) ops.push_back(dag.op(stage).get());
  for (const auto* op : ops) {
    for (auto& a : op->axes)
      if (a.var.name() == axis) return a.extent;
    if (auto r = op->reduction())
      for (auto& a : r->axes)
        if (a.var.name() == axis) return a.extent;
  }
  return std::nullopt;
}

}  // namespace

int64_t rootAxisExtent(const te::ComputeDAG& dag, const State& state, const std::string& stage, const std::string& axis) {
  if (auto extent = operationAxisExtent(dag, state, stage, axis)) return *extent;
  fail("stage '{}' has no root axis '{}'", stage, axis);
}

int64_t splitLoopExtent(const te::ComputeDAG& dag, const State& state, const std::string& stage, const std::string& loop) {
  if (auto extent = operationAxisExtent(dag, state, stage, loop)) return *extent;
  // A loop that steps made (a fused loop of a GPU sketch's root output): its extent in the state.
  for (const Iterator& it : state.stage(stage).iterators)
    if (it.name == loop) return it.extent;
  fail("stage '{}' has no loop '{}' to split", stage, loop);
}

}  // namespace tessel::tune::ansor
