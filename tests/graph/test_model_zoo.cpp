// The zoo's networks: task extraction as the seeds list it, and compiled networks (at a
// reduced image size) against the reference interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>

#include <fmt/ranges.h>

#include "common/ErrorText.h"
#include "common/FloatTensors.h"
#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "graph/passes/PassManager.h"
#include "support/Files.h"
#include "support/TempDir.h"
#include "target/CpuRequirements.h"
#include "target/HostCpu.h"

using namespace tessel;
using namespace tessel::graph;

namespace {

/// The conv2d-like operations of a task's DAG, described by tag and shapes.
std::vector<std::string> convolutionsOf(const te::ComputeDAG& dag) {
  std::vector<std::string> convs;
  for (const auto& op : dag.ops()) {
    if (op->tag.find("conv2d") == std::string::npos) continue;
    std::string text = op->tag;
    for (const auto& access : te::ComputeDAG::accesses(*op)) text += " " + runtime::formatShape(dag.op(access.producer)->shape);
    convs.push_back(text + " -> " + runtime::formatShape(op->shape));
  }
  return convs;
}

// As built, and after the standard passes (what `tessel tasks` prints).
TEST(ModelZoo, MobilenetNhwcHasTheTwentyTwoWorkloadsOfSeed001) {
  ModelOptions o;
  o.layout = ops::Layout::NHWC;
  for (bool optimized : {false, true}) {
  SCOPED_TRACE(optimized ? "after the standard passes" : "as built");
  Graph g = buildModel("mobilenet", o);
  OptimizeOptions asTvm;  // TVM's fusion: the seed's list
  asTvm.fuseSeparable = false;
  auto tasks = extractTasks(optimized ? optimizeGraph(g, asTvm) : g);
  ASSERT_EQ(tasks.size(), 22u) << formatTasks(tasks);
  // tessel's own: the separable blocks after a stride-1 depthwise convolution (112x112, 56x56,
  // 28x28 and 14x14) are one function each (the five 14x14x512 blocks are one task).
  if (optimized) {
    EXPECT_EQ(extractTasks(optimizeGraph(g)).size(), 18u);
  }
  std::map<std::string, int> kinds;
  int pointwise14x14x512 = 0, depthwise14x14x512 = 0;
  for (const auto& t : tasks) {
    auto convs = convolutionsOf(t.dag);
    std::string kind = "other";
    for (const auto& op : t.dag.ops()) {
      if (op->tag == "conv2d_nhwc") kind = t.dag.op(t.dag.inputNames()[1])->shape[0] == 1 ? "conv1x1" : "conv3x3";
      if (op->tag == "depthwise_conv2d_nhwc") kind = "depthwise";
      if (op->tag == "dense") kind = "dense";
      if (op->name.find("softmax") != std::string::npos && kind == "other") kind = "softmax";
    }
    if (kind == "other" && t.dag.op(t.dag.outputNames()[0])->shape == std::vector<int64_t>{1, 1, 1, 1024}) kind = "global_pool";
    kinds[kind]++;
    auto in = t.dag.op(t.dag.inputNames()[0])->shape;
    if (kind == "conv1x1" && in == std::vector<int64_t>{1, 14, 14, 512}) pointwise14x14x512 = t.weight;
    auto out = t.dag.op(t.dag.outputNames()[0])->shape;
    if (kind == "depthwise" && out == std::vector<int64_t>{1, 14, 14, 512}) depthwise14x14x512 = t.weight;
  }
  EXPECT_EQ(kinds["conv1x1"], 9);
  EXPECT_EQ(kinds["depthwise"], 9);
  EXPECT_EQ(kinds["conv3x3"], 1);
  EXPECT_EQ(kinds["dense"], 1);
  EXPECT_EQ(kinds["softmax"], 1);
  EXPECT_EQ(kinds["global_pool"], 1);
  EXPECT_EQ(pointwise14x14x512, 5);
  EXPECT_EQ(depthwise14x14x512, 5);
  }
}

TEST(ModelZoo, Resnet18NchwHasElevenConvolutionShapesOverTwentyLayers) {
  // As built, and after the standard passes keeping NCHW (`tessel tasks --desired-layout keep`);
  // the default conversion to NHWC keeps the count (StandardPipelineKeepsTheConvolutionShapes).
  OptimizeOptions keep;
  keep.desiredLayout = std::nullopt;
  for (bool optimized : {false, true}) {
  SCOPED_TRACE(optimized ? "after the standard passes" : "as built");
  Graph g = buildModel("resnet-18");
  auto tasks = extractTasks(optimized ? optimizeGraph(g, keep) : g);
  std::set<std::string> shapes;
  int convLayers = 0;
  for (const auto& t : tasks) {
    auto convs = convolutionsOf(t.dag);
    if (convs.empty()) continue;
    ASSERT_EQ(convs.size(), 1u);
    shapes.insert(convs[0]);
    convLayers += t.weight;
  }
  EXPECT_EQ(shapes.size(), 11u);
  EXPECT_EQ(convLayers, 20);
  // Seed 000 lists the first conv of layer 2 (3x3, stride 2, 64 -> 128 at 56x56) and the 1x1
  // stride-2 projection beside it.
  EXPECT_TRUE(shapes.count("conv2d_nchw [1, 64, 58, 58] [128, 64, 3, 3] -> [1, 128, 28, 28]")) << fmt::format("{}", fmt::join(shapes, "\n"));
  EXPECT_TRUE(shapes.count("conv2d_nchw [1, 64, 56, 56] [128, 64, 1, 1] -> [1, 128, 28, 28]")) << fmt::format("{}", fmt::join(shapes, "\n"));
  }
}

TEST(ModelZoo, StandardPipelineKeepsTheConvolutionShapes) {
  auto tasks = extractTasks(optimizeGraph(buildModel("resnet-18")));
  std::set<std::string> shapes;
  int convLayers = 0;
  for (const auto& t : tasks) {
    auto convs = convolutionsOf(t.dag);
    if (convs.empty()) continue;
    shapes.insert(convs[0]);
    convLayers += t.weight;
  }
  EXPECT_EQ(shapes.size(), 11u);
  EXPECT_EQ(convLayers, 20);
  EXPECT_TRUE(shapes.count("conv2d_nhwc [1, 58, 58, 64] [3, 3, 64, 128] -> [1, 28, 28, 128]")) << fmt::format("{}", fmt::join(shapes, "\n"));
}

/// What a network is made of, counted as torchvision counts: convolution and dense layers,
/// learned parameters (batch-norm statistics are buffers, not parameters) and the
/// multiply-accumulates of the convolution and dense layers for one image.
struct Structure {
  int convs = 0, denses = 0;
  int64_t params = 0, macs = 0;
};

Structure structureOf(const Graph& g) {
  Structure s;
  for (const Node& n : g.nodes()) {
    if (n.kind == NodeKind::Constant && n.name.find("_moving_") == std::string::npos) s.params += g.constant(g.findNode(n.name)).numel();
    if (n.kind != NodeKind::Op) continue;
    int64_t outputs = 1;
    for (int64_t d : n.type.shape) outputs *= d;
    outputs /= n.type.shape[0];  // per image
    const auto& weight = g.node(n.inputs.size() > 1 ? n.inputs[1] : n.inputs[0]).type.shape;
    if (n.op == "conv2d" || n.op == "depthwise_conv2d") {
      bool nhwc = n.attrs.value("layout", "NCHW") == "NHWC";
      int64_t outChannels = n.type.shape[nhwc ? 3 : 1], weights = 1;
      for (int64_t d : weight) weights *= d;
      s.convs++;
      s.macs += outputs * (weights / outChannels);
    } else if (n.op == "dense") {
      s.denses++;
      s.macs += outputs * weight[1];
    }
  }
  return s;
}

// torchvision's figures (bench/peers/export_models.py's definitions at 224x224, 299x299 for
// inception_v3, counted with forward hooks on its Conv2d and Linear modules).
TEST(ModelZoo, NetworksHaveTorchvisionsLayersParametersAndOperations) {
  struct Expected {
    std::string name;
    Structure s;
  };
  const std::vector<Expected> expected = {
      {"resnet-18", {20, 1, 11689512, 1814073344}},
      {"resnet-50", {53, 1, 25557032, 4089184256}},
      {"mobilenet", {27, 1, 4231976, 568740352}},
      {"mobilenet-v2", {52, 1, 3504872, 300774272}},
      {"squeezenet_v1.0", {26, 0, 1248424, 818924576}},
      {"squeezenet_v1.1", {26, 0, 1235496, 349151936}},
      // Without the auxiliary classifier (torchvision's 27,161,264 includes its 3,326,696).
      {"inception_v3", {94, 1, 23834568, 5713216096}},
  };
  for (const auto& e : expected) {
    Structure s = structureOf(buildModel(e.name));
    EXPECT_EQ(s.convs, e.s.convs) << e.name;
    EXPECT_EQ(s.denses, e.s.denses) << e.name;
    EXPECT_EQ(s.params, e.s.params) << e.name;
    EXPECT_EQ(s.macs, e.s.macs) << e.name;
  }
}

// The deep ResNets and VGG hold 45 to 144 million parameters: their structure is checked on
// a small image (the parameters do not depend on it) and, for VGG, with a 16-wide classifier
// whose difference from torchvision's 4096 is accounted for exactly.
TEST(ModelZoo, DeepNetworksHaveTorchvisionsLayersAndParameters) {
  ModelOptions small;
  small.imageSize = 32;
  EXPECT_EQ(structureOf(buildModel("resnet-34", small)).params, 21797672);
  EXPECT_EQ(structureOf(buildModel("resnet-101", small)).params, 44549160);
  Structure resnet152 = structureOf(buildModel("resnet-152", small));
  EXPECT_EQ(resnet152.params, 60192808);
  EXPECT_EQ(resnet152.convs, 155);
  struct Vgg {
    std::string name;
    int convs;
    int64_t params, macs;
  };
  const int64_t w = 16;
  auto classifier = [](int64_t hidden) { return 25088 * hidden + hidden + hidden * hidden + hidden + hidden * 1000 + 1000; };
  auto classifierMacs = [](int64_t hidden) { return 25088 * hidden + hidden * hidden + hidden * 1000; };
  for (const Vgg& v : std::vector<Vgg>{{"vgg-11", 8, 132863336, 7609090048},
                                       {"vgg-13", 10, 133047848, 11308466176},
                                       {"vgg-16", 13, 138357544, 15470264320},
                                       {"vgg-19", 16, 143667240, 19632062464}}) {
    ModelOptions o;
    o.classifierWidth = w;
    Structure s = structureOf(buildModel(v.name, o));
    EXPECT_EQ(s.convs, v.convs) << v.name;
    EXPECT_EQ(s.denses, 3) << v.name;
    EXPECT_EQ(s.params - classifier(w), v.params - classifier(4096)) << v.name;
    EXPECT_EQ(s.macs - classifierMacs(w), v.macs - classifierMacs(4096)) << v.name;
  }
}

// The narrower ResNets and VGGs of the numeric tests: every layer kept, the convolutions'
// weights a sixteenth at 4 (each layer's input and output channels a quarter; the first
// convolution's inputs stay the image's 3); the other networks refuse it.
TEST(ModelZoo, NarrowerVariantsKeepEveryLayerWithAFractionOfTheWeights) {
  using tessel::testsupport::errorOf;
  using tessel::testsupport::expectContains;
  ModelOptions full, narrow;
  full.imageSize = narrow.imageSize = 32;
  full.classifierWidth = narrow.classifierWidth = 16;
  narrow.widthDivisor = 4;
  for (const char* name : {"resnet-18", "resnet-152", "vgg-19"}) {
    Structure wide = structureOf(buildModel(name, full)), thin = structureOf(buildModel(name, narrow));
    EXPECT_EQ(thin.convs, wide.convs) << name;
    EXPECT_EQ(thin.denses, wide.denses) << name;
    EXPECT_LT(thin.params * 12, wide.params) << name;
    EXPECT_GT(thin.params * 20, wide.params) << name;
  }
  Graph g = buildModel("resnet-50", narrow);
  for (const Node& n : g.nodes())
    if (n.op == "conv2d") {
      EXPECT_EQ(n.type.shape[1], 16) << "the first convolution, " << n.name;
      break;
    }
  expectContains(errorOf([&] { buildModel("mobilenet", narrow); }),
                 "model 'mobilenet': only ResNet and VGG have narrower variants (width divisor 4)");
  narrow.widthDivisor = 3;
  expectContains(errorOf([&] { buildModel("resnet-18", narrow); }), "model 'resnet-18': width divisor must divide 64, got 3");
}

// The peers time the same networks by the same names: bench/peers/export_models.py's MODELS,
// then the transformers of bench/peers/transformers.py's CONFIGS.
TEST(ModelZoo, PeerExportScriptListsTheZoosNames) {
  std::string script = readFile(std::string(TESSEL_SOURCE_DIR) + "/bench/peers/export_models.py");
  size_t begin = script.find("MODELS = [");
  ASSERT_NE(begin, std::string::npos);
  size_t end = script.find(']', begin);
  std::vector<std::string> listed;
  for (size_t q = script.find('"', begin); q < end; q = script.find('"', q + 1)) {
    size_t close = script.find('"', q + 1);
    listed.push_back(script.substr(q + 1, close - q - 1));
    q = close;
  }
  std::string transformers = readFile(std::string(TESSEL_SOURCE_DIR) + "/bench/peers/transformers.py");
  begin = transformers.find("CONFIGS = {");
  ASSERT_NE(begin, std::string::npos);
  end = transformers.find("\n}", begin);
  for (size_t q = transformers.find("\n    \"", begin); q < end; q = transformers.find("\n    \"", q + 1)) {
    size_t open = q + 6, close = transformers.find('"', open);
    listed.push_back(transformers.substr(open, close - open));
  }
  EXPECT_EQ(listed, modelNames());
}

TEST(ModelZoo, UnknownNamesAndBadOptionsAreErrors) {
  using tessel::testsupport::errorOf;
  using tessel::testsupport::expectContains;
  expectContains(errorOf([] { buildModel("resnet-19"); }), "resnet-19: no such depth");
  std::string unknown = errorOf([] { buildModel("alexnet"); });
  expectContains(unknown, "unknown model 'alexnet' (known: resnet-18");
  for (const std::string& name : modelNames()) expectContains(unknown, name);
  EXPECT_EQ(modelNames().size(), 17u);
  expectContains(errorOf([] { buildModel("vgg-12"); }), "unknown model 'vgg-12'");
  ModelOptions o;
  o.batch = 0;
  expectContains(errorOf([&] { buildModel("mobilenet", o); }), "batch must be at least 1, got 0");
  o = {};
  o.imageSize = 74;
  expectContains(errorOf([&] { buildModel("inception_v3", o); }), "inception_v3: image size 74 is too small (at least 75x75)");
  o.imageSize = 31;
  expectContains(errorOf([&] { buildModel("vgg-16", o); }), "vgg-16: image size 31 is too small (at least 32x32)");
  o.imageSize = 16;
  expectContains(errorOf([&] { buildModel("squeezenet_v1.1", o); }), "image size 16 is too small (at least 17x17)");
  o = {};
  o.classes = 0;
  expectContains(errorOf([&] { buildModel("squeezenet_v1.0", o); }), "classes must be at least 1");
  expectContains(errorOf([] { ops::parseLayout("NWHC"); }), "unknown layout 'NWHC' (expected NCHW or NHWC)");
}

}  // namespace

