/// The GPU template of a Winograd convolution in NCHW, `conv2d_nchw_winograd.cuda` (TVM's
/// name, which TVM also uses for OpenCL GPUs): the Winograd tiles (ops/GpuWinogradTiles.h: the
/// data pack, the batched GEMMs and the inverse as three phases of one kernel, passing results
/// through shared memory) with TVM's knobs of the batched GEMM:
///
///   tile_b                   [threads, per thread] of the alpha^2 transform points (TVM's
///                            tile_b without the blocks: a block needs all of a tile's points
///                            for the inverse); per thread a part of one row of M or whole rows
///   tile_f                   [blocks, threads, per thread] of the output channels (TVM's tile_y)
///   tile_y, tile_x           the same of the rows and columns of Winograd tiles (TVM's tile_x
///                            over the flattened tiles; a block's tiles are a box of the image here)
///   tile_rc                  [chunks, per chunk] of the input channels (a chunk of V and U is
///                            staged in shared memory)
///   auto_unroll_max_step     0, 128 or 1500 (TVM's winograd values)
///   unroll_explicit          0 (the device compiler unrolls) or 1 (the IR is unrolled)
///
/// TVM's virtual threads are left out, as in the other GPU templates. Pruned per knob (the space
/// prints its size before and after): per-thread parts of the points that are not a box of M,
/// over 8 channels or 4 rows or columns of tiles per thread, chunks over 16 channels. Checked per
/// config, as instantiation errors: threads per block over the device's limit, over 64
/// accumulators per thread, the block's buffers over the device's shared memory. The fallback is
/// the default GPU schedule's tile (ops::defaultGpuWinogradTile for the device), so an untuned
/// Winograd layer and the fallback are one kernel and the function is not tuned as gpu_default
/// besides.
#pragma once
#include <string>

#include "ops/GpuWinogradTiles.h"
#include "tune/autotvm/GpuTemplateSpace.h"

namespace tessel::tune::autotvm {

inline constexpr const char* kGpuWinogradTemplate = "conv2d_nchw_winograd.cuda";

/// True when the function's anchor is the NCHW Winograd GEMM and its output, or its element-wise
/// epilogue's, is the one output.
bool gpuWinogradTemplateApplies(const te::ComputeDAG& dag);

/// The space for `dag` on a device with `limits`. Error when the template does not apply.
GpuTemplateSpace gpuWinogradTemplate(const te::ComputeDAG& dag, const passes::GpuLimits& limits);

/// The tuning task (the row of GpuTemplates.h's table).
TuningTaskPtr makeGpuWinogradTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                  const passes::GpuLimits& limits);

/// The tile of a config of that space (exposed for tests).
ops::GpuWinogradTile gpuWinogradTileOf(const ConfigEntity& config);

}  // namespace tessel::tune::autotvm
