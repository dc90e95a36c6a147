// Blocked int8 matrix multiplies run on the simulator through the command stream, compared
// exactly with a naive reference: several shapes (edges padded by the DMA, several tiles,
// single and double buffering), statistics equal to the hand counts, identical results in
// random module interleavings and with every GEMM kernel, and a program file round trip.
#include <gtest/gtest.h>

#include "BlockedMatmul.h"
#include "support/TempDir.h"
#include "vta/CommandStream.h"
#include "vta/Simulator.h"

using namespace tessel;
using namespace tessel::vta;
using namespace tessel::vta::testing;

namespace {

struct MatmulRun {
  std::vector<int8_t> result;
  Statistics statistics;
  MatmulCounts expected;
};

MatmulRun runMatmul(const MatmulShape& shape, uint64_t seed,
                    const SimulatorOptions& options = SimulatorOptions{},
                    const HardwareConfig& config = HardwareConfig{}) {
  Simulator simulator(config, options);
  CommandStream stream(simulator);
  const MatmulData data = randomMatmulData(shape, seed);
  MatmulProgram program = recordMatmul(stream, shape, data);
  stream.synchronize();
  return {readMatmulResult(stream, shape, program), simulator.stats(), program.expected};
}

void expectCounts(const MatmulRun& run) {
  EXPECT_EQ(run.statistics.inputLoadBytes, run.expected.inputBytes);
  EXPECT_EQ(run.statistics.weightLoadBytes, run.expected.weightBytes);
  EXPECT_EQ(run.statistics.accumulatorLoadBytes, 0u);
  EXPECT_EQ(run.statistics.microOpLoadBytes, run.expected.microOpBytes);
  EXPECT_EQ(run.statistics.outputStoreBytes, run.expected.outputBytes);
  EXPECT_EQ(run.statistics.gemmCounter, run.expected.gemm);
  EXPECT_EQ(run.statistics.aluCounter, run.expected.alu);
  EXPECT_GT(run.statistics.cycles, 0u);
}

}  // namespace

TEST(VtaMatmul, SingleTileMatchesReference) {
  MatmulShape shape{.m = 16, .n = 32, .k = 64, .tileM = 16, .tileN = 2, .tileK = 4};
  const MatmulRun run = runMatmul(shape, 1);
  EXPECT_EQ(run.result, referenceMatmul(shape, randomMatmulData(shape, 1)));
  expectCounts(run);
  // Shapes that fill whole tiles: one count per 1x16x16 block product.
  EXPECT_EQ(run.statistics.gemmCounter, uint64_t(16) * 32 * 64 / (1 * 16 * 16));
  EXPECT_EQ(run.statistics.inputLoadBytes, 16u * 64);
  EXPECT_EQ(run.statistics.weightLoadBytes, 32u * 64);
  EXPECT_EQ(run.statistics.outputStoreBytes, 16u * 32);
}

TEST(VtaMatmul, ManyTilesDoubleBufferedMatchesReference) {
  MatmulShape shape{.m = 64, .n = 96, .k = 128, .tileM = 8, .tileN = 2, .tileK = 4};
  const MatmulRun run = runMatmul(shape, 2);
  EXPECT_EQ(run.result, referenceMatmul(shape, randomMatmulData(shape, 2)));
  expectCounts(run);
  EXPECT_EQ(run.statistics.gemmCounter, uint64_t(64) * 96 * 128 / 256);
  // A is read once per column tile, B once per row tile.
  EXPECT_EQ(run.statistics.inputLoadBytes, uint64_t(64) * 128 * (96 / 32));
  EXPECT_EQ(run.statistics.weightLoadBytes, uint64_t(96) * 128 * (64 / 8));
}

TEST(VtaMatmul, ShapesThatNeedPaddingMatchReference) {
  // M, N, K not multiples of the tile (DMA padding) nor of the block (host padding).
  const MatmulShape shapes[] = {
      {.m = 13, .n = 20, .k = 40, .tileM = 4, .tileN = 2, .tileK = 2},
      {.m = 37, .n = 50, .k = 70, .tileM = 8, .tileN = 3, .tileK = 3},
      {.m = 5, .n = 7, .k = 3, .tileM = 2, .tileN = 1, .tileK = 1},
      {.m = 100, .n = 33, .k = 129, .tileM = 16, .tileN = 2, .tileK = 4, .bufferSlots = 1,
       .accumulatorSlots = 1},
  };
  uint64_t seed = 10;
  for (const MatmulShape& shape : shapes) {
    SCOPED_TRACE(::testing::Message() << shape.m << "x" << shape.n << "x" << shape.k);
    const MatmulRun run = runMatmul(shape, seed);
    EXPECT_EQ(run.result, referenceMatmul(shape, randomMatmulData(shape, seed)));
    expectCounts(run);
    ++seed;
  }
}

TEST(VtaMatmul, EpilogueShiftAndClipMatchesReference) {
  MatmulShape shape{.m = 48, .n = 48, .k = 96, .tileM = 6, .tileN = 3, .tileK = 2, .epilogue = true,
                    .shift = 7};
  const MatmulRun run = runMatmul(shape, 3);
  EXPECT_EQ(run.result, referenceMatmul(shape, randomMatmulData(shape, 3)));
  expectCounts(run);
  EXPECT_EQ(run.statistics.aluCounter, 3u * 48 * 3);  // 3 ops x (48 rows x 3 column elements)
}

