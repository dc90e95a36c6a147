#include "driver/GpuSchedules.h"

#include "passes/Lower.h"

namespace tessel::driver {

tune::ScheduleFunction defaultGpuSchedules(const ops::GpuScheduleOptions& rules) {
  return [rules](const te::ComputeDAG& dag) { return ops::defaultGpuSchedule(dag, rules); };
}

tune::ScheduleFunction defaultGpuScheduleFor(const passes::GpuLimits& limits, target::MatmulPrecision precision) {
  return defaultGpuSchedules(ops::gpuScheduleOptionsFor(limits, precision));
}

tune::ScheduleFunction gpuRecordsProvider(const tune::HistoryBest& best, const passes::GpuLimits& limits, const target::Target& target) {
  return best.provider(defaultGpuScheduleFor(limits, target.matmulPrecision),
                       [limits](const schedule::State& state) { passes::lowerForGpu(state, "record_check", limits); });
}

}  // namespace tessel::driver
