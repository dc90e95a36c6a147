#include "tune/autotvm/GpuWinogradTemplate.h"

#include "support/Error.h"

namespace tessel::tune::autotvm {

bool gpuWinogradTemplateApplies(const te::ComputeDAG& dag) {
  return succeeds([&] { ops::gpuWinogradShapeOf(dag); });
}

ops::GpuWinogradTile gpuWinogradTileOf(const ConfigEntity& config) {
  ops::GpuWinogradTile tile;
  auto b = config.split("tile_b");
  TESSEL_CHECK(b.size() == 2, "the knob tile_b has {} parts, not 2", b.size());
  static_cast<ops::GpuImageTile&>(tile) = gpuImageTileOf(config);
  tile.b = {b[0], b[1]};
  tile.rc = config.split("tile_rc")[1];
  return tile;
}

GpuTemplateSpace gpuWinogradTemplate(const te::ComputeDAG& dag, const passes::GpuLimits& limits) {
  ops::GpuWinogradShape shape = ops::gpuWinogradShapeOf(dag);
  // Winograd's tiles compute on the fp32 units: the products' precision does not choose them.
  ops::GpuWinogradTile fallback = ops::defaultGpuWinogradTile(shape, ops::gpuScheduleOptionsFor(limits, target::MatmulPrecision::Fp32));
  auto asList = [](const auto& parts) { return std::vector<int64_t>(parts.begin(), parts.end()); };
  int64_t points = int64_t(shape.alpha) * shape.alpha;
  auto space = std::make_shared<ConfigSpace>();
  double unpruned = 1;
  {
    SplitOptions o;
    unpruned *= double(splitCandidates(points, o).size());
    o.filter = [alpha = shape.alpha](const std::vector<int64_t>& p) { return ops::gpuWinogradPointsAreABox(p[1], alpha); };
    o.include = {asList(fallback.b)};
    space->defineSplit("tile_b", points, o);
  }
  // All threads are threadIdx.x: the block dimension's limit bounds each part.
  int64_t maxThreads = std::min(limits.maxThreadsPerBlock, limits.maxBlockDimensions[0]);
  defineThreadTile(*space, "tile_f", shape.outChannels, maxThreads, 8, asList(fallback.f), unpruned);
  defineThreadTile(*space, "tile_y", shape.tileRows, maxThreads, 4, asList(fallback.y), unpruned);
  defineThreadTile(*space, "tile_x", shape.tileColumns, maxThreads, 4, asList(fallback.x), unpruned);
  defineTwoLevelSplit(*space, "tile_rc", shape.inChannels, 16, {shape.inChannels / fallback.rc, fallback.rc}, unpruned);
  space->defineKnob("auto_unroll_max_step", {0, 128, 1500});
  space->defineKnob("unroll_explicit", {0, 1});
  unpruned *= 6;

  GpuTemplateSpace t;
  t.space = space;
  t.unprunedSize = uint64_t(unpruned);
  // A config the device cannot run is an instantiation error before any build: the tuners'
  // cost model then marks it invalid and never proposes it (FeatureCache.h).
  setSchedule(t, [dag, limits](const ConfigEntity& config) {
    ops::GpuWinogradTile tile = gpuWinogradTileOf(config);
    checkThreadsPerBlock(kGpuWinogradTemplate, tile.threads(), limits);
    checkAccumulators(kGpuWinogradTemplate, tile.accumulators());
    ops::GpuTileSchedule s = ops::gpuTiledWinograd(dag, tile);
    checkSharedMemory(kGpuWinogradTemplate, s.state, limits);
    return s;
  });
  t.fallback = configIndexOf(*space,
                             {{"tile_b", asList(fallback.b)},
                              {"tile_f", asList(fallback.f)},
                              {"tile_y", asList(fallback.y)},
                              {"tile_x", asList(fallback.x)},
                              {"tile_rc", std::vector<int64_t>{shape.inChannels / fallback.rc, fallback.rc}},
                              {"auto_unroll_max_step", fallback.autoUnrollMaxStep},
                              {"unroll_explicit", fallback.unrollExplicit ? 1 : 0}},
                             kGpuWinogradTemplate);
  return t;
}

TuningTaskPtr makeGpuWinogradTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                  const passes::GpuLimits& limits) {
  auto task = std::make_shared<TuningTask>(*makeGpuTemplateTask(name, kGpuWinogradTemplate, dag, target, limits, gpuWinogradTemplate(dag, limits)));
  // The fallback is the default GPU schedule's tile: no record and the fallback are one kernel.
  task->fallbackIsDefaultSchedule = true;
  return task;
}

}  // namespace tessel::tune::autotvm
