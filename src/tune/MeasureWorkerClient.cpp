#include "tune/MeasureWorkerClient.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/Clock.h"
#include "support/Error.h"
#include "support/GpuModuleFormat.h"
#include "support/HelperPrograms.h"
#include "support/JsonParse.h"

#ifndef TESSEL_MEASURE_WORKER_PATH
#define TESSEL_MEASURE_WORKER_PATH ""
#endif

namespace tessel::tune {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kWorkerStartTimeout{10000};
constexpr const char* kWorkerName = "tessel-measure-worker";

bool isExecutable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

}  // namespace

std::string findMeasureWorker() {
  std::vector<std::string> tried;
  if (auto found = findHelperProgram({kWorkerName, "TESSEL_MEASURE_WORKER", TESSEL_MEASURE_WORKER_PATH}, tried)) return *found;
  fail("cannot find the measurement worker '{}' (tried {}); set TESSEL_MEASURE_WORKER to its path", kWorkerName,
       fmt::join(tried, ", "));
}

MeasureWorkerClient::MeasureWorkerClient(LocalRunnerOptions options) : options_(std::move(options)), dir_("tessel-run") {
  options_.validate("LocalRunner");
  if (options_.workerPath.empty()) options_.workerPath = findMeasureWorker();
  TESSEL_CHECK(isExecutable(options_.workerPath), "LocalRunner: the measurement worker '{}' is not an executable file",
               options_.workerPath);
}

MeasureWorkerClient::~MeasureWorkerClient() = default;

std::string MeasureWorkerClient::ensureWorker() {
  if (worker_ && worker_->running()) return "";
  worker_.reset();
  std::string log = fmt::format("{}/worker_{}.stderr", dir_.path(), workersStarted_ + 1);
  try {
    std::vector<std::pair<std::string, std::string>> environment;
    if (options_.threads > 0) environment.emplace_back("TESSEL_NUM_THREADS", std::to_string(options_.threads));
    if (options_.passiveWait) environment.emplace_back("OMP_WAIT_POLICY", "PASSIVE");
    worker_ = std::make_unique<WorkerProcess>(std::vector<std::string>{options_.workerPath}, log, environment);
  } catch (const Error& e) {
    return e.what();
  }
  ++workersStarted_;
  auto ready = worker_->receive(kWorkerStartTimeout);
  if (ready.status == WorkerProcess::Reply::Status::Line) {
    auto j = tryParseJson(ready.line);
    if (j && j->is_object() && j->value("ready", false)) return "";
  }
  std::string why = ready.status == WorkerProcess::Reply::Status::Line
                        ? fmt::format("it answered '{}' instead of its ready line", ready.line)
                        : ready.describe(std::chrono::duration<double>(kWorkerStartTimeout).count());
  std::string err = worker_->stderrTail();
  worker_.reset();
  return fmt::format("the measurement worker '{}' did not start: {}{}", options_.workerPath, why,
                     err.empty() ? "" : "; its stderr: " + err);
}

std::optional<double> MeasureWorkerClient::probeSeconds() {
  if (!ensureWorker().empty()) return std::nullopt;
  int64_t id = nextRequestId_++;
  if (!worker_->send(nlohmann::json{{"probe", true}, {"id", id}}.dump())) {
    worker_.reset();
    return std::nullopt;
  }
  auto reply = worker_->receive(std::chrono::seconds(10));
  if (reply.status != WorkerProcess::Reply::Status::Line) {
    worker_.reset();
    return std::nullopt;
  }
  auto j = tryParseJson(reply.line);
  if (!j || !j->is_object() || j->value("id", int64_t(-1)) != id || !j->contains("probe_seconds")) return std::nullopt;
  return (*j)["probe_seconds"].get<double>();
}

std::vector<int> MeasureWorkerClient::processIds() const {
  if (worker_ && worker_->running()) return {int(worker_->pid())};
  return {};
}

