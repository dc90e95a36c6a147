// The operator traits table: every operator the library defines finds its row by the tag its
// compute carries, so no rule or template has to match tag strings itself.
#include <gtest/gtest.h>

#include "ops/Conv2d.h"
#include "ops/Dense.h"
#include "ops/MatmulPacked.h"
#include "ops/OpTraits.h"
#include "ops/Pooling.h"
#include "ops/Winograd.h"
#include "te/ComputeDAG.h"

using namespace tessel;
using namespace tessel::ops;

namespace {

te::Tensor inTensor(std::vector<int64_t> shape, const std::string& name) {
  return te::placeholder(std::move(shape), DataType::float32(), name);
}

Conv2dAttrs attrs(Layout layout, int64_t groups = 1) {
  Conv2dAttrs a;
  a.layout = layout;
  a.padding = {1, 1, 1, 1};
  a.groups = groups;
  return a;
}

const OpTraits& of(const te::Tensor& t) { return traitsOf(*t.op()); }

}  // namespace

TEST(OpTraits, EveryAnchorOfTheLibraryFindsItsRow) {
  auto nchw = inTensor({1, 4, 6, 6}, "x"), nhwc = inTensor({1, 6, 6, 4}, "x");
  EXPECT_EQ(of(conv2d(nchw, inTensor({8, 4, 3, 3}, "w"), attrs(Layout::NCHW))).kind, OpKind::Conv2dNCHW);
  EXPECT_EQ(of(conv2d(nhwc, inTensor({3, 3, 4, 8}, "w"), attrs(Layout::NHWC))).cpuTemplate, "conv2d_nhwc.x86");
  EXPECT_EQ(of(conv2d(nhwc, inTensor({3, 3, 2, 8}, "w"), attrs(Layout::NHWC, 2))).kind, OpKind::GroupConv2dNHWC);
  const OpTraits& depthwise = of(depthwiseConv2d(nhwc, inTensor({3, 3, 4, 1}, "w"), attrs(Layout::NHWC)));
  EXPECT_EQ(depthwise.kind, OpKind::DepthwiseConv2dNHWC);
  EXPECT_TRUE(depthwise.inlinePaddingByDefault);
  EXPECT_EQ(of(dense(inTensor({2, 8}, "x"), inTensor({3, 8}, "w"))).kind, OpKind::Dense);
  EXPECT_EQ(of(matmul(inTensor({2, 8}, "a"), inTensor({8, 3}, "b"))).kind, OpKind::Matmul);
  EXPECT_EQ(of(matmulPacked(inTensor({1, 2, 8}, "a"), inTensor({2, 8, 16}, "b"))).cpuTemplate, "matmul_packed.x86");
  EXPECT_EQ(of(batchMatmul(inTensor({1, 3, 2, 8}, "a"), inTensor({1, 3, 8, 5}, "b"))).kind, OpKind::BatchMatmul);
  // Winograd: the GEMM anchors, the transforms are marked, the output is known.
  auto y = conv2dWinograd(nhwc, inTensor({6, 6, 4, 8}, "u"), attrs(Layout::NHWC), 4);
  EXPECT_EQ(of(y).kind, OpKind::WinogradOutput);
  te::ComputeDAG dag({y}, {nhwc});
  int transforms = 0, gemms = 0;
  for (const auto& op : dag.ops()) {
    transforms += traitsOf(*op).winogradTransform;
    gemms += traitsOf(*op).kind == OpKind::WinogradGemm;
  }
  EXPECT_EQ(transforms, 3);
  EXPECT_EQ(gemms, 1);
  // The padding of a convolution, and an operator the table does not know.
  EXPECT_EQ(of(conv2d(nhwc, inTensor({3, 3, 4, 8}, "w"), attrs(Layout::NHWC))).anchor, true);
  Pool2dAttrs pool;
  pool.layout = Layout::NHWC;
  EXPECT_EQ(of(maxPool2d(nhwc, pool)).kind, OpKind::Other);
  EXPECT_FALSE(of(maxPool2d(nhwc, pool)).anchor);
}

TEST(OpTraits, RegisterTileAxesNeedTheirRank) {
  for (const OpTraits& t : allOpTraits()) {
    if (t.tileRank == 0) {
      EXPECT_FALSE(registerTileAxes(t, 4).has_value()) << t.tag;
      continue;
    }
    if (t.tileRank == kAnyRank) {  // stacks of matrices: the last two axes of any rank from 2
      EXPECT_FALSE(registerTileAxes(t, 1).has_value()) << t.tag;
      for (size_t rank : {2, 3, 4}) {
        auto axes = registerTileAxes(t, rank);
        ASSERT_TRUE(axes.has_value()) << t.tag;
        EXPECT_EQ(axes->vectorAxis, int(rank) - 1) << t.tag;
        EXPECT_EQ(axes->rowAxis, int(rank) - 2) << t.tag;
      }
      continue;
    }
    auto axes = registerTileAxes(t, size_t(t.tileRank));
    ASSERT_TRUE(axes.has_value()) << t.tag;
    EXPECT_LT(axes->vectorAxis, t.tileRank);
    EXPECT_LT(axes->rowAxis, t.tileRank);
    EXPECT_NE(axes->vectorAxis, axes->rowAxis);
    EXPECT_FALSE(registerTileAxes(t, size_t(t.tileRank) + 1).has_value()) << t.tag;
  }
}
