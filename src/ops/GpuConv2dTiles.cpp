#include "ops/GpuConv2dTiles.h"

#include <fmt/format.h>

#include "ops/Schedules.h"
#include "support/Error.h"

namespace tessel::ops {

using namespace schedule;

GpuConv2dShape gpuConv2dShapeOf(const te::ComputeDAG& dag) {
  auto anchor = findAnchorStage(dag);
  bool nhwc = anchor && traitsOf(*dag.op(*anchor)).kind == OpKind::Conv2dNHWC;
  const auto& op = nhwc ? gpuTileAnchor(dag, OpKind::Conv2dNHWC, "GPU conv2d tiles", "a direct NHWC conv2d")
                        : gpuTileAnchor(dag, OpKind::Conv2dNCHW, "GPU conv2d tiles", "a direct NCHW or NHWC conv2d");
  const auto& reduce = op.reduction()->axes;
  TESSEL_CHECK(op.shape.size() == 4 && reduce.size() == 3, "GPU conv2d tiles: '{}' is not a 4-d convolution over 3 reduce axes",
               op.name);
  GpuConv2dShape s;
  s.anchor = op.name;
  s.kind = nhwc ? OpKind::Conv2dNHWC : OpKind::Conv2dNCHW;
  ImageAxes a = s.axes();
  s.batch = op.shape[0];
  s.channels = op.shape[size_t(a.channels)];
  s.height = op.shape[size_t(a.rows)];
  s.width = op.shape[size_t(a.columns)];
  // The reduction: (rc, ry, rx) in NCHW, (ry, rx, rc) in NHWC (ops/Conv2d.h).
  s.inChannels = reduce[nhwc ? 2 : 0].extent;
  s.kernelHeight = reduce[nhwc ? 0 : 1].extent;
  s.kernelWidth = reduce[nhwc ? 1 : 2].extent;
  return s;
}

namespace {

/// The stages a tiled schedule names, made by its first steps.
struct TiledStages {
  std::string out;          ///< the function's output (the conv or its epilogue)
  std::string accumulator;  ///< the conv's sums per thread (a local copy when the conv is the output)
  std::string data, weights;
};

/// The thread a block's loop over channels, rows or columns is bound to: NCHW's columns and
/// NHWC's channels are contiguous in memory, so they go to threadIdx.x.
struct ThreadBindings {
  Annotation channels, rows, columns;
};
ThreadBindings threadBindingsOf(const GpuConv2dShape& shape) {
  if (shape.nhwc()) return {Annotation::ThreadX, Annotation::ThreadZ, Annotation::ThreadY};
  return {Annotation::ThreadZ, Annotation::ThreadY, Annotation::ThreadX};
}

/// The block's threads along z, y, x (a cooperative copy's split).
std::array<int64_t, 3> threadsZYX(const GpuConv2dShape& shape, const GpuConv2dTile& tile) {
  if (shape.nhwc()) return {tile.y[1], tile.x[1], tile.f[1]};
  return {tile.f[1], tile.y[1], tile.x[1]};
}

/// The reduction of `stage` in chunks: the chunk loops outside, the chunk and the thread's
/// sub-tile (its spatial loops) inside. Returns the innermost chunk loop, where the shared
/// windows of a chunk are attached. `reduceAt` is the position of its first reduce loop; the
/// reduce loops are in the anchor's order, (rc, ry, rx) or, in NHWC, (ry, rx, rc).
std::string reduceInChunks(Recorder& rec, const std::string& stage, size_t reduceAt, const GpuConv2dShape& shape,
                           const GpuConv2dTile& tile) {
  std::vector<std::string> loops = rec.leaves(stage);
  std::array<int64_t, 3> chunks = shape.nhwc() ? std::array<int64_t, 3>{tile.ry, tile.rx, tile.rc}
                                               : std::array<int64_t, 3>{tile.rc, tile.ry, tile.rx};
  std::vector<std::string> outer, inner;
  for (size_t r = 0; r < 3; ++r) {
    auto parts = rec.split(stage, loops[reduceAt + r], {chunks[r]});
    outer.push_back(parts[0]);
    inner.push_back(parts[1]);
  }
  std::vector<std::string> order = outer;
  order.insert(order.end(), inner.begin(), inner.end());
  order.insert(order.end(), loops.begin(), loops.begin() + int64_t(reduceAt));
  rec.reorder(stage, order);
  return outer.back();
}

void tileDirect(Recorder& rec, const te::ComputeDAG& dag, const GpuConv2dShape& shape, const TiledStages& st,
                const GpuConv2dTile& tile) {
  std::string dataShared = rec.cacheRead(st.data, "shared", {st.accumulator});
  std::string weightsShared = rec.cacheRead(st.weights, "shared", {st.accumulator});
  inlineInjectiveStages(rec, dag);
  auto loops = tileImageOutput(rec, st.out, tile, shape.axes());
  ThreadBindings bind = threadBindingsOf(shape);
  rec.annotate(st.out, loops[3], bind.channels);
  rec.annotate(st.out, loops[4], bind.rows);
  rec.annotate(st.out, loops[5], bind.columns);
  rec.computeAt(st.accumulator, st.out, loops[5]);
  std::string chunk = reduceInChunks(rec, st.accumulator, 4, shape, tile);
  for (const std::string& shared : {dataShared, weightsShared})
    copyCooperatively(rec, shared, st.accumulator, chunk, threadsZYX(shape, tile));
}

/// Split-K: the input channels are shared out over `splitK` groups of threads (threadIdx.z),
/// group k summing channels k, k + splitK, ... so that a chunk's channels of all groups are one
/// contiguous window. Each thread's partial sums of its sub-tile go to shared memory; after a
/// barrier the threads of group 0 add the groups' partial sums and run the epilogue. Threads:
/// channels along y and rows and columns fused along x in NCHW, the other way round in NHWC.
void tileSplitK(Recorder& rec, const te::ComputeDAG& dag, const GpuConv2dShape& shape, const TiledStages& st,
                const GpuConv2dTile& tile) {
  ImageAxes axes = shape.axes();
  Annotation channelThreads = shape.nhwc() ? Annotation::ThreadX : Annotation::ThreadY;
  Annotation pixelThreads = shape.nhwc() ? Annotation::ThreadY : Annotation::ThreadX;
  std::vector<std::string> acc = rec.leaves(st.accumulator);
  auto channels = rec.split(st.accumulator, acc[shape.nhwc() ? 6 : 4], {tile.splitK});
  std::string partial = rec.rfactor(st.accumulator, channels[1]);  // [k, <the output's axes>], reducing the rest
  std::string partialLocal = rec.cacheWrite(partial);
  std::string partialShared = rec.cacheRead(partial, "shared", {st.accumulator});
  rec.computeInline(partial);
  std::string dataShared = rec.cacheRead(st.data, "shared", {partialLocal});
  std::string weightsShared = rec.cacheRead(st.weights, "shared", {partialLocal});
  inlineInjectiveStages(rec, dag);

  auto loops = tileImageOutput(rec, st.out, tile, axes);
  std::string pixels = rec.fuse(st.out, {loops[4], loops[5]});
  auto lanes = rec.split(st.out, pixels, {1});  // threadIdx.z of extent 1: group 0 alone
  rec.annotate(st.out, loops[3], channelThreads);
  rec.annotate(st.out, lanes[0], pixelThreads);
  rec.annotate(st.out, lanes[1], Annotation::ThreadZ);
  rec.computeAt(st.accumulator, st.out, lanes[1]);

  // The block's partial sums: [k, <the output's axes>] over its tile, one sub-tile per thread.
  rec.computeAt(partialShared, st.out, loops[2]);
  std::vector<std::string> sums = rec.leaves(partialShared);
  auto f = rec.split(partialShared, sums[size_t(1 + axes.channels)], {tile.f[2]});
  auto y = rec.split(partialShared, sums[size_t(1 + axes.rows)], {tile.y[2]});
  auto x = rec.split(partialShared, sums[size_t(1 + axes.columns)], {tile.x[2]});
  rec.reorder(partialShared, {sums[0], sums[1], f[0], y[0], x[0], f[1], y[1], x[1]});
  std::string sumPixels = rec.fuse(partialShared, {y[0], x[0]});
  rec.annotate(partialShared, sums[0], Annotation::ThreadZ);
  rec.annotate(partialShared, f[0], channelThreads);
  rec.annotate(partialShared, sumPixels, pixelThreads);
  rec.computeAt(partialLocal, partialShared, sumPixels);
  std::string chunk = reduceInChunks(rec, partialLocal, 5, shape, tile);
  std::array<int64_t, 3> threads = shape.nhwc() ? std::array<int64_t, 3>{tile.splitK, tile.y[1] * tile.x[1], tile.f[1]}
                                                : std::array<int64_t, 3>{tile.splitK, tile.f[1], tile.y[1] * tile.x[1]};
  for (const std::string& shared : {dataShared, weightsShared}) copyCooperatively(rec, shared, partialLocal, chunk, threads);
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
  // The weights: OIHW's first index or HWIO's last is the output channel.
  size_t channelAxis = size_t(shape.axes().channels);
  std::tie(st.data, st.weights) = dataAndWeights(*dag.op(shape.anchor), "GPU conv2d tiles", shape.nhwc() ? 3 : 0, channelAxis);
  if (tile.splitK > 1) tileSplitK(rec, dag, shape, st, tile);
  else tileDirect(rec, dag, shape, st, tile);
  return {rec.steps, rec.finish()};
}

}  // namespace tessel::ops
