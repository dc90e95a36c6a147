// The kernels of an aarch64 target, checked where they run: cross-compiled with Debian's aarch64
// compiler for NEON's 16-byte vectors and 32 registers, executed by the aarch64 measurement
// worker under qemu-user, each compared on that emulated CPU with its task's naive kernel
// (check_correctness: the worker runs both on the same random inputs). Random step lists (the
// schedule fuzzer's) and every kernel of three zoo networks with the default schedule for the
// target's machine: the AArch64 counterpart of ScheduleFuzz and ZooNumerics, which run the x86
// classes in process.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "fuzz/FuzzRun.h"
#include "graph/ModelZoo.h"
#include "graph/TaskExtraction.h"
#include "graph/passes/PassManager.h"
#include "ops/Schedules.h"
#include "target/Target.h"
#include "tune/LocalBuilder.h"
#include "tune/LocalRunner.h"
#include "tune/MeasureBatch.h"

namespace tessel {
namespace {

#ifdef TESSEL_AARCH64_WORKER

const char* kAarch64 = "cpu -mtriple=aarch64-linux-gnu";

tune::LocalRunnerOptions emulatedBoard() {
  tune::LocalRunnerOptions options;
  options.workerPath = TESSEL_AARCH64_WORKER;
  options.number = 1;
  options.repeat = 1;
  options.timeoutSeconds = 60;  // emulated: tens of times slower than the host
  options.checkCorrectness = true;
  return options;
}

/// Measures the inputs on the emulated board; every one must run and match its naive kernel.
void expectAllMatch(const std::vector<tune::MeasureInput>& inputs, const std::vector<std::string>& what) {
  tune::LocalBuilder builder;
  tune::LocalRunner runner(emulatedBoard());
  auto results = tune::measureBatch(builder, runner, inputs);
  ASSERT_EQ(results.size(), inputs.size());
  for (size_t i = 0; i < results.size(); ++i)
    EXPECT_TRUE(results[i].ok()) << what[i] << ": " << results[i].errorMessage << "\n" << schedule::printSteps(inputs[i].steps);
}

TEST(CrossNumerics, RandomStepListsMatchTheNaiveKernelOnAnEmulatedAarch64Cpu) {
  const target::Target board = target::Target::parse(kAarch64);
  auto ops = fuzz::fuzzOps();
  std::vector<tune::MeasureTaskPtr> tasks;
  for (const auto& op : ops) tasks.push_back(tune::makeMeasureTask(op.name, op.dag, board));
  const uint64_t seed = 20261129;
  fuzz::StepStats stats;
  std::vector<tune::MeasureInput> inputs;
  std::vector<std::string> what;
  for (int i = 0; int(inputs.size()) < 48 && i < 200; ++i) {
    size_t op = size_t(i) % ops.size();
    auto generated = fuzz::generateSteps(ops[op].dag, fuzz::caseSeed(seed, i), stats);
    if (!generated.bug.empty()) continue;  // the host fuzzer reports those
    inputs.push_back({tasks[op], generated.steps, ""});
    what.push_back(fmt::format("case {} of seed {} ({})", i, seed, ops[op].name));
  }
  ASSERT_GE(inputs.size(), 40u);
  expectAllMatch(inputs, what);
}

TEST(CrossNumerics, EveryZooKernelMatchesTheNaiveKernelOnAnEmulatedAarch64Cpu) {
  const target::Target board = target::Target::parse(kAarch64);
  ops::CpuScheduleOptions rules = ops::cpuScheduleOptionsFor(board);
  rules.allowFallback = false;
  std::vector<tune::MeasureInput> inputs;
  std::vector<std::string> what;
  for (const char* name : {"resnet-18", "mobilenet-v2", "squeezenet_v1.1"}) {
    graph::ModelOptions o;
    o.imageSize = 32;  // every layer's kind at a size the emulator runs in milliseconds
    o.classes = 10;
    graph::OptimizeOptions passes;
    passes.pack = graph::defaultPackChoice(board.cpu);
    passes.winograd = graph::defaultWinogradChoice(size_t(board.cpu.l2Bytes));
    graph::Graph g = graph::optimizeGraph(graph::buildModel(name, o), passes);
    for (const auto& t : graph::extractTasks(g)) {
      inputs.push_back({tune::makeMeasureTask(t.name, t.dag, board), ops::defaultCpuSchedule(t.dag, rules), ""});
      what.push_back(fmt::format("{}: {}", name, t.name));
    }
  }
  ASSERT_GE(inputs.size(), 30u);
  expectAllMatch(inputs, what);
}

#else
TEST(CrossNumerics, NeedsTheAarch64Toolchain) {
  GTEST_SKIP() << "aarch64-linux-gnu-g++ or qemu-aarch64 not found at configure time (make deps installs them)";
}
#endif

}  // namespace
}  // namespace tessel
