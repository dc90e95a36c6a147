/// The tiled schedules of a dense layer on a GPU. At small batch (TVM's dense_small_batch CUDA
/// template) and at large batch (dense_large_batch), below.
///
/// Small batch (TVM's dense_small_batch CUDA
/// template, whose `tile_k` it takes, with a tile of outputs per block added). At batch 1 a
/// dense layer is a matrix-vector product: few outputs (resnet's 1000 classes), each a long
/// reduction (512 to 2048 features), and every weight read once, so the kernel is bound by
/// how fast the weights stream in. A block computes `outputThreads` outputs of one batch row
/// (threadIdx.y); each output's reduction is shared out over `reduceThreads` threads
/// (threadIdx.x), thread t summing elements t, t + reduceThreads, ...: neighbouring threads
/// read neighbouring weights, so a warp's loads are whole cache lines. The partial sums meet
/// in shared memory (an rfactor stage), and after a barrier one thread per output adds them up
/// and runs the function's element-wise epilogue (bias, ReLU) as it stores.
#pragma once
#include <cstdint>
#include <string>

#include "ops/GpuTiles.h"

namespace tessel::ops {

/// The dense layer a tile applies to: the function's anchor must be a dense ([N, K] x [M, K]^T)
/// whose output, or the element-wise epilogue's, is the function's one output.
struct GpuDenseShape {
  std::string anchor;  ///< the dense stage
  int64_t batch = 1, outputs = 0, reduction = 0;  ///< N, M, K
};
GpuDenseShape gpuDenseShapeOf(const te::ComputeDAG& dag);

struct GpuDenseSmallBatchTile {
  int64_t reduceThreads = 1;  ///< threads summing one output's reduction (threadIdx.x; divides K)
  int64_t outputThreads = 1;  ///< outputs of a block (threadIdx.y; divides M)
  int64_t autoUnrollMaxStep = 0;  ///< auto_unroll_max_step on the block's loops (0: none)
  bool unrollExplicit = true;     ///< unroll in the IR (else `#pragma unroll` for the device compiler)

  int64_t threads() const { return reduceThreads * outputThreads; }
};

/// The steps of the schedule for `dag` with `tile`, and the state they make. Error naming the
/// part that does not divide its axis.
GpuTileSchedule gpuDenseSmallBatch(const te::ComputeDAG& dag, const GpuDenseSmallBatchTile& tile);

/// Large batch (TVM's dense_large_batch, without its virtual threads): a matrix product, tiled
/// as a shared-memory GEMM. A block computes a tile of batch rows x outputs; its threads
/// (threadIdx.y along the rows, x along the outputs) each a contiguous sub-tile in registers.
/// The reduction runs in chunks of `k`: per chunk the block's threads copy the chunk's rows of
/// the data and of the weights into shared memory together, wait at a barrier, and accumulate
/// from there, so each element loaded from global memory feeds a whole row or column of the
/// block's tile.
struct GpuDenseLargeBatchTile {
  std::array<int64_t, 3> x{}, y{};  ///< [blocks, threads, per thread] of the batch rows and outputs
  int64_t k = 1;                    ///< the reduction's chunk staged in shared memory (divides K)
  int64_t autoUnrollMaxStep = 0;
  bool unrollExplicit = true;

  int64_t threads() const { return x[1] * y[1]; }
};

GpuTileSchedule gpuDenseLargeBatch(const te::ComputeDAG& dag, const GpuDenseLargeBatchTile& tile);

}  // namespace tessel::ops
