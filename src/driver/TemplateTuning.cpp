#include "driver/TemplateTuning.h"

#include <algorithm>
#include <limits>

#include "tune/autotvm/ResumedTrials.h"
#include "tune/autotvm/TuneTask.h"

namespace tessel::driver {

namespace {

using tune::autotvm::Trial;
using tune::autotvm::TuneTaskResult;
using tune::autotvm::TuningTaskPtr;

/// The state of a template tuning run over its tasks: the tasks' trials so far (resumed and
/// new), which a later round teaches its fresh tuner, and the totals of what was measured.
class TemplateRun {
 public:
  explicit TemplateRun(TuningSession& s) : s_(s) {
    for (const ListedTask& t : s.tasks) tasks_.push_back(t.tuning);
    trials_.resize(tasks_.size());
    summary_.tasks = tasks_.size();
    if (!s.options.resume) return;
    tune::autotvm::ResumedTrials total;
    trials_ = tune::autotvm::resumedTrialsOfTasks(tasks_, s.earlier, total);
    for (size_t i = 0; i < tasks_.size(); ++i)
      for (const Trial& t : trials_[i])
        s.resumedTrial(i, t.flopsPerSecond > 0 ? tasks_[i]->flops / t.flopsPerSecond : std::numeric_limits<double>::infinity(), t.index,
                       {});
    if (total.leftOutCount() > 0) s.note(total.leftOutLine());
  }

  /// In turn: each task with the whole budget.
  void eachTaskInTurn() {
    const TuneNetworkOptions& o = s_.options;
    tune::RunEstimate estimate(plan());
    std::vector<std::pair<TuningTaskPtr, std::vector<Trial>>> history;
    for (size_t i = 0; i < tasks_.size(); ++i) {
      const TuningTaskPtr& task = tasks_[i];
      auto tuner = tune::autotvm::makeTuner(o.tuner, task, o.seed + i);
      if (o.transferLearning && !history.empty()) tuner->loadHistory(history);
      std::vector<Trial> resumed = trials_[i];
      const int64_t planned = tune::autotvm::plannedTrials(*task, o.nTrial, resumed.size());
      s_.taskStart(i, planned);
      TuneTaskResult result = tune::autotvm::tuneTask(task, *tuner, s_.builder, s_.runner, optionsOf(i, estimate), resumed, logTrial(i));
      // Stopped early or out of configs: the estimate plans no more for this task.
      estimate.shortened(planned - result.trials);
      noteResult(i, result, true);
      s_.taskFinish(i);
      history.emplace_back(task, trials_[i]);
    }
  }

  /// Under the task scheduler: --n-trial is the network's budget, spent in rounds on the task
  /// that lowers the estimated latency most. Each round is a resumed tuneTask: a fresh tuner
  /// learns the task's trials so far (the xgb model retrains on all of them in any case); the
  /// confirmation waits until the last round.
  void underTaskScheduler(TaskSchedulerKind kind) {
    const TuneNetworkOptions& o = s_.options;
    tune::RunEstimate estimate(plan());
    if (tasks_.empty()) return;
    std::vector<tune::ScheduledTask> scheduled;
    std::vector<double> best(tasks_.size(), std::numeric_limits<double>::infinity());
    std::vector<int64_t> resumedTrials(tasks_.size()), newTrials(tasks_.size(), 0), rounds(tasks_.size(), 0);
    for (size_t i = 0; i < tasks_.size(); ++i) {
      scheduled.push_back({tasks_[i]->name, double(s_.tasks[i].function.weight), tasks_[i]->flops, tasks_[i]->templateName, s_.tasks[i].number});
      resumedTrials[i] = int64_t(trials_[i].size());
      for (const Trial& t : trials_[i])
        if (t.flopsPerSecond > 0) best[i] = std::min(best[i], tasks_[i]->flops / t.flopsPerSecond);
    }
    tune::TaskScheduler scheduler(scheduled, s_.schedulerOptions(kind, estimate));
    scheduler.run(o.nTrial,
                  [&](size_t i, int64_t count) {
                    auto tuner = tune::autotvm::makeTuner(o.tuner, tasks_[i], o.seed + i + 7919 * uint64_t(rounds[i]++));
                    std::vector<Trial> resumed = trials_[i];
                    auto to = optionsOf(i, estimate);
                    to.nTrial = int64_t(resumed.size()) + count;
                    to.earlyStopping = 0;  // the scheduler decides where trials go
                    to.confirmTop = 0;
                    s_.taskStart(i, count);
                    TuneTaskResult result = tune::autotvm::tuneTask(tasks_[i], *tuner, s_.builder, s_.runner, to, resumed, logTrial(i));
                    noteResult(i, result, false);
                    s_.taskFinish(i);
                    newTrials[i] += result.trials;
                    if (result.bestFlopsPerSecond > 0) best[i] = std::min(best[i], tasks_[i]->flops / result.bestFlopsPerSecond);
                    return tune::RoundResult{result.trials, best[i]};
                  },
                  best, resumedTrials);
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (newTrials[i] == 0 || o.confirmTop == 0) continue;
      TuneTaskResult result;
      tune::autotvm::confirmTask(*tasks_[i], s_.builder, s_.runner, optionsOf(i, estimate), trials_[i], logTrial(i), result);
      noteResult(i, result, false);
    }
  }

