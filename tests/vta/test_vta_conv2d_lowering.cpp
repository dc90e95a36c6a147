// Packed convolution groups of resnet-18 (quantized, packed, fused) lowered to VTA programs and
// run on the simulator: every group equals the reference interpreter's value bit for bit under
// several tilings and execution orders (int32 results through their byte planes), counts
// exactly its GEMMs (seed 004's 6623232 for the network), and a tiling that does not fit is
// refused with its reason; the whole network with its convolutions on the simulator and the
// rest in the interpreter equals the interpreter alone.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "common/ErrorText.h"
#include "graph/Interpreter.h"
#include "graph/ModelZoo.h"
#include "graph/Operators.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/PassManager.h"
#include "vta/Conv2dLowering.h"
#include "vta/NetworkRunner.h"
#include "PackedResnet18.h"

using namespace tessel;
using namespace tessel::vta;
using namespace tessel::testsupport;

namespace {

/// Values of the given nodes for one random image, by node id.
std::map<int, runtime::Tensor> interpretNodes(graph::Graph g, const std::vector<int>& nodes, int64_t imageSize) {
  for (int id : nodes) g.markOutput(id);
  auto image = runtime::Tensor::empty({1, 3, imageSize, imageSize}, DataType::float32());
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int64_t i = 0; i < image.numel(); ++i) image.dataAs<float>()[i] = dist(rng);
  auto values = graph::interpretGraph(g, {{"data", image}});
  std::map<int, runtime::Tensor> byNode;
  for (size_t k = 0; k < nodes.size(); ++k) byNode[nodes[k]] = values[values.size() - nodes.size() + k];
  return byNode;
}

/// A few tilings of different shapes: one row at a time, up to four rows with two channel
/// blocks, half the rows with two channel blocks, everything at once (the larger ones fit only
/// small layers); the first two also with loads rotating through two and three buffer sets, the
/// first also with two load and two accumulator sets (refused for int32 results).
std::vector<Conv2dTiling> candidateTilings(const Conv2dWorkload& w) {
  auto largestDivisor = [](int64_t n, int64_t atMost) {
    for (int64_t d = std::min(n, atMost); d > 1; --d)
      if (n % d == 0) return d;
    return int64_t(1);
  };
  return {Conv2dTiling{1, w.outWidth, 1, 1},
          Conv2dTiling{1, w.outWidth, 1, 1, 3},
          Conv2dTiling{1, w.outWidth, 1, 1, 2, 2},
          Conv2dTiling{largestDivisor(w.outHeight, 4), w.outWidth, largestDivisor(w.inputBlocks, 2),
                       largestDivisor(w.outputBlocks, 2)},
          Conv2dTiling{largestDivisor(w.outHeight, 4), w.outWidth, largestDivisor(w.inputBlocks, 2),
                       largestDivisor(w.outputBlocks, 2), 2},
          Conv2dTiling{largestDivisor(w.outHeight, w.outHeight / 2), w.outWidth, largestDivisor(w.inputBlocks, 2),
                       largestDivisor(w.outputBlocks, 2)},
          Conv2dTiling{w.outHeight, w.outWidth, w.inputBlocks, w.outputBlocks}};
}

/// 32 in the core test (quick under the sanitizers), 224 in test_vta_compile_zoo.
#ifndef TESSEL_RESNET_IMAGE_SIZE
#define TESSEL_RESNET_IMAGE_SIZE 32
#endif

