/// The tuning loop of one task: ask the tuner for a batch of configs, instantiate each into a
/// step list, build and run the batch, hand every result to the caller (who logs it) and the
/// throughputs back to the tuner, until the trial budget, the space or the patience
/// (early stopping) runs out. A config whose step list a config measured before has (in this
/// run or resumed from the log) is the same schedule: it is not built nor run, but takes that
/// config's result as a copy (`MeasureResult::sameAs`), which is logged, taught to the tuner and
/// counted against the budget like any trial. It prints the seeds' progress line:
///   [Task  1/12]  Current/Best:   12.31/  45.20 GFLOPS | Progress: (480/1000) | 640.31 s Done.
/// and, when there were copies, "[Task  1/12] 12 duplicates of measured schedules not measured again".
#pragma once
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tune/LoadMonitor.h"
#include "tune/MeasureBatch.h"
#include "tune/RunEstimate.h"
#include "tune/autotvm/Tuner.h"

namespace tessel::tune::autotvm {

struct TuneTaskOptions {
  int64_t nTrial = 1000;         ///< capped by the space's size
  int64_t earlyStopping = 0;     ///< stop after this many trials without a better config (0: never)
  size_t batchSize = 8;          ///< configs measured per round
  std::string progressPrefix;    ///< "[Task  1/12] " (empty: no progress line)
  std::FILE* progressTo = stdout;
  /// Rewrite the progress line in place after each batch (a terminal); else print it once.
  bool liveProgress = false;
  /// The whole run's estimate: told of every batch measured, shown in the progress line. Null: none.
  RunEstimate* runEstimate = nullptr;
  /// Measure the task's fallback config in the first batch (unless already measured).
  bool measureFallbackFirst = true;
  /// Confirmation, after the search: the `confirmTop` best candidates (by their median cost)
  /// and the fallback config are built once and measured again `confirmRounds` times,
  /// interleaved in a shuffled order each round, so that drifts in the machine's speed hit
  /// them alike. A candidate replaces the fallback only if, compared round by round with it, it
  /// is faster in most rounds and its median ratio to it is below 1 - confirmMargin; the
  /// fastest such candidate is the task's decision, logged as one record with
  /// `result.confirmed` (which ranks before every unconfirmed record). 0: no confirmation.
  int confirmTop = 5;
  int confirmRounds = 5;
  double confirmMargin = 0.01;
  uint64_t seed = 0;  ///< of the confirmation's shuffled orders
  /// Asked before every batch runs (after it is built): pauses on a busy machine and flags
  /// results measured under load. Null: no monitoring.
  LoadMonitor* loadMonitor = nullptr;
};

/// Called once per trial (a measured config or a copy, its result's `sameAs` set), in order,
/// before the tuner learns of it; and once more for the confirmation's decision (its result has
/// `confirmed` set).
using TrialCallback = std::function<void(const ConfigEntity& config, const MeasureInput& input, const MeasureResult& result)>;

struct TuneTaskResult {
  int64_t trials = 0;      ///< in this run, copies included (resumed ones not counted): what the budget counts
  int64_t errors = 0;      ///< of them, failed (a copy of a failure too)
  int64_t duplicates = 0;  ///< of them, copies of a schedule measured before: neither built nor run
  std::optional<uint64_t> bestIndex;
  double bestFlopsPerSecond = 0;  ///< over resumed and new trials
  double seconds = 0;
  bool stoppedEarly = false;
  /// The confirmation's decision (unset when there was none): the config, its median cost in
  /// the re-measurement, the fallback's, and whether the fallback stayed.
  std::optional<uint64_t> confirmedIndex;
  double confirmedCost = 0, fallbackCost = 0;
  bool keptFallback = false;
  bool withoutRounds = false;  ///< kept because no candidate came within the contenders' slack
  std::string confirmationSummary;  ///< one line, also printed with the progress
  /// Wall time of the loop's parts: the tuner choosing and learning, instantiating configs,
  /// building, running (the confirmation's included).
  double tunerSeconds = 0, instantiateSeconds = 0, buildSeconds = 0, runSeconds = 0;
  /// Inside the builds (summed over candidates; builds run in parallel, so these exceed the
  /// build's wall time): replaying, lowering and generating code, the compiler, the linker;
  /// and inside the runs, loading the libraries.
  double lowerCpuSeconds = 0, compileCpuSeconds = 0, linkCpuSeconds = 0, loadSeconds = 0;
  /// Adds another task's times and counts (for a run's totals).
  void accumulate(const TuneTaskResult& other);
};

/// `resumed`: trials of this task already in the log (a resumed run): they count towards the
/// budget and the best, are never proposed again, teach the tuner first, and a config with the
/// steps of one of them is its copy (of its median cost, or of its failure as UnknownError:
/// a Trial keeps no more).
TuneTaskResult tuneTask(const TuningTaskPtr& task, Tuner& tuner, Builder& builder, Runner& runner,
                        const TuneTaskOptions& options, const std::vector<Trial>& resumed = {},
                        const TrialCallback& onTrial = {});

/// "12 duplicates of measured schedules not measured again": the line of a task or a run whose
/// proposals held `duplicates` copies.
std::string duplicatesLine(int64_t duplicates);

/// The trials tuneTask measures at most for `task` with `nTrial` after `resumed` logged ones
/// (the budget is capped by the space, and the resumed trials count towards it).
int64_t plannedTrials(const TuningTask& task, int64_t nTrial, size_t resumed);

/// The confirmation alone (what tuneTask does after its search when `options.confirmTop` > 0),
/// for a caller that tunes a task in several calls (rounds of the task scheduler): `measured`
/// is every trial of the task (copies included: configs with the same steps are one contender,
/// and one with the fallback's steps is the fallback); the decision goes to onTrial and into
/// `result`, its wall time into `result.seconds`.
void confirmTask(const TuningTask& task, Builder& builder, Runner& runner, const TuneTaskOptions& options,
                 const std::vector<Trial>& measured, const TrialCallback& onTrial, TuneTaskResult& result);

/// The measure input of a config (its steps; InstantiationError when it has none), as the
/// tuning loop builds it; exposed for replaying records.
std::optional<MeasureInput> instantiateConfig(const TuningTask& task, const ConfigEntity& config, std::string* error);

}  // namespace tessel::tune::autotvm
