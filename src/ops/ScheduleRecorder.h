/// The recorder the default schedules (CPU and GPU) write their steps with: each step is applied
/// to a live State as it is chosen, so that later rules see the iterator names and extents the
/// earlier steps produced.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "schedule/State.h"
#include "schedule/Steps.h"

namespace tessel::ops {

// ---- recording steps ---------------------------------------------------------------------------

/// Applies each chosen step to a live State, so that later rules see the iterator names and
/// extents the earlier steps produced, and collects the steps.
class Recorder {
 public:
  /// With `deferBounds`, bound inference runs only when an extent is read (extent(), or a
  /// step that reads one) and at finish(), not after every step: a schedule builder that reads
  /// no extents while it records (a template instantiated for every config the tuner's model
  /// scores) then infers bounds once instead of once per step.
  explicit Recorder(const te::ComputeDAG& dag, bool deferBounds = false) : state(dag) { state.setBoundsDeferred(deferBounds); }

  /// The recorded state with its bounds inferred, deferral ended.
  const schedule::State& finish() {
    state.setBoundsDeferred(false);
    return state;
  }

  void add(schedule::StepPtr step) {
    step->apply(state);
    steps.push_back(std::move(step));
  }

  const schedule::Stage& stage(const std::string& name) const { return state.stage(name); }

  std::vector<std::string> leaves(const std::string& name) const {
    const schedule::Stage& s = state.stage(name);
    std::vector<std::string> names;
    for (int id : s.leaves) names.push_back(s.iterator(id).name);
    return names;
  }

  int64_t extent(const std::string& name, const std::string& iterator) {
    state.ensureBounds();
    const schedule::Stage& s = state.stage(name);
    return s.iterator(s.leafByName(iterator)).extent;
  }

  /// Splits a leaf and returns the new leaves, outermost first.
  std::vector<std::string> split(const std::string& name, const std::string& iterator, const std::vector<int64_t>& factors) {
    const schedule::Stage& s = state.stage(name);
    int position = s.leafPosition(s.leafByName(iterator));
    add(std::make_shared<schedule::SplitStep>(name, iterator, factors));
    auto names = leaves(name);
    return {names.begin() + position, names.begin() + position + int(factors.size()) + 1};
  }

  /// Fuses adjacent leaves (a single one is returned as it is) and returns the fused leaf.
  std::string fuse(const std::string& name, const std::vector<std::string>& iterators) {
    if (iterators.size() == 1) return iterators[0];
    const schedule::Stage& s = state.stage(name);
    int position = s.leafPosition(s.leafByName(iterators[0]));
    add(std::make_shared<schedule::FuseStep>(name, iterators));
    return leaves(name)[size_t(position)];
  }

  void reorder(const std::string& name, const std::vector<std::string>& order) {
    if (order != leaves(name)) add(std::make_shared<schedule::ReorderStep>(name, order));
  }
  void annotate(const std::string& name, const std::string& iterator, schedule::Annotation a) {
    add(std::make_shared<schedule::AnnotateStep>(name, iterator, a));
  }
  void computeAt(const std::string& name, const std::string& target, const std::string& iterator) {
    add(std::make_shared<schedule::ComputeAtStep>(name, target, iterator));
  }
  void computeInline(const std::string& name) { add(std::make_shared<schedule::ComputeInlineStep>(name)); }

  /// cache_write(name, "local"); returns the new stage, which computes what `name` computed.
  std::string cacheWrite(const std::string& name) {
    int index = state.stageIndex(name);
    add(std::make_shared<schedule::CacheWriteStep>(name, "local"));
    return state.stages()[size_t(index)].name();  // inserted where the stage was
  }

  /// cache_read(name, scope, readers); returns the new stage, which the readers now read.
  std::string cacheRead(const std::string& name, const std::string& scope, const std::vector<std::string>& readers) {
    int index = state.stageIndex(name);
    add(std::make_shared<schedule::CacheReadStep>(name, scope, readers));
    return state.stages()[size_t(index) + 1].name();  // inserted after the stage it copies
  }

  /// rfactor(name, iterator); returns the new stage of partial results.
  std::string rfactor(const std::string& name, const std::string& iterator) {
    int index = state.stageIndex(name);
    add(std::make_shared<schedule::RfactorStep>(name, iterator));
    return state.stages()[size_t(index)].name();
  }

  schedule::State state;
  std::vector<schedule::StepPtr> steps;
};

}  // namespace tessel::ops
