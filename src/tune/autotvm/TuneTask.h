/// The tuning loop of one task: ask the tuner for a batch of configs, instantiate each into a
/// step list, build and run the batch, hand every result to the caller (who logs it) and the
/// throughputs back to the tuner, until the trial budget, the space or the patience
/// (early stopping) runs out. It prints the seeds' progress line:
///   [Task  1/12]  Current/Best:   12.31/  45.20 GFLOPS | Progress: (480/1000) | 640.31 s Done.
#pragma once
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tune/MeasureBatch.h"
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
  /// Measure the task's fallback config in the first batch (unless already measured).
  bool measureFallbackFirst = true;
};

/// Called once per measured config, in measurement order, before the tuner learns of it.
using TrialCallback = std::function<void(const ConfigEntity& config, const MeasureInput& input, const MeasureResult& result)>;

struct TuneTaskResult {
  int64_t trials = 0;   ///< measured in this run (resumed ones not counted)
  int64_t errors = 0;   ///< of them, failed
  std::optional<uint64_t> bestIndex;
  double bestFlopsPerSecond = 0;  ///< over resumed and new trials
  double seconds = 0;
  bool stoppedEarly = false;
};

/// `resumed`: trials of this task already in the log (a resumed run): they count towards the
/// budget and the best, are never proposed again, and teach the tuner first.
TuneTaskResult tuneTask(const TuningTaskPtr& task, Tuner& tuner, Builder& builder, Runner& runner,
                        const TuneTaskOptions& options, const std::vector<Trial>& resumed = {},
                        const TrialCallback& onTrial = {});

/// The measure input of a config (its steps; InstantiationError when it has none), as the
/// tuning loop builds it; exposed for replaying records.
std::optional<MeasureInput> instantiateConfig(const TuningTask& task, const ConfigEntity& config, std::string* error);

}  // namespace tessel::tune::autotvm
