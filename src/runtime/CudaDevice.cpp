#include "runtime/CudaDevice.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "runtime/CudaDriver.h"
#include "support/Error.h"

namespace tessel::runtime {

namespace cuda {

namespace {

struct Contexts {
  std::mutex mutex;
  std::map<int, CUcontext> retained;  // primary contexts, kept for the process
  std::map<int, CUstream> streams;    // the launch stream of each device, kept likewise
};

Contexts& contexts() {
  static Contexts instance;
  return instance;
}

CUdevice deviceHandle(int deviceId) {
  const Driver& d = driver();
  int count = 0;
  d.check(d.cuDeviceGetCount(&count), "device count");
  TESSEL_CHECK(deviceId >= 0 && deviceId < count, "no CUDA device cuda:{}: this machine has {} CUDA device{}", deviceId,
               count, count == 1 ? "" : "s");
  CUdevice device = 0;
  d.check(d.cuDeviceGet(&device, deviceId), "device lookup");
  return device;
}

}  // namespace

void makeContextCurrent(int deviceId) {
  const Driver& d = driver();
  auto& c = contexts();
  CUcontext context = nullptr;
  {
    std::lock_guard lock(c.mutex);
    auto it = c.retained.find(deviceId);
    if (it == c.retained.end()) {
      CUdevice device = deviceHandle(deviceId);
      d.check(d.cuDevicePrimaryCtxRetain(&context, device), fmt::format("context creation on cuda:{}", deviceId));
      c.retained[deviceId] = context;
    } else {
      context = it->second;
    }
  }
  d.check(d.cuCtxSetCurrent(context), "context activation");
}

CUstream launchStream(int deviceId) {
  makeContextCurrent(deviceId);
  auto& c = contexts();
  std::lock_guard lock(c.mutex);
  auto it = c.streams.find(deviceId);
  if (it != c.streams.end()) return it->second;
  const Driver& d = driver();
  CUstream stream = nullptr;
  // Flags 0: a blocking stream, which the legacy default stream (the synchronous copies,
  // event records) waits for and which waits for it, so the order of work is program order.
  d.check(d.cuStreamCreate(&stream, 0), fmt::format("stream creation on cuda:{}", deviceId));
  c.streams[deviceId] = stream;
  return stream;
}

}  // namespace cuda

namespace {

using namespace cuda;

class CudaDeviceAPI : public DeviceAPI {
 public:
  explicit CudaDeviceAPI(int deviceId) : deviceId_(deviceId), info_(cudaDeviceInfo(deviceId)) {}

  void* allocate(size_t bytes, size_t alignment) override {
    // cuMemAlloc aligns to at least 256 bytes.
    TESSEL_CHECK(alignment <= 256, "cuda:{}: alignment {} exceeds the 256 bytes device allocations have", deviceId_, alignment);
    makeContextCurrent(deviceId_);
    CUdeviceptr pointer = 0;
    driver().check(driver().cuMemAlloc(&pointer, std::max<size_t>(bytes, 1)),
                   fmt::format("allocation of {} bytes on cuda:{}", bytes, deviceId_));
    return reinterpret_cast<void*>(pointer);
  }
  void release(void* pointer) override {
    if (!pointer) return;
    makeContextCurrent(deviceId_);
    driver().check(driver().cuMemFree(reinterpret_cast<CUdeviceptr>(pointer)), "free");
  }
  void copyFromHost(void* deviceDst, const void* hostSrc, size_t bytes) override {
    if (bytes == 0) return;
    makeContextCurrent(deviceId_);
    driver().check(driver().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(deviceDst), hostSrc, bytes), "copy to the device");
  }
  void copyToHost(void* hostDst, const void* deviceSrc, size_t bytes) override {
    if (bytes == 0) return;
    makeContextCurrent(deviceId_);
    driver().check(driver().cuMemcpyDtoH(hostDst, reinterpret_cast<CUdeviceptr>(deviceSrc), bytes), "copy from the device");
  }
  void synchronize() override {
    makeContextCurrent(deviceId_);
    driver().check(driver().cuCtxSynchronize(), fmt::format("synchronization of cuda:{}", deviceId_));
  }
  std::string name() const override { return fmt::format("cuda ({})", info_.name); }

 private:
  int deviceId_;
  GpuDeviceInfo info_;
};

}  // namespace

std::shared_ptr<DeviceAPI> makeCudaDeviceAPI(int deviceId) {
  makeContextCurrent(deviceId);
  return std::make_shared<CudaDeviceAPI>(deviceId);
}

bool cudaDeviceAvailable(std::string* why) { return cuda::available(why); }

GpuDeviceInfo cudaDeviceInfo(int deviceId) {
  const Driver& d = driver();
  CUdevice device = cuda::deviceHandle(deviceId);
  auto attribute = [&](int which) {
    int value = 0;
    d.check(d.cuDeviceGetAttribute(&value, which, device), fmt::format("attribute {} query", which));
    return int64_t(value);
  };
  GpuDeviceInfo info;
  char name[256] = {};
  d.check(d.cuDeviceGetName(name, sizeof(name) - 1, device), "device name query");
  info.name = name;
  info.architecture = fmt::format("sm_{}{}", attribute(kAttrComputeCapabilityMajor), attribute(kAttrComputeCapabilityMinor));
  info.maxThreadsPerBlock = attribute(kAttrMaxThreadsPerBlock);
  info.maxBlockDimensions = {attribute(kAttrMaxBlockDimX), attribute(kAttrMaxBlockDimY), attribute(kAttrMaxBlockDimZ)};
  info.maxSharedMemoryPerBlock = attribute(kAttrMaxSharedMemoryPerBlock);
  info.maxSharedMemoryPerBlockOptIn = attribute(kAttrMaxSharedMemoryPerBlockOptin);
  info.warpSize = attribute(kAttrWarpSize);
  info.computeUnits = attribute(kAttrMultiprocessorCount);
  return info;
}

SecondsClock cudaEventClock(int deviceId) {
  struct Events {
    int deviceId;
    CUevent start = nullptr;
    ~Events() {
      if (start) driver().cuEventDestroy(start);
    }
  };
  makeContextCurrent(deviceId);
  const Driver& d = driver();
  auto events = std::make_shared<Events>(Events{deviceId});
  d.check(d.cuEventCreate(&events->start, 0), "event creation");
  d.check(d.cuEventRecord(events->start, nullptr), "event record");
  return [events]() {
    const Driver& d = driver();
    makeContextCurrent(events->deviceId);
    CUevent now = nullptr;
    d.check(d.cuEventCreate(&now, 0), "event creation");
    d.check(d.cuEventRecord(now, nullptr), "event record");
    d.check(d.cuEventSynchronize(now), "event wait");
    float ms = 0;
    CUresult r = d.cuEventElapsedTime(&ms, events->start, now);
    d.cuEventDestroy(now);
    d.check(r, "event timing");
    return double(ms) / 1000.0;
  };
}

}  // namespace tessel::runtime
