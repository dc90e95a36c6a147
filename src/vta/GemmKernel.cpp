#include "vta/GemmKernel.h"

#include "support/Error.h"
#include "vta/GemmLoop.h"

namespace tessel::vta {

namespace {

void gemmScalar(const Instruction& in, const MicroOp* microOps, const GemmOperands& operands) {
  const uint32_t pairs = operands.blockIn / 2, blockOut = operands.blockOut;
  forEachMicroOp(in, microOps, operands, [&](int32_t* accumulator, const int16_t* input,
                                             const int16_t* weight) {
    for (uint32_t row = 0; row < operands.batch; ++row) {
      const int16_t* inputRow = input + row * operands.blockIn;
      int32_t* accumulatorRow = accumulator + row * blockOut;
      for (uint32_t j = 0; j < blockOut; ++j) {
        // Unsigned arithmetic: the int32 accumulator wraps around as in hardware.
        uint32_t sum = uint32_t(accumulatorRow[j]);
        for (uint32_t m = 0; m < pairs; ++m) {
          const int16_t* w = weight + (m * blockOut + j) * 2;
          sum += uint32_t(inputRow[2 * m] * w[0] + inputRow[2 * m + 1] * w[1]);
        }
        accumulatorRow[j] = int32_t(sum);
      }
    }
  });
}

}  // namespace

std::vector<GemmKernel> availableGemmKernels(const HardwareConfig& config) {
  std::vector<GemmKernel> kernels;
#if defined(TESSEL_VTA_HAVE_X86_KERNELS)
  const bool defaultShape = config.blockIn() == 16;
  __builtin_cpu_init();
  if (config.blockOut() % 16 == 0 && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni"))
    kernels.push_back({"avx512-vnni", defaultShape ? &gemmAvx512Pairs8 : &gemmAvx512Generic});
  if (config.blockOut() % 8 == 0 && __builtin_cpu_supports("avx2"))
    kernels.push_back({"avx2", defaultShape ? &gemmAvx2Pairs8 : &gemmAvx2Generic});
#else
  (void)config;
#endif
  kernels.push_back({"scalar", &gemmScalar});
  return kernels;
}

GemmKernel selectGemmKernel(const HardwareConfig& config, const std::string& name) {
  const std::vector<GemmKernel> kernels = availableGemmKernels(config);
  if (name == "auto") return kernels.front();
  std::string names;
  for (const GemmKernel& kernel : kernels) {
    if (kernel.name == name) return kernel;
    names += (names.empty() ? "" : ", ") + kernel.name;
  }
  fail("VTA simulator: GEMM kernel '{}' is not available here (available: auto, {})", name, names);
}

}  // namespace tessel::vta
