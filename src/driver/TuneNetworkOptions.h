/// What a network's tuning run (driver::tuneNetwork) is asked to do, as plain values: the
/// network and its preparation, which tasks, how they are searched, where the trials are
/// logged and measured, and what is done with the best records (the module, its evaluation).
/// The CLI parses `tessel tune`'s flags into these once (cli/TuneCommand.cpp); a binding fills
/// them in directly.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "driver/PreparedModel.h"
#include "driver/TuningTasks.h"
#include "graph/Graph.h"
#include "passes/GpuLimits.h"
#include "target/Target.h"
#include "tune/LocalBuilder.h"
#include "tune/LocalRunner.h"
#include "tune/MeasureBatch.h"

namespace tessel::driver {

/// How the task scheduler (tune/TaskScheduler.h) picks the task of the next round: by the
/// estimated gain in the network's latency (seed 001's gradient) or in turn.
enum class TaskSchedulerKind { Gradient, RoundRobin };

/// tune::TaskSchedulerOptions::strategy of a kind ("gradient", "round-robin").
const char* taskSchedulerStrategy(TaskSchedulerKind kind);

/// A tuned module's inference time (milliseconds).
struct NetworkTiming {
  double mean = 0, stddev = 0;
};

/// Devices behind a tracker that measure the candidates instead of this machine. The flow asks
/// for each part where it needs it, in the order a run reports them; the CLI makes them from
/// `--runner rpc` and its options (cli/RpcCommands.h), which also print what they find.
struct RemoteMeasurement {
  /// The runner that measures on the devices, with these timing options.
  std::function<std::unique_ptr<tune::Runner>(const tune::LocalRunnerOptions& measure)> makeRunner;
  /// A CPU target: the target kernels are scheduled for on those devices (the tuned target
  /// with their core count, where it names none: a thread partition is made for the cores it
  /// runs on).
  std::function<target::Target()> scheduledTarget;
  /// A GPU target: the limits the devices report, which kernels are verified against.
  std::function<passes::GpuLimits()> gpuLimits;
  /// A GPU target: the tuned module (its directory) timed on a device, `repeat` measurements.
  std::function<NetworkTiming(const std::string& moduleDirectory, int repeat)> benchmark;
};

struct TuneNetworkOptions {
  /// The network as loaded (a zoo network or an ONNX model, its parameters in place).
  graph::Graph model;
  /// Its preparation; `prepare.target` is the target tuned for, a CPU or a GPU target (VTA's
  /// packed tasks are another flow).
  PrepareOptions prepare;
  /// A GPU target: the CPU beside the device, for which the correctness reference is compiled.
  target::Target gpuHost = target::Target::host();

  /// Which tasks: the tuner's list (TuningTasks.h), the numbers of the tasks to tune as listed
  /// (empty: all) and the operator classes (parseOps; empty: all).
  SearchKind search = SearchKind::Templates;
  ColdCacheMode coldCache = ColdCacheMode::Auto;
  std::vector<size_t> tasks;
  std::vector<std::string> ops;

  /// The search. Template tuning: `tuner` (a name tune::autotvm::makeTuner knows), each task in
  /// turn with `nTrial` (capped by its configs) unless `taskScheduler` spreads `nTrial` over the
  /// network; the auto-scheduler: always under the task scheduler (gradient unless set), `nTrial`
  /// for the network.
  std::string tuner = "xgb";
  std::optional<TaskSchedulerKind> taskScheduler;
  bool transferLearning = false;  ///< template tuning in turn: model-based tuners learn from earlier tasks
  int64_t nTrial = 1000;
  int64_t earlyStopping = 0;  ///< template tuning: a task stops after this many trials without a better one (0: never)
  size_t batchSize = 8;       ///< candidates measured per round
  /// The confirmation after each task's search (tune/Confirmation.h): its best `confirmTop`
  /// candidates against the default schedule, `confirmRounds` interleaved rounds (0: none).
  int confirmTop = 5;
  int confirmRounds = 5;
  uint64_t seed = 0;

  /// The records log every trial is appended to (required), and whether its trials of these
  /// tasks count as this run's (resume) and teach the searches first. `forceLog`: append to an
  /// existing file even when it does not read as a records log.
  std::string log;
  bool resume = false;
  bool forceLog = false;

  /// Building and measuring the candidates. `measure.threads` and `measure.passiveWait` are the
  /// flow's: from `threads` (0: the cores other programs leave free, sampled at the start).
  tune::LocalBuilderOptions build;
  tune::LocalRunnerOptions measure;
  int threads = 0;  ///< kernel threads, also of the final timing on this machine
  /// The load monitor of a run on this machine's CPU (tune/LoadMonitor.h): the longest pause
  /// for a busy machine, and the share of the run's time the pauses may take.
  double busyPause = 10;
  double busyPauseShare = 0.2;
  /// Devices behind a tracker; unset: this machine (its CPU, or its GPU for a GPU target).
  std::optional<RemoteMeasurement> remote;

  /// Build the network with the best records after the tuning (then `output`, `evaluate`);
  /// false ends the run with the tuning, as AutoTVM's tuner.tune does (the Python package tunes
  /// one task per call and builds once, with apply_history_best).
  bool buildModule = true;
  /// Where the tuned module is written as well (empty: a temporary directory, for the evaluation only).
  std::string output;
  /// Time the tuned module against the untuned one (on a remote GPU: the tuned one alone).
  bool evaluate = true;
  int evaluateRepeat = 10;

  /// Where the tune layer writes its own lines (null: nowhere): each task's progress line
  /// (tune/ProgressLine.h, rewritten in place when `liveProgress`), its closing lines, the task
  /// scheduler's table after each round and the load monitor's warnings. Their figures reach
  /// the callbacks too (TuneCallbacks.h); the CLI passes stdout.
  std::FILE* tuneLinesTo = nullptr;
  bool liveProgress = false;
};

}  // namespace tessel::driver
