// The Winograd GPU template (tune/autotvm/GpuWinogradTemplate.h) on the NCHW Winograd form
// (ops/WinogradNchw.h) and its one-kernel tiles (ops/GpuWinogradTiles.h): the table picks it
// for the zoo's Winograd functions and tunes them with it alone; its spaces with their sizes;
// the fallback is the default GPU schedule; refusals and configs over the device's limits as
// instantiation errors; the fallback plus random configs on resnet-18 and resnet-50 shapes (with
// their batch-norm, ReLU and residual epilogues) built for OpenCL and run on the first OpenCL
// device (PoCL here) against the reference, and compiled for CUDA by NVRTC (run where a GPU
// is); full-size resnet layers in F(2x2) and F(4x4) against the direct convolution; a few
// trials through the tuning loop whose log replays.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <random>
#include <set>

#include "common/ErrorText.h"
#include "common/GpuKernelCheck.h"
#include "common/GpuRequire.h"
#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "graph/passes/PassManager.h"
#include "ops/Examples.h"
#include "ops/GpuSchedules.h"
#include "ops/GpuWinogradTiles.h"
#include "ops/OpTraits.h"
#include "ops/Schedules.h"
#include "ops/Winograd.h"
#include "ops/WinogradNchw.h"
#include "runtime/CudaDevice.h"
#include "runtime/OpenclDevice.h"
#include "support/TempDir.h"
#include "tune/LocalBuilder.h"
#include "tune/LocalRunner.h"
#include "tune/Record.h"
#include "tune/RecordLog.h"
#include "tune/autotvm/BasicTuners.h"
#include "tune/autotvm/FeatureCache.h"
#include "tune/autotvm/GpuTemplates.h"
#include "tune/autotvm/GpuWinogradTemplate.h"
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

/// The bare NCHW Winograd convolution of data [n, c, h, w] with a transformed weight.
te::ComputeDAG winogradNchw(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t pad, int m) {
  auto data = te::placeholder({n, c, h, w}, DataType::float32(), "data");
  auto weight = te::placeholder({m + 2, m + 2, c, k}, DataType::float32(), "weight");
  ops::Conv2dAttrs attrs;
  attrs.layout = ops::Layout::NCHW;
  attrs.padding = {pad, pad, pad, pad};
  return te::ComputeDAG({ops::conv2dWinogradNCHW(data, weight, attrs, m)}, {data, weight});
}

bool isWinograd(const te::ComputeDAG& dag) {
  auto anchor = ops::findAnchorStage(dag);
  return anchor && ops::traitsOf(*dag.op(*anchor)).kind == ops::OpKind::WinogradNchwGemm;
}

/// The Winograd functions of a zoo network as a GPU build with `--winograd m` extracts them
/// (NCHW, every stride-1 3x3 convolution with its epilogue: batch norm folded into a bias,
/// ReLU, the residual add).
std::vector<Case> zooWinogradCases(const std::string& model, int64_t imageSize, int m) {
  graph::ModelOptions zoo;
  zoo.imageSize = imageSize;
  zoo.classes = 10;
  graph::OptimizeOptions passes;
  passes.desiredLayout = ops::Layout::NCHW;
  passes.fuseSeparable = false;
  graph::Graph g = graph::optimizeGraph(graph::buildModel(model, zoo), passes);
  g = graph::applyWinograd(g, [m](const graph::Graph&, int) { return m; }, {}, ops::Layout::NCHW);
  std::vector<Case> cases;
  std::set<std::string> seen;
  for (const auto& t : graph::extractTasks(g))
    if (isWinograd(t.dag) && seen.insert(t.workloadKey).second)
      cases.push_back({model + " F(" + std::to_string(m) + "x" + std::to_string(m) + ") " + t.name, t.dag});
  return cases;
}

/// resnet-18 at 32x32 in F(2x2) (every 3x3 layer's function: 8x8 down to 1x1 images, with and
/// without the residual add), resnet-50's at 48x48 in F(4x4) (12x12 down to 2x2 images: ragged
/// last tiles), and bare convolutions with odd extents, two images and no padding.
std::vector<Case> templateCases() {
  std::vector<Case> cases = zooWinogradCases("resnet-18", 32, 2);
  for (auto& c : zooWinogradCases("resnet-50", 48, 4)) cases.push_back(std::move(c));
  cases.push_back({"bare 9x11 F(4x4)", winogradNchw(1, 6, 9, 11, 10, 1, 4)});
  cases.push_back({"bare 7x7 unpadded F(2x2)", winogradNchw(2, 5, 7, 7, 3, 0, 2)});
  return cases;
}

