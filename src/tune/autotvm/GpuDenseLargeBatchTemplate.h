/// The GPU template of a dense layer at a batch of 32 or more, `dense_large_batch.cuda` as TVM
/// names it: shared-memory GEMM tiles (ops/GpuDenseTiles.h) with TVM's knobs, minus the
/// virtual-thread level:
///
///   tile_x                [blocks, threads, per thread] of the batch rows (threadIdx.y)
///   tile_y                [blocks, threads, per thread] of the outputs (threadIdx.x)
///   tile_k                [chunks, per chunk] of the reduction (a chunk is staged in shared memory)
///   auto_unroll_max_step  0, 256 or 1500
///   unroll_explicit       0 (the device compiler unrolls) or 1 (the IR is unrolled)
///
/// Pruned per knob (the space prints its size before and after): more threads along a block
/// dimension than the device allows, over 8 rows or outputs per thread (so at most 64
/// accumulators), chunks over 64. Checked per config, as instantiation errors: threads per
/// block over the device's limit, windows over its shared memory. The fallback: 16 x 16 threads
/// with 4 x 4 outputs each (fewer where the extents are smaller), chunks of 16.
#pragma once
#include <string>

#include "ops/GpuDenseTiles.h"
#include "tune/autotvm/GpuTemplateSpace.h"

namespace tessel::tune::autotvm {

inline constexpr const char* kGpuDenseLargeBatchTemplate = "dense_large_batch.cuda";

/// True when the function's anchor is a dense layer of a batch over dense_small_batch.cuda's
/// (GpuDenseSmallBatchTemplate.h) whose output, or its element-wise epilogue's, is the one output.
bool gpuDenseLargeBatchTemplateApplies(const te::ComputeDAG& dag);

/// The space for `dag` on a device with `limits`. Error when the template does not apply.
GpuTemplateSpace gpuDenseLargeBatchTemplate(const te::ComputeDAG& dag, const passes::GpuLimits& limits);

/// The tile of a config of that space (exposed for tests).
ops::GpuDenseLargeBatchTile gpuDenseLargeBatchTileOf(const ConfigEntity& config);

/// The tuning task (the row of GpuTemplates.h's table).
TuningTaskPtr makeGpuDenseLargeBatchTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                         const passes::GpuLimits& limits);

}  // namespace tessel::tune::autotvm
