// The curves `tessel records plot` draws (tune/TuningCurves.h), on hand-written logs: each task's
// best GFLOPS after its trials, the network's estimate (sum of weight x best cost) after each
// record, errors and other targets' records, damaged lines, and the choice of the target.
#include <gtest/gtest.h>

#include "common/ErrorText.h"
#include "ops/Examples.h"
#include "tune/RecordLog.h"
#include "tune/TuningCurves.h"

// Inside the namespace rather than under using-directives: the unity build puts this file in one
// translation unit with test_records.cpp, whose directives would make `tessel` ambiguous.
namespace tessel::tune {
namespace {

using testsupport::errorOf;
using testsupport::expectContains;

/// A record of `task` that cost `cost` seconds (0: a failed build) and ended at `timestamp`.
std::string curveLine(const MeasureTaskPtr& task, double cost, double timestamp) {
  MeasureResult result;
  if (cost > 0) {
    result.costs = {cost};
    result.callsPerRepeat = 1;
  } else {
    result.errorNo = MeasureErrorNo::CompileHostError;
    result.errorMessage = "the compiler failed";
  }
  result.timestamp = timestamp;
  return recordToLine(makeRecord(MeasureInput{task, {}, ""}, result)) + "\n";
}

struct CurveLog {
  MeasureTaskPtr a = makeMeasureTask("a", ops::matmul(32, 32, 32), target::Target::parse("cpu"));
  MeasureTaskPtr b = makeMeasureTask("b", ops::matmul(16, 16, 16), target::Target::parse("cpu"));
  MeasureTaskPtr elsewhere = makeMeasureTask("a", ops::matmul(32, 32, 32), target::Target::parse("cpu -mcpu=haswell"));
  std::string target = a->target.str(), otherTarget = elsewhere->target.str();

