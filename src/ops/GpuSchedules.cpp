#include "ops/GpuSchedules.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "ops/GpuAttentionTiles.h"
#include "ops/GpuDenseTiles.h"
#include "ops/GpuReductionSplit.h"
#include "ops/GpuWinogradTiles.h"
#include "ops/OpTraits.h"
#include "ops/Schedules.h"
#include "ops/ScheduleRecorder.h"
#include "support/Error.h"

namespace tessel::ops {

using namespace schedule;

namespace {



/// The operator class a rule names in its error: the traits table's tag where it has the
/// operation, else whether it is a reduction.
std::string operatorClass(const te::OperationNode& op) {
  const OpTraits& traits = traitsOf(op);
  if (!traits.tag.empty()) return traits.anchor ? traits.tag + ", the function's anchor class" : traits.tag;
  return op.reduction() ? "reduction" : "injective";
}

class GpuPlanner {
 public:
  GpuPlanner(const te::ComputeDAG& dag, const GpuScheduleOptions& options) : dag_(dag), options_(options), rec_(dag) {}

  std::vector<StepPtr> run() {
    inlineInjective();
    if (auto plan = rowStatisticsPlan()) {
      rowStatistics(*plan);
      return rec_.steps;
    }
    for (const std::string& out : dag_.outputNames()) {
      const te::OperationNode* accumulation = accumulationOf(out);
      auto split = accumulation ? planReductionSplit(*accumulation, options_) : std::nullopt;
      if (split) splitReduction(out, *split);
      else bindOutput(out);
    }
    attachReductions();
    return rec_.steps;
  }

 private:
  /// Applies one rule to a stage; its Error gets the stage and its operator class in front.
  template <class F>
  void rule(const std::string& what, const std::string& stage, F&& apply) {
    try {
      apply();
    } catch (const Error& e) {
      throw e.withContext(fmt::format("GPU default schedule: {} of stage '{}' ({})", what, stage, operatorClass(*dag_.op(stage))));
    }
  }

  // Rule 1. Readers first, so that a chain of injective stages folds into the last reader.
  void inlineInjective() {
    for (auto it = dag_.ops().rbegin(); it != dag_.ops().rend(); ++it) {
      const auto& op = **it;
      if (op.isPlaceholder() || op.reduction() || dag_.isOutput(op.name)) continue;
      rule("inlining", op.name, [&] { rec_.computeInline(op.name); });
    }
  }

  // Rules 2, 3 and 4's channel tile.
  void bindOutput(const std::string& out) {
    rule("thread binding", out, [&] {
      std::string accumulation = dag_.op(out)->reduction() ? rec_.cacheWrite(out) : anchorOf(out);
      std::vector<std::string> loops = rec_.leaves(out);
      int64_t tile = accumulation.empty() ? 1 : channelTile(out, accumulation);
      std::string channelInner;
      if (tile > 1) {
        // Each thread computes `tile` neighbouring channels (innermost, unrolled): they read the
        // same inputs, loaded once for all of them.
        int axis = traitsOf(*rec_.stage(accumulation).op).channelAxis;
        auto parts = rec_.split(out, loops[size_t(axis)], {tile});
        loops = rec_.leaves(out);
        loops.erase(std::find(loops.begin(), loops.end(), parts[1]));
        loops.push_back(parts[1]);
        rec_.reorder(out, loops);
        loops.pop_back();
        channelInner = parts[1];
        channelTile_[accumulation] = tile;
      }
      std::string fused = rec_.fuse(out, loops);
      int64_t threads = threadsFor(rec_.extent(out, fused));
      auto parts = rec_.split(out, fused, {threads});
      rec_.annotate(out, parts[0], Annotation::BlockX);
      rec_.annotate(out, parts[1], Annotation::ThreadX);
      if (!channelInner.empty()) rec_.annotate(out, channelInner, Annotation::Unroll);
      threadLoop_[out] = parts[1];
    });
  }

  /// Rule 8's function: one element-wise output [rows..., C] whose every reduction is a
  /// statistic of its rows (shape [rows...] or [rows..., 1], one reduction axis of extent C).
  struct RowStatistics {
    std::string out;
    std::vector<std::string> statistics;  ///< in stage order
    int64_t threads = 0;                  ///< per row (C need not be a multiple: guarded)
  };

