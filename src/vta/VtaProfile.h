/// The per-layer profile of a network run on VTA (`tessel run --profile` of a VTA module,
/// `tessel tune --target vta`, bench-vta): for each packed convolution group its tiling, cycles,
/// GEMM-core utilization (GEMM micro-op cycles / cycles) and where the rest of the compute
/// module's time went — accumulator resets, ALU epilogue, accumulator and micro-op loads, and
/// waiting for tokens (loads or stores not done) — beside the load and store modules' busy time.
#pragma once
#include <string>
#include <vector>

#include "vta/NetworkRunner.h"

namespace tessel::vta {

/// One line per group and a total: the table described above.
std::string formatVtaProfile(const std::vector<VtaGroupRun>& runs, const TimingParameters& timing);

/// GEMM micro-op cycles / cycles of a run (0 for a run of no cycles).
double gemmUtilization(const VtaGroupRun& run, const TimingParameters& timing);

}  // namespace tessel::vta
