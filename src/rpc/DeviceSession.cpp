#include "rpc/DeviceSession.h"

#include <cmath>
#include <filesystem>

#include "rpc/GpuParametersProto.h"
#include "rpc/GrpcSupport.h"
#include "support/Files.h"
#include "support/GpuModuleFormat.h"
#include "support/TempDir.h"
#include "tessel_rpc.grpc.pb.h"

namespace tessel::rpc {

namespace {

constexpr std::chrono::milliseconds kShortSessionCall{10000};
constexpr std::chrono::milliseconds kUploadCall{120000};

/// How long a measurement may take on the server before the client gives up on the device:
/// the server's own run deadline plus the cooldown and a generous margin.
std::chrono::milliseconds measureDeadline(const tune::MeasureOptions& o) {
  return o.runDeadline() + std::chrono::milliseconds(int64_t(std::ceil((o.cooldownIntervalSeconds + 30) * 1000)));
}

}  // namespace

struct DeviceSession::Impl {
  RpcSecurity security;
  std::unique_ptr<proto::DeviceServer::Stub> stub;
};

DeviceSession::DeviceSession(const std::string& address, const RpcSecurity& security, const std::string& clientName,
                             uint64_t leaseId)
    : address_(address), impl_(std::make_unique<Impl>()) {
  impl_->security = security;
  impl_->stub = proto::DeviceServer::NewStub(makeChannel(address, security));
  grpc::ClientContext context;
  prepareCall(context, security, kShortSessionCall);
  proto::OpenSessionRequest request;
  request.set_client(clientName);
  request.set_lease_id(leaseId);
  proto::SessionReply reply;
  auto status = impl_->stub->OpenSession(&context, request, &reply);
  if (!status.ok()) {
    std::string message = fmt::format("cannot open a session on the device server at {}: {}", address, statusText(status));
    if (isConnectionFailure(status) || status.error_code() == grpc::RESOURCE_EXHAUSTED) throw DeviceUnavailable(message);
    throw Error(message);
  }
  sessionId_ = reply.session_id();
  maxUploadBytes_ = reply.max_upload_bytes();
}

DeviceSession::~DeviceSession() { close(); }

void DeviceSession::close() {
  if (sessionId_ == 0) return;
  grpc::ClientContext context;
  prepareCall(context, impl_->security, std::chrono::milliseconds(2000));
  proto::SessionRef request;
  request.set_session_id(sessionId_);
  proto::SessionReply reply;
  (void)impl_->stub->CloseSession(&context, request, &reply);
  sessionId_ = 0;
}

int64_t DeviceSession::upload(const std::string& name, const std::string& data, size_t chunkBytes) {
  TESSEL_CHECK(chunkBytes > 0, "upload of '{}': a chunk size of 0 bytes", name);
  auto failure = [&](const std::string& why) {
    return fmt::format("upload of '{}' ({} bytes) to the device server at {} failed: {}", name, data.size(), address_, why);
  };
  if (maxUploadBytes_ > 0 && int64_t(data.size()) > maxUploadBytes_)
    throw Error(failure(fmt::format("the file is over this server's limit of {} bytes (--max-upload-mb)", maxUploadBytes_)));
  size_t offset = 0;
  int64_t held = 0;
  do {
    size_t size = std::min(chunkBytes, data.size() - offset);
    grpc::ClientContext context;
    prepareCall(context, impl_->security, kUploadCall);
    proto::UploadRequest request;
    request.set_session_id(sessionId_);
    request.set_name(name);
    request.set_data(data.data() + offset, size);
    request.set_offset(int64_t(offset));
    proto::UploadReply reply;
    auto status = impl_->stub->Upload(&context, request, &reply);
    if (!status.ok()) {
      // gRPC's own size check answers RESOURCE_EXHAUSTED too: both are refusals of this file.
      if (isConnectionFailure(status)) throw DeviceUnavailable(failure(statusText(status)));
      throw Error(failure(statusText(status)));
    }
    offset += size;
    held = reply.bytes();
  } while (offset < data.size());
  return held;
}

void DeviceSession::uploadFile(const std::string& name, const std::string& path) { upload(name, readFile(path)); }

tune::MeasureResult DeviceSession::measure(const RemoteKernel& kernel, const tune::MeasureOptions& o) {
  grpc::ClientContext context;
  prepareCall(context, impl_->security, measureDeadline(o));
  proto::MeasureRequest request;
  request.set_session_id(sessionId_);
  request.set_library(kernel.library);
  request.set_kernel(kernel.kernel);
  request.set_num_inputs(kernel.numInputs);
  request.set_task_name(kernel.taskName);
  request.set_seed(o.seed);
  request.set_number(o.number);
  request.set_repeat(o.repeat);
  request.set_min_repeat_ms(o.minRepeatMs);
  request.set_timeout_s(o.timeoutSeconds);
  request.set_cooldown_s(o.cooldownIntervalSeconds);
  request.set_flush_cache(o.enableCpuCacheFlush);
  request.set_cold(kernel.cold);
  request.set_stop_above_s(kernel.stopAboveSeconds);
  request.set_tolerance(o.tolerance);
  request.set_reference_library(kernel.referenceLibrary);
  request.set_reference_kernel(kernel.referenceKernel);
  request.set_gpu_device(kernel.gpuDevice);
  request.set_gpu_code(kernel.gpuCode);
  proto::MeasureReply reply;
  auto status = impl_->stub->Measure(&context, request, &reply);
  if (!status.ok()) {
    std::string message = fmt::format("measuring '{}' on the device server at {} failed: {}", kernel.library, address_,
                                      statusText(status));
    if (isConnectionFailure(status) || status.error_code() == grpc::FAILED_PRECONDITION) throw DeviceUnavailable(message);
    throw Error(message);
  }
  tune::MeasureResult result;
  result.errorNo = tune::measureErrorFromNumber(reply.error_no());
  result.errorMessage = reply.message();
  result.costs.assign(reply.costs().begin(), reply.costs().end());
  result.callsPerRepeat = reply.number();
  result.runSeconds = reply.run_seconds();
  if (result.ok() && result.costs.empty()) {
    result.errorNo = tune::MeasureErrorNo::UnknownError;
    result.errorMessage = fmt::format("the device server at {} answered without costs", address_);
  }
  return result;
}

runtime::TimingResult DeviceSession::benchmarkModule(const std::string& directory,
                                                     const runtime::TimeEvaluatorOptions& timing,
                                                     double timeoutSeconds) {
  // A CPU module's library, or a GPU module's manifest and code (the server runs it on its GPU).
  bool gpu = std::filesystem::exists(directory + "/" + kGpuManifestFile);
  bool cuda = std::filesystem::exists(directory + "/" + kCudaCodeFile);
  std::vector<std::string> files{"graph.json", "params.bin"};
  if (!gpu) files.push_back("kernels.so");
  else files.insert(files.end(), {kGpuManifestFile, cuda ? kCudaCodeFile : kOpenclCodeFile});
  for (const std::string& name : files) uploadFile(name, directory + "/" + name);
  grpc::ClientContext context;
  prepareCall(context, impl_->security, std::chrono::milliseconds(int64_t(std::ceil(timeoutSeconds * 1000)) + 30000));
  proto::ModuleRequest request;
  request.set_session_id(sessionId_);
  request.set_number(timing.number);
  request.set_repeat(timing.repeat);
  request.set_min_repeat_ms(timing.minRepeatMs);
  request.set_timeout_s(timeoutSeconds);
  proto::MeasureReply reply;
  auto status = impl_->stub->BenchmarkModule(&context, request, &reply);
  if (!status.ok()) {
    std::string message = fmt::format("benchmarking the module '{}' on the device server at {} failed: {}", directory,
                                      address_, statusText(status));
    if (isConnectionFailure(status)) throw DeviceUnavailable(message);
    throw Error(message);
  }
  TESSEL_CHECK(reply.error_no() == 0 && reply.costs_size() > 0, "the module '{}' failed on the device server at {}: {}",
               directory, address_, reply.message().empty() ? "no costs" : reply.message());
  runtime::TimingResult result;
  result.costs.assign(reply.costs().begin(), reply.costs().end());
  result.number = reply.number();
  runtime::computeStatistics(result);
  return result;
}

HardwareInfo DeviceSession::hardwareInfo() {
  grpc::ClientContext context;
  prepareCall(context, impl_->security, kShortSessionCall);
  proto::SessionRef request;
  request.set_session_id(sessionId_);
  proto::HardwareInfo reply;
  auto status = impl_->stub->GetHardwareInfo(&context, request, &reply);
  if (!status.ok()) {
    std::string message = fmt::format("cannot read the hardware parameters of the device server at {}: {}", address_,
                                      statusText(status));
    if (isConnectionFailure(status)) throw DeviceUnavailable(message);
    throw Error(message);
  }
  HardwareInfo info;
  info.arch = reply.arch();
  info.cores = reply.cores();
  info.vectorBits = reply.vector_bits();
  info.l1CacheBytes = reply.l1_cache_bytes();
  info.l2CacheBytes = reply.l2_cache_bytes();
  info.l3CacheBytes = reply.l3_cache_bytes();
  info.worker = reply.worker();
  // A peak that is no positive number is no bound: unknown.
  info.peakGflops = std::isfinite(reply.peak_gflops()) && reply.peak_gflops() > 0 ? reply.peak_gflops() : 0;
  if (reply.has_gpu() && !reply.gpu().device().empty()) {
    info.gpuDevice = reply.gpu().device();
    info.gpuLimits = readGpuParameters(reply.gpu(), fmt::format("the device server at {}", address_));
  }
  return info;
}

}  // namespace tessel::rpc
