#include "rpc/Tracker.h"

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <thread>

#include "rpc/DeviceQueues.h"
#include "rpc/GrpcSupport.h"
#include "rpc/Validate.h"
#include "support/Clock.h"
#include "support/Error.h"
#include "tessel_rpc.grpc.pb.h"

namespace tessel::rpc {

namespace {

constexpr int64_t kMaxWaitMs = int64_t(7) * 24 * 3600 * 1000;
constexpr int64_t kDefaultLeaseMs = 60000;

class TrackerService final : public proto::Tracker::Service {
 public:
  TrackerService(DeviceQueues& queues, const TrackerOptions& options) : queues_(queues), options_(options) {}

  grpc::Status Register(grpc::ServerContext* context, const proto::RegisterRequest* request,
                        proto::RegisterReply* reply) override {
    if (auto s = checkToken(*context, options_.security.token, "tracker"); !s.ok()) return s;
    if (auto s = validKey(request->key(), "key"); !s.ok()) return s;
    std::string address = request->address();
    // A bare ":port" is completed with the host the call came from.
    if (!address.empty() && address.front() == ':') address = peerHost(context->peer()) + address;
    if (auto s = validAddress(address, "address"); !s.ok()) return s;
    if (request->name().size() > 256) return invalid("name", "is longer than 256 characters");
    uint64_t id = queues_.registerDevice(request->key(), address, request->name(), request->busy(), Clock::now());
    reply->set_device_id(id);
    reply->set_heartbeat_ms(millis(options_.heartbeatSeconds).count());
    return grpc::Status::OK;
  }

  grpc::Status Heartbeat(grpc::ServerContext* context, const proto::HeartbeatRequest* request,
                         proto::HeartbeatReply* reply) override {
    if (auto s = checkToken(*context, options_.security.token, "tracker"); !s.ok()) return s;
    reply->set_known(queues_.heartbeat(request->device_id(), request->busy(), Clock::now()));
    return grpc::Status::OK;
  }

  grpc::Status Unregister(grpc::ServerContext* context, const proto::HeartbeatRequest* request,
                          proto::HeartbeatReply* reply) override {
    if (auto s = checkToken(*context, options_.security.token, "tracker"); !s.ok()) return s;
    reply->set_known(queues_.unregisterDevice(request->device_id()));
    return grpc::Status::OK;
  }

  grpc::Status RequestDevice(grpc::ServerContext* context, const proto::DeviceRequest* request,
                             proto::Lease* reply) override {
    if (auto s = checkToken(*context, options_.security.token, "tracker"); !s.ok()) return s;
    if (auto s = validKey(request->key(), "key"); !s.ok()) return s;
    if (request->timeout_ms() < 0 || request->timeout_ms() > kMaxWaitMs)
      return invalid("timeout_ms", fmt::format("must be between 0 and {} (7 days), got {}", kMaxWaitMs,
                                               request->timeout_ms()));
    if (request->lease_ms() < 0 || request->lease_ms() > kMaxWaitMs)
      return invalid("lease_ms", fmt::format("must be between 0 and {} (7 days), got {}", kMaxWaitMs,
                                             request->lease_ms()));
    auto duration = std::chrono::milliseconds(request->lease_ms() > 0 ? request->lease_ms() : kDefaultLeaseMs);
    auto deadline = Clock::now() + std::chrono::milliseconds(request->timeout_ms());
    auto lease = queues_.request(request->key(), request->priority(), duration, deadline,
                                 [context] { return context->IsCancelled(); }, request->request_id());
    if (!lease) {
      if (context->IsCancelled()) return {grpc::CANCELLED, "the request was cancelled"};
      return {grpc::DEADLINE_EXCEEDED,
              fmt::format("no device of key '{}' became free within {:.1f} s", request->key(),
                          request->timeout_ms() / 1000.0)};
    }
    // A client that went away while its lease was being granted never learns of it: free it.
    if (context->IsCancelled()) {
      queues_.release(lease->leaseId);
      return {grpc::CANCELLED, "the request was cancelled"};
    }
    reply->set_lease_id(lease->leaseId);
    reply->set_device_id(lease->deviceId);
    reply->set_address(lease->address);
    reply->set_key(lease->key);
    reply->set_lease_ms(lease->duration.count());
    return grpc::Status::OK;
  }

