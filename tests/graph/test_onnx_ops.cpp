// The ONNX operators of today's exports (reductions, ...), each in a model the test writes
// (common/OnnxModels.h): imported, run by the reference interpreter and compiled with the
// default schedules, both against values computed here by hand; and the errors of what the
// operators cannot mean.
#include <gtest/gtest.h>

#include <cmath>

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
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual.dataAs<float>()[i], expected[i], 1e-5 * std::max(1.0f, std::fabs(expected[i]))) << what << " element " << i;
}

/// The model's one output for input `x`, from the interpreter and from the compiled module, each
/// against `expected` of `shape`.
void expectModel(const std::string& bytes, const runtime::Tensor& x, const std::vector<int64_t>& shape,
                 const std::vector<float>& expected, const std::string& what) {
  SCOPED_TRACE(what);
  Graph g = importOnnxBytes(bytes, what + ".onnx");
  expectValues(interpretGraph(g, {{"x", x}})[0], shape, expected, what + " (interpreter)");
  TempDir dir("tessel-onnx-ops");
  BuildOptions options;
  options.schedule = [](const te::ComputeDAG& dag) { return ops::defaultCpuSchedule(dag); };
  buildGraph(optimizeGraph(g), dir.path(), options);
  auto executor = runtime::GraphExecutor::load(dir.path());
  executor.setInput("x", x);
  executor.run();
  expectValues(executor.getOutput(0), shape, expected, what + " (compiled)");
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

}  // namespace
