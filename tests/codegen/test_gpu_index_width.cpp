// The width of GPU index arithmetic (codegen/GpuIndexWidth.h): 32-bit where every index value
// of the kernel fits, 64-bit for a buffer of 2^31 elements or more and for 64-bit integer
// data; floor division as C's / only where the dividend cannot be negative. The kernels are
// compiled by NVRTC and the runnable ones checked on the first OpenCL device (PoCL here).
#include <gtest/gtest.h>

#include "codegen/GpuIndexWidth.h"
#include "codegen/Nvrtc.h"
#include "common/ErrorText.h"
#include "common/GpuKernelCheck.h"
#include "common/GpuRequire.h"
#include "ops/Examples.h"
#include "ops/GpuSchedules.h"
#include "runtime/OpenclDevice.h"

using namespace tessel;
using tessel::testsupport::expectContains;

namespace {

struct Built {
  codegen::GpuBinary binary;
  int indexBits;
};

/// The default GPU schedule, lowered (sm_90's limits) and generated for `target`.
Built build(const te::ComputeDAG& dag, const std::string& target) {
  auto state = schedule::replay(dag, ops::defaultGpuSchedule(dag));
  int bits = codegen::gpuIndexBits(passes::lowerForGpu(state, "k", passes::GpuLimits::cudaSm90()).function);
  return {kernelcheck::buildForGpu(state, target, "k"), bits};
}

/// The kernel's text, without the prelude (which defines the helpers of both widths).
std::string kernelText(const codegen::GpuBinary& binary) {
  const std::string& code = binary.source.code;
  size_t start = code.find("void __launch_bounds__");
  if (start == std::string::npos) start = code.find("__kernel ");
  return start == std::string::npos ? code : code.substr(start);
}

bool nvrtcAvailable() { return codegen::nvrtcAvailable(nullptr); }

te::ComputeDAG relu(int64_t elements, DataType dtype) {
  te::Tensor x = te::placeholder({elements}, dtype, "x");
  te::Tensor y = te::compute(
      {elements}, [&](const std::vector<ir::Var>& i) { return ir::max(x(i[0]), ir::makeConst(dtype, 0)); }, "y");
  return te::ComputeDAG({y});
}

}  // namespace

TEST(GpuIndexWidth, AConvolutionComputesItsIndicesIn32Bits) {
  auto dag = ops::conv2dNCHW(1, 5, 9, 9, 7, 3, 3, 1, 1);
  for (std::string target : {"opencl", "cuda"}) {
    if (target == "cuda" && !nvrtcAvailable()) continue;
    SCOPED_TRACE(target);
    Built built = build(dag, target);
    EXPECT_EQ(built.indexBits, 32);
    std::string text = kernelText(built.binary);
    expectContains(text, "// 32-bit index arithmetic");
    expectContains(text, target == "cuda" ? " = (int)blockIdx.x;" : " = (int)get_group_id(0);");
    expectContains(text, "for (int ");
    EXPECT_EQ(text.find("const tessel_i64"), std::string::npos) << text;
    EXPECT_EQ(text.find("for (tessel_i64"), std::string::npos) << text;
    // A buffer index adds its 32-bit terms in 64 bits (constant offsets fold into the loads).
    expectContains(text, "((tessel_i64)ry) * ((tessel_i64)3LL)");
    // Every division and modulo has a non-negative dividend (the fused thread index, the
    // padded taps): C's operators, no flooring helper.
    EXPECT_EQ(text.find("tessel_floor"), std::string::npos) << text;
    expectContains(text, " / ");
    expectContains(text, " % ");
  }
}

