/// The tracker's state, without the network: one queue of devices per key, the clients waiting
/// for one, and the leases that say who holds which device. Device servers register and send
/// heartbeats (with whether a session is open on them); a device is free when nobody leases it
/// and its server reports no open session. Waiting clients are served by priority (higher
/// first), then in arrival order. A device silent for longer than the device timeout is dropped;
/// its lease ends with a reason its holder reads on the next renewal. Leases run out unless
/// renewed. Ids start at a random value, so that ids from before a tracker restart never name
/// a device or lease of the new tracker.
///
/// A client names each request with its own id so that it can withdraw it: a client that gave
/// up waiting (cancelled its call) cannot tell whether the tracker granted a lease whose answer
/// it never received, and an unknown lease would hold the device until it runs out. Withdrawing
/// ends the lease granted to that request, or, when none was granted yet, ends the wait and
/// keeps the request from being granted if it arrives later.
///
/// Thread-safe. request() blocks; everything else returns at once. Times are passed in (the
/// expiry tests use a fake clock) except in request(), which waits on the real steady clock.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tessel::rpc {

using Clock = std::chrono::steady_clock;

struct DeviceQueuesOptions {
  std::chrono::milliseconds deviceTimeout{10000};  ///< a device silent this long is dropped
};

struct GrantedLease {
  uint64_t leaseId = 0;
  uint64_t deviceId = 0;
  std::string key, address;
  std::chrono::milliseconds duration{0};
};

struct LeaseState {
  bool alive = false;
  std::string reason;  ///< why it is not alive
};

struct KeySummary {
  std::string key;
  int total = 0, free = 0, pending = 0;
};

struct DeviceSummary {
  std::string key, address, name;
  std::string state;  ///< "free", "leased" or "busy" (a session open without a lease)
};

class DeviceQueues {
 public:
  explicit DeviceQueues(DeviceQueuesOptions options = {});

  /// Adds a device to the queue of `key`; a device already registered at the same address is
  /// replaced (its server restarted). Returns the device's id.
  uint64_t registerDevice(const std::string& key, const std::string& address, const std::string& name, bool busy,
                          Clock::time_point now);
  /// Records that the device is alive and whether a session is open on it. False when the id
  /// is unknown (dropped, or registered with a tracker that has since restarted).
  bool heartbeat(uint64_t deviceId, bool busy, Clock::time_point now);
  /// Removes a device whose server is shutting down (its holder is told why). False when unknown.
  bool unregisterDevice(uint64_t deviceId);

  /// Waits until a device of `key` is free and leases it for `duration`. Returns nothing when
  /// `deadline` passes, `cancelled()` (polled every few tens of milliseconds) says so or the
  /// request is withdrawn. `requestId` is the client's name for the request (0: none).
  std::optional<GrantedLease> request(const std::string& key, int priority, std::chrono::milliseconds duration,
                                      Clock::time_point deadline, const std::function<bool()>& cancelled = {},
                                      uint64_t requestId = 0);
  /// Withdraws the request `requestId`: ends the lease granted to it, or, if none was, ends its
  /// wait and refuses it should it arrive later. True when a lease was ended.
  bool withdraw(uint64_t requestId, Clock::time_point now);
  /// Extends a live lease by its duration; says why a lease is not alive any more.
  LeaseState renew(uint64_t leaseId, Clock::time_point now);
  /// Ends a lease (the device becomes free once its server closes the session).
  LeaseState release(uint64_t leaseId);

  /// Drops devices silent for longer than the device timeout, ends overdue leases and forgets
  /// withdrawn requests that never arrived.
  void expire(Clock::time_point now);

  /// Per key, sorted by key: devices, free devices, waiting clients.
  std::vector<KeySummary> summary() const;
  std::vector<DeviceSummary> devices() const;

 private:
  struct Device {
    uint64_t id = 0;
    std::string key, address, name;
    bool serverBusy = false;
    Clock::time_point lastSeen;
    uint64_t leaseId = 0;  ///< 0: not leased
  };
  struct Lease {
    uint64_t deviceId = 0;
    std::chrono::milliseconds duration{0};
    Clock::time_point deadline;
    uint64_t requestId = 0;  ///< the request it was granted to (0: unnamed)
  };
  struct Waiter {
    std::string key;
    int priority = 0;
    uint64_t arrival = 0;
    std::chrono::milliseconds duration{0};
    uint64_t requestId = 0;
    bool withdrawn = false;
    std::optional<GrantedLease> granted;
  };

  bool isFree(const Device& d) const { return d.leaseId == 0 && !d.serverBusy; }
  /// Hands free devices to the best waiters. Caller holds the lock.
  void dispatch(Clock::time_point now);
  /// Ends a lease with a reason kept for its holder. Caller holds the lock.
  void endLease(uint64_t leaseId, const std::string& reason);
  void dropDevice(std::map<uint64_t, Device>::iterator it, const std::string& reason);

  DeviceQueuesOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<uint64_t, Device> devices_;
  std::map<uint64_t, Lease> leases_;
  std::map<uint64_t, std::string> endedLeases_;  ///< lease id -> why it ended (the most recent ones)
  std::list<Waiter*> waiters_;
  /// Requests withdrawn before they arrived -> when to forget them.
  std::map<uint64_t, Clock::time_point> withdrawnRequests_;
  uint64_t nextDeviceId_, nextLeaseId_, nextArrival_ = 0;
};

}  // namespace tessel::rpc
