// Task extraction for VTA: resnet-18 quantized and packed gives seed 000's ten conv2d tasks, in
// its order and printed as it prints them; the 19 packed groups map onto them; a packing region
// that names a missing operator is refused before any work.
#include <gtest/gtest.h>

#include <set>

#include "common/ErrorText.h"
#include "graph/ModelZoo.h"
#include "graph/Operators.h"
#include "vta/GraphPacking.h"
#include "vta/ShippedRecords.h"
#include "vta/VtaMeasurement.h"
#include "vta/VtaTasks.h"

using namespace tessel;
using namespace tessel::vta;

TEST(VtaTasks, Resnet18HasTheSeedsTenConv2dTasks) {
  graph::registerStandardOps();
  graph::Graph packed = prepareForVta(graph::buildModel("resnet-18", {}), HardwareConfig{});
  auto tasks = extractConv2dPackedTasks(packed, HardwareConfig{});
  // Seed 000 (and 002): "Extracted 10 conv2d tasks:" and the shapes, in this order.
  EXPECT_EQ(formatConv2dPackedTasks(tasks),
            "Extracted 10 conv2d tasks:\n"
            "(1, 56, 56, 64, 64, 3, 3, 1, 1, 1, 1)\n"
            "(1, 56, 56, 64, 128, 1, 1, 0, 0, 2, 2)\n"
            "(1, 56, 56, 64, 128, 3, 3, 1, 1, 2, 2)\n"
            "(1, 28, 28, 128, 128, 3, 3, 1, 1, 1, 1)\n"
            "(1, 28, 28, 128, 256, 1, 1, 0, 0, 2, 2)\n"
            "(1, 28, 28, 128, 256, 3, 3, 1, 1, 2, 2)\n"
            "(1, 14, 14, 256, 256, 3, 3, 1, 1, 1, 1)\n"
            "(1, 14, 14, 256, 512, 1, 1, 0, 0, 2, 2)\n"
            "(1, 14, 14, 256, 512, 3, 3, 1, 1, 2, 2)\n"
            "(1, 7, 7, 512, 512, 3, 3, 1, 1, 1, 1)\n");
  size_t groups = 0;
  std::set<std::string> keys;
  for (const auto& t : tasks) {
    groups += t.groups.size();
    keys.insert(t.task->measure->workloadKey);
    EXPECT_EQ(t.task->templateName, "conv2d_packed.vta");
    EXPECT_EQ(t.task->measure->target.str(), "vta");
  }
  EXPECT_EQ(groups, 19u);  // 16 3x3 convolutions and 3 downsampling 1x1 ones
  EXPECT_EQ(keys.size(), 10u);
  EXPECT_EQ(tasks[0].groups.size(), 4u);  // layer1's four 64->64 convolutions
}

TEST(VtaTasks, APackingRegionThatIsNotThereIsRefused) {
  graph::registerStandardOps();
  graph::ModelOptions small;
  small.imageSize = 32;
  small.classes = 10;
  graph::Graph model = graph::buildModel("resnet-18", small);
  testsupport::expectContains(testsupport::errorOf([&] { prepareForVta(model, HardwareConfig{}, "max_pool2d:1"); }), "max_pool2d");
  testsupport::expectContains(testsupport::errorOf([&] { prepareForVta(model, HardwareConfig{}, "max_pool2d", "nope"); }), "nope");
}

// The shipped records are current: each task's kRankedRecords fastest configs (a build ranks
// them again under each group's epilogue), each replaying to a tiling of its task that fits,
// its cost what the cycle model gives that program now (a change to the emitter or the cycle
// model that makes them stale fails here: rerun bench_vta_tasks --records).
TEST(VtaTasks, ShippedRecordsCoverResnet18AndAreCurrent) {
  graph::registerStandardOps();
  graph::Graph packed = prepareForVta(graph::buildModel("resnet-18", {}), HardwareConfig{});
  auto tasks = extractConv2dPackedTasks(packed, HardwareConfig{});
  int added = 0;
  auto records = withShippedRecords({}, tasks, HardwareConfig{}, &added);
  EXPECT_EQ(added, 10);
  ASSERT_EQ(records.size(), 10 * kRankedRecords);
  for (const auto& task : tasks) {
    size_t found = 0;
    for (const auto& r : records) {
      if (r.task.workloadKey != task.task->measure->workloadKey) continue;
      ++found;
      Conv2dTiling tiling = conv2dTilingOfSteps(task.problem, r.steps);
      EXPECT_FALSE(tilingProblem(task.problem.workload, tiling, task.problem.group, task.problem.config));
      Simulator simulator;
      conv2dPackedProgram(task.problem, tiling).runOn(simulator);
      EXPECT_DOUBLE_EQ(r.cost(), simulator.lastRunSeconds()) << task.task->name;
    }
    EXPECT_EQ(found, kRankedRecords) << task.task->name;
  }
  // Records of the user's cover their tasks: only the others are added.
  auto userFirst = withShippedRecords({records[0]}, tasks, HardwareConfig{}, &added);
  EXPECT_EQ(added, 9);
  EXPECT_EQ(userFirst.size(), 1 + 9 * kRankedRecords);
  HardwareConfig other;
  other.logAccumulatorBufferSize -= 1;
  EXPECT_TRUE(shippedRecords(other).empty());
}

