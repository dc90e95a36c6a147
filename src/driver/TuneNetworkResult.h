/// What a network's tuning run (driver::tuneNetwork) found and made, as plain values that the
/// callbacks report as they come (TuneCallbacks.h) and the run returns at its end: per task its
/// trials, errors, best cost and the confirmation's decision; the run's totals; the build with
/// the best records; the tuned module's evaluation.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "driver/TuneNetworkOptions.h"
#include "driver/TuningTasks.h"
#include "runtime/TimeEvaluator.h"
#include "schedule/Steps.h"
#include "tune/Confirmation.h"
#include "tune/autotvm/TuneTask.h"

namespace tessel::driver {

/// The confirmation's decision for a task (tune/Confirmation.h): the default schedule kept, or
/// a searched one that beat it in interleaved rounds.
struct TaskDecision {
  size_t number = 0;   ///< the task's, as listed
  std::string prefix;  ///< of its lines: "[Task  3/22] "
  bool keptDefault = true;
  /// Kept without rounds: no candidate came within tune::kContenderSlack of the default.
  bool withoutRounds = false;
  int rounds = 0;      ///< interleaved rounds measured (0 without rounds)
  double cost = 0;     ///< the decision's median cost in them, seconds (without rounds: its search cost)
  /// The tune layer's line where it writes one: a template task's confirmation summary
  /// (tune::autotvm::TuneTaskResult), an auto-scheduled task's winner (Confirmation::confirmedLine).
  std::string line;
  /// The line went out with the task's progress already (tune::autotvm::tuneTask writes it
  /// under the progress line of a task tuned in one call).
  bool printed = false;
};

/// One selected task's tuning.
struct TunedTask {
  size_t number = 0;  ///< as listed
  std::string name;   ///< the fused function's
  std::string workloadKey;     ///< the key its records carry in the log
  std::string templateName;    ///< template tuning; empty under the auto-scheduler
  int64_t resumedTrials = 0;   ///< its trials in the log before this run (resume)
  int64_t trials = 0;          ///< measured in this run (copies of a measured schedule included)
  int64_t errors = 0;          ///< of them, failed
  /// The least cost of its trials, resumed and new, in seconds (+inf: none valid), and that
  /// trial's config (template tuning) or schedule (a template task's from the log: its config alone).
  double bestCost = std::numeric_limits<double>::infinity();
  std::optional<uint64_t> bestConfig;
  std::vector<schedule::StepPtr> bestSteps;
  std::optional<TaskDecision> decision;
};

/// The tuning's totals, after the last task.
struct TuningSummary {
  SearchKind search = SearchKind::Templates;
  size_t tasks = 0;
  int64_t trials = 0;
  double seconds = 0;  ///< wall time of the search and the confirmation
  /// The auto-scheduler's parts: choosing candidates (states scored by its cost models),
  /// building, running.
  double policySeconds = 0, buildSeconds = 0, runSeconds = 0;
  int64_t statesScored = 0;
  /// Template tuning's parts, summed over its tasks (their wall times, copies, CPU times).
  tune::autotvm::TuneTaskResult templateTotals;
  std::string loadSummary;  ///< template tuning on this CPU: the load monitor's (LoadMonitor::summary)
  int confirmedTasks = 0, keptDefault = 0;  ///< tasks confirmed; of them, those the default won
  int keptWithoutRounds = 0;                ///< of those, the default far ahead: no re-measurement
};

/// The build with the best records.
struct BuildReport {
  std::string records;           ///< tune::HistoryBest::summary
  std::string variants;          ///< the Winograd choice by the records (chooseByRecords; empty: none)
  std::string defaultSchedules;  ///< CPU targets: DefaultSchedules::summary of the functions without records
  std::string module;            ///< the module's directory when written to `output` (empty: a temporary one)
};

/// The tuned module timed, against the untuned build where both run here.
struct NetworkEvaluation {
  NetworkTiming tuned;
  /// The untuned build (default schedules), timed in alternation with the tuned one; unset on
  /// a remote device.
  std::optional<NetworkTiming> untuned;
  runtime::RoundRatios rounds;  ///< the rounds' own ratios of untuned over tuned
  std::string device;           ///< where it ran here ("cpu", "cuda:0"); empty on a remote device
};

struct TuneNetworkResult {
  std::string log;
  std::vector<TunedTask> tasks;  ///< the selected tasks, in list order
  TuningSummary summary;
  BuildReport build;
  std::optional<NetworkEvaluation> evaluation;  ///< unset when not evaluated
};

}  // namespace tessel::driver
