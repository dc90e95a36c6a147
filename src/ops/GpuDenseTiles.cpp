#include "ops/GpuDenseTiles.h"

#include <algorithm>
#include <tuple>

#include "ops/Schedules.h"
#include "support/Error.h"

namespace tessel::ops {

using namespace schedule;

namespace {
constexpr const char* kDenseSchedule = "GPU dense tiles";
constexpr const char* kGemmSchedule = "GPU GEMM tiles";
constexpr int64_t kGemmTilesMinExtent = 16;
/// Chunks of the reduction shorter than this would wait at two barriers for every few products
/// (ViT's attention reduces over 197 tokens, a prime: chunks of 1).
constexpr int64_t kGemmTilesMinChunk = 4;

/// The longest divisor of the reduction up to 32 (the tuned BERT-base products on an H200 took 24).
int64_t longestChunk(int64_t reduction) {
  int64_t chunk = std::min<int64_t>(32, reduction);
  while (reduction % chunk != 0) --chunk;
  return chunk;
}

bool everyThreadWorks(const std::array<int64_t, 3>& parts, int64_t extent) {
  return parts[0] > 1 || parts[1] <= (extent + parts[2] - 1) / parts[2];
}

/// One block whose threads outnumber what the extent needs: lowering bounds the thread loop by
/// what is needed, and the idle threads would skip the cooperative copies and the barriers
/// between them (a hang on OpenCL, wrong sums on CUDA). More blocks guard each element instead.
void checkEveryThreadWorks(const char* what, const std::array<int64_t, 3>& parts, int64_t extent) {
  TESSEL_CHECK(everyThreadWorks(parts, extent),
               "{}: tile_{} [{}, {}, {}] leaves threads idle: one block's {} rows or columns need {} threads of {}", kGemmSchedule,
               what, parts[0], parts[1], parts[2], extent, (extent + parts[2] - 1) / parts[2], parts[2]);
}

}  // namespace

GpuDenseShape gpuDenseShapeOf(const te::ComputeDAG& dag) {
  const auto& op = gpuTileAnchor(dag, OpKind::Dense, kDenseSchedule, "a dense layer");
  const auto& reduce = op.reduction()->axes;
  TESSEL_CHECK(op.shape.size() == 2 && reduce.size() == 1, "{}: '{}' is not a 2-d dense over one reduction axis", kDenseSchedule,
               op.name);
  return {op.name, op.shape[0], op.shape[1], reduce[0].extent};
}

GpuTileSchedule gpuDenseSmallBatch(const te::ComputeDAG& dag, const GpuDenseSmallBatchTile& tile) {
  GpuDenseShape shape = gpuDenseShapeOf(dag);
  TESSEL_CHECK(tile.reduceThreads >= 1 && shape.reduction % tile.reduceThreads == 0,
               "{}: {} threads per output do not divide the reduction of {}", kDenseSchedule, tile.reduceThreads, shape.reduction);
  TESSEL_CHECK(tile.outputThreads >= 1 && shape.outputs % tile.outputThreads == 0,
               "{}: {} outputs per block do not divide the {} outputs", kDenseSchedule, tile.outputThreads, shape.outputs);
  Recorder rec(dag, /*deferBounds=*/true);
  const std::string out = dag.outputNames()[0];
  std::string accumulator = perThreadAccumulator(rec, out, shape.anchor);
  // The threads' parts: the inner half of the reduction factored out, [t, n, m] reducing K / t,
  // summed per thread in a local stage and stored to the shared copy the final sum reads.
  std::vector<std::string> acc = rec.leaves(accumulator);  // [n, m, k]
  auto k = rec.split(accumulator, acc[2], {tile.reduceThreads});
  std::string partial = rec.rfactor(accumulator, k[1]);
  std::string partialLocal = rec.cacheWrite(partial);
  std::string partialShared = rec.cacheRead(partial, "shared", {accumulator});
  rec.computeInline(partial);
  inlineInjectiveStages(rec, dag);

  // The output: a block per batch row and tile of outputs, an output per threadIdx.y; the
  // threadIdx.x of extent 1 leaves the final sum and the store to the first thread of each part.
  std::vector<std::string> loops = rec.leaves(out);  // [n, m]
  auto m = rec.split(out, loops[1], {tile.outputThreads});
  std::string blocks = rec.fuse(out, {loops[0], m[0]});
  auto lanes = rec.split(out, m[1], {1});
  rec.annotate(out, blocks, Annotation::BlockX);
  rec.annotate(out, lanes[0], Annotation::ThreadY);
  rec.annotate(out, lanes[1], Annotation::ThreadX);
  addUnrollPragmas(rec, out, blocks, tile.autoUnrollMaxStep, tile.unrollExplicit);
  rec.computeAt(accumulator, out, lanes[1]);

  // The block's partial sums: [t, n, m] over its outputs, one per thread.
  rec.computeAt(partialShared, out, blocks);
  std::vector<std::string> sums = rec.leaves(partialShared);
  std::string outputs = rec.fuse(partialShared, {sums[1], sums[2]});
  rec.annotate(partialShared, sums[0], Annotation::ThreadX);
  rec.annotate(partialShared, outputs, Annotation::ThreadY);
  rec.computeAt(partialLocal, partialShared, outputs);
  return {rec.steps, rec.finish()};
}

GpuGemmShape gpuGemmShapeOf(const te::ComputeDAG& dag) {
  auto anchor = findAnchorStage(dag);
  TESSEL_CHECK(anchor.has_value(), "{}: the function has no matrix product to tile", kGemmSchedule);
  OpKind kind = traitsOf(*dag.op(*anchor)).kind;
  TESSEL_CHECK(kind == OpKind::Dense || kind == OpKind::Matmul || kind == OpKind::BatchMatmul,
               "{}: the anchor '{}' is {}, not dense, matmul or batch_matmul", kGemmSchedule, *anchor, traitsOf(*dag.op(*anchor)).tag);
  const auto& op = gpuTileAnchor(dag, kind, kGemmSchedule, "a matrix product");
  const auto* reduce = op.reduction();
  TESSEL_CHECK(op.shape.size() >= 2 && reduce && reduce->axes.size() == 1, "{}: '{}' is not a product over one reduction axis",
               kGemmSchedule, op.name);
  for (const auto& other : dag.ops())
    TESSEL_CHECK(other->name == op.name || !other->reduction(), "{}: the function has another reduction, '{}'", kGemmSchedule,
                 other->name);
  // The rows operand is indexed by the output's second-to-last axis, the columns operand by its
  // last (dense's [M, K] weight as much as matmul's [K, N]).
  const ir::VarNode* rowVar = op.axes[op.shape.size() - 2].var.node();
  const ir::VarNode* columnVar = op.axes.back().var.node();
  GpuGemmShape shape;
  shape.anchor = op.name;
  for (const auto& access : te::ComputeDAG::accesses(op)) {
    bool rows = false, columns = false;
    for (const auto& index : access.indices) {
      rows = rows || index.as<ir::VarNode>() == rowVar;
      columns = columns || index.as<ir::VarNode>() == columnVar;
    }
    TESSEL_CHECK(rows != columns, "{}: '{}' reads '{}' along {} of its output's last two axes", kGemmSchedule, op.name,
                 access.producer, rows ? "both" : "neither");
    std::string& operand = rows ? shape.data : shape.other;
    TESSEL_CHECK(operand.empty(), "{}: '{}' reads more than two operands", kGemmSchedule, op.name);
    operand = access.producer;
  }
  TESSEL_CHECK(!shape.data.empty() && !shape.other.empty() && shape.data != shape.other,
               "{}: '{}' does not read two distinct operands", kGemmSchedule, op.name);
  for (size_t d = 0; d + 2 < op.shape.size(); ++d) shape.stack *= op.shape[d];
  shape.rows = op.shape[op.shape.size() - 2];
  shape.columns = op.shape.back();
  shape.reduction = reduce->axes[0].extent;
  return shape;
}

std::optional<GpuGemmShape> gpuGemmTilesApply(const te::ComputeDAG& dag) {
  auto anchor = findAnchorStage(dag);
  if (!anchor) return std::nullopt;
  OpKind kind = traitsOf(*dag.op(*anchor)).kind;
  if (kind != OpKind::Dense && kind != OpKind::Matmul && kind != OpKind::BatchMatmul) return std::nullopt;
  try {
    GpuGemmShape shape = gpuGemmShapeOf(dag);
    if (shape.rows >= kGemmTilesMinExtent && shape.columns >= kGemmTilesMinExtent && longestChunk(shape.reduction) >= kGemmTilesMinChunk)
      return shape;
  } catch (const Error&) {
    // Not a lone product with an element-wise epilogue (gpuGemmShapeOf says why): not the tiles'.
  }
  return std::nullopt;
}

GpuTileSchedule gpuGemmTiles(const te::ComputeDAG& dag, const GpuGemmTile& tile) {
  GpuGemmShape shape = gpuGemmShapeOf(dag);
  checkTileCovers(kGemmSchedule, "x", tile.x, shape.rows);
  checkTileCovers(kGemmSchedule, "y", tile.y, shape.columns);
  checkEveryThreadWorks("x", tile.x, shape.rows);
  checkEveryThreadWorks("y", tile.y, shape.columns);
  // A chunk that does not divide the reduction would need its last copy guarded, which lowering
  // does not do for shared-memory windows (read past the operand: seen on PoCL).
  TESSEL_CHECK(tile.k >= 1 && shape.reduction % tile.k == 0, "{}: a chunk of {} does not divide the reduction of {}", kGemmSchedule,
               tile.k, shape.reduction);
  Recorder rec(dag, /*deferBounds=*/true);
  const std::string out = dag.outputNames()[0];
  std::string accumulator = perThreadAccumulator(rec, out, shape.anchor);
  std::string dataShared = rec.cacheRead(shape.data, "shared", {accumulator});
  std::string otherShared = rec.cacheRead(shape.other, "shared", {accumulator});
  inlineInjectiveStages(rec, dag);

  std::vector<std::string> loops = rec.leaves(out);  // [stack..., rows, columns]
  std::vector<std::string> stack(loops.begin(), loops.end() - 2);
  auto x = rec.split(out, loops[loops.size() - 2], {tile.x[1], tile.x[2]});
  auto y = rec.split(out, loops.back(), {tile.y[1], tile.y[2]});
  std::vector<std::string> order = stack;
  order.insert(order.end(), {x[0], y[0], x[1], y[1], x[2], y[2]});
  rec.reorder(out, order);
  std::string outermost = x[0];
  if (!stack.empty()) {
    outermost = stack.size() == 1 ? stack[0] : rec.fuse(out, stack);
    rec.annotate(out, outermost, Annotation::BlockZ);
  }
  rec.annotate(out, x[0], Annotation::BlockY);
  rec.annotate(out, y[0], Annotation::BlockX);
  rec.annotate(out, x[1], Annotation::ThreadY);
  rec.annotate(out, y[1], Annotation::ThreadX);
  addUnrollPragmas(rec, out, outermost, tile.autoUnrollMaxStep, tile.unrollExplicit);
  rec.computeAt(accumulator, out, y[1]);

  // [stack..., n, m, k] -> [k chunks, k in the chunk, stack..., n, m]: the sub-tile innermost,
  // each chunk's windows attached at the chunk loop.
  std::vector<std::string> acc = rec.leaves(accumulator);
  auto k = rec.split(accumulator, acc.back(), {tile.k});
  std::vector<std::string> accOrder = {k[0], k[1]};
  accOrder.insert(accOrder.end(), acc.begin(), acc.end() - 1);
  rec.reorder(accumulator, accOrder);
  for (const std::string& shared : {dataShared, otherShared})
    copyCooperatively(rec, shared, accumulator, k[0], {1, tile.x[1], tile.y[1]});
  return {rec.steps, rec.finish()};
}

GpuGemmTile defaultGpuGemmTile(const GpuGemmShape& shape, int64_t multiprocessors, int64_t maxThreadsPerBlock, int64_t warpSize) {
  auto blocksOf = [](int64_t extent, int64_t tile) { return (extent + tile - 1) / tile; };
  GpuGemmTile best;
  using Key = std::tuple<bool, bool, bool, int64_t, int64_t, int64_t, int64_t, double>;
  Key bestKey{};
  bool found = false;
  for (int64_t rowThreads : {16, 8, 4, 2, 1})
    for (int64_t columnThreads : {16, 8, 4, 2, 1})
      for (int64_t rows : {4, 2, 1})
        for (int64_t columns : {4, 2, 1}) {
          if (rowThreads * columnThreads > maxThreadsPerBlock) continue;
          int64_t rowBlocks = blocksOf(shape.rows, rowThreads * rows), columnBlocks = blocksOf(shape.columns, columnThreads * columns);
          if (!everyThreadWorks({rowBlocks, rowThreads, rows}, shape.rows) ||
              !everyThreadWorks({columnBlocks, columnThreads, columns}, shape.columns))
            continue;
          int64_t blocks = shape.stack * rowBlocks * columnBlocks;
          double covered = double(shape.rows * shape.columns) / double(rowBlocks * rowThreads * rows * columnBlocks * columnThreads * columns);
          // Enough blocks for every multiprocessor first, then little padding, then two warps
          // per block, then outputs per thread (each operand element loaded feeds that many),
          // then threads per block, then square blocks and sub-tiles (for the same outputs, their
          // copies and loads read the fewest elements).
          Key key{multiprocessors <= 0 || blocks >= 2 * multiprocessors,
                  covered >= 0.8,
                  rowThreads * columnThreads >= 2 * std::max<int64_t>(warpSize, 1),
                  rows * columns,
                  rowThreads * columnThreads,
                  std::min(rowThreads, columnThreads),
                  std::min(rows, columns),
                  covered};
          if (found && key <= bestKey) continue;
          found = true;
          bestKey = key;
          best.x = {rowBlocks, rowThreads, rows};
          best.y = {columnBlocks, columnThreads, columns};
        }
  TESSEL_CHECK(found, "{}: no tile fits blocks of {} threads", kGemmSchedule, maxThreadsPerBlock);
  // Unrolled in the IR up to 256 steps: the sub-tile's accumulators stay in registers.
  best.autoUnrollMaxStep = 256;
  best.unrollExplicit = true;
  best.k = longestChunk(shape.reduction);
  return best;
}

}  // namespace tessel::ops
