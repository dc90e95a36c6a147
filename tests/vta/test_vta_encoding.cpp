// The VTA hardware configuration (defaults, derived sizes, rejected configurations) and the
// instruction encoding: golden bit patterns for every instruction kind, agreement with the
// public specification's bit-field structs, round trips, and the disassembler.
#include <cstring>
#include <functional>
#include <random>

#include <gtest/gtest.h>

#include "support/Error.h"
#include "support/Files.h"
#include "support/TempDir.h"
#include "vta/Disassembler.h"
#include "vta/HardwareConfig.h"
#include "vta/InstructionSet.h"

using namespace tessel;
using namespace tessel::vta;

TEST(VtaConfig, DefaultMatchesThePublicRepository) {
  HardwareConfig config;
  EXPECT_EQ(config.target, "sim");
  EXPECT_EQ(config.hardwareVersion, "0.0.2");
  EXPECT_EQ(config.batch(), 1);
  EXPECT_EQ(config.blockIn(), 16);
  EXPECT_EQ(config.blockOut(), 16);
  EXPECT_EQ(config.microOpDepth(), 8192u);
  EXPECT_EQ(config.inputDepth(), 2048u);
  EXPECT_EQ(config.weightDepth(), 1024u);
  EXPECT_EQ(config.accumulatorDepth(), 2048u);
  EXPECT_EQ(config.inputElementBytes(), 16);
  EXPECT_EQ(config.weightElementBytes(), 256);
  EXPECT_EQ(config.accumulatorElementBytes(), 64);
  EXPECT_EQ(config.outputElementBytes(), 16);
  EXPECT_EQ(config.logOutputBufferSize(), 15);
  EXPECT_EQ(config.bitstreamName(), "1x16_i8w8a32_15_15_18_17");
  EXPECT_EQ(config.modelName(), "sim_1x16_i8w8a32_15_15_18_17");
  EXPECT_TRUE(config.hasMultiply());
  EXPECT_NO_THROW(config.validate());
}

TEST(VtaConfig, ReadsAConfigFileAndRoundTrips) {
  TempDir dir;
  const std::string path = dir.path() + "/vta_config.json";
  writeFile(path, R"({"TARGET": "tsim", "HW_VER": "0.0.1", "LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3,
    "LOG_ACC_WIDTH": 5, "LOG_BATCH": 1, "LOG_BLOCK": 3, "LOG_UOP_BUFF_SIZE": 14,
    "LOG_INP_BUFF_SIZE": 14, "LOG_WGT_BUFF_SIZE": 16, "LOG_ACC_BUFF_SIZE": 16})");
  HardwareConfig config = HardwareConfig::fromFile(path);
  EXPECT_EQ(config.target, "tsim");
  EXPECT_EQ(config.batch(), 2);
  EXPECT_EQ(config.blockIn(), 8);
  EXPECT_EQ(config.inputElementBytes(), 16);
  EXPECT_EQ(config.inputDepth(), 1024u);
  EXPECT_EQ(config.weightDepth(), 1024u);
  EXPECT_EQ(config.accumulatorDepth(), 1024u);
  EXPECT_FALSE(config.hasMultiply());
  EXPECT_EQ(config.bitstreamName(), "2x8_i8w8a32_14_14_16_16");
  EXPECT_EQ(HardwareConfig::fromJson(config.toJson()), config);
}

