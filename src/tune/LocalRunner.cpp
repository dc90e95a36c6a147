#include "tune/LocalRunner.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/Clock.h"
#include "support/Error.h"
#include "support/GpuModuleFormat.h"
#include "support/JsonParse.h"
#include "tune/PlausibleCost.h"

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
  if (const char* env = std::getenv("TESSEL_MEASURE_WORKER")) {
    if (isExecutable(env)) return env;
    tried.push_back(fmt::format("$TESSEL_MEASURE_WORKER={}", env));
  }
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::string beside = (self.parent_path() / kWorkerName).string();
    if (isExecutable(beside)) return beside;
    tried.push_back(beside);
  }
  std::string built = TESSEL_MEASURE_WORKER_PATH;
  if (isExecutable(built)) return built;
  if (!built.empty()) tried.push_back(built);
  fail("cannot find the measurement worker '{}' (tried {}); set TESSEL_MEASURE_WORKER to its path", kWorkerName,
       fmt::join(tried, ", "));
}

LocalRunner::LocalRunner(LocalRunnerOptions options) : options_(std::move(options)), dir_("tessel-run") {
  options_.validate("LocalRunner");
  if (options_.workerPath.empty()) options_.workerPath = findMeasureWorker();
  TESSEL_CHECK(isExecutable(options_.workerPath), "LocalRunner: the measurement worker '{}' is not an executable file",
               options_.workerPath);
}

LocalRunner::~LocalRunner() = default;

