#include "passes/GpuLimits.h"

#include <sstream>

#include "support/Error.h"

namespace tessel::passes {

GpuLimits GpuLimits::cudaSm90() {
  GpuLimits limits;
  limits.profile = "cuda sm_90";
  limits.multiProcessorCount = 132;
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

GpuLimits GpuLimits::forTarget(const std::string& target) {
  std::istringstream words(target);
  std::string kind, word, arch, device;
  words >> kind;
  while (words >> word) {
    if (word.rfind("-arch=", 0) == 0) arch = word.substr(6);
    else if (word.rfind("-device=", 0) == 0) device = word.substr(8);
  }
  if (kind == "cuda") {
    TESSEL_CHECK(arch.empty() || arch == "sm_90", "target '{}': -arch={} is not supported yet (only sm_90)", target, arch);
    return cudaSm90();
  }
  if (kind == "opencl") {
    if (device == "mali") return mali();
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
  fail("target '{}' is not a GPU target (expected 'cuda' or 'opencl')", target);
}

}  // namespace tessel::passes
