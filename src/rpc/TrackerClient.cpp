#include "rpc/TrackerClient.h"

#include <atomic>
#include <random>

#include "rpc/GrpcSupport.h"
#include "support/Error.h"
#include "tessel_rpc.grpc.pb.h"

namespace tessel::rpc {

namespace {
constexpr std::chrono::milliseconds kShortTrackerCall{5000};
}

void RequestCanceller::cancel() {
  std::lock_guard lock(mutex_);
  cancelled_ = true;
  if (context_) static_cast<grpc::ClientContext*>(context_)->TryCancel();
}

bool RequestCanceller::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

struct TrackerClient::Impl {
  /// Names this client's device requests; random so that clients of one tracker do not collide.
  std::atomic<uint64_t> nextRequestId{(uint64_t(std::random_device{}()) << 32 | std::random_device{}()) | 1};
  RpcSecurity security;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<proto::Tracker::Stub> stub;
};

TrackerClient::TrackerClient(const std::string& address, RpcSecurity security)
    : address_(address), impl_(std::make_unique<Impl>()) {
  impl_->security = std::move(security);
  impl_->channel = makeChannel(address, impl_->security);
  impl_->stub = proto::Tracker::NewStub(impl_->channel);
}

TrackerClient::~TrackerClient() = default;

std::vector<KeySummary> TrackerClient::summary(std::vector<DeviceSummary>* devices, std::chrono::milliseconds timeout) {
  grpc::ClientContext context;
  prepareCall(context, impl_->security, timeout);
  proto::SummaryRequest request;
  proto::QueueStatus reply;
  auto status = impl_->stub->Summary(&context, request, &reply);
  TESSEL_CHECK(status.ok(), "cannot query the tracker at {}: {}", address_, statusText(status));
  std::vector<KeySummary> keys;
  for (const auto& k : reply.keys()) keys.push_back({k.key(), k.total(), k.free(), k.pending()});
  if (devices) {
    devices->clear();
    for (const auto& d : reply.devices()) devices->push_back({d.key(), d.address(), d.name(), d.state()});
  }
  return keys;
}

DeviceRequestOutcome TrackerClient::requestDevice(const std::string& key, int priority,
                                                  std::chrono::milliseconds timeout,
                                                  std::chrono::milliseconds leaseDuration,
                                                  RequestCanceller* canceller) {
  DeviceRequestOutcome outcome;
  grpc::ClientContext context;
  // The call's own deadline leaves the tracker time to answer "timed out" itself.
  prepareCall(context, impl_->security, timeout + std::chrono::seconds(5));
  if (canceller) {
    std::lock_guard lock(canceller->mutex_);
    if (canceller->cancelled_) {
      outcome.status = DeviceRequestOutcome::Status::Cancelled;
      return outcome;
    }
    canceller->context_ = &context;
  }
  proto::DeviceRequest request;
  request.set_key(key);
  request.set_priority(priority);
  request.set_timeout_ms(timeout.count());
  request.set_lease_ms(leaseDuration.count());
  uint64_t requestId = impl_->nextRequestId.fetch_add(1);
  request.set_request_id(requestId);
  proto::Lease reply;
  auto status = impl_->stub->RequestDevice(&context, request, &reply);
  bool cancelled = false;
  if (canceller) {
    std::lock_guard lock(canceller->mutex_);
    canceller->context_ = nullptr;
    cancelled = canceller->cancelled_;
  }
  if (status.ok()) {
    // Granted just as it was cancelled: give the device back at once.
    if (cancelled) {
      release(reply.lease_id());
      outcome.status = DeviceRequestOutcome::Status::Cancelled;
      return outcome;
    }
    outcome.status = DeviceRequestOutcome::Status::Granted;
    outcome.lease = GrantedLease{reply.lease_id(), reply.device_id(), reply.key(), reply.address(),
                                 std::chrono::milliseconds(reply.lease_ms())};
    return outcome;
  }
  if (cancelled || status.error_code() == grpc::CANCELLED) {
    // The tracker may have granted a lease whose answer the cancellation dropped: withdrawing
    // the request frees it at once instead of when it runs out.
    sendRelease(0, requestId);
    outcome.status = DeviceRequestOutcome::Status::Cancelled;
    return outcome;
  }
  switch (status.error_code()) {
    case grpc::DEADLINE_EXCEEDED:
      outcome.status = DeviceRequestOutcome::Status::TimedOut;
      outcome.message = fmt::format("tracker {}: {}", address_, status.error_message());
      return outcome;
    case grpc::UNAVAILABLE:
      outcome.status = DeviceRequestOutcome::Status::Unreachable;
      outcome.message = fmt::format("cannot reach the tracker at {}: {}", address_, statusText(status));
      return outcome;
    default: fail("the tracker at {} refused the request for a device of key '{}': {}", address_, key, statusText(status));
  }
}

LeaseState TrackerClient::renew(uint64_t leaseId) {
  grpc::ClientContext context;
  prepareCall(context, impl_->security, kShortTrackerCall);
  proto::LeaseRef request;
  request.set_lease_id(leaseId);
  proto::LeaseStatus reply;
  auto status = impl_->stub->RenewLease(&context, request, &reply);
  if (!status.ok()) return {true, ""};
  return {reply.alive(), reply.reason()};
}

void TrackerClient::release(uint64_t leaseId) { sendRelease(leaseId, 0); }

void TrackerClient::sendRelease(uint64_t leaseId, uint64_t requestId) {
  grpc::ClientContext context;
  prepareCall(context, impl_->security, kShortTrackerCall);
  proto::LeaseRef request;
  request.set_lease_id(leaseId);
  request.set_request_id(requestId);
  proto::LeaseStatus reply;
  (void)impl_->stub->ReleaseLease(&context, request, &reply);
}

}  // namespace tessel::rpc
