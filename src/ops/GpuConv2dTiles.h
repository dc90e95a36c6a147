/// The shared-memory tiled schedule of a direct NCHW or NHWC convolution on a GPU (TVM's
/// conv2d_nchw and conv2d_nhwc CUDA templates, whose knobs it takes). A block computes a tile of
/// output channels x rows x columns; its threads are a grid over the tile, each computing a
/// contiguous sub-tile of `f.inner x y.inner x x.inner` outputs in registers (a local
/// accumulator). Neighbouring threads (threadIdx.x) take neighbouring addresses of the output:
/// columns in NCHW (threadIdx.z, y, x along channels, rows, columns), channels in NHWC
/// (threadIdx.z, y, x along rows, columns, channels), where they also read neighbouring
/// weights of the HWIO weight. The reduction runs in chunks of `rc x ry x rx`: per chunk
/// the block's threads copy together the chunk's input window and weights into shared memory
/// (each thread every `threads`-th element, neighbours on neighbouring addresses), wait at a
/// barrier, and every thread accumulates its sub-tile from shared memory: each input read
/// from global memory feeds every output channel of the block, each weight every pixel.
///
/// Padding is computed while the input window is copied (no padded tensor exists), and the
/// function's element-wise epilogue (bias, batch norm, residual add, ReLU) runs per output as
/// it is stored. With split-K (for images too small to give every multiprocessor threads),
/// groups of threads sum interleaved input channels and add their partial sums in shared memory.
/// TVM's virtual threads (a strided sub-tile per thread) are left out: with the
/// sub-tile contiguous, a thread's accumulator is one box that bound inference sizes exactly.
#pragma once
#include <cstdint>
#include <vector>

#include "ops/GpuTiles.h"

namespace tessel::ops {

/// The output's tile (GpuImageTile: [blocks, threads, per thread] of the output channels, rows
/// and columns, and the unroll pragmas) and the reduction's chunks.
struct GpuConv2dTile : GpuImageTile {
  /// The inner part of each reduction axis: one chunk staged in shared memory.
  int64_t rc = 1, ry = 1, rx = 1;
  /// Groups of threads (threadIdx.z) the input channels are shared out over, each summing
  /// every splitK-th chunk; their partial sums meet in shared memory (1: none). It gives the
  /// deep layers' small images (7x7, 14x14) enough threads.
  int64_t splitK = 1;

  int64_t threads() const { return tileThreads() * splitK; }
};

/// The convolution a tile applies to: the function's anchor must be an NCHW or NHWC conv2d (not
/// grouped, not depthwise, HWIO weights in NHWC) whose output, or the element-wise epilogue's,
/// is the function's one output. Error naming what does not fit.
struct GpuConv2dShape {
  std::string anchor;             ///< the conv2d stage
  OpKind kind = OpKind::Conv2dNCHW;  ///< Conv2dNCHW or Conv2dNHWC
  int64_t batch = 1, channels = 0, height = 0, width = 0;  ///< of its output
  int64_t inChannels = 0, kernelHeight = 0, kernelWidth = 0;

  bool nhwc() const { return kind == OpKind::Conv2dNHWC; }
  ImageAxes axes() const { return nhwc() ? kNhwcAxes : kNchwAxes; }
};
GpuConv2dShape gpuConv2dShapeOf(const te::ComputeDAG& dag);

/// The steps of the tiled schedule for `dag` with `tile`. Error naming the part that does not
/// fit (a tile not covering its axis, a chunk that does not divide its reduction axis).
std::vector<schedule::StepPtr> gpuTiledConv2dSchedule(const te::ComputeDAG& dag, const GpuConv2dTile& tile);

/// The same steps with the state they make.
using GpuConv2dSchedule = GpuTileSchedule;
GpuConv2dSchedule gpuTiledConv2d(const te::ComputeDAG& dag, const GpuConv2dTile& tile);

}  // namespace tessel::ops
