/// The cheap check of a GPU schedule against a device's limits, read from its State without
/// lowering (passes/VerifyGpuKernel.h checks the lowered kernel, the same limits): threads per
/// block and along each dimension (per dimension the largest extent any stage binds, as the
/// launch takes it), virtual thread extents, shared memory per block and local memory per
/// thread (every attached stage's region). The auto-scheduler's search drops a state this
/// refuses before any measurement; what only lowering finds becomes the candidate's error
/// record when it is built.
#pragma once
#include <optional>
#include <string>

#include "passes/GpuLimits.h"
#include "schedule/State.h"

namespace tessel::tune::ansor {

/// Why the state's kernel would exceed the limits, e.g. "2048 threads per block (2048x1x1)
/// exceed the limit of 1024 (cuda sm_90)"; nothing when it fits.
std::optional<std::string> gpuLimitViolation(const schedule::State& state, const passes::GpuLimits& limits);

}  // namespace tessel::tune::ansor
