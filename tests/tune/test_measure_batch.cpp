#include <gtest/gtest.h>

#include <filesystem>

#include "ops/Examples.h"
#include "ops/Schedules.h"
#include "tune/LocalRunner.h"
#include "tune/MeasureBatch.h"
#include "tune/TuneTestSupport.h"

using namespace tessel;
using namespace tessel::tune;
using namespace tessel::tunetest;
using testsupport::expectContains;

namespace {

/// Counts what passes through a builder, to see what measureBatch asks of it.
class CountingBuilder : public Builder {
 public:
  explicit CountingBuilder(LocalBuilder& inner) : inner_(inner) {}
  std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) override {
    built += int(inputs.size());
    for (const auto& i : inputs) configs.push_back(i.config);
    return inner_.build(inputs);
  }
  void discard(const BuildResult& r) override {
    if (r.ok()) ++discarded;
    inner_.discard(r);
  }
  int built = 0, discarded = 0;
  std::vector<std::string> configs;

 private:
  LocalBuilder& inner_;
};

LocalRunnerOptions fastOptions() {
  LocalRunnerOptions options;
  options.number = 1;
  options.repeat = 2;
  options.timeoutSeconds = 1.0;
  options.cooldownIntervalSeconds = 0;
  options.checkCorrectness = true;
  return options;
}

}  // namespace

TEST(MeasureBatch, EveryInputEndsInOneResultInOrder) {
  LocalBuilderOptions builderOptions;
  builderOptions.sourceGenerator = faultySource;
  builderOptions.timeout = std::chrono::milliseconds(5000);
  LocalBuilder local(builderOptions);
  CountingBuilder builder(local);
  LocalRunner runner(fastOptions());

  auto task = smallMatmul();
  std::vector<MeasureInput> inputs = {
      MeasureInput{task, tiledMatmulSteps(), "tiled"},
      MeasureInput{task, {std::make_shared<schedule::ReorderStep>("C", std::vector<std::string>{"x"})}, "bad step"},
      candidate(task, "syntax"),
      candidate(task, "segfault"),
      candidate(task, "wrong"),
      candidate(task, ""),
  };
  auto results = measureBatch(builder, runner, inputs);
  ASSERT_EQ(results.size(), inputs.size());
  EXPECT_TRUE(results[0].ok()) << results[0].errorMessage;
  EXPECT_EQ(results[1].errorNo, MeasureErrorNo::InstantiationError);
  EXPECT_EQ(results[2].errorNo, MeasureErrorNo::CompileHostError);
  EXPECT_EQ(results[3].errorNo, MeasureErrorNo::RuntimeDeviceError);
  EXPECT_EQ(results[4].errorNo, MeasureErrorNo::WrongAnswerError);
  EXPECT_TRUE(results[5].ok()) << results[5].errorMessage;  // right after the crash, on a new worker
  for (const auto& r : results) {
    EXPECT_GT(r.timestamp, 0);
    EXPECT_GE(r.allCost, r.buildSeconds);
    if (r.ok()) {
      EXPECT_EQ(r.costs.size(), 2u);
    }
  }
  // The task's reference was built once, with the candidates, and every good build discarded.
  EXPECT_EQ(builder.built, 7);
  EXPECT_EQ(builder.configs.back(), "reference (naive schedule)");
  EXPECT_FALSE(runner.needsReference(*task));
  EXPECT_EQ(builder.discarded, 5);  // the reference, tiled, segfault, wrong and ""
}

TEST(MeasureBatch, ReferencesAreBuiltOncePerTask) {
  LocalBuilder local;
  CountingBuilder builder(local);
  LocalRunner runner(fastOptions());
  auto first = makeMeasureTask("matmul", ops::matmul(8, 8, 8));
  auto second = makeMeasureTask("matmul_b", ops::matmul(8, 4, 8));
  auto results = measureBatch(builder, runner, {candidate(first, "a"), candidate(second, "b"), candidate(first, "c")});
  for (const auto& r : results) EXPECT_TRUE(r.ok()) << r.errorMessage;
  EXPECT_EQ(builder.built, 5);  // three candidates and two references
  auto again = measureBatch(builder, runner, {candidate(second, "d")});
  EXPECT_TRUE(again[0].ok()) << again[0].errorMessage;
  EXPECT_EQ(builder.built, 6);  // no reference this time
  EXPECT_TRUE(std::filesystem::is_empty(local.directory()));  // everything discarded
}

TEST(MeasureBatch, DefaultSchedulesOfRealOperatorsPassTheCheck) {
  // A padded, fused convolution (several stages) and an integer matmul (exact comparison),
  // each under the rule-based default schedule, against their naive schedules.
  LocalBuilder builder;
  LocalRunner runner(fastOptions());
  auto conv = makeMeasureTask("conv2d_bias_relu", ops::conv2dBiasReluNCHW(1, 8, 10, 10, 16, 3, 3, 1, 1));
  auto imatmul = makeMeasureTask("matmul_int32", ops::matmul(16, 32, 8, DataType::int32()));
  auto results = measureBatch(builder, runner,
                              {MeasureInput{conv, ops::defaultCpuSchedule(conv->dag), "default"},
                               MeasureInput{imatmul, ops::defaultCpuSchedule(imatmul->dag), "default"}});
  for (const auto& r : results) {
    EXPECT_TRUE(r.ok()) << r.errorMessage;
    EXPECT_EQ(r.costs.size(), 2u);
  }
}
