// The task scheduler on a synthetic network: each task's best cost falls with its trials along
// its own curve (start, floor, pace), so how the budget is split decides the network's latency.
// The gradient strategy must end lower than round-robin at the same total trials; dead tasks
// must not be picked again; the table must be the seed's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tune/ProgressLine.h"
#include "tune/RunEstimate.h"
#include "tune/TaskScheduler.h"

using namespace tessel::tune;

namespace {

struct Curve {
  double start, floor, pace;  // seconds, seconds, trials
  double at(int64_t trials) const { return floor + (start - floor) * std::exp(-double(trials) / pace); }
};

struct SyntheticNetwork {
  std::vector<ScheduledTask> tasks;
  std::vector<Curve> curves;
};

/// Six tasks: one heavy and repeated four times that improves slowly, light ones that are done
/// after a few rounds, two of the same kind and size (a similarity group).
SyntheticNetwork network() {
  SyntheticNetwork n;
  n.tasks = {{"conv_a", 1, 2e8, "conv2d"}, {"conv_b", 1, 2.2e8, "conv2d"}, {"dense", 1, 1e6, "dense"},
             {"conv_heavy", 4, 9e8, "conv2d"}, {"pool", 1, 1e5, "pool"}, {"depthwise", 2, 3e7, "depthwise"}};
  n.curves = {{1.0e-3, 0.3e-3, 100}, {1.1e-3, 0.35e-3, 60}, {0.05e-3, 0.04e-3, 20},
              {4.0e-3, 1.0e-3, 400}, {0.02e-3, 0.019e-3, 10}, {0.5e-3, 0.1e-3, 150}};
  return n;
}

/// Runs `scheduler` on `n`'s tasks: each round's best cost is its curve at the trials so far.
void runAlongTheCurves(TaskScheduler& scheduler, const SyntheticNetwork& n, int64_t total) {
  std::vector<int64_t> spent(n.tasks.size(), 0);
  scheduler.run(total, [&](size_t task, int64_t count) {
    spent[task] += count;
    return RoundResult{count, n.curves[task].at(spent[task])};
  });
}

double runWith(const std::string& strategy, int64_t total, uint64_t seed, std::vector<int64_t>* trials = nullptr) {
  SyntheticNetwork n = network();
  TaskSchedulerOptions o;
  o.strategy = strategy;
  o.trialsPerRound = 32;
  o.seed = seed;
  o.tableTo = nullptr;
  TaskScheduler scheduler(n.tasks, o);
  std::vector<int64_t> spent(n.tasks.size(), 0);
  scheduler.run(total, [&](size_t task, int64_t count) {
    spent[task] += count;
    return RoundResult{count, n.curves[task].at(spent[task])};
  });
  if (trials) *trials = scheduler.trials();
  return scheduler.estimatedLatency();
}

}  // namespace

TEST(TaskScheduler, GradientBeatsRoundRobinAtEqualTrials) {
  for (int64_t total : {640, 1280, 2560}) {
    double roundRobin = runWith("round-robin", total, 1);
    int wins = 0;
    double worst = 0;
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      double gradient = runWith("gradient", total, seed);
      wins += gradient < roundRobin;
      worst = std::max(worst, gradient);
    }
    std::printf("[ schedule ] %lld trials: round-robin %.3f ms, gradient at most %.3f ms over 5 seeds\n",
                static_cast<long long>(total), roundRobin * 1e3, worst * 1e3);
    EXPECT_EQ(wins, 5) << total << " trials: round-robin " << roundRobin * 1e3 << " ms";
  }
  // The heavy task gets the most trials, the nearly flat pool the fewest.
  std::vector<int64_t> trials;
  runWith("gradient", 1280, 1, &trials);
  EXPECT_EQ(std::max_element(trials.begin(), trials.end()) - trials.begin(), 3);
  EXPECT_EQ(std::min_element(trials.begin(), trials.end()) - trials.begin(), 4);
}

TEST(TaskScheduler, DeadTasksAreNotPickedAgainAndTheBudgetHolds) {
  SyntheticNetwork n = network();
  TaskSchedulerOptions o;
  o.trialsPerRound = 16;
  o.tableTo = nullptr;
  TaskScheduler scheduler(n.tasks, o);
  std::vector<int> rounds(n.tasks.size(), 0);
  std::vector<int64_t> spent(n.tasks.size(), 0);
  scheduler.run(500, [&](size_t task, int64_t count) {
    ++rounds[task];
    if (task == 2) return RoundResult{0, std::numeric_limits<double>::infinity()};  // nothing new: dead
    spent[task] += count;
    return RoundResult{count, n.curves[task].at(spent[task])};
  });
  EXPECT_EQ(rounds[2], 1);
  int64_t total = 0;
  for (auto t : scheduler.trials()) total += t;
  EXPECT_EQ(total, 500);
  EXPECT_EQ(scheduler.trials()[2], 0);
}

