#include "rpc/RemoteHardware.h"

#include "rpc/DeviceSession.h"
#include "rpc/TrackerClient.h"
#include "support/Error.h"

namespace tessel::rpc {

HardwareInfo queryRemoteHardware(const std::string& tracker, const std::string& key, const RpcSecurity& security,
                                 std::chrono::milliseconds wait, std::string* address) {
  TrackerClient client(tracker, security);
  auto outcome = client.requestDevice(key, 0, wait, std::chrono::seconds(30));
  TESSEL_CHECK(outcome.status == DeviceRequestOutcome::Status::Granted, "no device of key '{}' from the tracker at {}: {}",
               key, tracker, outcome.message);
  HardwareInfo info;
  try {
    DeviceSession session(outcome.lease.address, security, "tessel query --hardware", outcome.lease.leaseId);
    info = session.hardwareInfo();
  } catch (const Error&) {
    client.release(outcome.lease.leaseId);
    throw;
  }
  client.release(outcome.lease.leaseId);
  if (address) *address = outcome.lease.address;
  return info;
}

}  // namespace tessel::rpc
