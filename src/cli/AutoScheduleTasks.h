/// `tessel tune --scheduler auto`: every task of a network tuned by the template-free
/// auto-scheduler (tune/ansor): the tasks printed as seed 001 prints them (numbered as `tessel
/// tasks` lists them), then rounds that the
/// task scheduler (tune/TaskScheduler.h) gives to the task whose tuning lowers the network's
/// estimated latency most, printing its table after each. Per task the sketch policy with the
/// XGBoost cost model runs in the tuning loop and keeps what it learned across rounds; every
/// trial is appended to the log before the policy learns of it. `nTrial` is the budget of the
/// whole network, as in seed 001. Resuming feeds each task's logged auto-scheduler trials to
/// its fresh policy and model first (the model is rebuilt from them) and counts them.
///
/// On a GPU target the tasks are searched with the GPU sketch rules (tune/ansor/GpuSketches.h)
/// within the target's limits, and the default schedule is the default GPU schedule.
///
/// Each task's first measurement is its default schedule (the untuned build's), and after the
/// rounds the best schedules of each task are confirmed against it by interleaved
/// re-measurement (tune/Confirmation.h), as template tuning does: a short or stopped run never
/// builds anything slower than the untuned network, and the confirmed decision is the record
/// that competes with a template's confirmed record for the same workload.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/TaskExtraction.h"
#include "passes/GpuLimits.h"
#include "target/Target.h"
#include "tune/LoadMonitor.h"
#include "tune/MeasureBatch.h"
#include "tune/Record.h"
#include "tune/RecordLog.h"

namespace tessel::cli {

struct AutoScheduleOptions {
  target::Target target = target::Target::host();
  /// A GPU target ("cuda ...", "opencl ..."): the limits its kernels are verified against (the
  /// measuring device's or the target's profile), which the GPU sketch rules keep to; unset: a
  /// CPU target.
  std::optional<passes::GpuLimits> gpuLimits;
  /// A GPU target: the CPU the correctness reference is compiled for (`--target-host`).
  target::Target hostTarget = target::Target::host();
  int64_t nTrial = 1000;       ///< for the whole network
  std::string taskScheduler = "gradient";  ///< or round-robin
  size_t batchSize = 16;
  size_t populationSize = 256;  ///< of the evolutionary search (TVM: 2048)
  uint64_t seed = 0;
  bool resume = false;
  bool liveProgress = false;
  tune::LoadMonitor* loadMonitor = nullptr;
  /// Per task (empty: none): measured with cold caches (the network reads its weights from
  /// DRAM), as template tuning measures it.
  std::vector<bool> coldCache;
  /// The confirmation: the best `confirmTop` schedules of each task and its default schedule,
  /// `confirmRounds` interleaved rounds (0 candidates: no confirmation).
  int confirmTop = 5;
  int confirmRounds = 5;
  /// Per task (empty: by position): its number as `tessel tasks` lists it, in the DAGs printed
  /// and the task scheduler's table, and the prefix of its lines ("[Task  3/22] ").
  std::vector<size_t> numbers;
  std::vector<std::string> prefixes;
};

struct AutoScheduleSummary {
  int64_t trials = 0;
  int64_t statesScored = 0;  ///< by the cost models, over all tasks
  double seconds = 0, policySeconds = 0, buildSeconds = 0, runSeconds = 0;
  int confirmedTasks = 0, keptDefault = 0;  ///< tasks confirmed; of them, those the default won
  int keptWithoutRounds = 0;                ///< of those, the default far ahead: no re-measurement
};

AutoScheduleSummary autoScheduleTasks(const std::vector<graph::Task>& tasks, const AutoScheduleOptions& options, tune::Builder& builder,
                                      tune::Runner& runner, tune::RecordLogWriter& log, const std::vector<tune::TuningRecord>& earlier);

}  // namespace tessel::cli
