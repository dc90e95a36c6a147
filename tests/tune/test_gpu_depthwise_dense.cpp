// The depthwise and dense GPU templates (tune/autotvm/GpuDepthwiseTemplate.h, GpuDenseSmallBatchTemplate.h,
// GpuDenseLargeBatchTemplate.h): the table picks them for the zoo networks' functions; their
// spaces; the fallback plus random configs over the zoo's shapes, built for OpenCL and run on
// the first OpenCL device (PoCL here) against the reference, and compiled for CUDA by NVRTC
// (run where a GPU is); configs over the device's limits as instantiation errors; a short
// tuning run of each whose log replays.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "common/ErrorText.h"
#include "common/GpuKernelCheck.h"
#include "common/GpuRequire.h"
#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "graph/passes/PassManager.h"
#include "ops/Dense.h"
#include "ops/Examples.h"
#include "ops/OpTraits.h"
#include "ops/Schedules.h"
#include "runtime/CudaDevice.h"
#include "runtime/OpenclDevice.h"
#include "support/TempDir.h"
#include "tune/LocalBuilder.h"
#include "tune/LocalRunner.h"
#include "tune/Record.h"
#include "tune/RecordLog.h"
#include "tune/autotvm/BasicTuners.h"
#include "tune/autotvm/FeatureCache.h"
#include "tune/autotvm/GpuDefaultTemplate.h"
#include "tune/autotvm/GpuDenseLargeBatchTemplate.h"
#include "tune/autotvm/GpuDenseSmallBatchTemplate.h"
#include "tune/autotvm/GpuDepthwiseTemplate.h"
#include "tune/autotvm/GpuTemplates.h"
#include "tune/autotvm/TuneTask.h"
#include "tune/GpuTemplateTestSupport.h"

using namespace tessel;
using namespace tessel::tune::autotvm;
using tessel::testsupport::errorOf;
using tessel::testsupport::expectContains;

