// The dense_packed template and its lowering: TVM's knobs, order and index mapping; every config
// of a small dense task's space either refused with a reason naming a buffer or, emitted from its
// step list, bit-exact on the simulator with the interpreter (the CPU int8 reference); epilogues
// with a per-channel bias, an image operand, an int32 result (byte planes); the measurement path.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "graph/Interpreter.h"
#include "graph/Operators.h"
#include "support/Error.h"
#include "vta/DensePackedTemplate.h"
#include "vta/NetworkRunner.h"
#include "vta/VtaMeasurement.h"

using namespace tessel;
using namespace tessel::vta;

namespace {

runtime::Tensor randomInt8(const graph::TensorType& type, uint32_t seed) {
  auto t = runtime::Tensor::empty(type.shape, type.dtype);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-128, 127);
  for (int64_t i = 0; i < t.numel(); ++i) t.dataAs<int8_t>()[i] = int8_t(dist(rng));
  return t;
}

/// A graph with one dense group, its inputs and the interpreter's output.
struct Reference {
  graph::Graph graph;
  graph::FusedGroup group;
  DensePackedProblem problem;
  std::map<std::string, runtime::Tensor> inputs;
  runtime::Tensor output;
};

Reference reference(graph::Graph g) {
  Reference r;
  r.graph = std::move(g);
  auto groups = graph::fuseOperators(r.graph);
  EXPECT_EQ(groups.size(), 1u);
  r.group = groups.at(0);
  r.problem = densePackedProblem(r.graph, r.group, HardwareConfig{});
  uint32_t seed = 11;
  for (int id : r.graph.inputIds()) r.inputs[r.graph.node(id).name] = randomInt8(r.graph.node(id).type, seed++);
  r.output = graph::interpretGraph(r.graph, r.inputs)[0];
  return r;
}

/// Runs the group with `tiling` on a fresh simulator: bit-exact with the interpreter, every GEMM counted.
void expectBitExact(const Reference& r, const DenseTiling& tiling, const std::string& what) {
  Simulator simulator;
  CommandStream stream(simulator);
  runtime::Tensor got = runDenseGroup(stream, r.graph, r.group, r.problem.group, tiling, [&](int id) {
    const graph::Node& n = r.graph.node(id);
    return n.kind == graph::NodeKind::Constant ? r.graph.constant(id) : r.inputs.at(n.name);
  });
  ASSERT_EQ(got.nbytes(), r.output.nbytes());
  EXPECT_EQ(0, std::memcmp(got.data(), r.output.data(), got.nbytes())) << what;
  EXPECT_EQ(simulator.stats().gemmCounter, uint64_t(r.problem.workload.gemmCount())) << what;
}

DenseWorkload workload(int64_t batchBlocks, int64_t inputBlocks, int64_t outputBlocks) {
  return DenseWorkload{batchBlocks, inputBlocks, outputBlocks};
}

}  // namespace