MeasureResult MeasureWorkerClient::measure(const WorkerCandidate& candidate, const std::function<bool()>& cancelled) {
  auto start = Clock::now();
  auto finish = [&start](MeasureResult result) {
    result.runSeconds = secondsSince(start);
    return result;
  };
  nlohmann::json request = {{"library", candidate.library},
                            {"kernel", candidate.kernel},
                            {"num_inputs", candidate.numInputs},
                            {"seed", options_.seed},
                            {"number", options_.number},
                            {"repeat", options_.repeat},
                            {"min_repeat_ms", options_.minRepeatMs},
                            {"flush_cache", options_.enableCpuCacheFlush},
                            {"cold", candidate.coldCache},
                            {"stop_above_s", candidate.stopAboveSeconds},
                            {"tolerance", candidate.tolerance}};
  if (!candidate.gpuDevice.empty()) {
    // A GPU module: its manifest and code, on this machine's device of its kind.
    bool cuda = candidate.gpuDevice == "cuda";
    request["library"] = candidate.library + "/" + kGpuManifestFile;
    request["code"] = candidate.library + "/" + (cuda ? kCudaCodeFile : kOpenclCodeFile);
    request["device"] = fmt::format("{}:{}", candidate.gpuDevice, options_.gpuDeviceId);
  }
  if (options_.checkCorrectness)
    request["reference"] = {{"library", candidate.referenceLibrary}, {"kernel", candidate.referenceKernel}};

  // Cool down between measurements, counting the time spent since the last one.
  if (measuredBefore_ && options_.cooldownIntervalSeconds > 0) {
    auto until = lastMeasurementEnd_ + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options_.cooldownIntervalSeconds));
    while (Clock::now() < until) {
      if (cancelled && cancelled()) return finish(errorResult(MeasureErrorNo::UnknownError, "cancelled during the cooldown"));
      std::this_thread::sleep_until(std::min(until, Clock::now() + WorkerProcess::kCancelPoll));
    }
  }
  start = Clock::now();

  int64_t id = nextRequestId_++;
  request["id"] = id;
  std::string line = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // A worker found dead before the request is not this candidate's fault: start another.
  bool sent = false;
  for (int attempt = 0; attempt < 2 && !sent; ++attempt) {
    std::string startError = ensureWorker();
    if (!startError.empty()) return finish(errorResult(MeasureErrorNo::UnknownError, startError));
    sent = worker_->send(line);
    if (!sent) worker_.reset();
  }
  if (!sent)
    return finish(errorResult(MeasureErrorNo::UnknownError,
                              fmt::format("the measurement worker '{}' quits before taking requests", options_.workerPath)));
  auto asked = options_.runDeadline(), limit = asked;
  if (options_.maxRunSeconds > 0) limit = std::min(limit, millis(options_.maxRunSeconds));
  MeasureResult result;
  auto reply = worker_->receive(limit, cancelled);
  measuredBefore_ = true;
  lastMeasurementEnd_ = Clock::now();
  using Status = WorkerProcess::Reply::Status;
  if (reply.status == Status::Cancelled) {
    worker_->kill();
    worker_.reset();
    return finish(errorResult(MeasureErrorNo::UnknownError,
                              fmt::format("run of task '{}' cancelled after {:.1f} s: the worker was killed", candidate.taskName,
                                          secondsSince(start))));
  }
  if (reply.status == Status::TimedOut) {
    worker_->kill();
    worker_.reset();
    return finish(errorResult(MeasureErrorNo::RunTimeoutError,
                              fmt::format("run of task '{}' timed out after {:.1f} s{} ({}): the worker was killed and "
                                          "will be replaced",
                                          candidate.taskName, std::chrono::duration<double>(limit).count(),
                                          limit < asked ? fmt::format(" (capped from {:.1f} s)",
                                                                      std::chrono::duration<double>(asked).count())
                                                        : "",
                                          candidate.library)));
  }
  if (reply.status == Status::Died) {
    std::string err = worker_->stderrTail();
    worker_.reset();
    return finish(errorResult(MeasureErrorNo::RuntimeDeviceError,
                              fmt::format("the measurement worker was {} while running task '{}' ({}){}", reply.describe(0),
                                          candidate.taskName, candidate.library, err.empty() ? "" : "; its stderr: " + err)));
  }
  auto parsed = tryParseJson(reply.line);
  if (!parsed || !parsed->is_object() || parsed->value("id", int64_t(-1)) != id) {
    worker_->kill();
    worker_.reset();
    return finish(errorResult(MeasureErrorNo::UnknownError,
                              fmt::format("the measurement worker broke the protocol: answered '{}' to request {}",
                                          reply.line.substr(0, 300), id)));
  }
  const nlohmann::json& j = *parsed;
  result.errorNo = measureErrorFromNumber(j.value("error_no", int(MeasureErrorNo::UnknownError)));
  result.errorMessage = j.value("message", std::string());
  if (result.ok()) {
    result.costs = j.value("costs", std::vector<double>{});
    result.callsPerRepeat = j.value("number", 0);
    result.loadSeconds = j.value("load_seconds", 0.0);
    // The floor only: the worker's side knows neither a task's FLOPs nor whom to trust; a
    // tuner checks the device's peak on its own side (PlausibleCost.h).
    if (std::string why = impossibleCosts(result); !why.empty())
      refuseTiming(result, fmt::format("the measurement worker '{}'", options_.workerPath), why);
  } else {
    result.errorMessage = fmt::format("task '{}' ({}): {}", candidate.taskName, candidate.library, result.errorMessage);
    // A kernel that computed garbage may have written it outside its outputs too: the next
    // candidate gets a fresh worker.
    if (result.errorNo == MeasureErrorNo::WrongAnswerError) worker_.reset();
  }
  return finish(result);
}

}  // namespace tessel::tune
