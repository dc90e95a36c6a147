/// The runner's side of the measurement worker's line protocol (worker/MeasureSession.h): starts
/// the worker (tessel-measure-worker, or a device server's tessel-device-worker), sends it one
/// candidate at a time as plain files and names, and turns whatever comes back into a
/// MeasureResult: a crash is a RuntimeDeviceError naming the signal, a run past the deadline
/// has the worker killed and is a RunTimeoutError, a reply that breaks the protocol is an
/// UnknownError; after any of them, and after a wrong answer (whose kernel may have scribbled
/// elsewhere too), the next candidate gets a fresh worker. A cost under the floor every record
/// must clear is refused (MeasureResult.h).
///
/// Nothing of the compiler is in it (no task, no schedule): LocalRunner measures tuning's
/// candidates through it, and the device server (rpc/DeviceServer.h) measures a client's
/// uploaded files through it in tessel-rpc-server, which links the runtime and RPC only.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/TempDir.h"
#include "tune/MeasureOptions.h"
#include "tune/MeasureResult.h"
#include "tune/WorkerProcess.h"

namespace tessel::tune {

struct LocalRunnerOptions : MeasureOptions {
  std::string workerPath;  ///< empty: findMeasureWorker()
  /// Kernel threads of the worker (TESSEL_NUM_THREADS in its environment); 0: its default.
  int threads = 0;
  /// Threads that wait for work sleep at once (OMP_WAIT_POLICY=PASSIVE) instead of spinning
  /// first: on a busy machine a spinning thread holds a core a preempted sibling needs.
  bool passiveWait = false;
  /// The index of the device GPU candidates run on (among this machine's devices of their kind:
  /// cuda:N, opencl:N).
  int gpuDeviceId = 0;
  /// The longest one candidate may hold the worker, whatever its timeout asks (a device
  /// server's --max-run-timeout); 0: no cap.
  double maxRunSeconds = 0;
};

/// One candidate as the worker runs it.
struct WorkerCandidate {
  std::string taskName;   ///< names the candidate in errors
  std::string library;    ///< the kernel's shared library, or a GPU module's directory
  std::string gpuDevice;  ///< "cuda" or "opencl" when `library` is a GPU module's directory
  std::string kernel;     ///< the kernel's symbol
  int numInputs = 0;      ///< how many of the kernel's arguments are inputs
  bool coldCache = false; ///< rotate the arguments through copies larger than the last-level cache
  double stopAboveSeconds = 0;  ///< time by one call when the warm-up call takes longer (0: never)
  double tolerance = 1e-4;      ///< relative error allowed against the reference
  /// With MeasureOptions::checkCorrectness: the reference's shared library and kernel, run on
  /// the same seeded inputs.
  std::string referenceLibrary, referenceKernel;
};

class MeasureWorkerClient {
 public:
  /// Throws Error for invalid options or when the worker executable cannot be found.
  explicit MeasureWorkerClient(LocalRunnerOptions options);
  ~MeasureWorkerClient();
  MeasureWorkerClient(const MeasureWorkerClient&) = delete;
  MeasureWorkerClient& operator=(const MeasureWorkerClient&) = delete;

  const LocalRunnerOptions& options() const { return options_; }
  /// This client's own temporary directory (the workers' stderr files), removed with it: a
  /// runner keeps the files it must outlive a build in (its references' libraries) there too.
  const std::string& directory() const { return dir_.path(); }

  /// Measures one candidate after the options' cooldown. `cancelled` (optional) is asked while
  /// the worker runs it, every WorkerProcess::kCancelPoll: when it says true (a device server's
  /// client went away) the worker is killed at once and the result is an error saying so. Never
  /// throws for a bad candidate. Sets the result's run and load seconds, not its build seconds
  /// or timestamp.
  MeasureResult measure(const WorkerCandidate& candidate, const std::function<bool()>& cancelled = {});

  /// Seconds runtime::probeKernelThreads takes in the worker; nothing when it cannot tell.
  std::optional<double> probeSeconds();
  /// The worker's pid while one runs.
  std::vector<int> processIds() const;
  /// How many worker processes this client has started (1 + the replacements).
  int workersStarted() const { return workersStarted_; }

 private:
  /// Starts a worker if none runs; returns an error message when it cannot.
  std::string ensureWorker();

  LocalRunnerOptions options_;
  TempDir dir_;
  std::unique_ptr<WorkerProcess> worker_;
  int workersStarted_ = 0;
  int64_t nextRequestId_ = 1;
  std::chrono::steady_clock::time_point lastMeasurementEnd_{};
  bool measuredBefore_ = false;
};

/// The measurement worker executable: $TESSEL_MEASURE_WORKER if set, else
/// `tessel-measure-worker` beside the running program or in an installed tessel's program
/// directory, else the build tree's when running from it (support/HelperPrograms.h). Throws
/// Error listing the places tried.
std::string findMeasureWorker();

}  // namespace tessel::tune
