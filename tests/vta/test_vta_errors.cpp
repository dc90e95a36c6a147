// Programs that can never finish, or that touch memory they must not, stop with an Error that
// names the instruction — never a hang or a stray write. And a program that forgets a
// dependency token is caught by running it in random module interleavings.
#include <gtest/gtest.h>

#include "BlockedMatmul.h"
#include "common/ErrorText.h"
#include "support/Error.h"
#include "vta/CommandStream.h"
#include "vta/Simulator.h"

using namespace tessel;
using namespace tessel::testsupport;
using namespace tessel::vta;
using namespace tessel::vta::testing;

namespace {


Instruction noOp(Stage stage) {
  Instruction in;
  in.opcode = stage == Stage::Store ? Opcode::Store : Opcode::Load;
  in.memoryType = stage == Stage::Load ? MemoryType::Input
                  : stage == Stage::Store ? MemoryType::Output
                                          : MemoryType::MicroOp;
  return in;
}

Instruction finish() {
  Instruction in;
  in.opcode = Opcode::Finish;
  return in;
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

}  // namespace

TEST(VtaErrors, PopWithoutPushIsADeadlockNamingTheInstruction) {
  Simulator simulator;
  Instruction gemm;
  gemm.opcode = Opcode::Gemm;
  gemm.resetAccumulator = true;
  gemm.microOpEnd = 1;
  gemm.iterationsOuter = gemm.iterationsInner = 1;
  gemm.dependencies.popPrevious = true;  // no load ever pushes
  const std::vector<Instruction> program{noOp(Stage::Load), gemm, finish()};
  const std::string message = errorOf([&] { simulator.run(program); });
  EXPECT_CONTAINS(message, "deadlock");
  EXPECT_CONTAINS(message, "compute module waits at instruction #1 (GEMM");
  EXPECT_CONTAINS(message, "load->compute");
}

TEST(VtaErrors, DeadlockThroughTheCommandStream) {
  Simulator simulator;
  CommandStream stream(simulator);
  DeviceBuffer buffer = stream.allocate(4096);
  stream.dependencyPop(Stage::Compute, Stage::Load);  // waits for a GEMM that never pushes
  stream.loadBuffer2D(buffer, 0, 4, 1, 4, Padding{}, MemoryType::Input, 0);
  const std::string message = errorOf([&] { stream.synchronize(); });
  EXPECT_CONTAINS(message, "deadlock");
  EXPECT_CONTAINS(message, "load module waits at instruction #0 (LOAD    INP");
}

TEST(VtaErrors, MicroOpIndexOutOfRangeNamesInstructionAndIteration) {
  Simulator simulator;
  CommandStream stream(simulator);
  MicroKernel kernel;
  kernel.loop(2, 1, 0).push(2047, 0, 0);  // the second iteration addresses accumulator 2048
  stream.gemm(kernel, true);
  const std::string message = errorOf([&] { stream.synchronize(); });
  EXPECT_CONTAINS(message, "instruction #1 (GEMM");
  EXPECT_CONTAINS(message, "accumulator index 2048 is out of range (depth 2048) at micro-op 0, outer iteration 0, inner iteration 1");
}

TEST(VtaErrors, WeightAndInputIndicesAreChecked) {
  Simulator simulator;
  CommandStream stream(simulator);
  MicroKernel kernel;
  kernel.loop(3, 0, 0, 400).push(0, 0, 200);  // weight 200 + 2·400 = 1000 fine, then...
  kernel.microOps[0].weight = 300;           // 300 + 800 = 1100 ≥ 1024
  stream.gemm(kernel);
  EXPECT_CONTAINS(errorOf([&] { stream.synchronize(); }), "weight index 1100 is out of range (depth 1024)");
  MicroKernel input;
  input.loop(2, 0, 2000).push(0, 100, 0);
  stream.gemm(input);
  EXPECT_CONTAINS(errorOf([&] { stream.synchronize(); }), "input index 2100 is out of range (depth 2048)");
}

TEST(VtaErrors, LoadBeyondTheBufferOrTheAllocationIsRejected) {
  Simulator simulator;
  CommandStream stream(simulator);
  DeviceBuffer buffer = stream.allocate(16 * 64);
  stream.loadBuffer2D(buffer, 0, 4, 1, 4, Padding{1, 0, 1, 0}, MemoryType::Input, 2044);
  EXPECT_CONTAINS(errorOf([&] { stream.synchronize(); }), "INP buffer range [2044, 2050) exceeds its depth 2048");
  stream.loadBuffer2D(buffer, 60, 8, 1, 8, Padding{}, MemoryType::Input, 0);
  const std::string message = errorOf([&] { stream.synchronize(); });
  EXPECT_CONTAINS(message, "instruction #0 (LOAD    INP");
  EXPECT_CONTAINS(message, "not inside one device allocation");
}

TEST(VtaErrors, StoreOutsideTheAllocationIsRejected) {
  Simulator simulator;
  CommandStream stream(simulator);
  DeviceBuffer out = stream.allocate(16 * 4);
  stream.storeBuffer2D(0, out, 0, 4, 2, 4);  // 8 elements into room for 4
  EXPECT_CONTAINS(errorOf([&] { stream.synchronize(); }), "not inside one device allocation");
}

// A run for time only (SimulatorOptions::computeValues false) checks what a full run checks:
// the index errors above, the same words.
TEST(VtaErrors, ARunForTimeOnlyChecksWhatAFullRunChecks) {
  SimulatorOptions timeOnly;
  timeOnly.computeValues = false;
  Simulator simulator(HardwareConfig{}, timeOnly);
  CommandStream stream(simulator);
  MicroKernel kernel;
  kernel.loop(2, 1, 0).push(2047, 0, 0);
  stream.gemm(kernel, true);
  EXPECT_CONTAINS(errorOf([&] { stream.synchronize(); }),
                  "accumulator index 2048 is out of range (depth 2048) at micro-op 0, outer iteration 0, inner iteration 1");
  MicroKernel weight;
  weight.loop(3, 0, 0, 400).push(0, 0, 300);
  stream.gemm(weight);
  EXPECT_CONTAINS(errorOf([&] { stream.synchronize(); }), "weight index 1100 is out of range (depth 1024)");
  DeviceBuffer buffer = stream.allocate(16 * 64);
  stream.loadBuffer2D(buffer, 0, 4, 1, 4, Padding{1, 0, 1, 0}, MemoryType::Input, 2044);
  EXPECT_CONTAINS(errorOf([&] { stream.synchronize(); }), "INP buffer range [2044, 2050) exceeds its depth 2048");
  DeviceBuffer out = stream.allocate(16 * 4);
  stream.storeBuffer2D(0, out, 0, 4, 2, 4);
  EXPECT_CONTAINS(errorOf([&] { stream.synchronize(); }), "not inside one device allocation");
}

TEST(VtaErrors, MissingFinishIsReported) {
  Simulator simulator;
  const std::vector<Instruction> program{noOp(Stage::Load), noOp(Stage::Compute)};
  EXPECT_CONTAINS(errorOf([&] { simulator.run(program); }), "ended without FINISH");
}

TEST(VtaErrors, LeftoverTokensAreReported) {
  Simulator simulator;
  Instruction load = noOp(Stage::Load);
  load.dependencies.pushNext = true;
  const std::vector<Instruction> program{load, finish()};
  EXPECT_CONTAINS(errorOf([&] { simulator.run(program); }), "1 token(s) left in the load->compute queue");
}

TEST(VtaErrors, FlagsAModuleCannotUseAreRejected) {
  Simulator simulator;
  Instruction load = noOp(Stage::Load);
  load.dependencies.popPrevious = true;
  const std::vector<Instruction> program{load, finish()};
  EXPECT_CONTAINS(errorOf([&] { simulator.run(program); }), "instruction #0 (LOAD    INP      (nop)  | pop_prev): the load module has no previous module");
  Instruction store = noOp(Stage::Store);
  store.dependencies.pushNext = true;
  const std::vector<Instruction> second{store, finish()};
  EXPECT_CONTAINS(errorOf([&] { simulator.run(second); }), "the store module has no next module");
}

TEST(VtaErrors, FinishBeforeTheOtherModulesAreDoneIsReported) {
  Simulator simulator;
  const std::vector<Instruction> program{finish(), noOp(Stage::Store)};
  EXPECT_CONTAINS(errorOf([&] { simulator.run(program); }), "FINISH (instruction #0 (FINISH)) ran while the store module still had instruction #1");
}

TEST(VtaErrors, UndecodableInstructionIsReported) {
  Simulator simulator;
  const uint64_t address = simulator.memory().allocate(32);
  const uint64_t words[4] = {0, 0, 7, 0};  // a NOP LOAD UOP, then opcode 7
  simulator.memory().write(address, words, sizeof words);
  EXPECT_CONTAINS(errorOf([&] { simulator.run(address, 2); }), "instruction #1 (00000000000000000000000000000007): unknown opcode 7");
  EXPECT_CONTAINS(errorOf([&] { simulator.run(address, 3); }), "not inside one device allocation");
}

TEST(VtaErrors, ForgottenTokenIsCaughtByRandomInterleavings) {
  MatmulShape shape{.m = 32, .n = 32, .k = 128, .tileM = 2, .tileN = 1, .tileK = 2};
  shape.forgetSlotReuseTokens = true;
  const MatmulData data = randomMatmulData(shape, 11);
  const std::vector<int8_t> expected = referenceMatmul(shape, data);
  int wrong = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    SimulatorOptions options;
    options.order = ExecutionOrder::Random;
    options.seed = seed;
    Simulator simulator(HardwareConfig{}, options);
    CommandStream stream(simulator);
    MatmulProgram program = recordMatmul(stream, shape, data);
    stream.synchronize();
    wrong += readMatmulResult(stream, shape, program) != expected;
  }
  EXPECT_GT(wrong, 0);
  // With the tokens, every interleaving is right (AnyInterleavingGivesIdenticalResults).
}

TEST(VtaErrors, AProgramPastTheWorkBudgetStopsBeforeIt) {
  SimulatorOptions options;
  options.maxWork = 1 << 20;
  Simulator simulator(HardwareConfig{}, options);
  Instruction gemm;
  gemm.opcode = Opcode::Gemm;
  gemm.resetAccumulator = true;
  gemm.microOpEnd = 1;
  gemm.iterationsOuter = gemm.iterationsInner = 1 << 13;  // 2^26 micro-op runs of 256 products: days to simulate
  const std::vector<Instruction> program{noOp(Stage::Load), gemm, finish()};
  const std::string message = errorOf([&] { simulator.run(program); });
  EXPECT_CONTAINS(message, "instruction #1 (GEMM");
  EXPECT_CONTAINS(message, "past its work budget of 1048576 element operations");
  EXPECT_EQ(instructionWork(gemm, HardwareConfig{}), uint64_t(1) << 34);
}
