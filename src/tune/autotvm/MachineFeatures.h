/// Features of a stage's loop nest read against the CPU it will run on (target::CpuMachine):
/// the facts the raw extents and byte counts of the itervar, curve and auto-scheduler features
/// leave a cost model to learn anew on every machine — whether a vector fills the ISA's
/// register, whether the register tile fits the register file, how the parallel loop divides
/// among the cores, how much reuse each cache level can hold. Per stage, in order:
///
///   0    vector registers one vectorized loop fills: its lanes x the element's bytes over the
///        register's bytes (0.5: half of an AVX-512 register; 2: two AVX2 registers)
///   1    the register tile over the register file: the vector registers the innermost run of
///        unrolled and vectorized output loops accumulates into, over the machine's count
///        (above 1 it spills)
///   2    parallel chunks per core: the parallel loops' extent over the cores
///   3    balance of that division: extent / (cores x ceil(extent / cores)); 1 when every core
///        gets the same share
///   4-6  accesses per distinct byte of the outermost loop whose footprint (all tensors) fits
///        the L1d, the L2, the last-level cache (0 where not even the innermost loop's does)
///   7    the whole nest's footprint over the last-level cache
///
/// Ratios are log2(1 + x) scaled like every other feature. Without a machine (GPU targets)
/// the features are zeros.
#pragma once
#include <cstddef>
#include <vector>

#include "target/CpuMachine.h"
#include "tune/autotvm/LoopStats.h"

namespace tessel::tune::autotvm {

constexpr size_t kMachineStageLength = 8;

/// Writes the stage's features to out[0 .. kMachineStageLength). `stats` is loopStats(stage).
void machineStageFeatures(const StageSummary& stage, const std::vector<LoopStats>& stats, const target::CpuMachine* machine,
                          float* out);

}  // namespace tessel::tune::autotvm
