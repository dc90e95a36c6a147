/// Loading and launching GPU kernels. A GPU module is a manifest (Module.h's format, with
/// "device": "cuda" or "opencl" and each kernel's "launch": {"grid": [x, y, z], "block": [x, y,
/// z], "shared_bytes": n}) and the code: a cubin for CUDA (loaded with cuModuleLoadData), OpenCL
/// C for OpenCL (built by the driver when the module is loaded). On disk it is a directory
/// holding manifest.json and kernels.cubin or kernels.cl. Kernels take their tensors on the
/// module's device, are checked against the manifest like CPU kernels, and run asynchronously
/// on the device's default stream / queue (DeviceAPI::synchronize waits for them).
#pragma once
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/Module.h"
#include "support/ErrorType.h"
#include "support/GpuModuleFormat.h"

namespace tessel::runtime {

struct GpuLaunchDims {
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  int64_t sharedBytes = 0;
  /// sharedBytes is CUDA dynamic shared memory: the kernel is launched with it (and allowed it).
  bool dynamicShared = false;
};

namespace detail {
struct LoadedGpuModule;
}

/// The device's own compiler rejected the module's code (OpenCL C that the driver does not
/// build): the code is wrong for that device, which a tuner records as a compile error of the
/// candidate rather than a failure of the device.
class DeviceCompileError : public Error {
 public:
  using Error::Error;
};

class GpuKernel {
 public:
  GpuKernel() = default;
  const std::string& name() const;
  const KernelSpec& spec() const;
  const GpuLaunchDims& launch() const;
  /// Checks the arguments (checkKernelArguments), then launches; does not wait.
  void call(const std::vector<Tensor>& args) const;
  /// Checks once; the closure launches on the same tensors (kept alive) each time.
  std::function<void()> bind(const std::vector<Tensor>& args) const;
  /// Launches on prebuilt ABI arguments (their data are device pointers or cl_mem handles of
  /// this module's device) without any check: the caller vouches for them (the graph executor
  /// checked its plan against the manifest when it loaded).
  void launchPacked(const TesselTensor* args, int numArgs) const;

 private:
  friend class GpuModule;
  GpuKernel(std::shared_ptr<const detail::LoadedGpuModule> module, size_t index) : module_(std::move(module)), index_(index) {}
  void launchUnchecked(const std::vector<Tensor>& args) const;
  void launchBuffers(const std::vector<void*>& buffers) const;
  std::shared_ptr<const detail::LoadedGpuModule> module_;
  size_t index_ = 0;
};

class GpuModule {
 public:
  /// Loads a module directory onto the device of its kind with index `deviceId`. Throws Error
  /// naming the file for a missing or malformed part, "no CUDA device: ..." / "no OpenCL device:
  /// ..." without the device, and DeviceCompileError with the driver's log for OpenCL C that
  /// does not build.
  static GpuModule load(const std::string& directory, int deviceId = 0);
  /// The same from memory: the manifest's text and the code. Unlike load(), an OpenCL module
  /// from memory does not go through the program binary cache (support/BinaryCache.h): what
  /// is loaded from memory is a tuning candidate, run once, whose binary would only fill it.
  static GpuModule fromMemory(const std::string& manifestText, const std::string& code, int deviceId = 0);

  Device device() const;
  std::vector<std::string> kernelNames() const;
  /// Throws Error listing the kernels when the name is unknown.
  GpuKernel kernel(const std::string& name) const;

 private:
  static GpuModule make(const std::string& manifestText, const std::string& code, int deviceId, bool cacheOpenclBinary);
  std::shared_ptr<const detail::LoadedGpuModule> module_;
};

}  // namespace tessel::runtime
