// Winograd F(m x m, 3 x 3), NHWC and NCHW: the transforms against the direct convolution, both
// evaluated by the reference evaluator on the same inputs; the filter transforms (HWIO, OIHW) in
// C++ against their tensor expressions; which convolutions it applies to; bad uses.
#include <gtest/gtest.h>

#include <random>

#include "common/ErrorText.h"
#include "common/KernelCheck.h"
#include "ops/Conv2d.h"
#include "ops/Winograd.h"
#include "ops/WinogradNchw.h"
#include "support/Error.h"
#include "te/ReferenceEvaluator.h"

using namespace tessel;
using namespace tessel::ops;
using te::placeholder;
using testsupport::errorOf;
using testsupport::expectContains;

namespace {

Conv2dAttrs nhwc(std::array<int64_t, 4> padding) {
  Conv2dAttrs a;
  a.layout = Layout::NHWC;
  a.padding = padding;
  return a;
}

std::vector<double> randomValues(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(count);
  for (auto& x : v) x = double(float(u(rng)));
  return v;
}

size_t elements(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (auto d : shape) n *= size_t(d);
  return n;
}

struct Shape {
  int64_t n, h, w, c, k;
  std::array<int64_t, 4> padding;
};

}  // namespace

TEST(Winograd, EqualsTheDirectConvolution) {
  // Whole tiles, partial tiles, no padding, asymmetric padding, batch 2, one channel.
  std::vector<Shape> shapes = {{1, 8, 8, 4, 3, {1, 1, 1, 1}}, {2, 7, 5, 3, 5, {1, 1, 1, 1}}, {1, 9, 6, 2, 2, {0, 0, 0, 0}},
                               {1, 6, 7, 5, 4, {0, 2, 1, 0}}, {1, 3, 3, 1, 1, {1, 1, 1, 1}}};
  for (int m : {2, 4, 6}) {
    for (const Shape& s : shapes) {
      SCOPED_TRACE(testing::Message() << "F(" << m << ") " << s.n << "x" << s.h << "x" << s.w << "x" << s.c << " -> " << s.k);
      auto x = placeholder({s.n, s.h, s.w, s.c}, DataType::float32(), "data");
      auto g = placeholder({3, 3, s.c, s.k}, DataType::float32(), "weight");
      te::ComputeDAG direct({conv2d(x, g, nhwc(s.padding))}, {x, g});
      te::ComputeDAG winograd({conv2dWinograd(x, winogradWeightTransform(g, m), nhwc(s.padding), m)}, {x, g});
      te::TensorValues inputs{{"data", randomValues(elements(x.shape()), 1)}, {"weight", randomValues(elements(g.shape()), 2)}};
      auto want = te::evaluateReference(direct, inputs).at(direct.outputNames()[0]);
      auto got = te::evaluateReference(winograd, inputs).at(winograd.outputNames()[0]);
      ASSERT_EQ(got.size(), want.size());
      // Each stage rounds to float32: a few ulps of the transforms' magnitudes, which grow with
      // the tile (F(6x6)'s points 1/2 and 2 give entries up to 32 and down to 1/90): 1.04e-4 here.
      EXPECT_LT(kernelcheck::relativeError(got, want), m == 6 ? 1e-3 : 1e-4);
    }
  }
}

TEST(Winograd, TheFilterTransformInCppMatchesItsExpression) {
  for (int m : {2, 4, 6}) {
    int64_t c = 3, k = 5;
    auto g = placeholder({3, 3, c, k}, DataType::float32(), "weight");
    te::ComputeDAG dag({winogradWeightTransform(g, m)}, {g});
    auto values = randomValues(size_t(9 * c * k), 7);
    auto want = te::evaluateReference(dag, {{"weight", values}}).at(dag.outputNames()[0]);
    std::vector<float> weight(values.begin(), values.end());
    auto got = winogradWeightTransform(weight, c, k, m);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "element " << i;
  }
}

