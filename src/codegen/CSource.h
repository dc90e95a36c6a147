/// C++ source generation for the CPU: loop IR -> a translation unit with one exported
/// function per kernel in the C calling convention of support/KernelAbi.h, plus the module
/// manifest. Vectorized loops become GCC vector-extension code (`float __attribute__
/// ((vector_size(64)))`), parallel loops OpenMP, local buffers stack arrays (heap when large)
/// or, after register promotion, plain variables. Every argument is checked on entry, so a
/// caller that bypasses the runtime still gets an error message, not a crash.
#pragma once
#include <string>
#include <vector>

#include "schedule/LoopNest.h"

namespace tessel::codegen {

using LoweredFunction = schedule::LoopNestFunction;

std::string generateCSource(const std::vector<LoweredFunction>& functions);

/// The manifest JSON of the functions (names, argument names, dtypes, shapes).
std::string manifestJson(const std::vector<LoweredFunction>& functions);

}  // namespace tessel::codegen
