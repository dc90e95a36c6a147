#include "vta/InstructionSet.h"

#include "support/Error.h"

namespace tessel::vta {

const char* opcodeName(Opcode opcode) {
  switch (opcode) {
    case Opcode::Load: return "LOAD";
    case Opcode::Store: return "STORE";
    case Opcode::Gemm: return "GEMM";
    case Opcode::Finish: return "FINISH";
    case Opcode::Alu: return "ALU";
  }
  return "?";
}

uint64_t dramElementBytes(MemoryType type, const HardwareConfig& config) {
  switch (type) {
    case MemoryType::MicroOp: return uint64_t(config.microOpBytes());
    case MemoryType::Input: return uint64_t(config.inputElementBytes());
    case MemoryType::Weight: return uint64_t(config.weightElementBytes());
    case MemoryType::Accumulator: return uint64_t(config.accumulatorElementBytes());
    case MemoryType::Accumulator8Bit: return uint64_t(config.accumulatorLanes());
    case MemoryType::Output: return uint64_t(config.outputElementBytes());
  }
  return 0;
}

const char* memoryTypeName(MemoryType type) {
  switch (type) {
    case MemoryType::MicroOp: return "UOP";
    case MemoryType::Weight: return "WGT";
    case MemoryType::Input: return "INP";
    case MemoryType::Accumulator: return "ACC";
    case MemoryType::Output: return "OUT";
    case MemoryType::Accumulator8Bit: return "ACC_8BIT";
  }
  return "?";
}

const char* aluOpcodeName(AluOpcode opcode) {
  switch (opcode) {
    case AluOpcode::Min: return "MIN";
    case AluOpcode::Max: return "MAX";
    case AluOpcode::Add: return "ADD";
    case AluOpcode::ShiftRight: return "SHR";
    case AluOpcode::Multiply: return "MUL";
  }
  return "?";
}

const char* stageName(Stage stage) {
  switch (stage) {
    case Stage::Load: return "load";
    case Stage::Compute: return "compute";
    case Stage::Store: return "store";
  }
  return "?";
}

Stage Instruction::stage() const {
  if (opcode == Opcode::Store) return Stage::Store;
  if (opcode == Opcode::Load && (memoryType == MemoryType::Input || memoryType == MemoryType::Weight))
    return Stage::Load;
  return Stage::Compute;
}

uint64_t Instruction::microOpCount() const {
  if (opcode != Opcode::Gemm && opcode != Opcode::Alu) return 0;
  if (microOpEnd <= microOpBegin) return 0;
  return uint64_t(iterationsOuter) * iterationsInner * (microOpEnd - microOpBegin);
}

namespace {

/// Lays fields out the way a C compiler lays out bit-fields of one unit type: in declaration
/// order from bit 0, moving a field that would straddle a unit boundary to the next unit.
class FieldPacker {
 public:
  FieldPacker(unsigned unitBits, unsigned totalBits, const char* format)
      : unitBits_(unitBits), totalBits_(totalBits), format_(format) {}

  BitField add(unsigned width, const char* name) {
    TESSEL_CHECK(width >= 1 && width <= unitBits_, "VTA config: field {} of the {} needs {} bits",
                 name, format_, width);
    if (position_ % unitBits_ + width > unitBits_) position_ += unitBits_ - position_ % unitBits_;
    BitField field{position_, width};
    position_ += width;
    TESSEL_CHECK(position_ <= totalBits_,
                 "VTA config: the {} does not fit in {} bits (field {} would end at bit {}); "
                 "the buffer depths are too large",
                 format_, totalBits_, name, position_ - 1);
    return field;
  }

