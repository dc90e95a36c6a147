#include "rpc/GpuParametersProto.h"

#include <fmt/format.h>

#include "support/Error.h"

namespace tessel::rpc {

void writeGpuParameters(const std::string& device, const passes::GpuLimits& limits, proto::GpuParameters* out) {
  out->set_device(device);
  out->set_device_name(limits.profile);
  out->set_max_threads_per_block(limits.maxThreadsPerBlock);
  out->set_max_shared_memory_per_block(limits.maxSharedMemoryPerBlock);
  out->set_max_dynamic_shared_memory_per_block(limits.maxDynamicSharedMemoryPerBlock);
  out->set_warp_size(limits.warpSize);
  out->set_max_vthread_extent(limits.maxVThreadExtent);
  for (int64_t d : limits.maxBlockDimensions) out->add_max_block_dims(d);
  out->set_multi_processor_count(limits.multiProcessorCount);
  out->set_max_local_memory_per_thread(limits.maxLocalMemoryPerThread);
}

passes::GpuLimits readGpuParameters(const proto::GpuParameters& p, const std::string& where) {
  auto positive = [&](const char* field, int64_t value) {
    TESSEL_CHECK(value >= 1, "{} reports {} = {} for its GPU {}: a limit must be at least 1", where, field, value, p.device());
    return value;
  };
  passes::GpuLimits limits;
  limits.profile = p.device_name().empty() ? p.device() : p.device_name();  // the server's profile names its device
  limits.maxThreadsPerBlock = positive("max_threads_per_block", p.max_threads_per_block());
  limits.maxSharedMemoryPerBlock = positive("max_shared_memory_per_block", p.max_shared_memory_per_block());
  TESSEL_CHECK(p.max_dynamic_shared_memory_per_block() >= 0, "{} reports max_dynamic_shared_memory_per_block = {} for its GPU {}: must not be negative",
               where, p.max_dynamic_shared_memory_per_block(), p.device());
  limits.maxDynamicSharedMemoryPerBlock = p.max_dynamic_shared_memory_per_block();
  limits.warpSize = positive("warp_size", p.warp_size());
  limits.maxVThreadExtent = positive("max_vthread_extent", p.max_vthread_extent());
  limits.maxLocalMemoryPerThread = positive("max_local_memory_per_thread", p.max_local_memory_per_thread());
  TESSEL_CHECK(p.max_block_dims_size() == 3, "{} reports {} max_block_dims for its GPU {}: expected 3 (x, y, z)", where,
               p.max_block_dims_size(), p.device());
  for (int d = 0; d < 3; ++d) limits.maxBlockDimensions[size_t(d)] = positive("max_block_dims", p.max_block_dims(d));
  TESSEL_CHECK(p.multi_processor_count() >= 0, "{} reports multi_processor_count = {} for its GPU {}: must not be negative", where,
               p.multi_processor_count(), p.device());
  limits.multiProcessorCount = p.multi_processor_count();
  // Every CUDA target compiles for sm_90 (passes::GpuLimits::forTarget), which has both.
  limits.tf32TensorCores = p.device().rfind("cuda", 0) == 0;
  limits.asyncCopies = limits.tf32TensorCores;
  return limits;
}

}  // namespace tessel::rpc