namespace {

struct Case {
  std::string name;
  te::ComputeDAG dag;
};

/// The zoo network's functions as a GPU build extracts them (NCHW, one function per convolution).
std::vector<graph::Task> zooTasks(const std::string& model, int64_t imageSize, ops::Layout layout = ops::Layout::NCHW) {
  graph::ModelOptions zoo;
  zoo.imageSize = imageSize;
  zoo.classes = 10;
  graph::OptimizeOptions passes;
  passes.desiredLayout = layout;
  passes.fuseSeparable = false;
  return graph::extractTasks(graph::optimizeGraph(graph::buildModel(model, zoo), passes));
}

ops::OpKind anchorKind(const te::ComputeDAG& dag) {
  auto anchor = ops::findAnchorStage(dag);
  return anchor ? ops::traitsOf(*dag.op(*anchor)).kind : ops::OpKind::Other;
}

using ops::denseBias;

te::ComputeDAG bareDense(int64_t n, int64_t k, int64_t m) {
  auto data = te::placeholder({n, k}, DataType::float32(), "data");
  auto weight = te::placeholder({m, k}, DataType::float32(), "weight");
  return te::ComputeDAG({ops::dense(data, weight)}, {data, weight});
}

/// mobilenet's depthwise functions at 64x64 (32x32 down to 2x2 images, stride 1 and 2, 32 to
/// 1024 channels, batch norm and ReLU as epilogue), and bare ones with odd extents.
std::vector<Case> depthwiseCases() {
  std::vector<Case> cases;
  std::set<std::string> seen;
  for (const auto& t : zooTasks("mobilenet", 64))
    if (anchorKind(t.dag) == ops::OpKind::DepthwiseConv2dNCHW && seen.insert(t.workloadKey).second)
      cases.push_back({"mobilenet " + t.dag.outputNames()[0] + " #" + std::to_string(cases.size()), t.dag});
  cases.push_back({"dw15x15_stride2", ops::depthwiseConv2dNCHW(1, 12, 15, 15, 3, 2, 1)});
  cases.push_back({"dw7x7", ops::depthwiseConv2dNCHW(1, 40, 7, 7, 3, 1, 1)});
  return cases;
}

/// resnet-18's classifier (10 classes here), the 1000-class ones of resnet and mobilenet-v2, a
/// small batch and a bare dense with a prime number of outputs.
std::vector<Case> denseCases() {
  std::vector<Case> cases;
  for (const auto& t : zooTasks("resnet-18", 32))
    if (anchorKind(t.dag) == ops::OpKind::Dense) cases.push_back({"resnet-18 classifier", t.dag});
  cases.push_back({"dense512x1000", denseBias(1, 512, 1000)});
  cases.push_back({"dense1280x1000", denseBias(1, 1280, 1000)});
  cases.push_back({"dense_batch4", denseBias(4, 96, 48)});
  cases.push_back({"dense_prime", bareDense(1, 200, 37)});
  return cases;
}

/// Batches of 32 and more (dense_large_batch.cuda): ragged tiles where the extents are odd.
std::vector<Case> largeBatchCases() {
  return {{"dense32x64x48", denseBias(32, 64, 48)}, {"dense64x100x30", denseBias(64, 100, 30)}, {"dense_odd", bareDense(33, 27, 21)}};
}

/// batch_matmul.cuda's: odd rows (ViT's 197 tokens in small), stacks, a plain matmul.
std::vector<Case> batchMatmulCases() {
  return {{"projection_gelu", ops::projection(2, 37, 24, 40, true)}, {"heads", ops::attentionProduct(3, 20, 16, 24)}, {"matmul", ops::matmul(48, 32, 20)}};
}

using MakeSpace = GpuTemplateSpace (*)(const te::ComputeDAG&, const passes::GpuLimits&);

GpuTemplateSpace denseLargeBatchSpace(const te::ComputeDAG& dag, const passes::GpuLimits& limits) {
  return gpuGemmTemplate(dag, limits, target::MatmulPrecision::Fp32, kGpuDenseLargeBatchTemplate);
}

GpuTemplateSpace batchMatmulSpace(const te::ComputeDAG& dag, const passes::GpuLimits& limits) {
  return gpuGemmTemplate(dag, limits, target::MatmulPrecision::Fp32, kGpuBatchMatmulTemplate);
}

/// Builds the fallback and `randomCount` random configs of every case for `target`; runs them
/// where `run`. Returns the number built.
int buildAndRun(const std::vector<Case>& cases, MakeSpace makeSpace, int randomCount, const std::string& targetText, bool run) {
  const target::Target target = target::Target::parse(targetText);
  passes::GpuLimits limits = passes::GpuLimits::forTarget(target);
  uint64_t seed = 11;
  int built = 0;
  for (const auto& c : cases) {
    GpuTemplateSpace t = makeSpace(c.dag, limits);
    for (const ConfigEntity& config : tunetest::fallbackAndRandomConfigs(t, randomCount, seed++, 1000)) {
      SCOPED_TRACE(c.name + " on " + targetText + ", config " + config.str());
      // The state the template hands the cost model is the one its steps replay to.
      schedule::State state = schedule::replay(c.dag, t.instantiate(config));
      EXPECT_EQ(state.toString(), t.instantiateState(config).toString());
      codegen::GpuBinary binary = kernelcheck::buildForGpu(state, targetText, "tiled");
      ++built;
      if (!run) continue;
      // A failure names the config and shows the kernel (an escaping exception would lose both).
      try {
        auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
        auto data = kernelcheck::makeReferenceData(c.dag, seed++);
        EXPECT_LT(kernelcheck::runGpuAndCompare(module.kernel("tiled"), data), 1e-4) << binary.source.code;
      } catch (const Error& e) {
        ADD_FAILURE() << e.what() << "\nlaunch " << binary.manifestText() << "\n" << binary.source.code;
      }
    }
  }
  return built;
}

/// buildAndRun for CUDA: compiled by NVRTC, run where a GPU is, else the test skipped with the reason.
void buildForCuda(const std::vector<Case>& cases, MakeSpace makeSpace, int randomCount) {
  std::string why = kernelcheck::cudaUnavailableReason();
  // NVRTC's fast-compile mode (-opt-level=0): the configs' code and values are checked, not their speed.
  EXPECT_GE(buildAndRun(cases, makeSpace, randomCount, "cuda -opt-level=0", why.empty()), 30);
  if (!why.empty()) {
    if (testsupport::deviceRequired("TESSEL_REQUIRE_CUDA")) FAIL() << "TESSEL_REQUIRE_CUDA=1: " << why;
    GTEST_SKIP() << "compiled with NVRTC, not run: " << why;
  }
}

/// A config whose split knobs `knobs` all take their option with the largest part `part`
/// (1: threads, 2: per thread), the other knobs their first option.
ConfigEntity widest(const GpuTemplateSpace& t, const std::vector<std::string>& knobs, size_t part) {
  std::vector<size_t> choices(t.space->knobs().size(), 0);
  for (const std::string& name : knobs) {
    const auto& options = t.space->knob(name).options;
    size_t best = 0;
    for (size_t i = 0; i < options.size(); ++i)
      if (options[i].at(part).get<int64_t>() > options[best].at(part).get<int64_t>()) best = i;
    choices[size_t(t.space->knobIndex(name))] = best;
  }
  return t.space->fromChoices(choices);
}

/// The cost model's view of the task of `dag` on an H100: `over` (a config over the device's
/// limits) is invalid, never proposed; the fallback is valid, with features.
void expectInvalidForTheCostModel(const te::ComputeDAG& dag, const ConfigEntity& over) {
  auto task = makeGpuTuningTask("task", dag, target::Target::parse("cuda"), passes::GpuLimits::cudaSm90());
  FeatureCache cache(task, FeatureType::Itervar, 1);
  EXPECT_FALSE(cache.valid(over.index()));
  EXPECT_TRUE(cache.valid(task->fallbackIndex));
  const auto& features = cache.features(task->fallbackIndex);
  EXPECT_TRUE(std::any_of(features.begin(), features.end(), [](float f) { return f != 0; }));
}

void printSpace(const char* name, const te::ComputeDAG& dag, const GpuTemplateSpace& t) {
  std::printf("%s on %s: %llu configs (%llu before pruning)\n", name, dag.outputNames()[0].c_str(),
              (unsigned long long)t.space->size(), (unsigned long long)t.unprunedSize);
}

}  // namespace

