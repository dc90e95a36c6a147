// The graph passes on small graphs of real operators: each rewrite is checked for its shape
// (what it removed, inserted, renamed) and, through the reference interpreter, for computing
// exactly what the original graph computes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "common/ErrorText.h"
#include "graph/Fusion.h"
#include "graph/GraphTestSupport.h"
#include "graph/Interpreter.h"
#include "graph/Operators.h"
#include "graph/passes/ConstantEvaluation.h"
#include "graph/passes/GraphPasses.h"
#include "graph/passes/PassManager.h"
#include "support/Error.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::testsupport;
using namespace tessel::graph::testsupport;  // randomTensor

namespace {

int countOps(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == NodeKind::Op && node.op == op;
  return n;
}

/// Largest difference of the two graphs' outputs relative to the largest reference magnitude,
/// on random inputs of the original graph's input types (`converted` may take them transposed:
/// the input interface never changes).
double outputDifference(const Graph& original, const Graph& rewritten, uint32_t seed = 5) {
  std::map<std::string, runtime::Tensor> inputs;
  for (int id : original.inputIds()) inputs[original.node(id).name] = randomTensor(original.node(id).type.shape, seed++);
  auto want = interpretGraph(original, inputs);
  auto got = interpretGraph(rewritten, inputs);
  EXPECT_EQ(want.size(), got.size());
  double worst = 0;
  for (size_t o = 0; o < want.size() && o < got.size(); ++o) {
    EXPECT_EQ(want[o].shape(), got[o].shape());
    double scale = 1e-30;
    for (int64_t i = 0; i < want[o].numel(); ++i) scale = std::max(scale, double(std::fabs(want[o].dataAs<float>()[i])));
    for (int64_t i = 0; i < want[o].numel() && i < got[o].numel(); ++i)
      worst = std::max(worst, std::fabs(double(got[o].dataAs<float>()[i]) - want[o].dataAs<float>()[i]) / scale);
  }
  return worst;
}

class GraphPasses : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { registerStandardOps(); }
};

/// data -> conv2d 3x3 (pad 1) -> batch_norm -> relu, in either layout.
Graph convBnRelu(ops::Layout layout, int64_t channels = 6) {
  bool nhwc = layout == ops::Layout::NHWC;
  Graph g;
  int x = g.addInput("data", {nhwc ? std::vector<int64_t>{1, 7, 7, 4} : std::vector<int64_t>{1, 4, 7, 7}, DataType::float32()});
  int w = g.addConstant("w", randomTensor(nhwc ? std::vector<int64_t>{3, 3, 4, channels} : std::vector<int64_t>{channels, 4, 3, 3}, 1));
  int c = g.addOp("conv2d", {x, w}, {{"padding", {1, 1}}, {"layout", ops::layoutName(layout)}}, "conv");
  int gamma = g.addConstant("gamma", randomTensor({channels}, 2, 0.5f, 1.5f));
  int beta = g.addConstant("beta", randomTensor({channels}, 3));
  int mean = g.addConstant("mean", randomTensor({channels}, 4));
  int var = g.addConstant("var", randomTensor({channels}, 5, 0.5f, 2.0f));
  int bn = g.addOp("batch_norm", {c, gamma, beta, mean, var}, {{"axis", nhwc ? 3 : 1}, {"epsilon", 1e-3}}, "bn");
  g.markOutput(g.addOp("relu", {bn}, Attrs::object(), "relu"));
  return g;
}

TEST_F(GraphPasses, SimplifyInferenceTurnsBatchNormIntoScaleAndShift) {
  for (ops::Layout layout : {ops::Layout::NCHW, ops::Layout::NHWC}) {
    Graph g = convBnRelu(layout);
    Graph s = simplifyInference(g);
    EXPECT_EQ(countOps(s, "batch_norm"), 0);
    EXPECT_EQ(countOps(s, "multiply"), 1);
    EXPECT_EQ(countOps(s, "add"), 1);
    // The add carries the batch norm's name; the statistics are gone from the parameters.
    EXPECT_EQ(s.node(s.findNode("bn")).op, "add");
    EXPECT_EQ(s.params().count("mean"), 0u);
    EXPECT_LT(outputDifference(g, s), 1e-5) << ops::layoutName(layout);
  }
}

TEST_F(GraphPasses, BatchNormWithStatisticsFedAtRunTimeIsKept) {
  Graph g;
  int x = g.addInput("data", {{1, 3, 4, 4}, DataType::float32()});
  int gamma = g.addInput("gamma", {{3}, DataType::float32()});
  int rest = g.addConstant("ones", randomTensor({3}, 1, 0.5f, 1.0f));
  g.markOutput(g.addOp("batch_norm", {x, gamma, rest, rest, rest}, {{"axis", 1}}, "bn"));
  Graph s = simplifyInference(g);
  EXPECT_EQ(countOps(s, "batch_norm"), 1);
  EXPECT_LT(outputDifference(g, s), 1e-6);
}

TEST_F(GraphPasses, FoldConstantsEvaluatesConstantSubgraphsOnly) {
  Graph g;
  int x = g.addInput("data", {{2, 3}, DataType::float32()});
  int a = g.addConstant("a", randomTensor({3, 2}, 1));
  int b = g.addConstant("b", randomTensor({2, 3}, 2));
  int t = g.addOp("transpose", {a}, {{"axes", {1, 0}}}, "a_t");          // [2, 3]
  int sum = g.addOp("add", {t, b}, Attrs::object(), "a_t_plus_b");        // constant
  int e = g.addOp("sigmoid", {sum}, Attrs::object(), "squashed");         // constant, via the interpreter
  g.markOutput(g.addOp("multiply", {x, e}, Attrs::object(), "out"));
  Graph f = foldConstants(g);
  EXPECT_EQ(countOps(f, "transpose") + countOps(f, "add") + countOps(f, "sigmoid"), 0);
  EXPECT_EQ(countOps(f, "multiply"), 1);
  // Only the value something still reads stays a parameter.
  EXPECT_EQ(f.params().size(), 1u);
  EXPECT_EQ(f.params().count("squashed"), 1u);
  EXPECT_LT(outputDifference(g, f), 1e-6);
}