  TuningSummary finish() {
    if (s_.monitor) summary_.loadSummary = s_.monitor->summary();
    return summary_;
  }

 private:
  /// The run's plan, reported: each task's budget in turn, or the network's under the task
  /// scheduler, less what the log holds.
  int64_t plan() {
    const TuneNetworkOptions& o = s_.options;
    int64_t planned = 0, resumedTotal = 0;
    for (size_t i = 0; i < tasks_.size(); ++i) {
      planned += tune::autotvm::plannedTrials(*tasks_[i], o.nTrial, trials_[i].size());
      resumedTotal += int64_t(trials_[i].size());
    }
    if (o.taskScheduler) planned = std::max<int64_t>(0, o.nTrial - resumedTotal);
    if (s_.callbacks.onPlan) s_.callbacks.onPlan({SearchKind::Templates, tasks_.size(), planned, o.nTrial, o.taskScheduler.has_value()});
    return planned;
  }

  tune::autotvm::TuneTaskOptions optionsOf(size_t i, tune::RunEstimate& estimate) const {
    const TuneNetworkOptions& o = s_.options;
    tune::autotvm::TuneTaskOptions to;
    to.nTrial = o.nTrial;
    to.earlyStopping = o.earlyStopping;
    to.batchSize = o.batchSize;
    to.confirmTop = o.confirmTop;
    to.confirmRounds = o.confirmRounds;
    to.seed = o.seed + i;
    to.loadMonitor = s_.monitor;
    to.progressPrefix = s_.prefix(i);
    to.progressTo = o.tuneLinesTo;
    to.liveProgress = o.liveProgress;
    to.runEstimate = &estimate;
    return to;
  }

  tune::autotvm::TrialCallback logTrial(size_t i) {
    return [this, i](const tune::autotvm::ConfigEntity& config, const tune::MeasureInput& input, const tune::MeasureResult& r) {
      const TuningTaskPtr& task = tasks_[i];
      tune::RecordConfig rc{int64_t(config.index()), config.toJson()["entity"]};
      s_.logTrial(i, tune::makeRecord(input, r, task->templateName, nlohmann::json{{"task", task->name}}, rc));
      if (!r.confirmed) trials_[i].push_back({config.index(), r.ok() ? task->flops / r.cost() : 0.0});
    };
  }

  /// A task's tuning (or its confirmation alone) in the totals, and its decision reported;
  /// `printed`: tuneTask wrote the decision's line under the task's progress line.
  void noteResult(size_t i, const TuneTaskResult& result, bool printed) {
    summary_.trials += result.trials;
    summary_.seconds += result.seconds;
    summary_.templateTotals.accumulate(result);
    if (!result.confirmedIndex) return;
    ++summary_.confirmedTasks;
    summary_.keptDefault += result.keptFallback;
    summary_.keptWithoutRounds += result.withoutRounds;
    TaskDecision d;
    d.keptDefault = result.keptFallback;
    d.withoutRounds = result.withoutRounds;
    d.rounds = result.withoutRounds ? 0 : s_.options.confirmRounds;
    d.cost = result.confirmedCost;
    d.line = result.confirmationSummary;
    d.printed = printed && s_.options.tuneLinesTo;
    s_.decide(i, d);
  }

  TuningSession& s_;
  std::vector<TuningTaskPtr> tasks_;
  std::vector<std::vector<Trial>> trials_;  ///< per task: every trial, resumed and new
  TuningSummary summary_;
};

}  // namespace

TuningSummary tuneTemplateTasks(TuningSession& s) {
  TemplateRun run(s);
  if (s.options.taskScheduler) run.underTaskScheduler(*s.options.taskScheduler);
  else run.eachTaskInTurn();
  return run.finish();
}

}  // namespace tessel::driver
