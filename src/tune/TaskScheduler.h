/// The task scheduler (seed 001, TVM's gradient strategy; tvm-facts §4.4): it spends a trial
/// budget over a network's tasks round by round, each round on the task whose next round is
/// expected to lower the network's estimated latency — sum over tasks of weight x best cost —
/// the most. It drives any per-task tuner through a callback, so template tuning and the
/// auto-scheduler share it. After a round-robin warm-up (one round per task), task i's gradient
/// is
///
///   w_i * (alpha * backward + (1 - alpha) * forward)
///   backward = (best_i after its last round - best_i `window` rounds earlier) / window
///   forward  = min(c_i - c_i / t_i, beta * flops_i / best throughput of its group) - c_i
///
/// (c_i: its best cost, t_i: its rounds; its group: the tasks of the same tag and similar
/// FLOPs, log base 1.618), and the most negative wins; with probability `epsGreedy` a random
/// live task is taken instead. A task whose round measures nothing new is dead. The
/// `round-robin` strategy takes the tasks in turn (the baseline). After each round the seed's
/// table is printed:
///
///   |  ID  | Latency (ms) | Speed (GFLOPS) | Trials |
///   Estimated total latency: 10.016 ms      Trials: 3992    Used time : 1131 s      Next ID: 15
///
/// with the whole run's remaining time at its pace so far after it, when the caller keeps an
/// estimate (tune/RunEstimate.h). IDs are the tasks' numbers as the caller lists them.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tune/RunEstimate.h"

namespace tessel::tune {

struct ScheduledTask {
  std::string name;
  double weight = 1;   ///< how often the network runs it
  double flops = 0;    ///< of one run
  std::string tag;     ///< what kind of computation (similar tasks share it)
  /// Its ID in the table, the number its tuning run lists it by (0: its index).
  size_t number = 0;
};

/// What one round of a task gave: trials measured (0: nothing new, the task is dead) and the
/// task's best cost in seconds so far (+inf while it has no valid schedule).
struct RoundResult {
  int64_t trials = 0;
  double bestCost = std::numeric_limits<double>::infinity();
};

using TuneRound = std::function<RoundResult(size_t task, int64_t trials)>;

struct TaskSchedulerOptions {
  std::string strategy = "gradient";  ///< or "round-robin"
  double alpha = 0.2, beta = 2;
  int backwardWindow = 3;
  double epsGreedy = 0.05;
  int64_t trialsPerRound = 64;  ///< capped at total / tasks, at least 1
  uint64_t seed = 0;
  std::FILE* tableTo = stdout;  ///< null: no table
  const RunEstimate* runEstimate = nullptr;  ///< the run's remaining time, shown in the table (null: not shown)
};

class TaskScheduler {
 public:
  TaskScheduler(std::vector<ScheduledTask> tasks, TaskSchedulerOptions options = {});

  /// Rounds until `totalTrials` are spent or every task is dead. `resumedBest` (optional, one
  /// per task) and `resumedTrials` start the tasks where a log left them.
  void run(int64_t totalTrials, const TuneRound& round, const std::vector<double>& resumedBest = {},
           const std::vector<int64_t>& resumedTrials = {});

  /// sum of weight x best cost over the tasks (+inf while one has no valid schedule).
  double estimatedLatency() const;
  const std::vector<int64_t>& trials() const { return trials_; }
  const std::vector<double>& bestCosts() const { return best_; }
  /// The seed's table, with the next task's ID (`next`: its index; -1: none).
  std::string table(int next) const;

 private:
  int pickNext();
  double gradient(size_t task) const;
  /// The ID of the task at `index`.
  size_t idOf(size_t index) const { return tasks_[index].number != 0 ? tasks_[index].number : index; }

  std::vector<ScheduledTask> tasks_;
  TaskSchedulerOptions options_;
  std::mt19937_64 rng_;
  std::vector<double> best_;
  std::vector<int64_t> trials_;
  std::vector<int> rounds_;
  std::vector<std::vector<double>> history_;  ///< per task: its best cost after each of its rounds
  std::vector<bool> dead_;
  std::vector<int> group_;  ///< per task: its similarity group
  double startSeconds_ = 0;
  size_t nextRoundRobin_ = 0;
};

}  // namespace tessel::tune