TEST(Winograd, AppliesToStrideOneThreeByThreeFloatConvolutionsOnly) {
  Conv2dAttrs a = nhwc({1, 1, 1, 1});
  EXPECT_TRUE(winogradApplies(a, {3, 3, 8, 8}, DataType::float32()));
  EXPECT_FALSE(winogradApplies(a, {1, 1, 8, 8}, DataType::float32()));
  EXPECT_FALSE(winogradApplies(a, {3, 3, 8, 8}, DataType::int8()));
  Conv2dAttrs strided = a;
  strided.strides = {2, 2};
  EXPECT_FALSE(winogradApplies(strided, {3, 3, 8, 8}, DataType::float32()));
  Conv2dAttrs dilated = a;
  dilated.dilation = {2, 1};
  EXPECT_FALSE(winogradApplies(dilated, {3, 3, 8, 8}, DataType::float32()));
  Conv2dAttrs grouped = a;
  grouped.groups = 2;
  EXPECT_FALSE(winogradApplies(grouped, {3, 3, 4, 8}, DataType::float32()));
  // NCHW with its OIHW weight: the GPU builds' form (WinogradNchw.h).
  Conv2dAttrs nchw = a;
  nchw.layout = Layout::NCHW;
  EXPECT_FALSE(winogradApplies(nchw, {3, 3, 8, 8}, DataType::float32()));
  EXPECT_TRUE(winogradApplies(nchw, {8, 8, 3, 3}, DataType::float32()));
  EXPECT_FALSE(winogradApplies(nchw, {8, 8, 1, 1}, DataType::float32()));
}

TEST(Winograd, TheDefaultRulePicksTheTileByCacheAndTiles) {
  size_t l2 = size_t(1) << 20;
  EXPECT_EQ(defaultWinogradTileSize(64, 64, 56, 56, l2), 4);     // 36 x 64 x 64 floats fit 1 MiB
  EXPECT_EQ(defaultWinogradTileSize(128, 128, 28, 28, l2), 2);   // they do not: F(2x2), 196 tiles
  EXPECT_EQ(defaultWinogradTileSize(256, 256, 14, 14, l2), 2);   // 49 tiles
  EXPECT_EQ(defaultWinogradTileSize(512, 512, 7, 7, l2), 0);     // 16 tiles: direct
  EXPECT_EQ(defaultWinogradTileSize(8, 64, 56, 56, l2), 0);      // too few channels
  EXPECT_EQ(defaultWinogradTileSize(128, 128, 28, 28, size_t(4) << 20), 4);  // a larger L2
}

// F(2x2) layers are tried as F(4x4) whatever the cache; F(4x4) ones as F(6x6) where it fits the L2.
TEST(Winograd, TuningAlsoTriesTheNextLargerTile) {
  size_t l2 = size_t(1) << 20;
  EXPECT_EQ(winogradWeightBytes(6, 64, 64), double(l2));            // 64 x 64 x 64 floats: exactly 1 MiB
  EXPECT_EQ(winogradWeightBytes(4, 64, 64), 36.0 * 64 * 64 * 4);
  EXPECT_EQ(largeWinogradTileSize(64, 64, 56, 56, l2), 6);
  EXPECT_EQ(largeWinogradTileSize(64, 64, 56, 56, l2 - 1), 0);      // one byte short
  EXPECT_EQ(largeWinogradTileSize(128, 128, 28, 28, l2), 4);        // the rules' F(2x2)
  EXPECT_EQ(largeWinogradTileSize(256, 256, 14, 14, l2), 4);
  EXPECT_EQ(largeWinogradTileSize(64, 64, 56, 56, size_t(512) << 10), 4);  // F(4x4)'s 576 KiB exceed the L2
  EXPECT_EQ(largeWinogradTileSize(128, 128, 28, 28, size_t(4) << 20), 6);  // F(6x6): 4 MiB
  EXPECT_EQ(largeWinogradTileSize(512, 512, 7, 7, l2), 0);  // the rules keep it direct
  EXPECT_EQ(largeWinogradTileSize(8, 8, 56, 56, l2), 0);
}

