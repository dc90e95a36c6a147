/// The schedules of a network build for a GPU target: the default GPU schedule for the device's
/// limits, or each function's best tuning record where it replays and lowers within them.
#pragma once
#include "ops/GpuSchedules.h"
#include "passes/GpuLimits.h"
#include "target/Target.h"
#include "tune/HistoryBest.h"

namespace tessel::driver {

/// The default GPU schedule (ops::defaultGpuSchedule) with `rules`, as a build's schedule provider.
tune::ScheduleFunction defaultGpuSchedules(const ops::GpuScheduleOptions& rules);
/// The same with the rules for a device with `limits`, its products as exact as `precision` asks.
tune::ScheduleFunction defaultGpuScheduleFor(const passes::GpuLimits& limits, target::MatmulPrecision precision);

/// The schedules of a GPU build with tuning records: each function's best record that replays
/// and lowers within `limits` (a record measured on a device with larger limits may not), else
/// the default GPU schedule for `target` (its products as exact as the target asks).
tune::ScheduleFunction gpuRecordsProvider(const tune::HistoryBest& best, const passes::GpuLimits& limits, const target::Target& target);

}  // namespace tessel::driver