TEST(GpuTemplateTable, PicksTheSpecificTemplatesForTheZooNetworks) {
  for (const char* model : {"mobilenet", "mobilenet-v2", "resnet-18"}) {
    int depthwise = 0, dense = 0, other = 0;
    for (const auto& t : zooTasks(model, 32)) {
      SCOPED_TRACE(std::string(model) + " " + t.dag.outputNames()[0]);
      std::string chosen = gpuTemplateFor(t.dag).value_or("");
      switch (anchorKind(t.dag)) {
        case ops::OpKind::DepthwiseConv2dNCHW:
          EXPECT_EQ(chosen, kGpuDepthwiseTemplate);
          ++depthwise;
          break;
        case ops::OpKind::Dense:
          EXPECT_EQ(chosen, kGpuDenseSmallBatchTemplate);
          ++dense;
          break;
        case ops::OpKind::Conv2dNCHW:
          EXPECT_EQ(chosen, "conv2d_nchw.cuda");
          break;
        default:
          EXPECT_EQ(chosen, kGpuDefaultTemplate);
          ++other;
      }
    }
    EXPECT_EQ(depthwise > 0, std::string(model) != "resnet-18") << model;
    EXPECT_EQ(dense, 1) << model;
  }
  // A network built in NHWC (--desired-layout NHWC) has its direct convolutions tiled by
  // conv2d_nhwc.cuda.
  int nhwc = 0;
  for (const auto& t : zooTasks("resnet-18", 32, ops::Layout::NHWC)) {
    SCOPED_TRACE("resnet-18 NHWC " + t.dag.outputNames()[0]);
    if (anchorKind(t.dag) != ops::OpKind::Conv2dNHWC) continue;
    EXPECT_EQ(gpuTemplateFor(t.dag).value_or(""), "conv2d_nhwc.cuda");
    EXPECT_EQ(gpuTemplatesTuned(t.dag), (std::vector<std::string>{"conv2d_nhwc.cuda", kGpuDefaultTemplate}));
    ++nhwc;
  }
  EXPECT_GE(nhwc, 11);
  // Not the depthwise template: NHWC; a batch of 32 is the large-batch dense template's; a
  // matrix-vector matmul (B not transposed) is gpu_default's, a wider one batch_matmul.cuda's.
  EXPECT_FALSE(gpuDepthwiseTemplateApplies(ops::conv2dNHWC(1, 8, 8, 8, 8, 3, 3, 1, 1)));
  EXPECT_EQ(gpuTemplateFor(denseBias(32, 64, 64)).value_or(""), kGpuDenseLargeBatchTemplate);
  EXPECT_EQ(gpuTemplateFor(denseBias(31, 64, 64)).value_or(""), kGpuDenseSmallBatchTemplate);
  EXPECT_EQ(gpuTemplateFor(ops::matmul(1, 64, 64)).value_or(""), "gpu_default");
  EXPECT_EQ(gpuTemplateFor(ops::matmul(16, 64, 64)).value_or(""), kGpuBatchMatmulTemplate);
  EXPECT_EQ(gpuTemplateFor(ops::attentionProduct(12, 128, 64, 128)).value_or(""), kGpuBatchMatmulTemplate);
  EXPECT_EQ(gpuTemplatesTuned(ops::projection(1, 128, 768, 3072, true)), (std::vector<std::string>{kGpuBatchMatmulTemplate}));
  expectContains(errorOf([] { gpuDepthwiseTemplate(ops::conv2dNCHW(1, 8, 8, 8, 8, 3, 3, 1, 1), passes::GpuLimits::cudaSm90()); }),
                 "not an NCHW depthwise conv2d");
  expectContains(errorOf([] { gpuDenseSmallBatchTemplate(denseBias(64, 8, 8), passes::GpuLimits::cudaSm90()); }),
                 "a batch of 64 is over the 31 it takes");
  EXPECT_FALSE(gpuDenseLargeBatchTemplateApplies(denseBias(4, 8, 8)));
  expectContains(errorOf([] { gpuGemmTemplate(ops::conv2dNCHW(1, 8, 8, 8, 8, 3, 3, 1, 1), passes::GpuLimits::cudaSm90(), target::MatmulPrecision::Fp32, "t"); }),
                 "t: GPU GEMM tiles: the anchor 'conv2d_nchw' is conv2d_nchw, not dense, matmul or batch_matmul");
}

