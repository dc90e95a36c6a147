/// The simulator's hot loop: one GEMM instruction's micro-op loop nest over the on-chip
/// buffers, in several implementations of identical results (AVX-512 VNNI, AVX2, portable),
/// chosen once by what the host CPU supports. The buffers hold values widened to int16 in the
/// layouts below, so each step is a multiply-add of 16-bit pairs into 32-bit lanes, which wraps
/// exactly like the hardware's int32 accumulator.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vta/HardwareConfig.h"
#include "vta/InstructionSet.h"

namespace tessel::vta {

/// Layouts (per buffer element):
///  - input: BATCH × BLOCK_IN int16, row-major;
///  - weight: (BLOCK_IN/2) × BLOCK_OUT × 2 int16: for each pair of reduction lanes (2m, 2m+1)
///    and each output j, the two weights w[j][2m], w[j][2m+1] side by side;
///  - accumulator: BATCH × BLOCK_OUT int32.
struct GemmOperands {
  int32_t* accumulator;
  const int16_t* input;
  const int16_t* weight;
  uint32_t batch;
  uint32_t blockIn;
  uint32_t blockOut;
};

/// Runs all micro-ops of a (non-reset) GEMM; indices must already be checked in range.
using GemmLoopFunction = void (*)(const Instruction& instruction, const MicroOp* microOps,
                                  const GemmOperands& operands);

struct GemmKernel {
  std::string name;
  GemmLoopFunction run = nullptr;
};

/// The implementations usable on this CPU for this configuration, fastest first; the portable
/// one ("scalar") is always last.
std::vector<GemmKernel> availableGemmKernels(const HardwareConfig& config);
/// "auto" picks the fastest; otherwise the named one, or Error listing the available ones.
GemmKernel selectGemmKernel(const HardwareConfig& config, const std::string& name = "auto");

}  // namespace tessel::vta
