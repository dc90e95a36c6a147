// The conv2d_packed template: TVM's knobs, order and index mapping; every config of resnet-18's
// smallest task space either refused with its reason or, emitted from its step list, bit-exact
// on the simulator with the interpreter (the CPU int8 reference) — and random configs of the
// other tasks the same (those at full size only outside the core suite).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "graph/Interpreter.h"
#include "support/Error.h"
#include "graph/Operators.h"
#include "vta/Conv2dPackedTemplate.h"

using namespace tessel;
using namespace tessel::vta;

/// 1 in test_vta_template_zoo: the random configs of all ten tasks, not the exhaustive test again.
#ifndef TESSEL_VTA_ALL_TASKS
#define TESSEL_VTA_ALL_TASKS 0
#endif

namespace {

/// resnet-18's ten packed convolution shapes (seed 000's list): H, W, C, K, kernel, pad, stride.
Conv2dWorkload resnetWorkload(int64_t size, int64_t in, int64_t out, int64_t kernel, int64_t pad, int64_t stride) {
  Conv2dWorkload w;
  w.inputBlocks = in / 16;
  w.outputBlocks = out / 16;
  w.height = w.width = size;
  w.kernelHeight = w.kernelWidth = kernel;
  w.strideHeight = w.strideWidth = stride;
  w.padding = {pad, pad, pad, pad};
  w.outHeight = w.outWidth = (size + 2 * pad - kernel) / stride + 1;
  return w;
}

std::vector<Conv2dWorkload> resnetWorkloads() {
  return {resnetWorkload(56, 64, 64, 3, 1, 1),   resnetWorkload(56, 64, 128, 1, 0, 2),  resnetWorkload(56, 64, 128, 3, 1, 2),
          resnetWorkload(28, 128, 128, 3, 1, 1), resnetWorkload(28, 128, 256, 1, 0, 2), resnetWorkload(28, 128, 256, 3, 1, 2),
          resnetWorkload(14, 256, 256, 3, 1, 1), resnetWorkload(14, 256, 512, 1, 0, 2), resnetWorkload(14, 256, 512, 3, 1, 2),
          resnetWorkload(7, 512, 512, 3, 1, 1)};
}

/// A task's graph, a random input and the interpreter's output: the reference every config must equal.
struct Reference {
  graph::Graph graph;
  graph::FusedGroup group;
  Conv2dPackedProblem problem;
  runtime::Tensor data, output;
};

Reference reference(const Conv2dWorkload& w) {
  graph::registerStandardOps();
  Reference r;
  HardwareConfig config;
  r.graph = conv2dPackedTaskGraph(w, config, 7);
  r.group = graph::fuseOperators(r.graph).at(0);
  r.problem = conv2dPackedProblem(r.graph, r.group, config);
  const graph::TensorType& type = r.graph.node(r.graph.inputIds()[0]).type;
  r.data = runtime::Tensor::empty(type.shape, type.dtype);
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> dist(-128, 127);
  for (int64_t i = 0; i < r.data.numel(); ++i) r.data.dataAs<int8_t>()[i] = int8_t(dist(rng));
  r.output = graph::interpretGraph(r.graph, {{"data", r.data}})[0];
  return r;
}

/// Instantiates config `index`: either refused (false, with a reason that names a buffer, the
/// DMA or the micro-op loops) or emitted from its steps and run bit-exact (true).
bool checkConfig(const tune::autotvm::TuningTask& task, const Reference& r, uint64_t index) {
  tune::autotvm::ConfigEntity config = task.space->get(index);
  std::vector<schedule::StepPtr> steps;
  try {
    steps = task.instantiate(config);
  } catch (const Error& e) {
    std::string reason = e.what();
    EXPECT_NE(reason.find("buffer"), std::string::npos) << "config " << index << ": " << reason;
    return false;
  }
  // The record's steps replay and say exactly the config's tiling: what the code generator reads.
  Conv2dTiling tiling = conv2dTilingOfSteps(r.problem, steps);
  Conv2dTiling want = conv2dPackedTiling(config, r.problem.group);
  EXPECT_EQ(tiling.rows, want.rows);
  EXPECT_EQ(tiling.columns, want.columns);
  EXPECT_EQ(tiling.inputBlocks, want.inputBlocks);
  EXPECT_EQ(tiling.outputBlocks, want.outputBlocks);
  EXPECT_EQ(tiling.loadBufferSets, want.loadBufferSets);
  EXPECT_EQ(tiling.accumulatorSets, want.accumulatorSets);
  Simulator simulator;
  CommandStream stream(simulator);
  runtime::Tensor got = runConv2dGroup(stream, r.graph, r.group, r.problem.group, tiling, [&](int id) {
    return r.graph.node(id).kind == graph::NodeKind::Constant ? r.graph.constant(id) : r.data;
  });
  EXPECT_EQ(0, std::memcmp(got.data(), r.output.data(), got.nbytes())) << "config " << index << " " << config.str();
  EXPECT_EQ(simulator.stats().gemmCounter, uint64_t(r.problem.workload.gemmCount()));
  return true;
}

}  // namespace

