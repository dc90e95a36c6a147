#include "rpc/RpcRunner.h"

#include <cmath>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "rpc/DeviceSession.h"
#include "rpc/TrackerClient.h"
#include "support/Clock.h"
#include "support/Error.h"
#include "support/GpuModuleFormat.h"
#include "tune/PlausibleCost.h"

namespace tessel::rpc {

namespace {

using std::chrono::duration;
constexpr std::chrono::milliseconds kTrackerRetry{200};
constexpr std::chrono::milliseconds kRegistrationGrace{3000};
constexpr int kSessionFailuresPerThread = 5;

}  // namespace

/// The state one run() shares among its device threads.
struct RpcRunner::Batch {
  struct Item {
    size_t index = 0;
    int attempts = 0;
    std::vector<std::string> lost;  ///< why each device it was on was lost
  };
  const std::vector<tune::MeasureInput>& inputs;
  const std::vector<tune::BuildResult>& builds;
  std::vector<std::optional<tune::MeasureResult>> results;
  int64_t id = 0;
  TrackerClient tracker;
  Clock::time_point start = Clock::now();

  std::mutex mutex;
  std::deque<Item> queue;
  int devicesHeld = 0;                  ///< threads holding a device right now
  std::set<RequestCanceller*> waiting;  ///< threads waiting for a device

  Batch(const std::vector<tune::MeasureInput>& i, const std::vector<tune::BuildResult>& b, const RpcRunnerOptions& o)
      : inputs(i), builds(b), results(i.size()), tracker(o.tracker, o.security) {}

