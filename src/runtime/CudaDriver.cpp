#include "runtime/CudaDriver.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include "support/Error.h"

namespace tessel::runtime::cuda {

namespace {

struct LoadResult {
  Driver driver;
  std::string error;  ///< empty when loaded and a device exists
};

template <class F>
bool bind(void* handle, F& function, const char* name, std::string& error) {
  function = reinterpret_cast<F>(dlsym(handle, name));
  if (!function && error.empty()) error = fmt::format("libcuda.so.1 lacks {} (driver too old?)", name);
  return function != nullptr;
}

LoadResult load() {
  LoadResult r;
  // Kept loaded for the process: device memory and modules outlive any one user.
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* message = dlerror();
    r.error = fmt::format("the NVIDIA driver library libcuda.so.1 cannot be loaded ({})", message ? message : "?");
    return r;
  }
  Driver& d = r.driver;
  std::string& e = r.error;
  bind(handle, d.cuInit, "cuInit", e);
  bind(handle, d.cuDriverGetVersion, "cuDriverGetVersion", e);
  bind(handle, d.cuGetErrorName, "cuGetErrorName", e);
  bind(handle, d.cuGetErrorString, "cuGetErrorString", e);
  bind(handle, d.cuDeviceGetCount, "cuDeviceGetCount", e);
  bind(handle, d.cuDeviceGet, "cuDeviceGet", e);
  bind(handle, d.cuDeviceGetName, "cuDeviceGetName", e);
  bind(handle, d.cuDeviceGetAttribute, "cuDeviceGetAttribute", e);
  bind(handle, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", e);
  bind(handle, d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", e);
  bind(handle, d.cuCtxSetCurrent, "cuCtxSetCurrent", e);
  bind(handle, d.cuCtxSynchronize, "cuCtxSynchronize", e);
  bind(handle, d.cuMemAlloc, "cuMemAlloc_v2", e);
  bind(handle, d.cuMemFree, "cuMemFree_v2", e);
  bind(handle, d.cuMemcpyHtoD, "cuMemcpyHtoD_v2", e);
  bind(handle, d.cuMemcpyDtoH, "cuMemcpyDtoH_v2", e);
  bind(handle, d.cuModuleLoadData, "cuModuleLoadData", e);
  bind(handle, d.cuModuleUnload, "cuModuleUnload", e);
  bind(handle, d.cuModuleGetFunction, "cuModuleGetFunction", e);
  bind(handle, d.cuLaunchKernel, "cuLaunchKernel", e);
  bind(handle, d.cuEventCreate, "cuEventCreate", e);
  bind(handle, d.cuEventRecord, "cuEventRecord", e);
  bind(handle, d.cuEventSynchronize, "cuEventSynchronize", e);
  bind(handle, d.cuEventDestroy, "cuEventDestroy_v2", e);
  bind(handle, d.cuStreamCreate, "cuStreamCreate", e);
  bind(handle, d.cuStreamSynchronize, "cuStreamSynchronize", e);
  bind(handle, d.cuStreamBeginCapture, "cuStreamBeginCapture_v2", e);
  bind(handle, d.cuStreamEndCapture, "cuStreamEndCapture", e);
  bind(handle, d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", e);
  bind(handle, d.cuGraphLaunch, "cuGraphLaunch", e);
  bind(handle, d.cuGraphExecDestroy, "cuGraphExecDestroy", e);
  bind(handle, d.cuGraphDestroy, "cuGraphDestroy", e);
  // CUDA 12.8 added the _v2 of cuEventElapsedTime; CUDA 13 drivers may lack the old one.
  d.cuEventElapsedTime = reinterpret_cast<decltype(d.cuEventElapsedTime)>(dlsym(handle, "cuEventElapsedTime_v2"));
  if (!d.cuEventElapsedTime) bind(handle, d.cuEventElapsedTime, "cuEventElapsedTime", e);
  if (!e.empty()) return r;
  if (CUresult res = d.cuInit(0); res != 0) {
    const char* name = nullptr;
    d.cuGetErrorName(res, &name);
    e = fmt::format("cuInit failed with {} (is a GPU present and the driver loaded?)", name ? name : std::to_string(res));
    return r;
  }
  int count = 0;
  if (d.cuDeviceGetCount(&count) != 0 || count == 0) e = "the driver reports no CUDA-capable device";
  return r;
}

const LoadResult& loaded() {
  static LoadResult result = load();
  return result;
}

}  // namespace

void Driver::check(CUresult result, const std::string& what) const {
  if (result == 0) return;
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  fail("CUDA {} failed: {} ({})", what, name ? name : std::to_string(result), text ? text : "no description");
}

const Driver& driver() {
  const auto& r = loaded();
  TESSEL_CHECK(r.error.empty(), "no CUDA device: {}", r.error);
  return r.driver;
}

bool available(std::string* why) {
  const auto& r = loaded();
  if (!r.error.empty() && why) *why = "no CUDA device: " + r.error;
  return r.error.empty();
}

}  // namespace tessel::runtime::cuda
