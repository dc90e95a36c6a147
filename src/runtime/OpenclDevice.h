/// The `opencl` device of the runtime: buffers (cl_mem handles stand where a pointer would),
/// copies and synchronization on the device's in-order queue, through the OpenCL API loaded
/// with dlopen (OpenclDriver.h). The device registry (Device.h) creates it for "opencl:N" on
/// first use; without OpenCL that fails with "no OpenCL device: ...".
#pragma once
#include <memory>
#include <string>

#include "runtime/Device.h"
#include "runtime/GpuDeviceInfo.h"
#include "runtime/TimeEvaluator.h"

namespace tessel::runtime {

std::shared_ptr<DeviceAPI> makeOpenclDeviceAPI(int deviceId);

/// Whether this machine has an OpenCL device; `why` receives "no OpenCL device: <reason>".
bool openclDeviceAvailable(std::string* why = nullptr);

GpuDeviceInfo openclDeviceInfo(int deviceId);

/// A clock for timeFunction: each reading waits for the device's queue to drain (clFinish),
/// then reads the host's steady clock.
SecondsClock openclQueueClock(int deviceId);

}  // namespace tessel::runtime
