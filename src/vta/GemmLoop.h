/// Private to the GEMM kernels: the micro-op loop nest shared by every implementation. Each
/// kernel file is compiled with its own instruction-set flags, so everything here has internal
/// linkage: one file's AVX-512 copy must never be picked by the linker for another file.
#pragma once
#include <cstdint>
#include <cstring>

#include "vta/GemmKernel.h"

namespace tessel::vta {
namespace {

/// Calls `body(accumulator, input, weight)` with the element pointers of every micro-op
/// execution, in the hardware's order (outer iteration, inner iteration, micro-op).
template <typename Body>
inline void forEachMicroOp(const Instruction& in, const MicroOp* microOps,
                           const GemmOperands& operands, Body&& body) {
  const size_t accumulatorStride = size_t(operands.batch) * operands.blockOut;
  const size_t inputStride = size_t(operands.batch) * operands.blockIn;
  const size_t weightStride = size_t(operands.blockIn) * operands.blockOut;
  for (uint32_t outer = 0; outer < in.iterationsOuter; ++outer) {
    for (uint32_t inner = 0; inner < in.iterationsInner; ++inner) {
      const uint32_t destinationOffset =
          outer * in.destinationFactorOuter + inner * in.destinationFactorInner;
      const uint32_t sourceOffset = outer * in.sourceFactorOuter + inner * in.sourceFactorInner;
      const uint32_t weightOffset = outer * in.weightFactorOuter + inner * in.weightFactorInner;
      for (uint32_t index = in.microOpBegin; index < in.microOpEnd; ++index) {
        const MicroOp& microOp = microOps[index];
        body(operands.accumulator + (microOp.destination + destinationOffset) * accumulatorStride,
             operands.input + (microOp.source + sourceOffset) * inputStride,
             operands.weight + (microOp.weight + weightOffset) * weightStride);
      }
    }
  }
}

/// Two adjacent int16 inputs as one 32-bit pattern, to broadcast against weight pairs.
inline int32_t inputPair(const int16_t* input) {
  int32_t pair;
  std::memcpy(&pair, input, sizeof pair);
  return pair;
}

}  // namespace

// The vector implementations, each defined in its own file (GemmKernelAvx2.cpp, ...).
// kPairs > 0 fixes BLOCK_IN/2 at compile time (8 for the default 16x16 core).
void gemmAvx2Pairs8(const Instruction&, const MicroOp*, const GemmOperands&);
void gemmAvx2Generic(const Instruction&, const MicroOp*, const GemmOperands&);
void gemmAvx512Pairs8(const Instruction&, const MicroOp*, const GemmOperands&);
void gemmAvx512Generic(const Instruction&, const MicroOp*, const GemmOperands&);

}  // namespace tessel::vta
