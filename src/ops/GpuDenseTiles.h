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
#include <optional>
#include <string>

#include "ir/Stmt.h"
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

/// A matrix product as a shared-memory GEMM: a dense layer at large batch (TVM's
/// dense_large_batch, without its virtual threads), a matmul, or a batch_matmul (a stack of
/// products, the second operand's stack broadcast: attention's Q·Kᵀ and ·V, a transformer's
/// projections [..., M, K] x [K, N]). A block computes a tile of rows x columns of one product
/// of the stack (blockIdx.z); its threads (threadIdx.y along the rows, x along the columns)
/// each a contiguous sub-tile in registers. The reduction runs in chunks of `k`: per chunk the
/// block's threads copy the chunk's rows of both operands into shared memory together, wait at
/// a barrier, and accumulate from there, so each element loaded from global memory feeds a
/// whole row or column of the block's tile. The element-wise epilogue (bias, GELU, a residual
/// add) runs as each output is stored.
struct GpuGemmShape {
  std::string anchor;       ///< the product's stage
  std::string data, other;  ///< the producers of its rows operand and of its columns operand
  int64_t stack = 1;        ///< products in the stack (the output's leading axes)
  int64_t rows = 0, columns = 0, reduction = 0;  ///< M, N, K of each product
  /// Whether each operand's innermost (contiguous) axis is the reduction: [M, K] and a dense
  /// weight [N, K] are, a matmul's [K, N] is not.
  bool dataReductionInnermost = true, otherReductionInnermost = true;
};
/// The GEMM of a function anchored by dense, matmul or batch_matmul whose output (or its
/// element-wise epilogue's) is the function's one output. Error naming what does not fit.
GpuGemmShape gpuGemmShapeOf(const te::ComputeDAG& dag);

/// The product when the GEMM tiles fit the function, it has 16 rows and 16 columns or more and
/// a reduction of 4 or more (the default GPU schedule's rule 7): a thinner product (a
/// matrix-vector product, a classifier at batch 1) has too little reuse for them, and the
/// default rules split its reduction instead.
std::optional<GpuGemmShape> gpuGemmTilesApply(const te::ComputeDAG& dag);

struct GpuGemmTile {
  std::array<int64_t, 3> x{}, y{};  ///< [blocks, threads, per thread] of the rows and the columns
  int64_t k = 1;                    ///< the reduction's chunk staged in shared memory (the last one guarded if it does not divide K)
  int64_t autoUnrollMaxStep = 0;
  bool unrollExplicit = true;
  /// On tensor cores (CUDA, sm_80 and later): each warp's 8 x 4 threads (8 row threads by 4
  /// column threads of the block's, threadIdx.x their lane, the block's warps along y and z)
  /// compute their even sub-tiles together with the instruction (a ragged last tile computes past
  /// the product and stores what is inside); the chunk must be a multiple of 8.
  std::optional<ir::WarpMmaKind> tensorCores = std::nullopt;
  /// The widest access (1, 2 or 4 elements) a thread copies an operand's chunk with: each
  /// operand takes the widest up to this that its window's rows and the block's threads divide
  /// (float4 loads: a quarter of the instructions, four times the bytes in flight per load).
  int64_t copyLanes = 4;
  /// Both operands' copies double-buffered (schedule::DoubleBufferStep): each thread loads its
  /// share of the next chunk while the block multiplies the current one.
  bool doubleBuffer = true;
  /// The chunks each double-buffered copy keeps in shared memory (DoubleBufferStep's stages):
  /// more than 2 only where the GPU copies asynchronously (GpuLimits::asyncCopies), which keeps
  /// stages - 1 chunks in flight while the block multiplies one.
  int64_t stages = 2;
  /// On tensor cores: the columns operand's shared rows padded to a multiple of copyLanes too
  /// (the rows operand's always are), so that its copies stay whole float4 stores, which an
  /// asynchronous copy needs, at the price of bank conflicts in its fragment loads (the padding
  /// that avoids them all is odd).
  bool alignCopyRows = false;
  /// On tensor cores: each lane holds rows g, g + 8, ... and columns t, t + 4, ... of its warp's
  /// tile (ir::WarpMmaNode::interleavedLanes, the fragments' own layout) rather than a contiguous
  /// sub-tile: a fragment's rows are then neighbours in shared memory, loaded without bank
  /// conflicts and, where an operand's steps are contiguous, with ldmatrix.
  bool interleaveLanes = false;

  int64_t threads() const { return x[1] * y[1]; }
};

GpuTileSchedule gpuGemmTiles(const te::ComputeDAG& dag, const GpuGemmTile& tile);

/// The tile a function gets untuned on a device with `multiprocessors` (0: unknown),
/// `maxThreadsPerBlock` and `warpSize` (blocks of two warps or more preferred): 16 x 16 threads of 4 x 4 outputs where the product is large, smaller
/// sub-tiles and blocks (down to 8 x 8 threads of one output; fewer threads where an axis is
/// short or the device allows no more) until the launch has two blocks per multiprocessor (what
/// the tuned BERT-base products on an H200 had, or more); among tiles alike, the one whose
/// blocks cover the least padding. A lone block has no idle threads (gpuGemmTiles refuses those).
/// The chunk: the longest divisor of the reduction up to 32, or 32 with a guarded last chunk
/// where that divisor is below 8 (ViT's 197 tokens).
GpuGemmTile defaultGpuGemmTile(const GpuGemmShape& shape, int64_t multiprocessors, int64_t maxThreadsPerBlock, int64_t warpSize);

/// The rows (and columns) of the largest tile defaultGpuGemmTile takes: 16 threads of 4
/// outputs. A product with few such tiles has too little parallel work for a GPU's
/// multiprocessors unless its reduction is split (graph::gpuReductionSplitChoice).
constexpr int64_t kGpuGemmLargestTileEdge = 16 * 4;

/// The tensor-core tile a function gets untuned (`kind` of instruction), when the product has
/// one that measures faster than the fp32 tile. One TF32 product a step: blocks of two warps
/// side by side, interleaved lanes of 4 x 8, 2 x 8 or 2 x 4 outputs (the largest whose launch
/// has a block for every one of the `multiprocessors`, none wider than the product), the longest
/// chunk of 64, 32, 16 or 8 steps dividing the reduction whose copies fit in
/// `maxSharedMemoryPerBlock`. Three: contiguous sub-tiles of 2 or 4 x 2 or 4, 1 to 4 warps each
/// way, preferred as the fp32 tile is, the longest chunk up to 64. Taken when its launch keeps 2
/// warps per multiprocessor busy (4 for three products over a ragged last tile), and for three
/// products only where the reduction spans 4 chunks or more (a next chunk's copies hide them).
/// `multiprocessors` must be known. `onlyWhereFaster` false: the tile whatever the warps it
/// keeps busy (benches compare it).
std::optional<GpuGemmTile> defaultGpuTensorCoreTile(const GpuGemmShape& shape, ir::WarpMmaKind kind, int64_t multiprocessors,
                                                    int64_t maxThreadsPerBlock, int64_t maxSharedMemoryPerBlock = 48 * 1024,
                                                    bool onlyWhereFaster = true);

}  // namespace tessel::ops
