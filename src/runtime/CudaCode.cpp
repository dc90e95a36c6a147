#include <fmt/format.h>

#include "runtime/CudaDevice.h"
#include "runtime/CudaDriver.h"
#include "runtime/GpuCode.h"
#include "support/Error.h"

namespace tessel::runtime::detail {

namespace {

using namespace cuda;

class CudaCode : public LoadedGpuCode {
 public:
  CudaCode(int deviceId, const std::string& cubin, const std::vector<std::string>& kernels, const std::vector<GpuLaunchDims>& launches)
      : deviceId_(deviceId) {
    makeContextCurrent(deviceId);
    const Driver& d = driver();
    d.check(d.cuModuleLoadData(&module_, cubin.data()), fmt::format("module load on cuda:{}", deviceId));
    for (auto& name : kernels) {
      CUfunction f = nullptr;
      CUresult r = d.cuModuleGetFunction(&f, module_, name.c_str());
      if (r != 0) {
        d.cuModuleUnload(module_);
        d.check(r, fmt::format("lookup of kernel '{}' in the cubin", name));
      }
      functions_.push_back(f);
    }
    // A kernel launched with more than 48 KiB of dynamic shared memory must be allowed it first
    // (CUDA Driver API: cuFuncSetAttribute, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
    for (size_t k = 0; k < kernels.size() && k < launches.size(); ++k) {
      if (!launches[k].dynamicShared) continue;
      CUresult r = d.cuFuncSetAttribute(functions_[k], kFuncAttrMaxDynamicSharedSizeBytes, int(launches[k].sharedBytes));
      if (r != 0) {
        d.cuModuleUnload(module_);
        d.check(r, fmt::format("allowing kernel '{}' {} bytes of dynamic shared memory", kernels[k], launches[k].sharedBytes));
      }
    }
  }
  ~CudaCode() override {
    makeContextCurrent(deviceId_);
    driver().cuModuleUnload(module_);
  }

  void launch(size_t index, const std::vector<void*>& buffers, const GpuLaunchDims& dims) const override {
    makeContextCurrent(deviceId_);
    std::vector<CUdeviceptr> pointers;
    for (void* b : buffers) pointers.push_back(reinterpret_cast<CUdeviceptr>(b));
    std::vector<void*> params;
    for (auto& p : pointers) params.push_back(&p);
    const Driver& d = driver();
    unsigned dynamicBytes = dims.dynamicShared ? unsigned(dims.sharedBytes) : 0u;
    d.check(d.cuLaunchKernel(functions_.at(index), unsigned(dims.grid[0]), unsigned(dims.grid[1]), unsigned(dims.grid[2]),
                             unsigned(dims.block[0]), unsigned(dims.block[1]), unsigned(dims.block[2]), dynamicBytes,
                             launchStream(deviceId_), params.data(), nullptr),
            "kernel launch");
  }

 private:
  int deviceId_;
  CUmodule module_ = nullptr;
  std::vector<CUfunction> functions_;
};

}  // namespace

std::shared_ptr<const LoadedGpuCode> loadCudaCode(int deviceId, const std::string& cubin, const std::vector<std::string>& kernels,
                                                  const std::vector<GpuLaunchDims>& launches) {
  return std::make_shared<CudaCode>(deviceId, cubin, kernels, launches);
}

}  // namespace tessel::runtime::detail
