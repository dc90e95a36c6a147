/// A micro-op kernel as a compiler writes it: up to two nested loops, each with an extent and
/// the factors it adds per iteration to the accumulator (destination), source (input or
/// accumulator) and weight indices, around a list of micro-ops. The runtime places the
/// micro-ops in DRAM once, loads them into the micro-op buffer when they are not resident, and
/// turns the loops into the GEMM/ALU instruction's iter_out/iter_in and index factors.
#pragma once
#include <cstdint>
#include <vector>

#include "vta/InstructionSet.h"

namespace tessel::vta {

struct MicroKernel {
  struct Loop {
    uint32_t extent = 1;
    uint32_t destinationFactor = 0;
    uint32_t sourceFactor = 0;
    uint32_t weightFactor = 0;
  };
  /// Outer first; at most two (the hardware has two loop levels).
  std::vector<Loop> loops;
  std::vector<MicroOp> microOps;

  MicroKernel& loop(uint32_t extent, uint32_t destinationFactor, uint32_t sourceFactor,
                    uint32_t weightFactor = 0) {
    loops.push_back({extent, destinationFactor, sourceFactor, weightFactor});
    return *this;
  }
  MicroKernel& push(uint32_t destination, uint32_t source, uint32_t weight = 0) {
    microOps.push_back({destination, source, weight});
    return *this;
  }
};

}  // namespace tessel::vta