/// A seeded random vector in [-1, 1).
std::vector<float> randomValues(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

/// The reference data of a Winograd function with inputs as a network gives it: the transformed
/// weight is the transform of a 3x3 filter (an arbitrary U's outputs would be small differences
/// of large sums, all rounding error), the other inputs in [-1, 1).
kernelcheck::ReferenceData winogradReferenceData(const te::ComputeDAG& dag, uint32_t seed) {
  ops::GpuWinogradShape shape = ops::gpuWinogradShapeOf(dag);
  kernelcheck::ReferenceData data;
  data.dag = dag;
  data.integerOutputs = false;
  for (const auto& name : dag.inputNames()) {
    int64_t count = 1;
    for (int64_t e : dag.op(name)->shape) count *= e;
    std::vector<float> values = randomValues(size_t(count), seed++);
    if (name == shape.weight) {
      auto filter = randomValues(size_t(9 * shape.inChannels * shape.outChannels), seed++);
      values = ops::winogradWeightTransform(filter, shape.inChannels, shape.outChannels, shape.m, ops::Layout::NCHW);
    }
    data.inputs[name] = std::vector<double>(values.begin(), values.end());
  }
  auto all = te::evaluateReference(dag, data.inputs);
  for (const auto& name : dag.outputNames()) data.reference[name] = all.at(name);
  return data;
}

/// Builds the fallback and random configs of every case for `target`, runs them where `run`.
/// Returns the number built.
int buildAndRun(const std::string& targetText, bool run, int randomCount) {
  const target::Target target = target::Target::parse(targetText);
  passes::GpuLimits limits = passes::GpuLimits::forTarget(target);
  uint32_t seed = 5;
  int built = 0;
  for (const auto& c : templateCases()) {
    GpuTemplateSpace t = gpuWinogradTemplate(c.dag, limits);
    for (const ConfigEntity& config : tunetest::fallbackAndRandomConfigs(t, randomCount, seed++)) {
      SCOPED_TRACE(c.name + " on " + targetText + ", config " + config.str());
      schedule::State state = schedule::replay(c.dag, t.instantiate(config));
      // The state the template hands the cost model is the one its steps replay to.
      EXPECT_EQ(state.toString(), t.instantiateState(config).toString());
      codegen::GpuBinary binary = kernelcheck::buildForGpu(state, targetText, "winograd");
      ++built;
      // The template's count of shared memory (what it refuses configs by) is the kernel's.
      EXPECT_EQ(ops::gpuWinogradSharedBytes(ops::gpuWinogradShapeOf(c.dag), gpuWinogradTileOf(config)),
                binary.source.manifest["kernels"][0]["launch"]["shared_bytes"].get<int64_t>());
      if (!run) continue;
      try {
        auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
        auto data = winogradReferenceData(c.dag, seed += 10);
        // The measure divides each element's error by its magnitude, down to 1e-3 of the
        // largest: an output near that floor (the ReLU's and the signed sums' small ones)
        // carries the float32 sums' few ulps of the largest, up to 4e-4 of itself here in
        // F(2x2) and 1.4e-3 in F(4x4), whose transforms scale values by up to 10 in and 19 out
        // per dimension; a wrong index or a missed barrier is an error of order 1.
        double tolerance = ops::gpuWinogradShapeOf(c.dag).m == 2 ? 1e-3 : 5e-3;
        EXPECT_LT(kernelcheck::runGpuAndCompare(module.kernel("winograd"), data), tolerance) << binary.source.code;
      } catch (const Error& e) {
        ADD_FAILURE() << e.what() << "\nlaunch " << binary.manifestText() << "\n" << binary.source.code;
      }
    }
  }
  return built;
}

/// A config whose split knobs `knobs` all take their option with the largest part `part`
/// (of tile_b [threads, per thread] and the [blocks, threads, per thread] of the others: 1 is
/// the threads, the last the part per thread), the other knobs the fallback's.
ConfigEntity widest(const GpuTemplateSpace& t, const std::vector<std::pair<std::string, size_t>>& knobs) {
  std::vector<size_t> choices = t.space->get(t.fallback).choices();
  for (const auto& [name, part] : knobs) {
    const auto& options = t.space->knob(name).options;
    size_t best = 0;
    for (size_t i = 0; i < options.size(); ++i)
      if (options[i].at(part).get<int64_t>() > options[best].at(part).get<int64_t>()) best = i;
    choices[size_t(t.space->knobIndex(name))] = best;
  }
  return t.space->fromChoices(choices);
}

}  // namespace

