/// The OpenCL API, loaded with dlopen from libOpenCL.so.1 (the ICD loader, which finds the
/// installed drivers: NVIDIA's, PoCL on the CPU, a Mali driver), so that the runtime builds and
/// runs without OpenCL installed. One context and in-order queue per device, made on first use
/// and kept for the process. Devices are numbered GPUs first (in platform order), then the
/// others (PoCL's CPU device). Internal to the runtime: OpenclDevice.h and GpuModule.h are the
/// interfaces to use.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessel::runtime::opencl {

using cl_int = int32_t;
using cl_uint = uint32_t;
using cl_platform_id = struct _cl_platform_id*;
using cl_device_id = struct _cl_device_id*;
using cl_context = struct _cl_context*;
using cl_command_queue = struct _cl_command_queue*;
using cl_mem = struct _cl_mem*;
using cl_program = struct _cl_program*;
using cl_kernel = struct _cl_kernel*;
using cl_event = struct _cl_event*;

inline constexpr uint64_t kDeviceTypeGpu = 1 << 2;
inline constexpr uint64_t kDeviceTypeAll = 0xFFFFFFFF;
inline constexpr cl_uint kDeviceType = 0x1000;
inline constexpr cl_uint kDeviceMaxComputeUnits = 0x1002;
inline constexpr cl_uint kDeviceMaxWorkGroupSize = 0x1004;
inline constexpr cl_uint kDeviceMaxWorkItemSizes = 0x1005;
inline constexpr cl_uint kDeviceLocalMemSize = 0x1023;
inline constexpr cl_uint kDeviceName = 0x102B;
inline constexpr cl_uint kDeviceVersion = 0x102F;
inline constexpr cl_uint kDriverVersion = 0x102D;
inline constexpr cl_uint kProgramBinarySizes = 0x1165;
inline constexpr cl_uint kProgramBinaries = 0x1166;
inline constexpr cl_uint kProgramBuildLog = 0x1183;
inline constexpr uint64_t kMemReadWrite = 1 << 0;

struct Api {
  cl_int (*clGetPlatformIDs)(cl_uint, cl_platform_id*, cl_uint*) = nullptr;
  cl_int (*clGetDeviceIDs)(cl_platform_id, uint64_t, cl_uint, cl_device_id*, cl_uint*) = nullptr;
  cl_int (*clGetDeviceInfo)(cl_device_id, cl_uint, size_t, void*, size_t*) = nullptr;
  cl_context (*clCreateContext)(const intptr_t*, cl_uint, const cl_device_id*, void*, void*, cl_int*) = nullptr;
  cl_command_queue (*clCreateCommandQueue)(cl_context, cl_device_id, uint64_t, cl_int*) = nullptr;
  cl_mem (*clCreateBuffer)(cl_context, uint64_t, size_t, void*, cl_int*) = nullptr;
  cl_int (*clReleaseMemObject)(cl_mem) = nullptr;
  cl_int (*clEnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, const void*, cl_uint, const cl_event*,
                                 cl_event*) = nullptr;
  cl_int (*clEnqueueReadBuffer)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, void*, cl_uint, const cl_event*,
                                cl_event*) = nullptr;
  cl_int (*clFinish)(cl_command_queue) = nullptr;
  cl_program (*clCreateProgramWithSource)(cl_context, cl_uint, const char**, const size_t*, cl_int*) = nullptr;
  cl_program (*clCreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id*, const size_t*, const unsigned char**, cl_int*,
                                         cl_int*) = nullptr;
  cl_int (*clBuildProgram)(cl_program, cl_uint, const cl_device_id*, const char*, void*, void*) = nullptr;
  cl_int (*clGetProgramInfo)(cl_program, cl_uint, size_t, void*, size_t*) = nullptr;
  cl_int (*clGetProgramBuildInfo)(cl_program, cl_device_id, cl_uint, size_t, void*, size_t*) = nullptr;
  cl_int (*clReleaseProgram)(cl_program) = nullptr;
  cl_kernel (*clCreateKernel)(cl_program, const char*, cl_int*) = nullptr;
  cl_int (*clReleaseKernel)(cl_kernel) = nullptr;
  cl_int (*clSetKernelArg)(cl_kernel, cl_uint, size_t, const void*) = nullptr;
  cl_int (*clEnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*, const size_t*, cl_uint,
                                   const cl_event*, cl_event*) = nullptr;

  /// Throws Error "OpenCL <what> failed with error <code> (<name>)" unless code is 0.
  void check(cl_int code, const std::string& what) const;
};

/// One device with its context and queue.
struct DeviceContext {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string name;
  std::string version, driverVersion;  ///< what a cached program binary is valid for
  /// The driver keeps its own cache of built programs: PoCL (its CL_DEVICE_VERSION names it),
  /// unless POCL_KERNEL_CACHE=0 turned that cache off (PoCL's documentation, "Tuning pocl
  /// behavior with ENV variables").
  bool cachesBuildsItself = false;
};

/// The API, loaded once. Throws Error "no OpenCL device: <why>" when libOpenCL.so.1 is missing
/// or no platform has a device.
const Api& api();
/// Whether api() would succeed with at least one device; `why` receives the message if not.
bool available(std::string* why = nullptr);
/// Device `index` (GPUs first), with its context and queue made on first use. Throws Error
/// naming the index and how many devices exist.
const DeviceContext& deviceContext(int index);
/// The names of the devices in index order.
std::vector<std::string> deviceNames();

}  // namespace tessel::runtime::opencl