  std::optional<RowStatistics> rowStatisticsPlan() const {
    if (dag_.outputNames().size() != 1) return std::nullopt;
    RowStatistics plan;
    plan.out = dag_.outputNames()[0];
    const auto& out = *dag_.op(plan.out);
    if (out.reduction() || out.shape.size() < 2) return std::nullopt;
    std::vector<int64_t> rows(out.shape.begin(), out.shape.end() - 1), rowsKept = rows;
    rowsKept.push_back(1);
    int64_t columns = out.shape.back();
    for (const auto& op : dag_.ops()) {
      const auto* reduce = op->reduction();
      if (op->isPlaceholder() || !reduce) continue;
      if ((op->shape != rows && op->shape != rowsKept) || reduce->axes.size() != 1 || reduce->axes[0].extent != columns)
        return std::nullopt;
      plan.statistics.push_back(op->name);
    }
    if (plan.statistics.empty()) return std::nullopt;
    // A block per row, its threads taking every threads-th element. Every thread combines all
    // the threads' partials of each statistic: T loads for a row of T threads, beside the
    // ceil(C / T) elements it reduces. So whole warps (minThreadsPerBlock), up to the other
    // rules' block size, the count that makes T + ceil(C / T) least, the fewest where counts
    // tie; a row shorter than a warp takes a thread per element. BERT-base's softmax rows of
    // 128 and layer norm's of 768 take 32; so do ViT-B/16's rows of 197, a prime, in seven
    // guarded steps (all 197 threads reading 197 partials made its softmax 6x PyTorch's on an
    // H200); rows of 3072 take 64.
    const int64_t warp = std::max<int64_t>(options_.minThreadsPerBlock, 1);
    const int64_t cap = std::min(options_.threadsPerBlock, options_.maxThreadsPerBlock);
    auto cost = [&](int64_t t) { return t + (columns + t - 1) / t; };
    plan.threads = std::min({columns, warp, cap});
    for (int64_t t = 2 * warp; t <= cap && t < columns; t += warp)
      if (cost(t) < cost(plan.threads)) plan.threads = t;
    if (plan.threads == 0) return std::nullopt;
    return plan;
  }

  // Rule 8: a block per row; each statistic's partial sums over the block's threads in shared
  // memory, combined by every thread into its own copy, so that the next statistic (the
  // variance after the mean, softmax's sum after its max) and the output read it in registers.
  void rowStatistics(const RowStatistics& plan) {
    const std::string& out = plan.out;
    rule("row statistics", out, [&] {
      std::vector<std::string> loops = rec_.leaves(out);
      std::string rowsLoop = rec_.fuse(out, {loops.begin(), loops.end() - 1});
      auto columns = rec_.split(out, loops.back(), {plan.threads});  // [per thread, threadIdx.x]
      rec_.reorder(out, {rowsLoop, columns[1], columns[0]});
      rec_.annotate(out, rowsLoop, Annotation::BlockX);
      rec_.annotate(out, columns[1], Annotation::ThreadX);
      threadLoop_[out] = columns[1];
      // Readers first (the variance before the mean it reads): a stage is attached where every
      // reader already is. Lowering emits the stages of one loop in stage order, the mean first.
      for (auto it = plan.statistics.rbegin(); it != plan.statistics.rend(); ++it) {
        const std::string& statistic = *it;
        size_t spatial = rec_.stage(statistic).op->axes.size();
        auto k = rec_.split(statistic, rec_.leaves(statistic)[spatial], {plan.threads});
        std::string partial = rec_.rfactor(statistic, k[1]);
        std::string partialLocal = rec_.cacheWrite(partial);
        std::string partialShared = rec_.cacheRead(partial, "shared", {statistic});
        rec_.computeInline(partial);
        std::string combined = rec_.cacheWrite(statistic);
        rec_.computeInline(statistic);
        // The combination first: the shared partials are attached where their reader is.
        rec_.computeAt(combined, out, rowsLoop);
        rec_.computeAt(partialShared, out, rowsLoop);
        // The partials' axes: the threads' part first (rfactor's), then the row's (one here).
        std::string part = rec_.leaves(partialShared)[0];
        rec_.annotate(partialShared, part, Annotation::ThreadX);
        rec_.computeAt(partialLocal, partialShared, part);
        for (const std::string& stage : {partialLocal, partialShared, combined, statistic}) placed_.insert(stage);
      }
    });
  }

