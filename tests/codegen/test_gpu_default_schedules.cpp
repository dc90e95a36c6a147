// The default GPU schedule (ops/GpuSchedules.h), one operator class at a time: each example
// DAG gets its steps, is lowered for the GPU (verified against the target's limits), built for
// OpenCL and run on the first OpenCL device (PoCL here), checked against the reference; the
// same schedules are compiled for CUDA by NVRTC (run where a GPU is: `make test-gpu`). Then the
// reductions the rule splits across threads (few outputs, long reductions), the same way.
#include <gtest/gtest.h>

#include "common/ErrorText.h"
#include "common/GpuKernelCheck.h"
#include "common/GpuRequire.h"
#include "codegen/CSource.h"
#include "passes/Lower.h"
#include <cstdio>
#include <map>
#include "ops/Dense.h"
#include "ops/Elementwise.h"
#include "ops/Examples.h"
#include "ops/GpuDenseTiles.h"
#include "ops/LayerNorm.h"
#include "ops/GpuSchedules.h"
#include "ops/Pooling.h"
#include "ops/Transform.h"
#include "runtime/CudaDevice.h"
#include "runtime/OpenclDevice.h"

using namespace tessel;
using tessel::testsupport::errorOf;
using tessel::testsupport::expectContains;

namespace {

struct Case {
  std::string name;
  te::ComputeDAG dag;
};

te::ComputeDAG globalAvgPoolNCHW() {
  te::Tensor x = te::placeholder({1, 24, 5, 5}, DataType::float32(), "x");
  return te::ComputeDAG({ops::globalAvgPool2d(x, ops::Layout::NCHW)});
}

te::ComputeDAG concatenation() {
  te::Tensor a = te::placeholder({1, 6, 4, 4}, DataType::float32(), "a");
  te::Tensor b = te::placeholder({1, 10, 4, 4}, DataType::float32(), "b");
  return te::ComputeDAG({ops::concatenate({a, b}, 1)});
}

/// One case per operator class of the zoo networks; odd extents leave partial thread blocks.
std::vector<Case> cases() {
  return {
      {"conv2d_nchw", ops::conv2dNCHW(1, 5, 9, 9, 7, 3, 3, 1, 1)},
      {"conv2d_nchw_12", ops::conv2dNCHW(1, 3, 6, 7, 12, 3, 3, 1, 1)},
      {"conv2d_nhwc_stride2", ops::conv2dNHWC(1, 6, 11, 11, 10, 3, 3, 2, 1)},
      {"conv2d_bias_relu", ops::conv2dBiasReluNCHW(1, 4, 8, 8, 6, 1, 1, 1, 0)},
      {"depthwise", ops::depthwiseConv2dNCHW(1, 9, 10, 10, 3, 1, 1)},
      {"dense", ops::matmul(3, 37, 19)},
      {"max_pool", ops::maxPool2dNCHW(1, 5, 9, 9, 3, 2, 1)},
      {"global_avg_pool", globalAvgPoolNCHW()},
      {"softmax", ops::softmax(3, 300)},
      {"concatenate", concatenation()},
  };
}

void buildAndRun(const std::string& target, bool run) {
  uint64_t seed = 11;
  for (auto& c : cases()) {
    // One output per thread (the launch checked), then the rule's channel tiles (4 or 2
    // channels per thread where they divide, NCHW: no multiprocessor count asks for threads),
    // then 2 channels asked for (NHWC too).
    for (int64_t tile : {1, 0, 2}) {
      SCOPED_TRACE(c.name + " on " + target + ", channel tile " + std::to_string(tile));
      ops::GpuScheduleOptions options;
      options.threadsPerBlock = 64;
      options.channelTile = tile;
      auto steps = ops::defaultGpuSchedule(c.dag, options);
      auto binary = kernelcheck::buildForGpu(schedule::replay(c.dag, steps), target, c.name);
      if (tile == 1 && binary.source.manifest["kernels"][0]["launch"]["shared_bytes"].get<int64_t>() == 0) {
        // Every output is bound: the launch has the blocks and threads of its fused spatial loops
        // (rule 8's softmax excepted: a block per row, its statistics in shared memory).
        int64_t elements = 1;
        for (int64_t e : c.dag.op(c.dag.outputNames()[0])->shape) elements *= e;
        const auto& launch = binary.source.manifest["kernels"][0]["launch"];
        EXPECT_EQ(launch["block"][0].get<int64_t>(), std::min<int64_t>(64, elements));
        EXPECT_EQ(launch["grid"][0].get<int64_t>(), (elements + 63) / 64);
      }
      if (!run) continue;
      auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
      auto data = kernelcheck::makeReferenceData(c.dag, seed++);
      EXPECT_LT(kernelcheck::runGpuAndCompare(module.kernel(c.name), data), 1e-5) << binary.source.code;
    }
  }
}

/// Rule 5's cases: few outputs, long reductions, on a small device (4 multiprocessors, 256
/// threads per block: split under 2048 outputs, 4096 threads wanted), with the parts and the
/// block the rule picks.
struct SplitCase {
  std::string name;
  te::ComputeDAG dag;
  int64_t tile, parts, blocks;
};

std::vector<SplitCase> splitCases() {
  return {
      // 200 outputs of 576 steps: 4 parts (8 would make blocks of 400 threads), tiles of 2x5x5.
      {"conv_bias_relu", ops::conv2dBiasReluNCHW(1, 64, 5, 5, 8, 3, 3, 1, 1), 50, 4, 4},
      // The convolution is the output (a local accumulation copied out), strided and padded.
      {"conv_stride2", ops::conv2dNCHW(1, 32, 9, 9, 6, 3, 3, 2, 1), 50, 4, 3},
      // NHWC: the tile is 16 channels x 2 of the 6 columns (a split axis); 8 parts fill 256.
      {"conv_nhwc", ops::conv2dNHWC(1, 64, 6, 6, 16, 3, 3, 1, 1), 32, 8, 18},
      // 20 outputs: one block holds them all; 300 steps in 4 parts of 75.
      {"dense", ops::matmul(2, 10, 300), 20, 4, 1},
  };
}

void buildAndRunSplit(const std::string& target, bool run) {
  uint64_t seed = 23;
  auto options = ops::gpuScheduleOptionsFor(256, 4, 32);
  for (auto& c : splitCases()) {
    SCOPED_TRACE(c.name + " on " + target);
    auto binary = kernelcheck::buildForGpu(schedule::replay(c.dag, ops::defaultGpuSchedule(c.dag, options)), target, c.name);
    const auto& launch = binary.source.manifest["kernels"][0]["launch"];
    EXPECT_EQ(launch["block"], nlohmann::json({c.tile, c.parts, 1}));
    EXPECT_EQ(launch["grid"][0].get<int64_t>(), c.blocks);
    EXPECT_EQ(launch["shared_bytes"].get<int64_t>(), c.tile * c.parts * 4);
    if (!run) continue;
    auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
    auto data = kernelcheck::makeReferenceData(c.dag, seed++);
    EXPECT_LT(kernelcheck::runGpuAndCompare(module.kernel(c.name), data), 1e-5) << binary.source.code;
  }
}

/// Calls `buildAndRunOn("cuda", run)`: compiled by NVRTC everywhere, run where a GPU is; without
/// one the test skips with the reason (fails under TESSEL_REQUIRE_CUDA=1).
void onCudaWhereAGpuIs(void (*buildAndRunOn)(const std::string& target, bool run)) {
  std::string why = kernelcheck::cudaUnavailableReason();
  buildAndRunOn("cuda", why.empty());
  if (why.empty()) return;
  if (testsupport::deviceRequired("TESSEL_REQUIRE_CUDA")) FAIL() << "TESSEL_REQUIRE_CUDA=1: " << why;
  GTEST_SKIP() << "compiled with NVRTC, not run: " << why;
}

}  // namespace