// The native folding paths (transpose, reshape, float broadcast arithmetic) against the
// reference interpreter, which folds every other operator.
TEST_F(GraphPasses, NativeConstantEvaluationMatchesTheInterpreter) {
  struct Case {
    std::string op;
    Attrs attrs;
    std::vector<std::vector<int64_t>> shapes;
  };
  std::vector<Case> cases = {
      {"transpose", {{"axes", {2, 3, 1, 0}}}, {{5, 3, 2, 4}}},
      {"transpose", {{"axes", {1, 0, 2}}}, {{1, 6, 7}}},
      {"transpose", Attrs::object(), {{2, 3, 4}}},
      {"reshape", {{"shape", {6, -1}}}, {{2, 3, 4}}},
      {"flatten", Attrs::object(), {{2, 3, 2, 2}}},
      {"multiply", Attrs::object(), {{2, 3, 4, 5}, {3, 1, 1}}},
      {"add", Attrs::object(), {{4, 1}, {3}}},
      {"subtract", Attrs::object(), {{1}, {2, 3}}},
      {"divide", Attrs::object(), {{2, 1, 5}, {2, 3, 1}}},
      {"winograd_weight_transform", {{"tile_size", 4}}, {{3, 3, 5, 7}}},
      {"winograd_weight_transform", {{"tile_size", 2}}, {{3, 3, 2, 3}}},
      {"winograd_weight_transform", {{"tile_size", 4}, {"kernel_layout", "OIHW"}}, {{7, 5, 3, 3}}},
      {"winograd_weight_transform", {{"tile_size", 2}, {"kernel_layout", "OIHW"}}, {{3, 2, 3, 3}}},
      {"pack_conv_weight", {{"block", 16}}, {{3, 3, 2, 32}}},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    Graph g;
    std::vector<int> inputs;
    std::vector<runtime::Tensor> values;
    for (const auto& shape : c.shapes) {
      values.push_back(randomTensor(shape, seed++, 0.5f, 2.0f));
      inputs.push_back(g.addConstant("c" + std::to_string(inputs.size()), values.back()));
    }
    int op = g.addOp(c.op, inputs, c.attrs, "result");
    g.markOutput(op);
    runtime::Tensor native = evaluateOnConstants(c.op, c.attrs, values, g.node(op).type);
    runtime::Tensor reference = interpretGraph(g, {}).at(0);
    ASSERT_EQ(native.shape(), reference.shape()) << c.op;
    for (int64_t i = 0; i < native.numel(); ++i)
      ASSERT_NEAR(native.dataAs<float>()[i], reference.dataAs<float>()[i], 1e-6) << c.op << " element " << i;
  }
}

TEST_F(GraphPasses, UseWinogradRewritesTheChosenStrideOneThreeByThreeConvolutions) {
  Graph g;
  int x = g.addInput("data", {{1, 9, 9, 4}, DataType::float32()});
  Attrs nhwc = {{"padding", {1, 1}}, {"layout", "NHWC"}};
  Attrs strided = {{"padding", {1, 1}}, {"layout", "NHWC"}, {"strides", {2, 2}}};
  int a = g.addOp("conv2d", {x, g.addConstant("wa", randomTensor({3, 3, 4, 8}, 1))}, nhwc, "a");
  int b = g.addOp("conv2d", {a, g.addConstant("wb", randomTensor({3, 3, 8, 8}, 2))}, nhwc, "b");
  int c = g.addOp("conv2d", {b, g.addConstant("wc", randomTensor({3, 3, 8, 8}, 3))}, strided, "c");  // stride 2
  int d = g.addOp("conv2d", {c, g.addConstant("wd", randomTensor({1, 1, 8, 8}, 4))}, {{"layout", "NHWC"}}, "d");  // 1x1
  int runtimeWeight = g.addInput("we", {{3, 3, 8, 8}, DataType::float32()});
  g.markOutput(g.addOp("conv2d", {d, runtimeWeight}, nhwc, "e"));  // weight fed at run time
  EXPECT_TRUE(winogradCandidate(g, a) && winogradCandidate(g, b));
  EXPECT_FALSE(winogradCandidate(g, c) || winogradCandidate(g, d) || winogradCandidate(g, g.outputs()[0]));
  std::vector<std::string> asked;
  Graph w = useWinograd(g, [&](const Graph& graph, int id) {
    asked.push_back(graph.node(id).name);
    return graph.node(id).name == "a" ? 4 : 2;
  });
  EXPECT_EQ(asked, (std::vector<std::string>{"a", "b"}));  // only candidates are asked
  EXPECT_EQ(countOps(w, "conv2d_winograd"), 2);
  EXPECT_EQ(countOps(w, "conv2d"), 3);
  EXPECT_EQ(w.node(w.findNode("a")).attrs.value("tile_size", 0), 4);  // names survive
  EXPECT_EQ(w.node(w.findNode("b")).attrs.value("tile_size", 0), 2);
  Graph folded = foldConstants(w);
  EXPECT_EQ(countOps(folded, "winograd_weight_transform"), 0);
  EXPECT_EQ(folded.node(folded.findNode("wa_winograd")).type.shape, (std::vector<int64_t>{6, 6, 4, 8}));
  EXPECT_LT(outputDifference(g, folded), 1e-4);
  // The choice 0 keeps a convolution direct; a tile size Winograd lacks names itself.
  EXPECT_EQ(countOps(useWinograd(g, [](const Graph&, int) { return 0; }), "conv2d_winograd"), 0);
  expectContains(errorOf([&] { useWinograd(g, [](const Graph&, int) { return 3; }); }), "m = 3 is not supported");
}

// GPU builds' form: NCHW convolutions with OIHW weights, candidates only in that layout.
TEST_F(GraphPasses, UseWinogradInNchwRewritesTheConvolutionsGpuBuildsTransform) {
  Graph g;
  int x = g.addInput("data", {{1, 4, 9, 9}, DataType::float32()});
  Attrs nchw = {{"padding", {1, 1}}, {"layout", "NCHW"}};
  int a = g.addOp("conv2d", {x, g.addConstant("wa", randomTensor({8, 4, 3, 3}, 1))}, nchw, "a");
  int b = g.addOp("conv2d", {a, g.addConstant("wb", randomTensor({8, 8, 3, 3}, 2))}, nchw, "b");
  g.markOutput(g.addOp("relu", {b}));
  EXPECT_TRUE(winogradCandidate(g, a, ops::Layout::NCHW) && winogradCandidate(g, b, ops::Layout::NCHW));
  EXPECT_FALSE(winogradCandidate(g, a) || winogradCandidate(g, b));  // CPU builds transform NHWC ones only
  Graph w = useWinograd(g, [](const Graph& graph, int id) { return graph.node(id).name == "a" ? 4 : 2; }, ops::Layout::NCHW);
  EXPECT_EQ(countOps(w, "conv2d_winograd"), 2);
  EXPECT_EQ(w.node(w.findNode("wa_winograd")).attrs.value("kernel_layout", std::string()), "OIHW");
  EXPECT_EQ(w.node(w.findNode("b")).attrs.value("layout", std::string()), "NCHW");
  Graph folded = foldConstants(w);
  EXPECT_EQ(countOps(folded, "winograd_weight_transform"), 0);
  EXPECT_EQ(folded.node(folded.findNode("wa_winograd")).type.shape, (std::vector<int64_t>{6, 6, 4, 8}));
  EXPECT_EQ(folded.node(folded.findNode("wb_winograd")).type.shape, (std::vector<int64_t>{4, 4, 8, 8}));
  // The interpreter's NCHW Winograd kernel (in doubles) gives the direct convolution's outputs.
  EXPECT_LT(outputDifference(g, folded), 1e-5);
  // The GPU rule: F(4x4) where 4x4 tiles cover the output exactly, else F(2x2).
  EXPECT_EQ(gpuWinogradChoice()(g, a), 2);  // 9x9
  expectContains(errorOf([&] { winogradWeightLayout({{"kernel_layout", "OHWI"}}); }), "kernel_layout 'OHWI' is not HWIO or OIHW");
}

