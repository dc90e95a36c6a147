/// The `cuda` device of the runtime: device memory, copies and synchronization through the
/// CUDA driver API (CudaDriver.h, loaded with dlopen), on each device's primary context. The
/// device registry (Device.h) creates it for "cuda:N" on first use; without a GPU that fails
/// with "no CUDA device: ..." and nothing else is affected.
#pragma once
#include <memory>

#include "runtime/Device.h"
#include "runtime/GpuDeviceInfo.h"
#include "runtime/TimeEvaluator.h"

namespace tessel::runtime {

/// The DeviceAPI of CUDA device `deviceId`; throws Error "no CUDA device: ..." or naming the
/// index when it is out of range.
std::shared_ptr<DeviceAPI> makeCudaDeviceAPI(int deviceId);

/// Whether this machine can run CUDA kernels; `why` receives "no CUDA device: <reason>".
bool cudaDeviceAvailable(std::string* why = nullptr);

/// The limits and name the driver reports for the device.
GpuDeviceInfo cudaDeviceInfo(int deviceId);

/// A clock that reads GPU time: each reading records a CUDA event on the device's default
/// stream, waits for it and returns the seconds since the clock was made. With timeFunction
/// (TimeEvaluator.h) it times kernels by events, free of host launch jitter.
SecondsClock cudaEventClock(int deviceId);

namespace cuda {
/// Makes the device's primary context current on the calling thread (retained once, for the
/// process). Every runtime entry point that touches CUDA calls it first.
void makeContextCurrent(int deviceId);
struct CUstream_st;
/// The stream kernels are launched on (one per device, made on first use; not the legacy
/// default stream, which cannot be captured into a CUDA graph). It is a blocking stream: the
/// runtime's synchronous copies and the event clock stay ordered with it.
CUstream_st* launchStream(int deviceId);
}  // namespace cuda

}  // namespace tessel::runtime
