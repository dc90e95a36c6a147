/// Builds one GPU candidate (a task whose target is "cuda ..." or "opencl ...") into a GPU module
/// directory (runtime/GpuModule.h) that a runner loads on the device. The same contract as the
/// CPU build of LocalBuilder, in two isolated steps under one deadline:
///   1. replay the steps, lower for the GPU (passes::lowerForGpu) with the task's limits and
///      generate the source, in a forked child: a step that does not apply, a lowering error, a
///      kernel over the limits (passes/VerifyGpuKernel.h) or a crash -> InstantiationError;
///   2. for CUDA, compile with NVRTC, also in a forked child: a rejection (or a crash of the
///      compiler) -> CompileDeviceError with NVRTC's log. OpenCL C is kept as source: the
///      device's driver builds it when the runner loads the module.
/// Running past the deadline -> BuildTimeoutError. Never throws for a bad candidate.
#pragma once
#include <chrono>
#include <string>

#include "tune/Measure.h"

namespace tessel::tune {

/// Builds `input` (a GPU task's candidate) into `directory` with its kernel named `kernelName`.
/// The result's libraryPath is the directory and gpuDevice the device kind; args and numInputs
/// are left to the caller.
BuildResult buildGpuCandidate(const MeasureInput& input, const std::string& kernelName, const std::string& directory,
                              std::chrono::milliseconds timeout);

/// The limits a GPU task's kernels are verified against: its own, else its target's profile.
passes::GpuLimits gpuLimitsOfTask(const MeasureTask& task);

}  // namespace tessel::tune