TEST(VtaConv2dLowering, Resnet18GroupsMatchTheInterpreterBitForBit) {
  graph::registerStandardOps();
  const int64_t imageSize = TESSEL_RESNET_IMAGE_SIZE;
  graph::Graph g = packedResnet18(imageSize);
  std::vector<std::pair<graph::FusedGroup, PackedConvolution>> groups;
  std::vector<int> needed;
  for (const auto& group : graph::fuseOperators(g)) {
    if (packedConvolutionOf(g, group) < 0) continue;
    PackedConvolution pc = describePackedConvolution(g, group);
    groups.push_back({group, pc});
    needed.push_back(pc.data);
    needed.push_back(group.output);
    for (const AluStep& s : pc.epilogue)
      if (!s.immediate && g.node(s.operand).kind != graph::NodeKind::Constant) needed.push_back(s.operand);
  }
  ASSERT_EQ(groups.size(), 19u);
  auto values = interpretNodes(g, needed, imageSize);

  int int32Results = 0, fusedShortcuts = 0;
  uint64_t networkGemms = 0;
  for (const auto& [group, pc] : groups) {
    const std::string& name = g.node(group.output).name;
    Conv2dWorkload w = Conv2dWorkload::of(g, pc.convolution);
    networkGemms += uint64_t(w.gemmCount());
    // Only the last convolution (int32 into the global pooling) leaves as byte planes: the
    // shortcuts' casts to int32 and shifts are fused into the groups that add them.
    int32Results += pc.storedBytes == 4;
    for (const AluStep& s : pc.epilogue) fusedShortcuts += s.operandInt8;
    int accepted = 0;
    for (const Conv2dTiling& tiling : candidateTilings(w)) {
      if (tilingProblem(w, tiling, pc, HardwareConfig{})) continue;
      ++accepted;
      // In simulated-time order, and in random orders of the modules: equal results show that
      // the dependency tokens guard every buffer the modules share.
      for (uint64_t seed : {0, 1, 2}) {
        SimulatorOptions order;
        order.order = seed == 0 ? ExecutionOrder::Timed : ExecutionOrder::Random;
        order.seed = seed;
        Simulator simulator(HardwareConfig{}, order);
        CommandStream stream(simulator);
        runtime::Tensor got = runConv2dGroup(stream, g, group, pc, tiling, [&](int id) {
          return g.node(id).kind == graph::NodeKind::Constant ? g.constant(id) : values.at(id);
        });
        uint64_t gemms = simulator.stats().gemmCounter;
        const runtime::Tensor& want = values.at(group.output);
        ASSERT_EQ(want.nbytes(), got.nbytes()) << name;
        EXPECT_EQ(std::memcmp(want.data(), got.data(), got.nbytes()), 0)
            << name << " with tiles of " << tiling.rows << "x" << tiling.columns << ", " << tiling.inputBlocks << " in, "
            << tiling.outputBlocks << " out, " << tiling.loadBufferSets << " load sets, " << tiling.accumulatorSets
            << " accumulator sets, order " << int(order.order) << " seed " << order.seed;
        EXPECT_EQ(gemms, uint64_t(w.gemmCount())) << name;
      }
    }
    EXPECT_GE(accepted, 3) << name;
  }
  EXPECT_EQ(int32Results, 1);
  EXPECT_EQ(fusedShortcuts, 8);  // resnet-18's eight residual adds, each an int8 load (ACC_8BIT) and shift
  // Seed 004's count for resnet-18 at 224x224: 1,695,547,392 multiply-adds / 256.
  if (imageSize == 224) {
    EXPECT_EQ(networkGemms, 6623232u);
  }
}

TEST(VtaNetwork, Resnet18WithItsConvolutionsOnTheSimulatorEqualsTheInterpreter) {
  graph::registerStandardOps();
  const int64_t imageSize = TESSEL_RESNET_IMAGE_SIZE;
  graph::Graph g = packedResnet18(imageSize);
  auto image = runtime::Tensor::empty({1, 3, imageSize, imageSize}, DataType::float32());
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int64_t i = 0; i < image.numel(); ++i) image.dataAs<float>()[i] = dist(rng);
  auto want = graph::interpretGraph(g, {{"data", image}});
  Simulator simulator;
  CommandStream stream(simulator);
  std::vector<VtaGroupRun> runs;
  auto got = runWithVta(g, {{"data", image}}, stream, {}, &runs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].nbytes(), want[o].nbytes());
    EXPECT_EQ(std::memcmp(got[o].data(), want[o].data(), got[o].nbytes()), 0) << "output " << o;
  }
  uint64_t gemms = 0, cycles = 0;
  ASSERT_EQ(runs.size(), 19u);
  for (const VtaGroupRun& run : runs) {
    EXPECT_EQ(run.gemms, uint64_t(run.workload.gemmCount())) << run.name;
    EXPECT_LE(run.gemms, run.cycles) << run.name;  // one GEMM micro-op a cycle at most
    gemms += run.gemms;
    cycles += run.cycles;
  }
  EXPECT_EQ(simulator.stats().gemmCounter, gemms);
  EXPECT_EQ(simulator.stats().cycles, cycles);
  if (imageSize == 224) {
    EXPECT_EQ(simulator.stats().gemmCounter, 6623232u);
  }
  expectContains(errorOf([&] { runWithVta(g, {}, stream); }), "the network needs input 'data'");
}

