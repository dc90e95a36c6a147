// Whole-graph build into a module directory, run by the runtime's graph executor alone, and
// checked against the reference interpreter; the storage planner on its own.
#include <gtest/gtest.h>

#include <climits>
#include <random>

#include "common/ErrorText.h"
#include "common/FloatTensors.h"
#include "graph/Build.h"
#include "graph/GraphTestSupport.h"
#include "graph/Interpreter.h"
#include "graph/MemoryPlan.h"
#include "graph/TestOps.h"
#include "runtime/GraphExecutor.h"
#include "support/Files.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::testsupport;
using namespace tessel::graph::testsupport;  // randomTensor

namespace {

/// x -> relu(x @ w1 + b) -> y; z = relu(y @ w2 + y); out = transpose(z)
Graph residualGraph() {
  testops::registerFusionTestOps();
  Graph g;
  int x = g.addInput("x", {{6, 16}, DataType::float32()});
  int w1 = g.addConstant("w1", randomTensor({16, 16}, 1));
  int b = g.addConstant("b", randomTensor({6, 16}, 2));
  int y = g.addOp("fz_relu", {g.addOp("fz_add", {g.addOp("fz_matmul", {x, w1}), b})});
  int w2 = g.addConstant("w2", randomTensor({16, 16}, 3));
  int z = g.addOp("fz_relu", {g.addOp("fz_add", {g.addOp("fz_matmul", {y, w2}), y})});
  g.markOutput(g.addOp("fz_transpose", {z}));
  return g;
}

TEST(GraphBuild, FusedAndUnfusedModulesMatchTheReferenceInterpreter) {
  Graph g = residualGraph();
  auto input = randomTensor({6, 16}, 4);
  auto reference = interpretGraph(g, {{"x", input}});
  ASSERT_EQ(reference.size(), 1u);
  EXPECT_EQ(reference[0].shape(), (std::vector<int64_t>{16, 6}));
  for (bool fuse : {true, false}) {
    TempDir dir;
    BuildOptions options;
    options.fuse = fuse;
    BuildReport report = buildGraph(g, dir.path(), options);
    EXPECT_EQ(report.functions, fuse ? 3 : 7);
    auto executor = runtime::GraphExecutor::load(dir.path());
    EXPECT_EQ(executor.numInputs(), 1);
    EXPECT_EQ(executor.inputName(0), "x");
    EXPECT_EQ(executor.outputShape(0), (std::vector<int64_t>{16, 6}));
    EXPECT_EQ(executor.plannedBytes(), report.plannedBytes);
    executor.setInput("x", input);
    executor.run();
    EXPECT_LT(relativeDifference(executor.getOutput(0), reference[0]), 1e-5) << "fuse=" << fuse;
    // Running again on the same buffers gives the same result (no state left behind).
    executor.run();
    EXPECT_LT(relativeDifference(executor.getOutput(0), reference[0]), 1e-5);
    if (!fuse) {
      EXPECT_LT(report.plannedBytes, report.naiveBytes);
    }
    auto profile = executor.profile(2);
    ASSERT_EQ(profile.size(), executor.numCalls());
    EXPECT_EQ(profile[0].kernel.rfind("fused_", 0), 0u);
    for (auto& call : profile) EXPECT_GE(call.seconds, 0.0);
    EXPECT_LT(relativeDifference(executor.getOutput(0), reference[0]), 1e-5);  // profiling ran the graph too
  }
}

// A call replaced by a host function (how a VTA module runs its packed convolutions): the
// function gets the call's arguments and its output is what the later calls read.
TEST(GraphBuild, AReplacedCallRunsTheHostFunctionOnTheCallsArguments) {
  Graph g = residualGraph();
  TempDir dir;
  buildGraph(g, dir.path());
  auto executor = runtime::GraphExecutor::load(dir.path());
  auto input = randomTensor({6, 16}, 4);
  executor.setInput("x", input);
  executor.run();
  runtime::Tensor want = executor.getOutput(0);
  // The first call (x @ w1 + b, relu) by hand: its output, scaled by two, is what the rest reads.
  int calls = 0;
  const runtime::Tensor w1 = g.constant(g.findNode("w1")), b = g.constant(g.findNode("b"));
  executor.replaceCall(0, [&](const TesselTensor* args, int count) {
    ++calls;
    ASSERT_EQ(count, 4);  // x, w1, b, then the output
    const float* x = static_cast<const float*>(args[0].data);
    float* out = static_cast<float*>(args[3].data);
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 16; ++j) {
        double sum = b.dataAs<float>()[i * 16 + j];
        for (int k = 0; k < 16; ++k) sum += double(x[i * 16 + k]) * w1.dataAs<float>()[k * 16 + j];
        out[i * 16 + j] = float(2 * std::max(sum, 0.0));
      }
  });
  executor.run();
  EXPECT_EQ(calls, 1);
  // relu(2y @ w2 + 2y) = 2 relu(y @ w2 + y): the output doubles.
  runtime::Tensor got = executor.getOutput(0);
  for (int64_t i = 0; i < got.numel(); ++i) EXPECT_NEAR(got.dataAs<float>()[i], 2 * want.dataAs<float>()[i], 1e-4) << i;
  expectContains(errorOf([&] { executor.replaceCall(3, {}); }), "there is no call 3 (the graph has 3)");
}

