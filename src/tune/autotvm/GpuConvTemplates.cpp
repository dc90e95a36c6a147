#include "tune/autotvm/GpuConvTemplates.h"

#include <fmt/format.h>

#include <algorithm>

#include "support/Error.h"
#include "tune/ansor/SplitFactorizations.h"

namespace tessel::tune::autotvm {

namespace {

constexpr int64_t kMaxAccumulatorsPerThread = 64;

/// The largest divisor of `n` that is at most `cap` (1 at least).
int64_t largestDivisorAtMost(int64_t n, int64_t cap) {
  std::vector<int64_t> divisors = ansor::divisorsOf(n);  // increasing, 1 first
  return *std::prev(std::upper_bound(divisors.begin() + 1, divisors.end(), std::max<int64_t>(cap, 1)));
}

/// [blocks, threads, per thread] of an axis, threads at most `maxThreads`, per thread at most
/// `maxInner`.
SplitOptions spatialTile(int64_t maxThreads, int64_t maxInner) {
  SplitOptions o;
  o.numOutputs = 3;
  o.filter = [maxThreads, maxInner](const std::vector<int64_t>& p) { return p[1] <= maxThreads && p[2] <= maxInner; };
  return o;
}

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
  try {
    ops::gpuConv2dShapeOf(dag);
    return true;
  } catch (const Error&) {
    return false;
  }
}

ops::GpuConv2dTile gpuConv2dTileOf(const ConfigEntity& config) {
  ops::GpuConv2dTile tile;
  auto three = [&](const char* knob) {
    auto p = config.split(knob);
    return std::array<int64_t, 3>{p[0], p[1], p[2]};
  };
  tile.f = three("tile_f");
  tile.y = three("tile_y");
  tile.x = three("tile_x");
  tile.rc = config.split("tile_rc")[1];
  tile.ry = config.split("tile_ry")[1];
  tile.rx = config.split("tile_rx")[1];
  tile.splitK = config.value("split_rc").get<int64_t>();
  tile.autoUnrollMaxStep = config.value("auto_unroll_max_step").get<int64_t>();
  tile.unrollExplicit = config.value("unroll_explicit").get<int64_t>() != 0;
  return tile;
}

GpuTemplateSpace gpuConv2dTemplate(const te::ComputeDAG& dag, const passes::GpuLimits& limits) {
  ops::GpuConv2dShape shape = ops::gpuConv2dShapeOf(dag);
  FallbackTile fallback = fallbackTile(shape, limits);
  auto space = std::make_shared<ConfigSpace>();
  double unpruned = 1;
  auto defineSpatial = [&](const char* name, int64_t extent, int64_t maxThreads, int64_t maxInner, const std::vector<int64_t>& include) {
    SplitOptions o = spatialTile(maxThreads, maxInner);
    o.include = {include};
    SplitOptions all;
    all.numOutputs = 3;
    unpruned *= double(splitCandidates(extent, all).size());
    space->defineSplit(name, extent, o);
  };
  // Per-thread parts bounded so that any choice of the three stays near the register budget
  // (16 x 8 x 8 is the extreme; the product is checked per config against 64).
  defineSpatial("tile_f", shape.channels, limits.maxBlockDimensions[2], 16, fallback.f);
  defineSpatial("tile_y", shape.height, limits.maxBlockDimensions[1], 8, fallback.y);
  defineSpatial("tile_x", shape.width, limits.maxBlockDimensions[0], 8, fallback.x);
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

  std::vector<size_t> choices;
  for (const Knob& k : space->knobs()) {
    nlohmann::json value;
    if (k.name == "tile_f") value = fallback.f;
    else if (k.name == "tile_y") value = fallback.y;
    else if (k.name == "tile_x") value = fallback.x;
    else if (k.name == "tile_rc") value = std::vector<int64_t>{shape.inChannels / fallback.rc, fallback.rc};
    else if (k.name == "tile_ry") value = std::vector<int64_t>{1, shape.kernelHeight};
    else if (k.name == "tile_rx") value = std::vector<int64_t>{1, shape.kernelWidth};
    else if (k.name == "split_rc") value = fallback.splitK;
    else if (k.name == "auto_unroll_max_step") value = 512;
    else value = 1;
    auto index = space->optionIndex(k.name, value);
    TESSEL_CHECK(index.has_value(), "conv2d_nchw.cuda: the fallback's {} = {} is not in the space", k.name, value.dump());
    choices.push_back(*index);
  }
  GpuTemplateSpace t;
  t.space = space;
  t.unprunedSize = uint64_t(unpruned);
  // A config the device cannot run is an instantiation error before any build: the tuners'
  // cost model then marks it invalid and never proposes it (FeatureCache.h).
  auto schedule = [dag, limits](const ConfigEntity& config) {
    ops::GpuConv2dTile tile = gpuConv2dTileOf(config);
    TESSEL_CHECK(tile.threads() <= limits.maxThreadsPerBlock, "conv2d_nchw.cuda: {} threads per block, the device ({}) allows {}",
                 tile.threads(), limits.profile, limits.maxThreadsPerBlock);
    int64_t accumulators = tile.f[2] * tile.y[2] * tile.x[2];
    TESSEL_CHECK(accumulators <= kMaxAccumulatorsPerThread,
                 "conv2d_nchw.cuda: {} accumulators per thread would spill registers (at most {})", accumulators,
                 kMaxAccumulatorsPerThread);
    ops::GpuConv2dSchedule s = ops::gpuTiledConv2d(dag, tile);
    int64_t shared = ops::sharedMemoryBytes(s.state);
    TESSEL_CHECK(shared <= limits.maxSharedMemoryPerBlock,
                 "conv2d_nchw.cuda: the shared windows take {} bytes of shared memory per block, the device ({}) has {}", shared,
                 limits.profile, limits.maxSharedMemoryPerBlock);
    return s;
  };
  t.instantiate = [schedule](const ConfigEntity& config) { return schedule(config).steps; };
  t.instantiateState = [schedule](const ConfigEntity& config) { return schedule(config).state; };

  // The fallback's chunk of input channels shrinks until its windows fit the device's shared
  // memory (a Mali GPU has 32 KiB of it, an H100 block 48).
  auto runs = [&](const std::vector<size_t>& c) {
    try {
      schedule(space->fromChoices(c));
      return true;
    } catch (const Error&) {
      return false;
    }
  };
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
  GpuTemplateSpace t = gpuConv2dTemplate(dag, limits);
  auto task = std::make_shared<TuningTask>();
  task->name = name;
  task->templateName = kGpuConv2dTemplate;
  auto measure = std::make_shared<MeasureTask>(*makeMeasureTask(name, dag, target));
  measure->gpuLimits = limits;
  task->measure = measure;
  task->flops = dag.flopCount();
  task->space = t.space;
  task->instantiate = t.instantiate;
  task->instantiateState = t.instantiateState;
  task->fallbackIndex = t.fallback;
  task->fallbackIsDefaultSchedule = false;  // tiles the default schedule cannot express (gpu_default tunes that one)
  task->unprunedSize = t.unprunedSize;
  return task;
}

}  // namespace tessel::tune::autotvm
