/// The data of one measurement trial, as it flows through tuning: a MeasureInput (a task and
/// one candidate schedule of it) is built into a BuildResult (a shared library, or an error)
/// and run into a MeasureResult (costs, or an error). Every candidate ends in exactly one
/// MeasureResult, whatever goes wrong; the records log writes these fields.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "passes/GpuLimits.h"
#include "runtime/Module.h"
#include "schedule/Steps.h"
#include "target/Target.h"
#include "te/ComputeDAG.h"
#include "tune/MeasureErrorNo.h"
#include "tune/MeasureResult.h"

namespace tessel::tune {

/// One tensor program to tune: a compute DAG for a target.
struct MeasureTask {
  std::string name;         ///< a readable name ("conv2d_nchw"); also the kernel's symbol, made a C identifier
  te::ComputeDAG dag;
  target::Target target = target::Target::host();
  std::string workloadKey;  ///< dag.workloadKey(), computed once by makeMeasureTask
  /// te::dagToJson(dag) as compact text, computed once by makeMeasureTask: every record of the
  /// task carries it (null for tasks made by hand, whose records then do not).
  std::shared_ptr<const std::string> dagJson;
  /// Measure with cold caches: the arguments rotate through copies larger than the last-level
  /// cache, as a layer whose weights come from DRAM meets them in the network.
  bool coldCache = false;
  /// A GPU task ("cuda ..." / "opencl ..." target): the limits its kernels are verified against
  /// when built (from the device that measures, or a named profile); unset: the target's
  /// profile (passes::GpuLimits::forTarget).
  std::optional<passes::GpuLimits> gpuLimits;
  /// A GPU task: the CPU its correctness reference (the naive schedule) is compiled for, the
  /// host of the device that runs the candidates (`--target-host`).
  target::Target hostTarget = target::Target::host();
  /// Whether the kernels of this task run on a GPU.
  bool onGpu() const { return target.isGpu(); }
  /// Identifies the task across networks and runs: the workload key and the target.
  std::string key() const { return workloadKey + " @ " + target.str(); }
};
using MeasureTaskPtr = std::shared_ptr<const MeasureTask>;

MeasureTaskPtr makeMeasureTask(std::string name, te::ComputeDAG dag, target::Target target = target::Target::host());

/// One candidate of a task: a step list (empty = the naive schedule) and, for template tuning,
/// the config it came from (opaque here, e.g. the config's entity or index).
struct MeasureInput {
  MeasureTaskPtr task;
  std::vector<schedule::StepPtr> steps;
  std::string config;
  /// Seconds (0: none): a candidate whose warm-up call takes longer is timed by one call only
  /// (runtime::TimeEvaluatorOptions::stopAboveSeconds). The tuning loops set it from the
  /// task's best cost (stopAboveFor); confirmations never do.
  double stopAboveSeconds = 0;
  /// The task's correctness reference (its naive schedule), added by buildBatch: on a GPU task
  /// it is built for the host CPU (MeasureTask::hostTarget), not for the device.
  bool reference = false;
};

/// How much slower than the task's best a candidate must run to be timed by one call.
inline constexpr double kStopAboveBestFactor = 4;
/// The stop bound for a task whose best cost so far is `bestSeconds` (0 when none is known).
double stopAboveFor(double bestSeconds);

/// A compiled candidate, or why there is none.
struct BuildResult {
  std::string libraryPath;             ///< the shared library (a GPU candidate: its module directory); empty on error
  /// "cuda" or "opencl" when libraryPath is a GPU module directory (runtime/GpuModule.h);
  /// empty for a CPU shared library.
  std::string gpuDevice;
  std::string kernelName;              ///< the kernel's symbol in it
  std::vector<runtime::ArgSpec> args;  ///< the kernel's arguments: inputs, then outputs
  int numInputs = 0;                   ///< how many of `args` are inputs
  double buildSeconds = 0;             ///< instantiation + code generation + compilation
  double lowerSeconds = 0;             ///< of which replaying, lowering and generating code
  double compileSeconds = 0, linkSeconds = 0;  ///< of which the compiler and the linker
  MeasureErrorNo errorNo = MeasureErrorNo::NoError;
  std::string errorMessage;
  bool ok() const { return errorNo == MeasureErrorNo::NoError; }
};

/// A build that failed: its error, after `buildSeconds`.
BuildResult buildErrorResult(MeasureErrorNo errorNo, std::string message, double buildSeconds);

}  // namespace tessel::tune