TEST(GpuDepthwiseTemplate, SpacesOfMobilenetV2ShapesHoldAGoodFallbackAndArePruned) {
  passes::GpuLimits limits = passes::GpuLimits::cudaSm90();
  // mobilenet-v2's first depthwise layer, a stride-2 one, and its last (7x7x960).
  for (auto dag : {ops::depthwiseConv2dNCHW(1, 32, 112, 112, 3, 1, 1), ops::depthwiseConv2dNCHW(1, 144, 56, 56, 3, 2, 1),
                   ops::depthwiseConv2dNCHW(1, 960, 7, 7, 3, 1, 1)}) {
    GpuTemplateSpace t = gpuDepthwiseTemplate(dag, limits);
    printSpace(kGpuDepthwiseTemplate, dag, t);
    EXPECT_GT(t.space->size(), 1000u);
    EXPECT_LT(t.space->size(), t.unprunedSize);
    ops::GpuImageTile tile = gpuImageTileOf(t.space->get(t.fallback));
    EXPECT_GE(tile.tileThreads(), 32);
    EXPECT_LE(tile.tileThreads(), 256);
    // Blocks for every one of the 132 multiprocessors, twice over.
    EXPECT_GE(tile.f[0] * tile.y[0] * tile.x[0], 2 * 132);
    for (const auto& option : t.space->knob("tile_f").options) EXPECT_LE(option.at(1).get<int64_t>(), 64);
  }
}

