/// A pretend accelerator for runtime tests: memory is host memory, but every allocation and
/// copy goes through (and is counted by) the DeviceAPI, as it would for a real device.
#pragma once
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "runtime/Device.h"

namespace tessel::runtime::fakes {

struct FakeDeviceCounters {
  std::atomic<int> allocations{0};
  std::atomic<int> releases{0};
  std::atomic<int> copiesFromHost{0};
  std::atomic<int> copiesToHost{0};
};

class FakeDeviceAPI final : public DeviceAPI {
 public:
  explicit FakeDeviceAPI(std::shared_ptr<FakeDeviceCounters> counters) : counters_(std::move(counters)) {}
  void* allocate(size_t bytes, size_t alignment) override {
    ++counters_->allocations;
    size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    return std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
  }
  void release(void* pointer) override {
    ++counters_->releases;
    std::free(pointer);
  }
  void copyFromHost(void* deviceDst, const void* hostSrc, size_t bytes) override {
    ++counters_->copiesFromHost;
    std::memcpy(deviceDst, hostSrc, bytes);
  }
  void copyToHost(void* hostDst, const void* deviceSrc, size_t bytes) override {
    ++counters_->copiesToHost;
    std::memcpy(hostDst, deviceSrc, bytes);
  }
  void synchronize() override {}
  std::string name() const override { return "fake"; }

 private:
  std::shared_ptr<FakeDeviceCounters> counters_;
};

/// Registers a fresh fake API for `kind` and returns its counters.
inline std::shared_ptr<FakeDeviceCounters> registerFakeDevice(DeviceKind kind) {
  auto counters = std::make_shared<FakeDeviceCounters>();
  registerDeviceAPI(kind, [counters]() -> std::shared_ptr<DeviceAPI> { return std::make_shared<FakeDeviceAPI>(counters); });
  return counters;
}

}  // namespace tessel::runtime::fakes
