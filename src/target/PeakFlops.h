/// The most arithmetic a CPU can do per second: its cores x FMA units x 32-bit lanes x 2 FLOPs
/// (a multiply-add) x its clock. Not a performance estimate but an upper bound: a device that
/// reports a measured rate above it (times a margin, tune/PlausibleCost.h) reports something
/// that cannot be true. So where a fact is unknown the bound errs high: a machine without FMA
/// units counts one (its separate multiply and add ports do as much), and an unknown clock is
/// taken as kClockCeilingGhz.
#pragma once
#include "target/CpuMachine.h"

namespace tessel::target {

/// The clock assumed where a machine's maximum clock cannot be read (most VMs hide cpufreq):
/// above any CPU's turbo clock.
inline constexpr double kClockCeilingGhz = 6.0;

/// This machine's maximum clock in GHz (cpufreq's cpuinfo_max_freq of cpu0, turbo included);
/// 0 when unknown.
double hostMaxClockGhz();

/// The fp32 FMA peak of `machine` in GFLOPS at `clockGhz` (0 or less: kClockCeilingGhz).
double cpuPeakGflops(const CpuMachine& machine, double clockGhz);

}  // namespace tessel::target