TEST(GpuDefaultSchedules, SplitReductionsMatchTheReferenceOnOpencl) {
  TESSEL_REQUIRE_OPENCL();
  buildAndRunSplit("opencl", true);
}

TEST(GpuDefaultSchedules, SplitReductionsCompileForCudaAndRunWhereAGpuIs) { onCudaWhereAGpuIs(buildAndRunSplit); }

TEST(GpuDefaultSchedules, LongReductionsWithFewOutputsAreSplitOnAnH100) {
  auto h100 = ops::gpuScheduleOptionsFor(1024, 132, 32);  // 135168 threads wanted
  auto launchOf = [](const te::ComputeDAG& dag, const ops::GpuScheduleOptions& options) {
    return passes::lowerForGpu(schedule::replay(dag, ops::defaultGpuSchedule(dag, options)), "k", passes::GpuLimits::cudaSm90()).launch;
  };
  auto expectLaunch = [](const passes::GpuLaunch& launch, std::array<int64_t, 3> block, int64_t blocks) {
    EXPECT_EQ(launch.block, block);
    EXPECT_EQ(launch.grid[0], blocks);
    EXPECT_EQ(launch.sharedBytes, block[0] * block[1] * 4);
  };
  // resnet-18's layer4: 25088 outputs of 4608 steps in 8 parts, a 7x7 image per block.
  expectLaunch(launchOf(ops::conv2dBiasReluNCHW(1, 512, 7, 7, 512, 3, 3, 1, 1), h100), {49, 8, 1}, 512);
  // layer3: 50176 outputs in 4 parts, half a 14x14 image per block.
  expectLaunch(launchOf(ops::conv2dBiasReluNCHW(1, 256, 14, 14, 256, 3, 3, 1, 1), h100), {98, 4, 1}, 512);
  // The same tiles where the device reports no warp size (OpenCL says 1): tiles of single
  // outputs made blocks of 8 threads.
  expectLaunch(launchOf(ops::conv2dBiasReluNCHW(1, 512, 7, 7, 512, 3, 3, 1, 1), ops::gpuScheduleOptionsFor(1024, 132, 1)), {49, 8, 1}, 512);
  // The classifier: 1000 outputs, 512 steps in 16 parts of 32, 40 outputs per block.
  expectLaunch(launchOf(ops::matmul(1, 1000, 512), h100), {40, 16, 1}, 25);
  // Not split: 28x28x128 (100352 outputs: 2 parts were slower on the H100), enough outputs
  // (56x56x64), a short reduction (8 channels x 3 x 3), a device of
  // unknown size, and never when asked so.
  EXPECT_EQ(launchOf(ops::conv2dBiasReluNCHW(1, 128, 28, 28, 128, 3, 3, 1, 1), h100).block[1], 1);
  EXPECT_EQ(launchOf(ops::conv2dBiasReluNCHW(1, 64, 56, 56, 64, 3, 3, 1, 1), h100).block[1], 1);
  EXPECT_EQ(launchOf(ops::conv2dBiasReluNCHW(1, 8, 7, 7, 512, 3, 3, 1, 1), h100).block[1], 1);
  EXPECT_EQ(launchOf(ops::conv2dBiasReluNCHW(1, 512, 7, 7, 512, 3, 3, 1, 1), ops::gpuScheduleOptionsFor(1024, 0, 32)).block[1], 1);
  auto never = h100;
  never.reductionParts = 1;
  EXPECT_EQ(launchOf(ops::conv2dBiasReluNCHW(1, 512, 7, 7, 512, 3, 3, 1, 1), never).block[1], 1);
  // Asked for: 2 parts, even where the rule would not split.
  auto two = h100;
  two.reductionParts = 2;
  EXPECT_EQ(launchOf(ops::conv2dBiasReluNCHW(1, 64, 56, 56, 64, 3, 3, 1, 1), two).block[1], 2);
  two.reductionParts = -1;
  EXPECT_EQ(errorOf([&] { ops::defaultGpuSchedule(ops::matmul(4, 64, 16), two); }),
            "GPU default schedule: reduction parts must be 0 (by the rule) or positive, got -1");
}

TEST(GpuDefaultSchedules, EveryOperatorClassRunsOnOpencl) {
  TESSEL_REQUIRE_OPENCL();
  buildAndRun("opencl", true);
}

TEST(GpuDefaultSchedules, EveryOperatorClassCompilesForCudaAndRunsWhereAGpuIs) { onCudaWhereAGpuIs(buildAndRun); }

TEST(GpuDefaultSchedules, TheThreadCountIsCappedByTheLimits) {
  // 256 threads on the Mali profile's 256-thread blocks pass; 512 fail the verification,
  // naming the limit (what the graph build prevents by capping the rule's threads).
  te::Tensor x = te::placeholder({4, 1024}, DataType::float32(), "x");
  auto dag = te::ComputeDAG({ops::relu(x)});
  auto state = schedule::replay(dag, ops::defaultGpuSchedule(dag, {256}));
  EXPECT_NO_THROW(passes::lowerForGpu(state, "k", passes::GpuLimits::mali()));
  auto wide = schedule::replay(dag, ops::defaultGpuSchedule(dag, {512}));
  expectContains(errorOf([&] { passes::lowerForGpu(wide, "k", passes::GpuLimits::mali()); }), "threads per block");
}

