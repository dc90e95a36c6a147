/// Timing convolution kernels against oneDNN's in the same cache state and at the same moment:
/// oneDNN and every kernel are timed in alternation, round after round, warm (the same buffers
/// every call) and, when asked, cold (buffers rotating through twice the last-level cache, as
/// a layer whose weights come from DRAM meets them). Each figure is its median round, so a
/// drift of the machine's speed between minutes hits all of them alike.
#pragma once
#include <vector>

#include "OneDnnConv.h"
#include "schedule/Steps.h"
#include "te/ComputeDAG.h"

namespace tessel::bench {

struct ConvFigures {
  double warm = 0, cold = 0;  ///< GFLOPS (cold: 0 when not timed)
};

/// A kernel to time: the schedule `steps` of `dag`.
struct ScheduledKernel {
  const te::ComputeDAG* dag;
  std::vector<schedule::StepPtr> steps;
};

/// oneDNN's convolution of `s` (NHWC data, HWIO weights) with the kernels' `epilogue` as its
/// post-ops first, then each kernel, in GFLOPS of the direct convolution `s` (a Winograd
/// kernel's are those of the convolution it replaces).
std::vector<ConvFigures> interleavedGflops(const Conv2dShape& s, const std::vector<ScheduledKernel>& kernels, int rounds,
                                           bool cold, const ConvEpilogue& epilogue = {});

}  // namespace tessel::bench