std::string LocalRunner::ensureWorker() {
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

std::optional<double> LocalRunner::probeSeconds() {
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

std::vector<int> LocalRunner::processIds() const {
  if (worker_ && worker_->running()) return {int(worker_->pid())};
  return {};
}

bool LocalRunner::needsReference(const MeasureTask& task) const {
  return options_.checkCorrectness && !references_.count(task.key());
}

void LocalRunner::setReference(const MeasureTask& task, const BuildResult& reference) {
  Reference ref{reference};
  if (reference.ok()) {
    std::string copy = fmt::format("{}/reference_{}.so", dir_.path(), references_.size());
    std::error_code ec;
    std::filesystem::copy_file(reference.libraryPath, copy, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) {
      ref.build.errorNo = MeasureErrorNo::UnknownError;
      ref.build.errorMessage = fmt::format("cannot copy the reference library '{}': {}", reference.libraryPath, ec.message());
    } else {
      ref.build.libraryPath = copy;
    }
  }
  references_[task.key()] = ref;
}

std::vector<MeasureResult> LocalRunner::run(const std::vector<MeasureInput>& inputs, const std::vector<BuildResult>& builds) {
  TESSEL_CHECK(inputs.size() == builds.size(), "LocalRunner::run: {} inputs but {} build results", inputs.size(),
               builds.size());
  std::vector<MeasureResult> results;
  results.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) results.push_back(runOne(inputs[i], builds[i]));
  return results;
}

MeasureResult LocalRunner::runOne(const MeasureInput& input, const BuildResult& build,
                                  const std::function<bool()>& cancelled) {
  auto finish = [&](MeasureResult result, Clock::time_point start) {
    result.buildSeconds = build.buildSeconds;
    result.runSeconds = secondsSince(start);
    result.allCost = result.buildSeconds + result.runSeconds;
    result.timestamp = unixTimeSeconds();
    return result;
  };
  auto start = Clock::now();
  if (!build.ok()) return finish(errorResult(build.errorNo, build.errorMessage), start);
  TESSEL_CHECK(input.task != nullptr, "LocalRunner: a candidate has no task");
  const MeasureTask& task = *input.task;

  nlohmann::json request = {{"library", build.libraryPath},
                            {"kernel", build.kernelName},
                            {"num_inputs", build.numInputs},
                            {"seed", options_.seed},
                            {"number", options_.number},
                            {"repeat", options_.repeat},
                            {"min_repeat_ms", options_.minRepeatMs},
                            {"flush_cache", options_.enableCpuCacheFlush},
                            {"cold", task.coldCache},
                            {"stop_above_s", input.stopAboveSeconds},
                            {"tolerance", options_.toleranceFor(task.target)}};
  if (!build.gpuDevice.empty()) {
    // A GPU module: its manifest and code, on this machine's device of its kind.
    bool cuda = build.gpuDevice == "cuda";
    request["library"] = build.libraryPath + "/" + kGpuManifestFile;
    request["code"] = build.libraryPath + "/" + (cuda ? kCudaCodeFile : kOpenclCodeFile);
    request["device"] = fmt::format("{}:{}", build.gpuDevice, options_.gpuDeviceId);
  }
  if (options_.checkCorrectness) {
    auto it = references_.find(task.key());
    if (it == references_.end())
      return finish(errorResult(MeasureErrorNo::UnknownError,
                                fmt::format("check_correctness: no reference registered for task '{}' ({})", task.name,
                                            task.key())),
                    start);
    const BuildResult& ref = it->second.build;
    if (!ref.ok())
      return finish(errorResult(MeasureErrorNo::UnknownError,
                                fmt::format("check_correctness: the reference (naive schedule) of task '{}' failed: {}",
                                            task.name, ref.errorMessage)),
                    start);
    request["reference"] = {{"library", ref.libraryPath}, {"kernel", ref.kernelName}};
  }

  // Cool down between measurements, counting the time spent since the last one.
  if (measuredBefore_ && options_.cooldownIntervalSeconds > 0) {
    auto until = lastMeasurementEnd_ + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options_.cooldownIntervalSeconds));
    while (Clock::now() < until) {
      if (cancelled && cancelled())
        return finish(errorResult(MeasureErrorNo::UnknownError, "cancelled during the cooldown"), start);
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
    if (!startError.empty()) return finish(errorResult(MeasureErrorNo::UnknownError, startError), start);
    sent = worker_->send(line);
    if (!sent) worker_.reset();
  }
  if (!sent)
    return finish(errorResult(MeasureErrorNo::UnknownError,
                              fmt::format("the measurement worker '{}' quits before taking requests", options_.workerPath)),
                  start);
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
                              fmt::format("run of task '{}' cancelled after {:.1f} s: the worker was killed", task.name,
                                          secondsSince(start))),
                  start);
  }
  if (reply.status == Status::TimedOut) {
    worker_->kill();
    worker_.reset();
    return finish(errorResult(MeasureErrorNo::RunTimeoutError,
                              fmt::format("run of task '{}' timed out after {:.1f} s{} ({}): the worker was killed and "
                                          "will be replaced",
                                          task.name, std::chrono::duration<double>(limit).count(),
                                          limit < asked ? fmt::format(" (capped from {:.1f} s)",
                                                                      std::chrono::duration<double>(asked).count())
                                                        : "",
                                          build.libraryPath)),
                  start);
  }
  if (reply.status == Status::Died) {
    std::string err = worker_->stderrTail();
    worker_.reset();
    return finish(errorResult(MeasureErrorNo::RuntimeDeviceError,
                              fmt::format("the measurement worker was {} while running task '{}' ({}){}",
                                          reply.describe(0), task.name, build.libraryPath,
                                          err.empty() ? "" : "; its stderr: " + err)),
                  start);
  }
  auto parsed = tryParseJson(reply.line);
  if (!parsed || !parsed->is_object() || parsed->value("id", int64_t(-1)) != id) {
    worker_->kill();
    worker_.reset();
    return finish(errorResult(MeasureErrorNo::UnknownError,
                              fmt::format("the measurement worker broke the protocol: answered '{}' to request {}",
                                          reply.line.substr(0, 300), id)),
                  start);
  }
  const nlohmann::json& j = *parsed;
  result.errorNo = measureErrorFromNumber(j.value("error_no", int(MeasureErrorNo::UnknownError)));
  result.errorMessage = j.value("message", std::string());
  if (result.ok()) {
    result.costs = j.value("costs", std::vector<double>{});
    result.callsPerRepeat = j.value("number", 0);
    result.loadSeconds = j.value("load_seconds", 0.0);
    // The floor only: a device server's runner knows neither the task's FLOPs nor whom to
    // trust; the RPC runner checks the peak on the tuner's side.
    refuseImplausibleCosts(result, task, 0, fmt::format("the measurement worker '{}'", options_.workerPath));
  } else {
    result.errorMessage = fmt::format("task '{}' ({}): {}", task.name, build.libraryPath, result.errorMessage);
    // A kernel that computed garbage may have written it outside its outputs too: the next
    // candidate gets a fresh worker.
    if (result.errorNo == MeasureErrorNo::WrongAnswerError) worker_.reset();
  }
  return finish(result, start);
}

}  // namespace tessel::tune
