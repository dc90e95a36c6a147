#include "driver/AutoScheduleTasks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "ops/GpuSchedules.h"
#include "ops/Schedules.h"
#include "support/Error.h"
#include "tune/Confirmation.h"
#include "tune/RecordQueries.h"
#include "tune/ansor/SketchPolicy.h"
#include "tune/ansor/TuneAutoTask.h"
#include "tune/ansor/XGBoostStateModel.h"

namespace tessel::driver {

namespace {

/// One task's search state across the scheduler's rounds.
struct AutoTask {
  tune::MeasureTaskPtr measure;
  std::unique_ptr<tune::ansor::SketchPolicy> policy;  ///< keeps what it learned across rounds
  std::vector<schedule::StepPtr> defaultSteps;
  bool defaultMeasured = false;
  /// Every measured schedule (resumed and new), for the confirmation.
  std::vector<tune::ansor::MeasuredSchedule> measured;
  double best = std::numeric_limits<double>::infinity();  ///< seconds
  int64_t resumedTrials = 0, newTrials = 0;
};

/// The measure task of a listed task: cold caches as listed; on a GPU target, the limits and
/// the CPU of the reference.
tune::MeasureTaskPtr measureTaskOf(const ListedTask& t, const TuningSession& s) {
  auto measureTask = tune::makeMeasureTask(t.function.name, t.function.dag, s.target);
  if (!t.measureCold && !s.gpuLimits) return measureTask;
  auto task = std::make_shared<tune::MeasureTask>(*measureTask);
  task->coldCache = t.measureCold;
  if (s.gpuLimits) {
    task->gpuLimits = *s.gpuLimits;
    task->hostTarget = s.options.gpuHost;
  }
  return task;
}

/// Task `i`'s measure task, default schedule and policy, taught its logged trials when resuming.
AutoTask startTask(size_t i, TuningSession& s) {
  const ListedTask& listed = s.tasks[i];
  const graph::Task& t = listed.function;
  const std::optional<passes::GpuLimits>& gpu = s.gpuLimits;
  AutoTask a;
  a.measure = measureTaskOf(listed, s);
  a.defaultSteps = gpu ? ops::defaultGpuSchedule(t.dag, ops::gpuScheduleOptionsFor(gpu->maxThreadsPerBlock, gpu->multiProcessorCount,
                                                                                     gpu->warpSize))
                       : ops::defaultCpuSchedule(t.dag, ops::cpuScheduleOptionsFor(s.target));
  const std::string defaultKey = tune::ansor::scheduleKey(a.defaultSteps);
  tune::autotvm::XGBoostOptions model;
  model.seed = s.options.seed + i;
  tune::ansor::SketchPolicyOptions policyOptions = gpu ? tune::ansor::SketchPolicyOptions::forGpu(*gpu) : tune::ansor::SketchPolicyOptions{};
  policyOptions.populationSize = kAutoSchedulePopulation;
  if (!gpu) policyOptions.annotation = tune::ansor::AnnotationOptions::forCpu(s.target.cpu);
  policyOptions.seed = s.options.seed + i;
  try {
    a.policy = std::make_unique<tune::ansor::SketchPolicy>(
        t.dag, std::make_shared<tune::ansor::XGBoostStateModel>(gpu ? std::nullopt : std::optional<target::CpuMachine>(s.target.cpu), model),
        policyOptions);
  } catch (const Error& e) {
    throw e.withContext(fmt::format("the sketches of task {} ({})", listed.number, t.name));
  }
  if (!s.options.resume) return a;
  for (const auto& r : tune::recordsOfTask(s.earlier, a.measure->workloadKey, a.measure->target.str())) {
    if (r.task.fromTemplate() || r.result.confirmed) continue;
    a.measured.push_back({r.steps, r.ok() ? r.gflops() * 1e9 : 0.0});
    a.defaultMeasured = a.defaultMeasured || tune::ansor::scheduleKey(r.steps) == defaultKey;
    if (r.ok()) a.best = std::min(a.best, r.cost());
    s.resumedTrial(i, r.cost(), std::nullopt, r.steps);
  }
  a.resumedTrials = int64_t(a.measured.size());
  if (!a.measured.empty()) a.policy->update(a.measured);
  return a;
}

/// The confirmation of task `i` (tune/Confirmation.h): its best distinct measured schedules and
/// its default schedule re-measured interleaved; the decision is logged as a confirmed record
/// and reported. Nothing to re-measure when no searched schedule came near the fastest
/// measured one (tune::pickContenders): then the default was it, and stays.
void confirmTask(size_t i, const AutoTask& a, TuningSession& s, TuningSummary& summary) {
  const TuneNetworkOptions& o = s.options;
  const double flops = s.tasks[i].function.flops;
  std::vector<tune::MeasureInput> inputs = tune::ansor::contendersAgainstDefault(a.measure, a.measured, a.defaultSteps, o.confirmTop);
  // No contender: the default, measured first, beat every searched schedule by more than the
  // slack; it stays at its search cost. (Nothing measured but failures: nothing to decide.)
  const bool withoutRounds = inputs.empty();
  double defaultFlops = 0;
  const std::string defaultKey = tune::ansor::scheduleKey(a.defaultSteps);
  for (const auto& m : a.measured)
    if (tune::ansor::scheduleKey(m.steps) == defaultKey) defaultFlops = std::max(defaultFlops, m.flopsPerSecond);
  if (withoutRounds && !(defaultFlops > 0 && flops > 0)) return;
  if (withoutRounds) inputs.push_back({a.measure, a.defaultSteps, ""});
  std::optional<tune::Confirmation> c;
  int rounds = 0;
  if (withoutRounds) {
    c = tune::keepFallbackWithoutRounds(flops / defaultFlops);
  } else {
    tune::ConfirmOptions co{o.confirmRounds, 0.01, o.seed ^ std::hash<std::string>{}(a.measure->workloadKey), s.monitor};
    c = tune::confirmAgainstFallback(inputs, s.builder, s.runner, co);
    if (!c) return;
    rounds = o.confirmRounds;
  }
  summary.buildSeconds += c->buildSeconds;
  summary.runSeconds += c->runSeconds;
  summary.seconds += c->buildSeconds + c->runSeconds;
  ++summary.confirmedTasks;
  summary.keptDefault += c->keptFallback;
  summary.keptWithoutRounds += withoutRounds;
  nlohmann::json ratios = nlohmann::json::array();
  for (double r : c->ratios) ratios.push_back(std::isfinite(r) ? nlohmann::json(r) : nlohmann::json(nullptr));
  s.logTrial(i, tune::makeRecord(inputs[c->winner], c->decision({{"fallback", "default schedule"}, {"ratios_to_fallback", ratios}}, rounds)));
  TaskDecision d;
  d.keptDefault = c->keptFallback;
  d.withoutRounds = withoutRounds;
  d.rounds = rounds;
  d.cost = c->winnerCost;
  if (!c->keptFallback) d.line = c->confirmedLine("schedule", "the default", o.confirmRounds);
  s.decide(i, d);
}

}  // namespace

TuningSummary autoScheduleTasks(TuningSession& s) {
  const TuneNetworkOptions& o = s.options;
  TuningSummary summary;
  summary.search = SearchKind::AutoScheduler;
  summary.tasks = s.tasks.size();
  std::vector<AutoTask> tasks;
  std::vector<tune::ScheduledTask> scheduled;
  std::vector<double> best;
  std::vector<int64_t> resumedTrials;
  for (size_t i = 0; i < s.tasks.size(); ++i) {
    tasks.push_back(startTask(i, s));
    best.push_back(tasks.back().best);
    resumedTrials.push_back(tasks.back().resumedTrials);
    const graph::Task& t = s.tasks[i].function;
    scheduled.push_back({t.name, double(t.weight), t.flops, heaviestOperation(t.dag)->tag, s.tasks[i].number});
  }
  // The network's budget less what the log already spent: the run's plan.
  int64_t resumedTotal = 0;
  for (int64_t n : resumedTrials) resumedTotal += n;
  tune::RunEstimate estimate(std::max<int64_t>(0, o.nTrial - resumedTotal));
  if (s.callbacks.onPlan) s.callbacks.onPlan({SearchKind::AutoScheduler, s.tasks.size(), estimate.plannedTrials(), o.nTrial, true});

  tune::TaskScheduler scheduler(scheduled, s.schedulerOptions(o.taskScheduler.value_or(TaskSchedulerKind::Gradient), estimate));
  // As in template tuning, the logged trials count towards the budget.
  scheduler.run(o.nTrial,
                [&](size_t i, int64_t count) {
                  AutoTask& a = tasks[i];
                  const double flops = s.tasks[i].function.flops;
                  tune::ansor::TuneAutoOptions ao;
                  ao.nTrial = count;
                  ao.batchSize = o.batchSize;
                  ao.loadMonitor = s.monitor;
                  ao.progressPrefix = s.prefix(i);
                  ao.progressTo = o.tuneLinesTo;
                  ao.liveProgress = o.liveProgress;
                  ao.runEstimate = &estimate;
                  if (!a.defaultMeasured) ao.measureFirst = a.defaultSteps;
                  if (std::isfinite(a.best)) ao.bestSecondsBefore = a.best;
                  a.defaultMeasured = true;
                  s.taskStart(i, count);
                  auto result = tune::ansor::tuneAutoTask(a.measure, flops, *a.policy, s.builder, s.runner, ao, {},
                                                          [&](const tune::MeasureInput& input, const tune::MeasureResult& r) {
                                                            s.logTrial(i, tune::makeRecord(input, r));
                                                            a.measured.push_back({input.steps, r.ok() && r.cost() > 0 ? flops / r.cost() : 0.0});
                                                          });
                  a.newTrials += result.trials;
                  if (result.bestFlopsPerSecond > 0) a.best = std::min(a.best, flops / result.bestFlopsPerSecond);
                  summary.trials += result.trials;
                  summary.seconds += result.seconds;
                  summary.policySeconds += result.policySeconds;
                  summary.buildSeconds += result.buildSeconds;
                  summary.runSeconds += result.runSeconds;
                  s.taskFinish(i);
                  return tune::RoundResult{result.trials, a.best};
                },
                best, resumedTrials);
  for (const AutoTask& a : tasks) summary.statesScored += a.policy->statesScored();
  // The decisions are re-measured for the tasks this run measured something new of (a resumed
  // run that only reads its log keeps the decisions the log holds).
  if (o.confirmTop > 0)
    for (size_t i = 0; i < tasks.size(); ++i)
      if (tasks[i].newTrials > 0) confirmTask(i, tasks[i], s, summary);
  return summary;
}

}  // namespace tessel::driver