TEST(GpuDefaultSchedules, SmallOutputsGetSmallerBlocksToReachEveryMultiprocessor) {
  auto options = ops::gpuScheduleOptionsFor(1024, 132, 32);  // an H100
  EXPECT_EQ(options.threadsPerBlock, 256);
  EXPECT_EQ(options.minBlocks, 264);
  EXPECT_EQ(options.minThreadsPerBlock, 32);
  auto launchOf = [&](const te::ComputeDAG& dag) {
    return passes::lowerForGpu(schedule::replay(dag, ops::defaultGpuSchedule(dag, options)), "k", passes::GpuLimits::cudaSm90()).launch;
  };
  // A classifier at batch 1: 1000 outputs in blocks of a warp, 32 blocks (not 4 of 256).
  auto classifier = launchOf(ops::matmul(1, 1000, 64));
  EXPECT_EQ(classifier.block[0], 32);
  EXPECT_EQ(classifier.grid[0], 32);
  // 7x7x512: 25088 outputs in 392 blocks of 64 threads (98 of 256 would leave 34 SMs idle).
  auto deep = launchOf(ops::conv2dNCHW(1, 8, 7, 7, 512, 1, 1, 1, 0));
  EXPECT_EQ(deep.block[0], 64);
  EXPECT_EQ(deep.grid[0], 392);
  // Enough outputs keep the full blocks.
  EXPECT_EQ(launchOf(ops::conv2dNCHW(1, 4, 56, 56, 64, 1, 1, 1, 0)).block[0], 256);
  // A device of unknown size (a profile without a count) is asked for no minimum.
  EXPECT_EQ(ops::gpuScheduleOptionsFor(256, 0, 1).minBlocks, 0);
  EXPECT_EQ(ops::gpuScheduleOptionsFor(128, 4, 32).threadsPerBlock, 128);
}

TEST(GpuDefaultSchedules, ConvolutionsComputeSeveralChannelsPerThreadWhereThreadsRemain) {
  auto launchOf = [](const te::ComputeDAG& dag, const ops::GpuScheduleOptions& options) {
    return passes::lowerForGpu(schedule::replay(dag, ops::defaultGpuSchedule(dag, options)), "k", passes::GpuLimits::cudaSm90()).launch;
  };
  auto h100 = ops::gpuScheduleOptionsFor(1024, 132, 32);
  // 56x56x256 (802816 outputs): 4 channels per thread leave 200704 threads, 784 blocks of 256.
  auto large = launchOf(ops::conv2dBiasReluNCHW(1, 4, 56, 56, 256, 1, 1, 1, 0), h100);
  EXPECT_EQ(large.grid[0] * large.block[0], 802816 / 4);
  // 28x28x256 (200704): 2 per thread keep 100352 threads, above 264 blocks of 256.
  auto middle = launchOf(ops::conv2dBiasReluNCHW(1, 4, 28, 28, 256, 1, 1, 1, 0), h100);
  EXPECT_EQ(middle.grid[0] * middle.block[0], 200704 / 2);
  // 14x14x256: one per thread; the threads are what is short.
  auto small = launchOf(ops::conv2dBiasReluNCHW(1, 4, 14, 14, 256, 1, 1, 1, 0), h100);
  EXPECT_EQ(small.grid[0] * small.block[0], 14 * 14 * 256);
  // NHWC's channels are innermost: no tile by the rule, 4 when asked for.
  auto nhwc = ops::conv2dNHWC(1, 4, 56, 56, 256, 1, 1, 1, 0);
  EXPECT_EQ(launchOf(nhwc, h100).grid[0] * 256, 802816);
  auto asked = h100;
  asked.channelTile = 4;
  EXPECT_EQ(launchOf(nhwc, asked).grid[0] * 256, 802816 / 4);
  // Depthwise convolutions and dense layers share no input between output channels: no tile.
  ops::GpuScheduleOptions always;
  always.channelTile = 4;
  auto depthwise = launchOf(ops::depthwiseConv2dNCHW(1, 32, 8, 8, 3, 1, 1), always);
  EXPECT_EQ(depthwise.grid[0] * depthwise.block[0], 32 * 8 * 8);
  EXPECT_EQ(launchOf(ops::matmul(4, 64, 16), always).grid[0] * 256, 256);  // 256 outputs in one block of 256
  always.channelTile = 3;
  EXPECT_EQ(errorOf([&] { ops::defaultGpuSchedule(ops::matmul(4, 64, 16), always); }),
            "GPU default schedule: the channel tile must be 0 (by the rule), 1, 2 or 4, got 3");
}

TEST(GpuDefaultSchedules, ARuleThatCannotApplyNamesTheStage) {
  // A reduction read by two outputs: one thread of each output would need it, so the rule
  // refuses it rather than computing it somewhere no thread could read it.
  te::Tensor x = te::placeholder({4, 8}, DataType::float32(), "x");
  auto k = te::reduceAxis(8, "k");
  te::Tensor total = te::compute({4}, [&](const std::vector<ir::Var>& i) { return te::sum(x(i[0], k.var), {k}); }, "row_sum");
  te::Tensor a = te::compute({4}, [&](const std::vector<ir::Var>& i) { return total(i[0]) + ir::Expr(1.0f); }, "plus_one");
  te::Tensor b = te::compute({4}, [&](const std::vector<ir::Var>& i) { return total(i[0]) * ir::Expr(2.0f); }, "twice");
  te::ComputeDAG dag({a, b});
  expectContains(errorOf([&] { ops::defaultGpuSchedule(dag); }),
                 "GPU default schedule: computing at the thread loop of stage 'row_sum' (reduction)");
  EXPECT_EQ(errorOf([&] { ops::defaultGpuSchedule(dag, {0}); }), "GPU default schedule: threads per block must be positive, got 0");
}

namespace {

/// Rule 7's cases: tiles that divide, rows that do not (37), stacks, a dense layer at batch 32,
/// a reduction over a prime (37: a chunk of 32 and a guarded last one of 5).
std::vector<Case> gemmCases() {
  return {{"matmul", ops::matmul(40, 48, 20)},
          {"projection_bias", ops::projection(2, 37, 24, 40)},
          {"attention_heads", ops::attentionProduct(3, 20, 16, 24)},
          {"dense_batch32", ops::denseBias(32, 40, 24)},
          {"prime_reduction", ops::attentionProduct(3, 20, 37, 24)}};
}

void buildAndRunGemm(const std::string& target, bool run) {
  uint64_t seed = 31;
  auto options = ops::gpuScheduleOptionsFor(256, 4, 32);
  for (auto& c : gemmCases()) {
    SCOPED_TRACE(c.name + " on " + target);
    ASSERT_TRUE(ops::gpuGemmTilesApply(c.dag).has_value());
    auto binary = kernelcheck::buildForGpu(schedule::replay(c.dag, ops::defaultGpuSchedule(c.dag, options)), target, c.name);
    const auto& launch = binary.source.manifest["kernels"][0]["launch"];
    EXPECT_GT(launch["shared_bytes"].get<int64_t>(), 0) << "the operands are staged in shared memory";
    EXPECT_GE(launch["block"][0].get<int64_t>() * launch["block"][1].get<int64_t>(), 64);
    if (!run) continue;
    auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
    auto data = kernelcheck::makeReferenceData(c.dag, seed++);
    EXPECT_LT(kernelcheck::runGpuAndCompare(module.kernel(c.name), data), 1e-5) << binary.source.code;
  }
}

}  // namespace

