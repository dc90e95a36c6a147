#include "rpc/DeviceServer.h"

#include <fcntl.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <optional>
#include <random>
#include <map>
#include <set>
#include <thread>

#include <filesystem>

#include "graph/GpuTargetLimits.h"
#include "rpc/DeviceQueues.h"
#include "rpc/GpuParametersProto.h"
#include "rpc/GrpcSupport.h"
#include "rpc/Validate.h"
#include "support/Clock.h"
#include "support/Error.h"
#include "support/GpuModuleFormat.h"
#include "support/HelperPrograms.h"
#include "support/JsonParse.h"
#include "support/TempDir.h"
#include "tessel_rpc.grpc.pb.h"
#include "tune/MeasureWorkerClient.h"
#include "tune/WorkerProcess.h"

#ifndef TESSEL_DEVICE_WORKER_PATH
#define TESSEL_DEVICE_WORKER_PATH ""
#endif

namespace tessel::rpc {

namespace {

constexpr std::chrono::milliseconds kTrackerCallTimeout{3000};
constexpr std::chrono::milliseconds kRetryInterval{500};
constexpr double kMaxTimeoutSeconds = 24 * 3600;
constexpr int64_t kSessionUploadFactor = 4;  ///< a session holds at most this many maximal uploads

uint64_t randomSessionId() {
  std::random_device device;
  return ((uint64_t(device()) << 32 | device()) & ((uint64_t(1) << 62) - 1)) | 1;
}

bool sameRunnerOptions(const tune::LocalRunnerOptions& a, const tune::LocalRunnerOptions& b) {
  return static_cast<const tune::MeasureOptions&>(a) == static_cast<const tune::MeasureOptions&>(b);
}

bool finiteIn(double v, double low, double high) { return std::isfinite(v) && v >= low && v <= high; }

/// Whether host:port can be bound now. Probing first keeps gRPC from logging a screenful of
/// "Address already in use" for every taken port of the range.
bool portLooksFree(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found) return true;
  bool free = true;
  int fd = socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    free = bind(fd, found->ai_addr, found->ai_addrlen) == 0;
    close(fd);
  }
  freeaddrinfo(found);
  return free;
}

/// tessel-device-worker: $TESSEL_DEVICE_WORKER, beside the running program, or in the build
/// tree when running from it (support/HelperPrograms.h); else the plain measurement worker
/// (kernels only, no module benchmarks).
std::string findDeviceWorker() {
  std::vector<std::string> tried;
  if (auto found = findHelperProgram({"tessel-device-worker", "TESSEL_DEVICE_WORKER", TESSEL_DEVICE_WORKER_PATH}, tried)) return *found;
  return tune::findMeasureWorker();
}

/// The files of a whole module a client uploads: a CPU module's library, or a GPU module's
/// manifest and code for the server's device ("cuda:0", "opencl:1").
std::vector<std::string> moduleFiles(const std::string& gpuDevice) {
  if (gpuDevice.empty()) return {"graph.json", "kernels.so", "params.bin"};
  bool cuda = gpuDevice.rfind("cuda", 0) == 0;
  return {"graph.json", kGpuManifestFile, cuda ? kCudaCodeFile : kOpenclCodeFile, "params.bin"};
}

/// A GPU candidate's module directory, made of its two uploaded files (moved under the names
/// the runtime loads): `<manifest>.module/manifest.json` and `kernels.cubin` / `kernels.cl`.
std::string gpuModuleDirectory(const std::string& sessionDir, const std::string& manifest, const std::string& code,
                               const std::string& kind) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(sessionDir) / (manifest + ".module");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!ec) fs::copy_file(fs::path(sessionDir) / manifest, dir / kGpuManifestFile, fs::copy_options::overwrite_existing, ec);
  if (!ec)
    fs::copy_file(fs::path(sessionDir) / code, dir / (kind == "cuda" ? kCudaCodeFile : kOpenclCodeFile),
                  fs::copy_options::overwrite_existing, ec);
  TESSEL_CHECK(!ec, "cannot assemble the GPU module of '{}' and '{}': {}", manifest, code, ec.message());
  return dir.string();
}

}  // namespace

