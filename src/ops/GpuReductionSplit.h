/// Rule 5 of the default GPU schedule (ops/GpuSchedules.h), the plan half: whether a reduction
/// is split across the threads of a block, into how many parts, and which tile of outputs a
/// block computes. GpuSchedules.cpp turns the plan into steps (rfactor, shared memory, the
/// bindings); the choice is here, apart, so that it reads as the numbers it weighs.
#pragma once
#include <cstdint>
#include <optional>

#include "ops/GpuSchedules.h"
#include "te/Tensor.h"

namespace tessel::ops {

struct ReductionSplit {
  int reduceAxis = 0;      ///< the reduction axis cut into parts (the longest one)
  int64_t parts = 1;       ///< partial sums per output: threadIdx.y
  /// The block's tile of outputs: the output axes after `tileAxis`, and `tileFactor` of that
  /// axis's extent (all of it, or a divisor): `tileSize` outputs, threadIdx.x.
  int tileAxis = 0;
  int64_t tileFactor = 1;
  int64_t tileSize = 1;
};

/// The split of `reduction` (an output's accumulation, of the output's shape), or none; its tile
/// has at least 32 outputs (or the warp's, if more), whatever warp size the device reports. By the
/// rule (options.reductionParts 0): outputs fewer than 2 x 256 threads per multiprocessor
/// (minBlocks x 256; none when minBlocks is 0) and a reduction of at least 256 steps get the
/// fewest parts, a power of two up to 16, that reach 4 x 256 threads per multiprocessor, each part at least
/// 32 steps long and dividing the axis. options.reductionParts N > 1 asks for N parts wherever
/// N divides the axis. Either way the block (tile x parts threads) must fit maxThreadsPerBlock.
std::optional<ReductionSplit> planReductionSplit(const te::OperationNode& reduction, const GpuScheduleOptions& options);

}  // namespace tessel::ops