TEST(GpuDefaultSchedules, MatrixProductsGetSharedMemoryTilesThatMatchTheReferenceOnOpencl) {
  TESSEL_REQUIRE_OPENCL();
  buildAndRunGemm("opencl", true);
}

TEST(GpuDefaultSchedules, MatrixProductsCompileForCudaAndRunWhereAGpuIs) { onCudaWhereAGpuIs(buildAndRunGemm); }

TEST(GpuDefaultSchedules, TheGemmTileLeavesABlockForEveryMultiprocessorAndLittlePadding) {
  auto h100 = ops::gpuScheduleOptionsFor(1024, 132, 32);
  auto launchOf = [&](const te::ComputeDAG& dag) {
    return passes::lowerForGpu(schedule::replay(dag, ops::defaultGpuSchedule(dag, h100)), "k", passes::GpuLimits::cudaSm90()).launch;
  };
  // BERT-base's projection (128 x 768): 2 x 2 outputs per thread in blocks of 8 x 8 threads
  // make 384 blocks; 4 x 2 would make 192, fewer than two per multiprocessor.
  auto bert = launchOf(ops::projection(1, 128, 768, 768));
  EXPECT_EQ(bert.block, (std::array<int64_t, 3>{8, 8, 1}));
  EXPECT_EQ(bert.grid, (std::array<int64_t, 3>{48, 8, 1}));
  // ViT's 197 tokens: 2 x 4 per thread, 13 blocks of 16 rows (208: 5% padding; 7 of 32 would
  // pad 12%).
  auto vit = launchOf(ops::projection(1, 197, 768, 768));
  EXPECT_EQ(vit.grid, (std::array<int64_t, 3>{24, 13, 1}));
  // Its attention's second product reduces over the 197 tokens, a prime: chunks of 32, the
  // seventh guarded (chunks of 1 would wait at the barriers for every product).
  auto tokens = ops::gpuGemmTilesApply(ops::attentionProduct(12, 197, 197, 64));
  ASSERT_TRUE(tokens.has_value());
  EXPECT_EQ(ops::defaultGpuGemmTile(*tokens, 132, 1024, 32).k, 32);
  // Attention's 12 heads are blockIdx.z.
  EXPECT_EQ(launchOf(ops::attentionProduct(12, 128, 64, 128)).grid[2], 12);
  // A large product on a device of unknown size: 16 x 16 threads of 4 x 4.
  auto big = ops::defaultGpuGemmTile(ops::gpuGemmShapeOf(ops::matmul(1024, 1024, 64)), 0, 1024, 32);
  EXPECT_EQ(big.x, (std::array<int64_t, 3>{16, 16, 4}));
  EXPECT_EQ(big.y, (std::array<int64_t, 3>{16, 16, 4}));
  EXPECT_EQ(big.k, 32);
  // Thin products keep the other rules: a classifier at batch 1, a matrix-vector product.
  EXPECT_FALSE(ops::gpuGemmTilesApply(ops::matmul(1, 1000, 512)).has_value());
  EXPECT_FALSE(ops::gpuGemmTilesApply(ops::matmul(64, 8, 512)).has_value());
}

namespace {

/// Rule 7 on tensor cores: a matrix product, a stack of projections with bias and GELU,
/// attention heads, a dense layer with bias.
std::vector<Case> tensorCoreCases() {
  return {{"tc_matmul", ops::matmul(64, 48, 256)},
          {"tc_projection_gelu", ops::projection(2, 32, 256, 96, true)},
          {"tc_attention", ops::attentionProduct(3, 32, 256, 32)},
          {"tc_dense_bias", ops::denseBias(64, 256, 48)}};
}

/// Each case's default schedule with each instruction, built for CUDA; run where a GPU is. The
/// device is taken to have one multiprocessor, which these small products keep busy enough for
/// the rule to take tensor cores.
void buildAndRunTensorCores(const std::string& target, bool run) {
  passes::GpuLimits small = passes::GpuLimits::cudaSm90();
  small.multiProcessorCount = 1;
  auto options = ops::gpuScheduleOptionsFor(small, target::MatmulPrecision::Fp32);
  ASSERT_EQ(options.tensorCores, ir::WarpMmaKind::Tf32x3) << "sm_90 has TF32 tensor cores: the fp32-accurate products by default";
  uint64_t seed = 41;
  for (auto& c : tensorCoreCases()) {
    auto data = kernelcheck::makeReferenceData(c.dag, seed++);
    std::map<ir::WarpMmaKind, double> errors;
    for (auto kind : {ir::WarpMmaKind::Tf32x3, ir::WarpMmaKind::Tf32}) {
      SCOPED_TRACE(c.name + " with " + ir::warpMmaIntrinsicName(kind) + " on " + target);
      options.tensorCores = kind;
      auto binary = kernelcheck::buildForGpu(schedule::replay(c.dag, ops::defaultGpuSchedule(c.dag, options)), target, c.name);
      expectContains(binary.source.code, kind == ir::WarpMmaKind::Tf32 ? "tessel_warp_mma_interleaved<" : "tessel_warp_mma<");
      if (!run) continue;
      auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
      errors[kind] = kernelcheck::runGpuAndCompare(module.kernel(c.name), data);
    }
    if (!run) continue;
    double split = errors[ir::WarpMmaKind::Tf32x3], tf32 = errors[ir::WarpMmaKind::Tf32];
    std::printf("%s: largest relative error 3xTF32 %.2e, TF32 %.2e\n", c.name.c_str(), split, tf32);
    // Three products of TF32 parts leave 2^-22 of each product: near the fp32 kernels' errors.
    EXPECT_LT(split, 1e-4) << c.name;
    // One TF32 product keeps 11 bits of each operand: its error shows, within PyTorch's TF32 bounds.
    EXPECT_GT(tf32, 10 * split) << c.name;
    EXPECT_LT(tf32, 5e-2) << c.name;
  }
}

}  // namespace

TEST(GpuDefaultSchedules, MatrixProductsOnTensorCoresCompileForCudaAndMatchTheReferenceWhereAGpuIs) {
  onCudaWhereAGpuIs(buildAndRunTensorCores);
}

namespace {

/// A tensor-core tile whose last tile of rows is ragged (40 rows in tiles of 32: the warps
/// compute past the product, the stores are guarded), with a bias epilogue.
void buildAndRunRaggedTensorCores(const std::string& target, bool run) {
  auto dag = ops::projection(1, 40, 256, 48);
  ops::GpuGemmTile tile;
  tile.x = {2, 16, 2};
  tile.y = {3, 8, 2};
  tile.k = 32;
  tile.tensorCores = ir::WarpMmaKind::Tf32x3;
  auto binary = kernelcheck::buildForGpu(ops::gpuGemmTiles(dag, tile).state, target, "ragged");
  expectContains(binary.source.code, "tessel_warp_mma<");
  if (!run) return;
  auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
  EXPECT_LT(kernelcheck::runGpuAndCompare(module.kernel("ragged"), kernelcheck::makeReferenceData(dag, 47)), 1e-4);
}

}  // namespace

