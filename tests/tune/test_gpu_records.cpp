// Tuning records applied to a GPU build (apply-history-best, as `tessel compile --target opencl
// --records LOG` does): resnet-18's first convolution tasks measured on PoCL with a config that
// is not the default schedule, logged, then the network built with the log's best records; the
// build takes those records, and its outputs match the reference interpreter's within 1e-4.
#include <gtest/gtest.h>

#include <cmath>

#include "common/ErrorText.h"
#include "common/GpuRequire.h"
#include "graph/Build.h"
#include "graph/GpuTargetLimits.h"
#include "graph/Interpreter.h"
#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "graph/passes/PassManager.h"
#include "ops/Examples.h"
#include "passes/Lower.h"
#include "ops/GpuSchedules.h"
#include "runtime/GraphExecutor.h"
#include "runtime/OpenclDevice.h"
#include "support/TempDir.h"
#include "tune/HistoryBest.h"
#include "tune/LocalBuilder.h"
#include "tune/LocalRunner.h"
#include "tune/MeasureBatch.h"
#include "tune/Record.h"
#include "tune/RecordLog.h"
#include "tune/autotvm/GpuTemplates.h"

using namespace tessel;

namespace {

runtime::Tensor randomImage(const std::vector<int64_t>& shape) {
  auto t = runtime::Tensor::empty(shape, DataType::float32());
  uint32_t state = 7;
  for (int64_t i = 0; i < t.numel(); ++i) {
    state = state * 1664525u + 1013904223u;
    t.dataAs<float>()[i] = float(state >> 8) / float(1 << 24) - 0.5f;
  }
  return t;
}

}  // namespace

TEST(GpuRecords, BestRecordsApplyToAnOpenclBuildAndMatchTheInterpreter) {
  TESSEL_REQUIRE_OPENCL();
  graph::ModelOptions zoo;
  zoo.imageSize = 32;
  zoo.classes = 10;
  graph::OptimizeOptions passes;
  passes.desiredLayout = ops::Layout::NCHW;
  passes.fuseSeparable = false;
  graph::Graph g = graph::optimizeGraph(graph::buildModel("resnet-18", zoo), passes);
  const target::Target target = target::Target::parse("opencl");
  passes::GpuLimits limits = graph::gpuLimitsForBuild(target);

  // The last config of the first two tasks with a choice (not the fallback): measured and logged.
  // Which tasks have one depends on the device's limits: on an H200, the 32x32 network's max
  // pool has one schedule for every thread count, since its few outputs bound the block.
  TempDir dir("tessel-gpu-records");
  std::string log = dir.path() + "/records.log";
  tune::LocalBuilder builder;
  tune::LocalRunnerOptions o;
  o.checkCorrectness = true;
  tune::LocalRunner runner(o);
  std::set<std::string> tuned;
  {
    tune::RecordLogWriter writer(log);
    auto tasks = graph::extractTasks(g);
    for (size_t t = 0; t < tasks.size() && tuned.size() < 2; ++t) {
      auto task = tune::autotvm::makeGpuTuningTask(tasks[t].name, tasks[t].dag, target, limits);
      if (task->space->size() < 2) continue;
      // The last config that instantiates (a tiled conv's last ones are over the register budget).
      uint64_t index = task->space->size() - 1;
      std::vector<schedule::StepPtr> steps;
      for (;; --index) {
        try {
          steps = task->instantiate(task->space->get(index));
          break;
        } catch (const Error&) {
          ASSERT_GT(index, 0u) << tasks[t].name << ": no config instantiates";
        }
      }
      auto config = task->space->get(index);
      tune::MeasureInput input{task->measure, steps, config.str()};
      auto results = tune::measureBatch(builder, runner, {input});
      ASSERT_TRUE(results[0].ok()) << results[0].errorMessage;
      writer.append(tune::makeRecord(input, results[0], task->templateName, nullptr,
                                     tune::RecordConfig{int64_t(config.index()), config.toJson()["entity"]}));
      tuned.insert(task->measure->workloadKey);
    }
  }
  ASSERT_EQ(tuned.size(), 2u) << "fewer than two tasks with more than one config";

  auto best = tune::HistoryBest::fromLog(log, target);
  graph::BuildOptions build;
  build.target = target;
  build.gpuLimits = limits;
  auto rules = ops::gpuScheduleOptionsFor(limits.maxThreadsPerBlock, limits.multiProcessorCount, limits.warpSize);
  build.schedule = best.provider([rules](const te::ComputeDAG& dag) { return ops::defaultGpuSchedule(dag, rules); });
  graph::buildGraph(g, dir.path() + "/module", build);
  int applied = 0;
  for (const auto& use : best.uses()) {
    if (tuned.count(use.workloadKey)) {
      EXPECT_TRUE(use.fromRecord) << use.name << ": " << use.note;
      ++applied;
    } else {
      EXPECT_FALSE(use.fromRecord) << use.name;
    }
  }
  EXPECT_EQ(applied, 2);

  std::map<std::string, runtime::Tensor> inputs;
  for (int id : g.inputIds()) inputs[g.node(id).name] = randomImage(g.node(id).type.shape);
  auto want = graph::interpretGraph(g, inputs);
  auto executor = runtime::GraphExecutor::load(dir.path() + "/module", {runtime::Device{runtime::DeviceKind::OpenCL, 0}, false});
  for (const auto& [name, value] : inputs) executor.setInput(name, value);
  executor.run();
  ASSERT_EQ(size_t(executor.numOutputs()), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    auto got = executor.getOutput(int(o));
    double scale = 1e-12, worst = 0;
    for (int64_t i = 0; i < want[o].numel(); ++i) scale = std::max(scale, double(std::fabs(want[o].dataAs<float>()[i])));
    for (int64_t i = 0; i < want[o].numel(); ++i)
      worst = std::max(worst, std::fabs(double(got.dataAs<float>()[i]) - want[o].dataAs<float>()[i]) / scale);
    EXPECT_LT(worst, 1e-4) << "output " << o;
  }
}

