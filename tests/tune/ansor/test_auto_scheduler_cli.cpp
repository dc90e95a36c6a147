// `tessel tune --scheduler auto` as a user runs it, on one task of resnet-18 (a 3x3
// convolution): the seed's task list and task-scheduler table are printed, every trial is logged
// as a record without a template whose steps replay on the task's DAG, a resumed run keeps the
// logged trials and measures none twice, and the build applies the best record. The default
// schedule is measured first and the run ends with a confirmed decision against it.
#include <gtest/gtest.h>

#include <set>

#include "common/ErrorText.h"
#include "common/TesselCli.h"
#include "ops/Schedules.h"
#include "support/Subprocess.h"
#include "support/TempDir.h"
#include "te/DagJson.h"
#include "tune/RecordLog.h"

using tessel::testsupport::tesselCli;

using namespace tessel;
using namespace tessel::testsupport;

namespace {

SubprocessResult tuneAuto(const std::string& log, const std::string& trials, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {tesselCli(), "tune",  "--model",  "resnet-18", "--tasks",  "2",  "--scheduler", "auto",
                                   "--n-trial", trials, "--batch-size", "2", "--number", "1", "--repeat", "1",
                                   "--log",      log,    "--no-evaluate"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  SubprocessOptions limit;
  limit.timeout = std::chrono::milliseconds(240000);
  return runSubprocess(argv, limit);
}

}  // namespace

TEST(AutoSchedulerCli, TunesLogsStepListsResumesAndTheBuildAppliesThem) {
  TempDir dir;
  std::string log = dir.path() + "/auto.log";
  auto first = tuneAuto(log, "4");
  ASSERT_TRUE(first.ok()) << first.describe() << "\n" << first.output;
  expectContains(first.output, "========== Task 2  (workload key: ");  // numbered as listed
  expectContains(first.output, "[ Task Scheduler ]");
  expectContains(first.output, "|  ID  | Latency (ms) | Speed (GFLOPS) | Trials |");
  expectContains(first.output, "Estimated total latency: ");
  expectContains(first.output, "applied tuned records to 1 of");

  expectContains(first.output, "Confirmed 1 tasks");

  // Four trials, the first of them the default schedule, and the confirmation's decision.
  auto before = tune::readRecords(log);
  ASSERT_EQ(before.records.size(), 5u) << before.report.describeSkipped();
  for (const auto& r : before.records) {
    EXPECT_FALSE(r.task.fromTemplate());
    EXPECT_FALSE(r.steps.empty());
    ASSERT_TRUE(r.task.dag != nullptr);
    EXPECT_NO_THROW(schedule::replay(te::dagFromJson(nlohmann::json::parse(*r.task.dag)), r.steps));
  }
  const auto& firstTrial = before.records.front();
  auto defaultSteps = ops::defaultCpuSchedule(te::dagFromJson(nlohmann::json::parse(*firstTrial.task.dag)),
                                              ops::cpuScheduleOptionsFor(target::Target::parse(firstTrial.target)));
  EXPECT_EQ(schedule::stepsToJson(firstTrial.steps), schedule::stepsToJson(defaultSteps)) << "the default is not measured first";
  for (size_t i = 0; i < 4; ++i) EXPECT_FALSE(before.records[i].result.confirmed);
  EXPECT_TRUE(before.records[4].result.confirmed);
  // Five interleaved rounds, or none when the default was more than 1.5x faster than every
  // searched schedule (tune::pickContenders).
  int rounds = before.records[4].result.confirmation["rounds"].get<int>();
  EXPECT_TRUE(rounds == 5 || rounds == 0) << rounds;
  if (rounds == 0) {
    EXPECT_EQ(schedule::stepsToJson(before.records[4].steps), schedule::stepsToJson(defaultSteps));
  }

  auto resumed = tuneAuto(log, "8", {"--resume"});
  ASSERT_TRUE(resumed.ok()) << resumed.describe() << "\n" << resumed.output;
  expectContains(resumed.output, "Resuming from");
  auto after = tune::readRecords(log);
  ASSERT_EQ(after.records.size(), 10u) << after.report.describeSkipped();  // 8 trials, 2 decisions
  std::set<std::string> schedules;
  for (size_t i = 0; i < after.records.size(); ++i) {
    if (!after.records[i].result.confirmed) schedules.insert(schedule::stepsToJson(after.records[i].steps).dump());
    if (i < before.records.size()) {
      EXPECT_EQ(tune::recordToLine(after.records[i]), tune::recordToLine(before.records[i])) << "record " << i << " changed";
    }
  }
  EXPECT_EQ(schedules.size(), 8u) << "a schedule was measured twice";
}