TEST_F(GraphPasses, UsePackedWeightsPacksNhwcConvolutionsWithConstantWeights) {
  Graph g;
  int x = g.addInput("data", {{1, 9, 9, 4}, DataType::float32()});
  Attrs nhwc = {{"padding", {1, 1}}, {"layout", "NHWC"}};
  int a = g.addOp("conv2d", {x, g.addConstant("wa", randomTensor({3, 3, 4, 32}, 1))}, nhwc, "a");
  int b = g.addOp("conv2d", {a, g.addConstant("wb", randomTensor({1, 1, 32, 16}, 2))}, {{"layout", "NHWC"}}, "b");
  int runtimeWeight = g.addInput("wc", {{3, 3, 16, 16}, DataType::float32()});
  g.markOutput(g.addOp("conv2d", {b, runtimeWeight}, nhwc, "c"));  // weight fed at run time
  EXPECT_TRUE(packingCandidate(g, a) && packingCandidate(g, b));
  EXPECT_FALSE(packingCandidate(g, g.outputs()[0]));
  Graph p = foldConstants(usePackedWeights(g, [](const Graph& graph, int id) {
    return graph.node(id).name == "a" ? int64_t(32) : int64_t(16);
  }));
  EXPECT_EQ(countOps(p, "conv2d_packed"), 2);
  EXPECT_EQ(countOps(p, "conv2d"), 1);
  EXPECT_EQ(countOps(p, "pack_conv_weight"), 0);  // folded
  EXPECT_EQ(p.node(p.findNode("wa_packed")).type.shape, (std::vector<int64_t>{1, 3, 3, 4, 32}));
  EXPECT_EQ(p.node(p.findNode("wb_packed")).type.shape, (std::vector<int64_t>{1, 1, 1, 32, 16}));
  EXPECT_LT(outputDifference(g, p), 1e-6);
  expectContains(errorOf([&] { usePackedWeights(g, [](const Graph&, int) { return int64_t(5); }); }), "a block of 5 does not");
}

TEST_F(GraphPasses, UsePackedWeightsPacksMatrixProductsWithConstantWeights) {
  Graph g;
  int x = g.addInput("tokens", {{2, 5, 8}, DataType::float32()});
  int rows = g.addInput("rows", {{10, 8}, DataType::float32()});
  int m = g.addOp("matmul", {rows, g.addConstant("wm", randomTensor({8, 32}, 1))}, Attrs::object(), "m");
  g.markOutput(g.addOp("relu", {m}, Attrs::object(), "act"));
  int flat = g.addInput("flat", {{3, 8}, DataType::float32()});
  int d = g.addOp("dense", {flat, g.addConstant("wd", randomTensor({16, 8}, 2))}, Attrs::object(), "d");  // W [N, K]
  g.markOutput(d);
  int bm = g.addOp("batch_matmul", {x, g.addConstant("wb", randomTensor({8, 16}, 3))}, Attrs::object(), "bm");
  g.markOutput(bm);
  int one = g.addInput("one", {{1, 8}, DataType::float32()});
  int vector = g.addOp("matmul", {one, g.addConstant("wv", randomTensor({8, 16}, 4))}, Attrs::object(), "vector");
  g.markOutput(vector);
  int runtimeWeight = g.addInput("wr", {{8, 16}, DataType::float32()});
  int fed = g.addOp("matmul", {rows, runtimeWeight}, Attrs::object(), "fed");
  g.markOutput(fed);
  EXPECT_TRUE(matmulPackingCandidate(g, m) && matmulPackingCandidate(g, d) && matmulPackingCandidate(g, bm));
  EXPECT_FALSE(matmulPackingCandidate(g, vector));  // one row: the dense rule's matrix-vector product
  EXPECT_FALSE(matmulPackingCandidate(g, fed));     // weight fed at run time
  Graph p = eliminateDeadCode(foldConstants(usePackedWeights(g, [](const Graph& graph, int id) {
    return graph.node(id).name == "m" ? int64_t(32) : int64_t(16);
  })));
  EXPECT_EQ(countOps(p, "matmul_packed"), 3);
  EXPECT_EQ(countOps(p, "pack_matmul_weight"), 0);  // folded
  EXPECT_EQ(countOps(p, "matmul"), 2);
  // A stack of rows times a matrix ([..., M, K] x [K, N], as the ONNX importer writes it)
  // keeps its stack.
  EXPECT_EQ(p.node(p.findNode("bm")).type.shape, (std::vector<int64_t>{2, 5, 16}));
  EXPECT_EQ(p.node(p.findNode("wm_packed")).type.shape, (std::vector<int64_t>{1, 8, 32}));
  EXPECT_EQ(p.node(p.findNode("wd_packed")).type.shape, (std::vector<int64_t>{1, 8, 16}));
  EXPECT_EQ(p.node(p.findNode("wb_packed")).type.shape, (std::vector<int64_t>{1, 8, 16}));
  EXPECT_LT(outputDifference(g, p), 1e-6);
  // The default rule: two vectors' worth of columns (a divisor of them), none for one row.
  target::CpuMachine avx512;
  avx512.vectorBytes = 64;  // 16 floats
  avx512.vectorRegisters = 32;
  PackChoice rule = defaultPackChoice(avx512);
  EXPECT_EQ(rule(g, m), 32);
  EXPECT_EQ(rule(g, d), 16);
  expectContains(errorOf([&] { usePackedWeights(g, [](const Graph&, int) { return int64_t(5); }); }), "a block of 5 does not");
}

