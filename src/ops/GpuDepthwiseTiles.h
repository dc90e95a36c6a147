/// The tiled schedule of a depthwise NCHW convolution on a GPU (TVM's depthwise_conv2d_nchw CUDA
/// template, whose knobs it takes, without the virtual-thread level). A block computes a tile of
/// channels x rows x columns; its threads (threadIdx.z, y, x along channels, rows and columns)
/// each a contiguous sub-tile of `f.inner x y.inner x x.inner` outputs in registers. The kernel
/// taps run outside the sub-tile: each tap's weight is loaded once for the sub-tile, and the
/// rows and columns of a sub-tile read overlapping windows of the input, which the device's
/// caches serve. No shared memory: a depthwise output reads only its own channel's window, so
/// a shared copy would serve one channel's few threads, while a barrier costs every one.
///
/// Padding is computed as the input is read (no padded tensor exists) and the function's
/// element-wise epilogue (bias, batch norm, ReLU6) per output as it is stored.
#pragma once
#include <cstdint>
#include <string>

#include "ops/GpuTiles.h"

namespace tessel::ops {

/// The depthwise convolution a tile applies to: the function's anchor must be an NCHW depthwise
/// conv2d whose output, or the element-wise epilogue's, is the function's one output. Error
/// naming what does not fit.
struct GpuDepthwiseShape {
  std::string anchor;  ///< the depthwise stage
  int64_t batch = 1, channels = 0, height = 0, width = 0;  ///< of its output
  int64_t kernelHeight = 0, kernelWidth = 0;
};
GpuDepthwiseShape gpuDepthwiseShapeOf(const te::ComputeDAG& dag);

/// The steps of the tiled schedule for `dag` with `tile`, and the state they make. Error naming
/// the part that does not fit (a tile not covering its axis).
GpuTileSchedule gpuTiledDepthwise(const te::ComputeDAG& dag, const GpuImageTile& tile);

}  // namespace tessel::ops
