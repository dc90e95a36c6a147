/// Timing a convolution kernel against oneDNN's in the same cache state: warm (the same
/// buffers every call) and cold (buffers rotating through twice the last-level cache, as a
/// layer whose weights come from DRAM meets them), the median of repeated timings.
#pragma once
#include <vector>

#include "OneDnnConv.h"
#include "schedule/Steps.h"
#include "te/ComputeDAG.h"

namespace tessel::bench {

struct ConvFigures {
  double warm = 0, cold = 0;  ///< GFLOPS
};

/// oneDNN's convolution of the shape (NHWC data, HWIO weights).
ConvFigures oneDnnGflops(const Conv2dShape& s);

/// The kernel that `steps` schedule on `dag`, in GFLOPS of `flops` per call (a Winograd
/// task's are those of the direct convolution it replaces).
ConvFigures kernelGflops(const te::ComputeDAG& dag, const std::vector<schedule::StepPtr>& steps, double flops);

}  // namespace tessel::bench