TEST(VtaConv2dPacked, KnobsInTvmOrderWithTvmIndexMapping) {
  Conv2dPackedProblem p = conv2dPackedTaskProblem(resnetWorkloads()[0], HardwareConfig{});
  auto task = makeConv2dPackedTask(conv2dPackedTaskName(p.workload, p.config), p);
  EXPECT_EQ(task->name, "conv2d_packed_56x56_64_64_3x3_s1");
  EXPECT_EQ(task->templateName, "conv2d_packed.vta");
  // tvm-facts 3.1's worked example: 1·8·8·3·3·2·2.
  EXPECT_EQ(task->space->size(), 2304u);
  std::vector<std::string> names;
  for (const auto& k : task->space->knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile_b", "tile_h", "tile_w", "tile_ci", "tile_co", "oc_nthread", "h_nthread"}));
  // Mixed radix, the first knob the fastest digit: index 1 moves tile_h (tile_b has one option).
  auto c = task->space->get(1 + 8 * 2 + 64 * 1 + 192 * 1 + 576 * 0 + 1152 * 1);
  EXPECT_EQ(c.split("tile_h"), (std::vector<int64_t>{28, 2}));  // divisors of 56: 1, 2, 4, 7, ...
  EXPECT_EQ(c.split("tile_w"), (std::vector<int64_t>{14, 4}));
  EXPECT_EQ(c.split("tile_ci"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(c.split("tile_co"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(c.value("oc_nthread"), 1);
  EXPECT_EQ(c.value("h_nthread"), 2);
  // GFLOPS as TVM counts them: 2 · output elements · taps · input channels.
  EXPECT_DOUBLE_EQ(task->flops, 2.0 * 64 * 56 * 56 * 9 * 64);
  // The fallback is the rule-based tiling.
  Conv2dTiling fallback = conv2dPackedTiling(task->space->get(task->fallbackIndex), p.group);
  Conv2dTiling rules = defaultConv2dTiling(p.workload, p.group, p.config);
  EXPECT_EQ(fallback.rows, rules.rows);
  EXPECT_EQ(fallback.columns, rules.columns);
  EXPECT_EQ(fallback.loadBufferSets, rules.loadBufferSets);
  EXPECT_EQ(fallback.accumulatorSets, rules.accumulatorSets);
  // The steps print as a schedule a reader follows.
  std::string printed = schedule::printSteps(task->instantiate(task->space->get(task->fallbackIndex)));
  EXPECT_NE(printed.find("cache_read(\"local.inp_buffer\""), std::string::npos) << printed;
  EXPECT_NE(printed.find("vthread"), std::string::npos) << printed;
  EXPECT_NE(printed.find("\"tensorize\", vta.gemm"), std::string::npos) << printed;
}

TEST(VtaConv2dPacked, StepsThatDescribeNoTilingAreErrors) {
  Conv2dPackedProblem p = conv2dPackedTaskProblem(resnetWorkloads()[9], HardwareConfig{});
  auto steps = conv2dPackedSteps(p.dag, Conv2dTiling{7, 7, 1, 1});
  std::vector<schedule::StepPtr> withoutInputSplit;
  for (const auto& s : steps)
    if (!(s->kind() == "split" && std::static_pointer_cast<const schedule::SplitStep>(s)->iterator == "ko"))
      withoutInputSplit.push_back(s);
  EXPECT_THROW(conv2dTilingOfSteps(p, withoutInputSplit), Error);
  auto broken = steps;
  broken.insert(broken.begin(), std::make_shared<schedule::SplitStep>("result", "nope", std::vector<int64_t>{2}));
  EXPECT_THROW(conv2dTilingOfSteps(p, broken), Error);
}

#if !TESSEL_VTA_ALL_TASKS
// resnet-18's smallest spaces have 480 configs (7 output rows and columns, 16 input and 32
// output blocks); of the two, the 1x1 downsampling convolution has the fewest MACs.
TEST(VtaConv2dPacked, EveryConfigOfTheSmallestTaskIsRefusedOrBitExact) {
  std::vector<Conv2dWorkload> all = resnetWorkloads();
  uint64_t smallest = UINT64_MAX;
  for (const auto& w : all) smallest = std::min(smallest, conv2dPackedSpace(w).size());
  EXPECT_EQ(smallest, 480u);
  Reference r = reference(all[7]);
  auto task = makeConv2dPackedTask("smallest", r.problem);
  ASSERT_EQ(task->space->size(), 480u);
  int ran = 0, refused = 0;
  for (uint64_t i = 0; i < task->space->size(); ++i) (checkConfig(*task, r, i) ? ran : refused)++;
  EXPECT_GT(ran, 100);
  EXPECT_GT(refused, 10);  // whole-image tiles of 16 input blocks overflow the input buffer
}
#endif

// Random configs of the other nine tasks: in the core suite only those of the 14x14 and 7x7
// layers (seconds of interpretation for the larger ones).
TEST(VtaConv2dPacked, RandomConfigsOfTheOtherTasksAreRefusedOrBitExact) {
  std::mt19937_64 rng(5);
  for (const Conv2dWorkload& w : resnetWorkloads()) {
    if (!TESSEL_VTA_ALL_TASKS && w.height > 14) continue;
    Reference r = reference(w);
    auto task = makeConv2dPackedTask("task", r.problem);
    int ran = 0;
    for (int k = 0; k < 40 && ran < 4; ++k) ran += checkConfig(*task, r, rng() % task->space->size());
    EXPECT_GT(ran, 0) << conv2dPackedShapeLine(w, r.problem.config);
  }
}
