#include "ops/GpuReductionSplit.h"

#include <algorithm>

namespace tessel::ops {

namespace {

constexpr int64_t kMinReductionLength = 256;  // shorter ones take less than the launch costs
constexpr int64_t kMinPartLength = 32;        // a part must amortize its share of the barrier and the shared-memory sum
constexpr int64_t kMaxParts = 16;
// A tile has at least a warp of outputs, 32 also where the device reports no warp (OpenCL
// reports 1): NVIDIA's OpenCL ran resnet-18 in 10 ms with tiles of one output and blocks of
// 2-16 threads, against 1.03 ms through CUDA with tiles of 49 and 98.
constexpr int64_t kMinTileOutputs = 32;

/// The smallest tile of whole inner output axes (the innermost one, then outwards, the last
/// one possibly in part: a divisor of its extent) with at least `lanes` outputs, so that a
/// block's warps are full; the whole output where it has fewer. Whole axes keep the tile a box,
/// which is what bound inference gives the shared buffer of partial sums: it holds exactly the
/// tile's outputs.
ReductionSplit tileOf(const std::vector<int64_t>& shape, int64_t lanes) {
  ReductionSplit plan;
  int64_t inner = 1;
  for (int axis = int(shape.size()) - 1; axis >= 0; --axis) {
    int64_t extent = shape[size_t(axis)];
    if (inner * extent < lanes) {
      inner *= extent;
      continue;
    }
    for (int64_t factor = 1; factor <= extent; ++factor)
      if (extent % factor == 0 && inner * factor >= lanes) {
        plan.tileAxis = axis;
        plan.tileFactor = factor;
        plan.tileSize = inner * factor;
        return plan;
      }
  }
  plan.tileAxis = 0;
  plan.tileFactor = shape.empty() ? 1 : shape[0];
  plan.tileSize = inner;
  return plan;
}

}  // namespace

std::optional<ReductionSplit> planReductionSplit(const te::OperationNode& op, const GpuScheduleOptions& options) {
  const ir::ReduceNode* reduce = op.reduction();
  if (!reduce || reduce->axes.empty() || op.shape.empty() || options.reductionParts == 1) return std::nullopt;
  int64_t outputs = 1, length = 1;
  for (int64_t e : op.shape) outputs *= e;
  int longest = 0;
  for (size_t k = 0; k < reduce->axes.size(); ++k) {
    length *= reduce->axes[k].extent;
    if (reduce->axes[k].extent > reduce->axes[size_t(longest)].extent) longest = int(k);
  }
  int64_t axisExtent = reduce->axes[size_t(longest)].extent;
  ReductionSplit plan = tileOf(op.shape, std::max(kMinTileOutputs, options.minThreadsPerBlock));
  plan.reduceAxis = longest;
  auto fits = [&](int64_t parts) {
    return axisExtent % parts == 0 && plan.tileSize * parts <= options.maxThreadsPerBlock;
  };
  if (options.reductionParts > 1) {
    if (!fits(options.reductionParts)) return std::nullopt;
    plan.parts = options.reductionParts;
    return plan;
  }
  // By the rule: four blocks of 256 threads per multiprocessor keep enough loads in flight,
  // for outputs under half of that. resnet-18's 28x28x128 convolutions (100352 outputs, 2 parts)
  // ran slower split on the H100 (0.083 ms against 0.058-0.066), its 14x14x256 ones (50176, 4
  // parts) faster (0.075 against 0.10-0.11).
  int64_t wanted = 2 * options.minBlocks * 256;
  if (options.minBlocks <= 0 || 2 * outputs >= wanted || length < kMinReductionLength) return std::nullopt;
  auto usable = [&](int64_t parts) { return parts <= kMaxParts && length / parts >= kMinPartLength && fits(parts); };
  if (!usable(2)) return std::nullopt;
  plan.parts = 2;
  while (outputs * plan.parts < wanted && usable(plan.parts * 2)) plan.parts *= 2;
  return plan;
}

}  // namespace tessel::ops
