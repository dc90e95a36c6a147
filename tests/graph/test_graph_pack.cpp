// Graph packing (graph/passes/GraphPack.cpp): the packed layouts and shapes, channel padding,
// the packed network computing bit for bit what the unpacked one computes, and errors that
// name a missing or misplaced start and stop operator.
#include <gtest/gtest.h>

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

/// data [1, 3, 8, 8] -> conv 3x3 (3 -> 8) -> relu -> max pool 2x2 -> conv 3x3 (8 -> 20) + bias
/// -> relu -> conv 1x1 (20 -> 20) + bias, + conv 1x1 shortcut (8 -> 20) -> relu -> global
/// average pool -> flatten -> dense (float). No channel count is a multiple of 16.
Graph oddChannelNetwork() {
  Graph g;
  int x = g.addInput("data", {{1, 3, 8, 8}, DataType::float32()});
  auto conv = [&](int in, int64_t channels, int64_t kernel, const std::string& name, uint32_t seed) {
    int64_t inChannels = g.node(in).type.shape[1];
    float limit = 1.0f / float(kernel * inChannels);
    int w = g.addConstant(name + "_w", randomTensor({channels, inChannels, kernel, kernel}, seed, limit));
    int c = g.addOp("conv2d", {in, w}, {{"padding", {kernel / 2, kernel / 2}}}, name);
    int b = g.addConstant(name + "_b", randomTensor({channels, 1, 1}, seed + 100, 0.2f));
    return g.addOp("add", {c, b}, Attrs::object(), name + "_bias");
  };
  int y = g.addOp("relu", {conv(x, 8, 3, "stem", 1)}, Attrs::object(), "stem_relu");
  y = g.addOp("max_pool2d", {y}, {{"kernel", {2, 2}}, {"strides", {2, 2}}}, "pool");
  int h = g.addOp("relu", {conv(y, 20, 3, "c1", 2)}, Attrs::object(), "c1_relu");
  int sum = g.addOp("add", {conv(h, 20, 1, "c2", 3), conv(y, 20, 1, "shortcut", 4)}, Attrs::object(), "sum");
  y = g.addOp("relu", {sum}, Attrs::object(), "sum_relu");
  y = g.addOp("flatten", {g.addOp("global_avg_pool2d", {y}, Attrs::object(), "global_pool")}, Attrs::object(), "flat");
  int w = g.addConstant("fc_w", randomTensor({5, 20}, 5, 0.3f));
  g.markOutput(g.addOp("dense", {y, w}, Attrs::object(), "fc"));
  return g;
}

class GraphPack : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { registerStandardOps(); }
};

void expectBitEqual(const std::vector<runtime::Tensor>& a, const std::vector<runtime::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t o = 0; o < a.size(); ++o) {
    EXPECT_TRUE(bitEqual(a[o], b[o])) << "output " << o;
  }
}

TEST_F(GraphPack, QuantizedNetworkPackedComputesTheSameBitForBit) {
  Graph q = quantize(oddChannelNetwork());
  Graph packed = graphPack(q);
  // Convolutions after the max pool are blocked: int8 NCHW1n16c data, OIHW16o16i weights,
  // channels padded (8 -> 16, 20 -> 32); the stem before the start is untouched.
  EXPECT_EQ(packed.node(packed.findNode("stem")).op, "conv2d");
  const Node& c1 = packed.node(packed.findNode("c1"));
  EXPECT_EQ(c1.op, "conv2d_blocked");
  EXPECT_EQ(c1.type.shape, (std::vector<int64_t>{1, 2, 4, 4, 1, 16}));
  EXPECT_EQ(packed.node(c1.inputs[0]).type.shape, (std::vector<int64_t>{1, 1, 4, 4, 1, 16}));
  EXPECT_EQ(packed.node(c1.inputs[0]).type.dtype, DataType::int8());
  EXPECT_EQ(packed.node(c1.inputs[1]).type.shape, (std::vector<int64_t>{2, 1, 3, 3, 16, 16}));
  const Node& c2 = packed.node(packed.findNode("c2"));
  EXPECT_EQ(packed.node(c2.inputs[1]).type.shape, (std::vector<int64_t>{2, 2, 1, 1, 16, 16}));
  const Node& bias = packed.node(packed.findNode("c1_bias"));
  EXPECT_EQ(packed.node(bias.inputs[1]).type.shape, (std::vector<int64_t>{2, 1, 1, 1, 16}));
  EXPECT_EQ(packed.node(packed.findNode("sum")).type.shape, (std::vector<int64_t>{1, 2, 4, 4, 1, 16}));
  // The stop operator reads NCHW again, with the padding channels sliced off.
  const Node& pool = packed.node(packed.findNode("global_pool"));
  EXPECT_EQ(packed.node(pool.inputs[0]).type.shape, (std::vector<int64_t>{1, 20, 4, 4}));

  for (uint32_t seed : {11u, 12u}) {
    std::map<std::string, runtime::Tensor> inputs{{"data", randomTensor({1, 3, 8, 8}, seed, 4.0f)}};
    expectBitEqual(interpretGraph(packed, inputs), interpretGraph(q, inputs));
  }
}