/// A patch embedding as a ViT export writes it: conv2d(stride = kernel) + bias_add, then the
/// exporter's flatten(2).transpose(1, 2) to tokens (NCHW) or a reshape (NHWC); `others` adds
/// convolutions that are not patch products (overlapping 2x2 stride 1, 1x1 pointwise, a 3x3
/// stride 3 over 10 pixels with a remainder, a padded 2x2 stride 2).
Graph patchEmbedding(ops::Layout layout, bool others) {
  const bool nhwc = layout == ops::Layout::NHWC;
  const int64_t channels = 3, size = 8, patch = 4, hidden = 5, grid = size / patch;
  auto image = [&](int64_t c, int64_t h) { return nhwc ? std::vector<int64_t>{2, h, h, c} : std::vector<int64_t>{2, c, h, h}; };
  auto weight = [&](int64_t k, int64_t c, int64_t o) {
    return nhwc ? std::vector<int64_t>{k, k, c, o} : std::vector<int64_t>{o, c, k, k};
  };
  Graph g;
  int x = g.addInput("pixels", {image(channels, size), DataType::float32()});
  int conv = g.addOp("conv2d", {x, g.addConstant("patch.weight", randomTensor(weight(patch, channels, hidden), 1))},
                     {{"strides", {patch, patch}}, {"layout", ops::layoutName(layout)}}, "patch");
  int biased = g.addOp("bias_add", {conv, g.addConstant("patch.bias", randomTensor({hidden}, 2))}, {{"axis", nhwc ? 3 : 1}},
                       "patch.bias_add");
  int tokens = nhwc ? g.addOp("reshape", {biased}, {{"shape", {2, grid * grid, hidden}}}, "tokens")
                    : g.addOp("transpose", {g.addOp("reshape", {biased}, {{"shape", {2, hidden, grid * grid}}}, "flatten")},
                              {{"axes", {0, 2, 1}}}, "tokens");
  g.markOutput(g.addOp("relu", {tokens}, Attrs::object(), "out"));
  if (!others) return g;
  struct Conv {
    int64_t kernel, stride, size, pad;
  };
  for (const Conv& c : {Conv{2, 1, 8, 0}, Conv{1, 1, 8, 0}, Conv{3, 3, 10, 0}, Conv{2, 2, 8, 1}}) {
    std::string name = fmt::format("conv_k{}_s{}_n{}_p{}", c.kernel, c.stride, c.size, c.pad);
    int in = g.addInput(name + "_in", {image(channels, c.size), DataType::float32()});
    g.markOutput(g.addOp("conv2d", {in, g.addConstant(name + "_w", randomTensor(weight(c.kernel, channels, 4), 3))},
                         {{"strides", {c.stride, c.stride}}, {"padding", {c.pad, c.pad, c.pad, c.pad}}, {"layout", ops::layoutName(layout)}},
                         name));
  }
  return g;
}

TEST_F(GraphPasses, PatchProductsTurnPatchConvolutionsIntoMatrixProducts) {
  for (ops::Layout layout : {ops::Layout::NCHW, ops::Layout::NHWC}) {
    SCOPED_TRACE(ops::layoutName(layout));
    Graph g = patchEmbedding(layout, /*others=*/true);
    Graph p = patchProducts(g);
    // Only the patch convolution: the other four stay convolutions.
    EXPECT_EQ(countOps(p, "conv2d"), 4) << p.toString();
    EXPECT_EQ(countOps(p, "batch_matmul"), 1);
    EXPECT_EQ(countOps(p, "bias_add"), 0) << "the bias is the product's epilogue";
    const Node& product = p.node(p.findNode("patch_product"));
    EXPECT_EQ(product.type.shape, (std::vector<int64_t>{2, 4, 5}));                                 // [batch, patches, hidden]
    EXPECT_EQ(p.node(product.inputs[0]).type.shape, (std::vector<int64_t>{2, 4, 48}));              // rows of C * KH * KW
    EXPECT_EQ(p.node(p.findNode("patch.bias_add")).type, g.node(g.findNode("patch.bias_add")).type);  // the layout it replaces
    EXPECT_LT(outputDifference(g, p), 1e-6);
    // The standard pipeline: the weight folds to a constant [K, O], and the layout round trip
    // to tokens (NCHW: transpose to the grid's NCHW, flatten, transpose back) is gone.
    OptimizeOptions keep;
    keep.desiredLayout = std::nullopt;
    Graph o = optimizeGraph(patchEmbedding(layout, false), keep);
    EXPECT_EQ(countOps(o, "transpose"), 1) << o.toString();  // the patches' gather alone
    const Node& folded = o.node(o.node(o.findNode("patch_product")).inputs[1]);
    EXPECT_EQ(folded.kind, NodeKind::Constant);
    EXPECT_EQ(folded.type.shape, (std::vector<int64_t>{48, 5}));
    EXPECT_LT(outputDifference(patchEmbedding(layout, false), o), 1e-6);
  }
}

TEST_F(GraphPasses, CollapseLayoutChainsRemovesRoundTripsOnly) {
  Graph g;
  int x = g.addInput("x", {{2, 3, 4, 5}, DataType::float32()});
  // NCHW -> NHWC -> NCHW: the identity.
  int there = g.addOp("transpose", {x}, {{"axes", {0, 2, 3, 1}}}, "to_nhwc");
  int back = g.addOp("transpose", {there}, {{"axes", {0, 3, 1, 2}}}, "to_nchw");
  g.markOutput(g.addOp("relu", {back}, Attrs::object(), "round_trip"));
  // A grid flattened and transposed back to rows: the same elements as a reshape of x.
  int flat = g.addOp("reshape", {g.addOp("transpose", {x}, {{"axes", {0, 2, 3, 1}}}, "grid_nhwc")}, {{"shape", {2, 20, 3}}}, "rows");
  int cols = g.addOp("transpose", {flat}, {{"axes", {0, 2, 1}}}, "columns");
  g.markOutput(g.addOp("reshape", {cols}, {{"shape", {2, 3, 20}}}, "flattened"));
  // A real transpose (heads split), and a round trip whose middle is also read elsewhere.
  g.markOutput(g.addOp("transpose", {g.addOp("reshape", {x}, {{"shape", {2, 12, 5}}}, "heads")}, {{"axes", {0, 2, 1}}}, "split"));
  int shared = g.addOp("transpose", {x}, {{"axes", {0, 2, 3, 1}}}, "shared_nhwc");
  g.markOutput(g.addOp("transpose", {shared}, {{"axes", {0, 3, 1, 2}}}, "shared_back"));
  g.markOutput(g.addOp("sigmoid", {shared}, Attrs::object(), "shared_reader"));
  // A round trip that is itself an output stays a node of its own (not the input x).
  g.markOutput(g.addOp("transpose", {g.addOp("transpose", {x}, {{"axes", {0, 2, 3, 1}}}, "out_nhwc")}, {{"axes", {0, 3, 1, 2}}},
                       "out_round_trip"));
  Graph c = collapseLayoutChains(g);
  EXPECT_EQ(c.findNode("to_nhwc"), -1) << c.toString();
  EXPECT_EQ(c.findNode("out_nhwc"), -1);
  EXPECT_EQ(c.node(c.findNode("out_round_trip")).op, "reshape");
  EXPECT_EQ(c.node(c.node(c.findNode("out_round_trip")).inputs[0]).name, "x");
  EXPECT_EQ(c.node(c.node(c.findNode("round_trip")).inputs[0]).name, "x");
  EXPECT_EQ(c.node(c.findNode("flattened")).op, "reshape");
  EXPECT_EQ(c.node(c.node(c.findNode("flattened")).inputs[0]).name, "x");
  EXPECT_EQ(c.findNode("grid_nhwc"), -1);
  EXPECT_EQ(c.node(c.findNode("split")).op, "transpose");
  EXPECT_EQ(c.node(c.findNode("shared_back")).op, "transpose");
  EXPECT_EQ(countOps(c, "transpose"), 3);  // split, shared_nhwc, shared_back
  EXPECT_LT(outputDifference(g, c), 1e-7);
}

