/// The lowering driver: a scheduled State becomes an optimized loop-IR function, one pass a
/// line, in order. This file is the table of contents of lowering.
#pragma once
#include <string>

#include "passes/GpuLaunch.h"
#include "passes/GpuLimits.h"
#include "schedule/LoopNest.h"

namespace tessel::passes {

using LoweredFunction = schedule::LoopNestFunction;

LoweredFunction lower(const schedule::State& state, const std::string& name);

/// A kernel lowered for a GPU: its loop IR (bound loops stand for block and thread indices)
/// and the launch those loops make.
struct GpuLoweredFunction {
  LoweredFunction function;
  GpuLaunch launch;
};

/// The GPU lowering: the same loop nest with loops bound to blockIdx/threadIdx, no CPU
/// vectorization (vectorized loops stay scalar loops: each thread is one lane already) and no
/// register promotion (the GPU compiler keeps small local arrays in registers itself);
/// barriers where shared memory passes between threads; then the verification against the
/// limits, which throws an Error naming the limit broken.
GpuLoweredFunction lowerForGpu(const schedule::State& state, const std::string& name, const GpuLimits& limits);

}  // namespace tessel::passes
