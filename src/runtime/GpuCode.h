/// Internal to the runtime: the code of a GPU module loaded on one device, as each API holds
/// it (a CUmodule and its functions; a cl_program and its kernels), behind one launch call.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/GpuModule.h"

namespace tessel::runtime::detail {

class LoadedGpuCode {
 public:
  virtual ~LoadedGpuCode() = default;
  /// Launches kernel `index` on device buffers (device pointers, or cl_mem handles).
  virtual void launch(size_t index, const std::vector<void*>& buffers, const GpuLaunchDims& dims) const = 0;
};

/// `launches[k]`: kernel k's launch; those taking dynamic shared memory are allowed it at load.
std::shared_ptr<const LoadedGpuCode> loadCudaCode(int deviceId, const std::string& cubin, const std::vector<std::string>& kernels,
                                                  const std::vector<GpuLaunchDims>& launches);
/// `cacheBinary`: through the program binary cache (support/BinaryCache.h).
std::shared_ptr<const LoadedGpuCode> loadOpenclCode(int deviceId, const std::string& source, const std::vector<std::string>& kernels,
                                                    bool cacheBinary);

}  // namespace tessel::runtime::detail