TEST(GpuWinogradTemplate, TheTablePicksItForTheZoosWinogradFunctionsAndTunesItAlone) {
  auto cases = zooWinogradCases("resnet-18", 32, 4);
  ASSERT_GE(cases.size(), 8u);  // layers 1 to 4, each with and without the residual add
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(gpuTemplateFor(c.dag).value_or(""), kGpuWinogradTemplate);
    // Its fallback is the default schedule: gpu_default would tune nothing more.
    EXPECT_EQ(gpuTemplatesTuned(c.dag), std::vector<std::string>{kGpuWinogradTemplate});
    auto task = makeGpuTuningTask("task", c.dag, target::Target::parse("cuda"), passes::GpuLimits::cudaSm90());
    EXPECT_EQ(task->templateName, kGpuWinogradTemplate);
    EXPECT_TRUE(task->fallbackIsDefaultSchedule);
  }
  // The direct convolution and the CPU's NHWC Winograd form are other templates' functions.
  EXPECT_FALSE(gpuWinogradTemplateApplies(ops::conv2dNCHW(1, 8, 8, 8, 8, 3, 3, 1, 1)));
  EXPECT_FALSE(gpuWinogradTemplateApplies(ops::conv2dWinogradNHWC(1, 8, 8, 8, 8, 1, 4)));
  EXPECT_EQ(gpuTemplatesTuned(ops::conv2dNCHW(1, 8, 8, 8, 8, 3, 3, 1, 1)), (std::vector<std::string>{"conv2d_nchw.cuda", "gpu_default"}));
  expectContains(errorOf([] { gpuWinogradTemplate(ops::conv2dNCHW(1, 8, 8, 8, 8, 3, 3, 1, 1), passes::GpuLimits::cudaSm90()); }),
                 "not the NCHW Winograd GEMM");
}

TEST(GpuWinogradTemplate, SpacesOfResnetShapesHoldTheDefaultScheduleAsFallbackAndArePruned) {
  passes::GpuLimits h100 = passes::GpuLimits::cudaSm90();
  // resnet-18's 3x3 layers as a GPU build transforms them: F(4x4) on 56x56 and 28x28, F(2x2) on
  // 14x14 and 7x7 (ops::gpuWinogradTileSize).
  for (auto [c, size] : {std::pair{64, 56}, {128, 28}, {256, 14}, {512, 7}}) {
    int m = ops::gpuWinogradTileSize(size, size);
    EXPECT_EQ(m, size >= 28 ? 4 : 2);
    auto dag = winogradNchw(1, c, size, size, c, 1, m);
    GpuTemplateSpace t = gpuWinogradTemplate(dag, h100);
    std::printf("%s F(%dx%d) %dx%dx%d: %llu configs (%llu before pruning)\n", kGpuWinogradTemplate, m, m, size, size, c,
                (unsigned long long)t.space->size(), (unsigned long long)t.unprunedSize);
    EXPECT_GT(t.space->size(), 1000u);
    EXPECT_LT(t.space->size(), t.unprunedSize);
    // The fallback is the default GPU schedule for the device, within its limits.
    ConfigEntity fallback = t.space->get(t.fallback);
    ops::GpuWinogradTile tile = gpuWinogradTileOf(fallback);
    EXPECT_EQ(schedule::stepsToJson(t.instantiate(fallback)), schedule::stepsToJson(ops::defaultGpuSchedule(dag, ops::gpuScheduleOptionsFor(h100, target::MatmulPrecision::Fp32))));
    EXPECT_GE(tile.threads(), 32);
    EXPECT_LE(tile.threads(), h100.maxThreadsPerBlock);
    EXPECT_LE(tile.accumulators(), kMaxAccumulatorsPerThread);
    EXPECT_LE(ops::gpuWinogradSharedBytes(ops::gpuWinogradShapeOf(dag), tile), h100.maxSharedMemoryPerBlock);
    EXPECT_NO_THROW(kernelcheck::buildForGpu(schedule::replay(dag, t.instantiate(fallback)), "cuda"));
    // Every per-thread part of the transform points is a box of M.
    for (const auto& option : t.space->knob("tile_b").options) EXPECT_TRUE(ops::gpuWinogradPointsAreABox(option.at(1).get<int64_t>(), m + 2));
  }
  // A Mali GPU's 256 threads and 32 KiB of shared memory: the fallback shrinks to fit them.
  passes::GpuLimits mali = passes::GpuLimits::mali();
  auto dag = winogradNchw(1, 256, 14, 14, 256, 1, 4);
  GpuTemplateSpace t = gpuWinogradTemplate(dag, mali);
  ops::GpuWinogradTile tile = gpuWinogradTileOf(t.space->get(t.fallback));
  EXPECT_LE(tile.threads(), mali.maxThreadsPerBlock);
  EXPECT_LE(ops::gpuWinogradSharedBytes(ops::gpuWinogradShapeOf(dag), tile), mali.maxSharedMemoryPerBlock);
  EXPECT_NO_THROW(t.instantiate(t.space->get(t.fallback)));
}