TEST(GpuDefaultSchedules, RaggedTensorCoreTilesComputePastTheProductAndMatchTheReferenceWhereAGpuIs) {
  onCudaWhereAGpuIs(buildAndRunRaggedTensorCores);
}

namespace {

/// `tile`'s schedule of `dag` built for `target`, its source holding `expected`; where a GPU is,
/// run against the reference: three TF32 products within 1e-4, one within TF32's 5e-3.
void buildTensorCoreTileAndCompare(const te::ComputeDAG& dag, const ops::GpuGemmTile& tile, const std::string& target,
                                   const std::string& name, const std::string& expected, bool run, uint64_t seed) {
  auto binary = kernelcheck::buildForGpu(ops::gpuGemmTiles(dag, tile).state, target, name);
  expectContains(binary.source.code, expected);
  if (!run) return;
  auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
  double error = kernelcheck::runGpuAndCompare(module.kernel(name), kernelcheck::makeReferenceData(dag, seed));
  EXPECT_LT(error, tile.tensorCores == ir::WarpMmaKind::Tf32x3 ? 1e-4 : 5e-3);
}

/// The rows operand read a float4 a row (tessel_warp_mma's kWideA: the steps contiguous in chunks
/// of 16, the rows padded to a multiple of 4 elements) and a scalar at a time (chunks of 8; data
/// whose rows are the innermost axis), each instruction, against the reference.
void buildAndRunWideFragmentLoads(const std::string& target, bool run) {
  struct WideCase {
    std::string name;
    te::ComputeDAG dag;
    int64_t chunk;
    bool wide;
  };
  std::vector<WideCase> cases = {{"wide_k32", ops::projection(1, 64, 256, 48, true), 32, true},
                                 {"wide_k16", ops::matmul(32, 64, 96), 16, true},
                                 {"narrow_k8", ops::projection(1, 64, 256, 48, true), 8, false},
                                 // Heads as blockIdx.z: each head's rows [32, 32] by rows, its other
                                 // operand [32, 64] with the reduction outermost.
                                 {"heads_k32", ops::attentionProduct(2, 32, 32, 64), 32, true}};
  for (const auto& c : cases)
    for (auto kind : {ir::WarpMmaKind::Tf32x3, ir::WarpMmaKind::Tf32}) {
      SCOPED_TRACE(c.name + " with " + ir::warpMmaIntrinsicName(kind));
      ops::GpuGemmTile tile;
      const auto& shape = c.dag.op(c.dag.outputNames()[0])->shape;
      tile.x = {shape[shape.size() - 2] / 32, 16, 2};
      tile.y = {shape.back() / 16, 8, 2};
      tile.k = c.chunk;
      tile.tensorCores = kind;
      buildTensorCoreTileAndCompare(c.dag, tile, target, c.name, c.wide ? ", true>(&" : ", false>(&", run, 53);
    }
}

}  // namespace

TEST(GpuDefaultSchedules, TensorCoreFragmentsLoadWideOrNarrowAndMatchTheReferenceWhereAGpuIs) {
  onCudaWhereAGpuIs(buildAndRunWideFragmentLoads);
}

namespace {

/// Interleaved lanes (lane 4g + t: rows g + 8r, columns t + 4c): operands whose steps are
/// contiguous loaded by ldmatrix (four matrices, and two for a lone last column fragment), the
/// others an element a register; sub-tiles of 2 to 8, a ragged last tile with a bias epilogue,
/// heads as blockIdx.z; both instructions, against the reference.
void buildAndRunInterleavedLanes(const std::string& target, bool run) {
  struct InterleavedCase {
    std::string name;
    te::ComputeDAG dag;
    std::array<int64_t, 3> x, y;
    int64_t chunk;
    std::string loads;  ///< the template's last two arguments: ldmatrix for the rows, the columns
  };
  std::vector<InterleavedCase> cases = {
      {"both_by_matrix", ops::denseBias(64, 256, 48), {2, 8, 4}, {3, 8, 2}, 32, "true, true"},
      {"wide_columns", ops::denseBias(64, 256, 64), {2, 8, 4}, {1, 8, 8}, 32, "true, true"},
      {"odd_column_fragments", ops::denseBias(32, 128, 48), {1, 16, 2}, {1, 8, 6}, 16, "true, true"},
      {"ragged_rows", ops::denseBias(40, 256, 48), {2, 8, 4}, {3, 4, 4}, 32, "true, true"},
      {"columns_by_element", ops::matmul(32, 64, 96), {1, 16, 2}, {2, 8, 4}, 16, "true, false"},
      {"gelu_epilogue", ops::projection(1, 64, 256, 48, true), {2, 8, 4}, {3, 8, 2}, 32, "true, false"},
      {"heads", ops::attentionProduct(2, 32, 32, 64), {1, 16, 2}, {4, 4, 4}, 32, "true, false"}};
  for (const auto& c : cases)
    for (auto kind : {ir::WarpMmaKind::Tf32x3, ir::WarpMmaKind::Tf32}) {
      SCOPED_TRACE(c.name + " with " + ir::warpMmaIntrinsicName(kind));
      ops::GpuGemmTile tile;
      tile.x = c.x;
      tile.y = c.y;
      tile.k = c.chunk;
      tile.tensorCores = kind;
      tile.interleaveLanes = true;
      buildTensorCoreTileAndCompare(c.dag, tile, target, c.name,
                                    fmt::format("tessel_warp_mma_interleaved<{}, {}, {}, {}, {}>(&", c.x[2], c.y[2], c.chunk,
                                                kind == ir::WarpMmaKind::Tf32x3 ? "true" : "false", c.loads),
                                    run, 59);
    }
}

}  // namespace

TEST(GpuDefaultSchedules, InterleavedLaneFragmentsLoadByMatrixOrByElementAndMatchTheReferenceWhereAGpuIs) {
  onCudaWhereAGpuIs(buildAndRunInterleavedLanes);
}