TEST(VtaConfig, RejectsInvalidConfigurationsWithTheReason) {
  auto reason = [](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json json = HardwareConfig{}.toJson();
    edit(json);
    try {
      HardwareConfig::fromJson(json);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(reason([](auto& j) { j.erase("LOG_BLOCK"); }).find("missing key LOG_BLOCK"), std::string::npos);
  EXPECT_NE(reason([](auto& j) { j["LOG_BLOK"] = 4; }).find("unknown key 'LOG_BLOK'"), std::string::npos);
  EXPECT_NE(reason([](auto& j) { j["LOG_BATCH"] = "1"; }).find("LOG_BATCH must be an integer"), std::string::npos);
  EXPECT_NE(reason([](auto& j) { j["LOG_INP_WIDTH"] = 2; }).find("LOG_INP_WIDTH=2 is not modelled"), std::string::npos);
  EXPECT_NE(reason([](auto& j) { j["HW_VER"] = "two"; }).find("HW_VER 'two'"), std::string::npos);
  EXPECT_NE(reason([](auto& j) { j["LOG_WGT_BUFF_SIZE"] = 8; }).find("LOG_WGT_BUFF_SIZE=8 holds fewer than 2"), std::string::npos);
  // Deeper buffers need wider index fields: the micro-op no longer fits 32 bits.
  EXPECT_NE(reason([](auto& j) { j["LOG_ACC_BUFF_SIZE"] = 19; }).find("does not fit in"), std::string::npos);
  EXPECT_NE(reason([](auto& j) { j["LOG_ACC_BUFF_SIZE"] = 25; }).find("16-bit SRAM address"), std::string::npos);
  EXPECT_EQ(reason([](auto&) {}), "accepted");
}

// ---- Golden encodings (default configuration) ----
// Expected words computed from the bit positions of the public hw_spec.h.

TEST(VtaEncoding, GoldenLoad) {
  InstructionCodec codec{HardwareConfig{}};
  Instruction load;
  load.opcode = Opcode::Load;
  load.dependencies.popNext = load.dependencies.pushNext = true;
  load.memoryType = MemoryType::Input;
  load.sramBase = 5;
  load.dramBase = 0x1234;
  load.ySize = 3;
  load.xSize = 4;
  load.xStride = 16;
  load.yPadBefore = 1;
  load.yPadAfter = 2;
  load.xPadBefore = 3;
  load.xPadAfter = 4;
  const EncodedInstruction bits = codec.encode(load);
  EXPECT_EQ(bits[0], 0x48d0001550ull);
  EXPECT_EQ(bits[1], 0x4321001000040003ull);
  EXPECT_EQ(codec.decode(bits), load);
}

TEST(VtaEncoding, GoldenStore) {
  InstructionCodec codec{HardwareConfig{}};
  Instruction store;
  store.opcode = Opcode::Store;
  store.dependencies.pushPrevious = true;
  store.memoryType = MemoryType::Output;
  store.sramBase = 100;
  store.dramBase = 0xABCDEF;
  store.ySize = 2;
  store.xSize = 8;
  store.xStride = 64;
  const EncodedInstruction bits = codec.encode(store);
  EXPECT_EQ(bits[0], 0x2af37bc019221ull);
  EXPECT_EQ(bits[1], 0x4000080002ull);
  EXPECT_EQ(codec.decode(bits), store);
}

TEST(VtaEncoding, GoldenGemm) {
  InstructionCodec codec{HardwareConfig{}};
  Instruction gemm;
  gemm.opcode = Opcode::Gemm;
  gemm.dependencies.popPrevious = gemm.dependencies.pushPrevious = true;
  gemm.microOpBegin = 1;
  gemm.microOpEnd = 9;
  gemm.iterationsOuter = 4;
  gemm.iterationsInner = 2;
  gemm.destinationFactorOuter = 2;
  gemm.destinationFactorInner = 1;
  gemm.sourceFactorOuter = 16;
  gemm.sourceFactorInner = 1;
  gemm.weightFactorOuter = 0;
  gemm.weightFactorInner = 3;
  const EncodedInstruction bits = codec.encode(gemm);
  EXPECT_EQ(bits[0], 0x400200120012aull);
  EXPECT_EQ(bits[1], 0xc0000204000802ull);
  EXPECT_EQ(codec.decode(bits), gemm);
  gemm.resetAccumulator = true;
  EXPECT_EQ(codec.encode(gemm)[0], 0x400200120012aull | (1ull << 7));
}

TEST(VtaEncoding, GoldenAluWithNegativeImmediate) {
  InstructionCodec codec{HardwareConfig{}};
  Instruction alu;
  alu.opcode = Opcode::Alu;
  alu.dependencies.pushNext = true;
  alu.microOpBegin = 3;
  alu.microOpEnd = 7;
  alu.iterationsOuter = 2;
  alu.iterationsInner = 5;
  alu.destinationFactorOuter = 5;
  alu.destinationFactorInner = 1;
  alu.sourceFactorOuter = 5;
  alu.sourceFactorInner = 1;
  alu.aluOpcode = AluOpcode::ShiftRight;
  alu.useImmediate = true;
  alu.immediate = -3;
  const EncodedInstruction bits = codec.encode(alu);
  EXPECT_EQ(bits[0], 0xa001000e00344ull);
  EXPECT_EQ(bits[1], 0xfffdb00201400805ull);
  EXPECT_EQ(codec.decode(bits), alu);
}

TEST(VtaEncoding, GoldenFinishAndMicroOp) {
  InstructionCodec codec{HardwareConfig{}};
  Instruction finish;
  finish.opcode = Opcode::Finish;
  EXPECT_EQ(codec.encode(finish), (EncodedInstruction{3, 0}));
  EXPECT_EQ(codec.encode(MicroOp{7, 300, 1000}), 0xfa096007u);
  EXPECT_EQ(codec.decodeMicroOp(0xfa096007u), (MicroOp{7, 300, 1000}));
}

// The public header declares the formats as uint64_t bit-fields; these structs restate its
// field widths for the default configuration, so the compiler's own layout checks ours.
namespace {
struct SpecMemoryInstruction {
  uint64_t opcode : 3, popPrevious : 1, popNext : 1, pushPrevious : 1, pushNext : 1;
  uint64_t memoryType : 3, sramBase : 16, dramBase : 32;
  uint64_t ySize : 16, xSize : 16, xStride : 16, yPad0 : 4, yPad1 : 4, xPad0 : 4, xPad1 : 4;
};
// The first word of GEMM and ALU instructions holds 63 bits; its last bit is named (and set to
// 0) so that no padding bit is copied into the bits compared: clang left one set on the stack.
struct SpecGemmInstruction {
  uint64_t opcode : 3, popPrevious : 1, popNext : 1, pushPrevious : 1, pushNext : 1;
  uint64_t reset : 1, uopBegin : 13, uopEnd : 14, iterOut : 14, iterIn : 14, unused : 1;
  uint64_t dstOut : 11, dstIn : 11, srcOut : 11, srcIn : 11, wgtOut : 10, wgtIn : 10;
};
struct SpecAluInstruction {
  uint64_t opcode : 3, popPrevious : 1, popNext : 1, pushPrevious : 1, pushNext : 1;
  uint64_t reset : 1, uopBegin : 13, uopEnd : 14, iterOut : 14, iterIn : 14, unused : 1;
  uint64_t dstOut : 11, dstIn : 11, srcOut : 11, srcIn : 11, aluOpcode : 3, useImm : 1;
  int64_t imm : 16;
};
static_assert(sizeof(SpecMemoryInstruction) == 16 && sizeof(SpecGemmInstruction) == 16 &&
              sizeof(SpecAluInstruction) == 16);

template <typename Spec>
EncodedInstruction bitsOf(const Spec& spec) {
  EncodedInstruction bits;
  std::memcpy(bits.data(), &spec, 16);
  return bits;
}
}  // namespace

TEST(VtaEncoding, AgreesWithTheSpecificationBitFields) {
  InstructionCodec codec{HardwareConfig{}};
  std::mt19937 random(7);
  auto field = [&random](unsigned bits) { return uint32_t(random()) & uint32_t((1ull << bits) - 1); };
  for (int trial = 0; trial < 200; ++trial) {
    Instruction memory;
    memory.opcode = trial % 2 ? Opcode::Load : Opcode::Store;
    memory.dependencies = {bool(field(1)), bool(field(1)), bool(field(1)), bool(field(1))};
    memory.memoryType = MemoryType(field(3) % 6);
    memory.sramBase = field(16);
    memory.dramBase = field(32);
    memory.ySize = field(16);
    memory.xSize = field(16);
    memory.xStride = field(16);
    memory.yPadBefore = field(4);
    memory.yPadAfter = field(4);
    memory.xPadBefore = field(4);
    memory.xPadAfter = field(4);
    SpecMemoryInstruction spec{uint64_t(memory.opcode), memory.dependencies.popPrevious,
                               memory.dependencies.popNext, memory.dependencies.pushPrevious,
                               memory.dependencies.pushNext, uint64_t(memory.memoryType),
                               memory.sramBase, memory.dramBase, memory.ySize, memory.xSize,
                               memory.xStride, memory.yPadBefore, memory.yPadAfter,
                               memory.xPadBefore, memory.xPadAfter};
    ASSERT_EQ(codec.encode(memory), bitsOf(spec));
    ASSERT_EQ(codec.decode(bitsOf(spec)), memory);

    Instruction gemm;
    gemm.opcode = Opcode::Gemm;
    gemm.dependencies = memory.dependencies;
    gemm.resetAccumulator = field(1);
    gemm.microOpBegin = field(13);
    gemm.microOpEnd = field(14);
    gemm.iterationsOuter = field(14);
    gemm.iterationsInner = field(14);
    gemm.destinationFactorOuter = field(11);
    gemm.destinationFactorInner = field(11);
    gemm.sourceFactorOuter = field(11);
    gemm.sourceFactorInner = field(11);
    gemm.weightFactorOuter = field(10);
    gemm.weightFactorInner = field(10);
    SpecGemmInstruction gemmSpec{2, gemm.dependencies.popPrevious, gemm.dependencies.popNext,
                                 gemm.dependencies.pushPrevious, gemm.dependencies.pushNext,
                                 gemm.resetAccumulator, gemm.microOpBegin, gemm.microOpEnd,
                                 gemm.iterationsOuter, gemm.iterationsInner, 0,
                                 gemm.destinationFactorOuter, gemm.destinationFactorInner,
                                 gemm.sourceFactorOuter, gemm.sourceFactorInner,
                                 gemm.weightFactorOuter, gemm.weightFactorInner};
    ASSERT_EQ(codec.encode(gemm), bitsOf(gemmSpec));
    ASSERT_EQ(codec.decode(bitsOf(gemmSpec)), gemm);

    Instruction alu = gemm;
    alu.opcode = Opcode::Alu;
    alu.weightFactorOuter = alu.weightFactorInner = 0;
    alu.aluOpcode = AluOpcode(field(3) % 5);
    alu.useImmediate = field(1);
    alu.immediate = int32_t(int16_t(field(16)));
    SpecAluInstruction aluSpec{4, alu.dependencies.popPrevious, alu.dependencies.popNext,
                               alu.dependencies.pushPrevious, alu.dependencies.pushNext,
                               alu.resetAccumulator, alu.microOpBegin, alu.microOpEnd,
                               alu.iterationsOuter, alu.iterationsInner, 0,
                               alu.destinationFactorOuter, alu.destinationFactorInner,
                               alu.sourceFactorOuter, alu.sourceFactorInner,
                               uint64_t(alu.aluOpcode), alu.useImmediate, alu.immediate};
    ASSERT_EQ(codec.encode(alu), bitsOf(aluSpec));
    ASSERT_EQ(codec.decode(bitsOf(aluSpec)), alu);
  }
}

TEST(VtaEncoding, RejectsValuesThatDoNotFitAndUnknownCodes) {
  InstructionCodec codec{HardwareConfig{}};
  Instruction gemm;
  gemm.opcode = Opcode::Gemm;
  gemm.iterationsOuter = 1 << 14;
  try {
    codec.encode(gemm);
    FAIL() << "accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("iter_out = 16384 does not fit its 14-bit field"),
              std::string::npos);
  }
  Instruction alu;
  alu.opcode = Opcode::Alu;
  alu.immediate = 40000;
  EXPECT_THROW(codec.encode(alu), Error);
  EXPECT_THROW(codec.encode(MicroOp{2048, 0, 0}), Error);
  EXPECT_THROW(codec.decode(EncodedInstruction{7, 0}), Error);  // opcode 7
  EXPECT_THROW(codec.decode(EncodedInstruction{uint64_t(6) << 7, 0}), Error);  // memory type 6
}

TEST(VtaEncoding, LayoutScalesWithTheConfiguration) {
  HardwareConfig config;
  config.logAccumulatorBufferSize = 16;  // 1024 accumulators: 10-bit indices
  InstructionCodec codec(config);
  EXPECT_EQ(codec.layout().microOpDestination.width, 10u);
  EXPECT_EQ(codec.layout().microOpSource.width, 11u);  // still reaches the 2048 inputs
  EXPECT_EQ(codec.layout().microOpWeight.offset, 21u);
  EXPECT_EQ(codec.layout().gemmDestinationOuter.offset, 64u);
  const MicroOp microOp{1023, 2047, 1023};
  EXPECT_EQ(codec.decodeMicroOp(codec.encode(microOp)), microOp);
}

TEST(VtaDisassembler, PrintsEachKindReadably) {
  Instruction load;
  load.opcode = Opcode::Load;
  load.memoryType = MemoryType::Weight;
  load.sramBase = 4;
  load.dramBase = 96;
  load.ySize = 2;
  load.xSize = 3;
  load.xStride = 9;
  load.xPadAfter = 1;
  load.dependencies.pushNext = true;
  EXPECT_EQ(disassemble(load), "LOAD    WGT      sram 4 dram 96  2x3 stride 9  pad y 0/0 x 0/1  | push_next");
  Instruction gemm;
  gemm.opcode = Opcode::Gemm;
  gemm.microOpEnd = 16;
  gemm.iterationsOuter = 4;
  gemm.iterationsInner = 2;
  gemm.destinationFactorOuter = 4;
  gemm.dependencies.popPrevious = true;
  EXPECT_EQ(disassemble(gemm), "GEMM    uop[0,16) out 4 in 2  acc+4/+0 inp+0/+0 wgt+0/+0  | pop_prev");
  Instruction alu;
  alu.opcode = Opcode::Alu;
  alu.aluOpcode = AluOpcode::Max;
  alu.useImmediate = true;
  alu.immediate = -128;
  alu.microOpEnd = 1;
  alu.iterationsOuter = alu.iterationsInner = 1;
  EXPECT_EQ(disassemble(alu), "ALU     MAX imm -128 uop[0,1) out 1 in 1  acc+0/+0 src+0/+0");
  Instruction finish;
  const std::vector<Instruction> program{load, finish};
  EXPECT_EQ(disassemble(program), "    0  " + disassemble(load) + "\n    1  FINISH\n");
}
