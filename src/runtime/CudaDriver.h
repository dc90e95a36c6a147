/// The CUDA driver API, loaded with dlopen from libcuda.so.1 (the NVIDIA driver), so that one
/// build of the runtime serves machines with and without a GPU and needs no CUDA toolkit. Only
/// the calls the runtime makes are bound; their types are declared here (the ABI is stable).
/// Internal to the runtime: CudaDevice.h and GpuModule.h are the interfaces to use.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace tessel::runtime::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;

/// cuStreamBeginCapture's mode CU_STREAM_CAPTURE_MODE_RELAXED: other threads may keep using
/// CUDA while one captures (a capture sees only its own stream's work).
inline constexpr int kStreamCaptureModeRelaxed = 2;

// Device attributes (cuda.h's CU_DEVICE_ATTRIBUTE_*).
inline constexpr int kAttrMaxThreadsPerBlock = 1;
inline constexpr int kAttrMaxBlockDimX = 2;
inline constexpr int kAttrMaxBlockDimY = 3;
inline constexpr int kAttrMaxBlockDimZ = 4;
inline constexpr int kAttrMaxSharedMemoryPerBlock = 8;
inline constexpr int kAttrWarpSize = 10;
inline constexpr int kAttrMultiprocessorCount = 16;
inline constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;
/// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: the dynamic shared memory a kernel may be launched with.
inline constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;
inline constexpr int kAttrComputeCapabilityMajor = 75;
inline constexpr int kAttrComputeCapabilityMinor = 76;

struct Driver {
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void**, void**) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuStreamBeginCapture)(CUstream, int) = nullptr;
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph*) = nullptr;
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph) = nullptr;

  /// Throws Error "CUDA <what> failed: CUDA_ERROR_X (description)" unless result is success.
  void check(CUresult result, const std::string& what) const;
};

/// The driver, loaded and initialized once (cuInit) with at least one device. Throws Error
/// "no CUDA device: <why>" when libcuda.so.1 is missing, cuInit fails or there is no device.
const Driver& driver();

/// Whether driver() would succeed; `why` receives the message when it would not.
bool available(std::string* why = nullptr);

}  // namespace tessel::runtime::cuda
