#include "ops/GpuConv2dTiles.h"

#include <fmt/format.h>

#include "ops/OpTraits.h"
#include "ops/Schedules.h"
#include "ops/ScheduleRecorder.h"
#include "support/Error.h"

namespace tessel::ops {

using namespace schedule;

GpuConv2dShape gpuConv2dShapeOf(const te::ComputeDAG& dag) {
  auto anchor = findAnchorStage(dag);
  TESSEL_CHECK(anchor.has_value(), "GPU conv2d tiles: the function has no convolution to tile");
  const auto& op = *dag.op(*anchor);
  TESSEL_CHECK(traitsOf(op).kind == OpKind::Conv2dNCHW, "GPU conv2d tiles: the anchor '{}' is {}, not a direct NCHW conv2d",
               *anchor, traitsOf(op).tag.empty() ? "not a convolution" : traitsOf(op).tag);
  TESSEL_CHECK(dag.outputNames().size() == 1, "GPU conv2d tiles: the function has {} outputs; the tiles need exactly one",
               dag.outputNames().size());
  const std::string& out = dag.outputNames()[0];
  TESSEL_CHECK(dag.op(out)->shape == op.shape,
               "GPU conv2d tiles: the output '{}' is not element-wise over the convolution '{}' (its shape differs)", out, *anchor);
  const auto& reduce = op.reduction()->axes;
  TESSEL_CHECK(op.shape.size() == 4 && reduce.size() == 3, "GPU conv2d tiles: '{}' is not a 4-d convolution over (rc, ry, rx)",
               *anchor);
  return {*anchor, op.shape[0], op.shape[1], op.shape[2], op.shape[3], reduce[0].extent, reduce[1].extent, reduce[2].extent};
}

namespace {

/// The producers a convolution reads: the input (through its padding, if any) and the weights,
/// told apart by their first index (the weights' is the output channel).
std::pair<std::string, std::string> dataAndWeights(const te::OperationNode& conv) {
  std::string data, weights;
  for (const auto& access : te::ComputeDAG::accesses(conv)) {
    auto first = access.indices.empty() ? nullptr : access.indices[0].as<ir::VarNode>();
    if (first == conv.axes[1].var.node()) weights = access.producer;
    else data = access.producer;
  }
  TESSEL_CHECK(!data.empty() && !weights.empty(), "GPU conv2d tiles: '{}' does not read an input and weights", conv.name);
  return {data, weights};
}

void checkCovers(const char* what, const std::array<int64_t, 3>& parts, int64_t extent) {
  for (int64_t p : parts) TESSEL_CHECK(p >= 1, "GPU conv2d tiles: tile_{} [{}, {}, {}] has a part below 1", what, parts[0], parts[1], parts[2]);
  int64_t inner = parts[1] * parts[2];
  TESSEL_CHECK(parts[0] == (extent + inner - 1) / inner, "GPU conv2d tiles: tile_{} [{}, {}, {}] does not cover the extent {}",
               what, parts[0], parts[1], parts[2], extent);
}

}  // namespace

std::vector<StepPtr> gpuTiledConv2dSchedule(const te::ComputeDAG& dag, const GpuConv2dTile& tile) {
  GpuConv2dShape shape = gpuConv2dShapeOf(dag);
  checkCovers("f", tile.f, shape.channels);
  checkCovers("y", tile.y, shape.height);
  checkCovers("x", tile.x, shape.width);
  for (auto [name, inner, extent] : {std::tuple{"rc", tile.rc, shape.inChannels}, std::tuple{"ry", tile.ry, shape.kernelHeight},
                                     std::tuple{"rx", tile.rx, shape.kernelWidth}})
    TESSEL_CHECK(inner >= 1 && extent % inner == 0, "GPU conv2d tiles: the chunk of {} ({}) does not divide its extent {}", name,
                 inner, extent);

  Recorder rec(dag);
  const std::string out = dag.outputNames()[0];
  const auto& conv = *dag.op(shape.anchor);
  // The accumulator: per thread, in registers. A convolution that is the output gets a local
  // copy; one with an epilogue is computed per thread where the epilogue reads it.
  std::string accumulator = out == shape.anchor ? rec.cacheWrite(out) : shape.anchor;
  auto [data, weights] = dataAndWeights(conv);
  std::string dataShared = rec.cacheRead(data, "shared", {accumulator});
  std::string weightsShared = rec.cacheRead(weights, "shared", {accumulator});
  // The padding is computed as the window is copied; the epilogue as the output is stored.
  for (auto it = dag.ops().rbegin(); it != dag.ops().rend(); ++it) {
    const auto& op = **it;
    if (!op.isPlaceholder() && !op.reduction() && !dag.isOutput(op.name)) rec.computeInline(op.name);
  }

  // The output: blocks x threads x each thread's sub-tile along channels, rows and columns.
  std::vector<std::string> loops = rec.leaves(out);
  auto f = rec.split(out, loops[1], {tile.f[1], tile.f[2]});
  auto y = rec.split(out, loops[2], {tile.y[1], tile.y[2]});
  auto x = rec.split(out, loops[3], {tile.x[1], tile.x[2]});
  rec.reorder(out, {loops[0], f[0], y[0], x[0], f[1], y[1], x[1], f[2], y[2], x[2]});
  std::string blocksZ = rec.fuse(out, {loops[0], f[0]});
  rec.annotate(out, blocksZ, Annotation::BlockZ);
  rec.annotate(out, y[0], Annotation::BlockY);
  rec.annotate(out, x[0], Annotation::BlockX);
  rec.annotate(out, f[1], Annotation::ThreadZ);
  rec.annotate(out, y[1], Annotation::ThreadY);
  rec.annotate(out, x[1], Annotation::ThreadX);
  if (tile.autoUnrollMaxStep > 0)
    rec.add(std::make_shared<PragmaStep>(out, blocksZ, "auto_unroll_max_step", std::to_string(tile.autoUnrollMaxStep)));
  if (!tile.unrollExplicit) rec.add(std::make_shared<PragmaStep>(out, blocksZ, "unroll_explicit", "0"));

  // The accumulator at the thread: the reduction in chunks outside, the chunk and the
  // thread's sub-tile inside.
  rec.computeAt(accumulator, out, x[1]);
  std::vector<std::string> acc = rec.leaves(accumulator);
  auto rc = rec.split(accumulator, acc[4], {tile.rc});
  auto ry = rec.split(accumulator, acc[5], {tile.ry});
  auto rx = rec.split(accumulator, acc[6], {tile.rx});
  rec.reorder(accumulator, {rc[0], ry[0], rx[0], rc[1], ry[1], rx[1], acc[0], acc[1], acc[2], acc[3]});

  // Each chunk's window and weights, copied by the block's threads together: the copy's
  // elements in order, thread x fastest, so that neighbouring threads read neighbouring
  // addresses.
  for (const std::string& shared : {dataShared, weightsShared}) {
    rec.computeAt(shared, accumulator, rx[0]);
    std::string all = rec.fuse(shared, rec.leaves(shared));
    auto parts = rec.split(shared, all, {tile.f[1], tile.y[1], tile.x[1]});
    rec.annotate(shared, parts[1], Annotation::ThreadZ);
    rec.annotate(shared, parts[2], Annotation::ThreadY);
    rec.annotate(shared, parts[3], Annotation::ThreadX);
  }
  return rec.steps;
}

}  // namespace tessel::ops
