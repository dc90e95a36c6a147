/// One round of measurement as tuners call it: build a batch of candidates, then run them.
/// Builder and Runner are the two halves, as interfaces, so that a remote runner (RPC) or a
/// synthetic one (tests of the search) plugs in where LocalBuilder and LocalRunner do.
#pragma once
#include <optional>
#include <vector>

#include "tune/Measure.h"

namespace tessel::tune {

class Builder {
 public:
  virtual ~Builder() = default;
  /// One result per input, in order; never throws for a bad candidate.
  virtual std::vector<BuildResult> build(const std::vector<MeasureInput>& inputs) = 0;
  /// The runner is done with a build: its files may go.
  virtual void discard(const BuildResult& result) = 0;
};

class Runner {
 public:
  virtual ~Runner() = default;
  /// One result per input, in order; a failed build passes its error through.
  virtual std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds) = 0;
  /// Whether the runner checks correctness and has no reference for `task` yet.
  virtual bool needsReference(const MeasureTask& task) const = 0;
  /// Registers the build of a task's naive schedule (no steps) as its reference.
  virtual void setReference(const MeasureTask& task, const BuildResult& reference) = 0;
  /// Seconds runtime::probeKernelThreads takes where candidates run, when the runner can tell
  /// (a remote device cannot be compared with this machine: nothing).
  virtual std::optional<double> probeSeconds() { return std::nullopt; }
  /// The processes of this machine the runner measures in (a worker's pid): their CPU time is
  /// tessel's own, not another program's load.
  virtual std::vector<int> processIds() const { return {}; }
};

/// Wall time of a batch's two halves.
struct BatchTiming {
  double buildSeconds = 0, runSeconds = 0;
};

/// Builds the inputs (and, when the runner checks correctness, the naive schedule of each task
/// it has no reference for yet, in the same parallel batch, registered with the runner).
/// One build per input, in order; the caller discards them.
std::vector<BuildResult> buildBatch(Builder& builder, Runner& runner, const std::vector<MeasureInput>& inputs);

/// buildBatch, then runs them and discards the builds. Every input ends in exactly one result,
/// in input order. `timing` (optional) receives the wall time of both halves.
std::vector<MeasureResult> measureBatch(Builder& builder, Runner& runner, const std::vector<MeasureInput>& inputs,
                                        BatchTiming* timing = nullptr);

}  // namespace tessel::tune
