// The GPU conv templates (tune/autotvm/GpuConvTemplates.h: conv2d_nchw.cuda and
// conv2d_nhwc.cuda): their spaces on the zoo's conv shapes,
// and the fallback plus random configs of each, lowered for the GPU, built for OpenCL and run on
// the first OpenCL device (PoCL here) against the reference; the same kernels compiled for
// CUDA by NVRTC, and run where a GPU is (`make test-gpu`).
#include <gtest/gtest.h>

#include <random>

#include "common/ErrorText.h"
#include "common/GpuKernelCheck.h"
#include "common/GpuRequire.h"
#include "ops/Examples.h"
#include "runtime/CudaDevice.h"
#include "runtime/OpenclDevice.h"
#include "tune/GpuTemplateTestSupport.h"
#include "tune/autotvm/GpuConvTemplates.h"

using namespace tessel;
using namespace tessel::tune::autotvm;
using tessel::testsupport::errorOf;
using tessel::testsupport::expectContains;

namespace {

struct ConvCase {
  std::string name;
  te::ComputeDAG dag;
};

/// Small versions of the zoo's conv kinds: 3x3 stride 1 and 2, 1x1 (resnet-50's bottlenecks),
/// the 7x7 stem over 3 channels, and a fused bias + ReLU epilogue, in NCHW and NHWC; odd
/// extents leave ragged copies of the shared windows.
std::vector<ConvCase> convCases() {
  return {
      {"conv3x3", ops::conv2dNCHW(1, 8, 14, 14, 16, 3, 3, 1, 1)},
      {"conv3x3_stride2", ops::conv2dNCHW(1, 6, 15, 15, 12, 3, 3, 2, 1)},
      {"conv1x1", ops::conv2dNCHW(1, 16, 7, 7, 24, 1, 1, 1, 0)},
      {"stem7x7", ops::conv2dNCHW(1, 3, 20, 20, 8, 7, 7, 2, 3)},
      {"conv_bias_relu", ops::conv2dBiasReluNCHW(1, 8, 10, 10, 16, 3, 3, 1, 1)},
      {"nhwc_conv3x3", ops::conv2dNHWC(1, 8, 14, 14, 16, 3, 3, 1, 1)},
      {"nhwc_conv3x3_stride2", ops::conv2dNHWC(1, 6, 15, 15, 12, 3, 3, 2, 1)},
      {"nhwc_conv1x1", ops::conv2dNHWC(1, 16, 7, 7, 24, 1, 1, 1, 0)},
      {"nhwc_conv_bias_relu", ops::conv2dBiasReluNHWC(1, 8, 10, 10, 16, 3, 3, 1, 1)},
  };
}

/// The fallback, the fallback split over 2 and 4 groups of threads (where the channels allow),
/// and `randomCount` random configs of the case's space that instantiate.
std::vector<ConfigEntity> configsOf(const GpuTemplateSpace& t, int randomCount, uint64_t seed) {
  ConfigEntity fallback = t.space->get(t.fallback);
  std::vector<ConfigEntity> configs = {fallback};
  int splitKnob = t.space->knobIndex("split_rc");
  for (int64_t groups : {2, 4}) {
    auto option = t.space->optionIndex("split_rc", groups);
    if (!option) continue;
    std::vector<size_t> choices = fallback.choices();
    choices[size_t(splitKnob)] = *option;
    if (tunetest::instantiates(t, t.space->fromChoices(choices))) configs.push_back(t.space->fromChoices(choices));
  }
  std::mt19937_64 rng(seed);
  for (size_t wanted = configs.size() + size_t(randomCount), tries = 0; configs.size() < wanted && tries < 1000; ++tries) {
    ConfigEntity c = t.space->get(rng() % t.space->size());
    if (tunetest::instantiates(t, c)) configs.push_back(c);
  }
  return configs;
}

/// Builds every config of every case for `target`; runs them where `run`. The test's trace
/// names the case and the config.
void buildAndRun(const std::string& targetText, bool run) {
  const target::Target target = target::Target::parse(targetText);
  passes::GpuLimits limits = passes::GpuLimits::forTarget(target);
  uint64_t seed = 3;
  int built = 0, splitK = 0, nhwc = 0;
  for (auto& c : convCases()) {
    GpuTemplateSpace t = gpuConv2dTemplate(c.dag, limits);
    for (const ConfigEntity& config : configsOf(t, 3, seed++)) {
      SCOPED_TRACE(c.name + " on " + targetText + ", config " + config.str());
      auto steps = t.instantiate(config);
      codegen::GpuBinary binary;
      try {
        binary = kernelcheck::buildForGpu(schedule::replay(c.dag, steps), targetText, c.name);
      } catch (const Error& e) {
        // The shared windows of a config may exceed the device's shared memory: that and only
        // that is refused (an error record in tuning).
        expectContains(e.what(), "shared memory");
        continue;
      }
      ++built;
      splitK += gpuConv2dTileOf(config).splitK > 1;
      nhwc += ops::gpuConv2dShapeOf(c.dag).nhwc();
      // The template's count of shared memory (what it refuses configs by) is the kernel's.
      EXPECT_EQ(ops::sharedMemoryBytes(t.instantiateState(config)),
                binary.source.manifest["kernels"][0]["launch"]["shared_bytes"].get<int64_t>());
      // The block's threads wait for the shared windows before reading them.
      expectContains(binary.source.code, target.kind == target::TargetKind::Cuda ? "__syncthreads()" : "barrier(CLK_LOCAL_MEM_FENCE)");
      if (!run) continue;
      auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
      auto data = kernelcheck::makeReferenceData(c.dag, seed++);
      EXPECT_LT(kernelcheck::runGpuAndCompare(module.kernel(c.name), data), 1e-4) << binary.source.code;
    }
  }
  // Most configs build; the split-K ones and the NHWC ones among them.
  EXPECT_GE(built, 27);
  EXPECT_GE(splitK, 9);
  EXPECT_GE(nhwc, 12);
}

}  // namespace

