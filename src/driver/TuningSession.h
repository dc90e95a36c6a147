/// What the two tuners' loops over a network's tasks (TemplateTuning.h, AutoScheduleTasks.h)
/// share within driver::tuneNetwork: the options and callbacks, the selected tasks, where
/// candidates are built and measured, and the log. Every trial goes through logTrial, which
/// appends it to the log before the search learns of it, keeps the task's counts and best, and
/// reports it: so the result's figures are the log's, whichever tuner ran.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "driver/TuneCallbacks.h"
#include "driver/TuneNetworkOptions.h"
#include "driver/TuneNetworkResult.h"
#include "driver/TuningTasks.h"
#include "passes/GpuLimits.h"
#include "target/Target.h"
#include "tune/LoadMonitor.h"
#include "tune/MeasureBatch.h"
#include "tune/Record.h"
#include "tune/RecordLog.h"
#include "tune/RunEstimate.h"
#include "tune/TaskScheduler.h"

namespace tessel::driver {

struct TuningSession {
  const TuneNetworkOptions& options;
  const TuneCallbacks& callbacks;
  const TaskList& list;
  const std::vector<ListedTask>& tasks;  ///< the selected ones
  tune::Builder& builder;
  tune::Runner& runner;
  tune::RecordLogWriter& log;
  tune::LoadMonitor* monitor = nullptr;  ///< null: none (a GPU or a remote runner)
  const std::vector<tune::TuningRecord>& earlier;  ///< the log's records before this run
  target::Target target;                           ///< what candidates are measured on
  std::optional<passes::GpuLimits> gpuLimits;      ///< a GPU target: the limits kernels are verified against
  std::vector<TunedTask>& outcomes;                ///< one per selected task

  /// "[Task  3/22] ": the prefix of the lines of task `i` (of `tasks`).
  std::string prefix(size_t i) const { return taskPrefix(tasks[i], list); }
  /// Appends a trial of task `i` to the log, counts it, keeps the task's best and reports it.
  /// A confirmation's decision (result.confirmed) is only appended: decide() reports it.
  void logTrial(size_t i, const tune::TuningRecord& record);
  /// A trial of task `i` from the log (resume): counted, and its cost competes for the best.
  void resumedTrial(size_t i, double cost, std::optional<uint64_t> config, const std::vector<schedule::StepPtr>& steps);
  void taskStart(size_t i, int64_t trials) const;
  void taskFinish(size_t i) const;
  void decide(size_t i, TaskDecision decision);
  void note(const std::string& line) const;
  /// The task scheduler's options in this run: `kind`'s strategy, the seed, the run's estimate,
  /// its table to the options' tuneLinesTo.
  tune::TaskSchedulerOptions schedulerOptions(TaskSchedulerKind kind, const tune::RunEstimate& estimate) const;
};

}  // namespace tessel::driver