#include "graph/Build.h"
#include "graph/Interpreter.h"
#include "ops/Conv2d.h"
#include "ops/Schedules.h"
#include "runtime/GraphExecutor.h"
#include "support/TempDir.h"

namespace {

runtime::Tensor uniformImage(std::vector<int64_t> shape, uint32_t seed) {
  auto t = runtime::Tensor::empty(std::move(shape), DataType::float32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.dataAs<float>()[i] = dist(rng);
  return t;
}

/// NHWC image of an NCHW one.
runtime::Tensor toNhwc(const runtime::Tensor& nchw) {
  auto s = nchw.shape();
  auto out = runtime::Tensor::empty({s[0], s[2], s[3], s[1]}, DataType::float32());
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t w = 0; w < s[3]; ++w)
          out.dataAs<float>()[((n * s[2] + h) * s[3] + w) * s[1] + c] = nchw.dataAs<float>()[((n * s[1] + c) * s[2] + h) * s[3] + w];
  return out;
}

using tessel::testsupport::relativeDifference;

/// The outputs of the network built with the default CPU schedule for `target`, for each input in turn.
/// Kernels at -O0 by default, as every numeric sweep compiles them (kernelcheck::sweepOptions,
/// tests/common/KernelCheck.h says why): what these tests check is the graph passes, layouts,
/// fusion and the code the default schedules generate, whose arithmetic no optimization level
/// changes; whole networks at `tessel compile`'s -O2 are checked by the CLI tests and the ONNX
/// scripts (against ONNX Runtime).
std::vector<std::vector<runtime::Tensor>> runCompiledOnEach(const Graph& g, const std::vector<runtime::Tensor>& inputs, bool fuse,
                                                            const target::Target& target = target::Target::parse("cpu -opt-level=0")) {
  TempDir dir;
  BuildOptions options;
  options.fuse = fuse;
  options.target = target;
  options.schedule = [rules = ops::cpuScheduleOptionsFor(target)](const te::ComputeDAG& dag) { return ops::defaultCpuSchedule(dag, rules); };
  buildGraph(g, dir.path(), options);
  auto executor = runtime::GraphExecutor::load(dir.path());
  std::vector<std::vector<runtime::Tensor>> results;
  for (const auto& input : inputs) {
    executor.setInput("data", input);
    executor.run();
    std::vector<runtime::Tensor> outputs;
    for (size_t i = 0; i < g.outputs().size(); ++i) outputs.push_back(executor.getOutput(int(i)));
    results.push_back(std::move(outputs));
  }
  return results;
}

std::vector<runtime::Tensor> runCompiled(const Graph& g, const runtime::Tensor& input, bool fuse) {
  return runCompiledOnEach(g, {input}, fuse)[0];
}

/// The classes of the `k` largest scores, largest first.
std::vector<int64_t> topClasses(const runtime::Tensor& scores, size_t k) {
  std::vector<int64_t> order(size_t(scores.numel()));
  for (size_t i = 0; i < order.size(); ++i) order[i] = int64_t(i);
  const float* s = scores.dataAs<float>();
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return s[a] > s[b]; });
  order.resize(std::min(k, order.size()));
  return order;
}

