#include <gtest/gtest.h>

#include "common/ErrorText.h"
#include "graph/Graph.h"
#include "support/Error.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::testsupport;

namespace {

// Two small operators defined here, so the graph IR is tested apart from the operator library.
void registerTestOps() {
  OpDef add;
  add.name = "test_add";
  add.pattern = OpPattern::ElemWise;
  add.minInputs = add.maxInputs = 2;
  add.compute = [](const std::vector<te::Tensor>& in, const Attrs&) {
    TESSEL_CHECK(in[0].shape() == in[1].shape(), "test_add: shapes differ");
    return te::compute(in[0].shape(), [&](const std::vector<ir::Var>& i) {
      std::vector<ir::Expr> idx(i.begin(), i.end());
      return in[0](idx) + in[1](idx);
    }, "T_add", "elemwise");
  };
  registerOp(add);
  OpDef matmul;
  matmul.name = "test_matmul";
  matmul.pattern = OpPattern::OutEWiseFusable;
  matmul.minInputs = matmul.maxInputs = 2;
  matmul.compute = [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
    int64_t m = in[0].shape()[0], k = in[0].shape()[1], n = in[1].shape()[1];
    TESSEL_CHECK(in[1].shape()[0] == k, "test_matmul: inner dimensions {} and {} differ", k, in[1].shape()[0]);
    TESSEL_CHECK(attrs.value("transpose", false) == false, "test_matmul: transpose is not supported");
    auto r = te::reduceAxis(k, "k");
    return te::compute({m, n}, [&](const std::vector<ir::Var>& i) { return te::sum(in[0](i[0], r.var) * in[1](r.var, i[1]), {r}); },
                       "T_matmul", "dense");
  };
  registerOp(matmul);
}

class GraphTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { registerTestOps(); }
};

runtime::Tensor zeros(std::vector<int64_t> shape) {
  auto t = runtime::Tensor::empty(std::move(shape), DataType::float32());
  std::fill(t.dataAs<float>(), t.dataAs<float>() + t.numel(), 0.0f);
  return t;
}

TEST_F(GraphTest, BuildsTypedGraphInTopologicalOrder) {
  Graph g;
  int x = g.addInput("data", {{4, 8}, DataType::float32()});
  int w = g.addConstant("weight", zeros({8, 3}));
  int y = g.addOp("test_matmul", {x, w});
  int b = g.addConstant("bias", zeros({4, 3}));
  int z = g.addOp("test_add", {y, b});
  g.markOutput(z);
  EXPECT_EQ(g.node(y).type, (TensorType{{4, 3}, DataType::float32()}));
  EXPECT_EQ(g.node(y).name, "test_matmul");
  EXPECT_EQ(g.node(z).name, "test_add");
  EXPECT_EQ(g.inputIds(), std::vector<int>{x});
  EXPECT_EQ(g.params().size(), 2u);
  EXPECT_EQ(g.findNode("bias"), b);
  EXPECT_EQ(g.findNode("nothing"), -1);
  auto consumers = g.consumers();
  EXPECT_EQ(consumers[size_t(y)], std::vector<int>{z});
  EXPECT_EQ(consumers[size_t(x)], std::vector<int>{y});
  EXPECT_EQ(g.toString(),
            "%data = input : float32[4, 8]\n"
            "%weight = constant : float32[8, 3]\n"
            "%test_matmul = test_matmul(%data, %weight) : float32[4, 3]\n"
            "%bias = constant : float32[4, 3]\n"
            "%test_add = test_add(%test_matmul, %bias) : float32[4, 3]\n"
            "return %test_add\n");
}