TEST_F(GraphPasses, FuseLayoutsIntoProductsPutsOperandChainsInTheProductsFunction) {
  // Attention's layout moves: query, key and value sliced from one projection and split into
  // heads (the key transposed), the context merged back and cut into row slices for a split
  // product; beside them a transpose read by a product and an add, and a chain that is an output.
  Graph g;
  int x = g.addInput("x", {{1, 6, 8}, DataType::float32()});
  int qkv = g.addOp("batch_matmul", {x, g.addConstant("w_qkv", randomTensor({8, 24}, 40))}, Attrs::object(), "qkv");
  auto heads = [&](int64_t offset, std::vector<int64_t> axes, const std::string& name) {
    int slice = g.addOp("strided_slice", {qkv}, {{"begin", {0, 0, offset}}, {"shape", {1, 6, 8}}, {"step", {1, 1, 1}}}, name + "_slice");
    int split = g.addOp("reshape", {slice}, {{"shape", {1, 6, 2, 4}}}, name + "_heads");
    return g.addOp("transpose", {split}, {{"axes", axes}}, name + "_t");
  };
  int q = heads(0, {0, 2, 1, 3}, "q"), k = heads(8, {0, 2, 3, 1}, "k"), v = heads(16, {0, 2, 1, 3}, "v");
  int p = g.addOp("softmax", {g.addOp("batch_matmul", {q, k}, Attrs::object(), "scores")}, {{"axis", -1}}, "p");
  int context = g.addOp("batch_matmul", {p, v}, Attrs::object(), "context");
  int merged = g.addOp("reshape", {g.addOp("transpose", {context}, {{"axes", {0, 2, 1, 3}}}, "context_t")}, {{"shape", {6, 2, 4}}},
                       "merged");
  int rows = g.addOp("transpose", {merged}, {{"axes", {1, 0, 2}}}, "rows");
  int parts = g.addOp("batch_matmul", {rows, g.addConstant("w_out", randomTensor({2, 4, 8}, 41))}, Attrs::object(), "parts");
  g.markOutput(g.addOp("sum", {parts}, {{"axis", {0}}, {"keepdims", true}}, "out"));
  int shared = g.addOp("transpose", {x}, {{"axes", {0, 2, 1}}}, "shared_t");
  g.markOutput(g.addOp("batch_matmul", {shared, g.addConstant("w_s", randomTensor({6, 3}, 42))}, Attrs::object(), "shared_product"));
  g.markOutput(g.addOp("add", {shared, shared}, Attrs::object(), "shared_sum"));
  int shown = g.addOp("transpose", {x}, {{"axes", {0, 2, 1}}}, "shown_t");
  g.markOutput(shown);
  g.markOutput(g.addOp("batch_matmul", {shown, g.addConstant("w_o", randomTensor({6, 3}, 43))}, Attrs::object(), "shown_product"));

  Graph f = fuseLayoutsIntoProducts(g);
  auto marked = [&](const std::string& name) { return f.node(f.findNode(name)).attrs.value("fuse_into_reader", false); };
  for (const char* name : {"q_slice", "q_heads", "q_t", "k_slice", "k_heads", "k_t", "v_slice", "v_heads", "v_t", "context_t", "merged", "rows"})
    EXPECT_TRUE(marked(name)) << name;
  for (const char* name : {"qkv", "scores", "p", "context", "parts", "shared_t", "shown_t"}) EXPECT_FALSE(marked(name)) << name;
  EXPECT_LT(outputDifference(g, f), 1e-7);

  // Each chain computes in the function of the product that reads it; the layout moves make no
  // function of their own.
  auto groupOf = [&](const std::vector<FusedGroup>& groups, const std::string& name) {
    int id = f.findNode(name);
    for (size_t i = 0; i < groups.size(); ++i)
      if (std::find(groups[i].nodes.begin(), groups[i].nodes.end(), id) != groups[i].nodes.end()) return int(i);
    return -1;
  };
  auto groups = fuseOperators(f);
  for (const char* name : {"q_slice", "q_heads", "q_t", "k_slice", "k_t"}) EXPECT_EQ(groupOf(groups, name), groupOf(groups, "scores")) << name;
  for (const char* name : {"v_slice", "v_t"}) EXPECT_EQ(groupOf(groups, name), groupOf(groups, "context")) << name;
  for (const char* name : {"context_t", "merged", "rows"}) EXPECT_EQ(groupOf(groups, name), groupOf(groups, "parts")) << name;
  EXPECT_NE(groupOf(groups, "shared_t"), groupOf(groups, "shared_product"));
  EXPECT_EQ(groups.size() + 4, fuseOperators(g).size());  // the three heads and the merge
  const FusedGroup& scores = groups[size_t(groupOf(groups, "scores"))];
  EXPECT_EQ(scores.inputs, std::vector<int>{f.findNode("qkv")}) << "query and key read one value";
}

TEST_F(GraphPasses, FuseAttentionPutsScoresScaleMaskAndSoftmaxInTheContextsFunction) {
  // Two attention blocks over one input: a masked one (GPT-2's causal where) and one whose
  // scores are also an output of the graph (left alone), beside a softmax over another axis.
  Graph g;
  int x = g.addInput("x", {{1, 2, 6, 4}, DataType::float32()});
  int kt = g.addOp("transpose", {x}, {{"axes", {0, 1, 3, 2}}}, "kt");
  int scores = g.addOp("batch_matmul", {x, kt}, Attrs::object(), "scores");
  int scaled = g.addOp("divide", {scores, g.addConstant("scale", randomTensor({}, 50))}, Attrs::object(), "scaled");
  runtime::Tensor causal = runtime::Tensor::empty({1, 1, 6, 6}, DataType::boolean());
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 6; ++j) causal.dataAs<bool>()[i * 6 + j] = j <= i;
  int masked = g.addOp("where", {g.addConstant("causal", causal), scaled, g.addConstant("lowest", randomTensor({}, 51))}, Attrs::object(),
                       "masked");
  int p = g.addOp("softmax", {masked}, {{"axis", 3}}, "p");
  g.markOutput(g.addOp("batch_matmul", {p, x}, Attrs::object(), "context"));
  int shownScores = g.addOp("batch_matmul", {x, kt}, Attrs::object(), "shown_scores");
  g.markOutput(shownScores);
  g.markOutput(g.addOp("batch_matmul", {g.addOp("softmax", {shownScores}, {{"axis", -1}}, "shown_p"), x}, Attrs::object(), "shown_context"));
  int columns = g.addOp("batch_matmul", {x, kt}, Attrs::object(), "column_scores");
  g.markOutput(g.addOp("batch_matmul", {g.addOp("softmax", {columns}, {{"axis", 2}}, "column_p"), x}, Attrs::object(), "column_context"));

  Graph f = fuseAttention(g);
  auto marked = [&](const std::string& name) { return f.node(f.findNode(name)).attrs.value("fuse_into_reader", false); };
  for (const char* name : {"scores", "scaled", "masked", "p"}) EXPECT_TRUE(marked(name)) << name;
  for (const char* name : {"context", "shown_scores", "shown_p", "column_scores", "column_p", "kt"}) EXPECT_FALSE(marked(name)) << name;
  EXPECT_LT(outputDifference(g, f), 1e-7);
  // The masked block is one function: four fewer than apart (scores, scale, mask and softmax).
  auto groups = fuseOperators(f);
  EXPECT_EQ(groups.size() + 2, fuseOperators(g).size());  // {scores, scaled, masked}, {p} joined the context
}

