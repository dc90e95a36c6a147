/// The GPU template of a depthwise NCHW convolution (mobilenet's and mobilenet-v2's),
/// `depthwise_conv2d_nchw.cuda` as TVM names it: register tiles per thread
/// (ops/GpuDepthwiseTiles.h) with TVM's knobs, minus the virtual-thread level:
///
///   tile_f, tile_y, tile_x   [blocks, threads, per thread] of the output channels, rows, columns
///   auto_unroll_max_step     0, 256 or 1500
///   unroll_explicit          0 (the device compiler unrolls) or 1 (the IR is unrolled)
///
/// Pruned per knob (the space prints its size before and after): more threads along a block
/// dimension than the device allows, per-thread parts over 4 channels or 8 rows or columns.
/// Checked per config, as instantiation errors: threads per block over the device's limit,
/// over 64 accumulators per thread. The fallback: columns across threads, two rows per
/// thread, channels filling a block of about 256 threads, fewer where the launch would leave
/// the multiprocessors short of blocks.
#pragma once
#include <string>

#include "ops/GpuDepthwiseTiles.h"
#include "tune/autotvm/GpuTemplateSpace.h"

namespace tessel::tune::autotvm {

inline constexpr const char* kGpuDepthwiseTemplate = "depthwise_conv2d_nchw.cuda";

/// True when the function's anchor is an NCHW depthwise conv2d whose output, or its element-wise
/// epilogue's, is the one output.
bool gpuDepthwiseTemplateApplies(const te::ComputeDAG& dag);

/// The space for `dag` on a device with `limits`. Error when the template does not apply.
GpuTemplateSpace gpuDepthwiseTemplate(const te::ComputeDAG& dag, const passes::GpuLimits& limits);

/// The tuning task (the row of GpuTemplates.h's table).
TuningTaskPtr makeGpuDepthwiseTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                   const passes::GpuLimits& limits);

}  // namespace tessel::tune::autotvm
