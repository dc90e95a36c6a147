/// The GPU templates of matrix products as shared-memory GEMM tiles (ops/GpuDenseTiles.h): a
/// dense layer at a batch of 32 or more, `dense_large_batch.cuda` as TVM names it, and matmul
/// and batch_matmul (`batch_matmul.cuda`: a transformer's projections and attention products),
/// with TVM's knobs, minus the virtual-thread level:
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
/// block over the device's limit, windows over its shared memory. The fallback: the default GPU
/// schedule's tile (ops::defaultGpuGemmTile); a function batch_matmul.cuda takes gets exactly
/// the default schedule from it, so it is tuned with that template alone.
#pragma once
#include <string>

#include "ops/GpuDenseTiles.h"
#include "tune/autotvm/GpuTemplateSpace.h"

namespace tessel::tune::autotvm {

inline constexpr const char* kGpuDenseLargeBatchTemplate = "dense_large_batch.cuda";
inline constexpr const char* kGpuBatchMatmulTemplate = "batch_matmul.cuda";

/// True when the function's anchor is a dense layer of a batch over dense_small_batch.cuda's
/// (GpuDenseSmallBatchTemplate.h) whose output, or its element-wise epilogue's, is the one output.
bool gpuDenseLargeBatchTemplateApplies(const te::ComputeDAG& dag);
/// The same for a matmul or batch_matmul that the default GPU schedule gives the GEMM tiles
/// (ops::gpuGemmTilesApply: 16 rows and columns or more).
bool gpuBatchMatmulTemplateApplies(const te::ComputeDAG& dag);

/// The space for `dag` on a device with `limits`, its tensor-core tiles as exact as `precision`
/// asks (`name`: the template's, for errors). Error when the GEMM tiles do not apply.
GpuTemplateSpace gpuGemmTemplate(const te::ComputeDAG& dag, const passes::GpuLimits& limits, target::MatmulPrecision precision,
                                 const char* name);

/// The tile of a config of that space (exposed for tests).
ops::GpuGemmTile gpuGemmTileOf(const ConfigEntity& config);

/// The tuning tasks (the rows of GpuTemplates.h's table).
TuningTaskPtr makeGpuDenseLargeBatchTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                         const passes::GpuLimits& limits);
TuningTaskPtr makeGpuBatchMatmulTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                     const passes::GpuLimits& limits);

}  // namespace tessel::tune::autotvm