namespace {

/// Copies kept in 2, 3 and 4 stages of shared memory, asynchronous on CUDA (cp.async), against
/// the reference: more chunks than stages, fewer chunks than stages (the prologue issues only
/// what exists), a ragged last tile of rows (guarded copies), a guarded last chunk, on the fp32
/// units and on tensor cores, with the columns operand's shared rows aligned to float4s or
/// padded to an odd stride (copied element by element in 3 and 4 stages; through registers in 2).
void buildAndRunPipelinedCopies(const std::string& target, bool run) {
  struct PipelineCase {
    std::string name;
    te::ComputeDAG dag;
    std::array<int64_t, 3> x, y;
    int64_t chunk;
    std::optional<ir::WarpMmaKind> tensorCores;
    bool alignCopyRows = false;
  };
  const auto tf32x3 = ir::WarpMmaKind::Tf32x3;
  std::vector<PipelineCase> cases = {{"six_chunks", ops::matmul(64, 64, 96), {4, 8, 2}, {4, 8, 2}, 16, std::nullopt},
                                     {"two_chunks", ops::matmul(64, 64, 32), {4, 8, 2}, {4, 8, 2}, 16, std::nullopt},
                                     {"ragged_rows", ops::matmul(50, 64, 64), {4, 8, 2}, {4, 8, 2}, 16, std::nullopt},
                                     {"guarded_chunk", ops::matmul(32, 32, 40), {2, 8, 2}, {2, 8, 2}, 16, std::nullopt},
                                     {"tensor_cores", ops::projection(1, 64, 256, 48, true), {2, 16, 2}, {3, 8, 2}, 32, tf32x3, true},
                                     {"tensor_cores_odd_rows", ops::projection(1, 64, 256, 48, true), {2, 16, 2}, {3, 8, 2}, 32, tf32x3}};
  for (const auto& c : cases)
    for (int64_t stages : {2, 3, 4}) {
      SCOPED_TRACE(fmt::format("{} in {} stages", c.name, stages));
      ops::GpuGemmTile tile;
      tile.x = c.x;
      tile.y = c.y;
      tile.k = c.chunk;
      tile.tensorCores = c.tensorCores;
      tile.stages = stages;
      tile.alignCopyRows = c.alignCopyRows;
      auto binary = kernelcheck::buildForGpu(ops::gpuGemmTiles(c.dag, tile).state, target, c.name);
      if (c.tensorCores && !c.alignCopyRows && stages == 2) {
        EXPECT_EQ(binary.source.code.find("tessel_cp_async"), std::string::npos);
      } else {
        expectContains(binary.source.code, c.alignCopyRows || !c.tensorCores ? "tessel_cp_async<16>(" : "tessel_cp_async<4>(");
        expectContains(binary.source.code, fmt::format("tessel_cp_async_wait<{}>();", stages - 2));
      }
      if (!run) continue;
      auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
      EXPECT_LT(kernelcheck::runGpuAndCompare(module.kernel(c.name), kernelcheck::makeReferenceData(c.dag, 61)), 1e-4);
    }
}

}  // namespace

TEST(GpuDefaultSchedules, CopiesPipelinedInStagesOfSharedMemoryMatchTheReferenceWhereAGpuIs) {
  // OpenCL stages two through registers and refuses more, saying why.
  ops::GpuGemmTile tile;
  tile.x = {4, 8, 2};
  tile.y = {4, 8, 2};
  tile.k = 16;
  tile.stages = 3;
  expectContains(errorOf([&] { kernelcheck::buildForGpu(ops::gpuGemmTiles(ops::matmul(64, 64, 96), tile).state, "opencl", "mm"); }),
                 "3 stages need asynchronous copies into shared memory (CUDA sm_80 and later)");
  onCudaWhereAGpuIs(buildAndRunPipelinedCopies);
}

namespace {

/// Four stages of 64-step chunks of a 64 x 32 tensor-core tile: 104 KiB of copies, beyond the
/// 48 KiB a block may declare, taken as dynamic shared memory (the manifest says so, the runtime
/// allows the kernel it at load), against the reference.
ops::GpuGemmTile tileOf64StepChunks(int64_t stages) {
  ops::GpuGemmTile tile;
  tile.x = {2, 32, 2};
  tile.y = {3, 16, 2};
  tile.k = 64;
  tile.tensorCores = ir::WarpMmaKind::Tf32x3;
  tile.stages = stages;
  tile.alignCopyRows = true;
  return tile;
}

void buildAndRunDynamicSharedMemory(const std::string& target, bool run) {
  auto dag = ops::projection(1, 128, 768, 96, true);
  auto binary = kernelcheck::buildForGpu(ops::gpuGemmTiles(dag, tileOf64StepChunks(4)).state, target, "deep");
  const auto& launch = binary.source.manifest["kernels"][0]["launch"];
  EXPECT_GT(launch["shared_bytes"].get<int64_t>(), 48 * 1024);
  EXPECT_TRUE(launch.value("dynamic_shared", false));
  expectContains(binary.source.code, "extern __shared__ __align__(16) unsigned char tessel_dynamic_shared[];");
  if (!run) return;
  auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
  EXPECT_LT(kernelcheck::runGpuAndCompare(module.kernel("deep"), kernelcheck::makeReferenceData(dag, 67)), 1e-4);
}

}  // namespace

TEST(GpuDefaultSchedules, CopiesBeyondWhatABlockMayDeclareTakeDynamicSharedMemoryWhereAGpuIs) {
  // Two stages of the same tile fit what a block may declare: declared, as every kernel before.
  auto dag = ops::projection(1, 128, 768, 96, true);
  auto declared = kernelcheck::buildForGpu(ops::gpuGemmTiles(dag, tileOf64StepChunks(2)).state, "cuda", "declared");
  EXPECT_FALSE(declared.source.manifest["kernels"][0]["launch"].value("dynamic_shared", false));
  EXPECT_EQ(declared.source.code.find("tessel_dynamic_shared"), std::string::npos);
  // A GPU that allows no more than it declares refuses the deep pipeline, naming its limit.
  passes::GpuLimits noDynamic = passes::GpuLimits::cudaSm90();
  noDynamic.maxDynamicSharedMemoryPerBlock = 0;
  expectContains(errorOf([&] { passes::lowerForGpu(ops::gpuGemmTiles(dag, tileOf64StepChunks(4)).state, "deep", noDynamic); }),
                 "bytes of shared memory per block exceed the limit of 49152 (cuda sm_90)");
  onCudaWhereAGpuIs(buildAndRunDynamicSharedMemory);
}

