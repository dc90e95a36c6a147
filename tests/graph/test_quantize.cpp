// int8 quantization (graph/passes/Quantize.cpp): a network small enough to follow by hand
// against values computed here by hand from TVM's rules, the integer network compiled for the
// CPU against the reference interpreter bit for bit, and the error of a quantized network
// against its float original.
#include <gtest/gtest.h>

#include <cmath>

#include "common/ErrorText.h"
#include "graph/GraphTestSupport.h"
#include "graph/Interpreter.h"
#include "graph/Operators.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/PassManager.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::testsupport;
using namespace tessel::graph::testsupport;

namespace {

runtime::Tensor tensorOf(std::vector<int64_t> shape, const std::vector<float>& values) {
  auto t = runtime::Tensor::empty(std::move(shape), DataType::float32());
  EXPECT_EQ(t.numel(), int64_t(values.size()));
  std::copy(values.begin(), values.end(), t.dataAs<float>());
  return t;
}

int conv1x1(Graph& g, int x, float weight, const std::string& name) {
  int w = g.addConstant(name + "_weight", tensorOf({1, 1, 1, 1}, {weight}));
  return g.addOp("conv2d", {x, w}, Attrs::object(), name);
}

/// x [1, 1, 2, 2] -> c0 = conv 1x1 (weight 1, skipped: it stays float) -> c1 = conv 1x1
/// (weight 0.75) -> + bias -0.25 -> relu -> + c0 -> c2 = conv 1x1 (weight -1.9765625) -> global
/// average pool.
Graph handNetwork() {
  Graph g;
  int x = g.addInput("x", {{1, 1, 2, 2}, DataType::float32()});
  int c0 = conv1x1(g, x, 1.0f, "c0");
  int c1 = conv1x1(g, c0, 0.75f, "c1");
  int bias = g.addConstant("b1", tensorOf({1, 1, 1}, {-0.25f}));
  int r1 = g.addOp("relu", {g.addOp("add", {c1, bias}, Attrs::object(), "a1")}, Attrs::object(), "r1");
  int s = g.addOp("add", {r1, c0}, Attrs::object(), "s");
  int c2 = conv1x1(g, s, -1.9765625f, "c2");
  g.markOutput(g.addOp("global_avg_pool2d", {c2}, Attrs::object(), "pool"));
  return g;
}

class Quantize : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { registerStandardOps(); }
};

TEST_F(Quantize, HandCheckedNetworkFollowsTvmsRoundingShiftsAndClips) {
  Graph q = quantize(handNetwork());
  // By hand, with global scale 8 (inputs in steps of 1/16) and power-of-two weight scales:
  //  c0 stays float: x = [0.15625, -0.15625, 1, 9].
  //  c1's input: x * 16 = [2.5, -2.5, 16, 144] rounded half away from zero and clipped to
  //   +-127: [3, -3, 16, 127] (nearbyint would give 2 and -2).
  //  c1's weight 0.75: scale 2^ceil(log2 0.75) / 128 = 2^-7, value 96. c1 = [288, -288, 1536,
  //   12192] at 2^-11.
  //  bias -0.25: scale 2^-2 / 128 = 2^-9, -0.25 * 512 = -128 clipped to -127, shifted to
  //   2^-11: -508. a1 = [-220, -796, 1028, 11684]; relu: [0, 0, 1028, 11684].
  //  + c0: c0's int8 [3, -3, 16, 127] at 2^-4 shifted left by 7: [384, -384, 2048, 16256];
  //   s = [384, -384, 3076, 27940] at 2^-11.
  //  c2's input: (s + 64) >> 7 = [3, -3 (floor of -2.5), 24, 218 -> 127].
  //  c2's weight -1.9765625: scale 2^ceil(log2 1.98) / 128 = 2^-6, -1.9765625 * 64 = -126.5
  //   rounded away from zero: -127 (nearbyint would give -126).
  //   c2 = [-381, 381, -3048, -16129] at 2^-10.
  //  pool: -19177 / 4 = -4794.25, truncated toward zero: -4794; times 2^-10: -4.681640625.
  auto x = tensorOf({1, 1, 2, 2}, {0.15625f, -0.15625f, 1.0f, 9.0f});
  auto out = interpretGraph(q, {{"x", x}});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].dtype(), DataType::float32());
  EXPECT_EQ(out[0].dataAs<float>()[0], -4.681640625f) << q.toString();
  // Compiled for the CPU (round, shifts, the truncating integer average of a negative sum).
  EXPECT_TRUE(bitEqual(runCompiled(q, {{"x", x}})[0], out[0]));

  // The structure: c0 float, c1 and c2 int8 x int8 -> int32, the weights' int8 values.
  EXPECT_EQ(q.node(q.findNode("c0")).type.dtype, DataType::float32());
  for (const char* conv : {"c1", "c2"}) {
    const Node& n = q.node(q.findNode(conv));
    EXPECT_EQ(n.type.dtype, DataType::int32()) << conv;
    EXPECT_EQ(q.node(n.inputs[0]).type.dtype, DataType::int8()) << conv;
    EXPECT_EQ(q.node(n.inputs[1]).type.dtype, DataType::int8()) << conv;
  }
  EXPECT_EQ(q.constant(q.node(q.findNode("c1")).inputs[1]).dataAs<int8_t>()[0], 96);
  EXPECT_EQ(q.constant(q.node(q.findNode("c2")).inputs[1]).dataAs<int8_t>()[0], -127);
  EXPECT_EQ(q.node(q.findNode("pool")).type.dtype, DataType::int32());
}

