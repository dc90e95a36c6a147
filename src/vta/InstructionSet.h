/// The VTA instruction set: 128-bit task instructions (LOAD, STORE, GEMM, ALU, FINISH, each
/// with four dependency-token flags) and 32-bit micro-ops, in a decoded form and in the exact
/// bit encoding of the public hardware specification. Field positions follow the C bit-field
/// layout of the public header (fields packed from bit 0 of each 64-bit word, a field that
/// would straddle a word starts the next word), so they scale with the configuration and are
/// bit-identical to the hardware for the default one.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "vta/HardwareConfig.h"

namespace tessel::vta {

enum class Opcode : uint8_t { Load = 0, Store = 1, Gemm = 2, Finish = 3, Alu = 4 };

/// Which on-chip buffer a LOAD fills or a STORE drains.
enum class MemoryType : uint8_t {
  MicroOp = 0,
  Weight = 1,
  Input = 2,
  Accumulator = 3,
  Output = 4,
  /// int8 data in DRAM, sign-extended into the int32 accumulator.
  Accumulator8Bit = 5,
};

enum class AluOpcode : uint8_t { Min = 0, Max = 1, Add = 2, ShiftRight = 3, Multiply = 4 };

/// The three execution modules; a dependency token travels between two adjacent ones.
/// The numbering (load 1, compute 2, store 3) is the public runtime's stage numbering.
enum class Stage : uint8_t { Load = 1, Compute = 2, Store = 3 };

const char* opcodeName(Opcode opcode);
const char* memoryTypeName(MemoryType type);
const char* aluOpcodeName(AluOpcode opcode);
const char* stageName(Stage stage);

/// The four dependency flags. "Previous" is the module before in the pipeline (load is before
/// compute, compute before store), "next" the one after.
struct DependencyFlags {
  bool popPrevious = false;
  bool popNext = false;
  bool pushPrevious = false;
  bool pushNext = false;
  bool operator==(const DependencyFlags&) const = default;
};

/// Bytes of one DRAM element of a LOAD into `type` (ACC_8BIT: one int8 per accumulator lane) or
/// of a STORE (`Output`): the unit of a LOAD/STORE's dram_base, x_size and x_stride.
uint64_t dramElementBytes(MemoryType type, const HardwareConfig& config);

/// One decoded instruction. It is one flat struct (not a variant) because the simulator reads
/// it in its inner loop; only the fields of its opcode are meaningful, the others stay zero.
struct Instruction {
  Opcode opcode = Opcode::Finish;
  DependencyFlags dependencies;

  // LOAD / STORE: a 2D strided DRAM access with zero padding on the SRAM side.
  MemoryType memoryType = MemoryType::MicroOp;
  uint32_t sramBase = 0;   // in buffer elements
  uint32_t dramBase = 0;   // in buffer elements of memoryType
  uint32_t ySize = 0;
  uint32_t xSize = 0;      // 0 makes the instruction a no-op (the runtime's NOP)
  uint32_t xStride = 0;
  uint32_t yPadBefore = 0;
  uint32_t yPadAfter = 0;
  uint32_t xPadBefore = 0;
  uint32_t xPadAfter = 0;

  // GEMM / ALU: micro-ops [microOpBegin, microOpEnd) run inside two nested loops; each loop
  // adds its index times a factor to the micro-op's buffer indices.
  bool resetAccumulator = false;  // GEMM only: zero the addressed accumulators
  uint32_t microOpBegin = 0;
  uint32_t microOpEnd = 0;
  uint32_t iterationsOuter = 0;
  uint32_t iterationsInner = 0;
  uint32_t destinationFactorOuter = 0;
  uint32_t destinationFactorInner = 0;
  uint32_t sourceFactorOuter = 0;
  uint32_t sourceFactorInner = 0;
  uint32_t weightFactorOuter = 0;  // GEMM only
  uint32_t weightFactorInner = 0;  // GEMM only
  AluOpcode aluOpcode = AluOpcode::Min;  // ALU only
  bool useImmediate = false;             // ALU only
  int32_t immediate = 0;                 // ALU only, signed 16-bit

  /// The module that executes it: STORE → store; LOAD of input or weights → load; everything
  /// else (GEMM, ALU, FINISH, LOAD of micro-ops or accumulators) → compute.
  Stage stage() const;
  /// Micro-op executions: iterations × micro-ops (0 for other opcodes).
  uint64_t microOpCount() const;

  bool operator==(const Instruction&) const = default;
};

/// One micro-op: buffer indices for one GEMM (accumulator += input · weightᵀ) or one ALU step
/// (accumulator[destination] = f(accumulator[destination], accumulator[source])).
struct MicroOp {
  uint32_t destination = 0;  // accumulator index
  uint32_t source = 0;       // input index (GEMM) or accumulator index (ALU)
  uint32_t weight = 0;       // weight index (GEMM)
  bool operator==(const MicroOp&) const = default;
};

/// A 128-bit instruction as two little-endian 64-bit words (word 0 holds bits 0..63).
using EncodedInstruction = std::array<uint64_t, 2>;

/// A field of an encoding: its lowest bit and its width.
struct BitField {
  unsigned offset = 0;
  unsigned width = 0;
};

/// Where every field sits for one configuration.
struct InstructionLayout {
  BitField opcode, popPrevious, popNext, pushPrevious, pushNext;
  // LOAD / STORE
  BitField memoryType, sramBase, dramBase, ySize, xSize, xStride, yPadBefore, yPadAfter,
      xPadBefore, xPadAfter;
  // GEMM (ALU shares the first word)
  BitField resetAccumulator, microOpBegin, microOpEnd, iterationsOuter, iterationsInner,
      gemmDestinationOuter, gemmDestinationInner, gemmSourceOuter, gemmSourceInner,
      gemmWeightOuter, gemmWeightInner;
  // ALU second word
  BitField aluDestinationOuter, aluDestinationInner, aluSourceOuter, aluSourceInner, aluOpcode,
      useImmediate, immediate;
  // micro-op (32 bits)
  BitField microOpDestination, microOpSource, microOpWeight;

  /// Computes the layout; throws Error when a format needs more than 128 (32) bits.
  static InstructionLayout forConfig(const HardwareConfig& config);
};

/// Encodes and decodes instructions and micro-ops of one configuration. Encoding checks that
/// every value fits its field and throws Error naming the field otherwise.
class InstructionCodec {
 public:
  explicit InstructionCodec(const HardwareConfig& config);

  EncodedInstruction encode(const Instruction& instruction) const;
  /// Throws Error for an unknown opcode, memory type or ALU opcode.
  Instruction decode(const EncodedInstruction& bits) const;
  uint32_t encode(const MicroOp& microOp) const;
  MicroOp decodeMicroOp(uint32_t bits) const;

  const InstructionLayout& layout() const { return layout_; }
  const HardwareConfig& config() const { return config_; }

 private:
  HardwareConfig config_;
  InstructionLayout layout_;
};

}  // namespace tessel::vta
