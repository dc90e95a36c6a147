/// Devices a tensor can live on and a kernel can run on, and the per-device memory interface
/// (DeviceAPI) the runtime uses to allocate and copy. The CPU is built in; other kinds (CUDA,
/// OpenCL, VTA) register a factory for their DeviceAPI when their runtime support is linked in
/// or loaded, and the API is created on first use.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "support/KernelAbi.h"

namespace tessel::runtime {

/// Values match TESSEL_DEVICE_* of KernelAbi.h, so a kind passes unchanged into TesselTensor.
enum class DeviceKind : int32_t {
  CPU = TESSEL_DEVICE_CPU,
  CUDA = TESSEL_DEVICE_CUDA,
  OpenCL = TESSEL_DEVICE_OPENCL,
  VTA = TESSEL_DEVICE_VTA,
};

/// "cpu", "cuda", "opencl", "vta".
std::string deviceKindName(DeviceKind kind);

/// One device: a kind and an index among the devices of that kind.
struct Device {
  DeviceKind kind = DeviceKind::CPU;
  int id = 0;

  /// "cpu:0", "cuda:1".
  std::string str() const;
  /// Parses "cpu", "cpu:0", "cuda:1", "opencl", "vta" (no index means 0); throws Error naming
  /// the text and what is accepted otherwise.
  static Device parse(const std::string& text);
  static Device cpu() { return Device{}; }

  bool operator==(const Device& other) const = default;
};

/// How the runtime allocates, copies and waits on one device. Implementations must be safe to
/// call from several threads at once.
class DeviceAPI {
 public:
  virtual ~DeviceAPI() = default;
  /// Allocates `bytes` (0 allowed) aligned to `alignment` (a power of two); throws Error when
  /// the memory cannot be had. Never returns null.
  virtual void* allocate(size_t bytes, size_t alignment) = 0;
  /// Frees what allocate returned; null is ignored.
  virtual void release(void* pointer) = 0;
  virtual void copyFromHost(void* deviceDst, const void* hostSrc, size_t bytes) = 0;
  virtual void copyToHost(void* hostDst, const void* deviceSrc, size_t bytes) = 0;
  /// Waits until all work queued on the device has finished.
  virtual void synchronize() = 0;
  /// A human-readable name: "cpu", "cuda (NVIDIA H100)".
  virtual std::string name() const = 0;
};

/// The alignment of every CPU allocation made by the runtime (a cache line, and enough for the
/// widest vector loads).
inline constexpr size_t kCpuAlignment = 64;

using DeviceAPIFactory = std::function<std::shared_ptr<DeviceAPI>()>;
/// A factory that is told which device (the index of Device::id) it serves.
using IndexedDeviceAPIFactory = std::function<std::shared_ptr<DeviceAPI>(int deviceId)>;

/// Registers (or replaces) the factory of one kind of device. The factory runs once per device
/// (kind and index), on first use. Replacing a factory retires the APIs it made: memory they
/// allocated stays valid (tensors keep their API alive), new requests go to the new factory.
void registerDeviceAPI(DeviceKind kind, DeviceAPIFactory factory);
void registerDeviceAPI(DeviceKind kind, IndexedDeviceAPIFactory factory);

/// Whether a factory is registered for the kind (the CPU always has one).
bool hasDeviceAPI(DeviceKind kind);

/// The API of a device, created on first use; throws Error "device 'cuda:0' is not available:
/// no runtime support registered for cuda" when nothing serves that kind, or the factory's
/// own Error (with the device named) when creating it fails. Thread-safe.
DeviceAPI& deviceAPI(const Device& device);
/// The same, as shared ownership: holders (tensors) keep the API alive while they use it.
std::shared_ptr<DeviceAPI> sharedDeviceAPI(const Device& device);

}  // namespace tessel::runtime
