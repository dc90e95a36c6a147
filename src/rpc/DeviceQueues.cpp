#include "rpc/DeviceQueues.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <tuple>

namespace tessel::rpc {

namespace {

constexpr size_t kEndedLeasesKept = 4096;
constexpr std::chrono::milliseconds kCancelPoll{50};
/// How long a request withdrawn before it arrived is remembered: far longer than a call takes
/// to cross the network, and bounded so that clients cannot grow the tracker without limit.
constexpr std::chrono::minutes kWithdrawnRemembered{10};
constexpr size_t kWithdrawnKept = 4096;

/// A random start for ids, below 2^62 so that they stay exact in JSON numbers and logs.
uint64_t randomIdBase() {
  std::random_device device;
  uint64_t high = device(), low = device();
  return ((high << 32 | low) & ((uint64_t(1) << 62) - 1)) | 1;
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

DeviceQueues::DeviceQueues(DeviceQueuesOptions options)
    : options_(options), nextDeviceId_(randomIdBase()), nextLeaseId_(randomIdBase()) {}

uint64_t DeviceQueues::registerDevice(const std::string& key, const std::string& address, const std::string& name,
                                      bool busy, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  for (auto it = devices_.begin(); it != devices_.end(); ++it) {
    if (it->second.address == address) {
      dropDevice(it, fmt::format("the device at {} registered again (its server restarted)", address));
      break;
    }
  }
  Device d;
  d.id = nextDeviceId_++;
  d.key = key;
  d.address = address;
  d.name = name;
  d.serverBusy = busy;
  d.lastSeen = now;
  devices_[d.id] = d;
  dispatch(now);
  return d.id;
}

bool DeviceQueues::heartbeat(uint64_t deviceId, bool busy, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto it = devices_.find(deviceId);
  if (it == devices_.end()) return false;
  it->second.lastSeen = now;
  it->second.serverBusy = busy;
  dispatch(now);
  return true;
}

bool DeviceQueues::unregisterDevice(uint64_t deviceId) {
  std::lock_guard lock(mutex_);
  auto it = devices_.find(deviceId);
  if (it == devices_.end()) return false;
  dropDevice(it, fmt::format("the device '{}' at {} shut down", it->second.key, it->second.address));
  return true;
}

std::optional<GrantedLease> DeviceQueues::request(const std::string& key, int priority,
                                                  std::chrono::milliseconds duration, Clock::time_point deadline,
                                                  const std::function<bool()>& cancelled, uint64_t requestId) {
  std::unique_lock lock(mutex_);
  if (requestId != 0 && withdrawnRequests_.erase(requestId)) return std::nullopt;
  Waiter waiter;
  waiter.requestId = requestId;
  waiter.key = key;
  waiter.priority = priority;
  waiter.arrival = nextArrival_++;
  waiter.duration = duration;
  waiters_.push_back(&waiter);
  dispatch(Clock::now());
  while (!waiter.granted) {
    auto now = Clock::now();
    if (now >= deadline || waiter.withdrawn || (cancelled && cancelled())) break;
    changed_.wait_until(lock, std::min(deadline, now + kCancelPoll));
  }
  waiters_.remove(&waiter);
  return waiter.granted;
}

void DeviceQueues::dispatch(Clock::time_point now) {
  bool granted = false;
  for (;;) {
    // The best waiter that has a free device of its key.
    Waiter* best = nullptr;
    Device* device = nullptr;
    for (Waiter* w : waiters_) {
      if (w->granted || w->withdrawn) continue;
      if (best && (w->priority < best->priority || (w->priority == best->priority && w->arrival > best->arrival)))
        continue;
      for (auto& [id, d] : devices_) {
        if (d.key == w->key && isFree(d)) {
          best = w;
          device = &d;
          break;
        }
      }
    }
    if (!best) break;
    uint64_t leaseId = nextLeaseId_++;
    leases_[leaseId] = Lease{device->id, best->duration, now + best->duration, best->requestId};
    device->leaseId = leaseId;
    best->granted = GrantedLease{leaseId, device->id, device->key, device->address, best->duration};
    granted = true;
  }
  if (granted) changed_.notify_all();
}

void DeviceQueues::endLease(uint64_t leaseId, const std::string& reason) {
  auto it = leases_.find(leaseId);
  if (it == leases_.end()) return;
  auto device = devices_.find(it->second.deviceId);
  if (device != devices_.end() && device->second.leaseId == leaseId) device->second.leaseId = 0;
  leases_.erase(it);
  if (endedLeases_.size() >= kEndedLeasesKept) endedLeases_.erase(endedLeases_.begin());
  endedLeases_[leaseId] = reason;
}

void DeviceQueues::dropDevice(std::map<uint64_t, Device>::iterator it, const std::string& reason) {
  if (it->second.leaseId != 0) endLease(it->second.leaseId, reason);
  devices_.erase(it);
}

LeaseState DeviceQueues::renew(uint64_t leaseId, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto it = leases_.find(leaseId);
  if (it != leases_.end()) {
    it->second.deadline = now + it->second.duration;
    return {true, ""};
  }
  auto ended = endedLeases_.find(leaseId);
  if (ended != endedLeases_.end()) return {false, ended->second};
  return {false, fmt::format("lease {} is unknown to this tracker (it may have restarted)", leaseId)};
}

LeaseState DeviceQueues::release(uint64_t leaseId) {
  std::lock_guard lock(mutex_);
  if (!leases_.count(leaseId)) {
    auto ended = endedLeases_.find(leaseId);
    return {false, ended != endedLeases_.end()
                       ? ended->second
                       : fmt::format("lease {} is unknown to this tracker (it may have restarted)", leaseId)};
  }
  endLease(leaseId, "released by its holder");
  dispatch(Clock::now());
  return {true, ""};
}

bool DeviceQueues::withdraw(uint64_t requestId, Clock::time_point now) {
  if (requestId == 0) return false;
  std::lock_guard lock(mutex_);
  for (auto& [id, lease] : leases_) {
    if (lease.requestId != requestId) continue;
    endLease(id, "released by its holder (its request was withdrawn)");
    dispatch(now);
    return true;
  }
  for (Waiter* w : waiters_) {
    if (w->requestId != requestId) continue;
    // Still waiting, or granted but not yet returned to its caller: either way it ends here.
    w->withdrawn = true;
    bool ended = w->granted.has_value();
    if (ended) {
      endLease(w->granted->leaseId, "released by its holder (its request was withdrawn)");
      w->granted.reset();
      dispatch(now);
    }
    changed_.notify_all();
    return ended;
  }
  if (withdrawnRequests_.size() >= kWithdrawnKept) withdrawnRequests_.erase(withdrawnRequests_.begin());
  withdrawnRequests_[requestId] = now + kWithdrawnRemembered;
  return false;
}

void DeviceQueues::expire(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  std::erase_if(withdrawnRequests_, [&](const auto& entry) { return now > entry.second; });
  for (auto it = devices_.begin(); it != devices_.end();) {
    auto silent = now - it->second.lastSeen;
    if (silent > options_.deviceTimeout) {
      auto next = std::next(it);
      dropDevice(it, fmt::format("the device '{}' at {} stopped sending heartbeats (silent for {:.1f} s) and was dropped",
                                 it->second.key, it->second.address, seconds(silent)));
      it = next;
    } else {
      ++it;
    }
  }
  std::vector<uint64_t> overdue;
  for (auto& [id, lease] : leases_)
    if (now > lease.deadline) overdue.push_back(id);
  for (uint64_t id : overdue)
    endLease(id, fmt::format("lease {} expired: not renewed within {:.1f} s", id, seconds(leases_[id].duration)));
  dispatch(now);
}

std::vector<KeySummary> DeviceQueues::summary() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, KeySummary> byKey;
  for (auto& [id, d] : devices_) {
    auto& s = byKey[d.key];
    s.key = d.key;
    ++s.total;
    if (isFree(d)) ++s.free;
  }
  for (const Waiter* w : waiters_) {
    if (w->granted) continue;
    auto& s = byKey[w->key];
    s.key = w->key;
    ++s.pending;
  }
  std::vector<KeySummary> out;
  for (auto& [key, s] : byKey) out.push_back(s);
  return out;
}

std::vector<DeviceSummary> DeviceQueues::devices() const {
  std::lock_guard lock(mutex_);
  std::vector<DeviceSummary> out;
  for (auto& [id, d] : devices_)
    out.push_back({d.key, d.address, d.name, d.leaseId != 0 ? "leased" : d.serverBusy ? "busy" : "free"});
  std::sort(out.begin(), out.end(),
            [](const DeviceSummary& a, const DeviceSummary& b) { return std::tie(a.key, a.address) < std::tie(b.key, b.address); });
  return out;
}

}  // namespace tessel::rpc
