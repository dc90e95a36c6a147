// GPU kernels with hand-written schedules, built for CUDA (NVRTC, cubin) and OpenCL, run on the
// device and checked against the reference evaluator. CUDA runs where a GPU is (the H100 of
// the device machine: `make test-gpu`) and skips elsewhere with the reason; OpenCL runs on the
// first OpenCL device (PoCL on this CPU, the NVIDIA platform on the H100 machine).
#include <gtest/gtest.h>

#include "common/ErrorText.h"
#include "common/GpuRequire.h"
#include "common/GpuKernelCheck.h"
#include "ops/Examples.h"
#include "runtime/CudaDevice.h"
#include "runtime/OpenclDevice.h"
#include "runtime/TimeEvaluator.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::schedule;
using tessel::testsupport::errorOf;
using tessel::testsupport::expectContains;

namespace {

struct GpuCase {
  std::string name;
  te::ComputeDAG dag;
  std::vector<StepPtr> steps;
};

std::vector<GpuCase> cases() {
  return {
      {"dense", ops::matmul(128, 96, 64), kernelcheck::gpuschedules::matmul(false)},
      {"dense_shared", ops::matmul(128, 96, 64), kernelcheck::gpuschedules::matmul(true)},
      {"dense_ragged", ops::matmul(100, 90, 33), kernelcheck::gpuschedules::matmul(true)},
      {"dense_tiled", ops::matmul(128, 96, 64), kernelcheck::gpuschedules::matmulTiled()},
      {"dense_tiled_ragged", ops::matmul(100, 90, 35), kernelcheck::gpuschedules::matmulTiled()},
      {"conv2d", ops::conv2dNCHW(1, 8, 14, 14, 16, 3, 3, 1, 1), kernelcheck::gpuschedules::conv2d()},
  };
}

/// Builds each case for the target; where its device is present, saves and loads it as a
/// module directory, runs it and checks it. Returns why it could not run, or "".
std::string runCases(const std::string& target, const std::string& unavailable) {
  uint64_t seed = 1;
  for (auto& c : cases()) {
    SCOPED_TRACE(c.name + " on " + target);
    auto binary = kernelcheck::buildForGpu(replay(c.dag, c.steps), target, c.name);
    if (!unavailable.empty()) continue;  // built (NVRTC needs no GPU), not run
    TempDir dir("tessel-gpu-e2e");
    codegen::saveGpuModule(binary, dir.path());
    auto module = runtime::GpuModule::load(dir.path());
    auto data = kernelcheck::makeReferenceData(c.dag, seed++);
    double error = kernelcheck::runGpuAndCompare(module.kernel(c.name), data);
    EXPECT_LT(error, 1e-5) << binary.source.code;
  }
  return unavailable;
}

}  // namespace

TEST(GpuEndToEnd, CudaDenseAndConv2dMatchTheReference) {
  std::string why = kernelcheck::cudaUnavailableReason();
  if (why.empty())
    std::printf("CUDA device: %s (%s)\n", runtime::cudaDeviceInfo(0).name.c_str(), runtime::cudaDeviceInfo(0).architecture.c_str());
  if (std::string skipped = runCases("cuda -arch=sm_90", why); !skipped.empty()) {
    if (testsupport::deviceRequired("TESSEL_REQUIRE_CUDA")) FAIL() << "TESSEL_REQUIRE_CUDA=1: " << skipped;
    GTEST_SKIP() << "compiled with NVRTC, not run: " << skipped;
  }
}

TEST(GpuEndToEnd, OpenclDenseAndConv2dMatchTheReference) {
  TESSEL_REQUIRE_OPENCL();
  std::printf("OpenCL device: %s\n", runtime::openclDeviceInfo(0).name.c_str());
  runCases("opencl", "");
}

TEST(GpuEndToEnd, CudaEventsTimeAKernel) {
  TESSEL_REQUIRE_CUDA();
  auto dag = ops::matmul(512, 512, 512);
  auto binary = kernelcheck::buildForGpu(replay(dag, kernelcheck::gpuschedules::matmul(true)), "cuda", "mm");
  auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
  runtime::Device gpu{runtime::DeviceKind::CUDA, 0};
  std::vector<runtime::Tensor> args;
  for (auto& name : dag.inputNames()) args.push_back(runtime::Tensor::empty(dag.op(name)->shape, DataType::float32(), gpu));
  args.push_back(runtime::Tensor::empty({512, 512}, DataType::float32(), gpu));
  runtime::TimeEvaluatorOptions options;
  options.number = 10;
  options.repeat = 3;
  auto result = runtime::timeFunction(module.kernel("mm").bind(args), options, runtime::cudaEventClock(0));
  ASSERT_EQ(result.costs.size(), 3u);
  double gflops = 2.0 * 512 * 512 * 512 / result.mean / 1e9;
  std::printf("512^3 matmul (hand schedule, shared A): %.1f us, %.0f GFLOP/s\n", result.mean * 1e6, gflops);
  EXPECT_GT(result.mean, 0);
  EXPECT_LT(result.mean, 0.1);
}

TEST(GpuEndToEnd, WrongDeviceArgumentsAreRejected) {
  TESSEL_REQUIRE_OPENCL();
  auto dag = ops::matmul(16, 16, 4);
  auto binary = kernelcheck::buildForGpu(replay(dag, kernelcheck::gpuschedules::matmul(false)), "opencl", "mm");
  auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
  std::vector<runtime::Tensor> cpuArgs = {runtime::Tensor::empty({16, 4}, DataType::float32()),
                                          runtime::Tensor::empty({4, 16}, DataType::float32()),
                                          runtime::Tensor::empty({16, 16}, DataType::float32())};
  EXPECT_EQ(errorOf([&] { module.kernel("mm").call(cpuArgs); }),
            "kernel 'mm', argument 'A' (1 of 3): expected device opencl:0, got cpu:0");
  expectContains(errorOf([&] { module.kernel("nope"); }), "GPU module has no kernel 'nope' (kernels: mm)");
}

TEST(GpuEndToEnd, OpenclBuildErrorsCarryTheDriverLog) {
  TESSEL_REQUIRE_OPENCL();
  std::string manifest = R"({"device": "opencl", "kernels": [{"name": "k", "args": [],
                             "launch": {"grid": [1, 1, 1], "block": [1, 1, 1]}}]})";
  expectContains(errorOf([&] { runtime::GpuModule::fromMemory(manifest, "__kernel void k() { undeclared = 1; }"); }),
                 "OpenCL could not build the kernels on opencl:0");
}
