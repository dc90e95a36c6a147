/// The GPU half of driver::buildNetwork (BuildNetwork.h), for targets "cuda ..." and "opencl ...":
/// the standard passes without the CPU's packed and fused convolution variants, every function
/// with the default GPU schedule or its best record, verified against the limits of the device
/// present or of the target's profile. buildNetwork dispatches here; nothing else calls it.
#pragma once
#include <string>

#include "driver/BuildNetwork.h"

namespace tessel::driver {

/// The GPU options' checks (Error naming `tessel compile`'s flag), no work done; returns the
/// host target as checkGpuTargetHost spells it.
std::string checkGpuBuildOptions(const BuildNetworkOptions& options);

/// Checks the options and builds for the GPU target `options.prepare.target`.
BuildNetworkResult buildGpuNetwork(const BuildNetworkOptions& options);

}  // namespace tessel::driver
