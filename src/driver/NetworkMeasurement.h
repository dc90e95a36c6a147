/// Where driver::tuneNetwork builds and measures a network's candidates: the builder, the
/// runner (this machine's worker, or devices behind a tracker), the target kernels are
/// scheduled for, the limits GPU kernels are verified against, and on this machine's CPU the
/// kernel threads other programs leave free and the load monitor. Made before the tasks are
/// listed, in the order a run reports it, so that a missing device fails before any work.
#pragma once
#include <memory>
#include <optional>

#include "driver/TuneCallbacks.h"
#include "driver/TuneNetworkOptions.h"
#include "passes/GpuLimits.h"
#include "target/Target.h"
#include "tune/LoadMonitor.h"
#include "tune/LocalBuilder.h"
#include "tune/MeasureBatch.h"

namespace tessel::driver {

struct NetworkMeasurement {
  NetworkMeasurement(const TuneNetworkOptions& options, const TuneCallbacks& callbacks);

  tune::LocalBuilder builder;
  std::unique_ptr<tune::Runner> runner;
  /// What candidates are measured on: the tuned target (a CPU target measured remotely: with
  /// the devices' cores).
  target::Target target;
  std::optional<passes::GpuLimits> gpuLimits;  ///< a GPU target's
  std::optional<tune::LoadMonitor> monitor;    ///< this machine's CPU measuring
};

}  // namespace tessel::driver
