#include "ops/GpuAttentionTiles.h"

#include <algorithm>

#include "ops/OpTraits.h"
#include "ops/ScheduleRecorder.h"
#include "support/Error.h"

namespace tessel::ops {

using namespace schedule;

namespace {

constexpr const char* kAttentionSchedule = "GPU attention tiles";

bool isBatchedProduct(const te::OperationNode& op) { return traitsOf(op).kind == OpKind::BatchMatmul; }

}  // namespace

std::optional<GpuAttentionShape> gpuAttentionShapeOf(const te::ComputeDAG& dag) {
  if (dag.outputNames().size() != 1) return std::nullopt;
  std::vector<const te::OperationNode*> reductions;
  for (const auto& op : dag.ops())
    if (!op->isPlaceholder() && op->reduction()) reductions.push_back(op.get());
  if (reductions.size() != 4) return std::nullopt;
  const auto &scores = *reductions[0], &maximum = *reductions[1], &expSum = *reductions[2], &context = *reductions[3];
  if (!isBatchedProduct(scores) || !isBatchedProduct(context) || context.name != dag.outputNames()[0]) return std::nullopt;
  if (maximum.tag != "softmax" || expSum.tag != "softmax") return std::nullopt;
  const auto &s = scores.shape, &c = context.shape;
  if (s.size() < 3 || c.size() != s.size() || scores.reduction()->axes.size() != 1 || context.reduction()->axes.size() != 1)
    return std::nullopt;
  GpuAttentionShape shape;
  shape.scores = scores.name;
  shape.maximum = maximum.name;
  shape.expSum = expSum.name;
  shape.context = context.name;
  for (size_t d = 0; d + 2 < s.size(); ++d) {
    if (s[d] != c[d]) return std::nullopt;
    shape.stack *= s[d];
  }
  shape.rows = s[s.size() - 2];
  shape.keys = s.back();
  shape.depth = scores.reduction()->axes[0].extent;
  shape.columns = c.back();
  auto scoreOperands = te::ComputeDAG::accesses(scores);
  if (scoreOperands.size() != 2) return std::nullopt;
  shape.query = scoreOperands[0].producer;
  shape.key = scoreOperands[1].producer;
  for (const auto& access : te::ComputeDAG::accesses(context))
    if (dag.op(access.producer)->tag != "softmax") shape.value = access.producer;
  if (shape.value.empty() || shape.query == shape.key) return std::nullopt;
  // The statistics are one per row of scores; the context reduces over the keys, row for row.
  std::vector<int64_t> rowsOfScores(s.begin(), s.end() - 1);
  if (maximum.shape != rowsOfScores || expSum.shape != rowsOfScores || c[c.size() - 2] != shape.rows ||
      context.reduction()->axes[0].extent != shape.keys)
    return std::nullopt;
  return shape;
}

GpuAttentionTile defaultGpuAttentionTile(const GpuAttentionShape& shape, int64_t multiprocessors, int64_t maxThreadsPerBlock) {
  GpuAttentionTile tile;
  // Four columns a thread where the row allows it (its statistics then serve four outputs).
  tile.columnsPerThread = shape.columns % 4 == 0 ? 4 : shape.columns % 2 == 0 ? 2 : 1;
  int64_t threadsPerRow = shape.columns / tile.columnsPerThread;
  // The most rows a block (each block computes its rows' scores once) that still gives every
  // multiprocessor two blocks, within the thread limit; a divisor of the rows, as the schedule
  // requires.
  tile.rows = 1;
  for (int64_t rows : {32, 16, 8, 4, 2}) {
    int64_t blocks = shape.stack * (shape.rows / rows);
    if (shape.rows % rows == 0 && rows * threadsPerRow <= maxThreadsPerBlock && (multiprocessors <= 0 || blocks >= 2 * multiprocessors)) {
      tile.rows = rows;
      break;
    }
  }
  return tile;
}

GpuTileSchedule gpuAttentionTiles(const te::ComputeDAG& dag, const GpuAttentionShape& shape, const GpuAttentionTile& tile) {
  // Whole blocks of rows: a ragged last block would leave threads idle, and they would skip the
  // barriers between the copies and their readers (a hang on OpenCL, undefined on CUDA).
  TESSEL_CHECK(tile.rows >= 1 && shape.rows % tile.rows == 0 && tile.columnsPerThread >= 1 && shape.columns % tile.columnsPerThread == 0,
               "{}: {} rows a block for {} rows, {} columns a thread for {} columns (each must divide)", kAttentionSchedule, tile.rows,
               shape.rows, tile.columnsPerThread, shape.columns);
  const int64_t threadsPerRow = shape.columns / tile.columnsPerThread, threads = tile.rows * threadsPerRow;
  Recorder rec(dag, /*deferBounds=*/true);
  const std::string& out = shape.context;
  std::string accumulator = rec.cacheWrite(out);
  // In shared memory: the block's rows of the query, every key and value of its head (each
  // read by all the block's rows), and the block's scores, which their reader (the scale,
  // through which the statistics and the context read them once it is inlined) reads.
  std::string scoresShared = rec.cacheRead(shape.scores, "shared", rec.state.consumers(shape.scores));
  std::string queryShared = rec.cacheRead(shape.query, "shared", {shape.scores});
  std::string keyShared = rec.cacheRead(shape.key, "shared", {shape.scores});
  std::string valueShared = rec.cacheRead(shape.value, "shared", {accumulator});
  inlineInjectiveStages(rec, dag);  // layouts, scale, mask, the exponentials and the division

  // The output: [stack..., rows, columns] -> block (stack, row blocks) x thread (row, column).
  std::vector<std::string> loops = rec.leaves(out);
  std::vector<std::string> stack(loops.begin(), loops.end() - 2);
  auto rows = rec.split(out, loops[loops.size() - 2], {tile.rows});
  // A thread's columns side by side: its sums a region of columnsPerThread, not strided.
  auto columns = rec.split(out, loops.back(), {tile.columnsPerThread});  // [threads, per thread]
  std::vector<std::string> order = stack;
  order.insert(order.end(), {rows[0], rows[1], columns[0], columns[1]});
  rec.reorder(out, order);
  std::vector<std::string> blockLoops = stack;
  blockLoops.push_back(rows[0]);
  std::string block = rec.fuse(out, blockLoops);
  std::string thread = rec.fuse(out, {rows[1], columns[0]});
  rec.annotate(out, block, Annotation::BlockX);
  rec.annotate(out, thread, Annotation::ThreadX);
  rec.annotate(out, columns[1], Annotation::Unroll);

  // Per thread: the sums of its columns over the keys (the columns innermost, each key's
  // probability computed once for all of them), then its row's statistics, readers first.
  rec.computeAt(accumulator, out, thread);
  std::vector<std::string> sums = rec.leaves(accumulator);  // [stack..., row, columns, keys]
  std::vector<std::string> sumOrder(sums.begin(), sums.end() - 2);
  sumOrder.push_back(sums.back());
  sumOrder.push_back(sums[sums.size() - 2]);
  rec.reorder(accumulator, sumOrder);
  rec.annotate(accumulator, sums[sums.size() - 2], Annotation::Unroll);
  // The values, copied by the block's threads before the first key (the sums' outer loops run
  // once per thread).
  copyCooperatively(rec, valueShared, accumulator, sums[0], {1, 1, threads}, shape.columns % 4 == 0 ? 4 : 1);
  rec.computeAt(shape.expSum, out, thread);
  rec.computeAt(shape.maximum, out, thread);

  // The block's scores, each computed by one thread (its reduction over the depth inside), after
  // the query's and keys' copies (float4 where the rows allow), made once before the first score.
  rec.computeAt(scoresShared, out, block);
  std::string elements = rec.fuse(scoresShared, rec.leaves(scoresShared));
  auto parts = rec.split(scoresShared, elements, {threads});  // [per thread, threads]
  auto once = rec.split(scoresShared, parts[0], {rec.extent(scoresShared, parts[0])});  // [1, per thread]
  rec.annotate(scoresShared, parts[1], Annotation::ThreadX);
  rec.computeAt(shape.scores, scoresShared, parts[1]);
  for (const std::string& shared : {queryShared, keyShared})
    copyCooperatively(rec, shared, scoresShared, once[0], {1, 1, threads}, shape.depth % 4 == 0 ? 4 : 1);
  return {rec.steps, rec.finish()};
}

}  // namespace tessel::ops
