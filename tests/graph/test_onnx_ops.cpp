// The ONNX operators of today's exports (reductions, ...), each in a model the test writes
// (common/OnnxModels.h): imported, run by the reference interpreter and compiled with the
// default schedules, both against values computed here by hand; and the errors of what the
// operators cannot mean.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "common/ErrorText.h"
#include "common/FloatTensors.h"
#include "common/OnnxModels.h"
#include "graph/Build.h"
#include "graph/Interpreter.h"
#include "graph/frontends/Onnx.h"
#include "graph/passes/PassManager.h"
#include "ops/Schedules.h"
#include "runtime/GraphExecutor.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::testsupport;

namespace {

void expectValues(const runtime::Tensor& actual, const std::vector<int64_t>& shape, const std::vector<float>& expected,
                  const std::string& what) {
  ASSERT_EQ(actual.shape(), shape) << what;
  for (size_t i = 0; i < expected.size(); ++i) {
    float got = actual.dataAs<float>()[i];
    if (!std::isfinite(expected[i])) EXPECT_TRUE(got == expected[i] || (std::isnan(got) && std::isnan(expected[i]))) << what << " element " << i;
    else EXPECT_NEAR(got, expected[i], 1e-5 * std::max(1.0f, std::fabs(expected[i]))) << what << " element " << i;
  }
}

/// The model's one output for `inputs`, from the interpreter and from the compiled module, each
/// against `expected` of `shape`.
void expectModel(const std::string& bytes, const std::map<std::string, runtime::Tensor>& inputs, const std::vector<int64_t>& shape,
                 const std::vector<float>& expected, const std::string& what) {
  SCOPED_TRACE(what);
  Graph g = importOnnxBytes(bytes, what + ".onnx");
  expectValues(interpretGraph(g, inputs)[0], shape, expected, what + " (interpreter)");
  TempDir dir("tessel-onnx-ops");
  BuildOptions options;
  options.schedule = [](const te::ComputeDAG& dag) { return ops::defaultCpuSchedule(dag); };
  buildGraph(optimizeGraph(g), dir.path(), options);
  auto executor = runtime::GraphExecutor::load(dir.path());
  for (const auto& [name, value] : inputs) executor.setInput(name, value);
  executor.run();
  expectValues(executor.getOutput(0), shape, expected, what + " (compiled)");
}

void expectModel(const std::string& bytes, const runtime::Tensor& x, const std::vector<int64_t>& shape,
                 const std::vector<float>& expected, const std::string& what) {
  expectModel(bytes, {{"x", x}}, shape, expected, what);
}

/// y = op(x) for a float input x of `shape`, in opset `opset`.
std::string unaryModel(OnnxNode node, const std::vector<int64_t>& shape, int64_t opset = 20) {
  node.inputs = {"x"};
  node.outputs = {"y"};
  return onnxModelBytes({node}, {onnxInput("x", shape)}, {onnxOutput("y", shape.size())}, {}, opset, 10);
}

// x = [[1, 2, 3], [4, 5, 6]]
const std::vector<float> kX = {1, 2, 3, 4, 5, 6};

TEST(OnnxOps, ReductionsWithAxesAsAttributeOrInput) {
  auto x = floatTensor({2, 3}, kX);
  // Opset 13: ReduceMean's axes are an attribute, ReduceSum's an input.
  OnnxNode mean{"ReduceMean", "m", {"x"}, {"y"}, {}};
  mean.intLists["axes"] = {-1};
  expectModel(onnxModelBytes({mean}, {onnxInput("x", {2, 3})}, {onnxOutput("y", 2)}, {}, 13), x, {2, 1}, {2, 5}, "mean13");
  OnnxNode sum{"ReduceSum", "s", {"x", "axes"}, {"y"}, {}};
  sum.ints["keepdims"] = 0;
  expectModel(onnxModelBytes({sum}, {onnxInput("x", {2, 3})}, {onnxOutput("y", 1)}, {onnxInt64s("axes", {1}, {0})}, 13), x, {3},
              {5, 7, 9}, "sum13");
  // Opset 18: every reduction takes its axes as an input; none reduces everything.
  OnnxNode max{"ReduceMax", "m", {"x"}, {"y"}, {}};
  max.ints["keepdims"] = 0;
  expectModel(onnxModelBytes({max}, {onnxInput("x", {2, 3})}, {onnxOutput("y", 1)}, {}, 18), x, {1}, {6}, "max18");
  OnnxNode min{"ReduceMin", "m", {"x", "axes"}, {"y"}, {}};
  expectModel(onnxModelBytes({min}, {onnxInput("x", {2, 3})}, {onnxOutput("y", 2)}, {onnxInt64s("axes", {1}, {1})}, 18), x, {2, 1},
              {1, 4}, "min18");
  // An empty axes list with noop_with_empty_axes leaves the input as it is.
  OnnxNode noop{"ReduceMean", "m", {"x"}, {"y"}, {}};
  noop.ints["noop_with_empty_axes"] = 1;
  OnnxNode relu{"Relu", "r", {"y"}, {"z"}, {}};
  Graph g = importOnnxBytes(onnxModelBytes({noop, relu}, {onnxInput("x", {2, 3})}, {onnxOutput("z", 2)}, {}, 18), "noop.onnx");
  expectValues(interpretGraph(g, {{"x", x}})[0], {2, 3}, kX, "noop");
  // Axes that cannot be: out of range, or twice.
  OnnxNode bad{"ReduceSum", "s", {"x", "axes"}, {"y"}, {}};
  expectContains(errorOf([&] {
                   importOnnxBytes(onnxModelBytes({bad}, {onnxInput("x", {2, 3})}, {onnxOutput("y", 2)}, {onnxInt64s("axes", {1}, {2})}, 18),
                                   "bad.onnx");
                 }),
                 "node 's' (ReduceSum): axis 2 is out of range for rank 2");
  expectContains(errorOf([&] {
                   importOnnxBytes(
                       onnxModelBytes({bad}, {onnxInput("x", {2, 3})}, {onnxOutput("y", 2)}, {onnxInt64s("axes", {2}, {1, -1})}, 18),
                       "twice.onnx");
                 }),
                 "node 's' (ReduceSum): axis -1 is listed twice");
}

TEST(OnnxOps, TheMeanOfAnImagesSpatialAxesIsGlobalPooling) {
  // What PyTorch's default exporter writes for adaptive_avg_pool2d(1): ReduceMean over [-2, -1], kept.
  OnnxNode mean{"ReduceMean", "pool", {"x", "axes"}, {"y"}, {}};
  std::string bytes =
      onnxModelBytes({mean}, {onnxInput("x", {1, 2, 2, 2})}, {onnxOutput("y", 4)}, {onnxInt64s("axes", {2}, {-1, -2})}, 18, 10);
  Graph g = importOnnxBytes(bytes, "pool.onnx");
  EXPECT_EQ(g.node(g.outputs()[0]).op, "global_avg_pool2d");
  expectModel(bytes, floatTensor({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40}), {1, 2, 1, 1}, {2.5f, 25}, "pool");
}

TEST(OnnxOps, TheMathOfTransformers) {
  const std::vector<float> v = {-2, -0.5f, 0, 0.5f, 1, 3};
  auto x = floatTensor({2, 3}, v);
  auto each = [&](float (*f)(float)) {
    std::vector<float> out;
    for (float e : v) out.push_back(f(e));
    return out;
  };
  expectModel(unaryModel({"Erf", "f", {}, {}, {}}, {2, 3}), x, {2, 3}, each([](float e) { return std::erf(e); }), "erf");
  expectModel(unaryModel({"Exp", "f", {}, {}, {}}, {2, 3}), x, {2, 3}, each([](float e) { return std::exp(e); }), "exp");
  auto positive = floatTensor({2, 3}, {0, 0.25f, 1, 2, 9, 100});
  expectModel(unaryModel({"Sqrt", "f", {}, {}, {}}, {2, 3}), positive, {2, 3}, {0, 0.5f, 1, std::sqrt(2.0f), 3, 10}, "sqrt");
  // GELU's two forms: x * Phi(x), and torch's tanh approximation.
  expectModel(unaryModel({"Gelu", "f", {}, {}, {}}, {2, 3}), x, {2, 3},
              each([](float e) { return float(0.5 * e * (1 + std::erf(e / std::sqrt(2.0)))); }), "gelu");
  OnnxNode tanhGelu{"Gelu", "f", {}, {}, {}};
  tanhGelu.strings["approximate"] = "tanh";
  expectModel(unaryModel(tanhGelu, {2, 3}), x, {2, 3}, each([](float e) {
                return float(0.5 * e * (1 + std::tanh(std::sqrt(2 / M_PI) * (e + 0.044715 * e * e * e))));
              }),
              "gelu tanh");
  // Pow with a constant exponent (a layer norm's variance written out: (x - mean) ** 2).
  std::string pow = onnxModelBytes({{"Pow", "p", {"x", "two"}, {"y"}, {}}}, {onnxInput("x", {2, 3})}, {onnxOutput("y", 2)},
                                   {onnxFloats("two", {1}, {2})}, 17);
  expectModel(pow, x, {2, 3}, each([](float e) { return e * e; }), "pow");
  // A cube (GPT-2's tanh GELU) is imported as products of the base; another exponent as power.
  std::string cube = onnxModelBytes({{"Pow", "p", {"x", "three"}, {"y"}, {}}}, {onnxInput("x", {2, 3})}, {onnxOutput("y", 2)},
                                    {onnxFloats("three", {}, {3})}, 17);
  expectModel(cube, x, {2, 3}, each([](float e) { return e * e * e; }), "pow 3");
  Graph cubed = importOnnxBytes(cube, "cube.onnx");
  int powers = 0, products = 0;
  for (const auto& n : cubed.nodes()) {
    powers += n.op == "power";
    products += n.op == "multiply";
  }
  EXPECT_EQ(powers, 0);
  EXPECT_EQ(products, 2);
  std::string root = onnxModelBytes({{"Pow", "p", {"x", "half"}, {"y"}, {}}}, {onnxInput("x", {2, 3})}, {onnxOutput("y", 2)},
                                    {onnxFloats("half", {1}, {0.5f})}, 17);
  expectModel(root, positive, {2, 3}, {0, 0.5f, 1, std::sqrt(2.0f), 3, 10}, "pow 0.5");
}

TEST(OnnxOps, ComparisonsAndWhereMakeMasks) {
  auto x = floatTensor({2, 3}, {-2, -0.5f, 0, 0.5f, 1, 3});
  // y = where(x < t, x, 0) with t broadcast from one value; and or not over two comparisons.
  std::string less = onnxModelBytes({{"Less", "c", {"x", "t"}, {"m"}, {}}, {"Where", "w", {"m", "x", "zero"}, {"y"}, {}}},
                                    {onnxInput("x", {2, 3})}, {onnxOutput("y", 2)}, {onnxFloats("t", {1}, {0.5f}), onnxFloats("zero", {1}, {0})},
                                    17);
  expectModel(less, x, {2, 3}, {-2, -0.5f, 0, 0, 0, 0}, "less");
  std::string band = onnxModelBytes(
      {{"GreaterOrEqual", "ge", {"x", "lo"}, {"a"}, {}},
       {"LessOrEqual", "le", {"x", "hi"}, {"b"}, {}},
       {"And", "and", {"a", "b"}, {"inside"}, {}},
       {"Not", "not", {"inside"}, {"outside"}, {}},
       {"Where", "w", {"outside", "one", "zero"}, {"y"}, {}}},
      {onnxInput("x", {2, 3})}, {onnxOutput("y", 2)},
      {onnxFloats("lo", {1}, {-0.5f}), onnxFloats("hi", {1}, {1}), onnxFloats("one", {1}, {1}), onnxFloats("zero", {1}, {0})}, 17);
  expectModel(band, x, {2, 3}, {1, 0, 0, 0, 0, 1}, "band");
  std::string equal = onnxModelBytes({{"Equal", "e", {"x", "half"}, {"m"}, {}}, {"Where", "w", {"m", "one", "x"}, {"y"}, {}}},
                                     {onnxInput("x", {2, 3})}, {onnxOutput("y", 2)}, {onnxFloats("half", {3}, {0, 0.5f, 0}), onnxFloats("one", {1}, {7})},
                                     17);
  expectModel(equal, x, {2, 3}, {-2, -0.5f, 7, 0.5f, 1, 3}, "equal broadcast by rows");
  // What the default exporter's attention writes after its softmax: NaN (a fully masked row) to 0.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::string isnan = onnxModelBytes({{"IsNaN", "n", {"x"}, {"m"}, {}}, {"Where", "w", {"m", "zero", "x"}, {"y"}, {}}},
                                     {onnxInput("x", {2, 3})}, {onnxOutput("y", 2)}, {onnxFloats("zero", {1}, {0})}, 20);
  expectModel(isnan, floatTensor({2, 3}, {1, nan, 2, nan, nan, 3}), {2, 3}, {1, 0, 2, 0, 0, 3}, "isnan");
  // IsInf, both signs or one of them.
  const float inf = std::numeric_limits<float>::infinity();
  auto infinite = floatTensor({2, 3}, {1, inf, -inf, nan, 0, -2});
  std::string isinf = onnxModelBytes({{"IsInf", "i", {"x"}, {"m"}, {}}, {"Where", "w", {"m", "zero", "x"}, {"y"}, {}}},
                                     {onnxInput("x", {2, 3})}, {onnxOutput("y", 2)}, {onnxFloats("zero", {1}, {7})}, 20);
  Graph g = importOnnxBytes(isinf, "isinf.onnx");
  auto y = interpretGraph(g, {{"x", infinite}})[0];
  EXPECT_EQ(y.dataAs<float>()[1], 7);
  EXPECT_EQ(y.dataAs<float>()[2], 7);
  EXPECT_TRUE(std::isnan(y.dataAs<float>()[3]));
  OnnxNode positive{"IsInf", "i", {"x"}, {"m"}, {}};
  positive.ints["detect_negative"] = 0;
  std::string plus = onnxModelBytes({positive, {"Where", "w", {"m", "zero", "x"}, {"y"}, {}}}, {onnxInput("x", {2, 3})},
                                    {onnxOutput("y", 2)}, {onnxFloats("zero", {1}, {7})}, 20);
  expectModel(plus, floatTensor({2, 3}, {1, inf, -inf, 3, 0, -2}), {2, 3}, {1, 7, -inf, 3, 0, -2}, "isinf positive");
  expectContains(errorOf([&] {
                   importOnnxBytes(onnxModelBytes({{"Where", "w", {"x", "x", "x"}, {"y"}, {}}}, {onnxInput("x", {2, 3})},
                                                  {onnxOutput("y", 2)}, {}, 17),
                                   "where.onnx");
                 }),
                 "node 'w' (Where): the condition is float32[2, 3], not bool");
}

