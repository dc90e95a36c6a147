/// What a GPU reports about itself: its name and the limits kernels must respect (the
/// parameters seed 001 reads from the device: max threads per block, shared memory per
/// block, warp size). Filled by the cuda and opencl devices from the driver.
#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace tessel::runtime {

struct GpuDeviceInfo {
  std::string name;                         ///< "NVIDIA H100 80GB HBM3", "cpu-haswell-..." (PoCL)
  std::string architecture;                 ///< "sm_90" for CUDA; the OpenCL version otherwise
  int64_t maxThreadsPerBlock = 0;
  std::array<int64_t, 3> maxBlockDimensions{0, 0, 0};
  int64_t maxSharedMemoryPerBlock = 0;      ///< bytes (OpenCL: local memory)
  int64_t maxSharedMemoryPerBlockOptIn = 0;  ///< bytes a kernel may opt into dynamically (CUDA; 0: none)
  int64_t warpSize = 1;                     ///< 1 where the API has no such notion (OpenCL)
  int64_t computeUnits = 0;                 ///< streaming multiprocessors / compute units
};

}  // namespace tessel::runtime