TEST(GpuIndexWidth, NumbersOf32BitKernelsMatchTheReferenceOnOpencl) {
  TESSEL_REQUIRE_OPENCL();
  uint64_t seed = 3;
  for (auto dag : {ops::conv2dNCHW(1, 5, 9, 9, 7, 3, 3, 2, 1), ops::conv2dBiasReluNCHW(1, 4, 8, 8, 6, 1, 1, 1, 0), ops::matmul(3, 37, 19)}) {
    Built built = build(dag, "opencl");
    ASSERT_EQ(built.indexBits, 32);
    auto module = runtime::GpuModule::fromMemory(built.binary.manifestText(), built.binary.code);
    EXPECT_LT(kernelcheck::runGpuAndCompare(module.kernel("k"), kernelcheck::makeReferenceData(dag, seed++)), 1e-5)
        << built.binary.source.code;
  }
}

TEST(GpuIndexWidth, ABufferOf2To31ElementsKeeps64BitIndices) {
  // 2^31 - 1 elements: the last index, 2^31 - 2, and the launch's 2^31 threads still fit.
  EXPECT_EQ(build(relu((int64_t(1) << 31) - 1, DataType::float32()), "opencl").indexBits, 32);
  for (std::string target : {"opencl", "cuda"}) {
    if (target == "cuda" && !nvrtcAvailable()) continue;
    SCOPED_TRACE(target);
    Built built = build(relu(int64_t(1) << 31, DataType::float32()), target);  // compiled, not run: 8 GiB
    EXPECT_EQ(built.indexBits, 64);
    std::string text = kernelText(built.binary);
    expectContains(text, "// 64-bit index arithmetic");
    expectContains(text, "const tessel_i64 ");
    EXPECT_EQ(text.find("const int "), std::string::npos) << text;
  }
}

TEST(GpuIndexWidth, SixtyFourBitIntegerDataKeeps64BitIndices) {
  // A loaded int64 value has no bounds: the kernel's int64 type stays 64-bit for it.
  auto dag = relu(1000, DataType::int64());
  Built built = build(dag, "opencl");
  EXPECT_EQ(built.indexBits, 64);
  expectContains(kernelText(built.binary), "__global const tessel_i64* restrict x");
  TESSEL_REQUIRE_OPENCL();  // the generation is checked above; running needs a device
  auto module = runtime::GpuModule::fromMemory(built.binary.manifestText(), built.binary.code);
  EXPECT_EQ(kernelcheck::runGpuAndCompare(module.kernel("k"), kernelcheck::makeReferenceData(dag, 5)), 0);
}

TEST(GpuIndexWidth, NegativeDividendsKeepFlooringDivision) {
  // y[i] = x[floordiv(k[i], 4) + 2] + x[floormod(k[i], 8)] with k int32 data in [-8, 8]: an
  // int32 value is within int32 (32-bit indices) but may be negative, where C's / and % would
  // truncate toward zero and read the wrong elements.
  te::Tensor x = te::placeholder({8}, DataType::float32(), "x");
  te::Tensor k = te::placeholder({24}, DataType::int32(), "k");
  te::Tensor y = te::compute(
      {24},
      [&](const std::vector<ir::Var>& i) {
        ir::Expr key = ir::cast(DataType::int64(), k(i[0]));
        return x(ir::floordiv(key, ir::Expr(int64_t(4))) + ir::Expr(int64_t(2))) + x(ir::floormod(key, ir::Expr(int64_t(8))));
      },
      "y");
  te::ComputeDAG dag({y});
  Built built = build(dag, "opencl");
  EXPECT_EQ(built.indexBits, 32);
  expectContains(kernelText(built.binary), "tessel_floordiv32(");
  expectContains(kernelText(built.binary), "tessel_floormod32(");
  TESSEL_REQUIRE_OPENCL();
  auto module = runtime::GpuModule::fromMemory(built.binary.manifestText(), built.binary.code);
  auto data = kernelcheck::makeReferenceData(dag, 7);
  bool negative = false;
  for (double v : data.inputs.at("k")) negative |= v < 0 && int64_t(v) % 4 != 0;
  ASSERT_TRUE(negative) << "the seed gives no key that truncation would get wrong";
  EXPECT_LT(kernelcheck::runGpuAndCompare(module.kernel("k"), data), 1e-6) << built.binary.source.code;
}