 private:
  unsigned unitBits_;
  unsigned totalBits_;
  const char* format_;
  unsigned position_ = 0;
};

// Fixed field widths of the public specification.
constexpr unsigned kOpcodeBits = 3;
constexpr unsigned kMemoryTypeBits = 3;
constexpr unsigned kSramAddressBits = 16;
constexpr unsigned kDramAddressBits = 32;
constexpr unsigned kSizeBits = 16;
constexpr unsigned kStrideBits = 16;
constexpr unsigned kPadBits = 4;
constexpr unsigned kLoopIterationBits = 14;
constexpr unsigned kAluOpcodeBits = 3;
constexpr unsigned kImmediateBits = 16;

uint64_t mask(unsigned width) { return width >= 64 ? ~0ull : (1ull << width) - 1; }

uint64_t getField(const EncodedInstruction& bits, BitField field) {
  return (bits[field.offset / 64] >> (field.offset % 64)) & mask(field.width);
}

void setField(EncodedInstruction& bits, BitField field, uint64_t value, const char* name,
              const char* opcode) {
  TESSEL_CHECK(value <= mask(field.width), "{} instruction: {} = {} does not fit its {}-bit field",
               opcode, name, value, field.width);
  bits[field.offset / 64] |= value << (field.offset % 64);
}

}  // namespace

InstructionLayout InstructionLayout::forConfig(const HardwareConfig& config) {
  InstructionLayout layout;
  const unsigned accumulatorBits = config.logAccumulatorDepth();
  const unsigned inputBits = config.logInputDepth();
  const unsigned weightBits = config.logWeightDepth();
  const unsigned microOpBits = config.logMicroOpDepth();

  FieldPacker common(64, 128, "instruction");
  layout.opcode = common.add(kOpcodeBits, "opcode");
  layout.popPrevious = common.add(1, "pop_prev_dep");
  layout.popNext = common.add(1, "pop_next_dep");
  layout.pushPrevious = common.add(1, "push_prev_dep");
  layout.pushNext = common.add(1, "push_next_dep");

  FieldPacker memory(common);
  layout.memoryType = memory.add(kMemoryTypeBits, "memory_type");
  layout.sramBase = memory.add(kSramAddressBits, "sram_base");
  layout.dramBase = memory.add(kDramAddressBits, "dram_base");
  layout.ySize = memory.add(kSizeBits, "y_size");
  layout.xSize = memory.add(kSizeBits, "x_size");
  layout.xStride = memory.add(kStrideBits, "x_stride");
  layout.yPadBefore = memory.add(kPadBits, "y_pad_0");
  layout.yPadAfter = memory.add(kPadBits, "y_pad_1");
  layout.xPadBefore = memory.add(kPadBits, "x_pad_0");
  layout.xPadAfter = memory.add(kPadBits, "x_pad_1");

  FieldPacker compute(common);
  layout.resetAccumulator = compute.add(1, "reset_reg");
  layout.microOpBegin = compute.add(microOpBits, "uop_bgn");
  layout.microOpEnd = compute.add(microOpBits + 1, "uop_end");
  layout.iterationsOuter = compute.add(kLoopIterationBits, "iter_out");
  layout.iterationsInner = compute.add(kLoopIterationBits, "iter_in");

  FieldPacker gemm(compute);
  layout.gemmDestinationOuter = gemm.add(accumulatorBits, "dst_factor_out");
  layout.gemmDestinationInner = gemm.add(accumulatorBits, "dst_factor_in");
  layout.gemmSourceOuter = gemm.add(inputBits, "src_factor_out");
  layout.gemmSourceInner = gemm.add(inputBits, "src_factor_in");
  layout.gemmWeightOuter = gemm.add(weightBits, "wgt_factor_out");
  layout.gemmWeightInner = gemm.add(weightBits, "wgt_factor_in");

  FieldPacker alu(compute);
  layout.aluDestinationOuter = alu.add(accumulatorBits, "dst_factor_out");
  layout.aluDestinationInner = alu.add(accumulatorBits, "dst_factor_in");
  layout.aluSourceOuter = alu.add(accumulatorBits, "src_factor_out");
  layout.aluSourceInner = alu.add(accumulatorBits, "src_factor_in");
  layout.aluOpcode = alu.add(kAluOpcodeBits, "alu_opcode");
  layout.useImmediate = alu.add(1, "use_imm");
  layout.immediate = alu.add(kImmediateBits, "imm");

  FieldPacker microOp(32, 32, "micro-op");
  layout.microOpDestination = microOp.add(accumulatorBits, "dst_idx");
  layout.microOpSource = microOp.add(config.microOpSourceWidth(), "src_idx");
  layout.microOpWeight = microOp.add(weightBits, "wgt_idx");
  return layout;
}

InstructionCodec::InstructionCodec(const HardwareConfig& config)
    : config_(config), layout_(InstructionLayout::forConfig(config)) {}

EncodedInstruction InstructionCodec::encode(const Instruction& in) const {
  EncodedInstruction bits{0, 0};
  const char* op = opcodeName(in.opcode);
  const InstructionLayout& l = layout_;
  auto set = [&](BitField field, uint64_t value, const char* name) {
    setField(bits, field, value, name, op);
  };
  set(l.opcode, uint64_t(in.opcode), "opcode");
  set(l.popPrevious, in.dependencies.popPrevious, "pop_prev_dep");
  set(l.popNext, in.dependencies.popNext, "pop_next_dep");
  set(l.pushPrevious, in.dependencies.pushPrevious, "push_prev_dep");
  set(l.pushNext, in.dependencies.pushNext, "push_next_dep");
  switch (in.opcode) {
    case Opcode::Load:
    case Opcode::Store:
      set(l.memoryType, uint64_t(in.memoryType), "memory_type");
      set(l.sramBase, in.sramBase, "sram_base");
      set(l.dramBase, in.dramBase, "dram_base");
      set(l.ySize, in.ySize, "y_size");
      set(l.xSize, in.xSize, "x_size");
      set(l.xStride, in.xStride, "x_stride");
      set(l.yPadBefore, in.yPadBefore, "y_pad_0");
      set(l.yPadAfter, in.yPadAfter, "y_pad_1");
      set(l.xPadBefore, in.xPadBefore, "x_pad_0");
      set(l.xPadAfter, in.xPadAfter, "x_pad_1");
      break;
    case Opcode::Gemm:
    case Opcode::Alu: {
      set(l.resetAccumulator, in.resetAccumulator, "reset_reg");
      set(l.microOpBegin, in.microOpBegin, "uop_bgn");
      set(l.microOpEnd, in.microOpEnd, "uop_end");
      set(l.iterationsOuter, in.iterationsOuter, "iter_out");
      set(l.iterationsInner, in.iterationsInner, "iter_in");
      if (in.opcode == Opcode::Gemm) {
        set(l.gemmDestinationOuter, in.destinationFactorOuter, "dst_factor_out");
        set(l.gemmDestinationInner, in.destinationFactorInner, "dst_factor_in");
        set(l.gemmSourceOuter, in.sourceFactorOuter, "src_factor_out");
        set(l.gemmSourceInner, in.sourceFactorInner, "src_factor_in");
        set(l.gemmWeightOuter, in.weightFactorOuter, "wgt_factor_out");
        set(l.gemmWeightInner, in.weightFactorInner, "wgt_factor_in");
      } else {
        set(l.aluDestinationOuter, in.destinationFactorOuter, "dst_factor_out");
        set(l.aluDestinationInner, in.destinationFactorInner, "dst_factor_in");
        set(l.aluSourceOuter, in.sourceFactorOuter, "src_factor_out");
        set(l.aluSourceInner, in.sourceFactorInner, "src_factor_in");
        set(l.aluOpcode, uint64_t(in.aluOpcode), "alu_opcode");
        set(l.useImmediate, in.useImmediate, "use_imm");
        TESSEL_CHECK(in.immediate >= -(1 << (kImmediateBits - 1)) &&
                         in.immediate < (1 << (kImmediateBits - 1)),
                     "ALU instruction: imm = {} does not fit its signed {}-bit field", in.immediate,
                     kImmediateBits);
        set(l.immediate, uint64_t(uint32_t(in.immediate)) & mask(kImmediateBits), "imm");
      }
      break;
    }
    case Opcode::Finish:
      break;
  }
  return bits;
}

Instruction InstructionCodec::decode(const EncodedInstruction& bits) const {
  const InstructionLayout& l = layout_;
  auto get = [&bits](BitField field) { return uint32_t(getField(bits, field)); };
  Instruction in;
  const uint32_t opcode = get(l.opcode);
  TESSEL_CHECK(opcode <= uint32_t(Opcode::Alu), "unknown opcode {}", opcode);
  in.opcode = Opcode(opcode);
  in.dependencies = {get(l.popPrevious) != 0, get(l.popNext) != 0, get(l.pushPrevious) != 0,
                     get(l.pushNext) != 0};
  switch (in.opcode) {
    case Opcode::Load:
    case Opcode::Store: {
      const uint32_t memoryType = get(l.memoryType);
      TESSEL_CHECK(memoryType <= uint32_t(MemoryType::Accumulator8Bit),
                   "{}: unknown memory type {}", opcodeName(in.opcode), memoryType);
      in.memoryType = MemoryType(memoryType);
      in.sramBase = get(l.sramBase);
      in.dramBase = get(l.dramBase);
      in.ySize = get(l.ySize);
      in.xSize = get(l.xSize);
      in.xStride = get(l.xStride);
      in.yPadBefore = get(l.yPadBefore);
      in.yPadAfter = get(l.yPadAfter);
      in.xPadBefore = get(l.xPadBefore);
      in.xPadAfter = get(l.xPadAfter);
      break;
    }
    case Opcode::Gemm:
    case Opcode::Alu:
      in.resetAccumulator = get(l.resetAccumulator) != 0;
      in.microOpBegin = get(l.microOpBegin);
      in.microOpEnd = get(l.microOpEnd);
      in.iterationsOuter = get(l.iterationsOuter);
      in.iterationsInner = get(l.iterationsInner);
      if (in.opcode == Opcode::Gemm) {
        in.destinationFactorOuter = get(l.gemmDestinationOuter);
        in.destinationFactorInner = get(l.gemmDestinationInner);
        in.sourceFactorOuter = get(l.gemmSourceOuter);
        in.sourceFactorInner = get(l.gemmSourceInner);
        in.weightFactorOuter = get(l.gemmWeightOuter);
        in.weightFactorInner = get(l.gemmWeightInner);
      } else {
        in.destinationFactorOuter = get(l.aluDestinationOuter);
        in.destinationFactorInner = get(l.aluDestinationInner);
        in.sourceFactorOuter = get(l.aluSourceOuter);
        in.sourceFactorInner = get(l.aluSourceInner);
        const uint32_t aluOpcode = get(l.aluOpcode);
        TESSEL_CHECK(aluOpcode <= uint32_t(AluOpcode::Multiply), "ALU: unknown ALU opcode {}",
                     aluOpcode);
        in.aluOpcode = AluOpcode(aluOpcode);
        in.useImmediate = get(l.useImmediate) != 0;
        // Sign-extend the 16-bit immediate.
        in.immediate = int32_t(int16_t(uint16_t(get(l.immediate))));
      }
      break;
    case Opcode::Finish:
      break;
  }
  return in;
}

uint32_t InstructionCodec::encode(const MicroOp& microOp) const {
  EncodedInstruction bits{0, 0};
  setField(bits, layout_.microOpDestination, microOp.destination, "dst_idx", "micro-op");
  setField(bits, layout_.microOpSource, microOp.source, "src_idx", "micro-op");
  setField(bits, layout_.microOpWeight, microOp.weight, "wgt_idx", "micro-op");
  return uint32_t(bits[0]);
}

MicroOp InstructionCodec::decodeMicroOp(uint32_t bits) const {
  const EncodedInstruction words{bits, 0};
  return MicroOp{uint32_t(getField(words, layout_.microOpDestination)),
                 uint32_t(getField(words, layout_.microOpSource)),
                 uint32_t(getField(words, layout_.microOpWeight))};
}

}  // namespace tessel::vta