TEST(GpuDepthwiseTemplate, ConfigsOverTheLimitsAreInstantiationErrors) {
  auto dag = ops::depthwiseConv2dNCHW(1, 64, 32, 32, 3, 1, 1);
  GpuTemplateSpace t = gpuDepthwiseTemplate(dag, passes::GpuLimits::cudaSm90());
  expectContains(errorOf([&] { t.instantiate(widest(t, {"tile_f", "tile_y", "tile_x"}, 1)); }), "threads per block, the device");
  expectInvalidForTheCostModel(dag, widest(t, {"tile_f", "tile_y", "tile_x"}, 1));
  expectContains(errorOf([&] { t.instantiateState(widest(t, {"tile_f", "tile_y", "tile_x"}, 2)); }),
                 "accumulators per thread would spill registers");
  // A Mali GPU's 256 threads per block: the fallback stays within them.
  passes::GpuLimits mali = passes::GpuLimits::mali();
  GpuTemplateSpace m = gpuDepthwiseTemplate(dag, mali);
  EXPECT_LE(gpuImageTileOf(m.space->get(m.fallback)).tileThreads(), mali.maxThreadsPerBlock);
  EXPECT_NO_THROW(m.instantiate(m.space->get(m.fallback)));
}

TEST(GpuDepthwiseTemplate, ConfigsMatchTheReferenceOnOpencl) {
  TESSEL_REQUIRE_OPENCL();
  EXPECT_GE(buildAndRun(depthwiseCases(), &gpuDepthwiseTemplate, 4, "opencl", true), 40);
}

TEST(GpuDepthwiseTemplate, TheGenericOpenclProfileKeepsThreadIdxZWithinWhatNvidiaDriversLaunch) {
  // The H100's OpenCL driver refused a 1 x 2 x 128 work-group (CL_INVALID_KERNEL_ARGS): a
  // kernel compiled for "opencl" without its device must launch on any OpenCL GPU.
  auto dag = ops::depthwiseConv2dNCHW(1, 128, 16, 16, 3, 1, 1);
  GpuTemplateSpace t = gpuDepthwiseTemplate(dag, passes::GpuLimits::forTarget(target::Target::parse("opencl")));
  for (const auto& option : t.space->knob("tile_f").options) EXPECT_LE(option.at(1).get<int64_t>(), 64) << option.dump();
}

TEST(GpuDepthwiseTemplate, ConfigsCompileForCudaAndRunWhereAGpuIs) { buildForCuda(depthwiseCases(), &gpuDepthwiseTemplate, 4); }

TEST(GpuDepthwiseTemplate, TuningRunLogsRecordsThatReplay) {
  TESSEL_REQUIRE_OPENCL();
  tunetest::tuneAndReplay(depthwiseCases().front().dag, kGpuDepthwiseTemplate, /*fallbackIsDefault=*/false, 5);
}

TEST(GpuDenseSmallBatchTemplate, SpacesOfTheClassifiersHoldAGoodFallbackAndArePruned) {
  passes::GpuLimits limits = passes::GpuLimits::cudaSm90();
  for (auto dag : {denseBias(1, 512, 1000), denseBias(1, 1280, 1000), denseBias(1, 2048, 1000)}) {
    GpuTemplateSpace t = gpuDenseSmallBatchTemplate(dag, limits);
    printSpace(kGpuDenseSmallBatchTemplate, dag, t);
    EXPECT_GT(t.space->size(), 100u);
    EXPECT_LT(t.space->size(), t.unprunedSize);
    // A warp per output's reduction, blocks for every multiprocessor.
    ops::GpuDenseSmallBatchTile tile = gpuDenseSmallBatchTileOf(t.space->get(t.fallback));
    EXPECT_EQ(tile.reduceThreads, 32);
    EXPECT_LE(tile.threads(), 256);
    EXPECT_GE(1000 / tile.outputThreads, 132);
    EXPECT_NO_THROW(kernelcheck::buildForGpu(schedule::replay(dag, t.instantiate(t.space->get(t.fallback))), "cuda"));
  }
}

