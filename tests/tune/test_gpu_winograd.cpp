// scratch
#include <gtest/gtest.h>

#include "common/ErrorText.h"
#include "common/GpuKernelCheck.h"
#include "common/GpuRequire.h"
#include "ops/WinogradNchw.h"
#include "ops/GpuWinogradTiles.h"
#include "ops/GpuSchedules.h"
#include "passes/Lower.h"
#include "runtime/OpenclDevice.h"
#include "tune/autotvm/GpuWinogradTemplate.h"

using namespace tessel;
using namespace tessel::tune::autotvm;

namespace {
te::ComputeDAG winogradNchw(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t pad, int m) {
  auto data = te::placeholder({n, c, h, w}, DataType::float32(), "data");
  auto weight = te::placeholder({m + 2, m + 2, c, k}, DataType::float32(), "weight");
  ops::Conv2dAttrs attrs;
  attrs.layout = ops::Layout::NCHW;
  attrs.padding = {pad, pad, pad, pad};
  return te::ComputeDAG({ops::conv2dWinogradNCHW(data, weight, attrs, m)}, {data, weight});
}
}  // namespace

TEST(GpuWinogradScratch, Fallback) {
  TESSEL_REQUIRE_OPENCL();
  for (int m : {2, 4}) {
    auto dag = winogradNchw(1, 8, 14, 14, 16, 1, m);
    passes::GpuLimits limits = passes::GpuLimits::forTarget("opencl");
    GpuTemplateSpace t = gpuWinogradTemplate(dag, limits);
    std::printf("space %llu of %llu\n", (unsigned long long)t.space->size(), (unsigned long long)t.unprunedSize);
    auto config = t.space->get(t.fallback);
    std::printf("fallback %s\n", config.str().c_str());
    auto steps = t.instantiate(config);
    auto state = schedule::replay(dag, steps);
    auto lowered = passes::lowerForGpu(state, "k", limits);
    std::printf("%s\n", schedule::stepsToJson(steps).dump().c_str());
    auto binary = kernelcheck::buildForGpu(state, "opencl", "k");
    std::printf("%s\n", binary.source.code.c_str());
    auto module = runtime::GpuModule::fromMemory(binary.manifestText(), binary.code);
    auto data = kernelcheck::makeReferenceData(dag, 1);
    EXPECT_LT(kernelcheck::runGpuAndCompare(module.kernel("k"), data), 1e-4);
  }
}