TEST(VtaDensePacked, KnobsInTvmOrderWithTvmIndexMapping) {
  // resnet-18's classifier, 512 → 1000 (padded to 63 blocks), at batch 16.
  DensePackedProblem p = densePackedTaskProblem(workload(16, 32, 63), HardwareConfig{});
  auto task = makeDensePackedTask(densePackedTaskName(p.workload, p.config), p);
  EXPECT_EQ(task->name, "dense_packed_16_512_1008");
  EXPECT_EQ(task->templateName, "dense_packed.vta");
  std::vector<std::string> names;
  for (const auto& k : task->space->knobs()) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tile_b", "tile_ci", "tile_co", "oc_nthread"}));
  // Divisors of 16: 5, of 32: 6, of 63: 6; two thread counts.
  EXPECT_EQ(task->space->size(), 5u * 6 * 6 * 2);
  // Mixed radix, tile_b the fastest digit.
  auto c = task->space->get(3 + 5 * 2 + 30 * 4 + 180 * 1);
  EXPECT_EQ(c.split("tile_b"), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(c.split("tile_ci"), (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(c.split("tile_co"), (std::vector<int64_t>{3, 21}));  // divisors of 63: 1, 3, 7, 9, 21, 63
  EXPECT_EQ(c.value("oc_nthread"), 2);
  DenseTiling t = densePackedTiling(c, p.group);
  EXPECT_EQ(t.batchBlocks, 8);
  EXPECT_EQ(t.inputBlocks, 4);
  EXPECT_EQ(t.outputBlocks, 21);
  EXPECT_EQ(t.loadBufferSets, 2);
  EXPECT_EQ(t.accumulatorSets, 2);
  // TVM's FLOP count: 2 · output elements · input channels.
  EXPECT_DOUBLE_EQ(task->flops, 2.0 * 16 * 1008 * 512);
  // The fallback is the rule-based tiling, and it fits.
  DenseTiling fallback = densePackedTiling(task->space->get(task->fallbackIndex), p.group);
  DenseTiling rules = defaultDenseTiling(p.workload, p.group, p.config);
  EXPECT_EQ(fallback.batchBlocks, rules.batchBlocks);
  EXPECT_EQ(fallback.inputBlocks, rules.inputBlocks);
  EXPECT_EQ(fallback.outputBlocks, rules.outputBlocks);
  EXPECT_EQ(fallback.loadBufferSets, rules.loadBufferSets);
  EXPECT_FALSE(denseTilingProblem(p.workload, rules, p.group, p.config).has_value());
  std::string printed = schedule::printSteps(task->instantiate(task->space->get(task->fallbackIndex)));
  EXPECT_NE(printed.find("cache_read(\"local.wgt_buffer\""), std::string::npos) << printed;
  EXPECT_NE(printed.find("\"tensorize\", vta.gemm"), std::string::npos) << printed;
}

TEST(VtaDensePacked, EveryConfigOfASmallSpaceIsRefusedOrBitExact) {
  // 4 batch blocks, 1024 → 512 channels: 3 · 7 · 6 · 2 = 252 configs; the largest weight tiles
  // (32 · 64 blocks) overflow the 1024-element weight buffer.
  Reference r = reference(densePackedTaskGraph(workload(4, 64, 32), HardwareConfig{}, 7));
  auto task = makeDensePackedTask("dense", r.problem);
  ASSERT_EQ(task->space->size(), 252u);
  int valid = 0, refused = 0;
  for (uint64_t i = 0; i < task->space->size(); ++i) {
    auto config = task->space->get(i);
    std::vector<schedule::StepPtr> steps;
    try {
      steps = task->instantiate(config);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("buffer"), std::string::npos) << e.what();
      ++refused;
      continue;
    }
    // The steps replay and say exactly the config's tiling.
    DenseTiling tiling = denseTilingOfSteps(r.problem, steps);
    DenseTiling want = densePackedTiling(config, r.problem.group);
    EXPECT_EQ(tiling.batchBlocks, want.batchBlocks);
    EXPECT_EQ(tiling.inputBlocks, want.inputBlocks);
    EXPECT_EQ(tiling.outputBlocks, want.outputBlocks);
    EXPECT_EQ(tiling.loadBufferSets, want.loadBufferSets);
    EXPECT_EQ(tiling.accumulatorSets, want.accumulatorSets);
    expectBitExact(r, tiling, config.str());
    ++valid;
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(valid, 150);
}

TEST(VtaDensePacked, EpilogueOperandsAndInt32ResultsAreBitExact) {
  // dense, + per-channel bias [M/c, 1, c], + a fused int8 shortcut of the output's shape, relu:
  // an int32 result (four byte planes); then the same with a shift, clip and cast to int8.
  for (bool int8Result : {false, true}) {
    graph::registerStandardOps();
    graph::Graph g;
    int data = g.addInput("data", {{3, 8, 1, 16}, DataType::int8()});
    int residual = g.addInput("residual", {{3, 6, 1, 16}, DataType::int8()});
    auto weight = randomInt8({{6, 8, 16, 16}, DataType::int8()}, 3);
    auto bias = runtime::Tensor::empty({6, 1, 16}, DataType::int32());
    for (int64_t i = 0; i < bias.numel(); ++i) bias.dataAs<int32_t>()[i] = int32_t(i * 977 % 20001) - 10000;
    int dense = g.addOp("dense_blocked", {data, g.addConstant("weight", std::move(weight))}, {{"out_dtype", "int32"}}, "dense");
    int biased = g.addOp("add", {dense, g.addConstant("bias", std::move(bias))}, nlohmann::json::object(), "biased");
    // A shortcut fused as markShortcutsForFusion fuses one: an int8 value, cast and shifted
    // left into the accumulator's scale (LOAD ACC_8BIT, SHR -2 on the operand).
    int wide = g.addOp("cast", {residual}, {{"dtype", "int32"}, {"fuse_into_reader", true}}, "wide");
    int scaled = g.addOp("left_shift", {wide}, {{"bits", 2}, {"fuse_into_reader", true}}, "scaled");
    int summed = g.addOp("add", {biased, scaled}, nlohmann::json::object(), "summed");
    int out = g.addOp("relu", {summed}, nlohmann::json::object(), "relu");
    if (int8Result) {
      out = g.addOp("right_shift", {out}, {{"bits", 7}}, "shifted");
      out = g.addOp("clip", {out}, {{"min", -127.0}, {"max", 127.0}}, "clipped");
      out = g.addOp("cast", {out}, {{"dtype", "int8"}}, "result");
    }
    g.markOutput(out);
    Reference r = reference(std::move(g));
    EXPECT_EQ(r.problem.group.storedBytes, int8Result ? 1 : 4);
    ASSERT_GE(r.problem.group.epilogue.size(), 3u);
    EXPECT_TRUE(r.problem.group.epilogue[0].perChannel);
    EXPECT_FALSE(r.problem.group.epilogue[1].perChannel);
    EXPECT_EQ(r.problem.group.epilogue[1].operandShiftLeft, 2);
    int64_t sets = int8Result ? 2 : 1;
    for (DenseTiling t : {DenseTiling{1, 1, 1, 1, 1}, DenseTiling{3, 8, 6, 1, 1}, DenseTiling{1, 2, 3, 2, sets},
                          DenseTiling{3, 4, 2, 2, sets}, defaultDenseTiling(r.problem.workload, r.problem.group, r.problem.config)})
      expectBitExact(r, t, fmt::format("int8 {} tiling b{} ci{} co{} sets {}", int8Result, t.batchBlocks, t.inputBlocks,
                                       t.outputBlocks, t.loadBufferSets));
  }
}

TEST(VtaDensePacked, BadTilingsAndStepsAreRefusedWithTheReason) {
  DensePackedProblem p = densePackedTaskProblem(workload(2, 4, 6), HardwareConfig{});
  auto problem = [&](DenseTiling t) { return denseTilingProblem(p.workload, t, p.group, p.config).value_or(""); };
  EXPECT_EQ(problem({1, 3, 1}), "tile of 3 input-channel blocks does not divide the 4");
  EXPECT_EQ(problem({3, 1, 1}), "tile of 3 batch blocks does not divide the 2");
  EXPECT_EQ(problem({1, 1, 4}), "tile of 4 output-channel blocks does not divide the 6");
  EXPECT_EQ(problem({1, 1, 1, 5, 1}), "5 load buffer sets (1 to 4)");
  DensePackedProblem big = densePackedTaskProblem(workload(1, 64, 64), HardwareConfig{});
  EXPECT_EQ(denseTilingProblem(big.workload, {1, 64, 32, 1, 1}, big.group, big.config).value_or(""),
            "the tile needs 2048 weight buffer elements, the buffer holds 1024");
  // Steps without the input-channel split describe no tiling.
  auto steps = densePackedSteps(p.dag, DenseTiling{1, 2, 3});
  std::vector<schedule::StepPtr> withoutInputSplit;
  for (const auto& s : steps) {
    auto split = std::dynamic_pointer_cast<const schedule::SplitStep>(s);
    if (split && split->iterator == "ko") break;
    withoutInputSplit.push_back(s);
  }
  EXPECT_THROW(denseTilingOfSteps(p, withoutInputSplit), Error);
  // A conv2d group is not a dense one.
  graph::Graph g = densePackedTaskGraph(p.workload, p.config);
  auto groups = graph::fuseOperators(g);
  EXPECT_THROW(describePackedConvolution(g, groups.at(0)), Error);
}

TEST(VtaDensePacked, TheBuilderMakesAProgramOfACandidateWithItsModelledCycles) {
  DensePackedProblem p = densePackedTaskProblem(workload(2, 8, 12), HardwareConfig{});
  auto task = makeDensePackedTask(densePackedTaskName(p.workload, p.config), p);
  VtaBuilder builder;
  builder.addProblem(task->measure->workloadKey, p);
  auto fallback = task->space->get(task->fallbackIndex);
  tune::MeasureInput input{task->measure, task->instantiate(fallback), fallback.toJson().dump()};
  auto results = builder.build({input});
  ASSERT_EQ(results.size(), 1u);
  ASSERT_EQ(results[0].errorNo, tune::MeasureErrorNo::NoError) << results[0].errorMessage;
  // The file holds the program the emitter makes for the config's tiling: the same cycles.
  Program stored = Program::load(results[0].libraryPath);
  Simulator a, b;
  stored.runOn(a);
  densePackedProgram(p, densePackedTiling(fallback, p.group)).runOn(b);
  EXPECT_EQ(a.lastRunCycles(), b.lastRunCycles());
  EXPECT_EQ(a.stats().gemmCounter, uint64_t(p.workload.gemmCount()));
  builder.discard(results[0]);
}

TEST(VtaDensePacked, RunWithVtaRunsAPackedDenseGroupOnTheDevice) {
  // A network of a packed dense and a CPU operator after it: the dense group on the simulator,
  // the rest in the interpreter, equal to the interpreter alone bit for bit.
  graph::registerStandardOps();
  graph::Graph g = densePackedTaskGraph(workload(2, 4, 5), HardwareConfig{}, 3);
  int pooled = g.addOp("max_pool2d", {g.outputs()[0]}, {{"kernel", {1, 1}}, {"layout", "NCHW"}}, "after");
  g.markOutput(pooled);
  Reference r = reference(densePackedTaskGraph(workload(2, 4, 5), HardwareConfig{}, 3));
  auto want = graph::interpretGraph(g, r.inputs);
  Simulator simulator;
  CommandStream stream(simulator);
  std::vector<VtaGroupRun> runs;
  auto got = runWithVta(g, r.inputs, stream, {}, &runs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(0, std::memcmp(got[k].data(), want[k].data(), want[k].nbytes()));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].gemms, uint64_t(2 * 4 * 5));
  EXPECT_GT(runs[0].cycles, 0u);
}
