#include "ops/GpuConv2dTiles.h"

#include <fmt/format.h>

#include "support/Error.h"

namespace tessel::ops {

using namespace schedule;

GpuConv2dShape gpuConv2dShapeOf(const te::ComputeDAG& dag) {
  const auto& op = gpuTileAnchor(dag, OpKind::Conv2dNCHW, "GPU conv2d tiles", "a direct NCHW conv2d");
  const auto& reduce = op.reduction()->axes;
  TESSEL_CHECK(op.shape.size() == 4 && reduce.size() == 3, "GPU conv2d tiles: '{}' is not a 4-d convolution over (rc, ry, rx)",
               op.name);
  return {op.name, op.shape[0], op.shape[1], op.shape[2], op.shape[3], reduce[0].extent, reduce[1].extent, reduce[2].extent};
}

namespace {

/// The stages a tiled schedule names, made by its first steps.
struct TiledStages {
  std::string out;          ///< the function's output (the conv or its epilogue)
  std::string accumulator;  ///< the conv's sums per thread (a local copy when the conv is the output)
  std::string data, weights;
};

/// The reduction of `stage` in chunks: the chunk loops outside, the chunk and the thread's
/// sub-tile (its spatial loops) inside. Returns the innermost chunk loop, where the shared
/// windows of a chunk are attached. `reduceAt` is the position of its first reduce loop.
std::string reduceInChunks(Recorder& rec, const std::string& stage, size_t reduceAt, const GpuConv2dTile& tile) {
  std::vector<std::string> loops = rec.leaves(stage);
  auto rc = rec.split(stage, loops[reduceAt], {tile.rc});
  auto ry = rec.split(stage, loops[reduceAt + 1], {tile.ry});
  auto rx = rec.split(stage, loops[reduceAt + 2], {tile.rx});
  std::vector<std::string> order = {rc[0], ry[0], rx[0], rc[1], ry[1], rx[1]};
  order.insert(order.end(), loops.begin(), loops.begin() + int64_t(reduceAt));
  rec.reorder(stage, order);
  return rx[0];
}

void tileDirect(Recorder& rec, const te::ComputeDAG& dag, const TiledStages& st, const GpuConv2dTile& tile) {
  std::string dataShared = rec.cacheRead(st.data, "shared", {st.accumulator});
  std::string weightsShared = rec.cacheRead(st.weights, "shared", {st.accumulator});
  inlineInjectiveStages(rec, dag);
  auto loops = tileImageOutput(rec, st.out, tile);
  rec.annotate(st.out, loops[3], Annotation::ThreadZ);
  rec.annotate(st.out, loops[4], Annotation::ThreadY);
  rec.annotate(st.out, loops[5], Annotation::ThreadX);
  rec.computeAt(st.accumulator, st.out, loops[5]);
  std::string chunk = reduceInChunks(rec, st.accumulator, 4, tile);
  for (const std::string& shared : {dataShared, weightsShared})
    copyCooperatively(rec, shared, st.accumulator, chunk, {tile.f[1], tile.y[1], tile.x[1]});
}

/// Split-K: the input channels are shared out over `splitK` groups of threads (threadIdx.z),
/// group k summing channels k, k + splitK, ... so that a chunk's channels of all groups are one
/// contiguous window. Each thread's partial sums of its sub-tile go to shared memory; after a
/// barrier the threads of group 0 add the groups' partial sums and run the epilogue. Threads:
/// channels along y, rows and columns fused along x.
void tileSplitK(Recorder& rec, const te::ComputeDAG& dag, const TiledStages& st, const GpuConv2dTile& tile) {
  std::vector<std::string> acc = rec.leaves(st.accumulator);
  auto channels = rec.split(st.accumulator, acc[4], {tile.splitK});
  std::string partial = rec.rfactor(st.accumulator, channels[1]);  // [k, n, f, y, x], reducing [rc / k, ry, rx]
  std::string partialLocal = rec.cacheWrite(partial);
  std::string partialShared = rec.cacheRead(partial, "shared", {st.accumulator});
  rec.computeInline(partial);
  std::string dataShared = rec.cacheRead(st.data, "shared", {partialLocal});
  std::string weightsShared = rec.cacheRead(st.weights, "shared", {partialLocal});
  inlineInjectiveStages(rec, dag);

  auto loops = tileImageOutput(rec, st.out, tile);
  std::string pixels = rec.fuse(st.out, {loops[4], loops[5]});
  auto lanes = rec.split(st.out, pixels, {1});  // threadIdx.z of extent 1: group 0 alone
  rec.annotate(st.out, loops[3], Annotation::ThreadY);
  rec.annotate(st.out, lanes[0], Annotation::ThreadX);
  rec.annotate(st.out, lanes[1], Annotation::ThreadZ);
  rec.computeAt(st.accumulator, st.out, lanes[1]);

  // The block's partial sums: [k, n, f, y, x] over its tile, one sub-tile per thread.
  rec.computeAt(partialShared, st.out, loops[2]);
  std::vector<std::string> sums = rec.leaves(partialShared);
  auto f = rec.split(partialShared, sums[2], {tile.f[2]});
  auto y = rec.split(partialShared, sums[3], {tile.y[2]});
  auto x = rec.split(partialShared, sums[4], {tile.x[2]});
  rec.reorder(partialShared, {sums[0], sums[1], f[0], y[0], x[0], f[1], y[1], x[1]});
  std::string sumPixels = rec.fuse(partialShared, {y[0], x[0]});
  rec.annotate(partialShared, sums[0], Annotation::ThreadZ);
  rec.annotate(partialShared, f[0], Annotation::ThreadY);
  rec.annotate(partialShared, sumPixels, Annotation::ThreadX);
  rec.computeAt(partialLocal, partialShared, sumPixels);
  std::string chunk = reduceInChunks(rec, partialLocal, 5, tile);
  for (const std::string& shared : {dataShared, weightsShared})
    copyCooperatively(rec, shared, partialLocal, chunk, {tile.splitK, tile.f[1], tile.y[1] * tile.x[1]});
}

}  // namespace

std::vector<StepPtr> gpuTiledConv2dSchedule(const te::ComputeDAG& dag, const GpuConv2dTile& tile) {
  return gpuTiledConv2d(dag, tile).steps;
}

GpuConv2dSchedule gpuTiledConv2d(const te::ComputeDAG& dag, const GpuConv2dTile& tile) {
  GpuConv2dShape shape = gpuConv2dShapeOf(dag);
  checkTileCovers("GPU conv2d tiles", "f", tile.f, shape.channels);
  checkTileCovers("GPU conv2d tiles", "y", tile.y, shape.height);
  checkTileCovers("GPU conv2d tiles", "x", tile.x, shape.width);
  TESSEL_CHECK(tile.splitK >= 1 && shape.inChannels % (tile.splitK * tile.rc) == 0,
               "GPU conv2d tiles: {} groups of chunks of {} input channels do not divide the {} channels", tile.splitK, tile.rc,
               shape.inChannels);
  for (auto [name, inner, extent] : {std::tuple{"ry", tile.ry, shape.kernelHeight}, std::tuple{"rx", tile.rx, shape.kernelWidth}})
    TESSEL_CHECK(inner >= 1 && extent % inner == 0, "GPU conv2d tiles: the chunk of {} ({}) does not divide its extent {}", name,
                 inner, extent);
  Recorder rec(dag, /*deferBounds=*/true);
  TiledStages st;
  st.out = dag.outputNames()[0];
  st.accumulator = perThreadAccumulator(rec, st.out, shape.anchor);
  std::tie(st.data, st.weights) = dataAndWeights(*dag.op(shape.anchor), "GPU conv2d tiles");
  if (tile.splitK > 1) tileSplitK(rec, dag, st, tile);
  else tileDirect(rec, dag, st, tile);
  return {rec.steps, rec.finish()};
}

}  // namespace tessel::ops
