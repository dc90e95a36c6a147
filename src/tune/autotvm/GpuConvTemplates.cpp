#include "tune/autotvm/GpuConvTemplates.h"

#include <fmt/format.h>

#include <algorithm>

#include "support/Error.h"

namespace tessel::tune::autotvm {

namespace {

/// The fallback's factors: columns across threads (neighbouring threads, neighbouring
/// addresses), a few rows and channels per thread for reuse in registers, 64 to 256 threads a
/// block. Where that leaves the device's multiprocessors short of threads (the deep layers'
/// 7x7 and 14x14 images), fewer channels per block and the input channels split over groups of
/// threads (split-K) until the launch has about 256 threads per multiprocessor.
struct FallbackTile {
  std::vector<int64_t> f, y, x;
  int64_t rc, splitK;
};

FallbackTile fallbackTile(const ops::GpuConv2dShape& s, const passes::GpuLimits& limits) {
  int64_t maxThreads = std::min<int64_t>(1024, limits.maxThreadsPerBlock);
  int64_t tx = largestDivisorAtMost(s.width, 16);
  int64_t ty = largestDivisorAtMost(s.height, std::max<int64_t>(1, 64 / tx));
  int64_t yi = largestDivisorAtMost(s.height / ty, 2);
  int64_t threadsLeft = std::max<int64_t>(1, std::min<int64_t>(256, maxThreads) / (tx * ty));
  int64_t fi = largestDivisorAtMost(s.channels, 4);
  int64_t tf = largestDivisorAtMost(s.channels / fi, std::min<int64_t>(threadsLeft, limits.maxBlockDimensions[2]));
  int64_t sms = limits.multiProcessorCount;  // 0 where unknown: no reshaping for it
  auto blocks = [&] { return (s.channels / (tf * fi)) * (s.height / (ty * yi)) * (s.width / tx); };
  if (sms > 0 && blocks() < 2 * sms) tf = 1;
  int64_t splitK = 1;
  while (sms > 0 && blocks() * tf * ty * tx * splitK < sms * 256 && splitK * 2 <= 16 && s.inChannels % (splitK * 2) == 0 &&
         tf * ty * tx * splitK * 2 <= maxThreads)
    splitK *= 2;
  return {{s.channels / (tf * fi), tf, fi},
          {s.height / (ty * yi), ty, yi},
          {s.width / tx, tx, 1},
          largestDivisorAtMost(s.inChannels / splitK, std::max<int64_t>(1, 32 / splitK)),
          splitK};
}

}  // namespace

bool gpuConv2dTemplateApplies(const te::ComputeDAG& dag) {
  return succeeds([&] { ops::gpuConv2dShapeOf(dag); });
}

ops::GpuConv2dTile gpuConv2dTileOf(const ConfigEntity& config) {
  ops::GpuConv2dTile tile;
  static_cast<ops::GpuImageTile&>(tile) = gpuImageTileOf(config);
  tile.rc = config.split("tile_rc")[1];
  tile.ry = config.split("tile_ry")[1];
  tile.rx = config.split("tile_rx")[1];
  tile.splitK = config.value("split_rc").get<int64_t>();
  return tile;
}

GpuTemplateSpace gpuConv2dTemplate(const te::ComputeDAG& dag, const passes::GpuLimits& limits) {
  ops::GpuConv2dShape shape = ops::gpuConv2dShapeOf(dag);
  FallbackTile fallback = fallbackTile(shape, limits);
  auto space = std::make_shared<ConfigSpace>();
  double unpruned = 1;
  // Per-thread parts bounded so that any choice of the three stays near the register budget
  // (16 x 8 x 8 is the extreme; the product is checked per config against 64).
  defineThreadTile(*space, "tile_f", shape.channels, limits.maxBlockDimensions[2], 16, fallback.f, unpruned);
  defineThreadTile(*space, "tile_y", shape.height, limits.maxBlockDimensions[1], 8, fallback.y, unpruned);
  defineThreadTile(*space, "tile_x", shape.width, limits.maxBlockDimensions[0], 8, fallback.x, unpruned);
  for (auto [name, extent, inner] : {std::tuple{"tile_rc", shape.inChannels, fallback.rc},
                                     std::tuple{"tile_ry", shape.kernelHeight, shape.kernelHeight},
                                     std::tuple{"tile_rx", shape.kernelWidth, shape.kernelWidth}}) {
    SplitOptions o;
    o.include = {{extent / inner, inner}};
    unpruned *= double(splitCandidates(extent, o).size());
    space->defineSplit(name, extent, o);
  }
  // Split-K: groups of threads over the input channels, for the deep layers' small images.
  std::vector<nlohmann::json> groups;
  for (int64_t k : {1, 2, 4, 8, 16})
    if (shape.inChannels % k == 0 && k <= limits.maxBlockDimensions[2]) groups.push_back(k);
  space->defineKnob("split_rc", groups);
  unpruned *= 5;
  space->defineKnob("auto_unroll_max_step", {0, 512, 1500});
  space->defineKnob("unroll_explicit", {0, 1});
  unpruned *= 6;

  std::vector<size_t> choices =
      choicesOf(*space,
                {{"tile_f", fallback.f},
                 {"tile_y", fallback.y},
                 {"tile_x", fallback.x},
                 {"tile_rc", std::vector<int64_t>{shape.inChannels / fallback.rc, fallback.rc}},
                 {"tile_ry", std::vector<int64_t>{1, shape.kernelHeight}},
                 {"tile_rx", std::vector<int64_t>{1, shape.kernelWidth}},
                 {"split_rc", fallback.splitK},
                 {"auto_unroll_max_step", 512},
                 {"unroll_explicit", 1}},
                kGpuConv2dTemplate);
  GpuTemplateSpace t;
  t.space = space;
  t.unprunedSize = uint64_t(unpruned);
  // A config the device cannot run is an instantiation error before any build: the tuners'
  // cost model then marks it invalid and never proposes it (FeatureCache.h).
  auto schedule = [dag, limits](const ConfigEntity& config) {
    ops::GpuConv2dTile tile = gpuConv2dTileOf(config);
    checkThreadsPerBlock(kGpuConv2dTemplate, tile.threads(), limits);
    checkAccumulators(kGpuConv2dTemplate, tile.outputsPerThread());
    ops::GpuConv2dSchedule s = ops::gpuTiledConv2d(dag, tile);
    checkSharedMemory(kGpuConv2dTemplate, s.state, limits);
    return s;
  };
  setSchedule(t, schedule);

  // The fallback's chunk of input channels shrinks until its windows fit the device's shared
  // memory (a Mali GPU has 32 KiB of it, an H100 block 48).
  auto runs = [&](const std::vector<size_t>& c) { return succeeds([&] { schedule(space->fromChoices(c)); }); };
  if (!runs(choices)) {
    size_t rcKnob = size_t(space->knobIndex("tile_rc"));
    std::vector<std::pair<int64_t, size_t>> smaller;  // (chunk, option), largest chunk first
    const auto& options = space->knob("tile_rc").options;
    for (size_t i = 0; i < options.size(); ++i)
      if (options[i].at(1).get<int64_t>() < fallback.rc) smaller.emplace_back(options[i].at(1).get<int64_t>(), i);
    std::sort(smaller.rbegin(), smaller.rend());
    for (const auto& [chunk, option] : smaller) {
      std::vector<size_t> c = choices;
      c[rcKnob] = option;
      if (runs(c)) {
        choices = c;
        break;
      }
    }
  }
  t.fallback = space->fromChoices(choices).index();
  return t;
}

TuningTaskPtr makeGpuConv2dTask(const std::string& name, const te::ComputeDAG& dag, const std::string& target,
                                const passes::GpuLimits& limits) {
  return makeGpuTemplateTask(name, kGpuConv2dTemplate, dag, target, limits, gpuConv2dTemplate(dag, limits));
}

}  // namespace tessel::tune::autotvm