TEST_F(GraphTest, GeneratedNamesAreUnique) {
  Graph g;
  int x = g.addInput("x", {{2}, DataType::float32()});
  int a = g.addOp("test_add", {x, x});
  int b = g.addOp("test_add", {a, x});
  int c = g.addOp("test_add", {b, x}, Attrs::object(), "");
  EXPECT_EQ(g.node(a).name, "test_add");
  EXPECT_EQ(g.node(b).name, "test_add_1");
  EXPECT_EQ(g.node(c).name, "test_add_2");
  EXPECT_NE(errorOf([&] { g.addOp("test_add", {a, x}, Attrs::object(), "test_add_1"); }).find("already used"),
            std::string::npos);
}

TEST_F(GraphTest, TypeErrorsNameTheNodeTheOperatorAndTheInputs) {
  Graph g;
  int x = g.addInput("data", {{4, 8}, DataType::float32()});
  int w = g.addConstant("weight", zeros({7, 3}));
  std::string message = errorOf([&] { g.addOp("test_matmul", {x, w}, Attrs::object(), "fc1"); });
  expectContains(message, "node 'fc1'");
  expectContains(message, "%data: float32[4, 8]");
  expectContains(message, "%weight: float32[7, 3]");
  expectContains(message, "inner dimensions 8 and 7 differ");
  // The failed node was not added.
  EXPECT_EQ(g.findNode("fc1"), -1);
  expectContains(errorOf([&] { g.addOp("test_matmul", {x}); }), "takes 2 inputs, got 1");
  expectContains(errorOf([&] { g.addOp("no_such_op", {x}); }), "unknown operator 'no_such_op' (known: ");
  expectContains(errorOf([&] { g.addOp("test_add", {x, 99}); }), "input id 99 does not exist");
  expectContains(errorOf([&] { g.addOp("test_matmul", {x, x}, Attrs::array()); }), "attributes must be a JSON object");
  int w2 = g.addConstant("w2", zeros({8, 3}));
  std::string attrMessage = errorOf([&] { g.addOp("test_matmul", {x, w2}, Attrs{{"transpose", true}}); });
  expectContains(attrMessage, "transpose is not supported");
  expectContains(attrMessage, "{\"transpose\":true}");
}

// Issue 39: the message named every input; an ONNX Concat of 5,000 made it a 95 KB line.
TEST_F(GraphTest, ARefusedNodeWithThousandsOfInputsNamesAFew) {
  Graph g;
  std::vector<int> inputs;
  for (int i = 0; i < 5000; ++i) inputs.push_back(g.addInput("x" + std::to_string(i), {{4, 8}, DataType::float32()}));
  std::string message = errorOf([&] { g.addOp("test_add", inputs, Attrs::object(), "many"); });
  expectContains(message, "takes 2 inputs, got 5000");
  expectContains(message, "node 'many' (test_add(%x0: float32[4, 8], %x1: float32[4, 8],");
  expectContains(message, "... 5000 inputs in all");
  EXPECT_LT(message.size(), 600u) << message;
}

TEST_F(GraphTest, BadInputsAndConstantsAreRejected) {
  Graph g;
  g.addInput("x", {{2}, DataType::float32()});
  expectContains(errorOf([&] { g.addInput("x", {{2}, DataType::float32()}); }), "already used");
  expectContains(errorOf([&] { g.addInput("y", {{0, 2}, DataType::float32()}); }), "invalid shape float32[0, 2]");
  expectContains(errorOf([&] { g.addConstant("c", runtime::Tensor()); }), "undefined");
  expectContains(errorOf([&] { g.markOutput(5); }), "does not exist");
}

TEST_F(GraphTest, InferTypeStandsAlone) {
  auto t = inferType("test_matmul", {{{2, 5}, DataType::float32()}, {{5, 9}, DataType::float32()}}, Attrs::object());
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 9}));
  EXPECT_EQ(t.str(), "float32[2, 9]");
  EXPECT_TRUE(isRegisteredOp("test_add"));
  EXPECT_FALSE(isRegisteredOp("test_sub"));
  EXPECT_STREQ(patternName(lookupOp("test_matmul").pattern), "out_elemwise_fusable");
}

}  // namespace
