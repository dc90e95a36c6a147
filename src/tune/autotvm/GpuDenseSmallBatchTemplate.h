/// The GPU template of a dense layer at small batch (the classifier of resnet and mobilenet at
/// batch 1), `dense_small_batch.cuda` as TVM names it: the reduction shared out over threads
/// with partial sums in shared memory (ops/GpuDenseTiles.h), with TVM's knob and a tile of
/// outputs per block:
///
///   tile_k                [per thread, threads] of the reduction (threadIdx.x sums interleaved elements)
///   tile_y                [blocks, threads] of the outputs (threadIdx.y: outputs of a block)
///   auto_unroll_max_step  0, 256 or 1500
///   unroll_explicit       0 (the device compiler unrolls) or 1 (the IR is unrolled)
///
/// It applies below a batch of 32, where TVM takes it too (GpuDenseLargeBatchTemplate.h takes
/// larger batches). Pruned
/// per knob (the space prints its size before and after): more threads along a block dimension
/// than the device allows, over 64 outputs per block. Checked per config, as instantiation errors: threads per block over
/// the device's limit, partial sums over its shared memory. The fallback: a warp of threads
/// per output's reduction, outputs filling a block of about 256 threads, fewer where the launch
/// would leave the multiprocessors short of blocks.
#pragma once
#include <string>

#include "ops/GpuDenseTiles.h"
#include "tune/autotvm/GpuTemplateSpace.h"

namespace tessel::tune::autotvm {

inline constexpr const char* kGpuDenseSmallBatchTemplate = "dense_small_batch.cuda";

/// The largest batch dense_small_batch.cuda takes.
inline constexpr int64_t kMaxSmallBatch = 31;

/// True when the function's anchor is a dense layer of batch up to kMaxSmallBatch whose output,
/// or its element-wise epilogue's, is the one output.
bool gpuDenseSmallBatchTemplateApplies(const te::ComputeDAG& dag);

/// The space for `dag` on a device with `limits`. Error when the template does not apply.
GpuTemplateSpace gpuDenseSmallBatchTemplate(const te::ComputeDAG& dag, const passes::GpuLimits& limits);

/// The tile of a config of that space (exposed for tests).
ops::GpuDenseSmallBatchTile gpuDenseSmallBatchTileOf(const ConfigEntity& config);

/// The tuning task (the row of GpuTemplates.h's table).
TuningTaskPtr makeGpuDenseSmallBatchTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                         const passes::GpuLimits& limits);

}  // namespace tessel::tune::autotvm
