#include "tune/autotvm/GpuDenseLargeBatchTemplate.h"

#include <algorithm>

#include "support/Error.h"
#include "tune/autotvm/GpuDenseSmallBatchTemplate.h"

namespace tessel::tune::autotvm {

bool gpuDenseLargeBatchTemplateApplies(const te::ComputeDAG& dag) {
  bool large = false;
  return succeeds([&] { large = ops::gpuDenseShapeOf(dag).batch > kMaxSmallBatch; }) && large;
}

ops::GpuDenseLargeBatchTile gpuDenseLargeBatchTileOf(const ConfigEntity& config) {
  ops::GpuDenseLargeBatchTile tile;
  tile.x = threeLevels(config, "tile_x");
  tile.y = threeLevels(config, "tile_y");
  tile.k = config.split("tile_k")[1];
  tile.autoUnrollMaxStep = config.value("auto_unroll_max_step").get<int64_t>();
  tile.unrollExplicit = config.value("unroll_explicit").get<int64_t>() != 0;
  return tile;
}

GpuTemplateSpace gpuDenseLargeBatchTemplate(const te::ComputeDAG& dag, const passes::GpuLimits& limits) {
  ops::GpuDenseShape shape = ops::gpuDenseShapeOf(dag);
  TESSEL_CHECK(shape.batch > kMaxSmallBatch, "{}: a batch of {} is dense_small_batch.cuda's (up to {})", kGpuDenseLargeBatchTemplate,
               shape.batch, kMaxSmallBatch);
  // The fallback: a block of up to 16 x 16 threads, 4 x 4 outputs each, chunks of 16.
  int64_t rowThreads = largestDivisorAtMost(shape.batch, std::min<int64_t>(16, limits.maxBlockDimensions[1]));
  int64_t threadsLeft = std::max<int64_t>(1, limits.maxThreadsPerBlock / rowThreads);
  int64_t outThreads = largestDivisorAtMost(shape.outputs, std::min<int64_t>({16, limits.maxBlockDimensions[0], threadsLeft}));
  int64_t rows = largestDivisorAtMost(shape.batch / rowThreads, 4), outs = largestDivisorAtMost(shape.outputs / outThreads, 4);
  int64_t chunk = largestDivisorAtMost(shape.reduction, 16);

  auto space = std::make_shared<ConfigSpace>();
  double unpruned = 1;
  std::vector<int64_t> x = {shape.batch / (rowThreads * rows), rowThreads, rows};
  std::vector<int64_t> y = {shape.outputs / (outThreads * outs), outThreads, outs};
  defineThreadTile(*space, "tile_x", shape.batch, limits.maxBlockDimensions[1], 8, x, unpruned);
  defineThreadTile(*space, "tile_y", shape.outputs, limits.maxBlockDimensions[0], 8, y, unpruned);
  // Longer chunks only take more shared memory: the barriers they save are few already at 64.
  defineTwoLevelSplit(*space, "tile_k", shape.reduction, 64, {shape.reduction / chunk, chunk}, unpruned);
  defineUnrollKnobs(*space, unpruned);

  GpuTemplateSpace t;
  t.space = space;
  t.unprunedSize = uint64_t(unpruned);
  setSchedule(t, [dag, limits](const ConfigEntity& config) {
    ops::GpuDenseLargeBatchTile tile = gpuDenseLargeBatchTileOf(config);
    checkThreadsPerBlock(kGpuDenseLargeBatchTemplate, tile.threads(), limits);
    ops::GpuTileSchedule s = ops::gpuDenseLargeBatch(dag, tile);
    checkSharedMemory(kGpuDenseLargeBatchTemplate, s.state, limits);
    return s;
  });
  std::map<std::string, nlohmann::json> values = {
      {"tile_x", x}, {"tile_y", y}, {"tile_k", std::vector<int64_t>{shape.reduction / chunk, chunk}}};
  addUnrollFallback(values);
  t.fallback = configIndexOf(*space, values, kGpuDenseLargeBatchTemplate);
  return t;
}

TuningTaskPtr makeGpuDenseLargeBatchTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                         const passes::GpuLimits& limits) {
  return makeGpuTemplateTask(name, kGpuDenseLargeBatchTemplate, dag, target, limits, gpuDenseLargeBatchTemplate(dag, limits));
}

}  // namespace tessel::tune::autotvm