TEST(OnnxOps, LayerNormalizationOverTheLastAxes) {
  auto x = floatTensor({2, 4}, {1, 2, 3, 4, -1, 0, 0, 5});
  const float* xv = x.dataAs<float>();
  std::vector<float> scale = {1, 2, 0.5f, -1}, bias = {0, 1, 0, 0.25f};
  // Normalized over `count` elements from `first` on, as ONNX defines it (biased variance).
  auto normalize = [&](int first, int count, double epsilon, std::vector<float>& out, const float* s, const float* b) {
    double mean = 0, var = 0;
    for (int i = 0; i < count; ++i) mean += xv[first + i] / double(count);
    for (int i = 0; i < count; ++i) var += std::pow(xv[first + i] - mean, 2) / double(count);
    for (int i = 0; i < count; ++i) out.push_back(float((xv[first + i] - mean) / std::sqrt(var + epsilon) * s[i] + (b ? b[i] : 0)));
  };
  OnnxNode ln{"LayerNormalization", "ln", {"x", "scale", "bias"}, {"y"}, {}};
  ln.ints["axis"] = -1;
  ln.reals["epsilon"] = 1e-3f;
  std::vector<float> rows;
  normalize(0, 4, 1e-3f, rows, scale.data(), bias.data());
  normalize(4, 4, 1e-3f, rows, scale.data(), bias.data());
  expectModel(onnxModelBytes({ln}, {onnxInput("x", {2, 4})}, {onnxOutput("y", 2)},
                             {onnxFloats("scale", {4}, scale), onnxFloats("bias", {4}, bias)}, 17),
              x, {2, 4}, rows, "layer norm of rows");
  // Over both axes (axis 0), without a bias, the default epsilon: one mean and variance for all.
  OnnxNode all{"LayerNormalization", "ln", {"x", "scale"}, {"y"}, {}};
  all.ints["axis"] = 0;
  std::vector<float> ones(8, 1), whole;
  normalize(0, 8, 1e-5, whole, ones.data(), nullptr);
  expectModel(onnxModelBytes({all}, {onnxInput("x", {2, 4})}, {onnxOutput("y", 2)}, {onnxFloats("scale", {2, 4}, ones)}, 17), x, {2, 4},
              whole, "layer norm of everything");
}

