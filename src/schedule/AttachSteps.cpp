// The steps that decide where a stage is computed: compute_at, compute_inline, compute_root.
#include <fmt/format.h>

#include <set>

#include "schedule/Steps.h"
#include "support/Error.h"

namespace tessel::schedule {

using nlohmann::json;

namespace {

bool hasAttachedStages(const State& state, const std::string& name) {
  for (auto& s : state.stages())
    if (s.attach == AttachKind::At && s.attachStage == name) return true;
  return false;
}

}  // namespace

ComputeAtStep::ComputeAtStep(std::string s, std::string t, std::string i)
    : stage(std::move(s)), target(std::move(t)), targetIterator(std::move(i)) {}

void ComputeAtStep::apply(State& state) const {
  Stage& s = state.stage(stage);
  TESSEL_CHECK(!s.isPlaceholder(), "compute_at: '{}' is a placeholder (an input), nothing computes it", stage);
  TESSEL_CHECK(!state.isOutput(stage), "compute_at: '{}' is an output of the DAG and must be computed at the root", stage);
  Stage& t = state.stage(target);
  TESSEL_CHECK(!t.isPlaceholder() && t.attach != AttachKind::Inline, "compute_at: target '{}' has no loops", target);
  // The target must be a consumer, or hold every consumer inside its loops.
  auto consumers = state.effectiveConsumers(stage);
  bool holdsConsumers = !consumers.empty();
  for (auto& c : consumers) holdsConsumers = holdsConsumers && state.isWithin(c, target);
  TESSEL_CHECK(holdsConsumers, "compute_at: stage '{}' does not consume '{}', so '{}' cannot be computed inside it",
               target, stage, stage);
  TESSEL_CHECK(!state.isWithin(target, stage), "compute_at: '{}' is already computed inside '{}'", target, stage);
  int iterator = t.leafByName(targetIterator);
  s.attach = AttachKind::At;
  s.attachStage = target;
  s.attachIterator = iterator;
  state.inferBounds();
}

std::string ComputeAtStep::print() const { return fmt::format("{}.compute_at({}, {})", stage, target, targetIterator); }
json ComputeAtStep::toJson() const {
  return {{"step", "compute_at"}, {"stage", stage}, {"target", target}, {"target_iterator", targetIterator}};
}
StepPtr ComputeAtStep::fromJson(const json& j) {
  return std::make_shared<ComputeAtStep>(j.at("stage").get<std::string>(), j.at("target").get<std::string>(),
                                         j.at("target_iterator").get<std::string>());
}

ComputeInlineStep::ComputeInlineStep(std::string s) : stage(std::move(s)) {}

void ComputeInlineStep::apply(State& state) const {
  Stage& s = state.stage(stage);
  TESSEL_CHECK(!s.isPlaceholder(), "compute_inline: '{}' is a placeholder (an input)", stage);
  TESSEL_CHECK(!state.isOutput(stage), "compute_inline: '{}' is an output of the DAG", stage);
  TESSEL_CHECK(!s.op->reduction(), "compute_inline: '{}' is a reduction; only element-wise stages can be inlined", stage);
  TESSEL_CHECK(!hasAttachedStages(state, stage), "compute_inline: other stages are computed inside '{}'", stage);
  s.attach = AttachKind::Inline;
  s.attachStage.clear();
  s.attachIterator = -1;
  state.inferBounds();
}

std::string ComputeInlineStep::print() const { return fmt::format("{}.compute_inline()", stage); }
json ComputeInlineStep::toJson() const { return {{"step", "compute_inline"}, {"stage", stage}}; }
StepPtr ComputeInlineStep::fromJson(const json& j) { return std::make_shared<ComputeInlineStep>(j.at("stage").get<std::string>()); }

ComputeRootStep::ComputeRootStep(std::string s) : stage(std::move(s)) {}

void ComputeRootStep::apply(State& state) const {
  Stage& s = state.stage(stage);
  TESSEL_CHECK(!s.isPlaceholder(), "compute_root: '{}' is a placeholder (an input)", stage);
  s.attach = AttachKind::Root;
  s.attachStage.clear();
  s.attachIterator = -1;
  state.inferBounds();
}

std::string ComputeRootStep::print() const { return fmt::format("{}.compute_root()", stage); }
json ComputeRootStep::toJson() const { return {{"step", "compute_root"}, {"stage", stage}}; }
StepPtr ComputeRootStep::fromJson(const json& j) { return std::make_shared<ComputeRootStep>(j.at("stage").get<std::string>()); }

}  // namespace tessel::schedule
