/// A client's session with one device server: open it, upload files into it, measure kernels
/// of uploaded libraries, ask for the hardware parameters, close it. What the runner needs to
/// tell apart is whether a failure is the device's (it cannot be reached, went away mid-call,
/// is busy with another client): DeviceUnavailable, so the candidate goes to another device;
/// or the request's (refused: wrong token, file too large, bad name): a plain Error.
#pragma once
#include <chrono>
#include <memory>
#include <string>

#include "rpc/HardwareInfo.h"
#include "rpc/Security.h"
#include "runtime/TimeEvaluator.h"
#include "support/Error.h"
#include "tune/LocalRunner.h"
#include "tune/Measure.h"

namespace tessel::rpc {

/// The device cannot serve the call: unreachable, died mid-call, or busy with another session.
class DeviceUnavailable : public Error {
 public:
  using Error::Error;
};

/// What to measure: a kernel of an uploaded library, optionally checked against a reference.
struct RemoteKernel {
  std::string library;  ///< an uploaded file's name
  std::string kernel;
  int numInputs = 0;
  std::string taskName;          ///< for messages
  bool cold = false;             ///< measure with cold caches (MeasureTask::coldCache)
  std::string referenceLibrary;  ///< uploaded file; empty: no correctness check
  std::string referenceKernel;
  double stopAboveSeconds = 0;   ///< MeasureInput::stopAboveSeconds
  /// A GPU candidate: the kind it was built for ("cuda", "opencl") and its uploaded code file
  /// (`library` is then its manifest); empty for a CPU kernel.
  std::string gpuDevice, gpuCode;
};

class DeviceSession {
 public:
  /// Connects to host:port and opens a session. Throws DeviceUnavailable when the server cannot
  /// be reached or is busy, Error when it refuses (wrong token).
  DeviceSession(const std::string& address, const RpcSecurity& security, const std::string& clientName,
                uint64_t leaseId = 0);
  ~DeviceSession();  ///< closes the session, best effort
  DeviceSession(const DeviceSession&) = delete;
  DeviceSession& operator=(const DeviceSession&) = delete;

  const std::string& address() const { return address_; }
  int64_t maxUploadBytes() const { return maxUploadBytes_; }

  /// Uploads `data` as `name` (a plain file name). Throws Error when the server refuses it
  /// (too large, a path), DeviceUnavailable when the device is lost.
  /// Uploads `data` as file `name` in chunks of at most `chunkBytes` (gRPC messages stay small
  /// however large the file: a network's params); returns the size the server holds. Error
  /// naming the file when it is over the server's limit, without sending it.
  int64_t upload(const std::string& name, const std::string& data, size_t chunkBytes = kUploadChunkBytes);
  static constexpr size_t kUploadChunkBytes = size_t(8) << 20;
  void uploadFile(const std::string& name, const std::string& path);

  /// Measures with the timing options of `options` (number, repeat, min_repeat_ms, timeout,
  /// cooldown, cache flush, tolerance, seed). A bad candidate comes back as a result with its
  /// error; a lost device throws DeviceUnavailable. The result's runSeconds is the device's.
  tune::MeasureResult measure(const RemoteKernel& kernel, const tune::MeasureOptions& options);

  HardwareInfo hardwareInfo();

  /// Uploads a compiled module directory (graph.json, kernels.so or a GPU module's manifest.json
  /// and code, params.bin) and times its
  /// run() on the device. Throws Error with the device's message when it fails there.
  runtime::TimingResult benchmarkModule(const std::string& directory, const runtime::TimeEvaluatorOptions& timing,
                                        double timeoutSeconds);
  /// Closes now (the destructor then does nothing).
  void close();

 private:
  struct Impl;
  std::string address_;
  std::unique_ptr<Impl> impl_;
  uint64_t sessionId_ = 0;
  int64_t maxUploadBytes_ = 0;
};

}  // namespace tessel::rpc