TEST_F(GraphPasses, CombineParallelProductsMakesQueryKeyAndValueOneProduct) {
  // Three projections of x with biases (a transformer's query, key and value, one narrower),
  // a fourth by a weight of another reduction and a fifth with no bias: only the three combine.
  Graph g;
  int x = g.addInput("x", {{1, 5, 8}, DataType::float32()});
  std::vector<int> outs;
  int64_t columns[] = {6, 6, 4};
  for (int i = 0; i < 3; ++i) {
    int w = g.addConstant(fmt::format("w{}", i), randomTensor({8, columns[i]}, uint32_t(10 + i)));
    int b = g.addConstant(fmt::format("b{}", i), randomTensor({columns[i]}, uint32_t(20 + i)));
    int p = g.addOp("batch_matmul", {x, w}, Attrs::object(), fmt::format("p{}", i));
    outs.push_back(g.addOp("add", {b, p}, Attrs::object(), fmt::format("proj{}", i)));
  }
  int other = g.addOp("batch_matmul", {outs[0], g.addConstant("w_other", randomTensor({6, 3}, 30))}, Attrs::object(), "other");
  int unbiased = g.addOp("batch_matmul", {x, g.addConstant("w_plain", randomTensor({8, 3}, 31))}, Attrs::object(), "plain");
  for (int o : outs) g.markOutput(g.addOp("relu", {o}, Attrs::object(), g.node(o).name + "_relu"));
  g.markOutput(other);
  g.markOutput(unbiased);
  Graph c = combineParallelProducts(g);
  EXPECT_EQ(countOps(c, "batch_matmul"), 3) << c.toString();  // the combined one, `other`, `plain`
  EXPECT_EQ(countOps(c, "strided_slice"), 3);
  EXPECT_EQ(countOps(c, "add"), 1);
  EXPECT_EQ(c.node(c.findNode("proj1")).op, "strided_slice") << "each slice keeps its branch's name";
  EXPECT_EQ(c.node(c.findNode("proj2")).type.shape, (std::vector<int64_t>{1, 5, 4}));
  EXPECT_LT(outputDifference(g, c), 1e-6);
  // It runs in the standard pipeline unless the options say never (--combine-products never).
  EXPECT_EQ(countOps(optimizeGraph(g), "strided_slice"), 3);
  OptimizeOptions apart;
  apart.combineProducts = false;
  EXPECT_EQ(countOps(optimizeGraph(g, apart), "strided_slice"), 0);
}

TEST_F(GraphPasses, SplitReductionsTurnsAProductIntoPartialProductsAndTheirSum) {
  // A projection with a bias and a residual add (the contraction of a transformer's MLP), a
  // 2-D product and one of a [1, 1, M, K] stack, each split in 4; a product of two values (no
  // constant weight) and one of a stack of 2 are not candidates.
  Graph g;
  int x = g.addInput("x", {{1, 16, 256}, DataType::float32()});
  int residual = g.addInput("residual", {{1, 16, 32}, DataType::float32()});
  int p = g.addOp("batch_matmul", {x, g.addConstant("w", randomTensor({256, 32}, 1))}, Attrs::object(), "proj");
  int biased = g.addOp("add", {p, g.addConstant("b", randomTensor({32}, 2))}, Attrs::object(), "proj_bias");
  g.markOutput(g.addOp("add", {biased, residual}, Attrs::object(), "out"));
  int flat = g.addInput("flat", {{16, 256}, DataType::float32()});
  g.markOutput(g.addOp("matmul", {flat, g.addConstant("w2", randomTensor({256, 8}, 3))}, Attrs::object(), "flat_proj"));
  int deep = g.addInput("deep", {{1, 1, 8, 256}, DataType::float32()});
  g.markOutput(g.addOp("batch_matmul", {deep, g.addConstant("w3", randomTensor({256, 8}, 4))}, Attrs::object(), "deep_proj"));
  int stack = g.addInput("stack", {{2, 8, 256}, DataType::float32()});
  g.markOutput(g.addOp("batch_matmul", {stack, g.addConstant("w4", randomTensor({256, 8}, 5))}, Attrs::object(), "stack_proj"));
  int keys = g.addInput("keys", {{1, 256, 8}, DataType::float32()});
  g.markOutput(g.addOp("batch_matmul", {x, keys}, Attrs::object(), "scores"));
  const int products = countOps(g, "batch_matmul") + countOps(g, "matmul");
  int candidates = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) candidates += reductionSplitCandidate(g, int(i));
  EXPECT_EQ(candidates, 3);

  Graph split = applyReductionSplits(g, [](const Graph&, int) { return int64_t(4); });
  EXPECT_EQ(countOps(split, "sum"), 3) << split.toString();
  EXPECT_EQ(countOps(split, "batch_matmul") + countOps(split, "matmul"), products);
  const Node& parts = split.node(split.findNode("proj_parts"));
  EXPECT_EQ(parts.type.shape, (std::vector<int64_t>{4, 16, 32}));
  EXPECT_EQ(split.node(parts.inputs[1]).kind, NodeKind::Constant) << "the weight's blocks are folded";
  EXPECT_EQ(split.node(parts.inputs[1]).type.shape, (std::vector<int64_t>{4, 64, 32}));
  EXPECT_EQ(split.node(split.findNode("proj")).op, "sum") << "the sum keeps the product's name";
  EXPECT_EQ(split.node(split.findNode("deep_proj")).type.shape, (std::vector<int64_t>{1, 1, 8, 8}));
  EXPECT_LT(outputDifference(g, split), 1e-5);
  // The sum takes the bias and the residual add as its epilogue: one function.
  int sumGroups = 0;
  for (const FusedGroup& group : fuseOperators(split)) {
    bool hasSum = false, hasAdd = false;
    for (int id : group.nodes) {
      hasSum = hasSum || split.node(id).op == "sum";
      hasAdd = hasAdd || split.node(id).name == "out";
    }
    sumGroups += hasSum && hasAdd;
  }
  EXPECT_EQ(sumGroups, 1);

  // The GPU rule: parts while the largest tiles (64 x 64) fill fewer than half the
  // multiprocessors, up to two tiles per multiprocessor, each part 128 steps or more.
  auto partsFor = [](int64_t rows, int64_t columns, int64_t reduction, int64_t multiprocessors) {
    Graph h;
    int in = h.addInput("x", {{1, rows, reduction}, DataType::float32()});
    int id = h.addOp("batch_matmul", {in, h.addConstant("w", runtime::Tensor::empty({reduction, columns}, DataType::float32()))});
    return gpuReductionSplitChoice(multiprocessors)(h, id);
  };
  EXPECT_EQ(partsFor(128, 768, 3072, 132), 8);  // BERT-base's contraction: 24 tiles
  EXPECT_EQ(partsFor(128, 768, 768, 132), 4);   // its attention's output projection (8: parts of 96)
  EXPECT_EQ(partsFor(128, 3072, 768, 132), 1);  // its expansion: 96 tiles
  EXPECT_EQ(partsFor(128, 2304, 768, 132), 1);  // query, key and value: 72 tiles
  EXPECT_EQ(partsFor(197, 768, 3072, 132), 4);  // ViT-B/16's contraction: 48 tiles
  EXPECT_EQ(partsFor(128, 768, 3072, 66), 4);   // half the multiprocessors, half the parts
  EXPECT_EQ(partsFor(128, 768, 256, 132), 2);   // parts of 128 steps at least
  EXPECT_EQ(partsFor(128, 768, 3072, 0), 1);    // an unknown device
  expectContains(errorOf([&] { applyReductionSplits(g, [](const Graph&, int) { return int64_t(3); }); }),
                 "node 'proj': 3 parts do not divide its reduction of 256");
}