TEST(GpuConv2dTemplate, SpacesOfTheZooShapesHoldTheFallbackAndArePruned) {
  // resnet-18's 56x56x64 3x3 conv, its stride-2 128-channel one and a 7x7x512 one on an H100,
  // in both layouts.
  passes::GpuLimits limits = passes::GpuLimits::cudaSm90();
  for (auto dag : {ops::conv2dNCHW(1, 64, 56, 56, 64, 3, 3, 1, 1), ops::conv2dNCHW(1, 64, 56, 56, 128, 3, 3, 2, 1),
                   ops::conv2dNCHW(1, 512, 7, 7, 512, 3, 3, 1, 1), ops::conv2dNHWC(1, 64, 56, 56, 64, 3, 3, 1, 1),
                   ops::conv2dNHWC(1, 64, 56, 56, 128, 3, 3, 2, 1), ops::conv2dNHWC(1, 512, 7, 7, 512, 3, 3, 1, 1)}) {
    ops::GpuConv2dShape shape = ops::gpuConv2dShapeOf(dag);
    ASSERT_EQ(gpuConv2dTemplateApplies(dag), !shape.nhwc());
    ASSERT_EQ(gpuConv2dNhwcTemplateApplies(dag), shape.nhwc());
    GpuTemplateSpace t = gpuConv2dTemplate(dag, limits);
    std::printf("%s: %llu configs (%llu before pruning)\n", shape.nhwc() ? kGpuConv2dNhwcTemplate : kGpuConv2dTemplate,
                (unsigned long long)t.space->size(), (unsigned long long)t.unprunedSize);
    EXPECT_GT(t.space->size(), 1000u);
    EXPECT_LT(t.space->size(), t.unprunedSize);
    // The fallback builds within the device's limits and gives the 132 multiprocessors 256
    // threads each; on the small image that takes groups of threads over the input channels.
    ops::GpuConv2dTile tile = gpuConv2dTileOf(t.space->get(t.fallback));
    EXPECT_GE(tile.threads(), 32);
    EXPECT_LE(tile.threads(), limits.maxThreadsPerBlock);
    EXPECT_NO_THROW(kernelcheck::buildForGpu(schedule::replay(dag, t.instantiate(t.space->get(t.fallback))), "cuda"));
    int64_t blocks = tile.f[0] * tile.y[0] * tile.x[0];
    EXPECT_GE(blocks * tile.threads(), 132 * 256);
    if (shape.height == 7) {
      EXPECT_GT(tile.splitK, 1);
    }
    // Every option respects the per-dimension thread limits (threadIdx.z: 64): the channels'
    // threads are on z in NCHW, the rows' in NHWC, where the channels are on x, a warp wide.
    for (const auto& option : t.space->knob(shape.nhwc() ? "tile_y" : "tile_f").options)
      EXPECT_LE(option.at(1).get<int64_t>(), 64);
    if (shape.nhwc()) {
      EXPECT_GE(tile.f[1], 8);
    }
  }
}