  /// The reduction computed for `out`'s elements one to one: itself, or the anchor of which it
  /// is the epilogue; null for other outputs.
  const te::OperationNode* accumulationOf(const std::string& out) const {
    if (dag_.op(out)->reduction()) return dag_.op(out).get();
    std::string anchor = anchorOf(out);
    return anchor.empty() ? nullptr : dag_.op(anchor).get();
  }

  // Rule 5: the reduction in parts across threadIdx.y, the block's tile of outputs across
  // threadIdx.x, partial sums in shared memory, one thread per output adding them up.
  void splitReduction(const std::string& out, const ReductionSplit& plan) {
    rule("splitting the reduction", out, [&] {
      std::string accumulation = dag_.op(out)->reduction() ? rec_.cacheWrite(out) : anchorOf(out);
      // The parts: rfactor of the outer half of the split axis (each part a contiguous run of
      // it), accumulated per thread in a local stage, stored to a shared copy the sum reads.
      size_t spatial = rec_.stage(accumulation).op->axes.size();
      std::string axis = rec_.leaves(accumulation)[spatial + size_t(plan.reduceAxis)];
      auto halves = rec_.split(accumulation, axis, {rec_.extent(accumulation, axis) / plan.parts});
      std::string partial = rec_.rfactor(accumulation, halves[0]);
      std::string partialLocal = rec_.cacheWrite(partial);
      std::string partialShared = rec_.cacheRead(partial, "shared", {accumulation});
      rec_.computeInline(partial);

      // The output: its tile's axes fused inside (threadIdx.x), the others outside (blockIdx.x).
      std::vector<std::string> loops = rec_.leaves(out);
      size_t at = size_t(plan.tileAxis);
      std::vector<std::string> outer(loops.begin(), loops.begin() + int64_t(at)), inner;
      if (plan.tileFactor < rec_.extent(out, loops[at])) {
        auto parts = rec_.split(out, loops[at], {plan.tileFactor});
        outer.push_back(parts[0]);
        inner.push_back(parts[1]);
      } else {
        inner.push_back(loops[at]);
      }
      inner.insert(inner.end(), loops.begin() + int64_t(at) + 1, loops.end());
      std::string threads = rec_.fuse(out, inner), blocks;
      if (outer.empty()) {  // one tile is the whole output: a grid of one block
        auto parts = rec_.split(out, threads, {plan.tileSize});
        blocks = parts[0];
        threads = parts[1];
      } else {
        blocks = rec_.fuse(out, outer);
      }
      // threadIdx.y of extent 1: the final sum and the epilogue run in the first part's
      // threads only (the others are guarded off), once per output.
      auto lanes = rec_.split(out, threads, {1});
      rec_.annotate(out, blocks, Annotation::BlockX);
      rec_.annotate(out, lanes[0], Annotation::ThreadX);
      rec_.annotate(out, lanes[1], Annotation::ThreadY);
      threadLoop_[out] = lanes[1];
      // The sum of the parts, per output (rule 4's place, here: the shared stage below must
      // be computed where its reader already is).
      rec_.computeAt(accumulation, out, lanes[1]);
      attachedTo_[accumulation] = out;
      placed_.insert(accumulation);

      // The partial sums of the block's tile, one per thread: parts x tile in shared memory.
      rec_.computeAt(partialShared, out, blocks);
      std::vector<std::string> sharedLoops = rec_.leaves(partialShared);
      std::string part = sharedLoops[0];
      std::string tile = rec_.fuse(partialShared, {sharedLoops.begin() + 1, sharedLoops.end()});
      TESSEL_CHECK(rec_.extent(partialShared, tile) == plan.tileSize,
                   "the shared partial sums cover {} outputs for a tile of {}", rec_.extent(partialShared, tile), plan.tileSize);
      rec_.annotate(partialShared, part, Annotation::ThreadY);
      rec_.annotate(partialShared, tile, Annotation::ThreadX);
      rec_.computeAt(partialLocal, partialShared, tile);
      placed_.insert(partialLocal);
    });
  }

  /// The function's anchor when `out` is its element-wise epilogue (same shape), else "".
  std::string anchorOf(const std::string& out) const {
    auto anchor = findAnchorStage(dag_);
    if (!anchor || *anchor == out || dag_.op(*anchor)->shape != dag_.op(out)->shape) return "";
    return *anchor;
  }