TEST(OnnxOps, GatherOfRunTimeIndicesLooksUpRows) {
  // An embedding table [5, 3] and token ids [1, 4]; ids outside the table are clamped to it.
  std::vector<float> table;
  for (int i = 0; i < 15; ++i) table.push_back(float(i));
  OnnxValue ids = onnxInput("ids", {1, 4});
  ids.int64 = true;
  std::string bytes = onnxModelBytes({{"Gather", "embed", {"table", "ids"}, {"y"}, {}}}, {ids}, {onnxOutput("y", 3)},
                                     {onnxFloats("table", {5, 3}, table)}, 17);
  Graph g = importOnnxBytes(bytes, "embed.onnx");
  EXPECT_EQ(g.node(g.outputs()[0]).op, "take");
  auto idValues = runtime::Tensor::empty({1, 4}, DataType::int64());
  int64_t given[] = {2, 0, -1, 9};
  std::memcpy(idValues.data(), given, sizeof given);
  expectModel(bytes, {{"ids", idValues}}, {1, 4, 3}, {6, 7, 8, 0, 1, 2, 12, 13, 14, 12, 13, 14}, "embedding");
}

TEST(OnnxOps, GatherElementsOfConstantsIsFolded) {
  // What transformers' BERT export writes for its token type buffer indexed by position ids.
  OnnxNode ge{"GatherElements", "ge", {"data", "index"}, {"picked"}, {}};
  ge.ints["axis"] = 1;
  OnnxNode cast{"Cast", "c", {"picked"}, {"f"}, {}};
  cast.ints["to"] = 1;  // FLOAT
  std::string bytes = onnxModelBytes({ge, cast, {"Add", "a", {"x", "f"}, {"y"}, {}}}, {onnxInput("x", {2, 2})}, {onnxOutput("y", 2)},
                                     {onnxInt64s("data", {2, 3}, {10, 11, 12, 20, 21, 22}), onnxInt64s("index", {2, 2}, {2, 0, -1, 1})}, 17);
  Graph g = importOnnxBytes(bytes, "ge.onnx");
  for (const auto& n : g.nodes()) EXPECT_NE(n.type.dtype, DataType::int64()) << n.name << ": folded away";
  expectModel(bytes, floatTensor({2, 2}, {0.5f, 0.5f, 0.5f, 0.5f}), {2, 2}, {12.5f, 10.5f, 22.5f, 21.5f}, "gather elements");
  OnnxNode far = ge;
  std::string bad = onnxModelBytes({far, cast, {"Add", "a", {"x", "f"}, {"y"}, {}}}, {onnxInput("x", {2, 2})}, {onnxOutput("y", 2)},
                                   {onnxInt64s("data", {2, 3}, {10, 11, 12, 20, 21, 22}), onnxInt64s("index", {2, 2}, {2, 0, 3, 1})}, 17);
  expectContains(errorOf([&] { importOnnxBytes(bad, "ge.onnx"); }), "node 'ge' (GatherElements): index 3 is out of range for extent 3");
}