namespace {

uint64_t groupCycles(const Conv2dWorkload& workload, const Conv2dTiling& tiling, const PackedConvolution& group) {
  Conv2dPackedProblem problem;
  problem.workload = workload;
  problem.group = group;
  SimulatorOptions timeOnly;
  timeOnly.computeValues = false;
  Simulator simulator(HardwareConfig{}, timeOnly);
  conv2dPackedProgram(problem, tiling).runOn(simulator);
  return simulator.lastRunCycles();
}

/// A packed convolution group of the network and its workload.
struct ConvGroup {
  PackedConvolution group;
  Conv2dWorkload workload;
};

/// resnet-18 quantized and packed for the default VTA: its conv2d tasks, the dispatch of the
/// shipped records over them, and its 19 packed convolution groups.
struct Resnet18OnVta {
  const HardwareConfig config;
  graph::Graph packed;
  std::vector<VtaConv2dTask> tasks;
  tune::HistoryBest best;
  std::vector<ConvGroup> groups;

  Resnet18OnVta()
      : packed((graph::registerStandardOps(), prepareForVta(graph::buildModel("resnet-18", {}), config))),
        tasks(extractConv2dPackedTasks(packed, config)),
        best(withShippedRecords({}, tasks, config), target::Target::parse("vta")) {
    for (const graph::FusedGroup& fused : graph::fuseOperators(packed)) {
      if (packedConvolutionOf(packed, fused) < 0) continue;
      PackedConvolution group = describePackedConvolution(packed, fused);
      groups.push_back({group, Conv2dWorkload::of(packed, group.convolution)});
    }
  }
};

}  // namespace

// The cycle model reads instructions, not values: a run for time only (no GEMM, ALU, data LOAD
// or STORE computed) takes a full run's cycles, profile and statistics, on every conv group of
// resnet-18 with its default tiling and with a record's, and it is what measurements use.
TEST(VtaTasks, ARunForTimeOnlyTakesAFullRunsCyclesProfileAndStatistics) {
  const Resnet18OnVta net;
  const HardwareConfig& config = net.config;
  TilingChoice ranked = tilingsFromRecords(net.best, net.tasks, config, nullptr);
  SimulatorOptions timeOnly;
  timeOnly.computeValues = false;
  for (const auto& [group, workload] : net.groups) {
    for (const Conv2dTiling& tiling : {defaultConv2dTiling(workload, group, config), ranked(workload, group)}) {
      Conv2dPackedProblem problem;
      problem.workload = workload;
      problem.group = group;
      Program program = conv2dPackedProgram(problem, tiling);
      Simulator full(config), timed(config, timeOnly);
      program.runOn(full);
      program.runOn(timed);
      EXPECT_EQ(timed.lastRunCycles(), full.lastRunCycles()) << conv2dPackedShapeLine(workload, config);
      const RunProfile &a = timed.lastRunProfile(), &b = full.lastRunProfile();
      EXPECT_EQ(std::vector<uint64_t>({a.cycles, a.gemmCycles, a.resetCycles, a.aluCycles, a.computeLoadCycles, a.loadCycles, a.storeCycles}),
                std::vector<uint64_t>({b.cycles, b.gemmCycles, b.resetCycles, b.aluCycles, b.computeLoadCycles, b.loadCycles, b.storeCycles}));
      EXPECT_EQ(timed.stats().toJson(), full.stats().toJson());
    }
  }
  EXPECT_EQ(net.groups.size(), 19u);
}

// A group's tiling is the fastest, under the group's own epilogue, of its task's best records
// and the default (recomputed here for each of resnet-18's 19 groups with the shipped records),
// and for some groups that is not the task's best record: what ranking per group epilogue buys.
TEST(VtaTasks, EachGroupTakesTheFastestOfItsTasksRecordsUnderItsOwnEpilogue) {
  const Resnet18OnVta net;
  const HardwareConfig& config = net.config;
  const auto& tasks = net.tasks;
  const tune::HistoryBest& best = net.best;
  std::vector<std::string> notes, bestOnlyNotes;
  TilingChoice ranked = tilingsFromRecords(best, tasks, config, &notes);
  TilingChoice bestOnly = tilingsFromRecords(best, tasks, config, &bestOnlyNotes, 1);
  int differ = 0;
  for (const auto& [group, workload] : net.groups) {
    Conv2dTiling chosen = ranked(workload, group), taskBest = bestOnly(workload, group);
    uint64_t cycles = groupCycles(workload, chosen, group);
    // No candidate is faster: the default, and every one of the task's records that fits.
    EXPECT_LE(cycles, groupCycles(workload, defaultConv2dTiling(workload, group, config), group)) << notes.back();
    const VtaConv2dTask* task = nullptr;
    for (const auto& t : tasks)
      if (conv2dPackedShapeLine(t.problem.workload, config) == conv2dPackedShapeLine(workload, config)) task = &t;
    ASSERT_NE(task, nullptr);
    for (const auto& r : best.candidates(task->task->measure->workloadKey)) {
      Conv2dTiling t = conv2dTilingOfSteps(task->problem, r.steps);
      if (group.storedBytes != 1) t.accumulatorSets = 1;
      if (!tilingProblem(workload, t, group, config)) {
        EXPECT_LE(cycles, groupCycles(workload, t, group)) << notes.back();
      }
    }
    uint64_t taskBestCycles = groupCycles(workload, taskBest, group);
    EXPECT_LE(cycles, taskBestCycles);
    if (cycles < taskBestCycles) ++differ;
  }
  EXPECT_EQ(net.groups.size(), 19u);
  EXPECT_GT(differ, 0) << "ranking per group epilogue changed no group's tiling";
  EXPECT_EQ(notes.size(), 19u);
  for (const std::string& n : notes) EXPECT_TRUE(n.find("under this group's epilogue") != std::string::npos) << n;
}