TEST(GpuDenseSmallBatchTemplate, ConfigsOverTheLimitsAreInstantiationErrors) {
  auto dag = denseBias(1, 2048, 1000);
  GpuTemplateSpace t = gpuDenseSmallBatchTemplate(dag, passes::GpuLimits::cudaSm90());
  expectContains(errorOf([&] { t.instantiate(widest(t, {"tile_k", "tile_y"}, 1)); }), "threads per block, the device");
  expectInvalidForTheCostModel(dag, widest(t, {"tile_k", "tile_y"}, 1));
  passes::GpuLimits tiny = passes::GpuLimits::cudaSm90();
  tiny.maxSharedMemoryPerBlock = 64;
  tiny.maxDynamicSharedMemoryPerBlock = 0;
  GpuTemplateSpace small = gpuDenseSmallBatchTemplate(dag, tiny);
  expectContains(errorOf([&] { small.instantiate(small.space->get(small.fallback)); }), "bytes of shared memory per block");
  expectContains(errorOf([&] { ops::gpuDenseSmallBatch(dag, {3, 8, 0, true}); }),
                 "3 threads per output do not divide the reduction of 2048");
}

TEST(GpuDenseSmallBatchTemplate, ConfigsMatchTheReferenceOnOpencl) {
  TESSEL_REQUIRE_OPENCL();
  EXPECT_GE(buildAndRun(denseCases(), &gpuDenseSmallBatchTemplate, 8, "opencl", true), 40);
}

TEST(GpuDenseSmallBatchTemplate, ConfigsCompileForCudaAndRunWhereAGpuIs) {
  buildForCuda(denseCases(), &gpuDenseSmallBatchTemplate, 8);
}

TEST(GpuDenseSmallBatchTemplate, TuningRunLogsRecordsThatReplay) {
  TESSEL_REQUIRE_OPENCL();
  tunetest::tuneAndReplay(denseBias(1, 256, 40), kGpuDenseSmallBatchTemplate, /*fallbackIsDefault=*/false, 5);
}

TEST(GpuDenseLargeBatchTemplate, SpaceHoldsTheFallbackAndIsPruned) {
  auto dag = denseBias(64, 192, 1000);
  GpuTemplateSpace t = denseLargeBatchSpace(dag, passes::GpuLimits::cudaSm90());
  printSpace(kGpuDenseLargeBatchTemplate, dag, t);
  EXPECT_GT(t.space->size(), 1000u);
  EXPECT_LT(t.space->size(), t.unprunedSize);
  // The fallback is the default schedule's tile: here the fp32 units' (a reduction of 192 is
  // three chunks of 64: too few for tensor cores to pay), with the tensor_core knob at "none".
  ops::GpuGemmTile tile = gpuGemmTileOf(t.space->get(t.fallback));
  ops::GpuGemmTile byDefault = ops::defaultGpuGemmTile(ops::gpuGemmShapeOf(dag), 132, 1024, 32);
  EXPECT_EQ(tile.x, byDefault.x);
  EXPECT_EQ(tile.y, byDefault.y);
  EXPECT_EQ(tile.k, 32);
  EXPECT_FALSE(tile.tensorCores);
  // A larger batch takes tensor cores (fp32-accurate) by default, and the fallback follows.
  auto large = denseBias(512, 512, 1024);
  GpuTemplateSpace tc = denseLargeBatchSpace(large, passes::GpuLimits::cudaSm90());
  ops::GpuGemmTile tcTile = gpuGemmTileOf(tc.space->get(tc.fallback));
  auto tcDefault = ops::defaultGpuTensorCoreTile(ops::gpuGemmShapeOf(large), ir::WarpMmaKind::Tf32x3, 132, 1024);
  ASSERT_TRUE(tcDefault.has_value());
  EXPECT_EQ(tcTile.x, tcDefault->x);
  EXPECT_EQ(tcTile.y, tcDefault->y);
  EXPECT_EQ(tcTile.k, tcDefault->k);
  EXPECT_EQ(tcTile.tensorCores, ir::WarpMmaKind::Tf32x3);
  // A target that allows TF32 (-matmul-precision=tf32) searches one TF32 product instead.
  GpuTemplateSpace tf32 = gpuGemmTemplate(large, passes::GpuLimits::cudaSm90(), target::MatmulPrecision::Tf32, kGpuDenseLargeBatchTemplate);
  EXPECT_EQ(gpuGemmTileOf(tf32.space->get(tf32.fallback)).tensorCores, ir::WarpMmaKind::Tf32);
  EXPECT_EQ(tf32.space->size(), tc.space->size());
  // Where a device has no tensor cores the knob is not in the space.
  passes::GpuLimits withoutTensorCores = passes::GpuLimits::cudaSm90();
  withoutTensorCores.tf32TensorCores = false;
  GpuTemplateSpace fp32 = denseLargeBatchSpace(dag, withoutTensorCores);
  EXPECT_FALSE(gpuGemmTileOf(fp32.space->get(fp32.fallback)).tensorCores);
  EXPECT_EQ(fp32.space->size() * 4, t.space->size()) << "the tensor_core and lanes knobs double the space each";
  // The lanes knob: interleaved lanes or contiguous sub-tiles; a record from before the knob
  // (no value for it) holds sub-tiles.
  nlohmann::json entity = tc.space->get(tc.fallback).toJson()["entity"], older = nlohmann::json::array();
  for (const std::string lanes : {"interleaved", "sub_tile"}) {
    for (auto& knob : entity)
      if (knob[0] == "lanes") knob[2] = lanes;
    auto config = tc.space->fromEntityJson(entity);
    ASSERT_TRUE(config.has_value()) << lanes;
    EXPECT_EQ(gpuGemmTileOf(*config).interleaveLanes, lanes == "interleaved");
  }
  for (const auto& knob : entity)
    if (knob[0] != "lanes") older.push_back(knob);
  EntityMatch match = tc.space->matchEntity(older);
  ASSERT_TRUE(match.config.has_value()) << match.mismatch;
  EXPECT_EQ(match.missing, std::vector<std::string>{"lanes"});
  EXPECT_FALSE(gpuGemmTileOf(*match.config).interleaveLanes);
  // Over the limits: threads per block, shared memory (the per-thread parts are pruned to 8 x 8).
  expectContains(errorOf([&] { t.instantiate(widest(t, {"tile_x", "tile_y"}, 1)); }), "threads per block, the device");
  expectInvalidForTheCostModel(dag, widest(t, {"tile_x", "tile_y"}, 1));
  EXPECT_NO_THROW(t.instantiate(widest(t, {"tile_x", "tile_y"}, 2)));
  passes::GpuLimits tiny = passes::GpuLimits::cudaSm90();
  tiny.maxSharedMemoryPerBlock = 256;
  tiny.maxDynamicSharedMemoryPerBlock = 0;
  GpuTemplateSpace small = denseLargeBatchSpace(dag, tiny);
  expectContains(errorOf([&] { small.instantiateState(small.space->get(small.fallback)); }), "bytes of shared memory per block");
}

