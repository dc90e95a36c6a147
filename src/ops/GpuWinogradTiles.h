/// The tiled GPU schedule of an NCHW Winograd convolution (ops/WinogradNchw.h) with its
/// element-wise epilogue: one kernel per function, as every GPU function here is, so TVM's
/// three kernels (data pack, batched GEMM, inverse) become three phases of one thread block
/// that pass their results through shared memory rather than global memory.
///
/// A block owns a box of the output: `f` output channels x `y` rows x `x` columns of Winograd
/// tiles, for all alpha^2 transform points. Its threads (threadIdx.x) are a grid over the
/// alpha^2 points (`b`), the channels and the tiles, each computing a sub-tile of the batched
/// GEMMs in registers (b.inner points x f.inner channels x y.inner x x.inner tiles):
///  1. per chunk of `rc` input channels, the block's threads together transform the chunk's
///     input tiles (the data pack: V = B^T d B, one thread per tile and channel with the
///     transform's rows unrolled, the padding computed as the input is read) and copy the
///     chunk of the transformed weight U into shared memory; after a barrier every thread
///     accumulates its sub-tile from there (the batched GEMM: each V element feeds every
///     channel of the sub-tile, each U element every tile);
///  2. the sums go to a shared buffer of the block's M [alpha, alpha, f, y, x];
///  3. after a barrier, one thread per output channel and tile (threads over the block's
///     tiles) applies A^T . A, the m x m outputs of its tile unrolled, and stores them through
///     the epilogue (bias, batch norm, residual add, ReLU), the image's overhang cropped.
/// The per-thread transform-point part is a multiple of alpha (whole rows eps of M): bound
/// inference sizes the accumulator box exactly for those.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "ops/GpuSchedules.h"
#include "ops/GpuTiles.h"

namespace tessel::ops {

/// The Winograd convolution a tile applies to: the function's anchor must be the NCHW form's
/// GEMM, and its output, or its element-wise epilogue's, the function's one output.
struct GpuWinogradShape {
  int m = 0, alpha = 0;
  std::string input, gemm, outputRows;  ///< the stages the schedule places (the data pack, the GEMM, A^T M)
  std::string weight;                   ///< the transformed weight U the GEMM reads
  int64_t batch = 0, outChannels = 0, inChannels = 0, tileRows = 0, tileColumns = 0;
};
GpuWinogradShape gpuWinogradShapeOf(const te::ComputeDAG& dag);

/// The block's box and its threads: `b` [threads, per thread] of the alpha^2 transform points
/// (per thread a multiple of alpha), `f`, `y`, `x` [blocks, threads, per thread] of the output
/// channels, the rows and the columns of tiles; `rc` input channels per staged chunk.
struct GpuWinogradTile : GpuImageTile {
  std::array<int64_t, 2> b{};
  int64_t rc = 1;

  int64_t threads() const { return b[0] * f[1] * y[1] * x[1]; }
  int64_t accumulators() const { return b[1] * f[2] * y[2] * x[2]; }
  /// The block's channels x tiles, each a thread's inverse transform.
  int64_t blockOutputs() const { return f[1] * f[2] * y[1] * y[2] * x[1] * x[2]; }
};

/// Whether `perThread` of the alpha^2 transform points per thread are a box of M that bound
/// inference sizes exactly: a divisor of alpha (part of one row) or whole rows (a multiple of
/// alpha dividing alpha^2 in rows that divide alpha).
bool gpuWinogradPointsAreABox(int64_t perThread, int alpha);

/// Bytes of shared memory a block of the tile takes: the block's M, a chunk of V and one of U.
int64_t gpuWinogradSharedBytes(const GpuWinogradShape& shape, const GpuWinogradTile& tile);

/// The steps of the schedule for `dag` with `tile`, and the state they make. Error naming the
/// part that does not fit (a tile not covering its axis, a chunk not dividing the channels, a
/// per-thread part of the transform points that is not whole rows).
GpuTileSchedule gpuTiledWinograd(const te::ComputeDAG& dag, const GpuWinogradTile& tile);

/// The tile the default GPU schedule uses (and the template's fallback): a block of up to 8
/// tiles and 32 channels, a thread's sub-tile alpha points x up to 4 channels x up to 2 tiles,
/// shrunk until the block fits the device's threads and shared memory; where the device says how
/// many multiprocessors it has and the launch would give them fewer than two blocks each, fewer
/// outputs per thread, then fewer channels per block down to 16.
GpuWinogradTile defaultGpuWinogradTile(const GpuWinogradShape& shape, const GpuScheduleOptions& options);

}  // namespace tessel::ops