TEST_F(Quantize, ClipBoundsAreDividedByTheScaleAndUnruledOperatorsRunInFloat) {
  // x -> c0 (skipped) -> c1 (weight 0.75) -> clip(-0.5, 1) -> global average pool: c1 =
  // [288, -288, 1536, 12192] at 2^-11 (as in the hand-checked network), clipped to
  // [-1024, 2048] (the bounds divided by 2^-11): [288, -288, 1536, 2048], average 896, times
  // 2^-11: 0.4375.
  Graph g;
  int x = g.addInput("x", {{1, 1, 2, 2}, DataType::float32()});
  int c1 = conv1x1(g, conv1x1(g, x, 1.0f, "c0"), 0.75f, "c1");
  int clipped = g.addOp("clip", {c1}, {{"min", -0.5}, {"max", 1.0}}, "clipped");
  g.markOutput(g.addOp("global_avg_pool2d", {clipped}, Attrs::object(), "pool"));
  // A second output through an operator without an integer rule: sigmoid of c1, in float on
  // c1's dequantized values.
  g.markOutput(g.addOp("sigmoid", {c1}, Attrs::object(), "squashed"));
  Graph q = quantize(g);
  const Node& clip = q.node(q.findNode("clipped"));
  EXPECT_EQ(clip.attrs["min"], -1024.0);
  EXPECT_EQ(clip.attrs["max"], 2048.0);
  const Node& squashed = q.node(q.findNode("squashed"));
  EXPECT_EQ(squashed.type.dtype, DataType::float32());
  EXPECT_EQ(q.node(squashed.inputs[0]).name, "c1_dequantized");
  auto out = interpretGraph(q, {{"x", tensorOf({1, 1, 2, 2}, {0.15625f, -0.15625f, 1.0f, 9.0f})}});
  EXPECT_EQ(out[0].dataAs<float>()[0], 0.4375f);
  // sigmoid(12192 * 2^-11 = 5.953125).
  EXPECT_FLOAT_EQ(out[1].dataAs<float>()[3], float(1 / (1 + std::exp(-5.953125))));
}

TEST_F(Quantize, DenseIsQuantizedWhenNotSkipped) {
  // x = [0.5, -0.25, 1, 2] -> x * 16 = [8, -4, 16, 32]; weight [0.5, 0.25, -0.5, 0.125]:
  // scale 2^-1 / 128 = 2^-8, values [128 -> 127, 64, -128 -> -127, 32]; the sum 1016 - 256 -
  // 2032 + 1024 = -248 at 2^-12 is -0.060546875 (float: -0.0625).
  Graph g;
  int x = g.addInput("x", {{1, 4}, DataType::float32()});
  int w = g.addConstant("w", tensorOf({1, 4}, {0.5f, 0.25f, -0.5f, 0.125f}));
  g.markOutput(g.addOp("dense", {x, w}, Attrs::object(), "fc"));
  auto input = tensorOf({1, 4}, {0.5f, -0.25f, 1.0f, 2.0f});
  Graph skipped = quantize(g);  // skip_dense_layer by default
  EXPECT_EQ(skipped.node(skipped.findNode("fc")).type.dtype, DataType::float32());
  QuantizeOptions withDense;
  withDense.skipDense = false;
  Graph q = quantize(g, withDense);
  EXPECT_EQ(q.node(q.findNode("fc")).type.dtype, DataType::int32());
  EXPECT_EQ(interpretGraph(q, {{"x", input}})[0].dataAs<float>()[0], -0.060546875f);
}

TEST_F(Quantize, OptionsChangeWhatIsQuantized) {
  QuantizeOptions all;
  all.skipConvLayers = {};
  Graph q = quantize(handNetwork(), all);
  EXPECT_EQ(q.node(q.findNode("c0")).type.dtype, DataType::int32());
  // Without round_for_shift the one requantization (c2's input) shifts without adding half.
  QuantizeOptions floorShift;
  floorShift.roundForShift = false;
  Graph f = quantize(handNetwork(), floorShift);
  int rounding = 0;
  for (const Node& n : f.nodes()) rounding += n.name.find("round_bias") != std::string::npos;
  EXPECT_EQ(rounding, 0);
  Graph rounded = quantize(handNetwork());
  for (const Node& n : rounded.nodes()) rounding += n.name.find("round_bias") != std::string::npos;
  EXPECT_EQ(rounding, 1);
}

