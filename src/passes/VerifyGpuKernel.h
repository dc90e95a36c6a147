/// Checks a lowered GPU kernel against a device's limits before any compiler sees it: threads
/// per block and each block dimension, shared memory per block, local memory per thread,
/// virtual thread extents. Also what no GPU can run: a store to a global buffer outside every
/// blockIdx/threadIdx loop (each thread would run the whole nest), a whole-call intermediate
/// buffer (a stage computed at the root that is not an output), a parallel loop. A violation
/// is an Error naming the kernel, the limit and the value, e.g. "GPU kernel 'dense': 2048
/// threads per block exceed the limit of 1024 (cuda sm_90)"; during tuning it becomes the
/// candidate's error record.
#pragma once
#include "passes/GpuLaunch.h"
#include "passes/GpuLimits.h"
#include "schedule/LoopNest.h"

namespace tessel::passes {

void verifyGpuKernel(const schedule::LoopNestFunction& kernel, const GpuLaunch& launch, const GpuLimits& limits);

}  // namespace tessel::passes