TEST(Winograd, BadUsesNameTheProblem) {
  auto x = placeholder({1, 8, 8, 4}, DataType::float32(), "data");
  auto u = placeholder({6, 6, 4, 8}, DataType::float32(), "weight");
  expectContains(errorOf([&] { winogradMatrices(3); }), "m = 3 is not supported");
  Conv2dAttrs strided = nhwc({1, 1, 1, 1});
  strided.strides = {2, 2};
  expectContains(errorOf([&] { conv2dWinograd(x, u, strided, 4); }), "only stride 1");
  expectContains(errorOf([&] { conv2dWinograd(x, u, nhwc({1, 1, 1, 1}), 2); }), "does not fit F(2x2, 3x3)");
  auto g = placeholder({1, 1, 4, 8}, DataType::float32(), "weight");
  expectContains(errorOf([&] { winogradWeightTransform(g, 4); }), "must be HWIO 3x3");
}

// The NCHW form of GPU builds (ops/WinogradNchw.h): the same shapes against the direct NCHW
// convolution with OIHW weights; the OIHW filter transform in C++ against its expression.
TEST(WinogradNchw, EqualsTheDirectConvolution) {
  std::vector<Shape> shapes = {{1, 8, 8, 4, 3, {1, 1, 1, 1}}, {2, 7, 5, 3, 5, {1, 1, 1, 1}}, {1, 9, 6, 2, 2, {0, 0, 0, 0}},
                               {1, 6, 7, 5, 4, {0, 2, 1, 0}}, {1, 3, 3, 1, 1, {1, 1, 1, 1}}};
  for (int m : {2, 4, 6}) {
    for (const Shape& s : shapes) {
      SCOPED_TRACE(testing::Message() << "F(" << m << ") " << s.n << "x" << s.c << "x" << s.h << "x" << s.w << " -> " << s.k);
      auto x = placeholder({s.n, s.c, s.h, s.w}, DataType::float32(), "data");
      auto g = placeholder({s.k, s.c, 3, 3}, DataType::float32(), "weight");
      Conv2dAttrs a;
      a.padding = s.padding;
      te::ComputeDAG direct({conv2d(x, g, a)}, {x, g});
      te::ComputeDAG winograd({conv2dWinograd(x, winogradWeightTransform(g, m, Layout::NCHW), a, m)}, {x, g});
      te::TensorValues inputs{{"data", randomValues(elements(x.shape()), 1)}, {"weight", randomValues(elements(g.shape()), 2)}};
      auto want = te::evaluateReference(direct, inputs).at(direct.outputNames()[0]);
      auto got = te::evaluateReference(winograd, inputs).at(winograd.outputNames()[0]);
      ASSERT_EQ(got.size(), want.size());
      // F(4x4)'s transforms scale values by up to 10 in and 19 out per dimension: a few ulps of
      // those magnitudes are a few 1e-4 of a small output's; F(6x6)'s by up to 15 in and 67 out.
      EXPECT_LT(kernelcheck::relativeError(got, want), m == 2 ? 1e-4 : m == 4 ? 3e-4 : 1e-3);
    }
  }
  auto x = placeholder({1, 4, 8, 8}, DataType::float32(), "data");
  Conv2dAttrs strided;
  strided.strides = {2, 2};
  expectContains(errorOf([&] { conv2dWinogradNCHW(x, placeholder({6, 6, 4, 8}, DataType::float32(), "u"), strided, 4); }),
                 "only stride 1");
  expectContains(errorOf([&] { conv2dWinogradNCHW(x, placeholder({6, 6, 3, 8}, DataType::float32(), "u"), Conv2dAttrs{}, 4); }),
                 "does not fit F(4x4, 3x3) of 4 input channels");
  expectContains(errorOf([&] { winogradWeightTransform(placeholder({3, 3, 4, 8}, DataType::float32(), "w"), 4, Layout::NCHW); }),
                 "must be OIHW 3x3");
}

