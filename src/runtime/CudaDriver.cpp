#include "runtime/CudaDriver.h"

#include <fmt/format.h>

#include "runtime/DynamicLibrary.h"
#include "support/Error.h"

namespace tessel::runtime::cuda {

namespace {

struct LoadResult {
  Driver driver;
  std::string error;  ///< empty when loaded and a device exists
};

LoadResult load() {
  LoadResult r;
  detail::DynamicLibrary library("libcuda.so.1");
  if (!library.opened()) {
    r.error = fmt::format("the NVIDIA driver library libcuda.so.1 cannot be loaded ({})", library.openError());
    return r;
  }
  Driver& d = r.driver;
  auto bind = [&](auto& function, const char* symbol) { library.bind(function, symbol, " (driver too old?)"); };
  bind(d.cuInit, "cuInit");
  bind(d.cuDriverGetVersion, "cuDriverGetVersion");
  bind(d.cuGetErrorName, "cuGetErrorName");
  bind(d.cuGetErrorString, "cuGetErrorString");
  bind(d.cuDeviceGetCount, "cuDeviceGetCount");
  bind(d.cuDeviceGet, "cuDeviceGet");
  bind(d.cuDeviceGetName, "cuDeviceGetName");
  bind(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  bind(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  bind(d.cuCtxSetCurrent, "cuCtxSetCurrent");
  bind(d.cuCtxSynchronize, "cuCtxSynchronize");
  bind(d.cuMemAlloc, "cuMemAlloc_v2");
  bind(d.cuMemFree, "cuMemFree_v2");
  bind(d.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  bind(d.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  bind(d.cuModuleLoadData, "cuModuleLoadData");
  bind(d.cuModuleUnload, "cuModuleUnload");
  bind(d.cuModuleGetFunction, "cuModuleGetFunction");
  bind(d.cuFuncSetAttribute, "cuFuncSetAttribute");
  bind(d.cuLaunchKernel, "cuLaunchKernel");
  bind(d.cuEventCreate, "cuEventCreate");
  bind(d.cuEventRecord, "cuEventRecord");
  bind(d.cuEventSynchronize, "cuEventSynchronize");
  bind(d.cuEventDestroy, "cuEventDestroy_v2");
  bind(d.cuStreamCreate, "cuStreamCreate");
  bind(d.cuStreamSynchronize, "cuStreamSynchronize");
  bind(d.cuStreamBeginCapture, "cuStreamBeginCapture_v2");
  bind(d.cuStreamEndCapture, "cuStreamEndCapture");
  bind(d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
  bind(d.cuGraphLaunch, "cuGraphLaunch");
  bind(d.cuGraphExecDestroy, "cuGraphExecDestroy");
  bind(d.cuGraphDestroy, "cuGraphDestroy");
  // CUDA 12.8 added the _v2 of cuEventElapsedTime; CUDA 13 drivers may lack the old one.
  if (!library.bindOptional(d.cuEventElapsedTime, "cuEventElapsedTime_v2")) bind(d.cuEventElapsedTime, "cuEventElapsedTime");
  std::string& e = r.error;
  e = library.missing();
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
