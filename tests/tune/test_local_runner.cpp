#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <map>

#include "common/FakeWorker.h"
#include "support/TempDir.h"
#include "tune/LocalRunner.h"
#include "tune/TuneTestSupport.h"

using namespace tessel;
using namespace tessel::tune;
using namespace tessel::tunetest;
using testsupport::expectContains;

namespace {

/// The candidates of the runner tests, built on first use (ctest runs each test in its own
/// process, so each builds only what it needs) and kept for the process.
class LocalRunnerTest : public ::testing::Test {
 protected:
  using Built = std::pair<MeasureInput, BuildResult>;
  static void TearDownTestSuite() {
    builds().clear();
    builder().reset();
  }
  static std::unique_ptr<LocalBuilder>& builder() {
    static std::unique_ptr<LocalBuilder> b;
    return b;
  }
  static std::map<std::string, Built>& builds() {
    static std::map<std::string, Built> m;
    return m;
  }
  static MeasureInput inputFor(const std::string& config) {
    if (config == "tiled") return MeasureInput{smallMatmul(), tiledMatmulSteps(), "tiled"};
    return candidate(smallMatmul(), config);
  }
  /// Builds the configs not built yet, in one parallel batch.
  static void prebuild(const std::vector<std::string>& configs) {
    if (!builder()) {
      LocalBuilderOptions options;
      options.sourceGenerator = faultySource;
      builder() = std::make_unique<LocalBuilder>(options);
    }
    std::vector<MeasureInput> inputs;
    for (const auto& c : configs)
      if (!builds().count(c)) inputs.push_back(inputFor(c));
    auto results = builder()->build(inputs);
    for (size_t i = 0; i < inputs.size(); ++i) {
      ASSERT_TRUE(results[i].ok()) << inputs[i].config << ": " << results[i].errorMessage;
      builds()[inputs[i].config] = {inputs[i], results[i]};
    }
  }
  static LocalRunnerOptions fastOptions() {
    LocalRunnerOptions options;
    options.number = 2;
    options.repeat = 3;
    options.timeoutSeconds = 1.0;
    options.cooldownIntervalSeconds = 0;
    return options;
  }
  static MeasureResult run(LocalRunner& runner, const std::string& config) {
    prebuild({config});
    const auto& entry = builds().at(config);
    return runner.runOne(entry.first, entry.second);
  }
  static void referenceFromNaive(LocalRunner& runner) {
    prebuild({""});
    runner.setReference(*smallMatmul(), builds().at("").second);
  }
};

/// The small matmul's kernel in a library at `path` that is never built: for workers that do
/// not get as far as opening it.
BuildResult matmulBuildAt(const std::string& path) {
  BuildResult build;
  build.libraryPath = path;
  build.kernelName = "matmul";
  build.numInputs = 2;
  return build;
}

}  // namespace

TEST_F(LocalRunnerTest, MeasuresACorrectCandidate) {
  prebuild({"tiled", ""});
  LocalRunner runner(fastOptions());
  auto r = run(runner, "tiled");
  ASSERT_TRUE(r.ok()) << r.errorMessage;
  ASSERT_EQ(r.costs.size(), 3u);
  for (double c : r.costs) EXPECT_GT(c, 0);
  EXPECT_EQ(r.callsPerRepeat, 2);
  EXPECT_GT(r.runSeconds, 0);
  EXPECT_GT(r.buildSeconds, 0);
  EXPECT_DOUBLE_EQ(r.allCost, r.buildSeconds + r.runSeconds);
  EXPECT_GT(r.timestamp, 1.6e9);
  EXPECT_LT(r.cost(), 1.0);
  EXPECT_EQ(runner.workersStarted(), 1);
  // The worker lives on for the next candidate.
  EXPECT_TRUE(run(runner, "").ok());
  EXPECT_EQ(runner.workersStarted(), 1);
}

TEST_F(LocalRunnerTest, ACandidateSlowerThanItsStopBoundIsTimedByOneCall) {
  prebuild({""});
  auto options = fastOptions();
  options.minRepeatMs = 5;
  LocalRunner runner(options);
  auto entry = builds().at("");
  entry.first.stopAboveSeconds = 1e-9;  // any kernel's warm-up is slower
  auto r = runner.runOne(entry.first, entry.second);
  ASSERT_TRUE(r.ok()) << r.errorMessage;
  EXPECT_EQ(r.costs.size(), 1u);
  EXPECT_EQ(r.callsPerRepeat, 1);
  entry.first.stopAboveSeconds = 10;  // far above: measured as usual
  r = runner.runOne(entry.first, entry.second);
  ASSERT_TRUE(r.ok()) << r.errorMessage;
  EXPECT_EQ(r.costs.size(), 3u);
  EXPECT_GE(r.callsPerRepeat, 2);
}