  /// Channels per thread for an accumulation computed at `out`'s threads: 4 or 2 where the
  /// class has a channel axis that the tile divides, not the innermost one, and the launch
  /// keeps at least 512 threads per multiprocessor (minBlocks blocks of 256) with it, else 1.
  /// The tile trades threads for loads: on a small output the threads are what is short.
  int64_t channelTile(const std::string& out, const std::string& accumulation) const {
    const auto& op = *rec_.stage(accumulation).op;
    int axis = traitsOf(op).channelAxis;
    if (axis < 0 || options_.channelTile == 1 || op.shape != dag_.op(out)->shape) return 1;
    // By the rule, not along the innermost axis (NHWC's channels): the threads' stores and
    // weight loads would spread over `tile` times the cache lines. Resnet-50 in NHWC on an
    // H100: 7.19 ms with channel tiles, 6.85 ms without.
    if (options_.channelTile == 0 && size_t(axis) + 1 == op.shape.size()) return 1;
    int64_t elements = 1;
    for (int64_t e : op.shape) elements *= e;
    for (int64_t tile : {int64_t(4), int64_t(2)}) {
      if (options_.channelTile > 1 && tile != options_.channelTile) continue;
      if (op.shape[size_t(axis)] % tile == 0 && elements / tile >= options_.minBlocks * 256) return tile;
    }
    return 1;
  }

  /// Threads per block for an output of `elements`: the option's, halved while the launch
  /// would have fewer than minBlocks blocks (not below minThreadsPerBlock), at most `elements`.
  int64_t threadsFor(int64_t elements) const {
    int64_t threads = options_.threadsPerBlock;
    auto blocks = [&](int64_t t) { return (elements + t - 1) / t; };
    while (threads / 2 >= std::max<int64_t>(1, options_.minThreadsPerBlock) && blocks(threads) < options_.minBlocks) threads /= 2;
    return std::clamp<int64_t>(threads, 1, elements);
  }

  /// The output a stage's value ends in: the output itself, or the output that every reader
  /// (through inlined stages and stages attached already) is computed in.
  std::string ownerOf(const std::string& stage) {
    if (threadLoop_.count(stage)) return stage;
    std::string owner;
    for (const std::string& reader : rec_.state.effectiveConsumers(stage)) {
      auto found = attachedTo_.find(reader);
      std::string o = found != attachedTo_.end() ? found->second : threadLoop_.count(reader) ? reader : "";
      if (o.empty() || (!owner.empty() && o != owner))
        fail("its readers are computed in different outputs ({} and {}): one thread cannot compute it for both",
             owner.empty() ? reader : owner, o.empty() ? reader : o);
      owner = o;
    }
    TESSEL_CHECK(!owner.empty(), "no output reads it");
    return owner;
  }

  // Rule 4. Readers first: a reduction read by another one (softmax's max, read by its sum)
  // attaches after its reader has its place.
  void attachReductions() {
    const auto& stages = rec_.state.stages();
    std::vector<std::string> pending;
    for (const auto& s : stages)
      if (!s.op->isPlaceholder() && s.op->reduction() && !threadLoop_.count(s.name()) && !placed_.count(s.name()))
        pending.push_back(s.name());
    for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
      const std::string& r = *it;
      rule("computing at the thread loop", r, [&] {
        std::string owner = ownerOf(r);
        rec_.computeAt(r, owner, threadLoop_.at(owner));
        attachedTo_[r] = owner;
        if (channelTile_.count(r)) tileChannels(r);
      });
    }
  }

  /// The accumulation of a channel tile: the reduction loops outside, the tile's channels
  /// innermost and unrolled, so that each input loaded feeds every channel's accumulator.
  void tileChannels(const std::string& accumulation) {
    std::vector<std::string> loops = rec_.leaves(accumulation);
    const auto& op = *rec_.stage(accumulation).op;
    std::string channel = loops[size_t(traitsOf(op).channelAxis)];
    std::vector<std::string> order;
    for (size_t i = 0; i < loops.size(); ++i)
      if (loops[i] != channel) order.push_back(loops[i]);
    order.push_back(channel);
    rec_.reorder(accumulation, order);
    rec_.annotate(accumulation, channel, Annotation::Unroll);
  }