/// resnet-18's 56x56, 64 -> 64, 3x3 layer.
Conv2dWorkload layer1Workload() {
  Conv2dWorkload w;
  w.inputBlocks = w.outputBlocks = 4;
  w.height = w.width = w.outHeight = w.outWidth = 56;
  w.kernelHeight = w.kernelWidth = 3;
  w.padding = {1, 1, 1, 1};
  return w;
}

/// Cycles of that layer on random data, tiles of 4 rows and one input block (four loads per
/// tile), with `sets` load buffer sets and `accumulatorSets`; its output in `stored`.
uint64_t layerCycles(int64_t sets, int64_t accumulatorSets, std::vector<int8_t>& stored) {
  Conv2dWorkload w = layer1Workload();
  PackedConvolution group;
  group.storedBytes = 1;
  std::mt19937 rng(5);
  auto randomBytes = [&](size_t n) {
    std::vector<int8_t> v(n);
    for (auto& x : v) x = int8_t(rng());
    return v;
  };
  Simulator simulator;
  CommandStream stream(simulator);
  auto data = randomBytes(size_t(4 * 56 * 56 * 16)), weight = randomBytes(size_t(4 * 4 * 9 * 256));
  Conv2dBuffers buffers{stream.allocate(data.size()), stream.allocate(weight.size()), stream.allocate(data.size()), {}};
  stream.copyToDevice(buffers.data, data.data(), data.size());
  stream.copyToDevice(buffers.weight, weight.data(), weight.size());
  emitConv2d(stream, w, Conv2dTiling{4, 56, 1, 1, sets, accumulatorSets}, group, buffers);
  stream.synchronize();
  stored.resize(data.size());
  stream.copyFromDevice(buffers.output, stored.data(), stored.size());
  return simulator.lastRunCycles();
}

TEST(VtaConv2dLowering, BufferSetsOverlapLoadsAndStoresWithCompute) {
  std::vector<int8_t> one, two, twoAndTwo;
  uint64_t serial = layerCycles(1, 1, one), overlapped = layerCycles(2, 1, two), both = layerCycles(2, 2, twoAndTwo);
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, twoAndTwo);
  EXPECT_LT(double(overlapped), 0.9 * double(serial)) << serial << " cycles with one set, " << overlapped << " with two";
  EXPECT_LT(both, overlapped) << "two accumulator sets: " << both << " cycles, one: " << overlapped;
}