TEST(WinogradNchw, TheOihwFilterTransformInCppMatchesItsExpression) {
  for (int m : {2, 4, 6}) {
    int64_t c = 3, k = 5;
    auto g = placeholder({k, c, 3, 3}, DataType::float32(), "weight");
    te::ComputeDAG dag({winogradWeightTransform(g, m, Layout::NCHW)}, {g});
    auto values = randomValues(size_t(9 * c * k), 8);
    auto want = te::evaluateReference(dag, {{"weight", values}}).at(dag.outputNames()[0]);
    std::vector<float> weight(values.begin(), values.end());
    auto got = winogradWeightTransform(weight, c, k, m, Layout::NCHW);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "element " << i;
  }
}

TEST(WinogradNchw, GpuBuildsTakeFourByFourTilesWhereTheyCoverTheImage) {
  EXPECT_EQ(gpuWinogradTileSize(56, 56), 4);
  EXPECT_EQ(gpuWinogradTileSize(28, 28), 4);
  EXPECT_EQ(gpuWinogradTileSize(14, 14), 2);
  EXPECT_EQ(gpuWinogradTileSize(7, 7), 2);
  EXPECT_EQ(gpuWinogradTileSize(8, 6), 2);
  WinogradNchwTiles t = winogradNchwTiles(2, 7, 9, 4);
  EXPECT_EQ(t.batch, 2);
  EXPECT_EQ(t.tileRows, 2);
  EXPECT_EQ(t.tileColumns, 3);
}

// Packed weights (ops/Conv2d.h): the same convolution as HWIO, through the reference evaluator.
TEST(PackedWeights, EqualTheHwioConvolution) {
  struct Case {
    int64_t h, w, c, k, kernel, stride, block;
    std::array<int64_t, 4> padding;
  };
  for (const Case& s : std::vector<Case>{{7, 7, 5, 32, 1, 1, 32, {0, 0, 0, 0}}, {9, 8, 3, 48, 3, 2, 16, {1, 0, 1, 2}},
                                         {6, 6, 4, 64, 3, 1, 32, {1, 1, 1, 1}}}) {
    auto x = placeholder({1, s.h, s.w, s.c}, DataType::float32(), "data");
    auto g = placeholder({s.kernel, s.kernel, s.c, s.k}, DataType::float32(), "weight");
    Conv2dAttrs a = nhwc(s.padding);
    a.strides = {s.stride, s.stride};
    te::ComputeDAG direct({conv2d(x, g, a)}, {x, g});
    te::ComputeDAG packed({conv2dPacked(x, packConvWeight(g, s.block), a)}, {x, g});
    te::TensorValues inputs{{"data", randomValues(elements(x.shape()), 3)}, {"weight", randomValues(elements(g.shape()), 4)}};
    auto want = te::evaluateReference(direct, inputs).at(direct.outputNames()[0]);
    auto got = te::evaluateReference(packed, inputs).at(packed.outputNames()[0]);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_LT(kernelcheck::relativeError(got, want), 1e-6) << s.kernel << "x" << s.kernel << " block " << s.block;
    // The packing in C++ is the expression's.
    te::ComputeDAG pack({packConvWeight(g, s.block)}, {g});
    auto expression = te::evaluateReference(pack, {{"weight", inputs.at("weight")}}).at(pack.outputNames()[0]);
    std::vector<float> hwio(inputs.at("weight").begin(), inputs.at("weight").end());
    auto native = packConvWeight(hwio, g.shape(), s.block);
    ASSERT_EQ(native.size(), expression.size());
    for (size_t i = 0; i < native.size(); ++i) ASSERT_EQ(double(native[i]), expression[i]) << "element " << i;
  }
  auto x = placeholder({1, 4, 4, 3}, DataType::float32(), "data");
  expectContains(errorOf([&] { packConvWeight(placeholder({1, 1, 3, 24}, DataType::float32(), "w"), 16); }),
                 "a block of 16 does not divide the 24 output channels");
  Conv2dAttrs grouped = nhwc({0, 0, 0, 0});
  grouped.groups = 3;
  expectContains(errorOf([&] { conv2dPacked(x, placeholder({1, 1, 1, 1, 16}, DataType::float32(), "w"), grouped); }), "only one group");
}
