// driver::tuneNetwork for real on this machine's CPU, on a network of two template tasks (a
// convolution and a dense layer) with a few trials each: every trial lands in the log once and
// is reported in the run's order, a resumed run measures nothing new, the result's best costs
// are the log's, the auto-scheduler logs its decisions beside its trials, and a bad option
// fails naming itself before the log is touched.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "common/ErrorText.h"
#include "driver/TuneNetwork.h"
#include "graph/GraphTestSupport.h"
#include "graph/Operators.h"
#include "support/TempDir.h"
#include "tune/RecordLog.h"

namespace tessel::driver {
namespace {

using graph::testsupport::randomTensor;
using testsupport::errorOf;
using testsupport::expectContains;

/// data [1, 3, 8, 8] -> conv 3x3 (3 -> 8) + bias -> relu -> flatten -> dense (512 -> 10).
graph::Graph tinyNetwork() {
  graph::registerStandardOps();
  graph::Graph g;
  int x = g.addInput("data", {{1, 3, 8, 8}, DataType::float32()});
  int conv = g.addOp("conv2d", {x, g.addConstant("conv_w", randomTensor({8, 3, 3, 3}, 1, 0.2f))}, {{"padding", {1, 1}}}, "conv");
  int bias = g.addOp("add", {conv, g.addConstant("conv_b", randomTensor({8, 1, 1}, 2, 0.2f))}, graph::Attrs::object(), "conv_bias");
  int flat = g.addOp("flatten", {g.addOp("relu", {bias}, graph::Attrs::object(), "conv_relu")}, graph::Attrs::object(), "flat");
  g.markOutput(g.addOp("dense", {flat, g.addConstant("fc_w", randomTensor({10, 512}, 3, 0.05f))}, graph::Attrs::object(), "fc"));
  return g;
}

/// Four random trials per task, measured once each, no confirmation (a record per trial),
/// built and not timed.
TuneNetworkOptions smallRun(const std::string& log) {
  TuneNetworkOptions o;
  o.model = tinyNetwork();
  o.prepare.winograd = {WinogradMode::Kind::Never, 0};  // one variant per layer: a task each
  o.tuner = "random";
  o.nTrial = 4;
  o.batchSize = 2;
  o.confirmTop = 0;
  o.seed = 1;
  o.log = log;
  o.measure.number = 1;
  o.measure.repeat = 1;
  o.threads = 1;
  o.evaluate = false;
  return o;
}

/// Every callback, in the order it fired, as a word and a number.
struct Events {
  std::vector<std::string> order;
  std::vector<std::string> notes;
  std::vector<TaskDecision> decisions;
  int64_t trials = 0;
  std::optional<TuningPlan> plan;

  TuneCallbacks callbacks() {
    TuneCallbacks c;
    c.onStage = [this](TuneStage s) { order.push_back(s == TuneStage::ExtractTasks ? "extract" : s == TuneStage::Compile ? "compile" : "evaluate"); };
    c.onNote = [this](const std::string& line) { notes.push_back(line); };
    c.onTasks = [this](const TaskList&, const std::vector<ListedTask>& selected) { order.push_back(fmt::format("tasks {}", selected.size())); };
    c.onPlan = [this](const TuningPlan& p) {
      plan = p;
      order.push_back(fmt::format("plan {}", p.trials));
    };
    c.onTaskStart = [this](const ListedTask& t, int64_t n) { order.push_back(fmt::format("start {} {}", t.number, n)); };
    c.onTrial = [this](const TrialReport& r) {
      ++trials;
      EXPECT_FALSE(r.record->result.confirmed);
      order.push_back(fmt::format("trial {} {}", r.task->number, r.trial));
    };
    c.onTaskFinish = [this](const ListedTask& t, const TunedTask& sofar) { order.push_back(fmt::format("finish {} {}", t.number, sofar.trials)); };
    c.onDecision = [this](const TaskDecision& d) {
      decisions.push_back(d);
      order.push_back(fmt::format("decision {}", d.number));
    };
    c.onTuned = [this](const TuningSummary& s) { order.push_back(fmt::format("tuned {}", s.trials)); };
    c.onBuilt = [this](const BuildReport&) { order.push_back("built"); };
    c.onEvaluated = [this](const NetworkEvaluation&) { order.push_back("evaluated"); };
    return c;
  }
};

/// Per workload key, the least cost of the log's measured (not confirmed) records.
double logBest(const std::vector<tune::TuningRecord>& records, const std::string& workloadKey) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& r : records)
    if (r.task.workloadKey == workloadKey && !r.result.confirmed && r.ok()) best = std::min(best, r.cost());
  return best;
}