TEST(GpuWinogradTemplate, ConfigsOverTheLimitsAndTilesThatDoNotFitAreErrorsWithTheirReason) {
  auto dag = winogradNchw(1, 64, 28, 28, 64, 1, 4);
  GpuTemplateSpace t = gpuWinogradTemplate(dag, passes::GpuLimits::cudaSm90());
  expectContains(errorOf([&] { t.instantiate(widest(t, {{"tile_f", 1}, {"tile_y", 1}, {"tile_x", 1}})); }), "threads per block, the device");
  expectContains(errorOf([&] { t.instantiateState(widest(t, {{"tile_b", 1}, {"tile_f", 2}})); }), "accumulators per thread would spill registers");
  // Over the shared memory: an instantiation error too, before any build.
  passes::GpuLimits tiny = passes::GpuLimits::cudaSm90();
  tiny.maxSharedMemoryPerBlock = 2048;
  tiny.maxDynamicSharedMemoryPerBlock = 0;
  GpuTemplateSpace small = gpuWinogradTemplate(dag, tiny);
  expectContains(errorOf([&] { small.instantiate(widest(small, {{"tile_f", 1}})); }), "bytes of shared memory per block");
  // The cost model marks such a config invalid and never proposes it.
  auto task = makeGpuTuningTask("task", dag, target::Target::parse("cuda"), passes::GpuLimits::cudaSm90());
  FeatureCache cache(task, FeatureType::Itervar, 1);
  EXPECT_FALSE(cache.valid(widest(t, {{"tile_f", 1}, {"tile_y", 1}, {"tile_x", 1}}).index()));
  EXPECT_TRUE(cache.valid(task->fallbackIndex));
  // The schedule's own checks name the part that does not fit.
  ops::GpuWinogradTile tile = gpuWinogradTileOf(t.space->get(t.fallback));
  ops::GpuWinogradTile points = tile;
  points.b = {9, 4};  // 4 of alpha = 6 points: neither part of a row nor whole rows
  expectContains(errorOf([&] { ops::gpuTiledWinograd(dag, points); }), "tile_b [9, 4] does not share out the 36 transform points");
  ops::GpuWinogradTile chunk = tile;
  chunk.rc = 5;
  expectContains(errorOf([&] { ops::gpuTiledWinograd(dag, chunk); }), "chunks of 5 input channels do not divide the 64 channels");
  ops::GpuWinogradTile cover = tile;
  cover.y = {1, 1, 1};
  expectContains(errorOf([&] { ops::gpuTiledWinograd(dag, cover); }), "tile_y [1, 1, 1] does not cover the extent 7");
}

TEST(GpuWinogradTemplate, ConfigsMatchTheReferenceOnOpencl) {
  TESSEL_REQUIRE_OPENCL();
  EXPECT_GE(buildAndRun("opencl", true, 1), 20);
}

