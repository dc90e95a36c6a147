#include "cli/GpuTargets.h"

#include "codegen/Toolchain.h"
#include "passes/Lower.h"
#include "ops/GpuSchedules.h"
#include "support/Error.h"

namespace tessel::cli {

namespace {

/// The default GPU schedule for a device with these limits, as a build's schedule provider.
tune::ScheduleFunction defaultGpuScheduleFor(const passes::GpuLimits& limits, target::MatmulPrecision precision) {
  ops::GpuScheduleOptions rules = ops::gpuScheduleOptionsFor(limits, precision);
  return [rules](const te::ComputeDAG& dag) { return ops::defaultGpuSchedule(dag, rules); };
}

}  // namespace

tune::ScheduleFunction gpuRecordsProvider(const tune::HistoryBest& best, const passes::GpuLimits& limits, const target::Target& target) {
  return best.provider(defaultGpuScheduleFor(limits, target.matmulPrecision),
                       [limits](const schedule::State& state) { passes::lowerForGpu(state, "record_check", limits); });
}

std::string checkGpuTargetHost(const std::string& target, const std::string& targetHost) {
  bool cpu = targetHost.rfind("cpu", 0) == 0 || targetHost.rfind("llvm", 0) == 0;
  std::string why = "a GPU target's host is the CPU beside the device (e.g. \"cpu -mtriple=aarch64-linux-gnu\"): GPU modules "
                    "have no host code, the host compiles the correctness reference --check-correctness runs there";
  TESSEL_CHECK(cpu, "--target-host '{}' with --target '{}': not a CPU target; {}", targetHost, target, why);
  std::string host = targetHost.rfind("llvm", 0) == 0 ? "cpu" + targetHost.substr(4) : targetHost;
  try {
    codegen::compileOptionsForTarget(target::Target::parse(host));
  } catch (const Error& e) {
    fail("--target-host '{}': {}", targetHost, e.what());
  }
  return host;
}

}  // namespace tessel::cli
