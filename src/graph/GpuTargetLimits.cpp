#include "graph/GpuTargetLimits.h"

#include <fmt/format.h>

#include "runtime/CudaDevice.h"
#include "runtime/OpenclDevice.h"
#include "support/Error.h"

namespace tessel::graph {

namespace {

runtime::GpuDeviceInfo infoOf(const runtime::Device& device) {
  if (device.kind == runtime::DeviceKind::CUDA) return runtime::cudaDeviceInfo(device.id);
  if (device.kind == runtime::DeviceKind::OpenCL) return runtime::openclDeviceInfo(device.id);
  fail("device '{}' is not a GPU (hardware parameters are read from cuda and opencl devices)", device.str());
}

}  // namespace

passes::GpuLimits gpuLimitsOf(const runtime::GpuDeviceInfo& info, const passes::GpuLimits& profile, const std::string& deviceName) {
  passes::GpuLimits limits = profile;
  limits.profile = fmt::format("{} ({})", deviceName, info.name);
  if (info.maxThreadsPerBlock > 0) limits.maxThreadsPerBlock = info.maxThreadsPerBlock;
  for (size_t d = 0; d < 3; ++d)
    if (info.maxBlockDimensions[d] > 0) limits.maxBlockDimensions[d] = info.maxBlockDimensions[d];
  // The static shared memory a kernel may declare: CUDA reports 48 KiB per block (more only
  // through dynamic shared memory), OpenCL its local memory size.
  if (info.maxSharedMemoryPerBlock > 0) limits.maxSharedMemoryPerBlock = info.maxSharedMemoryPerBlock;
  if (info.maxSharedMemoryPerBlockOptIn > 0) limits.maxDynamicSharedMemoryPerBlock = info.maxSharedMemoryPerBlockOptIn;
  if (info.warpSize > 0) limits.warpSize = info.warpSize;
  if (info.computeUnits > 0) limits.multiProcessorCount = info.computeUnits;
  return limits;
}

passes::GpuLimits gpuLimitsForBuild(const target::Target& target) {
  passes::GpuLimits profile = passes::GpuLimits::forTarget(target);
  if (!target.device.empty()) return profile;  // compiled for a named device elsewhere
  bool cuda = target.kind == target::TargetKind::Cuda;
  bool present = cuda ? runtime::cudaDeviceAvailable() : runtime::openclDeviceAvailable();
  if (!present) return profile;
  runtime::Device device{cuda ? runtime::DeviceKind::CUDA : runtime::DeviceKind::OpenCL, 0};
  return gpuLimitsOf(infoOf(device), profile, device.str());
}

passes::GpuLimits gpuLimitsOfDevice(const runtime::Device& device) {
  runtime::GpuDeviceInfo info = infoOf(device);
  return gpuLimitsOf(info, passes::GpuLimits::forTarget(target::Target::parse(runtime::deviceKindName(device.kind))), device.str());
}

std::vector<std::pair<std::string, std::string>> gpuHardwareParameters(const runtime::Device& device) {
  runtime::GpuDeviceInfo info = infoOf(device);
  // Virtual threads are a compiler notion: the extent the profile of the kind allows.
  passes::GpuLimits profile = passes::GpuLimits::forTarget(target::Target::parse(device.kind == runtime::DeviceKind::CUDA ? "cuda" : "opencl"));
  return {
      {"max_threads_per_block", std::to_string(info.maxThreadsPerBlock)},
      {"max_shared_memory_per_block", std::to_string(info.maxSharedMemoryPerBlock)},
      {"max_dynamic_shared_memory_per_block", std::to_string(info.maxSharedMemoryPerBlockOptIn)},
      {"warp_size", std::to_string(info.warpSize)},
      {"max_vthread_extent", std::to_string(profile.maxVThreadExtent)},
      {"max_block_dim_x", std::to_string(info.maxBlockDimensions[0])},
      {"max_block_dim_y", std::to_string(info.maxBlockDimensions[1])},
      {"max_block_dim_z", std::to_string(info.maxBlockDimensions[2])},
      {"multi_processor_count", std::to_string(info.computeUnits)},
      {"device_name", info.name},
      {"arch", info.architecture},
  };
}

}  // namespace tessel::graph