TEST_F(GraphPack, CompiledPackedIntegerNetworkMatchesTheInterpreter) {
  QuantizeOptions all;
  all.skipConvLayers = {};  // integers from the input on, and the int32 averages compared
  Graph q = quantize(oddChannelNetwork(), all);
  q.markOutput(q.findNode("global_pool"));
  Graph packed = graphPack(q);
  std::map<std::string, runtime::Tensor> inputs{{"data", randomTensor({1, 3, 8, 8}, 14, 4.0f)}};
  auto want = interpretGraph(q, inputs)[1];
  EXPECT_TRUE(bitEqual(interpretGraph(packed, inputs)[1], want));
  EXPECT_TRUE(bitEqual(runCompiled(packed, inputs)[1], want));
}

TEST_F(GraphPack, BlocksComeFromTheOptions) {
  GraphPackOptions options;
  options.batchBlock = 2;
  options.channelBlock = 4;
  Graph g;
  int x = g.addInput("x", {{2, 4, 5, 5}, DataType::float32()});
  int pooled = g.addOp("max_pool2d", {x}, {{"kernel", {1, 1}}}, "start");
  int w = g.addConstant("w", randomTensor({6, 4, 3, 3}, 1, 0.5f));
  int c = g.addOp("conv2d", {pooled, w}, {{"padding", {1, 1}}}, "conv");
  int b = g.addOp("bias_add", {c, g.addConstant("b", randomTensor({6}, 2, 0.5f))}, {{"axis", 1}}, "bias");
  g.markOutput(g.addOp("global_avg_pool2d", {g.addOp("relu", {b}, Attrs::object(), "relu")}, Attrs::object(), "stop"));
  Graph packed = graphPack(g, options);
  const Node& conv = packed.node(packed.findNode("conv"));
  EXPECT_EQ(conv.type.shape, (std::vector<int64_t>{1, 2, 5, 5, 2, 4}));
  EXPECT_EQ(packed.node(conv.inputs[1]).type.shape, (std::vector<int64_t>{2, 1, 3, 3, 4, 4}));
  const Node& bias = packed.node(packed.findNode("bias"));
  EXPECT_EQ(bias.op, "add");
  EXPECT_EQ(packed.node(bias.inputs[1]).type.shape, (std::vector<int64_t>{2, 1, 1, 1, 4}));
  std::map<std::string, runtime::Tensor> inputs{{"x", randomTensor({2, 4, 5, 5}, 3, 1.0f)}};
  auto want = interpretGraph(g, inputs)[0], got = interpretGraph(packed, inputs)[0];
  // Float sums in another order: equal to rounding.
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_NEAR(got.dataAs<float>()[i], want.dataAs<float>()[i], 1e-5);
}

TEST_F(GraphPack, StartAndStopAreFoundByNameAndIndex) {
  Graph q = quantize(oddChannelNetwork());
  GraphPackOptions options;
  options.start = parseOperatorOccurrence("relu:1");  // c1_relu: the region starts later
  Graph packed = graphPack(q, options);
  EXPECT_EQ(packed.node(packed.findNode("c1")).op, "conv2d");
  EXPECT_EQ(packed.node(packed.findNode("c2")).op, "conv2d_blocked");
  EXPECT_EQ(packed.node(packed.findNode("shortcut")).op, "conv2d");  // reads no packed value
  std::map<std::string, runtime::Tensor> inputs{{"data", randomTensor({1, 3, 8, 8}, 13, 4.0f)}};
  expectBitEqual(interpretGraph(packed, inputs), interpretGraph(q, inputs));

  auto at = parseOperatorOccurrence("max_pool2d");
  EXPECT_EQ(at.op, "max_pool2d");
  EXPECT_EQ(at.index, 0);
  EXPECT_EQ(parseOperatorOccurrence("cast:186").index, 186);
  expectContains(errorOf([] { parseOperatorOccurrence("max_pool2d:x"); }), "'x' is not an index");
  expectContains(errorOf([] { parseOperatorOccurrence(":1"); }), "the name is empty");
  expectContains(errorOf([] { parseOperatorOccurrence("maxpool"); }), "no operator is named 'maxpool'");
}

TEST_F(GraphPack, ErrorsNameTheMissingOrMisplacedOperator) {
  Graph q = quantize(oddChannelNetwork());
  GraphPackOptions options;
  options.start = {"avg_pool2d", 0};
  expectContains(errorOf([&] { graphPack(q, options); }), "the start operator 'avg_pool2d' is not in the graph");
  options = {};
  options.stop = {"softmax", 0};
  expectContains(errorOf([&] { graphPack(q, options); }), "the stop operator 'softmax' is not in the graph");
  options = {};
  options.start = {"max_pool2d", 1};
  expectContains(errorOf([&] { graphPack(q, options); }),
                 "the start operator 'max_pool2d' index 1 asked for, but the graph has 1 of them");
  options = {};
  options.start = {"dense", 0};
  expectContains(errorOf([&] { graphPack(q, options); }), "the stop operator 'global_avg_pool2d' (node 'global_pool') comes before");
  options = {};
  options.stop = {"dense", 0};  // global_avg_pool2d inside the region has no packed form
  std::string error = errorOf([&] { graphPack(q, options); });
  expectContains(error, "node 'global_pool' (global_avg_pool2d)");
  expectContains(error, "has no packed form");
  options = {};
  options.channelBlock = 0;
  expectContains(errorOf([&] { graphPack(q, options); }), "blocks must be positive");
  EXPECT_NO_THROW(lookupGraphPass("graph_pack"));
}

}  // namespace
