// Simulator speed: GEMM micro-ops simulated per second of host time for a large blocked int8
// matrix multiply (2048x1024 by 1024x1024), per GEMM kernel implementation, single thread.
// Prints `BENCH <name> <value> <unit>` lines. The target for tuning is >= 50e6 micro-ops/s.
#include <chrono>
#include <cstdio>

#include "BlockedMatmul.h"
#include "vta/CommandStream.h"
#include "vta/Simulator.h"

using namespace tessel::vta;
using namespace tessel::vta::testing;

int main() {
  const MatmulShape shape{.m = 2048, .n = 1024, .k = 1024, .tileM = 128, .tileN = 8, .tileK = 8,
                          .epilogue = true};
  const MatmulData data = randomMatmulData(shape, 1);
  const HardwareConfig config;
  for (const GemmKernel& kernel : availableGemmKernels(config)) {
    double bestSeconds = 1e30;
    Statistics statistics;
    uint64_t cycles = 0;
    for (int repeat = 0; repeat < 3; ++repeat) {
      SimulatorOptions options;
      options.gemmKernel = kernel.name;
      Simulator simulator(config, options);
      CommandStream stream(simulator);
      recordMatmul(stream, shape, data);
      const auto start = std::chrono::steady_clock::now();
      stream.synchronize();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (seconds < bestSeconds) bestSeconds = seconds;
      statistics = simulator.stats();
      cycles = simulator.lastRunCycles();
      if (kernel.name == "scalar") break;  // slow; one run is enough
    }
    std::printf("BENCH vta_sim_gemm_uops_per_second_%s %.4g uop/s\n", kernel.name.c_str(),
                double(statistics.gemmCounter) / bestSeconds);
    if (kernel.name == availableGemmKernels(config).front().name) {
      std::printf("BENCH vta_sim_gemm_uops_per_second %.4g uop/s\n",
                  double(statistics.gemmCounter) / bestSeconds);
      std::printf("BENCH vta_sim_host_seconds_matmul_2048x1024x1024 %.4g s\n", bestSeconds);
      std::printf("BENCH vta_simulated_cycles_matmul_2048x1024x1024 %llu cycles\n",
                  static_cast<unsigned long long>(cycles));
      std::printf("BENCH vta_simulated_gemm_uops_per_cycle %.4g uop/cycle\n",
                  double(statistics.gemmCounter) / double(cycles));
    }
  }
  return 0;
}
