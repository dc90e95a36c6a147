/// The functional half of the simulator: the on-chip buffers (micro-op, input, weight,
/// accumulator) and what each instruction does to them and to DRAM, bit-exact with the public
/// functional simulator: int8 × int8 products accumulated in wrapping int32, ALU operations
/// lane-wise on int32 with wrap-around and arithmetic shifts, and stores that keep the low 8
/// bits of each accumulator lane (no saturation). Every buffer index and DRAM range is checked
/// before anything is written; a violation throws Error describing it (the simulator adds the
/// instruction's index). Counters are updated by the public simulator's rules.
#pragma once
#include <cstdint>
#include <vector>

#include "vta/DeviceMemory.h"
#include "vta/GemmKernel.h"
#include "vta/HardwareConfig.h"
#include "vta/InstructionSet.h"
#include "vta/Statistics.h"

namespace tessel::vta {

class Datapath {
 public:
  /// `computeValues` false: instructions are checked, counted and timed but change no value
  /// (SimulatorOptions::computeValues).
  Datapath(const HardwareConfig& config, DeviceMemory& memory, Statistics& statistics,
           GemmKernel gemmKernel, bool computeValues = true);

  /// Executes one LOAD, STORE, GEMM or ALU (FINISH does nothing here).
  void execute(const Instruction& instruction);

  // Read access for tests and debugging: one element, as the hardware values.
  int32_t accumulatorValue(uint32_t element, uint32_t lane) const;
  const MicroOp& microOp(uint32_t index) const { return microOps_.at(index); }

 private:
  void load(const Instruction& in);
  void store(const Instruction& in);
  void gemm(const Instruction& in);
  void alu(const Instruction& in);
  /// Checks every index a GEMM or ALU instruction will touch; throws naming the first bad one.
  void checkComputeIndices(const Instruction& in) const;
  /// The DRAM bytes of a 2D access with `elementBytes` per element, checked to be inside one
  /// allocation.
  uint8_t* dramRange(const Instruction& in, uint64_t elementBytes);

  HardwareConfig config_;
  InstructionCodec codec_;
  DeviceMemory& memory_;
  Statistics& statistics_;
  GemmKernel gemmKernel_;
  bool computeValues_ = true;

  // Buffers in the layouts GemmKernel.h describes (inputs and weights widened to int16).
  std::vector<MicroOp> microOps_;
  std::vector<int16_t> input_;
  std::vector<int16_t> weight_;
  std::vector<int32_t> accumulator_;
};

}  // namespace tessel::vta