TEST(GpuDenseLargeBatchTemplate, ConfigsMatchTheReferenceOnOpencl) {
  TESSEL_REQUIRE_OPENCL();
  EXPECT_GE(buildAndRun(largeBatchCases(), &denseLargeBatchSpace, 10, "opencl", true), 30);
}

TEST(GpuDenseLargeBatchTemplate, ConfigsCompileForCudaAndRunWhereAGpuIs) {
  buildForCuda(largeBatchCases(), &denseLargeBatchSpace, 10);
}

TEST(GpuBatchMatmulTemplate, ConfigsMatchTheReferenceOnOpencl) {
  TESSEL_REQUIRE_OPENCL();
  EXPECT_GE(buildAndRun(batchMatmulCases(), &batchMatmulSpace, 10, "opencl", true), 30);
}

TEST(GpuBatchMatmulTemplate, ConfigsCompileForCudaAndRunWhereAGpuIs) { buildForCuda(batchMatmulCases(), &batchMatmulSpace, 10); }

TEST(GpuBatchMatmulTemplate, TuningRunLogsRecordsThatReplay) {
  TESSEL_REQUIRE_OPENCL();
  tunetest::tuneAndReplay(ops::projection(1, 20, 16, 24, true), kGpuBatchMatmulTemplate, /*fallbackIsDefault=*/true, 5);
}

TEST(GpuDenseLargeBatchTemplate, TuningRunLogsRecordsThatReplay) {
  TESSEL_REQUIRE_OPENCL();
  tunetest::tuneAndReplay(denseBias(32, 48, 40), kGpuDenseLargeBatchTemplate, /*fallbackIsDefault=*/false, 5);
}
