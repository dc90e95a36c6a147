#include "cli/AutoScheduleTasks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>

#include "cli/TuningTasks.h"
#include "ops/GpuSchedules.h"
#include "ops/Schedules.h"
#include "support/Error.h"
#include "target/Target.h"
#include "tune/Confirmation.h"
#include "tune/RecordQueries.h"
#include "tune/RunEstimate.h"
#include "tune/TaskScheduler.h"
#include "tune/ansor/SketchPolicy.h"
#include "tune/ansor/TuneAutoTask.h"
#include "tune/ansor/XGBoostStateModel.h"

namespace tessel::cli {

namespace {

/// The confirmation of one task (tune/Confirmation.h): its best distinct measured schedules
/// and its default schedule re-measured interleaved; the decision is logged as a confirmed
/// record and a line is printed. Nothing to re-measure when no searched schedule came near the
/// fastest measured one (tune::pickContenders): then the default was it, and stays.
void confirmTask(const tune::MeasureTaskPtr& task, double flops, const std::vector<schedule::StepPtr>& defaultSteps,
                 const std::vector<tune::ansor::MeasuredSchedule>& measured, const AutoScheduleOptions& options,
                 const std::string& prefix, tune::Builder& builder, tune::Runner& runner, tune::RecordLogWriter& log,
                 AutoScheduleSummary& summary) {
  std::vector<tune::MeasureInput> inputs = tune::ansor::contendersAgainstDefault(task, measured, defaultSteps, options.confirmTop);
  // No contender: the default, measured first, beat every searched schedule by more than the
  // slack; it stays at its search cost. (Nothing measured but failures: nothing to decide.)
  const bool withoutRounds = inputs.empty();
  double defaultFlops = 0;
  const std::string defaultKey = tune::ansor::scheduleKey(defaultSteps);
  for (const auto& m : measured)
    if (tune::ansor::scheduleKey(m.steps) == defaultKey) defaultFlops = std::max(defaultFlops, m.flopsPerSecond);
  if (withoutRounds && !(defaultFlops > 0 && flops > 0)) return;
  if (withoutRounds) inputs.push_back({task, defaultSteps, ""});
  std::optional<tune::Confirmation> c;
  int rounds = 0;
  if (withoutRounds) {
    c = tune::keepFallbackWithoutRounds(flops / defaultFlops);
  } else {
    tune::ConfirmOptions o{options.confirmRounds, 0.01, options.seed ^ std::hash<std::string>{}(task->workloadKey), options.loadMonitor};
    c = tune::confirmAgainstFallback(inputs, builder, runner, o);
    if (!c) return;
    rounds = options.confirmRounds;
  }
  summary.buildSeconds += c->buildSeconds;
  summary.runSeconds += c->runSeconds;
  summary.seconds += c->buildSeconds + c->runSeconds;
  ++summary.confirmedTasks;
  summary.keptDefault += c->keptFallback;
  summary.keptWithoutRounds += withoutRounds;
  nlohmann::json ratios = nlohmann::json::array();
  for (double r : c->ratios) ratios.push_back(std::isfinite(r) ? nlohmann::json(r) : nlohmann::json(nullptr));
  log.append(tune::makeRecord(inputs[c->winner], c->decision({{"fallback", "default schedule"}, {"ratios_to_fallback", ratios}},
                                                             rounds)));
  if (withoutRounds)
    fmt::print("{}no schedule came within {}x of the default schedule: the default stays ({:.4f} ms)\n", prefix, tune::kContenderSlack,
               c->winnerCost * 1e3);
  else if (c->keptFallback)
    fmt::print("{}no schedule beat the default schedule in {} interleaved rounds: the default stays ({:.4f} ms)\n", prefix,
               options.confirmRounds, c->winnerCost * 1e3);
  else
    fmt::print("{}{}\n", prefix, c->confirmedLine("schedule", "the default", options.confirmRounds));
  std::fflush(stdout);
}

}  // namespace

AutoScheduleSummary autoScheduleTasks(const std::vector<graph::Task>& tasks, const AutoScheduleOptions& options, tune::Builder& builder,
                                      tune::Runner& runner, tune::RecordLogWriter& log, const std::vector<tune::TuningRecord>& earlier) {
  TESSEL_CHECK(options.numbers.empty() || options.numbers.size() == tasks.size(), "auto-scheduling: {} numbers for {} tasks",
               options.numbers.size(), tasks.size());
  TESSEL_CHECK(options.prefixes.empty() || options.prefixes.size() == tasks.size(), "auto-scheduling: {} prefixes for {} tasks",
               options.prefixes.size(), tasks.size());
  auto prefixOf = [&](size_t i) {
    return options.prefixes.empty() ? fmt::format("[Task {:>2}/{:>2}] ", i + 1, tasks.size()) : options.prefixes[i];
  };
  fmt::print("{}", graph::formatTasks(tasks, options.numbers));
  AutoScheduleSummary summary;
  // Per task: its measure task, its policy (which keeps what it learned across rounds), its
  // best cost so far; a resumed log teaches each policy first.
  std::vector<tune::MeasureTaskPtr> measureTasks;
  std::vector<std::unique_ptr<tune::ansor::SketchPolicy>> policies;
  std::vector<double> best(tasks.size(), std::numeric_limits<double>::infinity());
  std::vector<int64_t> resumedTrials(tasks.size(), 0);
  std::vector<int64_t> newTrials(tasks.size(), 0);
  // Per task: its default schedule, whether it was measured, and every measured schedule
  // (resumed and new) for the confirmation.
  std::vector<std::vector<schedule::StepPtr>> defaults;
  std::vector<bool> defaultMeasured(tasks.size(), false);
  std::vector<std::vector<tune::ansor::MeasuredSchedule>> measured(tasks.size());
  const std::optional<passes::GpuLimits>& gpu = options.gpuLimits;
  std::vector<tune::ScheduledTask> scheduled;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const graph::Task& t = tasks[i];
    auto measureTask = tune::makeMeasureTask(t.name, t.dag, options.target);
    if ((i < options.coldCache.size() && options.coldCache[i]) || gpu) {
      auto task = std::make_shared<tune::MeasureTask>(*measureTask);
      task->coldCache = i < options.coldCache.size() && options.coldCache[i];
      if (gpu) {
        task->gpuLimits = *gpu;
        task->hostTarget = options.hostTarget;
      }
      measureTask = task;
    }
    measureTasks.push_back(measureTask);
    defaults.push_back(gpu ? ops::defaultGpuSchedule(t.dag, ops::gpuScheduleOptionsFor(gpu->maxThreadsPerBlock, gpu->multiProcessorCount,
                                                                                         gpu->warpSize))
                           : ops::defaultCpuSchedule(t.dag, ops::cpuScheduleOptionsFor(options.target)));
    const std::string defaultKey = tune::ansor::scheduleKey(defaults.back());
    tune::autotvm::XGBoostOptions model;
    model.seed = options.seed + i;
    tune::ansor::SketchPolicyOptions policyOptions = gpu ? tune::ansor::SketchPolicyOptions::forGpu(*gpu) : tune::ansor::SketchPolicyOptions{};
    policyOptions.populationSize = options.populationSize;
    if (!gpu) policyOptions.annotation = tune::ansor::AnnotationOptions::forCpu(options.target.cpu);
    policyOptions.seed = options.seed + i;
    try {
      policies.push_back(std::make_unique<tune::ansor::SketchPolicy>(t.dag, std::make_shared<tune::ansor::XGBoostStateModel>(
          gpu ? std::nullopt : std::optional<target::CpuMachine>(options.target.cpu), model),
                                                                      policyOptions));
    } catch (const Error& e) {
      throw e.withContext(fmt::format("the sketches of task {} ({})", options.numbers.empty() ? i + 1 : options.numbers[i], t.name));
    }
    if (options.resume) {
      std::vector<tune::ansor::MeasuredSchedule> resumed;
      for (const auto& r : tune::recordsOfTask(earlier, measureTasks[i]->workloadKey, measureTasks[i]->target.str())) {
        if (r.task.fromTemplate() || r.result.confirmed) continue;
        resumed.push_back({r.steps, r.ok() ? r.gflops() * 1e9 : 0.0});
        defaultMeasured[i] = defaultMeasured[i] || tune::ansor::scheduleKey(r.steps) == defaultKey;
        if (r.ok()) best[i] = std::min(best[i], r.cost());
      }
      resumedTrials[i] = int64_t(resumed.size());
      if (!resumed.empty()) policies[i]->update(resumed);
      measured[i] = resumed;
    }
    scheduled.push_back({t.name, double(t.weight), t.flops, heaviestOperation(t.dag)->tag, options.numbers.empty() ? i + 1 : options.numbers[i]});
  }
  // The network's budget less what the log already spent: the run's plan.
  int64_t resumedTotal = 0;
  for (int64_t n : resumedTrials) resumedTotal += n;
  tune::RunEstimate estimate(std::max<int64_t>(0, options.nTrial - resumedTotal));
  fmt::print("Tuning {} task{}: at most {} trials (--n-trial {} for the network)...\n", tasks.size(), tasks.size() == 1 ? "" : "s",
             estimate.plannedTrials(), options.nTrial);
  std::fflush(stdout);

