/// A client of the tracker: the queue status (`tessel query`), and leasing devices of a key for
/// the RPC runner. Calls that the tracker refuses (a wrong token, a malformed request) throw
/// Error with the tracker's message and address; an unreachable tracker is reported as an
/// outcome, so that callers can wait for it to come back.
#pragma once
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rpc/DeviceQueues.h"
#include "rpc/Security.h"

namespace tessel::rpc {

/// Lets another thread cancel a waiting requestDevice().
class RequestCanceller {
 public:
  void cancel();
  bool cancelled() const;

 private:
  friend class TrackerClient;
  mutable std::mutex mutex_;
  void* context_ = nullptr;  ///< the grpc::ClientContext of the call in progress
  bool cancelled_ = false;
};

struct DeviceRequestOutcome {
  enum class Status {
    Granted,      ///< `lease` holds the device
    TimedOut,     ///< no device of the key became free in time
    Cancelled,    ///< RequestCanceller::cancel()
    Unreachable,  ///< the tracker cannot be reached (down, restarting)
  };
  Status status = Status::Unreachable;
  GrantedLease lease;
  std::string message;  ///< for TimedOut and Unreachable
};

class TrackerClient {
 public:
  /// `address` is host:port. Connects lazily: constructing never fails for a down tracker.
  TrackerClient(const std::string& address, RpcSecurity security);
  ~TrackerClient();
  TrackerClient(const TrackerClient&) = delete;
  TrackerClient& operator=(const TrackerClient&) = delete;

  const std::string& address() const { return address_; }

  /// The queue status per key (and each device when `devices` is given). Throws Error naming
  /// the tracker when it cannot be reached or refuses.
  std::vector<KeySummary> summary(std::vector<DeviceSummary>* devices = nullptr,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(10));

  /// Waits up to `timeout` for a free device of `key`. Throws Error when the tracker refuses
  /// the request (wrong token, malformed). A cancelled request is withdrawn at the tracker, so
  /// that a lease granted as the call was cancelled does not hold the device.
  DeviceRequestOutcome requestDevice(const std::string& key, int priority, std::chrono::milliseconds timeout,
                                     std::chrono::milliseconds leaseDuration, RequestCanceller* canceller = nullptr);
  /// Whether the lease is alive (renewing it), and why not. An unreachable tracker counts as
  /// alive: the device may well be, and the measurement calls will tell.
  LeaseState renew(uint64_t leaseId);
  /// Best effort: errors are ignored (the lease runs out by itself).
  void release(uint64_t leaseId);

 private:
  /// ReleaseLease by lease id, or with lease id 0 the withdrawal of a request; best effort.
  void sendRelease(uint64_t leaseId, uint64_t requestId);

  struct Impl;
  std::string address_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel::rpc
