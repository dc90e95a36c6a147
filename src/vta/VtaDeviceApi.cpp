#include "vta/VtaDeviceApi.h"

#include <cstring>

#include <fmt/format.h>

#include "support/Error.h"

namespace tessel::vta {

VtaDeviceAPI::VtaDeviceAPI(std::shared_ptr<Simulator> simulator) : simulator_(std::move(simulator)) {}

void* VtaDeviceAPI::allocate(size_t bytes, size_t alignment) {
  TESSEL_CHECK(alignment <= DeviceMemory::kPageBytes,
               "vta device: alignment {} exceeds the {}-byte page of device memory", alignment,
               DeviceMemory::kPageBytes);
  const uint64_t address = simulator_->memory().allocate(bytes);
  return simulator_->memory().at(address, 0);
}

void VtaDeviceAPI::release(void* pointer) {
  if (pointer == nullptr) return;
  simulator_->memory().release(simulator_->memory().physicalAddress(pointer));
}

void VtaDeviceAPI::copyFromHost(void* deviceDst, const void* hostSrc, size_t bytes) {
  // Device memory is host memory the simulator reads: a copy is a memcpy.
  if (bytes > 0) std::memcpy(deviceDst, hostSrc, bytes);
}

void VtaDeviceAPI::copyToHost(void* hostDst, const void* deviceSrc, size_t bytes) {
  if (bytes > 0) std::memcpy(hostDst, deviceSrc, bytes);
}

std::string VtaDeviceAPI::name() const {
  return fmt::format("vta (simulator, {})", simulator_->config().modelName());
}

void registerVtaSimulatorDevice(const HardwareConfig& config, const SimulatorOptions& options) {
  config.validate();
  runtime::registerDeviceAPI(runtime::DeviceKind::VTA,
                             runtime::IndexedDeviceAPIFactory([config, options](int) {
                               return std::make_shared<VtaDeviceAPI>(
                                   std::make_shared<Simulator>(config, options));
                             }));
}

Simulator& vtaSimulator(const runtime::Device& device) {
  auto* api = dynamic_cast<VtaDeviceAPI*>(&runtime::deviceAPI(device));
  TESSEL_CHECK(api != nullptr, "device '{}' is not a VTA simulator", device.str());
  return api->simulator();
}

}  // namespace tessel::vta
