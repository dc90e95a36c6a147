// The zoo's networks: task extraction as the seeds list it, and compiled networks (at a
// reduced image size) against the reference interpreter.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include <fmt/ranges.h>

#include "common/ErrorText.h"
#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"

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

TEST(ModelZoo, MobilenetNhwcHasTheTwentyTwoWorkloadsOfSeed001) {
  ModelOptions o;
  o.layout = ops::Layout::NHWC;
  auto tasks = extractTasks(buildModel("mobilenet", o));
  ASSERT_EQ(tasks.size(), 22u) << formatTasks(tasks);
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

TEST(ModelZoo, Resnet18NchwHasElevenConvolutionShapesOverTwentyLayers) {
  auto tasks = extractTasks(buildModel("resnet-18"));
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

TEST(ModelZoo, UnknownNamesAndBadOptionsAreErrors) {
  testsupport::expectContains(testsupport::errorOf([] { buildModel("resnet-19"); }), "resnet-19: no such depth");
  testsupport::expectContains(testsupport::errorOf([] { buildModel("alexnet"); }), "unknown model 'alexnet' (known: resnet-18");
  ModelOptions o;
  o.batch = 0;
  testsupport::expectContains(testsupport::errorOf([&] { buildModel("mobilenet", o); }), "batch must be at least 1");
}

}  // namespace

#include "graph/Build.h"
#include "graph/Interpreter.h"
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

double relativeDifference(const runtime::Tensor& got, const runtime::Tensor& want) {
  double scale = 1e-30, worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) scale = std::max(scale, double(std::fabs(want.dataAs<float>()[i])));
  for (int64_t i = 0; i < want.numel(); ++i)
    worst = std::max(worst, std::fabs(double(got.dataAs<float>()[i]) - want.dataAs<float>()[i]) / scale);
  return worst;
}

runtime::Tensor runCompiled(const Graph& g, const runtime::Tensor& input, bool fuse) {
  TempDir dir;
  BuildOptions options;
  options.fuse = fuse;
  buildGraph(g, dir.path(), options);
  auto executor = runtime::GraphExecutor::load(dir.path());
  executor.setInput("data", input);
  executor.run();
  return executor.getOutput(0);
}

// At a reduced image size (and 10 classes) so that the double-precision interpreter stays fast.
TEST(ModelZoo, CompiledNetworksMatchTheInterpreterInBothLayoutsFusedOrNot) {
  for (const std::string name : {"resnet-18", "mobilenet"}) {
    ModelOptions o;
    o.imageSize = 32;
    o.classes = 10;
    Graph nchw = buildModel(name, o);
    o.layout = ops::Layout::NHWC;
    Graph nhwc = buildModel(name, o);
    auto image = uniformImage({1, 3, 32, 32}, 9);
    auto reference = interpretGraph(nchw, {{"data", image}})[0];
    EXPECT_LT(relativeDifference(runCompiled(nchw, image, true), reference), 1e-4) << name << " NCHW fused";
    EXPECT_LT(relativeDifference(runCompiled(nhwc, toNhwc(image), true), reference), 1e-4) << name << " NHWC fused";
    EXPECT_LT(relativeDifference(runCompiled(nchw, image, false), reference), 1e-4) << name << " NCHW unfused";
  }
}

}  // namespace
