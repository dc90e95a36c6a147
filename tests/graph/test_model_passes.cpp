// The standard pass pipeline on whole zoo networks: the optimized graph computes what the
// network as built computes (reference interpreter), the passes left the structure the build
// relies on (no batch norm, scales inside the weights, NHWC convolutions, one transpose), and
// the compiled optimized network with its default schedules matches too.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "graph/Build.h"
#include "graph/Interpreter.h"
#include "graph/ModelZoo.h"
#include "graph/passes/PassManager.h"
#include "ops/Schedules.h"
#include "runtime/GraphExecutor.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::graph;

namespace {

runtime::Tensor uniformImage(std::vector<int64_t> shape, uint32_t seed) {
  auto t = runtime::Tensor::empty(std::move(shape), DataType::float32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.dataAs<float>()[i] = dist(rng);
  return t;
}

double relativeDifference(const runtime::Tensor& got, const runtime::Tensor& want) {
  double scale = 1e-30, worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) scale = std::max(scale, double(std::fabs(want.dataAs<float>()[i])));
  for (int64_t i = 0; i < want.numel(); ++i)
    worst = std::max(worst, std::fabs(double(got.dataAs<float>()[i]) - want.dataAs<float>()[i]) / scale);
  return worst;
}

int countOps(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == NodeKind::Op && node.op == op;
  return n;
}

TEST(ModelPasses, StandardPipelineOnResnetAndMobilenetKeepsTheirOutputs) {
  for (const std::string name : {"resnet-18", "mobilenet"}) {
    ModelOptions o;
    o.imageSize = 32;
    o.classes = 10;
    Graph original = buildModel(name, o);
    Graph optimized = optimizeGraph(original);
    EXPECT_EQ(countOps(optimized, "batch_norm"), 0) << name;
    EXPECT_EQ(countOps(optimized, "multiply"), 0) << name;  // every scale is inside a weight
    EXPECT_EQ(countOps(optimized, "transpose"), 1) << name;  // the image into NHWC, nothing else
    for (const Node& n : optimized.nodes())
      if (n.op == "conv2d" || n.op == "depthwise_conv2d") {
        EXPECT_EQ(n.attrs["layout"], "NHWC") << name << " " << n.name;
      }
    EXPECT_EQ(countOps(optimized, "conv2d") + countOps(optimized, "depthwise_conv2d"),
              countOps(original, "conv2d") + countOps(original, "depthwise_conv2d"));
    EXPECT_LT(optimized.params().size(), original.params().size()) << name;

    auto image = uniformImage({1, 3, 32, 32}, 3);
    auto want = interpretGraph(original, {{"data", image}})[0];
    EXPECT_LT(relativeDifference(interpretGraph(optimized, {{"data", image}})[0], want), 1e-4) << name;

    TempDir dir;
    BuildOptions build;
    build.schedule = [](const te::ComputeDAG& dag) { return ops::defaultCpuSchedule(dag); };
    buildGraph(optimized, dir.path(), build);
    auto executor = runtime::GraphExecutor::load(dir.path());
    executor.setInput("data", image);
    executor.run();
    EXPECT_LT(relativeDifference(executor.getOutput(0), want), 1e-4) << name << " compiled";
  }
}

}  // namespace
