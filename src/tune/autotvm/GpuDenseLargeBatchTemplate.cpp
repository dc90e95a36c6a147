#include "tune/autotvm/GpuDenseLargeBatchTemplate.h"

#include <algorithm>

#include "ops/GpuSchedules.h"
#include "support/Error.h"
#include "tune/autotvm/GpuDenseSmallBatchTemplate.h"

namespace tessel::tune::autotvm {

namespace {
/// The values of the `lanes` knob.
constexpr const char* kSubTileLanes = "sub_tile";
constexpr const char* kInterleavedLanes = "interleaved";
}  // namespace

bool gpuDenseLargeBatchTemplateApplies(const te::ComputeDAG& dag) {
  ops::GpuGemmShape shape;
  bool dense = succeeds([&] { shape = ops::gpuGemmShapeOf(dag); }) && ops::traitsOf(*dag.op(shape.anchor)).kind == ops::OpKind::Dense;
  return dense && shape.rows > kMaxSmallBatch;
}

bool gpuBatchMatmulTemplateApplies(const te::ComputeDAG& dag) {
  auto shape = ops::gpuGemmTilesApply(dag);
  if (!shape) return false;
  auto kind = ops::traitsOf(*dag.op(shape->anchor)).kind;
  return kind == ops::OpKind::Matmul || kind == ops::OpKind::BatchMatmul;
}

ops::GpuGemmTile gpuGemmTileOf(const ConfigEntity& config) {
  ops::GpuGemmTile tile;
  tile.x = threeLevels(config, "tile_x");
  tile.y = threeLevels(config, "tile_y");
  tile.k = config.split("tile_k")[1];
  tile.autoUnrollMaxStep = config.value("auto_unroll_max_step").get<int64_t>();
  tile.unrollExplicit = config.value("unroll_explicit").get<int64_t>() != 0;
  if (config.has("tensor_core") && config.value("tensor_core").get<std::string>() != "none")
    tile.tensorCores = ir::parseWarpMmaIntrinsic(config.value("tensor_core").get<std::string>());
  if (config.has("buffer_stages")) tile.stages = config.value("buffer_stages").get<int64_t>();
  // Records from before the knob hold contiguous sub-tiles.
  if (config.has("lanes")) tile.interleaveLanes = config.value("lanes").get<std::string>() == kInterleavedLanes;
  return tile;
}

GpuTemplateSpace gpuGemmTemplate(const te::ComputeDAG& dag, const passes::GpuLimits& limits, target::MatmulPrecision precision,
                                 const char* name) {
  ops::GpuGemmShape shape;
  try {
    shape = ops::gpuGemmShapeOf(dag);
  } catch (const Error& e) {
    throw e.withContext(name);
  }
  // The default schedule's tile (rule 7): on tensor cores where the device has them and the
  // product's shape allows.
  auto options = ops::gpuScheduleOptionsFor(limits, precision);
  std::optional<ops::GpuGemmTile> tensorTile;
  if (options.tensorCores)
    tensorTile = ops::defaultGpuTensorCoreTile(shape, *options.tensorCores, limits.multiProcessorCount, limits.maxThreadsPerBlock,
                                               limits.maxSharedMemoryPerBlock);
  ops::GpuGemmTile fallback =
      tensorTile ? *tensorTile : ops::defaultGpuGemmTile(shape, limits.multiProcessorCount, limits.maxThreadsPerBlock, limits.warpSize);
  auto space = std::make_shared<ConfigSpace>();
  double unpruned = 1;
  std::vector<int64_t> x(fallback.x.begin(), fallback.x.end()), y(fallback.y.begin(), fallback.y.end());
  defineThreadTile(*space, "tile_x", shape.rows, limits.maxBlockDimensions[1], 8, x, unpruned);
  defineThreadTile(*space, "tile_y", shape.columns, limits.maxBlockDimensions[0], 8, y, unpruned);
  // Longer chunks only take more shared memory: the barriers they save are few already at 64.
  int64_t chunks = shape.reduction / fallback.k;
  defineTwoLevelSplit(*space, "tile_k", shape.reduction, 64, {chunks, fallback.k}, unpruned);
  defineUnrollKnobs(*space, unpruned);
  // The fp32 units, or the fp32-accurate tensor-core products (a tile of whole warps: other
  // tiles fail to build and are recorded as errors).
  if (options.tensorCores) {
    space->defineKnob("tensor_core", {"none", ir::warpMmaIntrinsicName(*options.tensorCores)});
    unpruned *= 2;
  }
  // Chunks in flight where the copies are asynchronous: each stage takes the chunk's shared
  // memory again (a config over the limit is an error record), so the deeper pipelines pay with
  // shorter chunks.
  if (limits.asyncCopies) {
    space->defineKnob("buffer_stages", {int64_t(2), int64_t(3), int64_t(4)});
    unpruned *= 3;
  }
  // How a warp's lanes share its tile on tensor cores (ops::GpuGemmTile::interleaveLanes). The
  // last knob, the sub-tiles its first option: a config's index from before the knob (the
  // first knob varies fastest) is the same config.
  if (options.tensorCores) {
    space->defineKnob("lanes", {std::string(kSubTileLanes), std::string(kInterleavedLanes)});
    unpruned *= 2;
  }

  GpuTemplateSpace t;
  t.space = space;
  t.unprunedSize = uint64_t(unpruned);
  std::string templateName = name;
  setSchedule(t, [dag, limits, templateName](const ConfigEntity& config) {
    ops::GpuGemmTile tile = gpuGemmTileOf(config);
    checkThreadsPerBlock(templateName, tile.threads(), limits);
    ops::GpuTileSchedule s = ops::gpuGemmTiles(dag, tile);
    checkSharedMemory(templateName, s.state, limits);
    return s;
  });
  std::map<std::string, nlohmann::json> values = {
      {"tile_x", x}, {"tile_y", y}, {"tile_k", std::vector<int64_t>{chunks, fallback.k}}};
  addUnrollFallback(values);
  if (options.tensorCores) {
    values["tensor_core"] = tensorTile ? ir::warpMmaIntrinsicName(*options.tensorCores) : "none";
    values["lanes"] = fallback.interleaveLanes ? kInterleavedLanes : kSubTileLanes;
  }
  if (limits.asyncCopies) values["buffer_stages"] = fallback.stages;
  t.fallback = configIndexOf(*space, values, name);
  return t;
}

TuningTaskPtr makeGpuDenseLargeBatchTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                         const passes::GpuLimits& limits) {
  TESSEL_CHECK(gpuDenseLargeBatchTemplateApplies(dag), "{}: the function is not a dense layer of a batch over {}",
               kGpuDenseLargeBatchTemplate, kMaxSmallBatch);
  return makeGpuTemplateTask(name, kGpuDenseLargeBatchTemplate, dag, target, limits,
                             gpuGemmTemplate(dag, limits, target.matmulPrecision, kGpuDenseLargeBatchTemplate));
}

TuningTaskPtr makeGpuBatchMatmulTask(const std::string& name, const te::ComputeDAG& dag, const target::Target& target,
                                     const passes::GpuLimits& limits) {
  TESSEL_CHECK(gpuBatchMatmulTemplateApplies(dag), "{}: the function is not a matmul or batch_matmul the GEMM tiles take",
               kGpuBatchMatmulTemplate);
  auto task = std::make_shared<TuningTask>(
      *makeGpuTemplateTask(name, kGpuBatchMatmulTemplate, dag, target, limits, gpuGemmTemplate(dag, limits, target.matmulPrecision, kGpuBatchMatmulTemplate)));
  // The default GPU schedule gives these functions the same tiles (its rule 7).
  task->fallbackIsDefaultSchedule = true;
  return task;
}

}  // namespace tessel::tune::autotvm