TEST(OnnxOps, ExpandAndTileOfValuesAndOfConstants) {
  auto x = floatTensor({2, 1}, {1, 2});
  // Expand to [2, 3] (the input's 1 broadcast), and to [3, 1, 1] (the result larger than both).
  std::string expand = onnxModelBytes({{"Expand", "e", {"x", "shape"}, {"y"}, {}}}, {onnxInput("x", {2, 1})}, {onnxOutput("y", 2)},
                                      {onnxInt64s("shape", {2}, {2, 3})}, 17);
  expectModel(expand, x, {2, 3}, {1, 1, 1, 2, 2, 2}, "expand");
  std::string grow = onnxModelBytes({{"Expand", "e", {"x", "shape"}, {"y"}, {}}}, {onnxInput("x", {2, 1})}, {onnxOutput("y", 3)},
                                    {onnxInt64s("shape", {3}, {3, 1, 1})}, 17);
  expectModel(grow, x, {3, 2, 1}, {1, 2, 1, 2, 1, 2}, "expand rank");
  std::string tile = onnxModelBytes({{"Tile", "t", {"x", "reps"}, {"y"}, {}}}, {onnxInput("x", {2, 1})}, {onnxOutput("y", 2)},
                                    {onnxInt64s("reps", {2}, {2, 3})}, 17);
  expectModel(tile, x, {4, 3}, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}, "tile");
  // On constants both fold: x + expand(c) + tile(c), no operator of their own left.
  std::string folded = onnxModelBytes({{"Expand", "e", {"c", "shape"}, {"ce"}, {}},
                                       {"Tile", "t", {"c", "reps"}, {"ct"}, {}},
                                       {"Add", "a", {"x", "ce"}, {"s"}, {}},
                                       {"Add", "b", {"s", "ct"}, {"y"}, {}}},
                                      {onnxInput("x", {2, 1})}, {onnxOutput("y", 2)},
                                      {onnxFloats("c", {1, 1}, {10}), onnxInt64s("shape", {2}, {2, 1}), onnxInt64s("reps", {2}, {2, 1})}, 17);
  Graph g = importOnnxBytes(folded, "folded.onnx");
  for (const auto& n : g.nodes()) EXPECT_TRUE(n.op != "broadcast_to" && n.op != "tile") << n.name;
  expectModel(folded, x, {2, 1}, {21, 22}, "folded");
  expectContains(errorOf([&] {
                   importOnnxBytes(onnxModelBytes({{"Expand", "e", {"x", "shape"}, {"y"}, {}}}, {onnxInput("x", {2, 1})}, {onnxOutput("y", 2)},
                                                  {onnxInt64s("shape", {2}, {3, 3})}, 17),
                                   "bad.onnx");
                 }),
                 "node 'e' (Expand): shapes [2, 1] and [3, 3] cannot be broadcast");
  // Hostile extents are refused before any size can overflow.
  for (auto [op, second, values] : std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>>{
           {"Expand", "shape", {int64_t(1) << 31, int64_t(1) << 31}}, {"Tile", "reps", {int64_t(1) << 62, 1}}}) {
    std::string huge = onnxModelBytes({{op, "h", {"x", second}, {"y"}, {}}}, {onnxInput("x", {2, 1})}, {onnxOutput("y", 2)},
                                      {onnxInt64s(second, {2}, values)}, 17);
    EXPECT_NE(errorOf([&] { importOnnxBytes(huge, "huge.onnx"); }), "(no error)") << op;
  }
}