TEST(GraphBuild, ExecutorRejectsBadInputsAndBrokenModules) {
  Graph g = residualGraph();
  TempDir dir;
  buildGraph(g, dir.path());
  auto executor = runtime::GraphExecutor::load(dir.path());
  expectContains(errorOf([&] { executor.setInput("y", randomTensor({6, 16}, 1)); }), "no input 'y' (inputs: x)");
  expectContains(errorOf([&] { executor.setInput("x", randomTensor({16, 6}, 1)); }),
                 "input 'x': expected float32 [6, 16], got float32 [16, 6]");
  expectContains(errorOf([&] { executor.getOutput(3); }), "output index 3 out of range");
  // A plan that names a missing parameter, and a truncated plan.
  std::string plan = readFile(dir.path() + "/graph.json");
  auto json = nlohmann::json::parse(plan);
  for (auto& t : json["tensors"])
    if (t.contains("param") && t["param"] == "w2") t["param"] = "w9";
  writeFile(dir.path() + "/graph.json", json.dump());
  expectContains(errorOf([&] { runtime::GraphExecutor::load(dir.path()); }), "needs parameter 'w9', which the parameters lack");
  writeFile(dir.path() + "/graph.json", plan.substr(0, plan.size() / 2));
  expectContains(errorOf([&] { runtime::GraphExecutor::load(dir.path()); }), "graph.json: not valid JSON");
  expectContains(errorOf([&] { runtime::GraphExecutor::load(dir.path() + "/nothing"); }), "nothing/graph.json");
  // The same plans as text (fromPlanText, what the plan fuzzer feeds): the good one runs, the
  // others fail naming the origin given.
  runtime::Module kernels = runtime::Module::load(dir.path() + "/kernels.so");
  runtime::NamedTensors params = runtime::loadParams(dir.path() + "/params.bin");
  auto fromText = runtime::GraphExecutor::fromPlanText(kernels, plan, params, "in memory");
  fromText.setZeroInputs();
  fromText.run();
  EXPECT_EQ(fromText.getOutput(0).shape(), executor.getOutput(0).shape());
  expectContains(errorOf([&] { runtime::GraphExecutor::fromPlanText(kernels, json.dump(), params, "in memory"); }),
                 "needs parameter 'w9', which the parameters lack");
  expectContains(errorOf([&] { runtime::GraphExecutor::fromPlanText(kernels, plan.substr(0, plan.size() / 2), params, "in memory"); }),
                 "in memory: not valid JSON");
}

TEST(MemoryPlanner, ReusesBuffersOfDeadTensorsOnly) {
  // a (input) -> t0 (call 0) -> t1 (call 1) -> t2 (call 2, reads t0 too) -> out (call 3)
  std::vector<PlannedTensor> tensors = {
      {100, -1, INT_MAX},  // input
      {400, 0, 2},         // t0, read until call 2
      {400, 1, 2},         // t1
      {300, 2, 3},         // t2: t0 and t1 are read by call 2 itself, so they stay busy
      {50, 3, INT_MAX},    // output
  };
  MemoryPlan plan = planMemory(tensors);
  EXPECT_EQ(plan.naiveBytes, 1250u);
  // Every pair of tensors sharing a buffer must have disjoint lives.
  for (size_t a = 0; a < tensors.size(); ++a) {
    for (size_t b = a + 1; b < tensors.size(); ++b) {
      if (plan.storageOf[a] == plan.storageOf[b]) {
        EXPECT_TRUE(tensors[a].lastCall < tensors[b].firstCall || tensors[b].lastCall < tensors[a].firstCall) << a << " " << b;
      }
    }
  }
  for (size_t t = 0; t < tensors.size(); ++t) EXPECT_GE(plan.storageBytes[size_t(plan.storageOf[t])], tensors[t].bytes);
  EXPECT_EQ(plan.storageBytes.size(), 4u);  // the output reuses t0's or t1's buffer
  EXPECT_EQ(plan.plannedBytes(), 100u + 400u + 400u + 300u);
}

}  // namespace
