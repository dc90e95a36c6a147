#include "cli/AutoScheduleTasks.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <memory>

#include "tune/RecordQueries.h"
#include "tune/TaskScheduler.h"
#include "tune/ansor/SketchPolicy.h"
#include "tune/ansor/TuneAutoTask.h"
#include "tune/ansor/XGBoostStateModel.h"

namespace tessel::cli {

namespace {

/// What kind of computation a task is, for the task scheduler's similarity groups: the tag of
/// its heaviest op.
std::string anchorTag(const te::ComputeDAG& dag) {
  std::string tag;
  double most = -1;
  for (const auto& op : dag.ops())
    if (!op->isPlaceholder() && te::operationFlops(*op) > most) {
      most = te::operationFlops(*op);
      tag = op->tag;
    }
  return tag;
}

}  // namespace

AutoScheduleSummary autoScheduleTasks(const std::vector<graph::Task>& tasks, const AutoScheduleOptions& options, tune::Builder& builder,
                                      tune::Runner& runner, tune::RecordLogWriter& log, const std::vector<tune::TuningRecord>& earlier) {
  fmt::print("{}", graph::formatTasks(tasks));
  fmt::print("Tuning...\n");
  std::fflush(stdout);
  AutoScheduleSummary summary;
  // Per task: its measure task, its policy (which keeps what it learned across rounds), its
  // best cost so far; a resumed log teaches each policy first.
  std::vector<tune::MeasureTaskPtr> measureTasks;
  std::vector<std::unique_ptr<tune::ansor::SketchPolicy>> policies;
  std::vector<double> best(tasks.size(), std::numeric_limits<double>::infinity());
  std::vector<int64_t> resumedTrials(tasks.size(), 0);
  std::vector<tune::ScheduledTask> scheduled;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const graph::Task& t = tasks[i];
    measureTasks.push_back(tune::makeMeasureTask(t.name, t.dag, options.target));
    tune::autotvm::XGBoostOptions model;
    model.seed = options.seed + i;
    tune::ansor::SketchPolicyOptions policyOptions;
    policyOptions.populationSize = options.populationSize;
    policyOptions.seed = options.seed + i;
    policies.push_back(std::make_unique<tune::ansor::SketchPolicy>(t.dag, std::make_shared<tune::ansor::XGBoostStateModel>(model),
                                                                    policyOptions));
    if (options.resume) {
      std::vector<tune::ansor::MeasuredSchedule> resumed;
      for (const auto& r : tune::recordsOfTask(earlier, measureTasks[i]->workloadKey, measureTasks[i]->target)) {
        if (r.task.fromTemplate() || r.result.confirmed) continue;
        resumed.push_back({r.steps, r.ok() ? r.gflops() * 1e9 : 0.0});
        if (r.ok()) best[i] = std::min(best[i], r.cost());
      }
      resumedTrials[i] = int64_t(resumed.size());
      if (!resumed.empty()) policies[i]->update(resumed);
    }
    scheduled.push_back({t.name, double(t.weight), t.flops, anchorTag(t.dag)});
  }

  tune::TaskSchedulerOptions schedulerOptions;
  schedulerOptions.strategy = options.taskScheduler;
  schedulerOptions.seed = options.seed;
  tune::TaskScheduler scheduler(scheduled, schedulerOptions);
  // As in template tuning, the logged trials count towards the budget.
  scheduler.run(options.nTrial,
                [&](size_t i, int64_t count) {
                  tune::ansor::TuneAutoOptions o;
                  o.nTrial = count;
                  o.batchSize = options.batchSize;
                  o.loadMonitor = options.loadMonitor;
                  o.progressPrefix = fmt::format("[Task {:>2}/{:>2}] ", i + 1, tasks.size());
                  o.liveProgress = options.liveProgress;
                  auto result = tune::ansor::tuneAutoTask(measureTasks[i], tasks[i].flops, *policies[i], builder, runner, o, {},
                                                          [&](const tune::MeasureInput& input, const tune::MeasureResult& r) {
                                                            log.append(tune::makeRecord(input, r));
                                                          });
                  if (result.bestFlopsPerSecond > 0) best[i] = std::min(best[i], tasks[i].flops / result.bestFlopsPerSecond);
                  summary.trials += result.trials;
                  summary.seconds += result.seconds;
                  summary.policySeconds += result.policySeconds;
                  summary.buildSeconds += result.buildSeconds;
                  summary.runSeconds += result.runSeconds;
                  return tune::RoundResult{result.trials, best[i]};
                },
                best, resumedTrials);
  for (auto& policy : policies) summary.statesScored += policy->statesScored();
  return summary;
}

}  // namespace tessel::cli
