#include "tune/autotvm/GpuDefaultTemplate.h"

#include <algorithm>
#include <set>

#include "ops/GpuSchedules.h"
#include "support/Error.h"

namespace tessel::tune::autotvm {

namespace {

/// The schedule options of a config (0 options stay the rule's).
ops::GpuScheduleOptions optionsOf(const ops::GpuScheduleOptions& rule, const ConfigEntity& config) {
  ops::GpuScheduleOptions o = rule;
  o.threadsPerBlock = config.value("threads_per_block").get<int64_t>();
  o.channelTile = config.value("channel_tile").get<int64_t>();
  o.reductionParts = config.value("reduction_parts").get<int64_t>();
  return o;
}

/// The options of one knob whose schedules differ: `candidates` in order, each kept only when
/// the rule's options with it give a step list no earlier option gave.
std::vector<nlohmann::json> distinctOptions(const te::ComputeDAG& dag, const ops::GpuScheduleOptions& rule,
                                            const std::vector<int64_t>& candidates, int64_t ops::GpuScheduleOptions::*field) {
  std::set<std::string> seen;
  std::vector<nlohmann::json> kept;
  for (int64_t value : candidates) {
    ops::GpuScheduleOptions o = rule;
    o.*field = value;
    if (seen.insert(schedule::stepsToJson(ops::defaultGpuSchedule(dag, o)).dump()).second) kept.push_back(value);
  }
  return kept;
}

}  // namespace

TuningTaskPtr makeGpuDefaultTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                 const passes::GpuLimits& limits) {
  ops::GpuScheduleOptions rule = ops::gpuScheduleOptionsFor(limits, target.matmulPrecision);
  std::vector<int64_t> threads{rule.threadsPerBlock};
  for (int64_t t = 32; t <= std::min<int64_t>(1024, limits.maxThreadsPerBlock); t *= 2)
    if (t != rule.threadsPerBlock) threads.push_back(t);
  auto space = std::make_shared<ConfigSpace>();
  space->defineKnob("threads_per_block", distinctOptions(dag, rule, threads, &ops::GpuScheduleOptions::threadsPerBlock));
  space->defineKnob("channel_tile", distinctOptions(dag, rule, {0, 1, 2, 4}, &ops::GpuScheduleOptions::channelTile));
  space->defineKnob("reduction_parts", distinctOptions(dag, rule, {0, 1, 2, 4, 8, 16}, &ops::GpuScheduleOptions::reductionParts));

  auto task = std::make_shared<TuningTask>();
  task->name = name;
  task->templateName = kGpuDefaultTemplate;
  task->measure = makeMeasureTask(name, dag, target);  // makeGpuTuningTask adds the limits
  task->flops = dag.flopCount();
  task->space = space;
  task->instantiate = [dag, rule](const ConfigEntity& config) { return ops::defaultGpuSchedule(dag, optionsOf(rule, config)); };
  task->fallbackIndex = 0;  // every knob's first option is the rule's
  task->unprunedSize = uint64_t(threads.size()) * 4 * 6;
  return task;
}

}  // namespace tessel::tune::autotvm
