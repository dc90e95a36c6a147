/// Asks a device of a key for its hardware parameters, through the tracker: lease one, open a
/// session, ask, give it back (`tessel query --hardware KEY`; the seeds read
/// `remote.cpu(0)`'s parameters the same way before choosing schedules).
#pragma once
#include <chrono>
#include <string>

#include "rpc/HardwareInfo.h"
#include "rpc/Security.h"

namespace tessel::rpc {

/// The parameters of a free device of `key` (waiting up to `wait` for one) and its address in
/// *address when given. Throws Error when none is free in time or the tracker cannot be asked.
HardwareInfo queryRemoteHardware(const std::string& tracker, const std::string& key, const RpcSecurity& security,
                                 std::chrono::milliseconds wait, std::string* address = nullptr);

}  // namespace tessel::rpc