// The MAX of a clip after a relu, a rounding add and a shift cannot change the value: it is
// dropped; the same clip after an add of an int32 input of unknown range stays.
TEST(VtaAluEpilogue, ClampsThatCannotChangeTheValueAreDropped) {
  graph::registerStandardOps();
  auto zeros = [](std::vector<int64_t> shape, DataType dtype) {
    auto t = runtime::Tensor::empty(std::move(shape), dtype);
    std::memset(t.data(), 0, t.nbytes());
    return t;
  };
  auto epilogueOf = [&](bool unknownOperand) {
    graph::Graph g;
    int data = g.addInput("data", {{1, 2, 4, 4, 1, 16}, DataType::int8()});
    int weight = g.addConstant("weight", zeros({2, 2, 3, 3, 16, 16}, DataType::int8()));
    auto bias = zeros({2, 1, 1, 1, 16}, DataType::int32());
    bias.dataAs<int32_t>()[3] = -500;
    int x = g.addOp("conv2d_blocked", {data, weight}, {{"strides", {1, 1}}, {"padding", {1, 1, 1, 1}}, {"out_dtype", "int32"}});
    x = g.addOp("add", {x, g.addConstant("bias", bias)});
    if (unknownOperand) x = g.addOp("add", {x, g.addInput("residual", {{1, 2, 4, 4, 1, 16}, DataType::int32()})});
    x = g.addOp("relu", {x});
    x = g.addOp("add", {x, g.addConstant("half", [&] {
                      auto half = zeros({}, DataType::int32());
                      half.dataAs<int32_t>()[0] = 64;
                      return half;
                    }())});
    x = g.addOp("right_shift", {x}, {{"bits", 7}});
    x = g.addOp("clip", {x}, {{"min", -127.0}, {"max", 127.0}});
    g.markOutput(g.addOp("cast", {x}, {{"dtype", "int8"}}));
    std::vector<std::string> steps;
    for (const AluStep& s : describePackedConvolution(g, graph::fuseOperators(g).at(0)).epilogue)
      steps.push_back(std::string(aluOpcodeName(s.opcode)) + (s.immediate ? " " + std::to_string(*s.immediate) : " operand"));
    return steps;
  };
  // conv + bias is within +-16384 * 288 - 500 (no wrap-around): after the relu, the add and the
  // shift it is in [0, 2^31 >> 7), so MAX -127 goes and MIN 127 stays.
  EXPECT_EQ(epilogueOf(false), (std::vector<std::string>{"ADD operand", "MAX 0", "ADD 64", "SHR 7", "MIN 127"}));
  // An int32 input may be anything: the add may wrap, the relu bounds it below by 0, but the
  // rounding add may wrap again: both clamps stay.
  EXPECT_EQ(epilogueOf(true),
            (std::vector<std::string>{"ADD operand", "ADD operand", "MAX 0", "ADD 64", "SHR 7", "MIN 127", "MAX -127"}));
}

TEST(VtaConv2dLowering, TilesThatDoNotFitAreRefusedWithTheirReason) {
  Conv2dWorkload w = layer1Workload();
  PackedConvolution group;
  group.storedBytes = 1;
  HardwareConfig config;
  EXPECT_EQ(tilingProblem(w, {8, 56, 1, 1}, group, config), std::nullopt);
  expectContains(tilingProblem(w, {56, 56, 1, 1}, group, config).value_or(""),
                 "the tile needs 3364 input buffer elements, the buffer holds 2048");
  expectContains(tilingProblem(w, {14, 56, 1, 4}, group, config).value_or(""),
                 "the tile needs 3136 accumulator buffer elements, the buffer holds 2048");
  expectContains(tilingProblem(w, {3, 56, 1, 1}, group, config).value_or(""), "tile of 3 rows does not divide the 56 output rows");
  expectContains(tilingProblem(w, {8, 56, 2, 1, 3}, group, config).value_or(""),
                 "the tile needs 3480 input buffer elements, the buffer holds 2048");
  expectContains(tilingProblem(w, {8, 56, 1, 1, 5}, group, config).value_or(""), "5 load buffer sets (1 to 4)");
  expectContains(tilingProblem(w, {28, 56, 1, 1, 1, 2}, group, config).value_or(""),
                 "the tile needs 3136 accumulator buffer elements, the buffer holds 2048");
  group.storedBytes = 4;
  expectContains(tilingProblem(w, {8, 56, 1, 1, 1, 2}, group, config).value_or(""), "needs one accumulator set");
  w.padding = {16, 1, 1, 1};
  expectContains(tilingProblem(w, {8, 56, 1, 1}, group, config).value_or(""), "padding of 16 exceeds the DMA's 15");
}

}  // namespace
