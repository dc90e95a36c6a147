#include "runtime/OpenclDevice.h"

#include <fmt/format.h>

#include "runtime/OpenclDriver.h"
#include "support/Error.h"

namespace tessel::runtime {

namespace {

using namespace opencl;

class OpenclDeviceAPI : public DeviceAPI {
 public:
  explicit OpenclDeviceAPI(int deviceId) : deviceId_(deviceId), device_(deviceContext(deviceId)) {}

  void* allocate(size_t bytes, size_t) override {
    // A cl_mem is a handle, not an address: alignment is the driver's business.
    cl_int err = 0;
    cl_mem buffer = api().clCreateBuffer(device_.context, kMemReadWrite, std::max<size_t>(bytes, 1), nullptr, &err);
    api().check(err, fmt::format("allocation of {} bytes on opencl:{}", bytes, deviceId_));
    return buffer;
  }
  void release(void* pointer) override {
    if (pointer) api().clReleaseMemObject(static_cast<cl_mem>(pointer));
  }
  void copyFromHost(void* deviceDst, const void* hostSrc, size_t bytes) override {
    if (bytes == 0) return;
    api().check(api().clEnqueueWriteBuffer(device_.queue, static_cast<cl_mem>(deviceDst), 1, 0, bytes, hostSrc, 0, nullptr,
                                           nullptr),
                "copy to the device");
  }
  void copyToHost(void* hostDst, const void* deviceSrc, size_t bytes) override {
    if (bytes == 0) return;
    api().check(api().clEnqueueReadBuffer(device_.queue, static_cast<cl_mem>(const_cast<void*>(deviceSrc)), 1, 0, bytes,
                                          hostDst, 0, nullptr, nullptr),
                "copy from the device");
  }
  void synchronize() override { api().check(api().clFinish(device_.queue), fmt::format("synchronization of opencl:{}", deviceId_)); }
  std::string name() const override { return fmt::format("opencl ({})", device_.name); }

 private:
  int deviceId_;
  const DeviceContext& device_;
};

}  // namespace

std::shared_ptr<DeviceAPI> makeOpenclDeviceAPI(int deviceId) { return std::make_shared<OpenclDeviceAPI>(deviceId); }

bool openclDeviceAvailable(std::string* why) { return opencl::available(why); }

GpuDeviceInfo openclDeviceInfo(int deviceId) {
  const Api& a = api();
  const DeviceContext& c = deviceContext(deviceId);
  auto value = [&](cl_uint what, auto& out) {
    a.check(a.clGetDeviceInfo(c.device, what, sizeof(out), &out, nullptr), fmt::format("device query {:#x}", what));
  };
  GpuDeviceInfo info;
  info.name = c.name;
  size_t size = 0;
  a.clGetDeviceInfo(c.device, kDeviceVersion, 0, nullptr, &size);
  std::string version(size, '\0');
  a.clGetDeviceInfo(c.device, kDeviceVersion, size, version.data(), nullptr);
  while (!version.empty() && version.back() == '\0') version.pop_back();
  info.architecture = version;
  size_t workGroup = 0;
  value(kDeviceMaxWorkGroupSize, workGroup);
  info.maxThreadsPerBlock = int64_t(workGroup);
  size_t items[3] = {0, 0, 0};
  a.check(a.clGetDeviceInfo(c.device, kDeviceMaxWorkItemSizes, sizeof(items), items, nullptr), "work-item sizes query");
  info.maxBlockDimensions = {int64_t(items[0]), int64_t(items[1]), int64_t(items[2])};
  uint64_t local = 0;
  value(kDeviceLocalMemSize, local);
  info.maxSharedMemoryPerBlock = int64_t(local);
  cl_uint units = 0;
  value(kDeviceMaxComputeUnits, units);
  info.computeUnits = units;
  info.warpSize = 1;
  return info;
}

SecondsClock openclQueueClock(int deviceId) {
  const DeviceContext& c = deviceContext(deviceId);
  return [&c]() {
    api().check(api().clFinish(c.queue), "queue wait");
    return steadySeconds();
  };
}

}  // namespace tessel::runtime
