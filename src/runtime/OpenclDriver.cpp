#include "runtime/OpenclDriver.h"

#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "runtime/DynamicLibrary.h"
#include "support/Error.h"

namespace tessel::runtime::opencl {

namespace {

struct Loaded {
  Api api;
  std::string error;                 ///< empty when loaded with at least one device
  std::vector<cl_device_id> devices; ///< GPUs first
  std::mutex mutex;
  std::map<int, std::unique_ptr<DeviceContext>> contexts;
};

std::string deviceString(const Api& api, cl_device_id device, cl_uint what) {
  size_t size = 0;
  if (api.clGetDeviceInfo(device, what, 0, nullptr, &size) != 0) return "?";
  std::string text(size, '\0');
  api.clGetDeviceInfo(device, what, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

void load(Loaded& r) {
  // PoCL 3.1 (Debian 12's) miscompiles, under its default "loopvec" work-group method, kernels
  // whose loops with barriers hold unrolled loops: tiled convolutions gave wrong sums, while its
  // "loops" method (the work-items in plain loops between barriers) gave the right ones. Set
  // before the ICD loader starts PoCL; a user's own choice stands; other drivers ignore it.
  setenv("POCL_WORK_GROUP_METHOD", "loops", 0);
  detail::DynamicLibrary library("libOpenCL.so.1");
  if (!library.opened()) {
    r.error = fmt::format("the OpenCL loader libOpenCL.so.1 cannot be loaded ({})", library.openError());
    return;
  }
  Api& a = r.api;
  std::string& e = r.error;
  auto bind = [&](auto& function, const char* symbol) { library.bind(function, symbol); };
  bind(a.clGetPlatformIDs, "clGetPlatformIDs");
  bind(a.clGetDeviceIDs, "clGetDeviceIDs");
  bind(a.clGetDeviceInfo, "clGetDeviceInfo");
  bind(a.clCreateContext, "clCreateContext");
  bind(a.clCreateCommandQueue, "clCreateCommandQueue");
  bind(a.clCreateBuffer, "clCreateBuffer");
  bind(a.clReleaseMemObject, "clReleaseMemObject");
  bind(a.clEnqueueWriteBuffer, "clEnqueueWriteBuffer");
  bind(a.clEnqueueReadBuffer, "clEnqueueReadBuffer");
  bind(a.clFinish, "clFinish");
  bind(a.clCreateProgramWithSource, "clCreateProgramWithSource");
  bind(a.clCreateProgramWithBinary, "clCreateProgramWithBinary");
  bind(a.clBuildProgram, "clBuildProgram");
  bind(a.clGetProgramInfo, "clGetProgramInfo");
  bind(a.clGetProgramBuildInfo, "clGetProgramBuildInfo");
  bind(a.clReleaseProgram, "clReleaseProgram");
  bind(a.clCreateKernel, "clCreateKernel");
  bind(a.clReleaseKernel, "clReleaseKernel");
  bind(a.clSetKernelArg, "clSetKernelArg");
  bind(a.clEnqueueNDRangeKernel, "clEnqueueNDRangeKernel");
  e = library.missing();
  if (!e.empty()) return;
  // ocl-icd 2.3.2 (Ubuntu 24.04's loader) cuts OCL_ICD_FILENAMES at its colons in place, in
  // this process's own environment, when it reads it: every program started from here on saw
  // only the first driver. On a machine naming "libpocl.so.2:libnvidia-opencl.so.1", a
  // measurement worker or device server asked for opencl:0 got PoCL's CPU instead of the GPU.
  // The variable is put back as it was once the loader has read it (at its first call).
  const char* icdFiles = std::getenv("OCL_ICD_FILENAMES");
  std::optional<std::string> icdFilesBefore;
  if (icdFiles) icdFilesBefore = icdFiles;
  cl_uint platformCount = 0;
  cl_int status = a.clGetPlatformIDs(0, nullptr, &platformCount);
  if (icdFilesBefore) setenv("OCL_ICD_FILENAMES", icdFilesBefore->c_str(), 1);
  if (status != 0 || platformCount == 0) {
    // Where the ICD loader looked, so that a machine whose drivers are named another way
    // than /etc/OpenCL/vendors says what to check.
    auto variable = [](const char* name) {
      const char* value = std::getenv(name);
      return fmt::format("{}={}", name, value ? value : "(unset)");
    };
    e = fmt::format("no OpenCL platform is installed: clGetPlatformIDs of {} returned {} with {} platforms ({}, {}; "
                    "for the CPU: apt-get install pocl-opencl-icd)",
                    library.path(), status, platformCount, variable("OCL_ICD_VENDORS"), variable("OCL_ICD_FILENAMES"));
    return;
  }
  std::vector<cl_platform_id> platforms(platformCount);
  a.clGetPlatformIDs(platformCount, platforms.data(), nullptr);
  std::vector<cl_device_id> gpus, others;
  for (auto p : platforms) {
    cl_uint count = 0;
    if (a.clGetDeviceIDs(p, kDeviceTypeAll, 0, nullptr, &count) != 0 || count == 0) continue;
    std::vector<cl_device_id> devices(count);
    a.clGetDeviceIDs(p, kDeviceTypeAll, count, devices.data(), nullptr);
    for (auto d : devices) {
      uint64_t type = 0;
      a.clGetDeviceInfo(d, kDeviceType, sizeof(type), &type, nullptr);
      ((type & kDeviceTypeGpu) ? gpus : others).push_back(d);
    }
  }
  r.devices = gpus;
  r.devices.insert(r.devices.end(), others.begin(), others.end());
  if (r.devices.empty()) e = "the OpenCL platforms report no device";
}

Loaded& loaded() {
  static Loaded* instance = [] {
    auto* l = new Loaded;  // never destroyed: drivers may still run threads at exit
    load(*l);
    return l;
  }();
  return *instance;
}

const char* errorName(cl_int code) {
  switch (code) {
    case -1: return "CL_DEVICE_NOT_FOUND";
    case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5: return "CL_OUT_OF_RESOURCES";
    case -6: return "CL_OUT_OF_HOST_MEMORY";
    case -11: return "CL_BUILD_PROGRAM_FAILURE";
    case -30: return "CL_INVALID_VALUE";
    case -33: return "CL_INVALID_DEVICE";
    case -38: return "CL_INVALID_MEM_OBJECT";
    case -46: return "CL_INVALID_KERNEL_NAME";
    case -48: return "CL_INVALID_KERNEL";
    case -51: return "CL_INVALID_ARG_SIZE";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -55: return "CL_INVALID_WORK_ITEM_SIZE";
    case -61: return "CL_INVALID_BUFFER_SIZE";
    default: return "see CL/cl.h";
  }
}

}  // namespace

void Api::check(cl_int code, const std::string& what) const {
  TESSEL_CHECK(code == 0, "OpenCL {} failed with error {} ({})", what, code, errorName(code));
}

const Api& api() {
  const auto& r = loaded();
  TESSEL_CHECK(r.error.empty(), "no OpenCL device: {}", r.error);
  return r.api;
}

bool available(std::string* why) {
  const auto& r = loaded();
  if (!r.error.empty() && why) *why = "no OpenCL device: " + r.error;
  return r.error.empty();
}

const DeviceContext& deviceContext(int index) {
  const Api& a = api();
  auto& r = loaded();
  std::lock_guard lock(r.mutex);
  TESSEL_CHECK(index >= 0 && size_t(index) < r.devices.size(), "no OpenCL device opencl:{}: this machine has {} OpenCL device{}",
               index, r.devices.size(), r.devices.size() == 1 ? "" : "s");
  auto& slot = r.contexts[index];
  if (!slot) {
    auto c = std::make_unique<DeviceContext>();
    c->device = r.devices[size_t(index)];
    c->name = deviceString(a, c->device, kDeviceName);
    c->version = deviceString(a, c->device, kDeviceVersion);
    c->driverVersion = deviceString(a, c->device, kDriverVersion);
    const char* poclCache = std::getenv("POCL_KERNEL_CACHE");
    c->cachesBuildsItself = c->version.find(" PoCL ") != std::string::npos && !(poclCache && std::string(poclCache) == "0");
    cl_int err = 0;
    c->context = a.clCreateContext(nullptr, 1, &c->device, nullptr, nullptr, &err);
    a.check(err, fmt::format("context creation on opencl:{} ({})", index, c->name));
    c->queue = a.clCreateCommandQueue(c->context, c->device, 0, &err);
    a.check(err, fmt::format("queue creation on opencl:{} ({})", index, c->name));
    slot = std::move(c);
  }
  return *slot;
}

std::vector<std::string> deviceNames() {
  const Api& a = api();
  std::vector<std::string> names;
  for (auto d : loaded().devices) names.push_back(deviceString(a, d, kDeviceName));
  return names;
}

}  // namespace tessel::runtime::opencl