TEST(OnnxOps, ShapeArithmeticOfComparisonsAndWhereFolds) {
  // The legacy exporter's Expand target: where(shape == -1, ones, shape), all constants; and a
  // mask of bool constants (not, and) choosing between values.
  OnnxNode notNode{"Not", "n", {"negative"}, {"kept"}, {}};
  OnnxNode cast{"Cast", "c", {"mask"}, {"maskf"}, {}};
  cast.ints["to"] = 1;
  std::string model = onnxModelBytes(
      {{"Equal", "eq", {"target", "minus_one"}, {"unknown"}, {}},
       {"Where", "pick", {"unknown", "ones", "target"}, {"shape"}, {}},
       {"Expand", "e", {"x", "shape"}, {"wide"}, {}},
       {"Less", "lt", {"signs", "zero"}, {"negative"}, {}},
       notNode,
       {"And", "both", {"kept", "kept"}, {"mask"}, {}},
       cast,
       {"Mul", "m", {"wide", "maskf"}, {"y"}, {}}},
      {onnxInput("x", {2, 1})}, {onnxOutput("y", 2)},
      {onnxInt64s("target", {2}, {-1, 3}), onnxInt64s("minus_one", {1}, {-1}), onnxInt64s("ones", {2}, {1, 1}),
       onnxInt64s("signs", {2, 1}, {-1, 3}), onnxInt64s("zero", {1}, {0})},
      17);
  Graph g = importOnnxBytes(model, "legacy.onnx");
  for (const auto& n : g.nodes()) EXPECT_NE(n.type.dtype, DataType::int64()) << n.name << ": shape arithmetic left in the graph";
  // shape = [1, 3]: x [2, 1] expanded to [2, 3]; mask = not(signs < 0) = [[0], [1]], as floats.
  expectModel(model, floatTensor({2, 1}, {5, 7}), {2, 3}, {0, 0, 0, 7, 7, 7}, "legacy expand");
}

