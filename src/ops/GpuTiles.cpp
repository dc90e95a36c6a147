#include "ops/GpuTiles.h"

#include "ops/Schedules.h"
#include "passes/GpuLaunch.h"
#include "support/Error.h"

namespace tessel::ops {

using namespace schedule;

const te::OperationNode& gpuTileAnchor(const te::ComputeDAG& dag, OpKind kind, const char* schedule, const char* kindName) {
  auto anchor = findAnchorStage(dag);
  TESSEL_CHECK(anchor.has_value(), "{}: the function has no {} to tile", schedule, kindName);
  const auto& op = *dag.op(*anchor);
  TESSEL_CHECK(traitsOf(op).kind == kind, "{}: the anchor '{}' is {}, not {}", schedule, *anchor, traitsOf(op).tag, kindName);
  TESSEL_CHECK(dag.outputNames().size() == 1, "{}: the function has {} outputs; the tiles need exactly one", schedule,
               dag.outputNames().size());
  const std::string& out = dag.outputNames()[0];
  TESSEL_CHECK(dag.op(out)->shape == op.shape, "{}: the output '{}' is not element-wise over '{}' (its shape differs)", schedule,
               out, *anchor);
  return op;
}

std::pair<std::string, std::string> dataAndWeights(const te::OperationNode& anchor, const char* schedule, size_t weightPosition,
                                                   size_t outputAxis) {
  std::string data, weights;
  for (const auto& access : te::ComputeDAG::accesses(anchor)) {
    auto index = access.indices.size() <= weightPosition ? nullptr : access.indices[weightPosition].as<ir::VarNode>();
    if (outputAxis < anchor.axes.size() && index == anchor.axes[outputAxis].var.node()) weights = access.producer;
    else data = access.producer;
  }
  TESSEL_CHECK(!data.empty() && !weights.empty(), "{}: '{}' does not read an input and weights", schedule, anchor.name);
  return {data, weights};
}

void checkTileCovers(const char* schedule, const char* what, const std::array<int64_t, 3>& parts, int64_t extent) {
  for (int64_t p : parts)
    TESSEL_CHECK(p >= 1, "{}: tile_{} [{}, {}, {}] has a part below 1", schedule, what, parts[0], parts[1], parts[2]);
  int64_t inner = parts[1] * parts[2];
  TESSEL_CHECK(parts[0] == (extent + inner - 1) / inner, "{}: tile_{} [{}, {}, {}] does not cover the extent {}", schedule, what,
               parts[0], parts[1], parts[2], extent);
}

void copyCooperatively(Recorder& rec, const std::string& shared, const std::string& reader, const std::string& at,
                       const std::array<int64_t, 3>& threadsZYX, int64_t lanes) {
  rec.computeAt(shared, reader, at);
  std::string all = rec.fuse(shared, rec.leaves(shared));
  if (lanes > 1) all = rec.split(shared, all, {lanes})[0];
  auto parts = rec.split(shared, all, {threadsZYX[0], threadsZYX[1], threadsZYX[2]});
  rec.annotate(shared, parts[1], Annotation::ThreadZ);
  rec.annotate(shared, parts[2], Annotation::ThreadY);
  rec.annotate(shared, parts[3], Annotation::ThreadX);
  if (lanes > 1) rec.annotate(shared, rec.leaves(shared).back(), Annotation::Vectorize);
}

void addUnrollPragmas(Recorder& rec, const std::string& stage, const std::string& loop, int64_t autoUnrollMaxStep,
                      bool unrollExplicit) {
  if (autoUnrollMaxStep > 0)
    rec.add(std::make_shared<PragmaStep>(stage, loop, "auto_unroll_max_step", std::to_string(autoUnrollMaxStep)));
  if (!unrollExplicit) rec.add(std::make_shared<PragmaStep>(stage, loop, "unroll_explicit", "0"));
}

std::vector<std::string> tileImageOutput(Recorder& rec, const std::string& out, const GpuImageTile& tile, const ImageAxes& axes) {
  std::vector<std::string> loops = rec.leaves(out);
  auto f = rec.split(out, loops[size_t(axes.channels)], {tile.f[1], tile.f[2]});
  auto y = rec.split(out, loops[size_t(axes.rows)], {tile.y[1], tile.y[2]});
  auto x = rec.split(out, loops[size_t(axes.columns)], {tile.x[1], tile.x[2]});
  rec.reorder(out, {loops[0], f[0], y[0], x[0], f[1], y[1], x[1], f[2], y[2], x[2]});
  std::string blocksZ = rec.fuse(out, {loops[0], f[0]});
  rec.annotate(out, blocksZ, Annotation::BlockZ);
  rec.annotate(out, y[0], Annotation::BlockY);
  rec.annotate(out, x[0], Annotation::BlockX);
  addUnrollPragmas(rec, out, blocksZ, tile.autoUnrollMaxStep, tile.unrollExplicit);
  return {blocksZ, y[0], x[0], f[1], y[1], x[1], f[2], y[2], x[2]};
}

std::string perThreadAccumulator(Recorder& rec, const std::string& out, const std::string& anchor) {
  return out == anchor ? rec.cacheWrite(out) : anchor;
}

void inlineInjectiveStages(Recorder& rec, const te::ComputeDAG& dag) {
  for (auto it = dag.ops().rbegin(); it != dag.ops().rend(); ++it) {
    const auto& op = **it;
    if (!op.isPlaceholder() && !op.reduction() && !dag.isOutput(op.name)) rec.computeInline(op.name);
  }
}

int64_t sharedMemoryBytes(const State& state) {
  int64_t bytes = 0;
  for (const Stage& s : state.stages()) {
    if (s.memoryScope != "shared" || s.isPlaceholder()) continue;
    int64_t elements = 1;
    for (size_t d = 0; d < s.op->axes.size(); ++d) elements *= s.iterator(int(d)).extent;
    bytes += passes::sharedBufferBytes(elements * s.op->dtype.storageBytes());
  }
  return bytes;
}

}  // namespace tessel::ops
