#include "tune/autotvm/GpuDenseSmallBatchTemplate.h"

#include <algorithm>

#include "support/Error.h"

namespace tessel::tune::autotvm {

namespace {

constexpr int64_t kMaxOutputsPerBlock = 64;

}  // namespace

bool gpuDenseSmallBatchTemplateApplies(const te::ComputeDAG& dag) {
  bool small = false;
  return succeeds([&] { small = ops::gpuDenseShapeOf(dag).batch <= kMaxSmallBatch; }) && small;
}

ops::GpuDenseSmallBatchTile gpuDenseSmallBatchTileOf(const ConfigEntity& config) {
  ops::GpuDenseSmallBatchTile tile;
  tile.reduceThreads = config.split("tile_k")[1];
  tile.outputThreads = config.split("tile_y")[1];
  tile.autoUnrollMaxStep = config.value("auto_unroll_max_step").get<int64_t>();
  tile.unrollExplicit = config.value("unroll_explicit").get<int64_t>() != 0;
  return tile;
}

GpuTemplateSpace gpuDenseSmallBatchTemplate(const te::ComputeDAG& dag, const passes::GpuLimits& limits) {
  ops::GpuDenseShape shape = ops::gpuDenseShapeOf(dag);
  TESSEL_CHECK(shape.batch <= kMaxSmallBatch, "{}: a batch of {} is over the {} it takes", kGpuDenseSmallBatchTemplate,
               shape.batch, kMaxSmallBatch);
  int64_t maxThreads = std::min<int64_t>(1024, limits.maxThreadsPerBlock);
  // The fallback: a warp's threads read one output's weights, 32 consecutive floats at a time.
  int64_t reduceThreads = largestDivisorAtMost(shape.reduction, std::min<int64_t>({32, limits.maxBlockDimensions[0], maxThreads}));
  int64_t threadsLeft = std::max<int64_t>(1, std::min<int64_t>(256, maxThreads) / reduceThreads);
  int64_t outputThreads = largestDivisorAtMost(shape.outputs, std::min<int64_t>(threadsLeft, limits.maxBlockDimensions[1]));
  int64_t sms = limits.multiProcessorCount;
  while (sms > 0 && shape.batch * (shape.outputs / outputThreads) < 2 * sms && outputThreads > 1)
    outputThreads = largestDivisorAtMost(shape.outputs, outputThreads - 1);

  auto space = std::make_shared<ConfigSpace>();
  double unpruned = 1;
  defineTwoLevelSplit(*space, "tile_k", shape.reduction, std::min(maxThreads, limits.maxBlockDimensions[0]),
                    {shape.reduction / reduceThreads, reduceThreads}, unpruned);
  // More outputs per block would leave a classifier's launch (about 1000 outputs) fewer blocks
  // than a GPU has multiprocessors.
  defineTwoLevelSplit(*space, "tile_y", shape.outputs, std::min({maxThreads, limits.maxBlockDimensions[1], kMaxOutputsPerBlock}),
                    {shape.outputs / outputThreads, outputThreads}, unpruned);
  defineUnrollKnobs(*space, unpruned);

  GpuTemplateSpace t;
  t.space = space;
  t.unprunedSize = uint64_t(unpruned);
  setSchedule(t, [dag, limits](const ConfigEntity& config) {
    ops::GpuDenseSmallBatchTile tile = gpuDenseSmallBatchTileOf(config);
    checkThreadsPerBlock(kGpuDenseSmallBatchTemplate, tile.threads(), limits);
    ops::GpuTileSchedule s = ops::gpuDenseSmallBatch(dag, tile);
    checkSharedMemory(kGpuDenseSmallBatchTemplate, s.state, limits);
    return s;
  });
  std::map<std::string, nlohmann::json> values = {
      {"tile_k", std::vector<int64_t>{shape.reduction / reduceThreads, reduceThreads}},
      {"tile_y", std::vector<int64_t>{shape.outputs / outputThreads, outputThreads}}};
  addUnrollFallback(values);
  t.fallback = configIndexOf(*space, values, kGpuDenseSmallBatchTemplate);
  return t;
}

TuningTaskPtr makeGpuDenseSmallBatchTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                         const passes::GpuLimits& limits) {
  return makeGpuTemplateTask(name, kGpuDenseSmallBatchTemplate, dag, target, limits, gpuDenseSmallBatchTemplate(dag, limits));
}

}  // namespace tessel::tune::autotvm