TEST(OnnxOps, RangeAndCumSumOfConstantsFold) {
  // Position ids the way exports compute them from constants: range(0, 4) and running counts.
  OnnxNode range{"Range", "r", {"zero", "four", "one"}, {"ids"}, {}};
  OnnxNode cum{"CumSum", "c", {"ones", "axis"}, {"counts"}, {}};
  OnnxNode exclusive{"CumSum", "e", {"ones", "axis"}, {"before"}, {}};
  exclusive.ints["exclusive"] = 1;
  exclusive.ints["reverse"] = 1;
  OnnxNode cast{"Cast", "f", {"mixed"}, {"fm"}, {}};
  cast.ints["to"] = 1;
  std::string model = onnxModelBytes(
      {range, cum, exclusive, {"Mul", "m1", {"ids", "counts"}, {"p"}, {}}, {"Add", "m2", {"p", "before"}, {"mixed"}, {}}, cast,
       {"Add", "a", {"x", "fm"}, {"y"}, {}}},
      {onnxInput("x", {4})}, {onnxOutput("y", 1)},
      {onnxInt64s("zero", {}, {0}), onnxInt64s("four", {}, {4}), onnxInt64s("one", {}, {1}), onnxInt64s("ones", {4}, {1, 1, 1, 1}),
       onnxInt64s("axis", {}, {0})},
      17);
  // ids [0, 1, 2, 3] * counts [1, 2, 3, 4] + exclusive reverse sums [3, 2, 1, 0] = [3, 4, 7, 12]
  expectModel(model, floatTensor({4}, {0, 0, 0, 0}), {4}, {3, 4, 7, 12}, "range and cumsum");
}

