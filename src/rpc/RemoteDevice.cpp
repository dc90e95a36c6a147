#include "rpc/RemoteDevice.h"

#include "rpc/DeviceSession.h"
#include "rpc/TrackerClient.h"
#include "support/Error.h"

namespace tessel::rpc {

namespace {

/// Runs `body` on a session with a leased device of `key`; gives the device back afterwards.
template <class Body>
auto onLeasedDevice(const std::string& tracker, const std::string& key, const RpcSecurity& security,
                    std::chrono::milliseconds wait, std::chrono::milliseconds lease, const std::string& client,
                    std::string* address, Body&& body) {
  TrackerClient trackerClient(tracker, security);
  auto outcome = trackerClient.requestDevice(key, 0, wait, lease);
  TESSEL_CHECK(outcome.status == DeviceRequestOutcome::Status::Granted, "no device of key '{}' from the tracker at {}: {}",
               key, tracker, outcome.message);
  if (address) *address = outcome.lease.address;
  struct Release {
    TrackerClient& tracker;
    uint64_t lease;
    ~Release() { tracker.release(lease); }
  } release{trackerClient, outcome.lease.leaseId};
  DeviceSession session(outcome.lease.address, security, client, outcome.lease.leaseId);
  return body(session);
}

}  // namespace

HardwareInfo queryRemoteHardware(const std::string& tracker, const std::string& key, const RpcSecurity& security,
                                 std::chrono::milliseconds wait, std::string* address) {
  return onLeasedDevice(tracker, key, security, wait, std::chrono::seconds(30), "tessel query --hardware", address,
                        [](DeviceSession& session) { return session.hardwareInfo(); });
}

runtime::TimingResult benchmarkRemoteModule(const std::string& tracker, const std::string& key,
                                            const RpcSecurity& security, const std::string& directory,
                                            const runtime::TimeEvaluatorOptions& timing, double timeoutSeconds,
                                            std::chrono::milliseconds wait, std::string* address) {
  auto lease = std::chrono::milliseconds(int64_t(timeoutSeconds * 1000) + 60000);
  return onLeasedDevice(tracker, key, security, wait, lease, "tessel benchmark", address, [&](DeviceSession& session) {
    return session.benchmarkModule(directory, timing, timeoutSeconds);
  });
}

}  // namespace tessel::rpc
