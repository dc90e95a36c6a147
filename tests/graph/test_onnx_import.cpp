// The ONNX frontend on the small models of onnx/make_models.py (every supported operator, in
// opsets 7 to 17) and on what PyTorch 2.x's default exporter writes (onnx/exported: IR version
// 10, opset 20, weights in a file beside the model): each model imported, run by the reference
// interpreter and, after the standard passes, compiled and run as a module; both must match ONNX
// Runtime's outputs (output_K.npy beside the model, written by onnx/ort_reference.js) within
// 1e-4 of the output's largest magnitude.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "common/ErrorText.h"
#include "graph/Build.h"
#include "graph/Interpreter.h"
#include "graph/frontends/Onnx.h"
#include "graph/passes/PassManager.h"
#include "ops/Schedules.h"
#include "runtime/GraphExecutor.h"
#include "runtime/Npy.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::testsupport;

namespace {

const std::string kModels = std::string(TESSEL_SOURCE_DIR) + "/tests/graph/onnx/models/";

struct Case {
  std::map<std::string, runtime::Tensor> inputs;
  std::vector<runtime::Tensor> expected;
};

Case loadCase(const std::string& name) {
  Case c;
  for (const auto& entry : std::filesystem::directory_iterator(kModels + name)) {
    std::string file = entry.path().filename().string();
    if (file.rfind("input_", 0) == 0) c.inputs[file.substr(6, file.size() - 10)] = runtime::loadNpy(entry.path().string());
  }
  for (int k = 0; std::filesystem::exists(kModels + name + "/output_" + std::to_string(k) + ".npy"); ++k)
    c.expected.push_back(runtime::loadNpy(kModels + name + "/output_" + std::to_string(k) + ".npy"));
  return c;
}

/// max |a - b| over max |b|: the error relative to the output's scale.
double relativeError(const runtime::Tensor& actual, const runtime::Tensor& expected) {
  EXPECT_EQ(actual.shape(), expected.shape());
  if (actual.shape() != expected.shape()) return 1e9;
  double worst = 0, scale = 1e-12;
  const float* a = actual.dataAs<float>();
  const float* b = expected.dataAs<float>();
  for (int64_t i = 0; i < expected.numel(); ++i) {
    scale = std::max(scale, double(std::fabs(b[i])));
    worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])));
  }
  return worst / scale;
}

class OnnxModels : public testing::TestWithParam<std::string> {};

TEST_P(OnnxModels, InterpreterAndCompiledModuleMatchOnnxRuntime) {
  const std::string name = GetParam();
  Case c = loadCase(name);
  ASSERT_FALSE(c.expected.empty()) << "no reference outputs for " << name;
  Graph g = importOnnx(kModels + name + "/model.onnx");
  ASSERT_EQ(g.outputs().size(), c.expected.size());

  auto interpreted = interpretGraph(g, c.inputs);
  for (size_t k = 0; k < c.expected.size(); ++k)
    EXPECT_LT(relativeError(interpreted[k], c.expected[k]), 1e-4) << name << " output " << k << " (interpreter)";

  TempDir dir;
  BuildOptions options;
  options.schedule = [](const te::ComputeDAG& dag) { return ops::defaultCpuSchedule(dag); };
  buildGraph(optimizeGraph(g), dir.path(), options);
  auto executor = runtime::GraphExecutor::load(dir.path());
  for (const auto& [input, value] : c.inputs) executor.setInput(input, value);
  executor.run();
  for (size_t k = 0; k < c.expected.size(); ++k)
    EXPECT_LT(relativeError(executor.getOutput(int(k)), c.expected[k]), 1e-4) << name << " output " << k << " (compiled)";
}

const std::vector<std::string> kCases = {"conv_bn_relu", "conv_groups",         "conv_transpose", "pools",
                                         "maxpool_same", "activations",         "clip_attrs",     "gemm_matmul_softmax",
                                         "softmax13",    "shape_chain",         "shape_attrs",    "resize",
                                         "upsample9",    "resize10",            "two_inputs",     "rgb_classifier", "opset17",
                                         "resize13",     "upsample7",           "avgpool_ceil",   "slices",         "split11"};

INSTANTIATE_TEST_SUITE_P(Onnx, OnnxModels, testing::ValuesIn(kCases));
// Relative to kModels: written by onnx/exported/export_torch2.py with PyTorch 2.11 (ONNX
// Runtime's outputs from its Python): a CNN, and tiny transformers (token ids in, the last
// hidden state out) from the default exporter and, for BERT, the legacy one.
INSTANTIATE_TEST_SUITE_P(PyTorch2Export, OnnxModels,
                         testing::Values("../exported/torch2_default", "../exported/bert_tiny_default", "../exported/bert_tiny_legacy17",
                                         "../exported/gpt2_tiny_default"));

TEST(OnnxImport, EveryGeneratedModelIsTested) {
  for (const auto& entry : std::filesystem::directory_iterator(kModels))
    EXPECT_NE(std::find(kCases.begin(), kCases.end(), entry.path().filename().string()), kCases.end())
        << entry.path() << " is not in kCases";
}

