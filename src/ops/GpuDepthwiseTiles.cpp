#include "ops/GpuDepthwiseTiles.h"

#include "support/Error.h"

namespace tessel::ops {

using namespace schedule;

namespace {
constexpr const char* kDepthwiseSchedule = "GPU depthwise tiles";
}

GpuDepthwiseShape gpuDepthwiseShapeOf(const te::ComputeDAG& dag) {
  const auto& op = gpuTileAnchor(dag, OpKind::DepthwiseConv2dNCHW, kDepthwiseSchedule, "an NCHW depthwise conv2d");
  const auto& reduce = op.reduction()->axes;
  TESSEL_CHECK(op.shape.size() == 4 && reduce.size() == 2, "{}: '{}' is not a 4-d convolution over (di, dj)", kDepthwiseSchedule,
               op.name);
  return {op.name, op.shape[0], op.shape[1], op.shape[2], op.shape[3], reduce[0].extent, reduce[1].extent};
}

GpuTileSchedule gpuTiledDepthwise(const te::ComputeDAG& dag, const GpuImageTile& tile) {
  GpuDepthwiseShape shape = gpuDepthwiseShapeOf(dag);
  checkTileCovers(kDepthwiseSchedule, "f", tile.f, shape.channels);
  checkTileCovers(kDepthwiseSchedule, "y", tile.y, shape.height);
  checkTileCovers(kDepthwiseSchedule, "x", tile.x, shape.width);
  Recorder rec(dag, /*deferBounds=*/true);
  const std::string out = dag.outputNames()[0];
  std::string accumulator = perThreadAccumulator(rec, out, shape.anchor);
  inlineInjectiveStages(rec, dag);
  auto loops = tileImageOutput(rec, out, tile);
  rec.annotate(out, loops[3], Annotation::ThreadZ);
  rec.annotate(out, loops[4], Annotation::ThreadY);
  rec.annotate(out, loops[5], Annotation::ThreadX);
  rec.computeAt(accumulator, out, loops[5]);
  // [b, c, i, j, di, dj] -> [di, dj, b, c, i, j]: the taps outside the sub-tile.
  std::vector<std::string> acc = rec.leaves(accumulator);
  rec.reorder(accumulator, {acc[4], acc[5], acc[0], acc[1], acc[2], acc[3]});
  return {rec.steps, rec.finish()};
}

}  // namespace tessel::ops
