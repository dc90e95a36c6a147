/// The `gpu_default` template: the default GPU schedule (ops/GpuSchedules.h) with its options as
/// knobs, so that every fused function of a GPU build can be tuned:
///
///   threads_per_block  threads of each output's blocks: 32, 64, ... up to the device's limit
///   channel_tile       output channels per thread of a direct convolution: 1, 2, 4
///   reduction_parts    parts of a reduction split across threads: 1, 2, 4, 8, 16
///
/// Each knob's first option is the rule's own choice (0 for channel_tile and reduction_parts:
/// "as the rule picks"; the rule's thread count), and config 0, the fallback, is the rule's
/// config: an untuned task builds exactly as a build without records does. Pruned, per knob:
/// an option whose schedule (the others at the rule's choice) equals an earlier option's (a
/// channel tile on a function without a direct convolution, parts the axis does not divide,
/// thread counts above what a small output's blocks shrink to).
#pragma once
#include <string>

#include "passes/GpuLimits.h"
#include "tune/autotvm/TuningTask.h"

namespace tessel::tune::autotvm {

inline constexpr const char* kGpuDefaultTemplate = "gpu_default";

/// The task of any fused function (Error only when the default schedule itself fails on it).
TuningTaskPtr makeGpuDefaultTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                 const passes::GpuLimits& limits);

}  // namespace tessel::tune::autotvm