TEST(GpuWinogradTemplate, ConfigsCompileForCudaAndRunWhereAGpuIs) {
  std::string why = kernelcheck::cudaUnavailableReason();
  // NVRTC's fast-compile mode (-opt-level=0): the configs' code and values are checked, not their speed.
  EXPECT_GE(buildAndRun("cuda -opt-level=0", why.empty(), 1), 20);
  if (!why.empty()) {
    if (testsupport::deviceRequired("TESSEL_REQUIRE_CUDA")) FAIL() << "TESSEL_REQUIRE_CUDA=1: " << why;
    GTEST_SKIP() << "compiled with NVRTC, not run: " << why;
  }
}

// Full-size resnet layers with real weights transformed as a build folds them (OIHW, in C++):
// the float32 kernel's Winograd error against the direct convolution computed in doubles,
// within 1e-3 of the output's magnitude, F(4x4) and F(2x2) each where GPU builds use it.
TEST(GpuWinogradNumerics, FullSizeResnetLayersOnOpenclWithinOneThousandthOfTheDirectConvolution) {
  TESSEL_REQUIRE_OPENCL();
  struct Layer {
    int64_t channels, size;
    int m;
  };
  passes::GpuLimits limits = passes::GpuLimits::forTarget(target::Target::parse("opencl"));
  for (Layer l : {Layer{64, 56, 4}, Layer{128, 28, 4}, Layer{256, 14, 2}, Layer{512, 7, 2}, Layer{512, 7, 4}}) {
    SCOPED_TRACE(fmt::format("F({0}x{0}) {1}x{1}x{2}", l.m, l.size, l.channels));
    int64_t c = l.channels, k = l.channels, h = l.size, w = l.size;
    auto dag = winogradNchw(1, c, h, w, k, 1, l.m);
    auto state = schedule::replay(dag, ops::defaultGpuSchedule(dag, ops::gpuScheduleOptionsFor(limits, target::MatmulPrecision::Fp32)));
    auto binary = kernelcheck::buildForGpu(state, "opencl", "layer");
    auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
    auto x = randomValues(size_t(c * h * w), uint32_t(l.size));
    auto g = randomValues(size_t(k * c * 9), uint32_t(l.channels));  // OIHW
    auto u = ops::winogradWeightTransform(g, c, k, l.m, ops::Layout::NCHW);
    runtime::Device device{runtime::DeviceKind::OpenCL, 0};
    auto data = runtime::Tensor::empty({1, c, h, w}, DataType::float32());
    auto weight = runtime::Tensor::empty({l.m + 2, l.m + 2, c, k}, DataType::float32());
    std::copy(x.begin(), x.end(), data.dataAs<float>());
    std::copy(u.begin(), u.end(), weight.dataAs<float>());
    auto out = runtime::Tensor::empty({1, k, h, w}, DataType::float32(), device);
    module.kernel("layer").call({data.to(device), weight.to(device), out});
    auto got = out.to(runtime::Device::cpu());
    double scale = 0, worst = 0;
    for (int64_t o = 0; o < k; o += 7)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t xx = 0; xx < w; ++xx) {
          double want = 0;
          for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t ry = 0; ry < 3; ++ry)
              for (int64_t rx = 0; rx < 3; ++rx) {
                int64_t iy = y + ry - 1, ix = xx + rx - 1;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                want += double(x[size_t((ci * h + iy) * w + ix)]) * g[size_t(((o * c + ci) * 3 + ry) * 3 + rx)];
              }
          scale = std::max(scale, std::fabs(want));
          worst = std::max(worst, std::fabs(double(got.dataAs<float>()[(o * h + y) * w + xx]) - want));
        }
    std::printf("F(%dx%d) %lldx%lldx%lld: %.3g of the output's magnitude\n", l.m, l.m, (long long)h, (long long)w, (long long)c,
                worst / scale);
    EXPECT_LT(worst / scale, 1e-3) << "worst absolute error " << worst << " at output magnitude " << scale;
  }
}

TEST(GpuWinogradTemplate, TrialsThroughTheTuningLoopAreLoggedAndReplay) {
  TESSEL_REQUIRE_OPENCL();
  // The template's fallback is the default GPU schedule's rule 6 (one task, no gpu_default beside it).
  tunetest::tuneAndReplay(zooWinogradCases("resnet-18", 32, 2).at(1).dag, kGpuWinogradTemplate, /*fallbackIsDefault=*/true, 7);
}
