// Deploying a module compiled for VTA (`tessel compile --target vta`): its host functions run
// on the CPU, its packed convolutions as the VTA programs stored in the module, on the vta
// device — here the simulator, which stands for the board. It links only tessel_runtime and
// tessel_vta (the device's runtime support), as an application shipping a model would: no
// compiler, no graph IR, no model.
//
//   tessel_deploy_vta MODULE_DIR INPUT.npy [OUTPUT.npy] [VTA_CONFIG.json]
//
// Prints the simulator's statistics (as seed 004 does) and the modelled accelerator time; writes
// the first output to OUTPUT.npy when given. Without VTA_CONFIG the device is the default VTA
// configuration.
#include <cstdio>

#include "runtime/GraphExecutor.h"
#include "runtime/Npy.h"
#include "support/Error.h"
#include "vta/ModuleRunner.h"
#include "vta/VtaDeviceApi.h"

using namespace tessel;

int main(int argc, char** argv) {
  if (argc < 3 || argc > 5) {
    std::fprintf(stderr, "usage: %s MODULE_DIR INPUT.npy [OUTPUT.npy] [VTA_CONFIG.json]\n", argv[0]);
    return 2;
  }
  try {
    vta::registerVtaSimulatorDevice(argc == 5 ? vta::HardwareConfig::fromFile(argv[4]) : vta::HardwareConfig{});
    vta::VtaModuleExecutor module = vta::loadVtaModuleExecutor(argv[1]);
    if (!module.runner) {
      std::fprintf(stderr, "error: %s has no VTA programs (not compiled with --target vta)\n", argv[1]);
      return 1;
    }
    module.executor.setInput(0, runtime::loadNpy(argv[2]));
    module.executor.run();
    if (argc >= 4) runtime::saveNpy(module.executor.getOutput(0), argv[3]);
    uint64_t cycles = 0;
    for (const vta::VtaCallRun& run : module.runner->lastRuns()) cycles += run.cycles;
    const vta::Simulator& device = module.runner->simulator();
    std::printf("%zu calls on VTA, %llu cycles (%.3f ms at %g MHz)\nExecution statistics:\n%s",
                module.runner->lastRuns().size(), (unsigned long long)cycles, device.options().timing.seconds(cycles) * 1e3,
                device.options().timing.clockMegahertz, device.stats().format().c_str());
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