TEST(GpuDefaultSchedules, TensorCoresTakeTheProductsWithWarpsAndChunksToHideTheirWork) {
  auto rules = ops::gpuScheduleOptionsFor(passes::GpuLimits::cudaSm90(), target::MatmulPrecision::Fp32);
  auto tensorized = [&](const te::ComputeDAG& dag) {
    for (const auto& step : ops::defaultGpuSchedule(dag, rules))
      if (step->kind() == "tensorize") return true;
    return false;
  };
  // BERT-base's products on an H200 (double-buffered copies): the feed-forward expansion (128 x
  // 3072, 0.69x the fp32 tile's time), the 128 x 768 projections (2.9 warps per multiprocessor
  // and 12 chunks: 0.91x) and the contraction (48 chunks: 0.89x) take them; attention's heads
  // (one chunk of 64: 1.11x) do not.
  EXPECT_TRUE(tensorized(ops::projection(1, 128, 768, 3072, true)));
  EXPECT_TRUE(tensorized(ops::projection(1, 128, 768, 768)));
  EXPECT_TRUE(tensorized(ops::projection(1, 128, 3072, 768)));
  EXPECT_FALSE(tensorized(ops::attentionProduct(12, 128, 64, 128)));
  // ViT's 197 tokens leave a ragged last tile: its guarded copies cost what 2.5 warps per
  // multiprocessor do not hide (197 x 768 products: 1.19-1.22x the fp32 tile's time), so the
  // fp32 tile; the wide products with 7.6 and 10 warps take tensor cores (0.69x and 0.76x).
  EXPECT_FALSE(tensorized(ops::projection(1, 197, 768, 768)));
  EXPECT_FALSE(tensorized(ops::projection(1, 197, 3072, 768)));
  EXPECT_TRUE(tensorized(ops::projection(1, 197, 768, 2304)));
  EXPECT_TRUE(tensorized(ops::projection(1, 197, 768, 3072, true)));
  // Nor a device of unknown size, or products whose reduction is not a multiple of 8.
  EXPECT_FALSE(ops::defaultGpuTensorCoreTile(ops::gpuGemmShapeOf(ops::projection(1, 128, 768, 3072)), ir::WarpMmaKind::Tf32x3, 0, 1024));
  EXPECT_FALSE(ops::defaultGpuTensorCoreTile(ops::gpuGemmShapeOf(ops::projection(1, 128, 196, 3072)), ir::WarpMmaKind::Tf32x3, 132, 1024));
  // A bench asks for the tile whatever the rule says.
  EXPECT_TRUE(ops::defaultGpuTensorCoreTile(ops::gpuGemmShapeOf(ops::attentionProduct(12, 128, 64, 128)), ir::WarpMmaKind::Tf32x3, 132,
                                            1024, 48 * 1024, /*onlyWhereFaster=*/false));
}

// The target's precision picks the instruction: fp32-accurate 3xTF32 by default, one TF32
// product where the target allows it; OpenCL targets have no tensor-core products either way.
TEST(GpuDefaultSchedules, OneTf32ProductAStepTakesInterleavedLanesSizedByTheLaunch) {
  auto tileOf = [](const te::ComputeDAG& dag) {
    auto tile = ops::defaultGpuTensorCoreTile(ops::gpuGemmShapeOf(dag), ir::WarpMmaKind::Tf32, 132, 1024);
    EXPECT_TRUE(tile.has_value());
    return tile.value_or(ops::GpuGemmTile{});
  };
  // Two warps a block along the columns, each lane 4 x 8 outputs where that leaves a block per
  // multiprocessor (BERT-base's 128 x 2304: 4 x 36 blocks), else 2 x 8 (ViT-B/16's 197 x 768:
  // 13 x 12; BERT-base's 12 heads of scores: 12 x 8 x 2), else 2 x 4 (BERT-base's 128 x 768:
  // 8 x 24).
  for (const auto& [dag, x, y, k] :
       std::vector<std::tuple<te::ComputeDAG, std::array<int64_t, 3>, std::array<int64_t, 3>, int64_t>>{
           {ops::projection(1, 128, 768, 2304), {4, 8, 4}, {36, 8, 8}, 32},
           {ops::projection(1, 197, 768, 768), {13, 8, 2}, {12, 8, 8}, 64},
           {ops::projection(1, 128, 3072, 768), {8, 8, 2}, {24, 8, 4}, 64},
           {ops::attentionProduct(12, 128, 64, 128), {8, 8, 2}, {2, 8, 8}, 64}}) {
    ops::GpuGemmTile tile = tileOf(dag);
    EXPECT_TRUE(tile.interleaveLanes);
    EXPECT_EQ(tile.x, x);
    EXPECT_EQ(tile.y, y);
    EXPECT_EQ(tile.k, k) << "the longest chunk whose copies fit in 48 KiB";
  }
  // No block wider than the product: 16 columns take the fp32 tile.
  EXPECT_FALSE(ops::defaultGpuTensorCoreTile(ops::gpuGemmShapeOf(ops::matmul(64, 16, 256)), ir::WarpMmaKind::Tf32, 1, 1024));
}

TEST(GpuDefaultSchedules, TheTargetsMatmulPrecisionPicksTheTensorCoreInstruction) {
  auto intrinsicOf = [](const te::ComputeDAG& dag, target::MatmulPrecision precision) {
    for (const auto& step : ops::defaultGpuSchedule(dag, ops::gpuScheduleOptionsFor(passes::GpuLimits::cudaSm90(), precision)))
      if (auto t = std::dynamic_pointer_cast<const schedule::TensorizeStep>(step)) return t->intrinsic;
    return std::string("none");
  };
  auto expansion = ops::projection(1, 128, 768, 3072, true);
  EXPECT_EQ(intrinsicOf(expansion, target::MatmulPrecision::Fp32), "mma_m16n8k8_3xtf32");
  EXPECT_EQ(intrinsicOf(expansion, target::MatmulPrecision::Tf32), "mma_m16n8k8_tf32");
  const auto sm90 = passes::GpuLimits::cudaSm90();
  EXPECT_EQ(ops::tensorCoreProductsFor(sm90, target::MatmulPrecision::Tf32), ir::WarpMmaKind::Tf32);
  EXPECT_EQ(ops::tensorCoreProductsFor(sm90, target::MatmulPrecision::Fp32), ir::WarpMmaKind::Tf32x3);
  auto opencl = passes::GpuLimits::forTarget(target::Target::parse("opencl"));
  EXPECT_FALSE(ops::tensorCoreProductsFor(opencl, target::MatmulPrecision::Tf32));
  // One TF32 product hides a ragged tile's guards with 2.5 warps per multiprocessor (ViT-B/16's
  // 197 x 768 x 768: 0.76x the fp32 tile's time on an H200, 3xTF32 1.22x); one-chunk attention
  // heads stay on the fp32 units with three products a step but take one (interleaved lanes:
  // 4.0 us against 4.7).
  EXPECT_EQ(intrinsicOf(ops::projection(1, 197, 768, 768), target::MatmulPrecision::Tf32), "mma_m16n8k8_tf32");
  EXPECT_EQ(intrinsicOf(ops::projection(1, 197, 768, 768), target::MatmulPrecision::Fp32), "none");
  EXPECT_EQ(intrinsicOf(ops::attentionProduct(12, 128, 64, 128), target::MatmulPrecision::Tf32), "mma_m16n8k8_tf32");
  EXPECT_EQ(intrinsicOf(ops::attentionProduct(12, 128, 64, 128), target::MatmulPrecision::Fp32), "none");
}

