// The task scheduler on a synthetic network: each task's best cost falls with its trials along
// its own curve (start, floor, pace), so how the budget is split decides the network's latency.
// The gradient strategy must end lower than round-robin at the same total trials; dead tasks
// must not be picked again; the table must be the seed's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

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
  std::vector<int64_t> spent(n.tasks.size(), 0);
  scheduler.run(6 * 64, [&](size_t task, int64_t count) {
    spent[task] += count;
    return RoundResult{count, n.curves[task].at(spent[task])};
  });
  std::string table = scheduler.table(3);
  EXPECT_NE(table.find("[ Task Scheduler ]"), std::string::npos);
  EXPECT_NE(table.find("|  ID  | Latency (ms) | Speed (GFLOPS) | Trials |"), std::string::npos);
  EXPECT_NE(table.find("|    3 |"), std::string::npos);
  EXPECT_NE(table.find("Estimated total latency: "), std::string::npos);
  EXPECT_NE(table.find("Next ID: 3"), std::string::npos);
}
