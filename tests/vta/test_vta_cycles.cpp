// The cycle model on cases with a known answer: double buffering beats the same work
// serialized, a GEMM-bound program retires one GEMM micro-op per cycle in its steady state,
// and the DRAM and clock parameters act as they say.
#include <gtest/gtest.h>

#include "BlockedMatmul.h"
#include "vta/CommandStream.h"
#include "vta/Simulator.h"

using namespace tessel;
using namespace tessel::vta;
using namespace tessel::vta::testing;

namespace {

Statistics runStatistics(const MatmulShape& shape, const TimingParameters& timing = TimingParameters{}) {
  SimulatorOptions options;
  options.timing = timing;
  Simulator simulator(HardwareConfig{}, options);
  CommandStream stream(simulator);
  MatmulProgram program = recordMatmul(stream, shape, randomMatmulData(shape, 1));
  stream.synchronize();
  EXPECT_EQ(readMatmulResult(stream, shape, program), referenceMatmul(shape, randomMatmulData(shape, 1)));
  return simulator.stats();
}

}  // namespace

TEST(VtaCycles, DoubleBufferingIsFasterThanTheSameWorkSerialized) {
  // Tiles where a GEMM (512 micro-ops) takes about as long as loading the next tile.
  MatmulShape shape{.m = 128, .n = 128, .k = 256, .tileM = 64, .tileN = 4, .tileK = 2};
  const Statistics overlapped = runStatistics(shape);
  shape.bufferSlots = shape.accumulatorSlots = 1;
  const Statistics serialized = runStatistics(shape);
  EXPECT_EQ(overlapped.gemmCounter, serialized.gemmCounter);
  EXPECT_EQ(overlapped.inputLoadBytes, serialized.inputLoadBytes);
  EXPECT_LT(overlapped.cycles, serialized.cycles * 8 / 10)
      << overlapped.cycles << " vs " << serialized.cycles;
  // Serialized, the time is at least the sum of the GEMM work and the DRAM transfers.
  const TimingParameters timing;
  const uint64_t dramCycles = (serialized.inputLoadBytes + serialized.weightLoadBytes +
                               serialized.outputStoreBytes + serialized.microOpLoadBytes) /
                              timing.dramBytesPerCycle;
  EXPECT_GE(serialized.cycles, serialized.gemmCounter + dramCycles);
}

TEST(VtaCycles, GemmBoundProgramRetiresOneMicroOpPerCycle) {
  // Tiles large enough that each GEMM (8192 micro-ops) outlasts the DRAM traffic of the next
  // tile (32 KiB at 8 B/cycle): the steady state is the GEMM core. Compare two sizes so that
  // the pipeline's fill and drain cancel out.
  MatmulShape small{.m = 256, .n = 256, .k = 1024, .tileM = 128, .tileN = 8, .tileK = 8};
  MatmulShape large = small;
  large.m = 512;
  const Statistics a = runStatistics(small), b = runStatistics(large);
  const double rate = double(b.gemmCounter - a.gemmCounter) / double(b.cycles - a.cycles);
  EXPECT_GT(rate, 0.97) << "GEMM micro-ops per cycle " << rate;
  EXPECT_LE(rate, 1.0);
  // And over the whole program the core is busy most of the time.
  EXPECT_GT(double(b.gemmCounter) / double(b.cycles), 0.9);
}

TEST(VtaCycles, DramBandwidthAndLatencyParametersAct) {
  // A load-bound program: tiny GEMMs per large tile.
  MatmulShape shape{.m = 64, .n = 64, .k = 512, .tileM = 4, .tileN = 4, .tileK = 32};
  TimingParameters timing;
  const uint64_t base = runStatistics(shape, timing).cycles;
  timing.dramBytesPerCycle = 16;
  const uint64_t wider = runStatistics(shape, timing).cycles;
  EXPECT_LT(wider, base * 6 / 10);
  timing.dramBytesPerCycle = 8;
  timing.dramLatencyCycles = 500;
  EXPECT_GT(runStatistics(shape, timing).cycles, base);
}

TEST(VtaCycles, TimeIsCyclesOverTheClock) {
  SimulatorOptions options;
  options.timing.clockMegahertz = 250;
  Simulator simulator(HardwareConfig{}, options);
  CommandStream stream(simulator);
  MicroKernel kernel;
  kernel.loop(100, 0, 0).push(0, 0, 0);
  stream.gemm(kernel);
  stream.synchronize();
  const uint64_t cycles = simulator.lastRunCycles();
  EXPECT_GE(cycles, 100u);  // 100 GEMM micro-ops at one a cycle
  EXPECT_DOUBLE_EQ(simulator.lastRunSeconds(), double(cycles) / 250e6);
  EXPECT_EQ(simulator.stats().cycles, cycles);
  stream.gemm(kernel);
  stream.synchronize();
  EXPECT_EQ(simulator.stats().cycles, cycles + simulator.lastRunCycles());  // accumulates
  simulator.clearStats();
  EXPECT_EQ(simulator.stats(), Statistics{});
}