TEST(OnnxOps, MatMulOfStacksBroadcastsTheirBatchAxes) {
  // [2, 1, 2, 3] x [1, 2, 3, 2] -> [2, 2, 2, 2]: attention's products have this form.
  std::vector<float> a(12), b(12);
  for (int i = 0; i < 12; ++i) a[size_t(i)] = float(i + 1), b[size_t(i)] = float(i % 5) - 2;
  std::string bytes = onnxModelBytes({{"MatMul", "mm", {"x", "w"}, {"y"}, {}}}, {onnxInput("x", {2, 1, 2, 3})}, {onnxOutput("y", 4)},
                                     {onnxFloats("w", {1, 2, 3, 2}, b)}, 17);
  std::vector<float> expected;
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 2; ++q)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          float sum = 0;
          for (int k = 0; k < 3; ++k) sum += a[size_t((p * 2 + i) * 3 + k)] * b[size_t((q * 3 + k) * 2 + j)];
          expected.push_back(sum);
        }
  expectModel(bytes, floatTensor({2, 1, 2, 3}, a), {2, 2, 2, 2}, expected, "batched");
  // A vector times a stack of matrices: [3] x [2, 3, 2] -> [2, 2].
  std::string vec = onnxModelBytes({{"MatMul", "mm", {"x", "w"}, {"y"}, {}}}, {onnxInput("x", {3})}, {onnxOutput("y", 2)},
                                   {onnxFloats("w", {2, 3, 2}, b)}, 17);
  std::vector<float> v = {1, -1, 2}, out;
  for (int q = 0; q < 2; ++q)
    for (int j = 0; j < 2; ++j) {
      float sum = 0;
      for (int k = 0; k < 3; ++k) sum += v[size_t(k)] * b[size_t((q * 3 + k) * 2 + j)];
      out.push_back(sum);
    }
  expectModel(vec, floatTensor({3}, v), {2, 2}, out, "vector times stack");
}

/// Einsum by its definition: every assignment of the letters, products summed into the output.
std::vector<float> naiveEinsum(const std::vector<std::string>& letters, const std::vector<std::vector<int64_t>>& shapes,
                               const std::vector<std::vector<float>>& values, const std::string& output) {
  std::map<char, int64_t> extents;
  for (size_t i = 0; i < letters.size(); ++i)
    for (size_t d = 0; d < letters[i].size(); ++d) extents[letters[i][d]] = shapes[i][d];
  std::vector<char> all;
  for (auto [c, e] : extents) all.push_back(c);
  int64_t outSize = 1;
  for (char c : output) outSize *= extents[c];
  std::vector<float> out(size_t(outSize), 0);
  std::map<char, int64_t> at;
  for (char c : all) at[c] = 0;
  auto flat = [&](const std::string& ls) {
    int64_t f = 0;
    for (char c : ls) f = f * extents[c] + at[c];
    return f;
  };
  while (true) {
    float product = 1;
    for (size_t i = 0; i < letters.size(); ++i) product *= values[i][size_t(flat(letters[i]))];
    out[size_t(flat(output))] += product;
    size_t d = all.size();
    while (d > 0 && ++at[all[d - 1]] == extents[all[d - 1]]) at[all[--d]] = 0;
    if (d == 0) break;
  }
  return out;
}