  /// Task a, a failed trial of it, task b (from here the estimate is known), a garbage line, a
  /// record of another target, a better a, and a worse b whose timestamp steps back in time.
  RecordFile read() const {
    return parseRecords(curveLine(a, 4e-6, 100) + curveLine(a, 0, 101) + curveLine(b, 2e-6, 102) + "%%% not a record\n" +
                        curveLine(elsewhere, 1e-6, 50) + curveLine(a, 3e-6, 103) + curveLine(b, 5e-6, 99));
  }
  double gflopsA(double cost) const { return a->dag.flopCount() / cost / 1e9; }
  double gflopsB(double cost) const { return b->dag.flopCount() / cost / 1e9; }
};

TEST(TuningCurves, EachTasksBestAndTheEstimateInFileOrder) {
  CurveLog log;
  TuningCurves curves = tuningCurves(log.read(), {log.target, std::nullopt});
  EXPECT_EQ(curves.target, log.target);
  EXPECT_EQ(curves.records, 5);
  EXPECT_EQ(curves.otherTargetRecords, 1);
  EXPECT_FALSE(curves.weighted);
  expectContains(curves.skippedLines, "line 4: not valid JSON");

  ASSERT_EQ(curves.tasks.size(), 2u);
  const TaskCurve& a = curves.tasks[0];
  EXPECT_EQ(a.number, 1u);
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.trials, 3);
  EXPECT_EQ(a.errors, 1);
  EXPECT_EQ(a.weight, 1);
  // The failed second trial changes nothing: points where the best changed, the last at trial 3.
  EXPECT_EQ(a.trial, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(a.gflops, (std::vector<double>{log.gflopsA(4e-6), log.gflopsA(3e-6)}));
  const TaskCurve& b = curves.tasks[1];
  EXPECT_EQ(b.trials, 2);
  EXPECT_EQ(b.errors, 0);
  // Its worse second trial leaves the best; the point at its last trial draws the flat end.
  EXPECT_EQ(b.trial, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(b.gflops, (std::vector<double>{log.gflopsB(2e-6), log.gflopsB(2e-6)}));

  // Known from the target's third record (b's first), lowered by a's third trial, flat to the end;
  // the time axis never steps back (the last record ended at 99, before the one before it).
  EXPECT_EQ(curves.network.trial, (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(curves.network.seconds, (std::vector<double>{2, 3, 3}));
  EXPECT_EQ(curves.network.latency, (std::vector<double>{4e-6 + 2e-6, 3e-6 + 2e-6, 3e-6 + 2e-6}));

  // The other target's curves: its one record.
  TuningCurves other = tuningCurves(log.read(), {log.otherTarget, std::nullopt});
  EXPECT_EQ(other.records, 1);
  EXPECT_EQ(other.otherTargetRecords, 5);
  ASSERT_EQ(other.tasks.size(), 1u);
  EXPECT_EQ(other.network.latency, (std::vector<double>{1e-6}));
  EXPECT_EQ(other.network.seconds, (std::vector<double>{0}));
}

TEST(TuningCurves, TheNetworksWeightsWeighTheEstimate) {
  CurveLog log;
  // a runs twice in the network; b is not one of its tasks, so it stays out of the sum, which is
  // then known from the first record.
  TuningCurves curves = tuningCurves(log.read(), {log.target, std::map<std::string, double>{{log.a->workloadKey, 2}}});
  EXPECT_TRUE(curves.weighted);
  EXPECT_EQ(curves.tasks[0].weight, 2);
  EXPECT_TRUE(curves.tasks[0].inNetwork);
  EXPECT_FALSE(curves.tasks[1].inNetwork);
  EXPECT_EQ(curves.tasks[1].trial, (std::vector<int64_t>{1, 2}));  // still drawn
  EXPECT_EQ(curves.network.trial, (std::vector<int64_t>{1, 4, 5}));
  EXPECT_EQ(curves.network.latency, (std::vector<double>{2 * 4e-6, 2 * 3e-6, 2 * 3e-6}));

  expectContains(errorOf([&] { tuningCurves(log.read(), {log.target, std::map<std::string, double>{{"no such key", 1}}}); }),
                 "none of the log's 2 tasks of " + log.target + " is a task of the network");
}

TEST(TuningCurves, TheTargetIsTheLogsOnlyOneOrNamed) {
  CurveLog log;
  RecordFile file = log.read();
  expectContains(errorOf([&] { curveTarget(file.records, ""); }),
                 "the log holds records of 2 targets (" + log.target + ", " + log.otherTarget + "); name the one to draw");
  expectContains(errorOf([&] { curveTarget(file.records, "cuda"); }), "the log has no record of target 'cuda'");
  EXPECT_EQ(curveTarget(parseRecords(curveLine(log.b, 1e-6, 1)).records, ""), log.target);
  expectContains(errorOf([&] { tuningCurves(parseRecords("garbage\n"), {}); }), "the log has no records to draw");
}

TEST(TuningCurves, UntilEveryTaskHasAValidTrialTheEstimateIsUnknown) {
  CurveLog log;
  // b only failed: its curve is empty and the network has no point.
  TuningCurves curves = tuningCurves(parseRecords(curveLine(log.a, 4e-6, 1) + curveLine(log.b, 0, 2)), {});
  ASSERT_EQ(curves.tasks.size(), 2u);
  EXPECT_TRUE(curves.tasks[1].gflops.empty());
  EXPECT_EQ(curves.tasks[1].errors, 1);
  EXPECT_TRUE(curves.network.latency.empty());
}

TEST(TuningCurves, TheJsonTheDrawingReads) {
  CurveLog log;
  nlohmann::json j = tuningCurvesToJson(tuningCurves(log.read(), {log.target, std::nullopt}));
  EXPECT_EQ(j["target"], log.target);
  EXPECT_EQ(j["records"], 5);
  EXPECT_EQ(j["other_target_records"], 1);
  EXPECT_EQ(j["weighted"], false);
  ASSERT_EQ(j["tasks"].size(), 2u);
  EXPECT_EQ(j["tasks"][0]["workload_key"], log.a->workloadKey);
  EXPECT_EQ(j["tasks"][0]["trial"], nlohmann::json::array({1, 3}));
  EXPECT_EQ(j["tasks"][0]["gflops"][1], log.gflopsA(3e-6));
  EXPECT_EQ(j["tasks"][1]["in_network"], true);
  EXPECT_EQ(j["network"]["trial"], nlohmann::json::array({3, 4, 5}));
  EXPECT_EQ(j["network"]["latency"][1], 3e-6 + 2e-6);
  expectContains(j["skipped_lines"].get<std::string>(), "line 4");
}

}  // namespace
}  // namespace tessel::tune
