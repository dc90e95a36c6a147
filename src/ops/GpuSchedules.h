/// The default GPU schedule of a fused function: a rule-based step list with thread binding that
/// runs any function built from the operators of this folder on a CUDA or OpenCL device without
/// tuning. It is what a network is compiled with for `--target cuda` / `--target "opencl ..."`.
///
/// The rules, by operator class (ops/OpTraits.h), in order:
///  1. Injective stages (element-wise, broadcast, padding, layout transforms, concatenation)
///     that are not outputs are inlined into their readers: on a GPU a whole-call intermediate
///     buffer is not allowed (passes/VerifyGpuKernel.h), and recomputing an index expression
///     costs less than a trip through global memory.
///  2. An output that is a reduction (a convolution, dense, pooling without an epilogue)
///     accumulates in a per-thread local stage (cache_write "local") and stores once.
///  3. Every output's spatial loops are fused and split by the threads of a block:
///     blockIdx.x over the blocks, threadIdx.x inside. Fusing keeps the innermost axis (the
///     contiguous one) innermost, so neighbouring threads touch neighbouring addresses. A small
///     output (the deep layers and the classifier at batch 1) gets smaller blocks, down to a
///     warp, so that its blocks still reach every multiprocessor: resnet-50's dense layer (1000
///     outputs) ran on 4 of the H100's 132 SMs with 256-thread blocks.
///  4. Every other reduction — the anchor of the function (OpTraits::anchor: conv2d,
///     depthwise, dense, matmul, Winograd's GEMM), pooling, softmax's max and sum — is
///     computed at the thread loop of the output that reads it: one thread per output element,
///     the reduction loops serial inside it. A direct convolution (OpTraits::channelAxis, not
///     the innermost axis) on a large output computes 4 or 2 neighbouring output channels per
///     thread instead, with
///     its reduction loops outside the unrolled channels, so that each input element loaded
///     feeds them all (the output's channel loop is split, innermost, unrolled).
///  5. A reduction with few outputs and a long reduction (the deep layers and the classifier
///     at batch 1: resnet-18's 7x7x512 convolutions have 25088 outputs of 4608 multiply-adds,
///     a few warps per multiprocessor waiting on loads) is split across threads instead: its
///     longest reduction axis is cut into `parts` (rfactor), each thread of a block sums one
///     part for one output of the block's tile (threadIdx.y the part, threadIdx.x the output,
///     the partial sum in a local accumulator), the partial sums meet in shared memory, and
///     after a barrier one thread per output adds them up and runs the epilogue. The tile is
///     whole inner axes of the output (a 7x7 image, 7 rows of a 14x14 one), so the shared buffer holds
///     exactly its outputs. It applies below 2 x 256 outputs per multiprocessor; the parts
///     are the fewest (a power of two, at most 16) that give the launch 4 x 256 threads per
///     multiprocessor, each part at least 32 long.
///  6. A Winograd convolution in NCHW (its anchor the NCHW form's GEMM, ops/WinogradNchw.h)
///     gets the Winograd tiles (ops/GpuWinogradTiles.h) with their default tile for the device:
///     one thread per output element would recompute the alpha^2 GEMMs and the data pack for
///     every output (about sixty times the direct convolution's work for F(4x4)).
///  7. A matrix product (dense, matmul, batch_matmul: a transformer's projections and its
///     attention products) of 16 rows and 16 columns or more, a reduction with a divisor from 4
///     to 32, and whose output or element-wise epilogue is the function's one output, gets the
///     shared-memory GEMM tiles
///     (ops/GpuDenseTiles.h) with their default tile for the device: one thread per output
///     would load every operand element once per output that reads it.
///  8. A function whose one output is element-wise over rows and whose every reduction is a
///     statistic of its rows (layer norm's mean and variance, softmax's max and sum) gets a
///     block per row: each statistic's partial sums over the block's threads (thread t taking
///     elements t, t + threads, ...) meet in shared memory and every thread combines them into
///     its own copy, which the next statistic and the output read; rule 4 would compute every
///     statistic again for each element (BERT-base's layer norms took 0.86 of its 3.66 ms on
///     an H200 so). As every thread reads all the partials, a row takes the fewest threads that
///     divide it from a warp up (its rows of 768 and 128: 32), else the most up to the block.
/// A rule that cannot apply is an Error naming the stage and its operator class: there is no
/// fallback to a schedule the device could not run.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/Stmt.h"
#include "passes/GpuLimits.h"
#include "schedule/Steps.h"
#include "te/ComputeDAG.h"

namespace tessel::ops {

struct GpuScheduleOptions {
  /// Threads per block of every output's launch (the target's max_threads_per_block caps it).
  int64_t threadsPerBlock = 256;
  /// Blocks a launch should have at least, while its blocks can shrink (by halves, down to
  /// minThreadsPerBlock): twice the multiprocessors of the device; 0 leaves every block at
  /// threadsPerBlock.
  int64_t minBlocks = 0;
  int64_t minThreadsPerBlock = 32;  ///< a warp: fewer threads would leave lanes idle
  /// Output channels per thread of a direct convolution: 0 by the rule (4 or 2 where enough
  /// threads remain, NCHW only), 1 none, 2 or 4 that many where the channels divide (else none).
  int64_t channelTile = 0;
  /// The device's threads per block: a block of rule 5 has its tile's threads times the parts.
  int64_t maxThreadsPerBlock = 1024;
  /// Parts of a split reduction (rule 5): 0 by the rule (needs minBlocks), 1 none, N > 1 that
  /// many for every reduction whose longest axis N divides and whose blocks fit.
  int64_t reductionParts = 0;
  /// The device's shared memory per block: rule 6's buffers fit in it.
  int64_t maxSharedMemoryPerBlock = 48 * 1024;
  /// The device's multiprocessors (0: unknown): rule 7's tiles leave two blocks for each.
  int64_t multiProcessors = 0;
  /// Rule 7's products on tensor cores with this instruction where their shape allows
  /// (ops::defaultGpuTensorCoreTile); none: on the fp32 units.
  std::optional<ir::WarpMmaKind> tensorCores = std::nullopt;
};

/// The options for a device with these parameters: threads capped by its limit, and blocks
/// for twice its multiprocessors (none asked for when the count is unknown, 0: then no
/// reduction is split by the rule either).
GpuScheduleOptions gpuScheduleOptionsFor(int64_t maxThreadsPerBlock, int64_t multiProcessorCount, int64_t warpSize);
/// The same for a device's limits, its shared memory per block included, and, where it has TF32
/// tensor cores, its products on them as exact as `precision` asks: fp32-accurate
/// (ir::WarpMmaKind::Tf32x3) or one TF32 product (ir::WarpMmaKind::Tf32).
GpuScheduleOptions gpuScheduleOptionsFor(const passes::GpuLimits& limits, target::MatmulPrecision precision);
/// The tensor-core instruction of a device's products at `precision`; none without TF32 tensor cores.
std::optional<ir::WarpMmaKind> tensorCoreProductsFor(const passes::GpuLimits& limits, target::MatmulPrecision precision);

/// The default GPU schedule's steps (rules above). Throws Error naming the stage a rule fails on.
std::vector<schedule::StepPtr> defaultGpuSchedule(const te::ComputeDAG& dag, const GpuScheduleOptions& options = {});

}  // namespace tessel::ops
