#include "passes/GpuLimits.h"

#include <sstream>

#include "support/Error.h"

namespace tessel::passes {

GpuLimits GpuLimits::cudaSm90() {
  GpuLimits limits;
  limits.profile = "cuda sm_90";
  limits.multiProcessorCount = 132;
  limits.maxDynamicSharedMemoryPerBlock = 227 * 1024;
  limits.tf32TensorCores = true;
  limits.asyncCopies = true;
  return limits;
}

GpuLimits GpuLimits::mali() {
  GpuLimits limits;
  limits.profile = "opencl mali";
  limits.maxThreadsPerBlock = 256;
  limits.maxBlockDimensions = {256, 256, 256};
  limits.maxSharedMemoryPerBlock = 32 * 1024;
  limits.warpSize = 1;  // Mali has no warps that a kernel could rely on
  return limits;
}

GpuLimits GpuLimits::forTarget(const target::Target& target) {
  if (target.kind == target::TargetKind::Cuda) {
    TESSEL_CHECK(target.arch == "sm_90", "target '{}': -arch={} is not supported yet (only sm_90)", target.str(), target.arch);
    return cudaSm90();
  }
  if (target.kind == target::TargetKind::Opencl) {
    if (target.device == "mali") return mali();
    GpuLimits limits;
    limits.profile = "opencl";
    limits.maxThreadsPerBlock = 256;
    // 64 along z: the OpenCL driver of NVIDIA GPUs allows no more (CUDA's limit), and a kernel
    // compiled for any OpenCL device must launch there too; a z of 128 is refused at launch.
    limits.maxBlockDimensions = {256, 256, 64};
    limits.maxSharedMemoryPerBlock = 16 * 1024;
    limits.warpSize = 1;
    return limits;
  }
  fail("target '{}' is not a GPU target (expected 'cuda' or 'opencl')", target.str());
}

}  // namespace tessel::passes