TEST_F(Quantize, BadInputIsReportedWithItsPlace) {
  QuantizeOptions odd;
  odd.globalScale = 23.0;
  expectContains(errorOf([&] { quantize(handNetwork(), odd); }), "global scale 23 is not a power of two");
  QuantizeOptions negative;
  negative.skipConvLayers = {-1};
  expectContains(errorOf([&] { quantize(handNetwork(), negative); }), "skipped conv2d layer -1");

  Graph g;
  int x = g.addInput("x", {{1, 1, 2, 2}, DataType::float32()});
  int w = g.addInput("w", {{1, 1, 1, 1}, DataType::float32()});
  int first = conv1x1(g, x, 1.0f, "first");
  g.markOutput(g.addOp("conv2d", {first, w}, Attrs::object(), "runtime_weight"));
  std::string error = errorOf([&] { quantize(g); });
  expectContains(error, "node 'runtime_weight' (conv2d)");
  expectContains(error, "operand 'w' must be a constant");
  EXPECT_NO_THROW(lookupGraphPass("quantize"));
}

/// data [1, 8, 12, 12] -> conv 3x3 (float) -> relu -> max pool -> two residual blocks of
/// conv 3x3 + bias -> relu -> conv 3x3 + bias, + shortcut -> relu -> global average pool.
Graph smallResidualNetwork() {
  Graph g;
  int x = g.addInput("data", {{1, 8, 12, 12}, DataType::float32()});
  auto conv = [&](int in, int64_t channels, const std::string& name, uint32_t seed) {
    int64_t inChannels = g.node(in).type.shape[1];
    int w = g.addConstant(name + "_w", randomTensor({channels, inChannels, 3, 3}, seed, 1.0f / float(3 * inChannels)));
    int c = g.addOp("conv2d", {in, w}, {{"padding", {1, 1}}}, name);
    int b = g.addConstant(name + "_b", randomTensor({channels, 1, 1}, seed + 100, 0.1f));
    return g.addOp("add", {c, b}, Attrs::object(), name + "_bias");
  };
  int y = g.addOp("relu", {conv(x, 16, "stem", 1)}, Attrs::object(), "stem_relu");
  y = g.addOp("max_pool2d", {y}, {{"kernel", {2, 2}}, {"strides", {2, 2}}}, "pool");
  for (int block = 0; block < 2; ++block) {
    std::string name = "block" + std::to_string(block);
    int h = g.addOp("relu", {conv(y, 16, name + "_1", 10 + uint32_t(block))}, Attrs::object(), name + "_relu1");
    int sum = g.addOp("add", {conv(h, 16, name + "_2", 20 + uint32_t(block)), y}, Attrs::object(), name + "_add");
    y = g.addOp("relu", {sum}, Attrs::object(), name + "_relu2");
  }
  g.markOutput(g.addOp("global_avg_pool2d", {y}, Attrs::object(), "global_pool"));
  return g;
}

TEST_F(Quantize, SmallNetworkStaysCloseToFloat) {
  Graph g = smallResidualNetwork();
  Graph q = quantize(g);
  auto data = randomTensor({1, 8, 12, 12}, 7, 2.0f);
  auto want = interpretGraph(g, {{"data", data}})[0];
  auto got = interpretGraph(q, {{"data", data}})[0];
  double largest = 0, worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) largest = std::max(largest, double(std::fabs(want.dataAs<float>()[i])));
  for (int64_t i = 0; i < want.numel(); ++i)
    worst = std::max(worst, std::fabs(double(got.dataAs<float>()[i]) - want.dataAs<float>()[i]));
  ASSERT_GT(largest, 0.1);
  // Inputs in steps of 1/16 and 8-bit weights through five layers: a few percent.
  EXPECT_LT(worst / largest, 0.05) << "worst " << worst << " of " << largest;
  EXPECT_GT(worst, 0.0);  // it did quantize
}

TEST_F(Quantize, CompiledIntegerNetworkMatchesTheInterpreterBitForBit) {
  QuantizeOptions all;
  all.skipConvLayers = {};  // integers from the input on: x * 16 rounds the same everywhere
  Graph q = quantize(smallResidualNetwork(), all);
  q.markOutput(q.findNode("global_pool"));  // the int32 averages, before dequantizing
  auto data = randomTensor({1, 8, 12, 12}, 8, 4.0f);
  auto want = interpretGraph(q, {{"data", data}});
  auto got = runCompiled(q, {{"data", data}});
  ASSERT_EQ(got.size(), 2u);
  for (size_t o = 0; o < 2; ++o) EXPECT_TRUE(bitEqual(got[o], want[o])) << "output " << o;
  int nonzero = 0;
  for (int64_t i = 0; i < want[1].numel(); ++i) nonzero += want[1].dataAs<int32_t>()[i] != 0;
  EXPECT_GT(nonzero, 4);
}

}  // namespace
