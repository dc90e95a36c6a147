/// What the network commands (compile, tune) do differently for a GPU target ("cuda ...",
/// "opencl ..."): the limits kernels are verified against, the records with the default GPU schedule as the
/// build's fallback, and the host target.
#pragma once
#include <string>

#include "cli/ModelArgs.h"
#include "passes/GpuLimits.h"
#include "tune/HistoryBest.h"

namespace tessel::cli {

/// The schedules of a GPU build with tuning records: each function's best record that replays
/// and lowers within `limits` (a record measured on a device with larger limits may not), else
/// the default GPU schedule for `target` (its products as exact as the target asks).
tune::ScheduleFunction gpuRecordsProvider(const tune::HistoryBest& best, const passes::GpuLimits& limits, const target::Target& target);

/// Checks `--target-host` of a GPU target and returns it (llvm spelled cpu). A GPU module has
/// no host code: the host target is where the device's host CPU runs the correctness reference
/// of `tune --check-correctness` (the naive kernel, compiled for it). Error naming the value
/// when it is not a CPU target the toolchain can compile for.
std::string checkGpuTargetHost(const std::string& target, const std::string& targetHost);

}  // namespace tessel::cli