TEST(TaskScheduler, PrintsTheSeedsTable) {
  SyntheticNetwork n = network();
  TaskSchedulerOptions o;
  o.tableTo = nullptr;
  TaskScheduler scheduler(n.tasks, o);
  runAlongTheCurves(scheduler, n, 6 * 64);
  std::string table = scheduler.table(3);
  EXPECT_NE(table.find("[ Task Scheduler ]"), std::string::npos);
  EXPECT_NE(table.find("|  ID  | Latency (ms) | Speed (GFLOPS) | Trials |"), std::string::npos);
  EXPECT_NE(table.find("|    3 |"), std::string::npos);
  EXPECT_NE(table.find("Estimated total latency: "), std::string::npos);
  EXPECT_NE(table.find("Next ID: 3"), std::string::npos);
}

// Issue 39, defect 15: a run printed no estimate of its whole time (a bare `tune` is some
// 20,000 trials). The estimate is the pace so far times the trials the run still plans.
TEST(RunEstimate, IsThePaceSoFarTimesTheTrialsLeft) {
  RunEstimate estimate(1000);
  EXPECT_EQ(estimate.describe(), "");  // nothing measured: no pace yet
  EXPECT_LT(estimate.remainingSeconds(), 0);
  estimate.measured(100);
  EXPECT_EQ(estimate.remainingTrials(), 900);
  EXPECT_GE(estimate.remainingSeconds(), 0);
  EXPECT_EQ(estimate.describe().rfind("about ", 0), 0u) << estimate.describe();
  EXPECT_NE(estimate.describe().find(" left (900 trials)"), std::string::npos) << estimate.describe();
  estimate.shortened(850);  // a task stopped early
  EXPECT_EQ(estimate.remainingTrials(), 50);
  estimate.shortened(1000);  // what was measured stays planned
  EXPECT_EQ(estimate.plannedTrials(), 100);
  EXPECT_EQ(estimate.describe(), "no trials left");
  EXPECT_EQ(roughDuration(42), "42 s");
  EXPECT_EQ(roughDuration(725), "12 min 05 s");
  EXPECT_EQ(roughDuration(3 * 3600 + 20 * 60 + 10), "3 h 20 min");
  EXPECT_EQ(roughDuration(2 * 86400 + 4 * 3600), "2 d 4 h");
}

TEST(RunEstimate, ShowsInTheProgressLineAndTheSchedulersTable) {
  RunEstimate estimate(20000);
  estimate.measured(10);
  char buffer[512] = {};
  std::FILE* out = fmemopen(buffer, sizeof(buffer) - 1, "w");
  ASSERT_NE(out, nullptr);
  printProgressLine({"[Task  3/22] ", out, false, &estimate}, true, 1e9, 2e9, 10, 64, 1.5);
  std::fclose(out);
  std::string line = buffer;
  EXPECT_EQ(line.rfind("[Task  3/22]  Current/Best:    1.00/   2.00 GFLOPS | Progress: (10/64) | 1.50 s | run: about ", 0), 0u) << line;
  EXPECT_NE(line.find(" left (19990 trials) Done.\n"), std::string::npos) << line;

  // The table names tasks by their listed numbers, and the run's time left.
  SyntheticNetwork n = network();
  for (size_t i = 0; i < n.tasks.size(); ++i) n.tasks[i].number = 10 + i;
  TaskSchedulerOptions o;
  o.tableTo = nullptr;
  o.runEstimate = &estimate;
  TaskScheduler scheduler(n.tasks, o);
  runAlongTheCurves(scheduler, n, 6 * 64);
  std::string table = scheduler.table(2);
  EXPECT_NE(table.find("|   10 |"), std::string::npos) << table;
  EXPECT_NE(table.find("|   15 |"), std::string::npos) << table;
  EXPECT_EQ(table.find("|    0 |"), std::string::npos) << table;
  EXPECT_NE(table.find("Next ID: 12\tRun: about "), std::string::npos) << table;
}
