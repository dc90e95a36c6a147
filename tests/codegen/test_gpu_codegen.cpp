// CUDA C and OpenCL C generation, and NVRTC: every CUDA kernel here is compiled to a cubin for
// sm_90 (NVRTC needs no GPU). Running the kernels is test_gpu_end_to_end's.
#include <gtest/gtest.h>

#include "codegen/CSource.h"
#include "codegen/Nvrtc.h"
#include "common/ErrorText.h"
#include "common/GpuKernelCheck.h"
#include "ops/Examples.h"
#include "support/Files.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::schedule;
using tessel::testsupport::errorOf;
using tessel::testsupport::expectContains;

namespace {

/// NVRTC is part of the CUDA toolkit, which the project's machines have; elsewhere the CUDA
/// compile tests skip with the reason.
#define REQUIRE_NVRTC()                                             \
  do {                                                              \
    std::string why;                                                \
    if (!codegen::nvrtcAvailable(&why)) GTEST_SKIP() << why;        \
  } while (0)

bool isCubin(const std::string& code) { return code.size() > 4 && code.compare(0, 4, "\x7f" "ELF") == 0; }

}  // namespace

TEST(GpuCodegen, CudaMatmulCompilesToACubinForSm90) {
  REQUIRE_NVRTC();
  for (bool shared : {false, true}) {
    auto binary = kernelcheck::buildForGpu(replay(ops::matmul(128, 96, 64), kernelcheck::gpuschedules::matmul(shared)),
                                           "cuda -arch=sm_90", "matmul");
    EXPECT_TRUE(isCubin(binary.code)) << "shared=" << shared;
    const std::string& cu = binary.source.code;
    expectContains(cu, "extern \"C\" __global__ void __launch_bounds__(128) matmul(");
    expectContains(cu, "blockIdx.y");
    expectContains(cu, "threadIdx.x");
    if (shared) {
      expectContains(cu, "__shared__ float A_shared[512];");
      expectContains(cu, "__syncthreads();");
    }
    auto launch = binary.source.manifest["kernels"][0]["launch"];
    EXPECT_EQ(launch["grid"], nlohmann::json({6, 16, 1}));
    EXPECT_EQ(launch["block"], nlohmann::json({16, 8, 1}));
  }
}

TEST(GpuCodegen, CudaConv2dWithVirtualThreadsCompiles) {
  REQUIRE_NVRTC();
  auto binary = kernelcheck::buildForGpu(replay(ops::conv2dNCHW(1, 8, 14, 14, 16, 3, 3, 1, 1), kernelcheck::gpuschedules::conv2d()),
                                         "cuda", "conv");
  EXPECT_TRUE(isCubin(binary.code));
  expectContains(binary.source.code, "// pragma virtual_thread = 2");
}

TEST(GpuCodegen, NvrtcErrorsCarryTheLogAndTheSource) {
  REQUIRE_NVRTC();
  std::string message = errorOf([] { codegen::compileCudaToCubin("extern \"C\" __global__ void k() { undeclared = 1; }"); });
  expectContains(message, "NVRTC could not compile the CUDA kernels for sm_90");
  expectContains(message, "undeclared");
  expectContains(message, "   1 | extern \"C\" __global__ void k()");
  EXPECT_EQ(errorOf([] { codegen::compileCudaToCubin("", "compute_90"); }), "CUDA architecture 'compute_90' is not of the form sm_NN");
  EXPECT_FALSE(codegen::nvrtcVersion().empty());
}

TEST(GpuCodegen, OpenclSourceUsesWorkGroupsAndLocalMemory) {
  auto binary = kernelcheck::buildForGpu(replay(ops::matmul(64, 32, 16), kernelcheck::gpuschedules::matmul(true)),
                                         "opencl -device=mali", "matmul");
  const std::string& cl = binary.code;  // OpenCL keeps the source: the driver builds it
  EXPECT_EQ(cl, binary.source.code);
  expectContains(cl, "__kernel __attribute__((reqd_work_group_size(16, 8, 1))) void matmul(__global const float* restrict A");
  expectContains(cl, "get_group_id(1)");
  expectContains(cl, "get_local_id(0)");
  expectContains(cl, "__local float A_shared[128];");
  expectContains(cl, "barrier(CLK_LOCAL_MEM_FENCE);");
  EXPECT_EQ(binary.source.manifest["device"], "opencl");
}

TEST(GpuCodegen, SavedModuleHoldsManifestAndCode) {
  auto binary = kernelcheck::buildForGpu(replay(ops::matmul(16, 16, 4), kernelcheck::gpuschedules::matmul(false)), "opencl");
  TempDir dir("tessel-gpu-module");
  codegen::saveGpuModule(binary, dir.path() + "/m");
  auto manifest = nlohmann::json::parse(readFile(dir.path() + "/m/manifest.json"));
  EXPECT_EQ(manifest["kernels"][0]["name"], "kernel");
  EXPECT_EQ(readFile(dir.path() + "/m/kernels.cl"), binary.code);
}

TEST(GpuCodegen, CpuBuildsRunBoundLoopsAsPlainLoops) {
  // The same schedule means the same loop nest on the CPU: it compiles and matches the reference.
  auto state = replay(ops::matmul(20, 24, 5), kernelcheck::gpuschedules::matmul(true));
  auto r = kernelcheck::checkAgainstReference(state, 7);
  EXPECT_LT(r.maxRelativeError, 1e-5) << r.source;
  expectContains(r.source, "// bound to threadIdx.x on a GPU");
}

TEST(GpuCodegen, NonGpuTargetsAreRejected) {
  EXPECT_EQ(errorOf([&] { codegen::gpuDialectOfTarget(target::Target::parse("cpu -mcpu=native")); }),
            "target 'cpu -mcpu=native' is not a GPU target (expected 'cuda ...' or 'opencl ...')");
}