TEST(GpuDefaultSchedules, TensorCoreProductsAreRefusedWhereTheTargetHasNone) {
  auto dag = ops::matmul(64, 48, 48);
  ops::GpuGemmTile tile;  // 2 x 2 warps of 2 x 2 outputs a thread: 7.5 KiB of shared memory, as OpenCL allows
  tile.x = {2, 16, 2};
  tile.y = {3, 8, 2};
  tile.k = 16;
  tile.tensorCores = ir::WarpMmaKind::Tf32x3;
  auto state = ops::gpuGemmTiles(dag, tile).state;
  expectContains(errorOf([&] { kernelcheck::buildForGpu(state, "opencl", "mm"); }),
                 "GPU codegen (opencl), kernel 'mm': the tensor-core intrinsic mma_m16n8k8_3xtf32 needs CUDA");
  EXPECT_FALSE(ops::gpuScheduleOptionsFor(passes::GpuLimits::forTarget(target::Target::parse("opencl")), target::MatmulPrecision::Fp32).tensorCores);
  // A CPU schedule naming the instruction.
  auto cpu = schedule::replay(dag, {std::make_shared<schedule::SplitStep>("C", "k", std::vector<int64_t>{8}),
                                    std::make_shared<schedule::TensorizeStep>("C", "k.1", "mma_m16n8k8_3xtf32")});
  EXPECT_EQ(errorOf([&] { codegen::generateCSource({passes::lower(cpu, "mm")}); }),
            "C codegen, function 'mm': the tensor-core intrinsic mma_m16n8k8_3xtf32 needs a CUDA target");
}

namespace {

/// Layer norm over the last axis of [2, rows, columns], with a scale and a bias.
te::ComputeDAG layerNorm(int64_t rows, int64_t columns) {
  auto x = te::placeholder({2, rows, columns}, DataType::float32(), "x");
  auto scale = te::placeholder({columns}, DataType::float32(), "scale");
  auto bias = te::placeholder({columns}, DataType::float32(), "bias");
  return te::ComputeDAG({ops::layerNorm(x, scale, bias, -1, 1e-5)}, {x, scale, bias});
}

/// Rule 8's cases: layer norm (the variance reads the mean), softmax (the sum reads the max).
std::vector<Case> rowStatisticsCases() {
  return {{"layer_norm", layerNorm(5, 96)}, {"softmax", ops::softmax(7, 100)}, {"layer_norm_odd", layerNorm(3, 37)}};
}

void buildAndRunRowStatistics(const std::string& target, bool run) {
  uint64_t seed = 41;
  auto options = ops::gpuScheduleOptionsFor(256, 4, 32);
  for (auto& c : rowStatisticsCases()) {
    SCOPED_TRACE(c.name + " on " + target);
    auto binary = kernelcheck::buildForGpu(schedule::replay(c.dag, ops::defaultGpuSchedule(c.dag, options)), target, c.name);
    const auto& launch = binary.source.manifest["kernels"][0]["launch"];
    const auto& shape = c.dag.op(c.dag.outputNames()[0])->shape;
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];
    // A block per row, a warp each: 96 in 3 steps, 100 and 37 guarded (4 and 2 steps).
    const std::map<std::string, int64_t> threads = {{"layer_norm", 32}, {"softmax", 32}, {"layer_norm_odd", 32}};
    EXPECT_EQ(launch["grid"][0].get<int64_t>(), rows);
    EXPECT_EQ(launch["block"][0].get<int64_t>(), threads.at(c.name));
    EXPECT_GT(launch["shared_bytes"].get<int64_t>(), 0);
    if (!run) continue;
    auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
    auto data = kernelcheck::makeReferenceData(c.dag, seed++);
    // 3e-4: an output near zero (an element near its row's mean) carries the mean's rounding,
    // about an ulp of a mean near 0.5 (6e-8) times 1/sigma (3.5 for inputs uniform in [0, 1)),
    // measured against relativeError's floor of 1e-3 of the largest output (about 1.7): up to
    // ~1.2e-4 (CUDA's rsqrtf on the H200 gave 1.15e-4 for the first layer norm, PoCL 6.3e-5).
    EXPECT_LT(kernelcheck::runGpuAndCompare(module.kernel(c.name), data), 3e-4) << binary.source.code;
  }
}

}  // namespace

TEST(GpuDefaultSchedules, RowStatisticsAreComputedOncePerRowAndMatchTheReferenceOnOpencl) {
  TESSEL_REQUIRE_OPENCL();
  buildAndRunRowStatistics("opencl", true);
}

TEST(GpuDefaultSchedules, RowStatisticsCompileForCudaAndRunWhereAGpuIs) { onCudaWhereAGpuIs(buildAndRunRowStatistics); }

TEST(GpuDefaultSchedules, RowStatisticsTakeTheThreadsThatLoadTheLeast) {
  auto h100 = ops::gpuScheduleOptionsFor(1024, 132, 32);
  auto launchOf = [&](const te::ComputeDAG& dag) {
    return passes::lowerForGpu(schedule::replay(dag, ops::defaultGpuSchedule(dag, h100)), "k", passes::GpuLimits::cudaSm90()).launch;
  };
  // Every thread of a row combines all its threads' partials, so a row takes the fewest threads
  // that fill a warp: BERT-base's layer norm, 128 rows of 768, a warp each, 24 elements a
  // thread (on an H200, with its softmax as below, BERT-base untuned in TF32 went from 1.032 to
  // 0.997 ms, GPT-2 from 1.056 to 1.011, ViT-B/16 from 1.842 to 1.802; 256 and 128 threads before).
  auto bert = launchOf(layerNorm(64, 768));
  EXPECT_EQ(bert.grid[0], 128);
  EXPECT_EQ(bert.block[0], 32);
  // Its attention's softmax: 12 x 128 rows of 128.
  auto softmax = launchOf(ops::softmax(12 * 128, 128));
  EXPECT_EQ(softmax.grid[0], 1536);
  EXPECT_EQ(softmax.block[0], 32);
  // ViT-B/16's rows of 197 (a prime): a warp in seven guarded steps, not 197 threads each
  // reading 197 partials (its softmax 17 us against PyTorch's 2.4 on an H200).
  EXPECT_EQ(launchOf(ops::softmax(12 * 197, 197)).block[0], 32);
  // Rows of 3072 take 64 threads (64 + 48 loads a thread against 32 + 96), rows of 257 a
  // guarded warp, rows shorter than a warp one thread per element.
  EXPECT_EQ(launchOf(ops::softmax(4, 3072)).block[0], 64);
  auto prime = launchOf(ops::softmax(4, 257));
  EXPECT_EQ(prime.block[0], 32);
  EXPECT_GT(prime.sharedBytes, 0);
  EXPECT_EQ(launchOf(ops::softmax(4, 20)).block[0], 20);
}