TEST(VtaMatmul, AnyInterleavingGivesIdenticalResults) {
  MatmulShape shape{.m = 40, .n = 64, .k = 80, .tileM = 4, .tileN = 2, .tileK = 2, .epilogue = true};
  const MatmulRun timed = runMatmul(shape, 4);
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SimulatorOptions options;
    options.order = ExecutionOrder::Random;
    options.seed = seed;
    const MatmulRun random = runMatmul(shape, 4, options);
    EXPECT_EQ(random.result, timed.result) << "seed " << seed;
    EXPECT_EQ(random.statistics.gemmCounter, timed.statistics.gemmCounter);
  }
}

TEST(VtaMatmul, EveryGemmKernelGivesIdenticalResults) {
  MatmulShape shape{.m = 24, .n = 48, .k = 64, .tileM = 4, .tileN = 3, .tileK = 2};
  const std::vector<int8_t> expected = referenceMatmul(shape, randomMatmulData(shape, 5));
  for (const GemmKernel& kernel : availableGemmKernels(HardwareConfig{})) {
    SimulatorOptions options;
    options.gemmKernel = kernel.name;
    EXPECT_EQ(runMatmul(shape, 5, options).result, expected) << kernel.name;
  }
}

TEST(VtaMatmul, OtherCoreShapesMatchReference) {
  // BATCH 2, BLOCK 8: a different GEMM core, layouts and depths.
  HardwareConfig config;
  config.logBatch = 1;
  config.logBlock = 3;
  config.logWeightBufferSize = 16;  // keeps the weight index fields within the instruction
  MatmulShape shape{.m = 22, .n = 40, .k = 50, .tileM = 4, .tileN = 2, .tileK = 3, .epilogue = true};
  for (const GemmKernel& kernel : availableGemmKernels(config)) {
    SimulatorOptions options;
    options.gemmKernel = kernel.name;
    const MatmulRun run = runMatmul(shape, 6, options, config);
    EXPECT_EQ(run.result, referenceMatmul(shape, randomMatmulData(shape, 6))) << kernel.name;
    expectCounts(run);
  }
}

TEST(VtaMatmul, WrapsAroundInTheAccumulatorAndTruncatesOnStore) {
  // -128 · -128 · 16 · K/16 exceeds int32 for large K only after many tiles; force it with
  // K = 2^17: the sum is 2^31, which wraps to INT32_MIN, whose low byte is 0.
  MatmulShape shape{.m = 1, .n = 16, .k = 1 << 17, .tileM = 1, .tileN = 1, .tileK = 1024,
                    .bufferSlots = 1, .accumulatorSlots = 1};
  Simulator simulator;
  CommandStream stream(simulator);
  MatmulData data;
  data.a.assign(size_t(shape.k), int8_t(-128));
  data.b.assign(size_t(shape.n) * shape.k, int8_t(-128));
  data.b[5] = 1;  // one product changes: 2^31 - 16384 - 128 → low byte 0x80
  MatmulProgram program = recordMatmul(stream, shape, data);
  stream.synchronize();
  const std::vector<int8_t> result = readMatmulResult(stream, shape, program);
  EXPECT_EQ(result, referenceMatmul(shape, data));
  EXPECT_EQ(result[1], 0);
}

TEST(VtaMatmul, ProgramFileRunsOnAFreshSimulator) {
  MatmulShape shape{.m = 30, .n = 40, .k = 50, .tileM = 4, .tileN = 2, .tileK = 2, .epilogue = true};
  const MatmulData data = randomMatmulData(shape, 8);
  TempDir dir;
  const std::string path = dir.path() + "/matmul.json";
  MatmulProgram recorded;
  {
    Simulator recorder;
    CommandStream stream(recorder);
    recorded = recordMatmul(stream, shape, data);
    Program program = stream.finishProgram();
    program.outputs.push_back({"C", recorded.c.address, recorded.c.bytes});
    program.save(path);
  }
  const Program loaded = Program::load(path);
  ASSERT_EQ(loaded.outputs.size(), 1u);
  Simulator simulator;
  loaded.runOn(simulator);
  // Read C through a stream on the fresh simulator (same addresses).
  std::vector<int8_t> packed(recorded.c.bytes);
  simulator.memory().read(recorded.c.address, packed.data(), packed.size());
  const std::vector<int8_t> expected = referenceMatmul(shape, data);
  const int nElements = ceilDivide(shape.n, 16);
  for (int i = 0; i < shape.m; ++i)
    for (int j = 0; j < shape.n; ++j)
      ASSERT_EQ(packed[(size_t(i) * nElements + j / 16) * 16 + j % 16], expected[i * shape.n + j]);
  EXPECT_EQ(simulator.stats().gemmCounter, recorded.expected.gemm);
  EXPECT_EQ(simulator.stats().microOpLoadBytes, recorded.expected.microOpBytes);
}