TEST(GpuRecords, ARecordOverTheBuildsLimitsIsSkippedForTheDefault) {
  TESSEL_REQUIRE_OPENCL();
  // Measured on this machine's OpenCL device with 1024 threads per block (it allows them)...
  te::ComputeDAG dag = ops::conv2dBiasReluNCHW(1, 8, 16, 16, 32, 3, 3, 1, 1);
  passes::GpuLimits device = graph::gpuLimitsForBuild(target::Target::parse("opencl"));
  ASSERT_GE(device.maxThreadsPerBlock, 1024) << "the test needs a device allowing 1024 threads per block";
  auto task = std::make_shared<tune::MeasureTask>(*tune::makeMeasureTask("conv", dag, target::Target::parse("opencl -device=mali")));
  task->gpuLimits = device;
  ops::GpuScheduleOptions wide;
  wide.threadsPerBlock = 1024;
  tune::MeasureInput input{task, ops::defaultGpuSchedule(dag, wide), "wide"};
  tune::LocalBuilder builder;
  tune::LocalRunner runner;
  auto results = tune::measureBatch(builder, runner, {input});
  ASSERT_TRUE(results[0].ok()) << results[0].errorMessage;
  tune::HistoryBest best({tune::makeRecord(input, results[0])}, target::Target::parse("opencl -device=mali"));
  // ... then a build for a Mali board (256 threads): the record does not fit, the default does.
  passes::GpuLimits mali = passes::GpuLimits::mali();
  auto rules = ops::gpuScheduleOptionsFor(mali.maxThreadsPerBlock, mali.multiProcessorCount, mali.warpSize);
  auto provider = best.provider([rules](const te::ComputeDAG& d) { return ops::defaultGpuSchedule(d, rules); },
                                [mali](const schedule::State& state) { passes::lowerForGpu(state, "check", mali); });
  auto steps = provider(dag);
  EXPECT_EQ(schedule::stepsToJson(steps), schedule::stepsToJson(ops::defaultGpuSchedule(dag, rules)));
  ASSERT_EQ(best.uses().size(), 1u);
  EXPECT_FALSE(best.uses()[0].fromRecord);
  testsupport::expectContains(best.uses()[0].note, "1 record and none applies: GPU kernel");
  testsupport::expectContains(best.uses()[0].note, "exceed the limit of 256");
}
