/// The GPU templates of a direct convolution, `conv2d_nchw.cuda` and `conv2d_nhwc.cuda` (TVM's
/// names, which TVM also uses for OpenCL devices other than Mali and Intel): shared-memory
/// tiles (ops/GpuConv2dTiles.h) with TVM's knobs, minus the virtual-thread level:
///
///   tile_f, tile_y, tile_x   [blocks, threads, per thread] of the output channels, rows, columns
///   tile_rc, tile_ry, tile_rx  [chunks, per chunk] of the reduction (a chunk is staged in shared memory)
///   split_rc                 groups of threads the input channels are shared out over (1: none)
///   auto_unroll_max_step     0, 512 or 1500
///   unroll_explicit          0 (the device compiler unrolls) or 1 (the IR is unrolled)
///
/// The two differ in which thread dimension an axis takes (the contiguous one on threadIdx.x:
/// columns in NCHW, channels in NHWC) and in their fallback configs.
///
/// Pruned per knob (each space prints its size before and after): more threads along a block
/// dimension than the device allows (threadIdx.z: 64 on NVIDIA GPUs), per-thread parts over 16
/// channels or 8 rows or columns, thread groups that do not divide the input channels. Checked
/// per config, since they depend on several knobs: threads per block over the device's limit,
/// over 64 accumulators per thread (they would spill registers), shared windows over the
/// device's shared memory. Those are instantiation errors, which the tuners' cost model marks
/// invalid and never proposes.
#pragma once
#include "ops/GpuConv2dTiles.h"
#include "tune/autotvm/GpuTemplateSpace.h"

namespace tessel::tune::autotvm {

inline constexpr const char* kGpuConv2dTemplate = "conv2d_nchw.cuda";
inline constexpr const char* kGpuConv2dNhwcTemplate = "conv2d_nhwc.cuda";

/// True when conv2d_nchw.cuda applies: the function's anchor is a direct NCHW conv2d whose
/// output, or its element-wise epilogue's, is the one output.
bool gpuConv2dTemplateApplies(const te::ComputeDAG& dag);

/// The same for conv2d_nhwc.cuda and a direct NHWC conv2d (HWIO weights).
bool gpuConv2dNhwcTemplateApplies(const te::ComputeDAG& dag);

/// The space of conv2d_nchw.cuda or conv2d_nhwc.cuda, by the layout of the convolution, for
/// `dag` on a device with `limits`. Error when neither applies.
GpuTemplateSpace gpuConv2dTemplate(const te::ComputeDAG& dag, const passes::GpuLimits& limits);

/// The tuning tasks of conv2d_nchw.cuda and conv2d_nhwc.cuda (rows of GpuTemplates.h's table).
TuningTaskPtr makeGpuConv2dTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                const passes::GpuLimits& limits);
TuningTaskPtr makeGpuConv2dNhwcTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                    const passes::GpuLimits& limits);

/// The tile of a config of that space (exposed for tests).
ops::GpuConv2dTile gpuConv2dTileOf(const ConfigEntity& config);

}  // namespace tessel::tune::autotvm
