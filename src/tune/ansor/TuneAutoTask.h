/// The tuning loop of one task under the auto-scheduler, with the contract of template tuning
/// (autotvm/TuneTask.h): ask the search policy for a batch of schedules, build and run them,
/// hand every result to the caller (who logs it) before the policy learns of it, until the
/// trial budget or the patience (early stopping) runs out or the policy finds nothing new.
/// A resumed run's trials count towards the budget and the best and teach the policy first.
/// It prints the seeds' progress line:
///   [Task  1/12]  Current/Best:   12.31/  45.20 GFLOPS | Progress: (480/1000) | 640.31 s Done.
#pragma once
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "tune/LoadMonitor.h"
#include "tune/MeasureBatch.h"
#include "tune/RunEstimate.h"
#include "tune/ansor/SearchPolicy.h"

namespace tessel::tune::ansor {

struct TuneAutoOptions {
  int64_t nTrial = 1000;
  int64_t earlyStopping = 0;  ///< stop after this many trials without a faster schedule (0: never)
  size_t batchSize = 16;      ///< schedules measured per round
  std::string progressPrefix; ///< "[Task  1/12] " (empty: no progress line)
  std::FILE* progressTo = stdout;
  bool liveProgress = false;  ///< rewrite the progress line in place after each batch
  /// The whole run's estimate: told of every batch measured, shown in the progress line. Null: none.
  RunEstimate* runEstimate = nullptr;
  LoadMonitor* loadMonitor = nullptr;  ///< asked before every batch runs; null: none
  /// Measured alone in the first batch, ahead of the policy's proposals: the default schedule, so
  /// that the best a run reports is never worse than the untuned build, however few trials it
  /// had (as template tuning measures its fallback config first). Empty: none; the caller
  /// leaves it empty once it was measured.
  std::vector<schedule::StepPtr> measureFirst;
  /// The task's best cost measured before this call (seconds; 0: none), e.g. in an earlier
  /// round of the task scheduler: with this call's own best, it bounds how long a far slower
  /// candidate is timed (MeasureInput::stopAboveSeconds).
  double bestSecondsBefore = 0;
};

/// Called once per measured schedule, in measurement order, before the policy learns of it.
using ScheduleTrialCallback = std::function<void(const MeasureInput& input, const MeasureResult& result)>;

struct TuneAutoResult {
  int64_t trials = 0;  ///< measured in this run (resumed ones not counted)
  int64_t errors = 0;  ///< of them, failed
  double bestFlopsPerSecond = 0;  ///< over resumed and new trials
  std::vector<schedule::StepPtr> bestSteps;
  bool stoppedEarly = false;
  double seconds = 0, policySeconds = 0, buildSeconds = 0, runSeconds = 0;
};

TuneAutoResult tuneAutoTask(const MeasureTaskPtr& task, double flops, SearchPolicy& policy, Builder& builder, Runner& runner,
                            const TuneAutoOptions& options, const std::vector<MeasuredSchedule>& resumed = {},
                            const ScheduleTrialCallback& onTrial = {});

/// What a task's confirmation (tune/Confirmation.h) re-measures: the `top` best distinct
/// measured schedules other than the default (tune::pickContenders), then the default itself
/// last, as confirmAgainstFallback takes them. Empty when none is a contender: the default,
/// measured first, beat every searched schedule by more than the slack.
std::vector<MeasureInput> contendersAgainstDefault(const MeasureTaskPtr& task, const std::vector<MeasuredSchedule>& measured,
                                                   const std::vector<schedule::StepPtr>& defaultSteps, int top);

}  // namespace tessel::tune::ansor
