#include "tune/autotvm/GpuDepthwiseTemplate.h"

#include <algorithm>

namespace tessel::tune::autotvm {

namespace {

/// The fallback's [blocks, threads, per thread] factors of channels, rows and columns.
struct DepthwiseFallback {
  std::vector<int64_t> f, y, x;
};

DepthwiseFallback depthwiseFallback(const ops::GpuDepthwiseShape& s, const passes::GpuLimits& limits) {
  int64_t maxThreads = std::min<int64_t>(256, limits.maxThreadsPerBlock);
  // Neighbouring threads on neighbouring columns; two rows per thread share their windows'
  // middle rows in the cache.
  int64_t tx = largestDivisorAtMost(s.width, std::min<int64_t>(16, limits.maxBlockDimensions[0]));
  int64_t ty = largestDivisorAtMost(s.height, std::min<int64_t>(std::max<int64_t>(1, 64 / tx), limits.maxBlockDimensions[1]));
  int64_t yi = largestDivisorAtMost(s.height / ty, 2);
  int64_t threadsLeft = std::max<int64_t>(1, maxThreads / (tx * ty));
  int64_t tf = largestDivisorAtMost(s.channels, std::min<int64_t>(threadsLeft, limits.maxBlockDimensions[2]));
  // Blocks for twice the multiprocessors where the device says how many it has: the deep
  // layers' 7x7 and 14x14 images have few outputs per channel.
  int64_t sms = limits.multiProcessorCount;
  auto blocks = [&] { return s.batch * (s.channels / tf) * (s.height / (ty * yi)) * (s.width / tx); };
  while (sms > 0 && blocks() < 2 * sms && tf > 1) tf = largestDivisorAtMost(s.channels, tf - 1);
  if (sms > 0 && blocks() < 2 * sms) yi = 1;
  return {{s.channels / tf, tf, 1}, {s.height / (ty * yi), ty, yi}, {s.width / tx, tx, 1}};
}

}  // namespace

bool gpuDepthwiseTemplateApplies(const te::ComputeDAG& dag) {
  return succeeds([&] { ops::gpuDepthwiseShapeOf(dag); });
}

GpuTemplateSpace gpuDepthwiseTemplate(const te::ComputeDAG& dag, const passes::GpuLimits& limits) {
  ops::GpuDepthwiseShape shape = ops::gpuDepthwiseShapeOf(dag);
  DepthwiseFallback fallback = depthwiseFallback(shape, limits);
  auto space = std::make_shared<ConfigSpace>();
  double unpruned = 1;
  // A thread's channels share no inputs (each reads its own channel), so few of them; its rows
  // and columns share the windows' overlap.
  defineThreadTile(*space, "tile_f", shape.channels, limits.maxBlockDimensions[2], 4, fallback.f, unpruned);
  defineThreadTile(*space, "tile_y", shape.height, limits.maxBlockDimensions[1], 8, fallback.y, unpruned);
  defineThreadTile(*space, "tile_x", shape.width, limits.maxBlockDimensions[0], 8, fallback.x, unpruned);
  defineUnrollKnobs(*space, unpruned);

  GpuTemplateSpace t;
  t.space = space;
  t.unprunedSize = uint64_t(unpruned);
  setSchedule(t, [dag, limits](const ConfigEntity& config) {
    ops::GpuImageTile tile = gpuImageTileOf(config);
    checkThreadsPerBlock(kGpuDepthwiseTemplate, tile.tileThreads(), limits);
    checkAccumulators(kGpuDepthwiseTemplate, tile.outputsPerThread());
    return ops::gpuTiledDepthwise(dag, tile);
  });
  std::map<std::string, nlohmann::json> values = {{"tile_f", fallback.f}, {"tile_y", fallback.y}, {"tile_x", fallback.x}};
  addUnrollFallback(values);
  t.fallback = configIndexOf(*space, values, kGpuDepthwiseTemplate);
  return t;
}

TuningTaskPtr makeGpuDepthwiseTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                   const passes::GpuLimits& limits) {
  return makeGpuTemplateTask(name, kGpuDepthwiseTemplate, dag, target, limits, gpuDepthwiseTemplate(dag, limits));
}

}  // namespace tessel::tune::autotvm