  const te::ComputeDAG& dag_;
  GpuScheduleOptions options_;
  Recorder rec_;
  std::map<std::string, std::string> threadLoop_;  ///< output -> its threadIdx.x loop
  std::map<std::string, std::string> attachedTo_;  ///< reduction -> the output it is computed in
  std::map<std::string, int64_t> channelTile_;     ///< accumulation -> its channels per thread
  std::set<std::string> placed_;                   ///< reductions placed by their rule already (rule 5's partial sums)
};

}  // namespace

GpuScheduleOptions gpuScheduleOptionsFor(int64_t maxThreadsPerBlock, int64_t multiProcessorCount, int64_t warpSize) {
  GpuScheduleOptions options;
  options.threadsPerBlock = std::min(options.threadsPerBlock, maxThreadsPerBlock);
  options.minBlocks = 2 * multiProcessorCount;
  options.minThreadsPerBlock = std::max<int64_t>(1, std::min(warpSize, options.threadsPerBlock));
  options.maxThreadsPerBlock = maxThreadsPerBlock;
  options.multiProcessors = multiProcessorCount;
  return options;
}

std::optional<ir::WarpMmaKind> tensorCoreProductsFor(const passes::GpuLimits& limits, target::MatmulPrecision precision) {
  if (!limits.tf32TensorCores) return std::nullopt;
  return precision == target::MatmulPrecision::Tf32 ? ir::WarpMmaKind::Tf32 : ir::WarpMmaKind::Tf32x3;
}

GpuScheduleOptions gpuScheduleOptionsFor(const passes::GpuLimits& limits, target::MatmulPrecision precision) {
  GpuScheduleOptions options = gpuScheduleOptionsFor(limits.maxThreadsPerBlock, limits.multiProcessorCount, limits.warpSize);
  options.maxSharedMemoryPerBlock = limits.maxSharedMemoryPerBlock;
  options.tensorCores = tensorCoreProductsFor(limits, precision);
  return options;
}

std::vector<StepPtr> defaultGpuSchedule(const te::ComputeDAG& dag, const GpuScheduleOptions& options) {
  TESSEL_CHECK(options.threadsPerBlock >= 1, "GPU default schedule: threads per block must be positive, got {}", options.threadsPerBlock);
  TESSEL_CHECK(options.channelTile == 0 || options.channelTile == 1 || options.channelTile == 2 || options.channelTile == 4,
               "GPU default schedule: the channel tile must be 0 (by the rule), 1, 2 or 4, got {}", options.channelTile);
  TESSEL_CHECK(options.reductionParts >= 0, "GPU default schedule: reduction parts must be 0 (by the rule) or positive, got {}",
               options.reductionParts);
  if (auto anchor = findAnchorStage(dag); anchor && traitsOf(*dag.op(*anchor)).kind == OpKind::WinogradNchwGemm) {
    // Rule 6.
    try {
      return gpuTiledWinograd(dag, defaultGpuWinogradTile(gpuWinogradShapeOf(dag), options)).steps;
    } catch (const Error& e) {
      throw e.withContext(fmt::format("GPU default schedule: the Winograd tiles of stage '{}' ({})", *anchor, operatorClass(*dag.op(*anchor))));
    }
  }
  if (auto attention = gpuAttentionShapeOf(dag)) {
    // Rule 9: a fused attention block (graph pass fuse_attention).
    try {
      return gpuAttentionTiles(dag, *attention, defaultGpuAttentionTile(*attention, options.multiProcessors, options.maxThreadsPerBlock))
          .steps;
    } catch (const Error& e) {
      throw e.withContext(fmt::format("GPU default schedule: the attention tiles of stage '{}'", attention->context));
    }
  }
  if (auto gemm = gpuGemmTilesApply(dag)) {
    // Rule 7.
    try {
      if (options.tensorCores)
        if (auto tile = defaultGpuTensorCoreTile(*gemm, *options.tensorCores, options.multiProcessors, options.maxThreadsPerBlock,
                                                 options.maxSharedMemoryPerBlock))
          return gpuGemmTiles(dag, *tile).steps;
      return gpuGemmTiles(dag, defaultGpuGemmTile(*gemm, options.multiProcessors, options.maxThreadsPerBlock, options.minThreadsPerBlock)).steps;
    } catch (const Error& e) {
      throw e.withContext(fmt::format("GPU default schedule: the GEMM tiles of stage '{}' ({})", gemm->anchor,
                                      operatorClass(*dag.op(gemm->anchor))));
    }
  }
  return GpuPlanner(dag, options).run();
}

}  // namespace tessel::ops
