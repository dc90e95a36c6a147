/// The width of a GPU kernel's index arithmetic. The loop IR computes indices in int64, as the
/// CPU code does, but a GPU has 32-bit integer units: each 64-bit add or multiply takes two or
/// more instructions and a 64-bit division by a constant about a dozen, and 64-bit values take
/// two registers each. So a kernel whose index values provably fit in int32 computes them in
/// 32 bits (codegen/GpuSource.h prints them as `int`).
#pragma once
#include "passes/Lower.h"

namespace tessel::codegen {

/// 32 when every buffer of the kernel holds fewer than 2^31 elements and every 64-bit integer
/// expression in it — loop variables, loop bounds, each index and each intermediate value of
/// one — lies within int32 by the interval bounds of the enclosing loops (ir/Bounds.h); else
/// 64. A kernel with 64-bit integer tensor data gets 64: a value loaded from memory has no
/// bounds, so the same C type cannot serve indices and that data.
int gpuIndexBits(const passes::LoweredFunction& kernel);

}  // namespace tessel::codegen