/// Every candidate convolution as Winograd, F(4x4) and F(2x2) taking turns, so that each
/// network runs both.
WinogradChoice alternatingWinograd() {
  auto count = std::make_shared<int>(0);
  return [count](const Graph&, int) { return (*count)++ % 2 == 0 ? 4 : 2; };
}

/// The network with its logits (the softmax's input) as a second output: random weights give
/// nearly uniform class scores, which would hide errors the logits show.
Graph withLogits(Graph g) {
  g.markOutput(g.node(g.outputs()[0]).inputs[0]);
  return g;
}

struct NumericCase {
  std::string name;
  int64_t imageSize;
  int64_t widthDivisor = 1;  ///< ModelOptions::widthDivisor
};

/// gtest prints a parameter in test listings (and ctest's names): the network, not its bytes.
void PrintTo(const NumericCase& c, std::ostream* out) {
  *out << c.name << " at " << c.imageSize << "x" << c.imageSize;
  if (c.widthDivisor > 1) *out << ", 1/" << c.widthDivisor << " of its width";
}

class ZooNumerics : public ::testing::TestWithParam<NumericCase> {};

// Every zoo network at a reduced image size and 10 classes, so that the double-precision
// interpreter stays quick: 32x32 (16 for resnet-50/101/152, whose cost at small sizes is their
// weights), 75x75 for inception_v3 (its minimum); VGG with a 16-wide classifier
// (ModelOptions::classifierWidth) instead of 25088 x 4096 weights; resnet-34/101/152 and
// vgg-13/16/19, whose layers resnet-18, resnet-50 and vgg-11 run at full width here, at a
// quarter of their widths (ModelOptions::widthDivisor: resnet-152's 60 million weights,
// generated, transformed, written and read by four builds, were most of its 25 s). The slowest run first, so
// that ctest's parallel jobs end together. The reference is the interpreter on the NCHW
// graph; three builds with the default CPU schedule cover both layouts, both fusion modes and
// the graph passes — the NCHW network through the standard pipeline (converted to NHWC, batch
// norms folded into the weights, weights packed: what `tessel compile` builds), the NHWC network through the
// same passes, fused, and the NCHW network as built, unfused — each against the reference, so
// they also agree with each other. The NHWC graph holds the same weights permuted.
TEST_P(ZooNumerics, CompiledNetworkMatchesTheInterpreterInBothLayoutsFusedOrNot) {
  const NumericCase& c = GetParam();
  ModelOptions o;
  o.imageSize = c.imageSize;
  o.classes = 10;
  o.classifierWidth = 16;
  o.widthDivisor = c.widthDivisor;
  Graph nchw = withLogits(buildModel(c.name, o));
  o.layout = ops::Layout::NHWC;
  Graph nhwc = withLogits(buildModel(c.name, o));
  auto image = uniformImage({1, 3, c.imageSize, c.imageSize}, 9);
  auto reference = interpretGraph(nchw, {{"data", image}});
  // What `tessel compile` builds: the standard passes, the NCHW network converted to NHWC. It
  // is compiled once: it is also the direct build the Winograd part below compares with.
  OptimizeOptions packed;  // what `tessel compile` does to the weights
  packed.pack = defaultPackChoice();
  OptimizeOptions withWinograd = packed;
  withWinograd.winograd = alternatingWinograd();
  Graph winogradGraph = optimizeGraph(nchw, withWinograd);
  int winogradConvs = 0;
  for (const Node& n : winogradGraph.nodes()) winogradConvs += n.op == "conv2d_winograd";
  std::vector<runtime::Tensor> images{image};
  for (uint32_t seed = 10; winogradConvs > 0 && images.size() < 10; ++seed)
    images.push_back(uniformImage({1, 3, c.imageSize, c.imageSize}, seed));
  auto direct = runCompiledOnEach(optimizeGraph(nchw, packed), images, true);
  const std::vector<runtime::Tensor>& converted = direct[0];
  auto fusedNhwc = runCompiled(optimizeGraph(nhwc), toNhwc(image), true);
  auto unfusedNchw = runCompiled(nchw, image, false);
  for (size_t i = 0; i < 2; ++i) {
    const char* what = i == 0 ? "softmax" : "logits";
    EXPECT_LT(relativeDifference(converted[i], reference[i]), 1e-4) << c.name << " NCHW converted to NHWC, fused, " << what;
    EXPECT_LT(relativeDifference(fusedNhwc[i], reference[i]), 1e-4) << c.name << " NHWC fused, " << what;
    EXPECT_LT(relativeDifference(unfusedNchw[i], reference[i]), 1e-4) << c.name << " NCHW unfused, " << what;
  }

  // Winograd: the standard pipeline with every stride-1 3x3 convolution as F(4x4) or F(2x2)
  // gives the direct build's top-5 classes on 10 random images, and logits within 1e-3 of the
  // reference. Two classes may trade places only where the direct logits tie within 1e-4.
  if (winogradConvs == 0) return;  // no stride-1 3x3 convolution (mobilenets)
  auto winograd = runCompiledOnEach(winogradGraph, images, true);
  EXPECT_LT(relativeDifference(winograd[0][1], reference[1]), 1e-3) << c.name << " Winograd logits";
  for (size_t k = 0; k < images.size(); ++k) {
    const runtime::Tensor& logits = direct[k][1];
    auto want = topClasses(logits, 5), got = topClasses(winograd[k][1], 5);
    double scale = 0;
    for (int64_t i = 0; i < logits.numel(); ++i) scale = std::max(scale, double(std::fabs(logits.dataAs<float>()[i])));
    for (size_t r = 0; r < want.size(); ++r) {
      if (got[r] == want[r]) continue;
      double gap = std::fabs(double(logits.dataAs<float>()[got[r]]) - logits.dataAs<float>()[want[r]]);
      EXPECT_LT(gap, 1e-4 * scale) << c.name << " image " << k << ": rank " << r + 1 << " is class " << got[r]
                                   << " with Winograd, " << want[r] << " direct";
    }
  }
}