  /// Records a result (once per candidate). Caller holds the lock.
  void finish(size_t index, tune::MeasureResult result, double runSeconds) {
    TESSEL_ICHECK(!results[index]);
    result.buildSeconds = builds[index].buildSeconds;
    result.runSeconds = runSeconds;
    result.allCost = result.buildSeconds + result.runSeconds;
    result.timestamp = tune::unixTimeSeconds();
    results[index] = std::move(result);
  }
  /// Fails every queued candidate with `message`. Caller holds the lock.
  void failQueued(tune::MeasureErrorNo errorNo, const std::string& message) {
    for (auto& item : queue) finish(item.index, tune::errorResult(errorNo, message), 0);
    queue.clear();
  }
  /// Stops the threads waiting for a device: nothing is left for them. Caller holds the lock.
  void cancelWaiters() {
    for (auto* c : waiting) c->cancel();
  }
};

RpcRunner::RpcRunner(RpcRunnerOptions options) : options_(std::move(options)), dir_("tessel-rpc-runner") {
  const auto& o = options_;
  TESSEL_CHECK(!o.key.empty(), "rpc runner: a device key is required (--key)");
  TESSEL_CHECK(!o.tracker.empty() && o.tracker.find(':') != std::string::npos,
               "rpc runner: the tracker must be HOST:PORT, got '{}'", o.tracker);
  TESSEL_CHECK(std::isfinite(o.deviceWaitSeconds) && o.deviceWaitSeconds > 0,
               "rpc runner: the device wait must be a positive number of seconds, got {}", o.deviceWaitSeconds);
  TESSEL_CHECK(std::isfinite(o.leaseSeconds) && o.leaseSeconds >= 1,
               "rpc runner: the lease must last at least 1 s, got {}", o.leaseSeconds);
  TESSEL_CHECK(o.maxDevices >= 0, "rpc runner: max devices must not be negative, got {}", o.maxDevices);
  TESSEL_CHECK(o.maxAttempts >= 1, "rpc runner: max attempts must be at least 1, got {}", o.maxAttempts);
  o.measure.validate("rpc runner");
}

RpcRunner::~RpcRunner() = default;

int RpcRunner::checkDevicesRegistered() const {
  TrackerClient tracker(options_.tracker, options_.security);
  // A short grace, not --device-wait: that is how long a *busy* key's candidates wait for a
  // free device. A dead tracker or a key nobody serves is a mistake to report at once; the
  // grace only covers servers started a moment before the tuner (a script starting both).
  auto deadline = Clock::now() + std::min(millis(options_.deviceWaitSeconds), kRegistrationGrace);
  for (;;) {
    std::vector<KeySummary> keys;
    try {
      keys = tracker.summary(nullptr, std::chrono::seconds(2));
    } catch (const Error&) {
      if (Clock::now() >= deadline) throw;
      std::this_thread::sleep_for(kTrackerRetry);
      continue;
    }
    std::vector<std::string> others;
    for (const auto& k : keys) {
      if (k.key == options_.key && k.total > 0) return k.total;
      if (k.total > 0) others.push_back(fmt::format("{} ({})", k.key, k.total));
    }
    if (Clock::now() >= deadline)
      fail("no device of key '{}' is registered with the tracker at {} (it has {}); start one with `tessel server "
           "--tracker {} --key {}`", options_.key, options_.tracker, others.empty() ? "none" : fmt::format("{}", fmt::join(others, ", ")),
           options_.tracker, options_.key);
    std::this_thread::sleep_for(kTrackerRetry);
  }
}

bool RpcRunner::needsReference(const tune::MeasureTask& task) const {
  return options_.measure.checkCorrectness && !references_.count(task.key());
}

void RpcRunner::setReference(const tune::MeasureTask& task, const tune::BuildResult& reference) {
  tune::BuildResult copy = reference;
  if (reference.ok()) {
    copy.libraryPath = fmt::format("{}/reference_{}.so", dir_.path(), references_.size());
    std::error_code ec;
    std::filesystem::copy_file(reference.libraryPath, copy.libraryPath,
                               std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) {
      copy.errorNo = tune::MeasureErrorNo::UnknownError;
      copy.errorMessage = fmt::format("cannot copy the reference library '{}': {}", reference.libraryPath, ec.message());
    }
  }
  references_[task.key()] = copy;
}

std::map<std::string, int64_t> RpcRunner::measuredPerDevice() const {
  std::lock_guard lock(statsMutex_);
  return measuredPerDevice_;
}

int64_t RpcRunner::devicesLost() const {
  std::lock_guard lock(statsMutex_);
  return devicesLost_;
}

std::vector<tune::MeasureResult> RpcRunner::run(const std::vector<tune::MeasureInput>& inputs,
                                                const std::vector<tune::BuildResult>& builds) {
  TESSEL_CHECK(inputs.size() == builds.size(), "RpcRunner::run: {} inputs but {} build results", inputs.size(),
               builds.size());
  Batch batch(inputs, builds, options_);
  batch.id = ++batches_;
  for (size_t i = 0; i < inputs.size(); ++i) {
    TESSEL_CHECK(inputs[i].task != nullptr, "RpcRunner: candidate {} has no task", i);
    const tune::BuildResult& build = builds[i];
    if (!build.ok()) {
      batch.finish(i, tune::errorResult(build.errorNo, build.errorMessage), 0);
      continue;
    }
    if (options_.measure.checkCorrectness) {
      auto ref = references_.find(inputs[i].task->key());
      std::string problem =
          ref == references_.end()
              ? fmt::format("check_correctness: no reference registered for task '{}'", inputs[i].task->name)
          : !ref->second.ok() ? fmt::format("check_correctness: the reference (naive schedule) of task '{}' failed: {}",
                                            inputs[i].task->name, ref->second.errorMessage)
                              : "";
      if (!problem.empty()) {
        batch.finish(i, tune::errorResult(tune::MeasureErrorNo::UnknownError, problem), 0);
        continue;
      }
    }
    batch.queue.push_back({i, 0, {}});
  }
  if (!batch.queue.empty()) {
    // One thread per device the key has (a tracker that cannot say yet gets one thread, which
    // waits for it).
    size_t devices = 1;
    try {
      for (const auto& k : batch.tracker.summary(nullptr, std::chrono::seconds(5)))
        if (k.key == options_.key) devices = std::max<size_t>(1, size_t(k.total));
    } catch (const Error&) {
    }
    size_t threads = std::min(devices, batch.queue.size());
    if (options_.maxDevices > 0) threads = std::min(threads, size_t(options_.maxDevices));
    std::vector<std::thread> pool;
    for (size_t t = 0; t < threads; ++t) pool.emplace_back([this, &batch] { deviceLoop(batch); });
    for (auto& t : pool) t.join();
  }
  std::vector<tune::MeasureResult> results;
  results.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    // Every candidate ends in exactly one result: a thread that left one behind is a bug.
    TESSEL_ICHECK(batch.results[i].has_value());
    results.push_back(std::move(*batch.results[i]));
  }
  return results;
}

