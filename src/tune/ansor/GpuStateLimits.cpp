#include "tune/ansor/GpuStateLimits.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "ops/GpuTiles.h"

namespace tessel::tune::ansor {

using namespace schedule;

std::optional<std::string> gpuLimitViolation(const State& state, const passes::GpuLimits& limits) {
  std::array<int64_t, 3> block{1, 1, 1};
  int64_t localBytes = 0;
  for (const Stage& s : state.stages()) {
    if (s.isPlaceholder() || s.attach == AttachKind::Inline) continue;
    for (int id : s.leaves) {
      const Iterator& it = s.iterator(id);
      int dimension = it.annotation == Annotation::ThreadX ? 0 : it.annotation == Annotation::ThreadY ? 1
                      : it.annotation == Annotation::ThreadZ ? 2 : -1;
      if (dimension >= 0) block[size_t(dimension)] = std::max(block[size_t(dimension)], it.extent);
      if (it.annotation == Annotation::VThread && it.extent > limits.maxVThreadExtent)
        return fmt::format("a virtual thread extent of {} ({}.{}) exceeds the limit of {} ({})", it.extent, s.name(), it.name,
                           limits.maxVThreadExtent, limits.profile);
    }
    // An attached stage outside shared memory is an array of each thread's.
    if (s.attach == AttachKind::At && s.memoryScope != "shared" && !state.isOutput(s.name())) {
      int64_t elements = 1;
      for (size_t d = 0; d < s.op->axes.size(); ++d) elements *= s.iterator(int(d)).extent;
      localBytes += elements * s.op->dtype.storageBytes();
    }
  }
  int64_t threads = block[0] * block[1] * block[2];
  if (threads > limits.maxThreadsPerBlock)
    return fmt::format("{} threads per block ({}x{}x{}) exceed the limit of {} ({})", threads, block[0], block[1], block[2],
                       limits.maxThreadsPerBlock, limits.profile);
  static const char* axes[] = {"x", "y", "z"};
  for (size_t d = 0; d < 3; ++d)
    if (block[d] > limits.maxBlockDimensions[d])
      return fmt::format("{} threads along threadIdx.{} exceed the limit of {} ({})", block[d], axes[d], limits.maxBlockDimensions[d],
                         limits.profile);
  int64_t shared = ops::sharedMemoryBytes(state);
  if (shared > limits.sharedMemoryLimit())
    return fmt::format("{} bytes of shared memory per block exceed the limit of {} ({})", shared, limits.sharedMemoryLimit(),
                       limits.profile);
  if (localBytes > limits.maxLocalMemoryPerThread)
    return fmt::format("{} bytes of local memory per thread exceed the limit of {} ({})", localBytes, limits.maxLocalMemoryPerThread,
                       limits.profile);
  return std::nullopt;
}

}  // namespace tessel::tune::ansor
