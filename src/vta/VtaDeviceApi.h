/// The VTA simulator as a device of the runtime (`vta`, the seeds' ext_dev): device memory is
/// the simulator's DRAM, so tensors allocated on a vta device are what LOAD and STORE
/// instructions address (DeviceMemory::physicalAddress gives a tensor's device address), and
/// a CommandStream on the same simulator runs programs over them. Runs are synchronous, so
/// synchronize() has nothing to wait for.
#pragma once
#include <memory>
#include <mutex>

#include "runtime/Device.h"
#include "vta/Simulator.h"

namespace tessel::vta {

class VtaDeviceAPI : public runtime::DeviceAPI {
 public:
  explicit VtaDeviceAPI(std::shared_ptr<Simulator> simulator);

  void* allocate(size_t bytes, size_t alignment) override;
  void release(void* pointer) override;
  void copyFromHost(void* deviceDst, const void* hostSrc, size_t bytes) override;
  void copyToHost(void* hostDst, const void* deviceSrc, size_t bytes) override;
  void synchronize() override {}
  std::string name() const override;

  Simulator& simulator() { return *simulator_; }

 private:
  std::shared_ptr<Simulator> simulator_;
};

/// Registers the simulator for DeviceKind::VTA: each device index gets a simulator of its own
/// with this configuration and these options. Call once at start-up (a deployment that links
/// the VTA support calls it; nothing registers behind the user's back).
void registerVtaSimulatorDevice(const HardwareConfig& config = HardwareConfig{},
                                const SimulatorOptions& options = SimulatorOptions{});

/// The simulator behind a vta device; throws Error when the device is not a VTA simulator.
Simulator& vtaSimulator(const runtime::Device& device);

}  // namespace tessel::vta
