// `tessel tune --target opencl --scheduler auto` on this machine's OpenCL device (PoCL here):
// two tasks of resnet-18 (its max pool and a 3x3 convolution) searched with the GPU sketch
// rules for a few trials, the seed's task list and task-scheduler table printed, every trial
// logged as a record without a template whose steps replay on the task's DAG and lower within
// the device's limits (the default GPU schedule measured first), the network built with the
// log's records and timed; the module it wrote computes what the reference interpreter does.
#include <gtest/gtest.h>

#include <cmath>

#include "common/ErrorText.h"
#include "common/GpuRequire.h"
#include "common/TesselCli.h"
#include "graph/GpuTargetLimits.h"
#include "graph/Interpreter.h"
#include "graph/ModelZoo.h"
#include "graph/passes/PassManager.h"
#include "ops/GpuSchedules.h"
#include "passes/Lower.h"
#include "runtime/CudaDevice.h"
#include "runtime/GraphExecutor.h"
#include "runtime/OpenclDevice.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
#include "te/DagJson.h"
#include "tune/RecordLog.h"

using tessel::testsupport::tesselCli;

using namespace tessel;
using testsupport::expectContains;

namespace {

runtime::Tensor randomImage(const std::vector<int64_t>& shape) {
  auto t = runtime::Tensor::empty(shape, DataType::float32());
  uint32_t state = 11;
  for (int64_t i = 0; i < t.numel(); ++i) {
    state = state * 1664525u + 1013904223u;
    t.dataAs<float>()[i] = float(state >> 8) / float(1 << 24) - 0.5f;
  }
  return t;
}

}  // namespace

TEST(GpuAutoSchedulerCli, TunesAnOpenclNetworkAndItsBuildMatchesTheInterpreter) {
  TESSEL_REQUIRE_OPENCL();
  TempDir dir("tessel-gpu-auto");
  std::string log = dir.path() + "/auto.log";
  SubprocessOptions limit;
  limit.timeout = std::chrono::seconds(240);
  auto r = runSubprocess({tesselCli(), "tune", "--model", "resnet-18", "--image-size", "32", "--target", "opencl", "--scheduler", "auto",
                          "--tasks", "1,2", "--n-trial", "6", "--batch-size", "3", "--number", "1", "--repeat", "1",
                          "--confirm-rounds", "1", "--check-correctness", "--evaluate-repeat", "1", "--log", log, "-o",
                          dir.path() + "/tuned"},
                         limit);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "GPU kernels verified against the limits of opencl:0");
  expectContains(r.output, "========== Task 1  (workload key: ");
  expectContains(r.output, "[ Task Scheduler ]");
  expectContains(r.output, "Estimated total latency: ");
  expectContains(r.output, "Confirmed 2 tasks");
  expectContains(r.output, "applied tuned records to 2 of");
  expectContains(r.output, "Mean inference time (std dev): ");

  // Every trial a record of the step lists the device's limits allow; the default GPU schedule first.
  passes::GpuLimits limits = graph::gpuLimitsForBuild(target::Target::parse("opencl"));
  auto records = tune::readRecords(log);
  ASSERT_GE(records.records.size(), 8u) << records.report.describeSkipped();  // 6 trials, 2 decisions
  std::map<std::string, int> trialsOf;
  int ok = 0, decisions = 0;
  for (const auto& record : records.records) {
    EXPECT_EQ(record.target, "opencl");
    EXPECT_FALSE(record.task.fromTemplate());
    ASSERT_TRUE(record.task.dag != nullptr);
    te::ComputeDAG dag = te::dagFromJson(nlohmann::json::parse(*record.task.dag));
    schedule::State state = schedule::replay(dag, record.steps);
    if (record.result.confirmed) {
      ++decisions;
      continue;
    }
    if (trialsOf[record.task.workloadKey]++ == 0) {
      auto rules = ops::gpuScheduleOptionsFor(limits.maxThreadsPerBlock, limits.multiProcessorCount, limits.warpSize);
      EXPECT_EQ(schedule::stepsToJson(record.steps), schedule::stepsToJson(ops::defaultGpuSchedule(dag, rules)))
          << "the default GPU schedule is not measured first";
    }
    if (!record.ok()) continue;  // an error record (checked correctness or a limit lowering found)
    ++ok;
    EXPECT_NO_THROW(passes::lowerForGpu(state, "record_check", limits)) << schedule::printSteps(record.steps);
  }
  EXPECT_EQ(decisions, 2);
  EXPECT_EQ(trialsOf.size(), 2u);
  EXPECT_GE(ok, 4) << r.output;

  // The tuned module computes the network.
  graph::ModelOptions zoo;
  zoo.imageSize = 32;
  graph::OptimizeOptions passes;
  passes.desiredLayout = ops::Layout::NCHW;
  passes.fuseSeparable = false;
  graph::Graph g = graph::optimizeGraph(graph::buildModel("resnet-18", zoo), passes);
  std::map<std::string, runtime::Tensor> inputs;
  for (int id : g.inputIds()) inputs[g.node(id).name] = randomImage(g.node(id).type.shape);
  auto want = graph::interpretGraph(g, inputs);
  auto executor = runtime::GraphExecutor::load(dir.path() + "/tuned", {runtime::Device{runtime::DeviceKind::OpenCL, 0}, false});
  for (const auto& [name, value] : inputs) executor.setInput(name, value);
  executor.run();
  ASSERT_EQ(size_t(executor.numOutputs()), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    runtime::Tensor got = executor.getOutput(int(o));
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < got.numel(); ++i) {
      scale = std::max(scale, std::abs(double(want[o].dataAs<float>()[i])));
      worst = std::max(worst, std::abs(double(got.dataAs<float>()[i]) - double(want[o].dataAs<float>()[i])));
    }
    EXPECT_LE(worst, 1e-4 * std::max(scale, 1e-3)) << "output " << o;
  }
}

TEST(GpuAutoSchedulerCli, TunesACudaNetworkWhereAGpuIs) {
  TESSEL_REQUIRE_CUDA();
  TempDir dir("tessel-gpu-auto");
  std::string log = dir.path() + "/cuda.log";
  SubprocessOptions limit;
  limit.timeout = std::chrono::seconds(240);
  auto r = runSubprocess({tesselCli(), "tune", "--model", "resnet-18", "--image-size", "32", "--target", "cuda", "--scheduler", "auto",
                          "--tasks", "2,3", "--n-trial", "16", "--batch-size", "8", "--check-correctness", "--log", log},
                         limit);
  ASSERT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
  expectContains(r.output, "[ Task Scheduler ]");
  expectContains(r.output, "applied tuned records to 2 of");
  expectContains(r.output, "Mean inference time (std dev): ");
  int ok = 0;
  for (const auto& record : tune::readRecords(log).records) {
    EXPECT_EQ(record.target, "cuda");
    ok += record.ok() && !record.result.confirmed;
  }
  EXPECT_GE(ok, 8) << r.output;
}

TEST(GpuAutoSchedulerCli, ACudaTargetWithoutADeviceIsRefusedBeforeAnyWork) {
  std::string why;
  if (runtime::cudaDeviceAvailable(&why)) GTEST_SKIP() << "a CUDA device is here: local CUDA tuning is allowed";
  TempDir dir("tessel-gpu-auto");
  auto r = runSubprocess({tesselCli(), "tune", "--model", "resnet-18", "--target", "cuda", "--scheduler", "auto", "--log",
                          dir.path() + "/c.log"},
                         {});
  EXPECT_FALSE(r.ok());
  expectContains(r.output, "--target cuda --runner local: candidates run on this machine's device, and no CUDA device");
}