TEST(GpuConv2dTemplate, TheFallbackFitsAMaliGpusSharedMemory) {
  // 32 KiB of shared memory and 256 threads: the fallback's chunk of channels shrinks to fit.
  passes::GpuLimits mali = passes::GpuLimits::mali();
  for (auto dag : {ops::conv2dNCHW(1, 64, 56, 56, 64, 3, 3, 1, 1), ops::conv2dNCHW(1, 256, 14, 14, 256, 3, 3, 1, 1)}) {
    GpuTemplateSpace t = gpuConv2dTemplate(dag, mali);
    ops::GpuConv2dSchedule s = ops::gpuTiledConv2d(dag, gpuConv2dTileOf(t.space->get(t.fallback)));
    EXPECT_LE(ops::sharedMemoryBytes(s.state), mali.maxSharedMemoryPerBlock);
    EXPECT_NO_THROW(t.instantiate(t.space->get(t.fallback)));
  }
}

TEST(GpuConv2dTemplate, RefusesWhatItCannotTileWithTheReason) {
  EXPECT_FALSE(gpuConv2dTemplateApplies(ops::conv2dNHWC(1, 8, 8, 8, 8, 3, 3, 1, 1)));
  EXPECT_FALSE(gpuConv2dNhwcTemplateApplies(ops::conv2dNCHW(1, 8, 8, 8, 8, 3, 3, 1, 1)));
  EXPECT_FALSE(gpuConv2dTemplateApplies(ops::matmul(8, 8, 8)));
  EXPECT_FALSE(gpuConv2dNhwcTemplateApplies(ops::matmul(8, 8, 8)));
  expectContains(errorOf([] { gpuConv2dTemplate(ops::depthwiseConv2dNCHW(1, 8, 8, 8, 3, 1, 1), passes::GpuLimits::cudaSm90()); }),
                 "not a direct NCHW or NHWC conv2d");
  expectContains(errorOf([] {
                   makeGpuConv2dNhwcTask("c", ops::conv2dNCHW(1, 8, 8, 8, 8, 3, 3, 1, 1), target::Target::parse("cuda"), passes::GpuLimits::cudaSm90());
                 }),
                 "conv2d_nhwc.cuda applies to direct NHWC convolutions");
  // A config over the device's threads per block is an instantiation error naming the count.
  auto dag = ops::conv2dNCHW(1, 8, 32, 32, 64, 3, 3, 1, 1);
  GpuTemplateSpace t = gpuConv2dTemplate(dag, passes::GpuLimits::cudaSm90());
  std::vector<size_t> choices(t.space->knobs().size(), 0);
  for (size_t k = 0; k < 3; ++k) {
    const auto& options = t.space->knobs()[k].options;
    size_t widest = 0;
    for (size_t i = 0; i < options.size(); ++i)
      if (options[i].at(1).get<int64_t>() > options[widest].at(1).get<int64_t>()) widest = i;
    choices[k] = widest;  // 64 x 32 x 32 threads
  }
  expectContains(errorOf([&] { t.instantiate(t.space->fromChoices(choices)); }), "threads per block");
  // Windows over the shared memory: instantiation errors too, before any build (here a device
  // with 1 KiB of it, which the fallback's windows exceed).
  passes::GpuLimits tiny = passes::GpuLimits::cudaSm90();
  tiny.maxSharedMemoryPerBlock = 1024;
  tiny.maxDynamicSharedMemoryPerBlock = 0;
  GpuTemplateSpace small = gpuConv2dTemplate(dag, tiny);
  expectContains(errorOf([&] { small.instantiate(small.space->get(small.fallback)); }), "bytes of shared memory per block");
  expectContains(errorOf([&] { small.instantiateState(small.space->get(small.fallback)); }), "bytes of shared memory per block");
  ops::GpuConv2dTile bad = gpuConv2dTileOf(t.space->get(t.fallback));
  bad.rc = 5;
  expectContains(errorOf([&] { ops::gpuTiledConv2dSchedule(dag, bad); }), "do not divide the 8 channels");
}

TEST(GpuConv2dTemplate, ConfigsMatchTheReferenceOnOpencl) {
  TESSEL_REQUIRE_OPENCL();
  buildAndRun("opencl", true);
}

TEST(GpuConv2dTemplate, ConfigsCompileForCudaAndRunWhereAGpuIs) {
  std::string why = kernelcheck::cudaUnavailableReason();
  // NVRTC's fast-compile mode (-opt-level=0): the configs' code and values are checked, not their speed.
  buildAndRun("cuda -opt-level=0", why.empty());
  if (!why.empty()) {
    if (testsupport::deviceRequired("TESSEL_REQUIRE_CUDA")) FAIL() << "TESSEL_REQUIRE_CUDA=1: " << why;
    GTEST_SKIP() << "compiled with NVRTC, not run: " << why;
  }
}