TEST_F(LocalRunnerTest, CacheFlushKeepsNumberAndMinRepeatMs) {
  auto options = fastOptions();
  // A flush before every call makes this run long; beside `make test`'s other tests it once
  // passed fastOptions' 1 s (timed out after 2.1 s), which is not what this test is about.
  options.timeoutSeconds = 10;
  options.enableCpuCacheFlush = true;
  options.minRepeatMs = 15;
  options.repeat = 2;
  LocalRunner runner(options);
  auto r = run(runner, "");
  ASSERT_TRUE(r.ok()) << r.errorMessage;
  ASSERT_EQ(r.costs.size(), 2u);
  EXPECT_GT(r.callsPerRepeat, 2);  // raised to fill 15 ms, not reset to 1 by the flush
  // The measurement that fixed `number` lasted min_repeat_ms (the later ones may run faster).
  EXPECT_GE(r.costs[0] * r.callsPerRepeat, 0.015 * (1 - 1e-9));
}

TEST_F(LocalRunnerTest, ASegfaultIsARuntimeDeviceErrorAndTheWorkerIsReplaced) {
  prebuild({"", "segfault"});
  LocalRunner runner(fastOptions());
  ASSERT_TRUE(run(runner, "").ok());
  auto r = run(runner, "segfault");
  EXPECT_EQ(r.errorNo, MeasureErrorNo::RuntimeDeviceError);
  expectContains(r.errorMessage, "signal 11");
  expectContains(r.errorMessage, "matmul");
  EXPECT_TRUE(r.costs.empty());
  EXPECT_TRUE(std::isinf(r.cost()));
  auto after = run(runner, "");
  EXPECT_TRUE(after.ok()) << after.errorMessage;
  EXPECT_EQ(runner.workersStarted(), 2);
}

TEST_F(LocalRunnerTest, AHangIsARunTimeoutAndTheWorkerIsReplaced) {
  prebuild({"", "hang"});
  LocalRunner runner(fastOptions());
  auto start = std::chrono::steady_clock::now();
  auto r = run(runner, "hang");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.errorNo, MeasureErrorNo::RunTimeoutError);
  expectContains(r.errorMessage, "timed out after 1.0 s");
  EXPECT_LT(seconds, 3.0);
  auto after = run(runner, "");
  EXPECT_TRUE(after.ok()) << after.errorMessage;
  EXPECT_EQ(runner.workersStarted(), 2);
}

TEST_F(LocalRunnerTest, AWrongValueIsAWrongAnswerNamingTheElement) {
  auto options = fastOptions();
  options.checkCorrectness = true;
  prebuild({"", "wrong", "tiled"});
  LocalRunner runner(options);
  EXPECT_TRUE(runner.needsReference(*smallMatmul()));
  referenceFromNaive(runner);
  EXPECT_FALSE(runner.needsReference(*smallMatmul()));
  auto r = run(runner, "wrong");
  EXPECT_EQ(r.errorNo, MeasureErrorNo::WrongAnswerError);
  expectContains(r.errorMessage, "output 'C' element 3 of 256");
  expectContains(r.errorMessage, "relative error");
  EXPECT_EQ(runner.workersStarted(), 1);
  auto tiled = run(runner, "tiled");  // a real schedule agrees with the naive one
  EXPECT_TRUE(tiled.ok()) << tiled.errorMessage;
  EXPECT_EQ(runner.workersStarted(), 2);  // after a wrong answer, a fresh worker
}

TEST_F(LocalRunnerTest, WithoutTheCheckAWrongValueGoesUnnoticed) {
  LocalRunner runner(fastOptions());
  EXPECT_FALSE(runner.needsReference(*smallMatmul()));
  EXPECT_TRUE(run(runner, "wrong").ok());
}

TEST_F(LocalRunnerTest, AKernelErrorIsARuntimeDeviceErrorWithItsMessage) {
  prebuild({"", "kernel_error"});
  LocalRunner runner(fastOptions());
  auto r = run(runner, "kernel_error");
  EXPECT_EQ(r.errorNo, MeasureErrorNo::RuntimeDeviceError);
  expectContains(r.errorMessage, "injected kernel failure");
  EXPECT_TRUE(run(runner, "").ok());
}

TEST_F(LocalRunnerTest, AFailedReferenceFailsItsCandidatesClearly) {
  auto options = fastOptions();
  options.checkCorrectness = true;
  LocalRunner runner(options);
  BuildResult broken;
  broken.errorNo = MeasureErrorNo::CompileHostError;
  broken.errorMessage = "the C++ compiler failed";
  runner.setReference(*smallMatmul(), broken);
  auto r = run(runner, "");
  EXPECT_EQ(r.errorNo, MeasureErrorNo::UnknownError);
  expectContains(r.errorMessage, "reference (naive schedule)");
  expectContains(r.errorMessage, "the C++ compiler failed");
}

