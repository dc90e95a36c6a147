// examples/deploy (linked against the runtime only) loads and runs a module directory that
// the graph layer built, and prints top-5 scores that match the reference interpreter.
#include <gtest/gtest.h>

#include <random>

#include "graph/Build.h"
#include "graph/Interpreter.h"
#include "graph/TestOps.h"
#include "runtime/Npy.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::graph;

namespace {

TEST(DeployExample, RunsABuiltModuleWithTheRuntimeAlone) {
  testops::registerFusionTestOps();
  Graph g;
  int x = g.addInput("data", {{1, 32}, DataType::float32()});
  auto w = runtime::Tensor::empty({32, 10}, DataType::float32());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < w.numel(); ++i) w.dataAs<float>()[i] = dist(rng);
  g.markOutput(g.addOp("fz_relu", {g.addOp("fz_matmul", {x, g.addConstant("fc_weight", w)})}));
  TempDir dir;
  buildGraph(g, dir.path() + "/module");
  auto input = runtime::Tensor::empty({1, 32}, DataType::float32());
  for (int64_t i = 0; i < input.numel(); ++i) input.dataAs<float>()[i] = dist(rng);
  runtime::saveNpy(input, dir.path() + "/input.npy");

  auto result = runSubprocess({TESSEL_DEPLOY_EXAMPLE, dir.path() + "/module", dir.path() + "/input.npy"});
  ASSERT_TRUE(result.ok()) << result.output;
  auto reference = interpretGraph(g, {{"data", input}})[0];
  int best = 0;
  for (int i = 1; i < 10; ++i)
    if (reference.dataAs<float>()[i] > reference.dataAs<float>()[best]) best = i;
  EXPECT_EQ(result.output.rfind("class " + std::to_string(best) + ": ", 0), 0u) << result.output;
  EXPECT_NE(result.output.find("Mean inference time (std dev): "), std::string::npos) << result.output;

  auto missing = runSubprocess({TESSEL_DEPLOY_EXAMPLE, dir.path() + "/nothing"});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.output.find("nothing/graph.json"), std::string::npos) << missing.output;
}

}  // namespace