std::string caseName(const ::testing::TestParamInfo<NumericCase>& info) {
  std::string name;
  for (char ch : info.param.name) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

// The slowest first, so that a parallel ctest does not start them last.
INSTANTIATE_TEST_SUITE_P(Zoo, ZooNumerics,
                         ::testing::Values(NumericCase{"inception_v3", 75}, NumericCase{"vgg-11", 32},
                                           NumericCase{"resnet-152", 16, 4}, NumericCase{"resnet-50", 16},
                                           NumericCase{"resnet-101", 16, 4}, NumericCase{"vgg-19", 32, 4},
                                           NumericCase{"vgg-16", 32, 4}, NumericCase{"resnet-34", 32, 4}, NumericCase{"vgg-13", 32, 4},
                                           NumericCase{"resnet-18", 32}, NumericCase{"mobilenet", 32},
                                           NumericCase{"mobilenet-v2", 32}, NumericCase{"squeezenet_v1.0", 32},
                                           NumericCase{"squeezenet_v1.1", 32}),
                         caseName);

// The same standard pipeline compiled for the other x86 classes this CPU runs (AVX2's 32-byte
// vectors and 16 registers; the x86-64 baseline's 16-byte SSE vectors), each build's rules
// shaped by that target's machine model (register tiles, packed blocks, Winograd by its L2):
// every layer kind of three networks against the interpreter. The AArch64 counterpart runs on
// the emulated board (tests/fuzz/test_cross_numerics.cpp).
class ZooNumericsPerTarget : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooNumericsPerTarget, TheStandardPipelineForTheTargetMatchesTheInterpreter) {
  const target::Target target = target::Target::parse(GetParam());
  const auto& host = target::hostCpu();
  if (host.arch != "x86_64" || !target::CpuRequirements::of(target.cpu).missingOn(host.arch, host.features).empty())
    GTEST_SKIP() << "this CPU cannot run " << target.str();
  for (const char* name : {"resnet-18", "mobilenet-v2", "squeezenet_v1.1"}) {
    ModelOptions o;
    o.imageSize = 32;
    o.classes = 10;
    Graph nchw = withLogits(buildModel(name, o));
    auto image = uniformImage({1, 3, 32, 32}, 9);
    auto reference = interpretGraph(nchw, {{"data", image}});
    OptimizeOptions passes;
    passes.pack = defaultPackChoice(target.cpu);
    passes.winograd = defaultWinogradChoice(size_t(target.cpu.l2Bytes));
    auto built = runCompiledOnEach(optimizeGraph(nchw, passes), {image}, true, target)[0];
    for (size_t i = 0; i < 2; ++i)
      EXPECT_LT(relativeDifference(built[i], reference[i]), 1e-3) << name << " for " << target.str() << (i ? ", logits" : ", softmax");
  }
}

INSTANTIATE_TEST_SUITE_P(X86, ZooNumericsPerTarget, ::testing::Values("cpu -mcpu=haswell -opt-level=0", "cpu -mcpu=x86-64 -opt-level=0"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param.find("haswell") != std::string::npos ? std::string("Avx2") : std::string("Baseline");
                         });

}  // namespace
