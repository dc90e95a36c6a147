/// A GPU's hardware parameters on the wire (proto::GpuParameters of HardwareInfo), both ways
/// (internal to the rpc library and its tests). Reading checks every field: a server that
/// reports a limit a kernel could not be verified against (no threads, a missing block
/// dimension) is refused with an Error naming the server, the field and the value, never taken
/// as a limit.
#pragma once
#include <string>

#include "passes/GpuLimits.h"
#include "tessel_rpc.pb.h"

namespace tessel::rpc {

void writeGpuParameters(const std::string& device, const passes::GpuLimits& limits, proto::GpuParameters* out);

/// The limits in `parameters`; `where` names the server in errors ("the device server at H:P").
passes::GpuLimits readGpuParameters(const proto::GpuParameters& parameters, const std::string& where);

}  // namespace tessel::rpc
