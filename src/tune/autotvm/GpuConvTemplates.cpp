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

/// The thread dimension (0 x, 1 y, 2 z) of the channels, rows and columns: the contiguous axis
/// on x (ops/GpuConv2dTiles.h).
struct ThreadDims {
  size_t channels, rows, columns;
};
ThreadDims threadDimsOf(const ops::GpuConv2dShape& s) { return s.nhwc() ? ThreadDims{0, 2, 1} : ThreadDims{2, 1, 0}; }

FallbackTile fallbackTile(const ops::GpuConv2dShape& s, const passes::GpuLimits& limits) {
  int64_t maxThreads = std::min<int64_t>(1024, limits.maxThreadsPerBlock);
  ThreadDims dims = threadDimsOf(s);
  int64_t tx, ty, yi, fi, tf;
  if (s.nhwc()) {
    // Channels across a warp's threads (the output's and the weights' contiguous axis), two
    // per thread, and columns then rows across the rest of up to 256 threads.
    tf = largestDivisorAtMost(s.channels, std::min<int64_t>(32, limits.maxBlockDimensions[dims.channels]));
    fi = largestDivisorAtMost(s.channels / tf, 2);
    tx = largestDivisorAtMost(s.width, std::min<int64_t>(std::max<int64_t>(1, 256 / tf), limits.maxBlockDimensions[dims.columns]));
    ty = largestDivisorAtMost(s.height, std::min<int64_t>(std::max<int64_t>(1, 256 / (tf * tx)), limits.maxBlockDimensions[dims.rows]));
    yi = largestDivisorAtMost(s.height / ty, 2);
  } else {
    tx = largestDivisorAtMost(s.width, 16);
    ty = largestDivisorAtMost(s.height, std::max<int64_t>(1, 64 / tx));
    yi = largestDivisorAtMost(s.height / ty, 2);
    int64_t threadsLeft = std::max<int64_t>(1, std::min<int64_t>(256, maxThreads) / (tx * ty));
    fi = largestDivisorAtMost(s.channels, 4);
    tf = largestDivisorAtMost(s.channels / fi, std::min<int64_t>(threadsLeft, limits.maxBlockDimensions[dims.channels]));
  }
  int64_t sms = limits.multiProcessorCount;  // 0 where unknown: no reshaping for it
  auto blocks = [&] { return (s.channels / (tf * fi)) * (s.height / (ty * yi)) * (s.width / tx); };
  if (s.nhwc()) {
    // Fewer channels per block, down to a quarter warp's 8 threads, keeping stores contiguous.
    while (sms > 0 && blocks() < 2 * sms && (fi > 1 || tf > 8)) {
      if (fi > 1) fi = 1;
      else tf = largestDivisorAtMost(s.channels, tf / 2);
    }
  } else if (sms > 0 && blocks() < 2 * sms) {
    tf = 1;
  }
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
  bool nchw = false;
  succeeds([&] { nchw = !ops::gpuConv2dShapeOf(dag).nhwc(); });
  return nchw;
}

bool gpuConv2dNhwcTemplateApplies(const te::ComputeDAG& dag) {
  bool nhwc = false;
  succeeds([&] { nhwc = ops::gpuConv2dShapeOf(dag).nhwc(); });
  return nhwc;
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
  const std::string name = shape.nhwc() ? kGpuConv2dNhwcTemplate : kGpuConv2dTemplate;
  FallbackTile fallback = fallbackTile(shape, limits);
  ThreadDims dims = threadDimsOf(shape);
  auto space = std::make_shared<ConfigSpace>();
  double unpruned = 1;
  // Per-thread parts bounded so that any choice of the three stays near the register budget
  // (16 x 8 x 8 is the extreme; the product is checked per config against 64).
  defineThreadTile(*space, "tile_f", shape.channels, limits.maxBlockDimensions[dims.channels], 16, fallback.f, unpruned);
  defineThreadTile(*space, "tile_y", shape.height, limits.maxBlockDimensions[dims.rows], 8, fallback.y, unpruned);
  defineThreadTile(*space, "tile_x", shape.width, limits.maxBlockDimensions[dims.columns], 8, fallback.x, unpruned);
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
                name);
  GpuTemplateSpace t;
  t.space = space;
  t.unprunedSize = uint64_t(unpruned);
  // A config the device cannot run is an instantiation error before any build: the tuners'
  // cost model then marks it invalid and never proposes it (FeatureCache.h).
  auto schedule = [dag, limits, name](const ConfigEntity& config) {
    ops::GpuConv2dTile tile = gpuConv2dTileOf(config);
    checkThreadsPerBlock(name, tile.threads(), limits);
    checkAccumulators(name, tile.outputsPerThread());
    ops::GpuConv2dSchedule s = ops::gpuTiledConv2d(dag, tile);
    checkSharedMemory(name, s.state, limits);
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

TuningTaskPtr makeGpuConv2dTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                const passes::GpuLimits& limits) {
  TESSEL_CHECK(gpuConv2dTemplateApplies(dag), "task '{}': {} applies to direct NCHW convolutions", name, kGpuConv2dTemplate);
  return makeGpuTemplateTask(name, kGpuConv2dTemplate, dag, target, limits, gpuConv2dTemplate(dag, limits));
}

TuningTaskPtr makeGpuConv2dNhwcTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                    const passes::GpuLimits& limits) {
  TESSEL_CHECK(gpuConv2dNhwcTemplateApplies(dag), "task '{}': {} applies to direct NHWC convolutions", name,
               kGpuConv2dNhwcTemplate);
  return makeGpuTemplateTask(name, kGpuConv2dNhwcTemplate, dag, target, limits, gpuConv2dTemplate(dag, limits));
}

}  // namespace tessel::tune::autotvm
