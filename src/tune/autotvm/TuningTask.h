/// A template tuning task: a compute DAG (one fused function of a network), the template that
/// schedules it, that template's config space, and how a config becomes a step list of the
/// schedule language. The tuners see only the space and the measured costs; features (for the
/// cost model) may also look at the step list a config instantiates.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "schedule/Steps.h"
#include "tune/Measure.h"
#include "tune/autotvm/ConfigSpace.h"

namespace tessel::tune::autotvm {

struct TuningTask {
  std::string name;          ///< e.g. the fused function's output node
  std::string templateName;  ///< e.g. "conv2d_nhwc.x86"
  MeasureTaskPtr measure;    ///< the DAG, target and workload key
  double flops = 0;          ///< of one call
  std::shared_ptr<const ConfigSpace> space;
  /// The steps of a config; throws Error when the config cannot be instantiated.
  std::function<std::vector<schedule::StepPtr>(const ConfigEntity&)> instantiate;
  /// Optional: the state a config's steps replay to, made without replaying them and without
  /// the lowering check (what a cost model's features need, for thousands of configs).
  std::function<schedule::State(const ConfigEntity&)> instantiateState;
  /// The config used when no record exists: at least as fast as the default schedule.
  uint64_t fallbackIndex = 0;
  /// Whether the fallback config is the default schedule itself (the CPU templates and
  /// gpu_default), or the template's own starting point (a GPU template whose schedules the
  /// default cannot express): what the tuning messages call it.
  bool fallbackIsDefaultSchedule = true;
  /// The space's size before the template pruned what cannot win (= space->size() unpruned).
  uint64_t unprunedSize = 0;
};
using TuningTaskPtr = std::shared_ptr<const TuningTask>;

}  // namespace tessel::tune::autotvm
