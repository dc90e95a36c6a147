#include "vta/Datapath.h"

#include <algorithm>
#include <cstring>

#include "support/Error.h"

namespace tessel::vta {

namespace {

int32_t shiftRight(int32_t value, int32_t amount) {
  // A negative amount shifts left (the compiler lowers x << n to SHR by -n). Shifts of 32 or
  // more saturate to what a wider shifter gives: the sign for right shifts, 0 for left shifts.
  if (amount >= 0) return value >> std::min(amount, 31);
  const int64_t left = -int64_t(amount);
  if (left >= 32) return 0;
  return int32_t(uint32_t(value) << left);
}

struct MinOp {
  static int32_t apply(int32_t a, int32_t b) { return std::min(a, b); }
};
struct MaxOp {
  static int32_t apply(int32_t a, int32_t b) { return std::max(a, b); }
};
struct AddOp {
  static int32_t apply(int32_t a, int32_t b) { return int32_t(uint32_t(a) + uint32_t(b)); }
};
struct ShiftRightOp {
  static int32_t apply(int32_t a, int32_t b) { return shiftRight(a, b); }
};
struct MultiplyOp {
  static int32_t apply(int32_t a, int32_t b) { return int32_t(uint32_t(a) * uint32_t(b)); }
};

/// dst = Op(dst, src or immediate), lane-wise, for every micro-op execution.
template <typename Op>
void runAluLoop(const Instruction& in, const MicroOp* microOps, int32_t* accumulator,
                uint32_t lanes) {
  for (uint32_t outer = 0; outer < in.iterationsOuter; ++outer) {
    for (uint32_t inner = 0; inner < in.iterationsInner; ++inner) {
      const uint32_t destinationOffset =
          outer * in.destinationFactorOuter + inner * in.destinationFactorInner;
      const uint32_t sourceOffset = outer * in.sourceFactorOuter + inner * in.sourceFactorInner;
      for (uint32_t index = in.microOpBegin; index < in.microOpEnd; ++index) {
        int32_t* destination =
            accumulator + size_t(microOps[index].destination + destinationOffset) * lanes;
        if (in.useImmediate) {
          for (uint32_t lane = 0; lane < lanes; ++lane)
            destination[lane] = Op::apply(destination[lane], in.immediate);
        } else {
          const int32_t* source =
              accumulator + size_t(microOps[index].source + sourceOffset) * lanes;
          for (uint32_t lane = 0; lane < lanes; ++lane)
            destination[lane] = Op::apply(destination[lane], source[lane]);
        }
      }
    }
  }
}

}  // namespace

Datapath::Datapath(const HardwareConfig& config, DeviceMemory& memory, Statistics& statistics,
                   GemmKernel gemmKernel, bool computeValues)
    : config_(config),
      codec_(config),
      memory_(memory),
      statistics_(statistics),
      gemmKernel_(std::move(gemmKernel)),
      computeValues_(computeValues),
      microOps_(config.microOpDepth()),
      input_(size_t(config.inputDepth()) * config.inputLanes()),
      weight_(size_t(config.weightDepth()) * config.weightLanes()),
      accumulator_(size_t(config.accumulatorDepth()) * config.accumulatorLanes()) {}

int32_t Datapath::accumulatorValue(uint32_t element, uint32_t lane) const {
  return accumulator_.at(size_t(element) * config_.accumulatorLanes() + lane);
}

void Datapath::execute(const Instruction& in) {
  switch (in.opcode) {
    case Opcode::Load: return load(in);
    case Opcode::Store: return store(in);
    case Opcode::Gemm: return gemm(in);
    case Opcode::Alu: return alu(in);
    case Opcode::Finish: return;
  }
}

uint8_t* Datapath::dramRange(const Instruction& in, uint64_t elementBytes) {
  if (in.ySize == 0) return nullptr;
  const uint64_t first = uint64_t(in.dramBase) * elementBytes;
  const uint64_t elements = uint64_t(in.ySize - 1) * in.xStride + in.xSize;
  uint8_t* pointer = memory_.find(first, elements * elementBytes);
  TESSEL_CHECK(pointer != nullptr,
               "DRAM bytes [{:#x}, {:#x}) (dram_base {} × {} B, {} rows of {} elements, stride "
               "{}) are not inside one device allocation",
               first, first + elements * elementBytes, in.dramBase, elementBytes, in.ySize,
               in.xSize, in.xStride);
  return pointer;
}

void Datapath::load(const Instruction& in) {
  if (in.xSize == 0) return;  // the runtime's NOP
  uint32_t depth = 0;
  uint64_t dramElementBytes = 0;
  uint64_t* counter = nullptr;
  uint64_t countedElementBytes = 0;
  switch (in.memoryType) {
    case MemoryType::MicroOp:
      depth = config_.microOpDepth();
      dramElementBytes = countedElementBytes = config_.microOpBytes();
      counter = &statistics_.microOpLoadBytes;
      break;
    case MemoryType::Input:
      depth = config_.inputDepth();
      dramElementBytes = countedElementBytes = config_.inputElementBytes();
      counter = &statistics_.inputLoadBytes;
      break;
    case MemoryType::Weight:
      depth = config_.weightDepth();
      dramElementBytes = countedElementBytes = config_.weightElementBytes();
      counter = &statistics_.weightLoadBytes;
      break;
    case MemoryType::Accumulator:
      depth = config_.accumulatorDepth();
      dramElementBytes = countedElementBytes = config_.accumulatorElementBytes();
      counter = &statistics_.accumulatorLoadBytes;
      break;
    case MemoryType::Accumulator8Bit:
      depth = config_.accumulatorDepth();
      dramElementBytes = config_.accumulatorLanes();  // one int8 per lane in DRAM
      countedElementBytes = config_.accumulatorElementBytes();
      counter = &statistics_.accumulatorLoadBytes;
      break;
    case MemoryType::Output:
      fail("LOAD into the OUT buffer does not exist (stores read the accumulator)");
  }
  const uint64_t xTotal = uint64_t(in.xSize) + in.xPadBefore + in.xPadAfter;
  const uint64_t yTotal = uint64_t(in.ySize) + in.yPadBefore + in.yPadAfter;
  TESSEL_CHECK(in.sramBase + xTotal * yTotal <= depth,
               "{} buffer range [{}, {}) exceeds its depth {}", memoryTypeName(in.memoryType),
               in.sramBase, in.sramBase + xTotal * yTotal, depth);
  const uint8_t* dram = dramRange(in, dramElementBytes);
  *counter += uint64_t(in.xSize) * in.ySize * countedElementBytes;
  // Without values only the micro-ops are loaded: compute instructions index by them.
  if (!computeValues_ && in.memoryType != MemoryType::MicroOp) return;

  const uint32_t blockIn = config_.blockIn(), blockOut = config_.blockOut();
  for (uint64_t row = 0; row < yTotal; ++row) {
    const bool dataRow = row >= in.yPadBefore && row < in.yPadBefore + in.ySize;
    for (uint64_t column = 0; column < xTotal; ++column) {
      const size_t element = in.sramBase + row * xTotal + column;
      const bool data = dataRow && column >= in.xPadBefore && column < in.xPadBefore + in.xSize;
      // Padding is zero, whatever the compiler asked for (the public runtime ignores pad values).
      const int8_t* source =
          data ? reinterpret_cast<const int8_t*>(
                     dram + ((row - in.yPadBefore) * in.xStride + (column - in.xPadBefore)) *
                                dramElementBytes)
               : nullptr;
      switch (in.memoryType) {
        case MemoryType::MicroOp: {
          uint32_t bits = 0;
          if (data) std::memcpy(&bits, source, sizeof bits);
          microOps_[element] = codec_.decodeMicroOp(bits);
          break;
        }
        case MemoryType::Input: {
          int16_t* destination = &input_[element * config_.inputLanes()];
          for (int lane = 0; lane < config_.inputLanes(); ++lane)
            destination[lane] = data ? source[lane] : 0;
          break;
        }
        case MemoryType::Weight: {
          // DRAM holds w[j][k] (output-major); the buffer keeps pairs of k per output j.
          int16_t* destination = &weight_[element * config_.weightLanes()];
          for (uint32_t j = 0; j < blockOut; ++j)
            for (uint32_t k = 0; k < blockIn; ++k)
              destination[((k / 2) * blockOut + j) * 2 + k % 2] = data ? source[j * blockIn + k] : 0;
          break;
        }
        case MemoryType::Accumulator: {
          int32_t* destination = &accumulator_[element * config_.accumulatorLanes()];
          if (data)
            std::memcpy(destination, source, config_.accumulatorElementBytes());
          else
            std::fill_n(destination, config_.accumulatorLanes(), 0);
          break;
        }
        case MemoryType::Accumulator8Bit: {
          int32_t* destination = &accumulator_[element * config_.accumulatorLanes()];
          for (int lane = 0; lane < config_.accumulatorLanes(); ++lane)
            destination[lane] = data ? source[lane] : 0;
          break;
        }
        case MemoryType::Output:
          break;
      }
    }
  }
}

void Datapath::store(const Instruction& in) {
  if (in.xSize == 0) return;  // the runtime's NOP
  TESSEL_CHECK(in.memoryType == MemoryType::Output,
               "STORE supports only the OUT memory type, got {}", memoryTypeName(in.memoryType));
  TESSEL_CHECK(in.yPadBefore == 0 && in.yPadAfter == 0 && in.xPadBefore == 0 && in.xPadAfter == 0,
               "STORE cannot pad (pads y {}/{} x {}/{})", in.yPadBefore, in.yPadAfter,
               in.xPadBefore, in.xPadAfter);
  const uint64_t elements = uint64_t(in.xSize) * in.ySize;
  TESSEL_CHECK(in.sramBase + elements <= config_.accumulatorDepth(),
               "OUT buffer range [{}, {}) exceeds its depth {}", in.sramBase,
               in.sramBase + elements, config_.accumulatorDepth());
  uint8_t* dram = dramRange(in, config_.outputElementBytes());
  statistics_.outputStoreBytes += elements * config_.outputElementBytes();
  if (!computeValues_) return;
  const uint32_t lanes = config_.accumulatorLanes();
  for (uint32_t y = 0; y < in.ySize; ++y) {
    for (uint32_t x = 0; x < in.xSize; ++x) {
      const int32_t* source = &accumulator_[(in.sramBase + size_t(y) * in.xSize + x) * lanes];
      auto* destination = reinterpret_cast<int8_t*>(dram + (size_t(y) * in.xStride + x) * lanes);
      // Keep the low 8 bits: the hardware truncates, clipping is the ALU's job.
      for (uint32_t lane = 0; lane < lanes; ++lane) destination[lane] = int8_t(uint32_t(source[lane]));
    }
  }
}

void Datapath::checkComputeIndices(const Instruction& in) const {
  const char* op = opcodeName(in.opcode);
  TESSEL_CHECK(in.microOpBegin <= in.microOpEnd, "{}: uop_bgn {} is after uop_end {}", op,
               in.microOpBegin, in.microOpEnd);
  TESSEL_CHECK(in.microOpEnd <= config_.microOpDepth(),
               "{}: micro-ops [{}, {}) exceed the micro-op buffer depth {}", op, in.microOpBegin,
               in.microOpEnd, config_.microOpDepth());
  if (in.microOpCount() == 0) return;
  const bool isGemm = in.opcode == Opcode::Gemm;
  const bool readsSource = !(isGemm && in.resetAccumulator) && !(!isGemm && in.useImmediate);
  const bool readsWeight = isGemm && !in.resetAccumulator;
  const uint64_t sourceDepth = isGemm ? config_.inputDepth() : config_.accumulatorDepth();
  // Factors are unsigned, so the largest index is reached at the last iterations.
  uint64_t maxDestination = 0, maxSource = 0, maxWeight = 0;
  for (uint32_t index = in.microOpBegin; index < in.microOpEnd; ++index) {
    maxDestination = std::max<uint64_t>(maxDestination, microOps_[index].destination);
    maxSource = std::max<uint64_t>(maxSource, microOps_[index].source);
    maxWeight = std::max<uint64_t>(maxWeight, microOps_[index].weight);
  }
  const uint64_t lastOuter = in.iterationsOuter - 1, lastInner = in.iterationsInner - 1;
  const bool inRange =
      maxDestination + lastOuter * in.destinationFactorOuter + lastInner * in.destinationFactorInner <
          config_.accumulatorDepth() &&
      (!readsSource ||
       maxSource + lastOuter * in.sourceFactorOuter + lastInner * in.sourceFactorInner < sourceDepth) &&
      (!readsWeight ||
       maxWeight + lastOuter * in.weightFactorOuter + lastInner * in.weightFactorInner <
           config_.weightDepth());
  if (inRange) return;
  // Find the first offending execution to name it.
  for (uint64_t outer = 0; outer <= lastOuter; ++outer) {
    for (uint64_t inner = 0; inner <= lastInner; ++inner) {
      for (uint32_t index = in.microOpBegin; index < in.microOpEnd; ++index) {
        const MicroOp& microOp = microOps_[index];
        auto check = [&](const char* buffer, uint64_t value, uint64_t depth) {
          TESSEL_CHECK(value < depth,
                       "{}: {} index {} is out of range (depth {}) at micro-op {}, outer "
                       "iteration {}, inner iteration {}",
                       op, buffer, value, depth, index, outer, inner);
        };
        check("accumulator",
              microOp.destination + outer * in.destinationFactorOuter + inner * in.destinationFactorInner,
              config_.accumulatorDepth());
        if (readsSource)
          check(isGemm ? "input" : "accumulator source",
                microOp.source + outer * in.sourceFactorOuter + inner * in.sourceFactorInner,
                sourceDepth);
        if (readsWeight)
          check("weight", microOp.weight + outer * in.weightFactorOuter + inner * in.weightFactorInner,
                config_.weightDepth());
      }
    }
  }
}

void Datapath::gemm(const Instruction& in) {
  checkComputeIndices(in);
  if (in.resetAccumulator) {
    if (!computeValues_) return;
    // Reset GEMMs zero the addressed accumulators and are not counted (public rule).
    const uint32_t lanes = config_.accumulatorLanes();
    for (uint32_t outer = 0; outer < in.iterationsOuter; ++outer)
      for (uint32_t inner = 0; inner < in.iterationsInner; ++inner)
        for (uint32_t index = in.microOpBegin; index < in.microOpEnd; ++index) {
          const size_t element = microOps_[index].destination + outer * in.destinationFactorOuter +
                                 inner * in.destinationFactorInner;
          std::fill_n(&accumulator_[element * lanes], lanes, 0);
        }
    return;
  }
  statistics_.gemmCounter += in.microOpCount();
  if (!computeValues_) return;
  const GemmOperands operands{accumulator_.data(), input_.data(), weight_.data(),
                              uint32_t(config_.batch()), uint32_t(config_.blockIn()),
                              uint32_t(config_.blockOut())};
  gemmKernel_.run(in, microOps_.data(), operands);
}

void Datapath::alu(const Instruction& in) {
  checkComputeIndices(in);
  TESSEL_CHECK(in.aluOpcode != AluOpcode::Multiply || config_.hasMultiply(),
               "ALU: MUL does not exist in hardware version {}", config_.hardwareVersion);
  statistics_.aluCounter += in.microOpCount();
  if (!computeValues_) return;
  const uint32_t lanes = config_.accumulatorLanes();
  int32_t* accumulator = accumulator_.data();
  switch (in.aluOpcode) {
    case AluOpcode::Min: return runAluLoop<MinOp>(in, microOps_.data(), accumulator, lanes);
    case AluOpcode::Max: return runAluLoop<MaxOp>(in, microOps_.data(), accumulator, lanes);
    case AluOpcode::Add: return runAluLoop<AddOp>(in, microOps_.data(), accumulator, lanes);
    case AluOpcode::ShiftRight: return runAluLoop<ShiftRightOp>(in, microOps_.data(), accumulator, lanes);
    case AluOpcode::Multiply: return runAluLoop<MultiplyOp>(in, microOps_.data(), accumulator, lanes);
  }
}

}  // namespace tessel::vta