TEST(OnnxOps, EinsumAsExportersWriteIt) {
  auto values = [](int64_t n, float scale) {
    std::vector<float> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(float((i * 7) % 11) * scale - 1);
    return v;
  };
  struct Case {
    std::string equation;
    std::vector<std::string> letters;  // the operands'
    std::string output;
    std::vector<std::vector<int64_t>> shapes;
    std::vector<int64_t> outShape;
  };
  const std::vector<Case> cases = {
      {"bhid,bhjd->bhij", {"bhid", "bhjd"}, "bhij", {{1, 2, 3, 4}, {1, 2, 5, 4}}, {1, 2, 3, 5}},  // attention scores
      {"ij,jk", {"ij", "jk"}, "ik", {{3, 4}, {4, 2}}, {3, 2}},                                     // implicit output
      {"bij,jk->bki", {"bij", "jk"}, "bki", {{2, 3, 4}, {4, 5}}, {2, 5, 3}},                        // free batch, reordered
      {"i,j->ij", {"i", "j"}, "ij", {{3}, {4}}, {3, 4}},                                            // outer product
      {"ij,kj->k", {"ij", "kj"}, "k", {{3, 4}, {2, 4}}, {2}},                                       // a summed letter
      {"ij->ji", {"ij"}, "ji", {{3, 4}}, {4, 3}},                                                   // transpose
      {"ijk->ki", {"ijk"}, "ki", {{2, 3, 4}}, {4, 2}},                                              // sum and transpose
  };
  for (const Case& c : cases) {
    OnnxNode node{"Einsum", "e", {}, {"y"}, {}};
    node.strings["equation"] = c.equation;
    std::vector<OnnxValue> inputs, initializers;
    std::vector<std::vector<float>> data;
    std::map<std::string, runtime::Tensor> feeds;
    for (size_t i = 0; i < c.letters.size(); ++i) {
      int64_t n = 1;
      for (int64_t e : c.shapes[i]) n *= e;
      data.push_back(values(n, 0.25f * float(i + 1)));
      std::string name = i == 0 ? "x" : "w";
      node.inputs.push_back(name);
      if (i == 0) {
        inputs.push_back(onnxInput(name, c.shapes[i]));
        feeds[name] = floatTensor(c.shapes[i], data.back());
      } else {
        initializers.push_back(onnxFloats(name, c.shapes[i], data.back()));
      }
    }
    std::string bytes = onnxModelBytes({node}, inputs, {onnxOutput("y", c.outShape.size())}, initializers, 17);
    expectModel(bytes, feeds, c.outShape, naiveEinsum(c.letters, c.shapes, data, c.output), c.equation);
  }
  auto refused = [](const std::string& equation, std::vector<std::vector<int64_t>> shapes) {
    OnnxNode node{"Einsum", "e", {}, {"y"}, {}};
    node.strings["equation"] = equation;
    std::vector<OnnxValue> inputs;
    for (size_t i = 0; i < shapes.size(); ++i) {
      node.inputs.push_back("x" + std::to_string(i));
      inputs.push_back(onnxInput("x" + std::to_string(i), shapes[i]));
    }
    return errorOf([&] { importOnnxBytes(onnxModelBytes({node}, inputs, {onnxOutput("y", 1)}, {}, 17), "einsum.onnx"); });
  };
  expectContains(refused("ii->i", {{3, 3}}), "node 'e' (Einsum): attribute 'equation' is not supported: 'ii->i': 'i' repeats within an operand");
  expectContains(refused("...ij,...jk->...ik", {{2, 3}, {3, 2}}), "'...' is not supported");
  expectContains(refused("i,i,i->i", {{2}, {2}, {2}}), "more than two operands");
  expectContains(refused("ij,jk->ik", {{2, 3}, {4, 2}}), "node 'e' (Einsum): letter 'j' has extents 3 and 4");
}

}  // namespace
