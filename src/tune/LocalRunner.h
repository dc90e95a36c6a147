/// Runs built candidates on this machine and measures them, in a separate long-lived worker
/// process (tessel-measure-worker, runtime-only; see worker/MeasureSession.h for its protocol,
/// and MeasureWorkerClient.h for the side of it that this runner drives).
/// A candidate that crashes the worker becomes a RuntimeDeviceError naming the signal; one that
/// runs past the timeout has the worker killed and becomes a RunTimeoutError; either way (and
/// after a wrong answer, whose kernel may have scribbled elsewhere too) the next candidate gets
/// a fresh worker and tuning goes on. With check_correctness, every
/// candidate's outputs are compared with its task's reference (the naive schedule, built once
/// per task and registered with setReference) on the same seeded inputs: a mismatch is a
/// WrongAnswerError naming the output, element and error. A cost under the floor every record
/// must clear (a worker answering 1 ps) is a RuntimeDeviceError (tune/PlausibleCost.h).
///
/// A GPU candidate (BuildResult::gpuDevice) runs in the same worker on this machine's device of
/// its kind, timed by the device's clock (worker/GpuMeasure.cpp).
///
/// Timing follows runtime::timeFunction: `repeat` costs of `number` calls each, `number` raised
/// until one measurement lasts min_repeat_ms; flushing the CPU cache happens before each
/// measurement and never changes `number` or min_repeat_ms (TVM's evaluator silently did).
#pragma once
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tune/MeasureBatch.h"
#include "tune/MeasureWorkerClient.h"

namespace tessel::tune {

class LocalRunner : public Runner {
 public:
  /// Throws Error for invalid options or when the worker executable cannot be found.
  explicit LocalRunner(LocalRunnerOptions options = {});
  ~LocalRunner() override;
  LocalRunner(const LocalRunner&) = delete;
  LocalRunner& operator=(const LocalRunner&) = delete;

  const LocalRunnerOptions& options() const { return client_.options(); }

  /// Measures each built candidate (a failed build passes its error through); one result per
  /// input, in order. Never throws for a bad candidate.
  std::vector<MeasureResult> run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds) override;
  /// One candidate. `cancelled` (optional) is asked while the worker runs it, every
  /// WorkerProcess::kCancelPoll: when it says true (a device server's client went away) the
  /// worker is killed at once and the result is an error saying so.
  MeasureResult runOne(const MeasureInput& input, const BuildResult& build, const std::function<bool()>& cancelled = {});

  /// Whether candidates of `task` need a reference that has not been registered yet.
  bool needsReference(const MeasureTask& task) const override;
  std::optional<double> probeSeconds() override;
  std::vector<int> processIds() const override;
  /// Registers the build of a task's naive schedule as its reference (the library is copied,
  /// so the builder may discard it). A failed build is registered too: its candidates then end
  /// in UnknownError naming the reference's error, instead of being rebuilt each batch.
  void setReference(const MeasureTask& task, const BuildResult& reference) override;

  /// How many worker processes this runner has started (1 + the replacements).
  int workersStarted() const { return client_.workersStarted(); }

 private:
  struct Reference {
    BuildResult build;  ///< libraryPath points into the client's directory
  };

  MeasureWorkerClient client_;
  std::map<std::string, Reference> references_;
};

}  // namespace tessel::tune