TEST(TuneNetwork, EveryTrialIsLoggedOnceAndReportedInOrder) {
  TempDir dir;
  const std::string log = dir.path() + "/tiny.log";
  Events events;
  TuneNetworkResult result = tuneNetwork(smallRun(log), events.callbacks());

  ASSERT_EQ(result.tasks.size(), 2u) << "the convolution and the dense layer";
  const size_t first = result.tasks[0].number, second = result.tasks[1].number;
  std::vector<std::string> expected{"extract", "tasks 2", "plan 8"};
  for (size_t number : {first, second}) {
    expected.push_back(fmt::format("start {} 4", number));
    for (int trial = 1; trial <= 4; ++trial) expected.push_back(fmt::format("trial {} {}", number, trial));
    expected.push_back(fmt::format("finish {} 4", number));
  }
  expected.insert(expected.end(), {"tuned 8", "compile", "built"});
  EXPECT_EQ(events.order, expected);
  ASSERT_TRUE(events.plan);
  EXPECT_FALSE(events.plan->forNetwork) << "each task in turn";
  EXPECT_TRUE(events.decisions.empty()) << "no confirmation asked for";

  auto file = tune::readRecords(log);
  EXPECT_EQ(file.records.size(), 8u) << "one record per trial";
  EXPECT_EQ(result.summary.trials, 8);
  for (const TunedTask& t : result.tasks) {
    EXPECT_EQ(t.trials, 4);
    EXPECT_EQ(t.resumedTrials, 0);
    EXPECT_FALSE(t.templateName.empty());
    EXPECT_LT(t.errors, t.trials) << t.name << ": every trial failed";
    EXPECT_EQ(t.bestCost, logBest(file.records, t.workloadKey)) << t.name;
    ASSERT_TRUE(t.bestConfig) << t.name;
    EXPECT_FALSE(t.bestSteps.empty()) << t.name;
  }
  EXPECT_NE(result.tasks[0].workloadKey, result.tasks[1].workloadKey);
  expectContains(result.build.records, "applied tuned records to 2 of");
  EXPECT_TRUE(result.build.module.empty()) << "no output asked for";
  EXPECT_FALSE(result.evaluation);
}

TEST(TuneNetwork, AResumedRunMeasuresNothingNewAndKeepsTheLogsBest) {
  TempDir dir;
  const std::string log = dir.path() + "/tiny.log";
  TuneNetworkResult first = tuneNetwork(smallRun(log), {});
  const size_t records = tune::readRecords(log).records.size();

  TuneNetworkOptions again = smallRun(log);
  again.resume = true;
  Events events;
  TuneNetworkResult resumed = tuneNetwork(again, events.callbacks());
  EXPECT_EQ(tune::readRecords(log).records.size(), records) << "nothing appended";
  EXPECT_EQ(events.trials, 0);
  ASSERT_TRUE(events.plan);
  EXPECT_EQ(events.plan->trials, 0) << "the budget is spent";
  EXPECT_EQ(resumed.summary.trials, 0);
  ASSERT_FALSE(events.notes.empty());
  EXPECT_EQ(events.notes[0], fmt::format("Resuming from {}: {} records", log, records));
  ASSERT_EQ(resumed.tasks.size(), first.tasks.size());
  for (size_t i = 0; i < resumed.tasks.size(); ++i) {
    EXPECT_EQ(resumed.tasks[i].trials, 0);
    EXPECT_EQ(resumed.tasks[i].resumedTrials, 4);
    // The log keeps a trial's throughput, from which its cost is computed again.
    EXPECT_DOUBLE_EQ(resumed.tasks[i].bestCost, first.tasks[i].bestCost);
    EXPECT_EQ(resumed.tasks[i].bestConfig, first.tasks[i].bestConfig);
  }
}

TEST(TuneNetwork, TheAutoSchedulerLogsItsDecisionsBesideItsTrials) {
  TempDir dir;
  TuneNetworkOptions o = smallRun(dir.path() + "/auto.log");
  o.search = SearchKind::AutoScheduler;
  o.tasks = {1};
  o.confirmTop = 2;
  o.confirmRounds = 2;
  Events events;
  TuneNetworkResult result = tuneNetwork(o, events.callbacks());
  ASSERT_EQ(result.tasks.size(), 1u);
  EXPECT_EQ(result.tasks[0].number, 1u);
  EXPECT_TRUE(result.tasks[0].templateName.empty());
  ASSERT_TRUE(events.plan);
  EXPECT_TRUE(events.plan->forNetwork);
  EXPECT_EQ(events.plan->trials, 4);
  EXPECT_EQ(events.trials, result.tasks[0].trials);
  EXPECT_EQ(result.summary.trials, result.tasks[0].trials);
  EXPECT_GE(result.tasks[0].trials, 1);
  EXPECT_LE(result.tasks[0].trials, 4);
  auto file = tune::readRecords(o.log);
  ASSERT_EQ(events.decisions.size(), 1u) << "the task measured something new";
  EXPECT_EQ(file.records.size(), size_t(result.tasks[0].trials) + 1) << "its trials and its decision";
  EXPECT_TRUE(file.records.back().result.confirmed);
  ASSERT_TRUE(result.tasks[0].decision);
  EXPECT_EQ(result.tasks[0].decision->number, 1u);
  EXPECT_EQ(result.tasks[0].bestCost, logBest(file.records, result.tasks[0].workloadKey));
  EXPECT_EQ(events.order.back(), "built");
}

TEST(TuneNetwork, ABadOptionFailsNamingItBeforeTheLogIsWritten) {
  TempDir dir;
  const std::string log = dir.path() + "/bad.log";
  auto failure = [&](auto change) {
    TuneNetworkOptions o = smallRun(log);
    change(o);
    return errorOf([&] { tuneNetwork(o, {}); });
  };
  expectContains(failure([](TuneNetworkOptions& o) { o.tasks = {99}; }), "there is no task 99");
  expectContains(failure([](TuneNetworkOptions& o) { o.nTrial = 0; }), "--n-trial must be at least 1, got 0");
  expectContains(failure([](TuneNetworkOptions& o) { o.tuner = "bayes"; }), "Invalid tuner: bayes");
  expectContains(failure([](TuneNetworkOptions& o) { o.log.clear(); }), "needs a records log");
  expectContains(failure([](TuneNetworkOptions& o) { o.prepare.target = target::Target::parse("vta"); }),
                 "a network is tuned for a CPU or a GPU target");
  expectContains(failure([](TuneNetworkOptions& o) { o.remote = RemoteMeasurement{}; }), "a remote measurement without its runner");
  EXPECT_FALSE(std::filesystem::exists(log));
}

}  // namespace
}  // namespace tessel::driver