struct DeviceServer::Impl final : proto::DeviceServer::Service {
  DeviceServerOptions options;
  HardwareInfo hardware;
  std::unique_ptr<grpc::Server> server;
  int port = 0;

  // The session (one at a time).
  struct Session {
    uint64_t id = 0;
    std::string client;
    std::unique_ptr<TempDir> dir;
    std::map<std::string, int64_t> files;  ///< uploaded name -> bytes
    Clock::time_point opened, lastActivity;
    int callsInProgress = 0;
  };
  std::mutex mutex;  ///< guards session, stopping, the tracker link's state
  std::condition_variable wake;
  std::optional<Session> session;
  bool busyChanged = false;
  bool stopping = false;
  std::string fatal;

  int gpuDeviceId = 0;  ///< the index of hardware.gpuDevice

  // Measurement: one at a time, in a long-lived worker.
  std::mutex measureMutex;
  std::unique_ptr<tune::MeasureWorkerClient> measurer;

  std::thread housekeeping;

  void log(const std::string& line) {
    if (options.log) options.log(line);
  }

  // ---- sessions ----

  /// Finds the open session `id` and counts a call in progress on it (release with endCall).
  grpc::Status beginCall(uint64_t id, std::string& dir, const std::vector<std::string>& needed = {}) {
    std::lock_guard lock(mutex);
    if (!session || session->id != id)
      return {grpc::FAILED_PRECONDITION,
              fmt::format("session {} is not open on this device server (never opened, closed, or closed after "
                          "being idle for {:.0f} s)", id, options.sessionTimeoutSeconds)};
    for (const std::string& name : needed)
      if (!name.empty() && !session->files.count(name))
        return {grpc::NOT_FOUND, fmt::format("'{}' was not uploaded in this session", name)};
    session->lastActivity = Clock::now();
    ++session->callsInProgress;
    dir = session->dir->path();
    return grpc::Status::OK;
  }
  void endCall(uint64_t id) {
    std::lock_guard lock(mutex);
    if (session && session->id == id) {
      session->lastActivity = Clock::now();
      --session->callsInProgress;
    }
  }
  void closeSessionLocked(const char* why) {
    if (!session) return;
    log(fmt::format("session {} of {} closed ({})", session->id, session->client, why));
    session.reset();
    busyChanged = true;
    wake.notify_all();
  }

  grpc::Status OpenSession(grpc::ServerContext* context, const proto::OpenSessionRequest* request,
                           proto::SessionReply* reply) override {
    if (auto s = checkToken(*context, options.security.token, "device server"); !s.ok()) return s;
    std::lock_guard lock(mutex);
    if (session) {
      double age = std::chrono::duration<double>(Clock::now() - session->opened).count();
      return {grpc::RESOURCE_EXHAUSTED,
              fmt::format("the device server is busy: a session of {} has been open for {:.1f} s (one session at a "
                          "time)", session->client, age)};
    }
    Session s;
    s.id = randomSessionId();
    s.client = request->client().empty() ? context->peer() : request->client().substr(0, 200);
    try {
      s.dir = std::make_unique<TempDir>("tessel-server-session");
    } catch (const Error& e) {
      return {grpc::INTERNAL, fmt::format("cannot create the session's directory: {}", e.what())};
    }
    s.opened = s.lastActivity = Clock::now();
    reply->set_session_id(s.id);
    reply->set_max_upload_bytes(options.maxUploadBytes);
    session = std::move(s);
    busyChanged = true;
    wake.notify_all();
    return grpc::Status::OK;
  }

