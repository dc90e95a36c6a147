/// The timing side of the simulator. Each of the three modules (load, compute, store) runs its
/// instructions in order, one at a time; an instruction starts when its module is free and every
/// token it pops has been pushed, and it pushes its tokens when it completes. So the modules
/// overlap exactly as far as the dependency queues allow. DRAM is one shared channel with a
/// bandwidth (bytes per cycle) and a latency; the GEMM core retires one micro-op per cycle, the
/// ALU one per `aluCyclesPerMicroOp` (the HLS design's initiation interval of 2). A program's
/// time is its cycles divided by the clock. docs/vta.md explains the choices.
#pragma once
#include <cstdint>

#include "vta/HardwareConfig.h"
#include "vta/InstructionSet.h"

namespace tessel::vta {

struct TimingParameters {
  /// The accelerator clock; the public FPGA default is 100 MHz.
  double clockMegahertz = 100.0;
  /// DRAM channel width per cycle: the default 64-bit AXI bus moves 8 bytes a cycle.
  uint32_t dramBytesPerCycle = 8;
  /// Cycles from a DRAM request to its first data; overlaps with other transfers.
  uint32_t dramLatencyCycles = 64;
  uint32_t gemmCyclesPerMicroOp = 1;
  uint32_t aluCyclesPerMicroOp = 2;
  /// Fixed cost of decoding and issuing any instruction in its module.
  uint32_t instructionOverheadCycles = 1;

  double seconds(uint64_t cycles) const { return double(cycles) / (clockMegahertz * 1e6); }
  /// Throws Error naming a parameter that is zero or negative.
  void validate() const;
};

/// Times instructions against the shared DRAM channel. The simulator asks for instructions in
/// nondecreasing start time (in its timed order), so first come first served is fair.
class CycleModel {
 public:
  CycleModel(const HardwareConfig& config, const TimingParameters& timing);

  /// The completion time of `instruction` when it starts at `start`.
  uint64_t complete(const Instruction& instruction, uint64_t start);
  /// Forgets the DRAM channel's state: a new run starts at cycle 0.
  void reset() { dramFreeAt_ = 0; }
  const TimingParameters& timing() const { return timing_; }

 private:
  /// Bytes an instruction moves over DRAM.
  uint64_t dramBytes(const Instruction& instruction) const;

  HardwareConfig config_;
  TimingParameters timing_;
  uint64_t dramFreeAt_ = 0;
};

}  // namespace tessel::vta