  grpc::Status RenewLease(grpc::ServerContext* context, const proto::LeaseRef* request,
                          proto::LeaseStatus* reply) override {
    if (auto s = checkToken(*context, options_.security.token, "tracker"); !s.ok()) return s;
    auto state = queues_.renew(request->lease_id(), Clock::now());
    reply->set_alive(state.alive);
    reply->set_reason(state.reason);
    return grpc::Status::OK;
  }

  grpc::Status ReleaseLease(grpc::ServerContext* context, const proto::LeaseRef* request,
                            proto::LeaseStatus* reply) override {
    if (auto s = checkToken(*context, options_.security.token, "tracker"); !s.ok()) return s;
    if (request->lease_id() == 0 && request->request_id() != 0) {
      reply->set_alive(queues_.withdraw(request->request_id(), Clock::now()));
      return grpc::Status::OK;
    }
    auto state = queues_.release(request->lease_id());
    reply->set_alive(state.alive);
    reply->set_reason(state.reason);
    return grpc::Status::OK;
  }

  grpc::Status Summary(grpc::ServerContext* context, const proto::SummaryRequest*, proto::QueueStatus* reply) override {
    if (auto s = checkToken(*context, options_.security.token, "tracker"); !s.ok()) return s;
    for (const auto& k : queues_.summary()) {
      auto* entry = reply->add_keys();
      entry->set_key(k.key);
      entry->set_total(k.total);
      entry->set_free(k.free);
      entry->set_pending(k.pending);
    }
    for (const auto& d : queues_.devices()) {
      auto* entry = reply->add_devices();
      entry->set_key(d.key);
      entry->set_address(d.address);
      entry->set_name(d.name);
      entry->set_state(d.state);
    }
    return grpc::Status::OK;
  }

 private:
  DeviceQueues& queues_;
  const TrackerOptions& options_;
};

}  // namespace

struct TrackerServer::Impl {
  TrackerOptions options;
  DeviceQueues queues;
  TrackerService service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  std::mutex mutex;
  std::condition_variable stop;
  bool stopping = false;
  std::thread expiry;

  explicit Impl(TrackerOptions o)
      : options(std::move(o)), queues(DeviceQueuesOptions{millis(options.deviceTimeoutSeconds)}),
        service(queues, options) {}
};

TrackerServer::TrackerServer(TrackerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  auto& o = impl_->options;
  TESSEL_CHECK(std::isfinite(o.deviceTimeoutSeconds) && o.deviceTimeoutSeconds > 0,
               "tracker: the device timeout must be a positive number of seconds, got {}", o.deviceTimeoutSeconds);
  TESSEL_CHECK(std::isfinite(o.heartbeatSeconds) && o.heartbeatSeconds > 0 && o.heartbeatSeconds < o.deviceTimeoutSeconds,
               "tracker: the heartbeat interval must be positive and shorter than the device timeout ({} s), got {}",
               o.deviceTimeoutSeconds, o.heartbeatSeconds);
  std::string refusal = listenRefusal(ListeningService::Tracker, o.host, o.security.token, o.insecure);
  TESSEL_CHECK(refusal.empty(), "{}", refusal);
  impl_->server = startServer({&impl_->service}, o.host, o.port, o.security, 1 << 20, &impl_->port, "tracker");
  impl_->expiry = std::thread([impl = impl_.get()] {
    auto period = std::max(std::chrono::milliseconds(20), millis(impl->options.heartbeatSeconds / 4));
    std::unique_lock lock(impl->mutex);
    while (!impl->stopping) {
      impl->stop.wait_for(lock, period);
      lock.unlock();
      impl->queues.expire(Clock::now());
      lock.lock();
    }
  });
}

TrackerServer::~TrackerServer() {
  shutdown();
  if (impl_->expiry.joinable()) impl_->expiry.join();
}

int TrackerServer::port() const { return impl_->port; }

std::string TrackerServer::address() const { return fmt::format("{}:{}", impl_->options.host, impl_->port); }

void TrackerServer::wait() { impl_->server->Wait(); }

void TrackerServer::shutdown() {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopping) return;
    impl_->stopping = true;
  }
  impl_->stop.notify_all();
  // Waiting RequestDevice calls see their context cancelled within the deadline.
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

}  // namespace tessel::rpc