TEST_F(LocalRunnerTest, AFailedBuildPassesThrough) {
  LocalRunner runner(fastOptions());
  BuildResult failed;
  failed.errorNo = MeasureErrorNo::InstantiationError;
  failed.errorMessage = "step 1 (split): no iterator 'q'";
  failed.buildSeconds = 0.25;
  auto r = runner.runOne(candidate(smallMatmul(), "x"), failed);
  EXPECT_EQ(r.errorNo, MeasureErrorNo::InstantiationError);
  EXPECT_EQ(r.errorMessage, failed.errorMessage);
  EXPECT_EQ(r.buildSeconds, 0.25);
  EXPECT_EQ(runner.workersStarted(), 0);  // nothing to run
}

TEST_F(LocalRunnerTest, CooldownSeparatesMeasurements) {
  auto options = fastOptions();
  options.cooldownIntervalSeconds = 0.3;
  LocalRunner runner(options);
  ASSERT_TRUE(run(runner, "").ok());
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(run(runner, "").ok());
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.29);
}

TEST_F(LocalRunnerTest, ACancelledRunHasItsWorkerKilledAtOnce) {
  // A device server asks whether its client is still there while the worker runs.
  prebuild({"", "hang"});
  auto options = fastOptions();
  options.timeoutSeconds = 600;
  LocalRunner runner(options);
  auto start = std::chrono::steady_clock::now();
  auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const auto& hang = builds().at("hang");
  double cancelledAt = 0;
  auto r = runner.runOne(hang.first, hang.second, [&] {
    if (cancelledAt == 0 && since() > 0.3) cancelledAt = since();
    return cancelledAt > 0;
  });
  EXPECT_EQ(r.errorNo, MeasureErrorNo::UnknownError);
  expectContains(r.errorMessage, "cancelled after");
  EXPECT_GT(cancelledAt, 0);
  EXPECT_LT(since() - cancelledAt, 1.0) << "the worker is killed as soon as the run is cancelled";
  // The next candidate gets a fresh worker.
  EXPECT_TRUE(run(runner, "").ok());
  EXPECT_EQ(runner.workersStarted(), 2);
}

TEST_F(LocalRunnerTest, TheLongestRunCapsWhatATimeoutAsks) {
  prebuild({"hang"});
  auto options = fastOptions();
  options.timeoutSeconds = 86400;  // a client's day
  options.maxRunSeconds = 0.5;     // a device server's --max-run-timeout
  LocalRunner runner(options);
  auto start = std::chrono::steady_clock::now();
  auto r = run(runner, "hang");
  EXPECT_EQ(r.errorNo, MeasureErrorNo::RunTimeoutError);
  expectContains(r.errorMessage, "timed out after 0.5 s (capped from 86400.0 s)");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 3.0);
}

TEST(LocalRunner, AWorkersImpossibleCostsAreAnError) {
  // A worker answering 1 ps per call: no kernel call is that fast, and a log holding it would
  // be refused when read.
  TempDir dir;
  LocalRunnerOptions options;
  options.workerPath = testsupport::writeFakeWorker(dir.path(), "1e-12, 1e-12");
  LocalRunner runner(options);
  auto r = runner.runOne(candidate(smallMatmul(), ""), matmulBuildAt(dir.path() + "/candidate.so"));
  EXPECT_EQ(r.errorNo, MeasureErrorNo::RuntimeDeviceError);
  expectContains(r.errorMessage, "implausible timing from the measurement worker");
  expectContains(r.errorMessage, "less than any kernel call takes");
  EXPECT_TRUE(r.costs.empty());
}

TEST(LocalRunner, AMissingWorkerIsReportedAtConstruction) {
  LocalRunnerOptions options;
  options.workerPath = "/nonexistent/tessel-measure-worker";
  expectContains(testsupport::errorOf([&] { LocalRunner r(options); }), "/nonexistent/tessel-measure-worker");
  options.workerPath = "";
  options.repeat = 0;
  expectContains(testsupport::errorOf([&] { LocalRunner r(options); }), "repeat");
}

TEST(LocalRunner, AWorkerThatDoesNotStartIsAnErrorRecord) {
  LocalRunnerOptions options;
  options.workerPath = "/bin/false";
  LocalRunner runner(options);
  auto r = runner.runOne(candidate(smallMatmul(), ""), matmulBuildAt("/nonexistent.so"));
  EXPECT_EQ(r.errorNo, MeasureErrorNo::UnknownError);
  expectContains(r.errorMessage, "did not start");
  expectContains(r.errorMessage, "exited with code 1");
}
