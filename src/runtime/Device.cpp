#include "runtime/Device.h"

#include "runtime/CudaDevice.h"
#include "runtime/OpenclDevice.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "support/Error.h"

namespace tessel::runtime {

namespace {

constexpr DeviceKind kAllKinds[] = {DeviceKind::CPU, DeviceKind::CUDA, DeviceKind::OpenCL, DeviceKind::VTA};

/// Host memory through posix_memalign; copies are memcpy.
class CpuDeviceAPI final : public DeviceAPI {
 public:
  void* allocate(size_t bytes, size_t alignment) override {
    alignment = std::max(alignment, sizeof(void*));
    TESSEL_CHECK((alignment & (alignment - 1)) == 0, "cpu allocation: alignment {} is not a power of two", alignment);
    void* pointer = nullptr;
    // Round up so that a zero-byte request still yields a unique, freeable pointer.
    size_t rounded = std::max<size_t>(1, (bytes + alignment - 1) / alignment) * alignment;
    TESSEL_CHECK(rounded >= bytes, "cpu allocation of {} bytes: size overflows", bytes);
    if (posix_memalign(&pointer, alignment, rounded) != 0 || pointer == nullptr)
      fail("cpu allocation of {} bytes failed: out of memory", bytes);
    return pointer;
  }
  void release(void* pointer) override { std::free(pointer); }
  void copyFromHost(void* deviceDst, const void* hostSrc, size_t bytes) override {
    if (bytes > 0) std::memcpy(deviceDst, hostSrc, bytes);
  }
  void copyToHost(void* hostDst, const void* deviceSrc, size_t bytes) override {
    if (bytes > 0) std::memcpy(hostDst, deviceSrc, bytes);
  }
  void synchronize() override {}
  std::string name() const override { return "cpu"; }
};

struct Registry {
  std::recursive_mutex mutex;  // recursive: a factory may itself ask for another device's API
  std::map<DeviceKind, IndexedDeviceAPIFactory> factories;
  std::map<std::pair<DeviceKind, int>, std::shared_ptr<DeviceAPI>> instances;
  /// APIs made by replaced factories; kept so that references handed out stay valid.
  std::vector<std::shared_ptr<DeviceAPI>> retired;

  Registry() {
    factories[DeviceKind::CPU] = [](int) { return std::make_shared<CpuDeviceAPI>(); };
    // GPUs are served by the runtime itself through drivers loaded with dlopen; on a machine
    // without one, creating the API fails with "no CUDA device: ..." and nothing else.
    factories[DeviceKind::CUDA] = [](int id) { return makeCudaDeviceAPI(id); };
    factories[DeviceKind::OpenCL] = [](int id) { return makeOpenclDeviceAPI(id); };
  }
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

std::string deviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::CPU: return "cpu";
    case DeviceKind::CUDA: return "cuda";
    case DeviceKind::OpenCL: return "opencl";
    case DeviceKind::VTA: return "vta";
  }
  return "unknown(" + std::to_string(static_cast<int32_t>(kind)) + ")";
}

std::string Device::str() const { return deviceKindName(kind) + ":" + std::to_string(id); }

Device Device::parse(const std::string& text) {
  auto invalid = [&](const std::string& why) -> Error {
    return Error(fmt::format("invalid device '{}': {}; expected cpu, cuda, opencl or vta, optionally followed by "
                             ":<index> (e.g. 'cuda:1')",
                             text, why));
  };
  std::string lower;
  for (char c : text) lower += char(std::tolower(static_cast<unsigned char>(c)));
  std::string kindText = lower;
  std::string indexText;
  bool hasIndex = false;
  if (auto colon = lower.find(':'); colon != std::string::npos) {
    kindText = lower.substr(0, colon);
    indexText = lower.substr(colon + 1);
    hasIndex = true;
  }
  Device device;
  bool known = false;
  for (DeviceKind kind : kAllKinds) {
    if (kindText == deviceKindName(kind)) {
      device.kind = kind;
      known = true;
    }
  }
  if (!known) throw invalid(kindText.empty() ? "no device kind" : "unknown device kind '" + kindText + "'");
  if (hasIndex) {
    bool digits = !indexText.empty() && indexText.size() <= 9 &&
                  std::all_of(indexText.begin(), indexText.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) throw invalid("bad device index '" + indexText + "'");
    device.id = std::stoi(indexText);
  }
  return device;
}

void registerDeviceAPI(DeviceKind kind, IndexedDeviceAPIFactory factory) {
  TESSEL_CHECK(factory != nullptr, "registerDeviceAPI({}): empty factory", deviceKindName(kind));
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.factories[kind] = std::move(factory);
  for (auto it = r.instances.begin(); it != r.instances.end();) {
    if (it->first.first == kind) {
      r.retired.push_back(std::move(it->second));
      it = r.instances.erase(it);
    } else {
      ++it;
    }
  }
}

void registerDeviceAPI(DeviceKind kind, DeviceAPIFactory factory) {
  TESSEL_CHECK(factory != nullptr, "registerDeviceAPI({}): empty factory", deviceKindName(kind));
  registerDeviceAPI(kind, IndexedDeviceAPIFactory([factory = std::move(factory)](int) { return factory(); }));
}

bool hasDeviceAPI(DeviceKind kind) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.factories.count(kind) > 0;
}

std::shared_ptr<DeviceAPI> sharedDeviceAPI(const Device& device) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto key = std::make_pair(device.kind, device.id);
  if (auto it = r.instances.find(key); it != r.instances.end()) return it->second;
  auto factory = r.factories.find(device.kind);
  if (factory == r.factories.end())
    fail("device '{}' is not available: no runtime support registered for {}", device.str(),
         deviceKindName(device.kind));
  TESSEL_CHECK(device.id >= 0, "device '{}' is not available: negative device index", device.str());
  std::shared_ptr<DeviceAPI> api;
  try {
    api = factory->second(device.id);
  } catch (const Error& e) {
    throw e.withContext(fmt::format("device '{}' is not available", device.str()));
  }
  TESSEL_CHECK(api != nullptr, "device '{}' is not available: its runtime support returned no device API",
               device.str());
  r.instances[key] = api;
  return api;
}

DeviceAPI& deviceAPI(const Device& device) { return *sharedDeviceAPI(device); }

}  // namespace tessel::runtime
