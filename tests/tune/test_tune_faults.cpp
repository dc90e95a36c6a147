// Tuning through real builds and runs when candidates misbehave: a template whose configs
// segfault, hang, compute a wrong answer, fail to compile or crash the code generator. Every
// trial ends in the right error record, the run finishes, and the best config is a valid one.
#include <gtest/gtest.h>

#include <map>

#include "tune/LocalBuilder.h"
#include "tune/LocalRunner.h"
#include "tune/TuneTestSupport.h"
#include "tune/autotvm/TuneTask.h"

using namespace tessel;
using namespace tessel::tune;
using namespace tessel::tune::autotvm;

namespace {

const std::vector<std::string> kFaults = {"", "segfault", "hang", "wrong", "syntax", "lower_crash"};

/// A "template" over the small matmul: knob `fault` picks the misbehaviour, knob `tile` the
/// schedule (naive or tiled), so each fault occurs with both schedules. The fault is also a
/// pragma of the schedule (a comment in the kernel): the tuning loop measures a step list once,
/// so each config must be a schedule of its own.
TuningTaskPtr faultyTemplateTask() {
  auto space = std::make_shared<ConfigSpace>();
  std::vector<nlohmann::json> faults(kFaults.begin(), kFaults.end());
  space->defineKnob("fault", faults);
  space->defineKnob("tile", {false, true});
  auto task = std::make_shared<TuningTask>();
  task->name = "faulty_matmul";
  task->templateName = "faulty_matmul.test";
  task->measure = tunetest::smallMatmul();
  task->flops = task->measure->dag.flopCount();
  task->space = space;
  task->instantiate = [](const ConfigEntity& c) {
    auto steps = c.value("tile").get<bool>() ? tunetest::tiledMatmulSteps() : std::vector<schedule::StepPtr>{};
    std::string fault = c.value("fault").get<std::string>();
    steps.push_back(std::make_shared<schedule::PragmaStep>("C", "j", "test_fault", fault.empty() ? "none" : fault));
    return steps;
  };
  return task;
}

/// The fault of a candidate: the knob value in its config JSON, handed to the faulty source
/// generator of the measurement tests.
std::string faultOf(const MeasureInput& input) {
  if (input.config.empty() || input.config[0] != '{') return input.config;  // the task's reference build
  auto entity = nlohmann::json::parse(input.config)["entity"];
  return entity[0][2].get<std::string>();
}

TEST(TuneFaults, EveryMisbehavingCandidateIsAnErrorRecordAndTheBestIsValid) {
  auto task = faultyTemplateTask();
  LocalBuilderOptions b;
  b.nParallel = 2;
  b.timeout = std::chrono::milliseconds(5000);
  b.sourceGenerator = [](const MeasureInput& input, const std::string& kernel) {
    MeasureInput faulty = input;
    faulty.config = faultOf(input);
    return tunetest::faultySource(faulty, kernel);
  };
  LocalBuilder builder(b);
  LocalRunnerOptions r;
  r.timeoutSeconds = 1;
  r.checkCorrectness = true;
  r.cooldownIntervalSeconds = 0;
  r.number = 1;
  r.repeat = 1;
  LocalRunner runner(r);

  TuneTaskOptions o;
  o.nTrial = 100;
  o.batchSize = 4;
  o.progressTo = nullptr;
  auto tuner = makeTuner("gridsearch", task);
  std::map<std::string, std::vector<MeasureErrorNo>> errorsByFault;
  int confirmations = 0;
  auto result = tuneTask(task, *tuner, builder, runner, o, {}, [&](const ConfigEntity& c, const MeasureInput&, const MeasureResult& m) {
    if (m.confirmed) {
      ++confirmations;  // the decision: the one valid config (the fallback), re-measured
      EXPECT_EQ(c.value("fault").get<std::string>(), "");
      EXPECT_TRUE(m.ok());
      return;
    }
    errorsByFault[c.value("fault").get<std::string>()].push_back(m.errorNo);
  });
  EXPECT_EQ(confirmations, 1);

  EXPECT_EQ(result.trials, int64_t(task->space->size()));
  const std::map<std::string, MeasureErrorNo> expected = {
      {"", MeasureErrorNo::NoError},
      {"segfault", MeasureErrorNo::RuntimeDeviceError},
      {"hang", MeasureErrorNo::RunTimeoutError},
      {"wrong", MeasureErrorNo::WrongAnswerError},
      {"syntax", MeasureErrorNo::CompileHostError},
      {"lower_crash", MeasureErrorNo::InstantiationError},
  };
  for (const auto& [fault, errorNo] : expected) {
    ASSERT_EQ(errorsByFault[fault].size(), 2u) << fault;
    for (MeasureErrorNo e : errorsByFault[fault])
      EXPECT_EQ(e, errorNo) << "fault '" << fault << "' gave " << measureErrorName(e);
  }
  EXPECT_EQ(result.errors, 10);
  ASSERT_TRUE(result.bestIndex.has_value());
  EXPECT_EQ(task->space->get(*result.bestIndex).value("fault").get<std::string>(), "");
  EXPECT_GT(result.bestFlopsPerSecond, 0);
}

}  // namespace
