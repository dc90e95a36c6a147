/// The auto-scheduler's feature vectors (after tvm-facts §4.3, smaller): one fixed-length
/// vector per buffer store — every computed stage stores one buffer — read from the State's
/// loop summary (autotvm/LoopSummary.h) without lowering, so that thousands of candidate
/// states are scored per second. Per store, in order:
///
///   compute (15)     float arithmetic per element by kind (add/sub, mul, div/mod,
///                    compare/min/max, math calls, selects) times the iterations; the
///                    vectorized, unrolled and parallel loops (innermost one's extent, product
///                    of all); the iterations; the stage's own loops; auto_unroll_max_step
///   buffers (5x14)   the store and the loads, the five touching the most distinct bytes
///                    first: access type (read, write, read and write, one-hot); bytes accessed
///                    and distinct, cache lines (64 bytes) accessed and distinct; reuse type
///                    (a loop that does not move through the buffer, or none, one-hot); reuse
///                    distance in iterations and in bytes and the reuse count of the innermost
///                    such loop; the innermost loop's stride in bytes
///   intensity (10)   arithmetic per distinct byte under the loops, innermost outwards, at ten
///                    evenly spaced loop depths
///   allocation (2)   for a stage computed inside another: its buffer's bytes and how many
///                    times the buffer is filled
///   outer scope (2)  the iterations and number of the loops of the stages it is computed in
///   GPU (9)          the extents of the loops over it bound to blockIdx.x/y/z, threadIdx.x/y/z
///                    and vthread (products, per binding), whether any loop is bound, and
///                    whether the stage lives in shared memory (all zero on a CPU)
///   machine (8)      the loop nest read against the CPU (autotvm/MachineFeatures.h): vector
///                    width and register tile against the ISA's registers, the parallel
///                    division among the cores, reuse within each cache (all zero on a GPU)
///
/// All values are log2(1 + x). A state's vector concatenates the vectors of its three heaviest
/// stores (most iterations first, zeros for missing ones) after their count: one row of the
/// XGBoost cost model.
#pragma once
#include <vector>

#include "schedule/State.h"
#include "target/CpuMachine.h"
#include "tune/autotvm/MachineFeatures.h"

namespace tessel::tune::ansor {

constexpr size_t kStoreFeatureLength = 15 + 5 * 14 + 10 + 2 + 2 + 9 + autotvm::kMachineStageLength;
constexpr size_t kStoresPerState = 3;
constexpr size_t kStateFeatureLength = 1 + kStoresPerState * kStoreFeatureLength;

/// One vector per computed stage (not placeholders, not inlined), in stage order. `machine`:
/// the CPU the state is scheduled for; null for a GPU.
std::vector<std::vector<float>> storeFeatures(const schedule::State& state, const target::CpuMachine* machine);

/// The state's row for the cost model.
std::vector<float> stateFeatures(const schedule::State& state, const target::CpuMachine* machine);

}  // namespace tessel::tune::ansor