TEST_F(GraphPasses, FoldScaleAxisMovesPerChannelScalesIntoWeights) {
  for (ops::Layout layout : {ops::Layout::NCHW, ops::Layout::NHWC}) {
    Graph g = convBnRelu(layout);
    Graph s = foldScaleAxis(foldConstants(simplifyInference(g)));
    EXPECT_EQ(countOps(s, "multiply"), 0) << s.toString();
    EXPECT_EQ(countOps(s, "conv2d"), 1);
    EXPECT_LT(outputDifference(g, s), 1e-5) << ops::layoutName(layout);
  }
}

TEST_F(GraphPasses, FoldScaleAxisHandlesDepthwiseWithAMultiplierAndDense) {
  Graph g;
  int x = g.addInput("data", {{1, 3, 6, 6}, DataType::float32()});
  int w = g.addConstant("dw", randomTensor({3, 2, 3, 3}, 1));  // channel multiplier 2 -> 6 channels
  int d = g.addOp("depthwise_conv2d", {x, w}, {{"padding", {1, 1}}, {"layout", "NCHW"}}, "dw_conv");
  int s = g.addConstant("dw_scale", randomTensor({6, 1, 1}, 2));
  int m = g.addOp("multiply", {s, d}, Attrs::object(), "dw_mul");  // the scale on the left
  int f = g.addOp("flatten", {g.addOp("global_avg_pool2d", {m}, {{"layout", "NCHW"}}, "pool")}, Attrs::object(), "flat");
  int fc = g.addOp("dense", {f, g.addConstant("fc_w", randomTensor({5, 6}, 3))}, Attrs::object(), "fc");
  g.markOutput(g.addOp("multiply", {fc, g.addConstant("fc_scale", randomTensor({5}, 4))}, Attrs::object(), "fc_mul"));
  Graph folded = foldScaleAxis(g);
  EXPECT_EQ(countOps(folded, "multiply"), 0) << folded.toString();
  EXPECT_LT(outputDifference(g, folded), 1e-5);
}

TEST_F(GraphPasses, FoldScaleAxisLeavesWhatItCannotFold) {
  Graph g;
  int x = g.addInput("data", {{1, 2, 4, 4}, DataType::float32()});
  int c = g.addOp("conv2d", {x, g.addConstant("w", randomTensor({3, 2, 1, 1}, 1))}, {{"layout", "NCHW"}}, "conv");
  // Varies along the width: not a per-channel scale.
  int spatial = g.addOp("multiply", {c, g.addConstant("by_column", randomTensor({4}, 2))}, Attrs::object(), "by_column_mul");
  // A conv read twice: its weights cannot change for one reader.
  int c2 = g.addOp("conv2d", {x, g.addConstant("w2", randomTensor({3, 2, 1, 1}, 3))}, {{"layout", "NCHW"}}, "conv2");
  int scaled = g.addOp("multiply", {c2, g.addConstant("s2", randomTensor({3, 1, 1}, 4))}, Attrs::object(), "s2_mul");
  int sum = g.addOp("add", {scaled, c2}, Attrs::object(), "sum");
  g.markOutput(g.addOp("add", {spatial, sum}, Attrs::object(), "out"));
  Graph folded = foldScaleAxis(g);
  EXPECT_EQ(countOps(folded, "multiply"), 2);
  EXPECT_LT(outputDifference(g, folded), 1e-6);
}

/// Every layout-sensitive kind of operator on the way: conv, bias, pooling, a residual add with
/// a [C, 1, 1] constant, concatenate, pad, softmax over channels, then flatten and dense.
Graph layoutZoo() {
  Graph g;
  int x = g.addInput("data", {{1, 3, 8, 8}, DataType::float32()});
  int c1 = g.addOp("conv2d", {x, g.addConstant("w1", randomTensor({4, 3, 3, 3}, 1))},
                   {{"padding", {1, 1}}, {"layout", "NCHW"}}, "c1");
  int b1 = g.addOp("bias_add", {c1, g.addConstant("b1_bias", randomTensor({4}, 2))}, {{"axis", 1}}, "b1");
  int r1 = g.addOp("relu", {b1}, Attrs::object(), "r1");
  int dw = g.addOp("depthwise_conv2d", {r1, g.addConstant("dw_weight", randomTensor({4, 1, 3, 3}, 3))},
                   {{"padding", {1, 1}}, {"layout", "NCHW"}}, "dw");
  int shifted = g.addOp("add", {dw, g.addConstant("shift", randomTensor({4, 1, 1}, 4))}, Attrs::object(), "shifted");
  int cat = g.addOp("concatenate", {shifted, r1}, {{"axis", 1}}, "cat");  // 8 channels
  int padded = g.addOp("pad", {cat}, {{"before", {0, 0, 1, 0}}, {"after", {0, 0, 0, 1}}}, "padded");  // 9x9
  int pool = g.addOp("max_pool2d", {padded}, {{"kernel", {3, 3}}, {"strides", {2, 2}}, {"layout", "NCHW"}}, "pool");
  int soft = g.addOp("softmax", {pool}, {{"axis", 1}}, "soft");
  int gap = g.addOp("global_avg_pool2d", {soft}, {{"layout", "NCHW"}}, "gap");
  int flat = g.addOp("flatten", {gap}, Attrs::object(), "flat");
  g.markOutput(g.addOp("dense", {flat, g.addConstant("fc_weight", randomTensor({5, 8}, 5))}, Attrs::object(), "fc"));
  g.markOutput(pool);  // a 4-D output must come back in its own layout
  return g;
}