TEST(OnnxImport, ShapeArithmeticFoldsAwayAndInitializersBecomeConstants) {
  Graph g = importOnnx(kModels + "shape_chain/model.onnx");
  for (const auto& n : g.nodes()) {
    // Shape, Gather, Slice, Cast, Concat and the integer Mul left no trace in the graph.
    EXPECT_NE(n.type.dtype, DataType::int64()) << n.name;
  }
  Graph conv = importOnnx(kModels + "conv_bn_relu/model.onnx");
  EXPECT_EQ(conv.params().size(), 6u);  // w, b and the batch norm's four
  EXPECT_EQ(conv.node(conv.findNode("w")).kind, NodeKind::Constant);
  EXPECT_EQ(conv.node(conv.findNode("x")).kind, NodeKind::Input);
  EXPECT_EQ(conv.node(conv.outputs()[0]).name, "y");  // graph nodes keep the ONNX value names
}

TEST(OnnxImport, InputShapesFromTheCaller) {
  const std::string symbolic = std::string(TESSEL_SOURCE_DIR) + "/tests/graph/onnx/bad/symbolic.onnx";
  expectContains(errorOf([&] { importOnnx(symbolic); }),
                 "input 'x': dimension 0 is symbolic ('N'): give its shape with --input-shape x:D0,D1,...");
  OnnxImportOptions options;
  options.inputShapes["x"] = {2, 3, 8, 8};
  Graph g = importOnnx(symbolic, options);
  EXPECT_EQ(g.node(g.findNode("x")).type.shape, (std::vector<int64_t>{2, 3, 8, 8}));
  options.inputShapes["x"] = {2, 4, 8, 8};
  expectContains(errorOf([&] { importOnnx(symbolic, options); }), "--input-shape x: dimension 1 is 3 in the model, 4 given");
  options.inputShapes = {{"y", {1}}};
  expectContains(errorOf([&] { importOnnx(symbolic, options); }), "dimension 0 is symbolic");
  options.inputShapes = {{"x", {2, 3, 8, 8}}, {"y", {1}}};
  expectContains(errorOf([&] { importOnnx(symbolic, options); }), "--input-shape y: the model has no input 'y'");

  EXPECT_EQ(parseInputShape("data:1,3,224,224"), (std::pair<std::string, std::vector<int64_t>>{"data", {1, 3, 224, 224}}));
  EXPECT_EQ(parseInputShape("a:b:7").first, "a:b");
  expectContains(errorOf([] { parseInputShape("data"); }), "expected NAME:D0,D1,...");
  expectContains(errorOf([] { parseInputShape("data:1,,3"); }), "'' is not a positive dimension");
  expectContains(errorOf([] { parseInputShape("data:1,-3"); }), "'-3' is not a positive dimension");
  expectContains(errorOf([] { parseInputShape("data:1,3x"); }), "'3x' is not a positive dimension");
}

// A transformer exported with its sequence length symbolic (onnx/exported/export_dynamic_sequence.py:
// Debian's PyTorch, opset 17): the error names the input and the dimension; each length given
// with --input-shape is a static graph whose shape arithmetic folds away, computed and compiled
// to PyTorch's output at that length.
TEST(OnnxImport, ASequenceLengthIsAnInputShape) {
  const std::string dir = std::string(TESSEL_SOURCE_DIR) + "/tests/graph/onnx/exported/bert_dynamic_sequence/";
  expectContains(errorOf([&] { importOnnx(dir + "model.onnx"); }),
                 "input 'input_ids': dimension 1 is symbolic ('sequence'): give its shape with --input-shape input_ids:D0,D1,...");
  for (int64_t length : {16, 40}) {
    SCOPED_TRACE(length);
    OnnxImportOptions options;
    options.inputShapes["input_ids"] = {1, length};
    Graph g = importOnnx(dir + "model.onnx", options);
    EXPECT_EQ(g.node(g.outputs()[0]).type.shape, (std::vector<int64_t>{1, length, 64}));
    auto ids = runtime::loadNpy(dir + "input_ids_" + std::to_string(length) + ".npy");
    auto expected = runtime::loadNpy(dir + "output_" + std::to_string(length) + ".npy");
    EXPECT_LT(relativeError(interpretGraph(g, {{"input_ids", ids}})[0], expected), 1e-4);
    TempDir built;
    BuildOptions build;
    build.schedule = [](const te::ComputeDAG& dag) { return ops::defaultCpuSchedule(dag); };
    buildGraph(optimizeGraph(g), built.path(), build);
    auto executor = runtime::GraphExecutor::load(built.path());
    executor.setInput("input_ids", ids);
    executor.run();
    EXPECT_LT(relativeError(executor.getOutput(0), expected), 1e-4);
  }
}

TEST(OnnxImport, ModelPathsAndZooNames) {
  EXPECT_TRUE(isOnnxModelPath("missing/model.onnx"));
  EXPECT_TRUE(isOnnxModelPath(kModels + "pools/model.onnx"));
  EXPECT_FALSE(isOnnxModelPath("resnet-18"));
}

}  // namespace