  grpc::Status CloseSession(grpc::ServerContext* context, const proto::SessionRef* request,
                            proto::SessionReply* reply) override {
    if (auto s = checkToken(*context, options.security.token, "device server"); !s.ok()) return s;
    std::lock_guard lock(mutex);
    if (!session || session->id != request->session_id())
      return {grpc::FAILED_PRECONDITION, fmt::format("session {} is not open", request->session_id())};
    reply->set_session_id(session->id);
    closeSessionLocked("closed by its client");
    return grpc::Status::OK;
  }

  grpc::Status Upload(grpc::ServerContext* context, const proto::UploadRequest* request,
                      proto::UploadReply* reply) override {
    if (auto s = checkToken(*context, options.security.token, "device server"); !s.ok()) return s;
    if (auto s = validFileName(request->name(), "name"); !s.ok()) return s;
    int64_t offset = request->offset(), chunk = int64_t(request->data().size());
    if (offset < 0) return {grpc::INVALID_ARGUMENT, fmt::format("upload '{}': a negative offset {}", request->name(), offset)};
    int64_t total = offset + chunk;
    if (total > options.maxUploadBytes)
      return {grpc::RESOURCE_EXHAUSTED,
              fmt::format("upload '{}' is {} bytes, over this server's limit of {} bytes (--max-upload-mb)",
                          request->name(), total, options.maxUploadBytes)};
    std::string dir;
    if (auto s = beginCall(request->session_id(), dir); !s.ok()) return s;
    {
      // A session may hold a few modules' worth, not fill the disk.
      std::lock_guard lock(mutex);
      int64_t held = 0;
      for (const auto& [name, bytes] : session->files)
        if (name != request->name()) held += bytes;
      int64_t limit = kSessionUploadFactor * options.maxUploadBytes;
      auto uploaded = session->files.find(request->name());
      if (offset > 0 && (uploaded == session->files.end() || uploaded->second != offset)) {
        --session->callsInProgress;
        return {grpc::FAILED_PRECONDITION,
                fmt::format("upload '{}': a chunk at offset {}, but {} bytes of it were uploaded", request->name(), offset,
                            uploaded == session->files.end() ? 0 : uploaded->second)};
      }
      if (held + total > limit) {
        --session->callsInProgress;
        return {grpc::RESOURCE_EXHAUSTED,
                fmt::format("upload '{}' would bring the session's files to {} bytes, over its limit of {} bytes "
                            "({} x --max-upload-mb)", request->name(), held + total, limit, kSessionUploadFactor)};
      }
    }
    std::string path = dir + "/" + request->name();
    // O_NOFOLLOW: a name can never be made to write through a link out of the directory. The
    // first chunk replaces the file; the others append to it.
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (offset == 0 ? O_TRUNC : O_APPEND);
    int fd = open(path.c_str(), flags, 0600);
    grpc::Status status = grpc::Status::OK;
    if (fd < 0) {
      status = {grpc::INTERNAL, fmt::format("cannot create '{}' in the session's directory: {}", request->name(),
                                            std::strerror(errno))};
    } else {
      const std::string& data = request->data();
      size_t done = 0;
      while (done < data.size()) {
        ssize_t n = write(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += size_t(n);
      }
      close(fd);
      if (done != data.size())
        status = {grpc::INTERNAL, fmt::format("cannot write '{}' ({} bytes) in the session's directory: {}",
                                              request->name(), data.size(), std::strerror(errno))};
    }
    {
      std::lock_guard lock(mutex);
      if (session && session->id == request->session_id()) {
        // A failed chunk leaves the file unusable: a next chunk must start it again.
        if (status.ok()) session->files[request->name()] = total;
        else session->files.erase(request->name());
      }
    }
    if (status.ok()) reply->set_bytes(total);
    endCall(request->session_id());
    return status;
  }

  grpc::Status Measure(grpc::ServerContext* context, const proto::MeasureRequest* request,
                       proto::MeasureReply* reply) override {
    if (auto s = checkToken(*context, options.security.token, "device server"); !s.ok()) return s;
    if (auto s = validFileName(request->library(), "library"); !s.ok()) return s;
    if (request->kernel().empty()) return invalid("kernel", "is empty");
    if (request->num_inputs() < 0) return invalid("num_inputs", "is negative");
    tune::LocalRunnerOptions o;
    o.number = request->number();
    o.repeat = request->repeat();
    o.minRepeatMs = request->min_repeat_ms();
    o.timeoutSeconds = request->timeout_s();
    o.cooldownIntervalSeconds = request->cooldown_s();
    o.enableCpuCacheFlush = request->flush_cache();
    o.tolerance = request->tolerance();
    o.seed = request->seed();
    o.workerPath = options.workerPath;
    o.gpuDeviceId = gpuDeviceId;
    o.maxRunSeconds = options.maxRunSeconds;
    try {
      o.validate("measure request");
    } catch (const Error& e) {
      return {grpc::INVALID_ARGUMENT, e.what()};
    }
    // The cooldown holds the device too.
    o.cooldownIntervalSeconds = std::min(o.cooldownIntervalSeconds, options.maxRunSeconds);
    // A GPU candidate: its code beside its manifest, for this server's kind of device.
    bool gpu = !request->gpu_device().empty() || !request->gpu_code().empty();
    if (gpu) {
      if (hardware.gpuDevice.empty())
        return invalid("gpu_device", fmt::format("is '{}', but this server measures CPU kernels (start it with --device cuda|opencl)",
                                                 request->gpu_device()));
      std::string kind = hardware.gpuDevice.substr(0, hardware.gpuDevice.find(':'));
      if (request->gpu_device() != kind)
        return invalid("gpu_device", fmt::format("is '{}', but this server measures on {}", request->gpu_device(), hardware.gpuDevice));
      if (auto s = validFileName(request->gpu_code(), "gpu_code"); !s.ok()) return s;
    } else if (!hardware.gpuDevice.empty()) {
      return invalid("gpu_device", fmt::format("is empty: this server measures GPU candidates on {}", hardware.gpuDevice));
    }
    bool checking = !request->reference_library().empty();
    if (checking) {
      if (auto s = validFileName(request->reference_library(), "reference_library"); !s.ok()) return s;
      if (request->reference_kernel().empty()) return invalid("reference_kernel", "is empty");
    }
    std::string dir;
    if (auto s = beginCall(request->session_id(), dir, {request->library(), request->reference_library(), request->gpu_code()}); !s.ok())
      return s;

    o.checkCorrectness = checking;
    grpc::Status status = grpc::Status::OK;
    auto clientGone = [context] { return context->IsCancelled(); };
    {
      std::lock_guard measuring(measureMutex);
      try {
        if (clientGone()) throw Error("the client went away before its measurement started");
        if (!measurer || !sameRunnerOptions(measurer->options(), o)) measurer = std::make_unique<tune::MeasureWorkerClient>(o);
        tune::WorkerCandidate candidate;
        candidate.taskName = request->task_name().empty() ? request->kernel() : request->task_name();
        candidate.coldCache = request->cold();
        candidate.library = dir + "/" + request->library();
        candidate.kernel = request->kernel();
        candidate.numInputs = request->num_inputs();
        candidate.tolerance = o.tolerance;
        if (gpu) {
          candidate.library = gpuModuleDirectory(dir, request->library(), request->gpu_code(), request->gpu_device());
          candidate.gpuDevice = request->gpu_device();
        }
        if (checking) {
          // The reference stays in the session's directory while the session lasts.
          candidate.referenceLibrary = dir + "/" + request->reference_library();
          candidate.referenceKernel = request->reference_kernel();
        }
        if (!std::isfinite(request->stop_above_s()) || request->stop_above_s() < 0)
          throw Error(fmt::format("measure request: stop_above_s must be a non-negative number of seconds, got {}",
                                  request->stop_above_s()));
        candidate.stopAboveSeconds = request->stop_above_s();
        tune::MeasureResult result = measurer->measure(candidate, clientGone);
        if (result.errorNo == tune::MeasureErrorNo::RunTimeoutError && o.runDeadline() > millis(options.maxRunSeconds))
          result.errorMessage += maxRunNote();
        reply->set_error_no(int(result.errorNo));
        reply->set_message(result.errorMessage);
        for (double c : result.costs) reply->add_costs(c);
        reply->set_number(result.callsPerRepeat);
        reply->set_run_seconds(result.runSeconds);
      } catch (const Error& e) {
        status = {grpc::INVALID_ARGUMENT, e.what()};
      }
    }
    endCall(request->session_id());
    if (clientGone()) return abandoned(request->session_id());
    return status;
  }

  /// "; this device server runs ..." for a run that hit --max-run-timeout.
  std::string maxRunNote() const {
    return fmt::format("; this device server runs one measurement for at most {:g} s (--max-run-timeout)",
                       options.maxRunSeconds);
  }

  /// A call whose client went away (its deadline passed, its stream closed) while it measured:
  /// the measurement was killed; the session goes too, so the next client is served at once.
  grpc::Status abandoned(uint64_t id) {
    std::lock_guard lock(mutex);
    if (session && session->id == id) closeSessionLocked("its client went away during a measurement");
    return {grpc::CANCELLED, "the client went away; its measurement was killed"};
  }

  grpc::Status BenchmarkModule(grpc::ServerContext* context, const proto::ModuleRequest* request,
                               proto::MeasureReply* reply) override {
    if (auto s = checkToken(*context, options.security.token, "device server"); !s.ok()) return s;
    tune::MeasureOptions timing;
    timing.number = request->number();
    timing.repeat = request->repeat();
    timing.minRepeatMs = request->min_repeat_ms();
    timing.timeoutSeconds = request->timeout_s();
    try {
      timing.validate("benchmark request");
    } catch (const Error& e) {
      return {grpc::INVALID_ARGUMENT, e.what()};
    }
    std::string dir;
    if (auto s = beginCall(request->session_id(), dir, moduleFiles(hardware.gpuDevice)); !s.ok()) return s;
    auto clientGone = [context] { return context->IsCancelled(); };
    {
      std::lock_guard measuring(measureMutex);
      auto result = benchmarkInWorker(dir, *request, clientGone);
      reply->set_error_no(int(result.errorNo));
      reply->set_message(result.errorMessage);
      for (double c : result.costs) reply->add_costs(c);
      reply->set_number(result.callsPerRepeat);
      reply->set_run_seconds(result.runSeconds);
    }
    endCall(request->session_id());
    if (clientGone()) return abandoned(request->session_id());
    return grpc::Status::OK;
  }

  /// Times the module in `dir` in a fresh worker process, so that a module that crashes or
  /// hangs takes only that process down.
  tune::MeasureResult benchmarkInWorker(const std::string& dir, const proto::ModuleRequest& request,
                                        const std::function<bool()>& clientGone) {
    using Status = tune::WorkerProcess::Reply::Status;
    auto start = Clock::now();
    auto finish = [&](tune::MeasureResult r) {
      r.runSeconds = std::chrono::duration<double>(Clock::now() - start).count();
      return r;
    };
    std::unique_ptr<tune::WorkerProcess> worker;
    try {
      worker = std::make_unique<tune::WorkerProcess>(std::vector<std::string>{options.workerPath},
                                                     dir + "/module_worker.stderr");
    } catch (const Error& e) {
      return finish(tune::errorResult(tune::MeasureErrorNo::UnknownError, e.what()));
    }
    auto ready = worker->receive(std::chrono::seconds(60), clientGone);
    nlohmann::json hello = ready.status == Status::Line ? tryParseJson(ready.line).value_or(nlohmann::json()) : nlohmann::json();
    if (!hello.is_object() || !hello.value("modules", false))
      return finish(tune::errorResult(
          tune::MeasureErrorNo::UnknownError,
          fmt::format("the worker '{}' cannot time modules (a device server needs tessel-device-worker){}",
                      options.workerPath, ready.status == Status::Line ? "" : ": " + ready.describe(60))));
    nlohmann::json line = {{"id", 1},
                           {"module", dir},
                           {"device", hardware.gpuDevice.empty() ? "cpu" : hardware.gpuDevice},
                           {"number", request.number()},
                           {"repeat", request.repeat()},
                           {"min_repeat_ms", request.min_repeat_ms()}};
    if (!worker->send(line.dump()))
      return finish(tune::errorResult(tune::MeasureErrorNo::RuntimeDeviceError, "the device worker quit before the request"));
    double timeout = std::min(request.timeout_s(), options.maxRunSeconds);
    auto answer = worker->receive(std::chrono::milliseconds(int64_t(std::ceil(timeout * 1000))), clientGone);
    if (answer.status == Status::Cancelled) {
      worker->kill();
      return finish(tune::errorResult(tune::MeasureErrorNo::UnknownError, "the client went away; the module's worker was killed"));
    }
    if (answer.status == Status::TimedOut) {
      worker->kill();
      return finish(tune::errorResult(tune::MeasureErrorNo::RunTimeoutError,
                                      fmt::format("the module ran past the timeout of {:.1f} s; its worker was killed{}",
                                                  timeout, timeout < request.timeout_s() ? maxRunNote() : "")));
    }
    if (answer.status == Status::Died) {
      std::string err = worker->stderrTail();
      return finish(tune::errorResult(tune::MeasureErrorNo::RuntimeDeviceError,
                                      fmt::format("the device worker was {} while running the module{}",
                                                  answer.describe(0), err.empty() ? "" : "; its stderr: " + err)));
    }
    nlohmann::json j = tryParseJson(answer.line).value_or(nlohmann::json());
    if (!j.is_object())
      return finish(tune::errorResult(tune::MeasureErrorNo::UnknownError,
                                      fmt::format("the device worker answered '{}'", answer.line.substr(0, 300))));
    tune::MeasureResult result;
    result.errorNo = tune::measureErrorFromNumber(j.value("error_no", int(tune::MeasureErrorNo::UnknownError)));
    result.errorMessage = j.value("message", std::string());
    result.costs = j.value("costs", std::vector<double>{});
    result.callsPerRepeat = j.value("number", 0);
    return finish(result);
  }

  grpc::Status GetHardwareInfo(grpc::ServerContext* context, const proto::SessionRef*,
                               proto::HardwareInfo* reply) override {
    if (auto s = checkToken(*context, options.security.token, "device server"); !s.ok()) return s;
    reply->set_arch(hardware.arch);
    reply->set_cores(hardware.cores);
    reply->set_vector_bits(hardware.vectorBits);
    reply->set_l1_cache_bytes(hardware.l1CacheBytes);
    reply->set_l2_cache_bytes(hardware.l2CacheBytes);
    reply->set_l3_cache_bytes(hardware.l3CacheBytes);
    reply->set_worker(hardware.worker);
    reply->set_peak_gflops(hardware.peakGflops);
    if (!hardware.gpuDevice.empty()) writeGpuParameters(hardware.gpuDevice, hardware.gpuLimits, reply->mutable_gpu());
    return grpc::Status::OK;
  }

  // ---- the tracker link and idle sessions ----

  void housekeepingLoop() {
    std::unique_ptr<proto::Tracker::Stub> tracker;
    if (!options.tracker.empty()) tracker = proto::Tracker::NewStub(makeChannel(options.tracker, options.security));
    std::string address = options.customAddress.empty() ? fmt::format(":{}", port) : options.customAddress;
    uint64_t deviceId = 0;
    bool everRegistered = false, reportedLoss = false;
    auto heartbeatEvery = std::chrono::milliseconds(1000);
    auto nextContact = Clock::now();
    std::unique_lock lock(mutex);
    while (!stopping) {
      // Close a session whose client has gone quiet.
      if (session && session->callsInProgress == 0 &&
          Clock::now() - session->lastActivity > std::chrono::duration<double>(options.sessionTimeoutSeconds))
        closeSessionLocked("idle for too long");
      if (tracker && (busyChanged || Clock::now() >= nextContact)) {
        bool busy = session.has_value();
        busyChanged = false;
        lock.unlock();
        grpc::ClientContext context;
        prepareCall(context, options.security, kTrackerCallTimeout);
        grpc::Status status;
        bool known = true;
        if (deviceId == 0) {
          proto::RegisterRequest request;
          request.set_key(options.key);
          request.set_address(address);
          request.set_busy(busy);
          request.set_name(options.name);
          proto::RegisterReply reply;
          status = tracker->Register(&context, request, &reply);
          if (status.ok()) {
            deviceId = reply.device_id();
            heartbeatEvery = std::chrono::milliseconds(std::max<int64_t>(20, reply.heartbeat_ms()));
            log(fmt::format("{} with the tracker at {} as key '{}'", everRegistered ? "registered again" : "registered",
                            options.tracker, options.key));
            everRegistered = true;
            reportedLoss = false;
          }
        } else {
          proto::HeartbeatRequest request;
          request.set_device_id(deviceId);
          request.set_busy(busy);
          proto::HeartbeatReply reply;
          status = tracker->Heartbeat(&context, request, &reply);
          known = !status.ok() || reply.known();
        }
        lock.lock();
        if (!status.ok()) {
          auto code = status.error_code();
          if (code == grpc::UNAUTHENTICATED || code == grpc::INVALID_ARGUMENT || code == grpc::PERMISSION_DENIED) {
            fatal = fmt::format("the tracker at {} refused the registration: {}", options.tracker, statusText(status));
            log(fatal);
            break;
          }
          if (!reportedLoss) {
            log(fmt::format("cannot reach the tracker at {} ({}); retrying", options.tracker, statusText(status)));
            reportedLoss = true;
          }
          // A heartbeat that fails leaves the registration to be confirmed by the next one;
          // a busy state change must still be reported.
          nextContact = Clock::now() + std::min<Clock::duration>(heartbeatEvery, kRetryInterval);
          busyChanged = busyChanged || deviceId == 0;
        } else if (!known) {
          log(fmt::format("the tracker at {} no longer knows this device (it restarted or dropped it); registering again",
                          options.tracker));
          deviceId = 0;
          nextContact = Clock::now();
          continue;
        } else {
          nextContact = Clock::now() + heartbeatEvery;
        }
      }
      wake.wait_for(lock, std::chrono::milliseconds(50));
    }
    bool fatalStop = !fatal.empty();
    lock.unlock();
    if (tracker && deviceId != 0 && !fatalStop) {
      grpc::ClientContext context;
      prepareCall(context, options.security, std::chrono::milliseconds(1000));
      proto::HeartbeatRequest request;
      request.set_device_id(deviceId);
      proto::HeartbeatReply reply;
      (void)tracker->Unregister(&context, request, &reply);
    }
    if (fatalStop) server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  }
};

DeviceServer::DeviceServer(DeviceServerOptions options) : impl_(std::make_unique<Impl>()) {
  auto& o = impl_->options;
  o = std::move(options);
  TESSEL_CHECK(o.tracker.empty() || !o.key.empty(), "device server: --key is required with --tracker");
  if (!o.key.empty()) {
    auto s = validKey(o.key, "key");
    TESSEL_CHECK(s.ok(), "device server: {}", s.error_message());
  }
  TESSEL_CHECK(o.maxUploadBytes > 0 && o.maxUploadBytes < (int64_t(1) << 31) - (2 << 20),
               "device server: the upload limit must be between 1 byte and 2 GiB, got {}", o.maxUploadBytes);
  TESSEL_CHECK(finiteIn(o.sessionTimeoutSeconds, 0.01, kMaxTimeoutSeconds),
               "device server: the session timeout must be a positive number of seconds, got {}", o.sessionTimeoutSeconds);
  TESSEL_CHECK(finiteIn(o.maxRunSeconds, 0.01, kMaxTimeoutSeconds),
               "device server: the longest run must be a positive number of seconds up to a day, got {}", o.maxRunSeconds);
  std::string refusal = listenRefusal(ListeningService::DeviceServer, o.host, o.security.token, o.insecure);
  TESSEL_CHECK(refusal.empty(), "{}", refusal);
  if (o.workerPath.empty()) o.workerPath = findDeviceWorker();
  TESSEL_CHECK(access(o.workerPath.c_str(), X_OK) == 0, "device server: the measurement worker '{}' is not executable",
               o.workerPath);
  impl_->hardware = queryHostHardware();
  if (!o.arch.empty() && o.arch != impl_->hardware.arch) impl_->hardware = emulatedHardware(o.arch);
  impl_->hardware.worker = o.workerPath;
  if (!o.gpuDevice.empty()) {
    runtime::Device device = runtime::Device::parse(o.gpuDevice);
    TESSEL_CHECK(device.kind == runtime::DeviceKind::CUDA || device.kind == runtime::DeviceKind::OpenCL,
                 "device server: --device {}: not a GPU (cpu, cuda[:N], opencl[:N])", o.gpuDevice);
    impl_->hardware.gpuDevice = device.str();
    impl_->hardware.peakGflops = 0;  // the candidates run on the GPU, whose peak is not known here
    impl_->hardware.gpuLimits = graph::gpuLimitsOfDevice(device);  // Error when the device is not here
    impl_->gpuDeviceId = device.id;
  }

  // Clients send files in chunks (DeviceSession::kUploadChunkBytes); a message of a whole file
  // up to 64 MiB is accepted too, as clients before chunking sent them.
  int maxReceive = int(std::min<int64_t>(o.maxUploadBytes, int64_t(64) << 20) + (1 << 20));
  int first = o.port, last = o.port == 0 ? 0 : std::max(o.port, o.portEnd);
  std::string lastError;
  for (int p = first; p <= last && !impl_->server; ++p) {
    if (p != 0 && p != last && !portLooksFree(o.host, p)) continue;
    try {
      impl_->server = startServer({impl_.get()}, o.host, p, o.security, maxReceive, &impl_->port, "device server");
    } catch (const Error& e) {
      lastError = e.what();
    }
  }
  TESSEL_CHECK(impl_->server, "{}{}", lastError,
               first == last ? "" : fmt::format(" (tried every port from {} to {})", first, last));
  impl_->log(fmt::format("bind to {}:{}", o.host, impl_->port));
  if (!o.tracker.empty() && o.customAddress.empty() && isLoopbackHost(o.host) &&
      !isLoopbackHost(o.tracker.substr(0, o.tracker.rfind(':'))))
    impl_->log(fmt::format("note: this server listens on {} only, so clients of the tracker at {} on other machines "
                           "cannot reach it; pass --host (with --token) to serve them", o.host, o.tracker));
  impl_->housekeeping = std::thread([impl = impl_.get()] { impl->housekeepingLoop(); });
}

DeviceServer::~DeviceServer() {
  shutdown();
  if (impl_->housekeeping.joinable()) impl_->housekeeping.join();
  impl_->server->Wait();
}

int DeviceServer::port() const { return impl_->port; }

void DeviceServer::wait() { impl_->server->Wait(); }

void DeviceServer::shutdown() {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopping) return;
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

std::string DeviceServer::fatalError() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->fatal;
}

}  // namespace tessel::rpc