TEST_F(GraphPasses, ConvertLayoutToNhwcComputesTheSameWithTransposesAtTheBoundariesOnly) {
  Graph g = layoutZoo();
  Graph converted = foldConstants(convertLayout(g, ops::Layout::NHWC));
  for (const Node& n : converted.nodes())
    if (n.attrs.contains("layout")) {
      EXPECT_EQ(n.attrs["layout"], "NHWC") << n.name;
    }
  // One transpose into NHWC for the data, one back for the pooled output; the flatten of the
  // 1x1 pooled features needs none; the weight transposes are folded away.
  EXPECT_EQ(countOps(converted, "transpose"), 2) << converted.toString();
  EXPECT_EQ(converted.node(converted.findNode("cat")).attrs["axis"], 3);
  EXPECT_EQ(converted.node(converted.findNode("soft")).attrs["axis"], 3);
  EXPECT_EQ(converted.node(converted.findNode("data")).type.shape, (std::vector<int64_t>{1, 3, 8, 8}));
  EXPECT_LT(outputDifference(g, converted), 1e-5);
}

TEST_F(GraphPasses, ConvertLayoutBackToNchwRoundTrips) {
  Graph g = layoutZoo();
  Graph nhwc = foldConstants(convertLayout(g, ops::Layout::NHWC));
  Graph back = eliminateDeadCode(foldConstants(convertLayout(nhwc, ops::Layout::NCHW)));
  for (const Node& n : back.nodes())
    if (n.attrs.contains("layout")) {
      EXPECT_EQ(n.attrs["layout"], "NCHW") << n.name;
    }
  EXPECT_LT(outputDifference(g, back), 1e-5);
}

TEST_F(GraphPasses, EliminateDeadCodeKeepsInputsAndWhatOutputsNeed) {
  Graph g;
  int x = g.addInput("data", {{4}, DataType::float32()});
  g.addInput("unused", {{2}, DataType::float32()});
  int live = g.addOp("relu", {x}, Attrs::object(), "live");
  g.addOp("sigmoid", {g.addOp("tanh", {x}, Attrs::object(), "dead1")}, Attrs::object(), "dead2");
  g.addConstant("dead_constant", randomTensor({3}, 1));
  g.markOutput(live);
  Graph d = eliminateDeadCode(g);
  EXPECT_EQ(d.findNode("dead1"), -1);
  EXPECT_EQ(d.findNode("dead2"), -1);
  EXPECT_EQ(d.findNode("dead_constant"), -1);
  EXPECT_GE(d.findNode("unused"), 0);
  EXPECT_EQ(d.nodes().size(), 3u);
}

TEST_F(GraphPasses, PassManagerPrintsAfterTheNamedPassesAndRejectsUnknownOnes) {
  Graph g = convBnRelu(ops::Layout::NCHW);
  std::ostringstream printed;
  PassRunOptions run;
  run.printAfter = {"simplify_inference", "fold_scale_axis"};
  run.printTo = &printed;
  Graph out = optimizeGraph(g, {}, run);
  EXPECT_NE(printed.str().find("// after simplify_inference"), std::string::npos);
  EXPECT_NE(printed.str().find("// after fold_scale_axis"), std::string::npos);
  EXPECT_EQ(printed.str().find("// after fold_constants"), std::string::npos);
  EXPECT_NE(printed.str().find("%bn = add("), std::string::npos) << printed.str();
  EXPECT_LT(outputDifference(g, out), 1e-5);

  std::string unknown = errorOf([&] { runPasses(g, {"fold_everything"}); });
  expectContains(unknown, "unknown graph pass 'fold_everything'");
  expectContains(unknown, "fold_constants");
  run.printAfter = {"no_such_pass"};
  expectContains(errorOf([&] { runPasses(g, {"fold_constants"}, run); }), "unknown graph pass 'no_such_pass'");
  std::string layout = errorOf([] { parseDesiredLayout("NCWH"); });
  expectContains(layout, "unknown layout 'NCWH'");
  expectContains(layout, "keep");
  OptimizeOptions keep;
  keep.desiredLayout = std::nullopt;
  for (const std::string& p : standardPipeline(keep)) EXPECT_EQ(p.find("convert_layout"), std::string::npos);
}

}  // namespace

TEST_F(GraphPasses, SeparableBlocksFuseWhereTheDepthwiseTileMeasuredFaster) {
  // depthwise 3x3 (stride s) + relu, then a 1x1 (or 3x3) conv + relu, on an s x s image.
  auto separable = [](int64_t size, int64_t stride, int64_t pointwiseKernel) {
    Graph g;
    int x = g.addInput("data", {{1, size, size, 16}, DataType::float32()});
    Attrs depthwise = {{"padding", {1, 1}}, {"layout", "NHWC"}, {"strides", {stride, stride}}};
    int d = g.addOp("depthwise_conv2d", {x, g.addConstant("wd", randomTensor({3, 3, 16, 1}, 1))}, depthwise, "dw");
    int r = g.addOp("relu", {d}, Attrs::object(), "dw_relu");
    Attrs pointwise = {{"layout", "NHWC"}, {"padding", {pointwiseKernel / 2, pointwiseKernel / 2}}};
    int p = g.addOp("conv2d", {r, g.addConstant("wp", randomTensor({pointwiseKernel, pointwiseKernel, 16, 32}, 2))}, pointwise, "pw");
    g.markOutput(g.addOp("relu", {p}, Attrs::object(), "pw_relu"));
    EXPECT_EQ(fuseOperators(g).size(), 2u);  // unmarked: one function per convolution, as TVM fuses
    return fuseOperators(fuseSeparableBlocks(g)).size();
  };
  EXPECT_EQ(separable(14, 1, 1), 1u);  // one function: the depthwise tile inside the pointwise loops
  EXPECT_EQ(separable(14, 2, 1), 2u);  // after a stride-2 depthwise convolution: apart
  EXPECT_EQ(separable(7, 1, 1), 2u);   // on a 7x7 image: apart
  EXPECT_EQ(separable(14, 1, 3), 2u);  // not a pointwise convolution
}
