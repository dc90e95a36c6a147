#include "driver/NetworkMeasurement.h"

#include <fmt/format.h>

#include "codegen/GpuBuild.h"
#include "graph/GpuTargetLimits.h"
#include "runtime/CudaDevice.h"
#include "runtime/MachineLoad.h"
#include "runtime/OpenclDevice.h"
#include "support/Error.h"
#include "tune/LocalRunner.h"

namespace tessel::driver {

namespace {

/// The timing options with the kernel threads of a run on this machine's CPU: `threads`, or
/// the cores other programs leave free (a 2-thread kernel sharing a core with another program
/// measures that program, not itself), waiting passively when fewer than all.
tune::LocalRunnerOptions withFreeCores(tune::LocalRunnerOptions measure, int threads, const TuneCallbacks& callbacks) {
  runtime::MachineLoad load = runtime::sampleMachineLoad(std::chrono::milliseconds(300));
  measure.threads = threads > 0 ? threads : runtime::kernelThreadsFor(load);
  measure.passiveWait = measure.threads < load.cores;
  if (measure.threads < load.cores && callbacks.onNote)
    callbacks.onNote(fmt::format("machine busy: {}; candidates are measured with {} thread{} and results may be noisy", load.describe(),
                                 measure.threads, measure.threads == 1 ? "" : "s"));
  return measure;
}

/// A GPU target measured here needs its device present.
void checkLocalDevice(const target::Target& target) {
  std::string why;
  bool cuda = codegen::gpuDialectOfTarget(target) == codegen::GpuDialect::Cuda;
  bool present = cuda ? runtime::cudaDeviceAvailable(&why) : runtime::openclDeviceAvailable(&why);
  TESSEL_CHECK(present, "--target {} --runner local: candidates run on this machine's device, and {}; measure on a machine with "
               "one through --runner rpc (`tessel server --device {}`)", target.str(), why, cuda ? "cuda" : "opencl");
}

}  // namespace

NetworkMeasurement::NetworkMeasurement(const TuneNetworkOptions& o, const TuneCallbacks& callbacks)
    : builder(o.build), target(o.prepare.target) {
  const bool gpu = target.isGpu();
  const bool local = !o.remote;
  tune::LocalRunnerOptions measure = local && !gpu ? withFreeCores(o.measure, o.threads, callbacks) : o.measure;
  // A remote runner checks the tracker and the key here, before any work.
  runner = local ? std::make_unique<tune::LocalRunner>(measure) : o.remote->makeRunner(measure);
  if (!local && !gpu) target = o.remote->scheduledTarget();
  if (gpu && local) checkLocalDevice(target);
  if (gpu && !local) gpuLimits = o.remote->gpuLimits();
  if (gpu && local) {
    // This machine's device, or the profile of a named -device= or of none.
    gpuLimits = graph::gpuLimitsForBuild(target);
    if (callbacks.onNote)
      callbacks.onNote(fmt::format("GPU kernels verified against the limits of {}: {} threads per block, {} bytes of shared memory",
                                   gpuLimits->profile, gpuLimits->maxThreadsPerBlock, gpuLimits->maxSharedMemoryPerBlock));
  }
  if (local && !gpu) {
    tune::LoadMonitorOptions m;
    m.pauseSeconds = o.busyPause;
    m.pauseShare = o.busyPauseShare;
    m.warnTo = o.tuneLinesTo;
    monitor.emplace(*runner, m);
  }
}

}  // namespace tessel::driver
