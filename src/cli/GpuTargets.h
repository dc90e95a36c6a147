/// What the network commands (compile, tune) do differently for a GPU target ("cuda ...",
/// "opencl ..."): the host target (the records with the default GPU schedule as the build's
/// fallback are driver/GpuSchedules.h's).
#pragma once
#include <string>

#include "cli/ModelArgs.h"
#include "driver/GpuSchedules.h"
#include "passes/GpuLimits.h"
#include "tune/HistoryBest.h"

namespace tessel::cli {

using driver::gpuRecordsProvider;

/// Checks `--target-host` of a GPU target and returns it (llvm spelled cpu). A GPU module has
/// no host code: the host target is where the device's host CPU runs the correctness reference
/// of `tune --check-correctness` (the naive kernel, compiled for it). Error naming the value
/// when it is not a CPU target the toolchain can compile for.
std::string checkGpuTargetHost(const std::string& target, const std::string& targetHost);

}  // namespace tessel::cli
