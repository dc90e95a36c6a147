#include "ops/GpuDenseTiles.h"

#include "support/Error.h"

namespace tessel::ops {

using namespace schedule;

namespace {
constexpr const char* kDenseSchedule = "GPU dense tiles";
}

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

GpuTileSchedule gpuDenseLargeBatch(const te::ComputeDAG& dag, const GpuDenseLargeBatchTile& tile) {
  GpuDenseShape shape = gpuDenseShapeOf(dag);
  checkTileCovers(kDenseSchedule, "x", tile.x, shape.batch);
  checkTileCovers(kDenseSchedule, "y", tile.y, shape.outputs);
  TESSEL_CHECK(tile.k >= 1 && shape.reduction % tile.k == 0, "{}: a chunk of {} does not divide the reduction of {}", kDenseSchedule,
               tile.k, shape.reduction);
  Recorder rec(dag, /*deferBounds=*/true);
  const std::string out = dag.outputNames()[0];
  std::string accumulator = perThreadAccumulator(rec, out, shape.anchor);
  auto [data, weights] = dataAndWeights(*dag.op(shape.anchor), kDenseSchedule);
  std::string dataShared = rec.cacheRead(data, "shared", {accumulator});
  std::string weightsShared = rec.cacheRead(weights, "shared", {accumulator});
  inlineInjectiveStages(rec, dag);

  std::vector<std::string> loops = rec.leaves(out);  // [n, m]
  auto x = rec.split(out, loops[0], {tile.x[1], tile.x[2]});
  auto y = rec.split(out, loops[1], {tile.y[1], tile.y[2]});
  rec.reorder(out, {x[0], y[0], x[1], y[1], x[2], y[2]});
  rec.annotate(out, x[0], Annotation::BlockY);
  rec.annotate(out, y[0], Annotation::BlockX);
  rec.annotate(out, x[1], Annotation::ThreadY);
  rec.annotate(out, y[1], Annotation::ThreadX);
  addUnrollPragmas(rec, out, x[0], tile.autoUnrollMaxStep, tile.unrollExplicit);
  rec.computeAt(accumulator, out, y[1]);

  // [n, m, k] -> [k chunks, k in the chunk, n, m]: the sub-tile innermost, each chunk's
  // windows attached at the chunk loop.
  std::vector<std::string> acc = rec.leaves(accumulator);
  auto k = rec.split(accumulator, acc[2], {tile.k});
  rec.reorder(accumulator, {k[0], k[1], acc[0], acc[1]});
  for (const std::string& shared : {dataShared, weightsShared})
    copyCooperatively(rec, shared, accumulator, k[0], {1, tile.x[1], tile.y[1]});
  return {rec.steps, rec.finish()};
}

}  // namespace tessel::ops
