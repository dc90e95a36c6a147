/// The hardware parameters a GPU kernel must respect (TVM's names in brackets): threads per
/// block [max_threads_per_block], the size of each block dimension, shared memory per block
/// [max_shared_memory_per_block], local memory per thread [max_local_memory_per_block, per
/// thread here], virtual threads [max_vthread_extent], and the warp size [warp_size]. Named
/// profiles serve targets compiled for without the device at hand; a runtime device reports
/// its own (runtime/CudaDevice.h, runtime/OpenclDevice.h).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "target/Target.h"

namespace tessel::passes {

struct GpuLimits {
  std::string profile;  ///< where the numbers come from, named in errors ("cuda sm_90")
  int64_t maxThreadsPerBlock = 1024;
  std::array<int64_t, 3> maxBlockDimensions{1024, 1024, 64};
  int64_t maxSharedMemoryPerBlock = 48 * 1024;
  /// Shared memory a block may take beyond maxSharedMemoryPerBlock, opted into per kernel: CUDA's
  /// dynamic shared memory, up to the device's CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
  /// (227 KiB on compute capability 9.0: CUDA C++ Programming Guide, "Technical Specifications per
  /// Compute Capability"); 0 where a kernel has no such way (OpenCL). Default schedules size
  /// their tiles by maxSharedMemoryPerBlock; tuned ones (deep copy pipelines) may use this.
  int64_t maxDynamicSharedMemoryPerBlock = 0;
  int64_t maxLocalMemoryPerThread = 16 * 1024;
  int64_t maxVThreadExtent = 8;
  int64_t warpSize = 32;
  /// Streaming multiprocessors / compute units [multi_processor_count]: how many blocks run at
  /// once, which the default schedule fills; 0 where unknown (the profiles of other devices).
  int64_t multiProcessorCount = 0;
  /// The kernels are compiled for an instruction set with TF32 tensor-core instructions
  /// (mma.m16n8k8 .tf32: CUDA sm_80 and later; a fact of the target's -arch, so every CUDA
  /// target here, whose only arch is sm_90, has them).
  bool tf32TensorCores = false;
  /// The instruction set copies device memory into shared memory asynchronously (PTX ISA
  /// `cp.async`, sm_80 and later, the same fact of the -arch as tf32TensorCores): double-buffered
  /// copies then land in shared memory directly, several chunks ahead (passes::pipelineAsyncCopies).
  bool asyncCopies = false;

  /// NVIDIA Hopper (sm_90): 1024 threads, 48 KiB of static shared memory per block and up to
  /// 227 KiB dynamically, the H100 SXM's 132 SMs, TF32 tensor cores, asynchronous copies.
  static GpuLimits cudaSm90();
  /// The most shared memory one block may use, statically or dynamically.
  int64_t sharedMemoryLimit() const { return std::max(maxSharedMemoryPerBlock, maxDynamicSharedMemoryPerBlock); }
  /// An ARM Mali GPU (Bifrost/Valhall) as TVM's `opencl -device=mali` target assumes it: 256
  /// work-items, 32 KiB of local memory.
  static GpuLimits mali();
  /// The profile of a target: "cuda ..." is sm_90 (the only -arch= accepted for now),
  /// "opencl -device=mali" Mali, any other "opencl" what every OpenCL GPU allows (256
  /// work-items, at most 64 along z, 16 KiB local memory). Throws Error naming the target otherwise.
  static GpuLimits forTarget(const target::Target& target);
};

}  // namespace tessel::passes
