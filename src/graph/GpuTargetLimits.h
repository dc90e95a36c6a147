/// Where a GPU build's limits come from (seed 001 reads them from the device): the device of
/// the target's kind on this machine when one is present and the target names no device
/// profile (`-device=mali` is a cross-compilation: its profile holds), else the target's named
/// profile (passes::GpuLimits::forTarget). Also the hardware parameters under TVM's names, as
/// `tessel query --device cuda|opencl --hardware KEY` prints them.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "passes/GpuLimits.h"
#include "runtime/Device.h"
#include "runtime/GpuDeviceInfo.h"

namespace tessel::graph {

/// The profile's limits with what the device reports in their place (threads per block, block
/// dimensions, shared memory per block, warp size); the profile's name becomes the device's.
passes::GpuLimits gpuLimitsOf(const runtime::GpuDeviceInfo& info, const passes::GpuLimits& profile, const std::string& deviceName);

/// The limits to verify a build for `target` against (see the top of this file).
passes::GpuLimits gpuLimitsForBuild(const target::Target& target);

/// The limits of a device of this machine ("opencl:1"): what it reports, its kind's profile for
/// the rest. Error naming the device when it is not a GPU or not present.
passes::GpuLimits gpuLimitsOfDevice(const runtime::Device& device);

/// The device's parameters under TVM's names, in a fixed order: max_threads_per_block,
/// max_shared_memory_per_block, warp_size, max_vthread_extent, max_block_dim_x/y/z,
/// multi_processor_count, device_name, arch. Throws Error for a CPU or VTA device.
std::vector<std::pair<std::string, std::string>> gpuHardwareParameters(const runtime::Device& device);

}  // namespace tessel::graph