void RpcRunner::deviceLoop(Batch& batch) {
  const auto& o = options_;
  int sessionFailures = 0;
  for (;;) {
    // 1. A device, unless nothing is left to measure.
    GrantedLease lease;
    auto waitStart = Clock::now();
    for (;;) {
      RequestCanceller canceller;
      {
        std::lock_guard lock(batch.mutex);
        if (batch.queue.empty()) return;
        batch.waiting.insert(&canceller);
      }
      auto left = millis(o.deviceWaitSeconds) - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - waitStart);
      DeviceRequestOutcome outcome;
      std::string refusal;
      if (left.count() > 0) {
        try {
          outcome = batch.tracker.requestDevice(o.key, o.priority, left, millis(o.leaseSeconds), &canceller);
        } catch (const Error& e) {
          refusal = e.what();
        }
      } else {
        outcome.status = DeviceRequestOutcome::Status::TimedOut;
        outcome.message = fmt::format("no device of key '{}' became free within {:.1f} s", o.key, o.deviceWaitSeconds);
      }
      std::unique_lock lock(batch.mutex);
      batch.waiting.erase(&canceller);
      if (!refusal.empty()) {
        // The tracker refuses us (a wrong token): nothing queued can be measured.
        batch.failQueued(tune::MeasureErrorNo::UnknownError, refusal);
        batch.cancelWaiters();
        return;
      }
      using Status = DeviceRequestOutcome::Status;
      if (outcome.status == Status::Granted) {
        if (batch.queue.empty()) {
          lock.unlock();
          batch.tracker.release(outcome.lease.leaseId);
          return;
        }
        lease = outcome.lease;
        ++batch.devicesHeld;
        break;
      }
      if (outcome.status == Status::Cancelled) continue;  // re-checks the queue
      bool outOfTime = secondsSince(waitStart) >= o.deviceWaitSeconds;
      if (outcome.status == Status::TimedOut || outOfTime) {
        // Others holding devices will drain the queue; alone, this thread gives up on it.
        if (batch.devicesHeld > 0) return;
        batch.failQueued(tune::MeasureErrorNo::RunTimeoutError,
                         fmt::format("no device of key '{}' from the tracker at {} within {:.1f} s: {}", o.key,
                                     o.tracker, o.deviceWaitSeconds, outcome.message));
        batch.cancelWaiters();
        return;
      }
      // Unreachable: the tracker may be restarting. Try again shortly.
      lock.unlock();
      std::this_thread::sleep_for(kTrackerRetry);
    }

    // 2. A session on it; then candidates until the queue is empty or the device is lost.
    // A device that failed is not given back: its lease keeps the tracker from handing it to
    // the next request until the tracker drops it (silent) or the lease runs out.
    auto releaseDevice = [&](bool giveBack) {
      if (giveBack) batch.tracker.release(lease.leaseId);
      std::lock_guard lock(batch.mutex);
      --batch.devicesHeld;
    };
    std::unique_ptr<DeviceSession> session;
    double peakGflops = 0;  ///< the device's own bound on what it can measure (0: unknown)
    try {
      session = std::make_unique<DeviceSession>(lease.address, o.security,
                                                fmt::format("{} batch {}", o.clientName, batch.id), lease.leaseId);
      peakGflops = session->hardwareInfo().peakGflops;
    } catch (const DeviceUnavailable& e) {
      releaseDevice(false);
      if (++sessionFailures >= kSessionFailuresPerThread) {
        // Devices the tracker hands out keep refusing sessions: leave the queue to threads
        // that hold a device, or, alone, give up on it.
        std::lock_guard lock(batch.mutex);
        if (batch.devicesHeld == 0) {
          batch.failQueued(tune::MeasureErrorNo::RuntimeDeviceError,
                           fmt::format("{} devices of key '{}' in a row could not take a session; the last: {}",
                                       sessionFailures, o.key, e.what()));
          batch.cancelWaiters();
        }
        return;
      }
      std::this_thread::sleep_for(kTrackerRetry);
      continue;
    } catch (const Error& e) {
      releaseDevice(true);
      std::lock_guard lock(batch.mutex);
      batch.failQueued(tune::MeasureErrorNo::UnknownError, e.what());
      batch.cancelWaiters();
      return;
    }
    std::set<std::string> referencesUploaded;
    auto lastRenewal = Clock::now();
    bool lost = false;
    while (!lost) {
      Batch::Item item;
      {
        std::lock_guard lock(batch.mutex);
        if (batch.queue.empty()) break;
        item = batch.queue.front();
        batch.queue.pop_front();
        if (batch.queue.empty()) batch.cancelWaiters();
      }
      if (Clock::now() - lastRenewal > millis(o.leaseSeconds / 2)) {
        batch.tracker.renew(lease.leaseId);
        lastRenewal = Clock::now();
      }
      const tune::MeasureInput& input = batch.inputs[item.index];
      const tune::BuildResult& build = batch.builds[item.index];
      auto start = Clock::now();
      std::optional<tune::MeasureResult> result;
      try {
        RemoteKernel kernel;
        kernel.library = fmt::format("candidate_{}_{}.so", batch.id, item.index);
        kernel.kernel = build.kernelName;
        kernel.numInputs = build.numInputs;
        kernel.taskName = input.task->name;
        kernel.cold = input.task->coldCache;
        kernel.stopAboveSeconds = input.stopAboveSeconds;
        if (o.measure.checkCorrectness) {
          const tune::BuildResult& ref = references_.at(input.task->key());
          kernel.referenceLibrary = std::filesystem::path(ref.libraryPath).filename().string();
          kernel.referenceKernel = ref.kernelName;
          if (referencesUploaded.insert(kernel.referenceLibrary).second)
            session->uploadFile(kernel.referenceLibrary, ref.libraryPath);
        }
        if (build.gpuDevice.empty()) {
          session->uploadFile(kernel.library, build.libraryPath);
        } else {
          // A GPU module directory goes up as its manifest and its code.
          bool cuda = build.gpuDevice == "cuda";
          kernel.library = fmt::format("candidate_{}_{}.manifest.json", batch.id, item.index);
          kernel.gpuCode = fmt::format("candidate_{}_{}.{}", batch.id, item.index, cuda ? "cubin" : "cl");
          kernel.gpuDevice = build.gpuDevice;
          session->uploadFile(kernel.library, build.libraryPath + "/" + kGpuManifestFile);
          session->uploadFile(kernel.gpuCode, build.libraryPath + "/" + (cuda ? kCudaCodeFile : kOpenclCodeFile));
        }
        tune::MeasureOptions measure = o.measure;
        measure.tolerance = o.measure.toleranceFor(input.task->target);
        result = session->measure(kernel, measure);
        tune::refuseImplausibleCosts(*result, *input.task, peakGflops, "the device server");
        if (!result->ok())
          result->errorMessage = fmt::format("on {}: {}", lease.address, result->errorMessage);
      } catch (const DeviceUnavailable& e) {
        lost = true;
        std::lock_guard lock(batch.mutex);
        {
          std::lock_guard stats(statsMutex_);
          ++devicesLost_;
        }
        item.lost.push_back(e.what());
        if (++item.attempts >= o.maxAttempts) {
          batch.finish(item.index,
                       tune::errorResult(tune::MeasureErrorNo::RuntimeDeviceError,
                                         fmt::format("lost {} device(s) while measuring task '{}': {}", item.lost.size(),
                                                     input.task->name, fmt::join(item.lost, "; "))),
                       secondsSince(start));
        } else {
          batch.queue.push_front(item);  // another device measures it next
        }
        continue;
      } catch (const Error& e) {
        // Refused for this candidate only (e.g. a library over the server's upload limit).
        result = tune::errorResult(tune::MeasureErrorNo::UnknownError, e.what());
      }
      std::lock_guard lock(batch.mutex);
      batch.finish(item.index, std::move(*result), secondsSince(start));
      std::lock_guard stats(statsMutex_);
      ++measuredPerDevice_[lease.address];
    }
    if (!lost) session->close();
    session.reset();
    releaseDevice(!lost);
  }
}

}  // namespace tessel::rpc