  tune::TaskSchedulerOptions schedulerOptions;
  schedulerOptions.strategy = options.taskScheduler;
  schedulerOptions.seed = options.seed;
  schedulerOptions.runEstimate = &estimate;
  tune::TaskScheduler scheduler(scheduled, schedulerOptions);
  // As in template tuning, the logged trials count towards the budget.
  scheduler.run(options.nTrial,
                [&](size_t i, int64_t count) {
                  tune::ansor::TuneAutoOptions o;
                  o.nTrial = count;
                  o.batchSize = options.batchSize;
                  o.loadMonitor = options.loadMonitor;
                  o.progressPrefix = prefixOf(i);
                  o.liveProgress = options.liveProgress;
                  o.runEstimate = &estimate;
                  if (!defaultMeasured[i]) o.measureFirst = defaults[i];
                  if (std::isfinite(best[i])) o.bestSecondsBefore = best[i];
                  defaultMeasured[i] = true;
                  auto result = tune::ansor::tuneAutoTask(measureTasks[i], tasks[i].flops, *policies[i], builder, runner, o, {},
                                                          [&](const tune::MeasureInput& input, const tune::MeasureResult& r) {
                                                            log.append(tune::makeRecord(input, r));
                                                            measured[i].push_back(
                                                                {input.steps, r.ok() && r.cost() > 0 ? tasks[i].flops / r.cost() : 0.0});
                                                          });
                  newTrials[i] += result.trials;
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
  // The decisions are re-measured for the tasks this run measured something new of (a resumed
  // run that only reads its log keeps the decisions the log holds).
  if (options.confirmTop > 0)
    for (size_t i = 0; i < tasks.size(); ++i)
      if (newTrials[i] > 0)
        confirmTask(measureTasks[i], tasks[i].flops, defaults[i], measured[i], options, prefixOf(i), builder, runner, log, summary);
  return summary;
}

}  // namespace tessel::cli
