#include "vta/CycleModel.h"

#include <algorithm>

#include "support/Error.h"

namespace tessel::vta {

void TimingParameters::validate() const {
  TESSEL_CHECK(clockMegahertz > 0, "VTA timing: clock frequency must be positive, got {} MHz",
               clockMegahertz);
  TESSEL_CHECK(dramBytesPerCycle > 0, "VTA timing: DRAM bytes per cycle must be positive");
  TESSEL_CHECK(gemmCyclesPerMicroOp > 0, "VTA timing: GEMM cycles per micro-op must be positive");
  TESSEL_CHECK(aluCyclesPerMicroOp > 0, "VTA timing: ALU cycles per micro-op must be positive");
}

CycleModel::CycleModel(const HardwareConfig& config, const TimingParameters& timing)
    : config_(config), timing_(timing) {
  timing_.validate();
}

uint64_t CycleModel::dramBytes(const Instruction& in) const {
  const uint64_t elements = uint64_t(in.xSize) * in.ySize;
  switch (in.memoryType) {
    case MemoryType::MicroOp: return elements * config_.microOpBytes();
    case MemoryType::Weight: return elements * config_.weightElementBytes();
    case MemoryType::Input: return elements * config_.inputElementBytes();
    case MemoryType::Accumulator: return elements * config_.accumulatorElementBytes();
    case MemoryType::Output: return elements * config_.outputElementBytes();
    case MemoryType::Accumulator8Bit: return elements * config_.accumulatorLanes();
  }
  return 0;
}

uint64_t CycleModel::complete(const Instruction& in, uint64_t start) {
  const uint64_t issued = start + timing_.instructionOverheadCycles;
  switch (in.opcode) {
    case Opcode::Load:
    case Opcode::Store: {
      if (in.xSize == 0) return issued;  // a NOP moves nothing
      const uint64_t bytes = dramBytes(in);
      const uint64_t transfer = (bytes + timing_.dramBytesPerCycle - 1) / timing_.dramBytesPerCycle;
      // The channel carries one transfer at a time; latency overlaps with the next transfer.
      const uint64_t channelStart = std::max(issued, dramFreeAt_);
      dramFreeAt_ = channelStart + transfer;
      uint64_t done = channelStart + transfer + timing_.dramLatencyCycles;
      // Padding is written into SRAM one element a cycle after the data arrives.
      if (in.opcode == Opcode::Load) {
        const uint64_t total = uint64_t(in.xSize + in.xPadBefore + in.xPadAfter) *
                               (in.ySize + in.yPadBefore + in.yPadAfter);
        done += total - uint64_t(in.xSize) * in.ySize;
      }
      return done;
    }
    case Opcode::Gemm:
      return issued + in.microOpCount() * timing_.gemmCyclesPerMicroOp;
    case Opcode::Alu:
      return issued + in.microOpCount() * timing_.aluCyclesPerMicroOp;
    case Opcode::Finish:
      return issued;
  }
  return issued;
}

}  // namespace tessel::vta
