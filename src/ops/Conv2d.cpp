#include "ops/Conv2d.h"

#include "ops/Shape.h"
#include "ops/Transform.h"
#include "support/Error.h"
#include "target/CpuMachine.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

DataType defaultAccumulatorType(DataType input) { return input.isFloat() ? input : DataType::int32(); }

namespace {

struct ConvGeometry {
  int64_t batch, channels, height, width;  ///< of the data
  int64_t outHeight, outWidth;
  DataType outDtype;
};

ConvGeometry checkConv(const std::string& op, const Tensor& data, const Tensor& weight, const Conv2dAttrs& attrs,
                       int64_t kernelHeight, int64_t kernelWidth, int weightRank = 4) {
  checkDataAndWeight(op, data, 4, weight, weightRank);
  TESSEL_CHECK(data.dtype().isFloat() || data.dtype().isIntegral(), "{}: unsupported dtype {}", op, data.dtype().str());
  auto a = axesOf(attrs.layout);
  ConvGeometry g;
  g.batch = data.shape()[size_t(a.batch)];
  g.channels = data.shape()[size_t(a.channel)];
  g.height = data.shape()[size_t(a.height)];
  g.width = data.shape()[size_t(a.width)];
  g.outHeight = windowOutputSize(op, "height", g.height, kernelHeight, attrs.strides[0], attrs.dilation[0], attrs.padding[0],
                                 attrs.padding[2]);
  g.outWidth = windowOutputSize(op, "width", g.width, kernelWidth, attrs.strides[1], attrs.dilation[1], attrs.padding[1],
                                attrs.padding[3]);
  g.outDtype = attrs.outDtype.value_or(defaultAccumulatorType(data.dtype()));
  TESSEL_CHECK(g.outDtype.isScalar() && (g.outDtype.isFloat() || g.outDtype.isIntegral()), "{}: unsupported output dtype {}", op,
               g.outDtype.str());
  return g;
}

}  // namespace

Tensor conv2d(const Tensor& data, const Tensor& weight, const Conv2dAttrs& attrs) {
  const std::string op = "conv2d";
  bool nchw = attrs.layout == Layout::NCHW;
  checkRank(op, "weight", weight, 4);
  const auto& w = weight.shape();
  int64_t kh = nchw ? w[2] : w[0], kw = nchw ? w[3] : w[1];
  int64_t filterChannels = nchw ? w[1] : w[2], outChannels = nchw ? w[0] : w[3];
  auto g = checkConv(op, data, weight, attrs, kh, kw);
  int64_t groups = attrs.groups;
  TESSEL_CHECK(groups >= 1, "conv2d: groups must be at least 1, got {}", groups);
  TESSEL_CHECK(g.channels % groups == 0, "conv2d: groups {} does not divide the {} input channels", groups, g.channels);
  TESSEL_CHECK(outChannels % groups == 0, "conv2d: groups {} does not divide the {} output channels", groups, outChannels);
  TESSEL_CHECK(filterChannels * groups == g.channels,
               "conv2d: channel mismatch: data has {} channels but weight {} ({}) expects {} per group x {} groups = {}",
               g.channels, shapeString(w), nchw ? "OIHW" : "HWIO", filterChannels, groups, filterChannels * groups);
  auto a = axesOf(attrs.layout);
  Tensor padded = padImage(data, a.height, a.width, attrs.padding, 0.0, "pad_temp");
  int64_t sh = attrs.strides[0], sw = attrs.strides[1], dh = attrs.dilation[0], dw = attrs.dilation[1];
  int64_t outPerGroup = outChannels / groups;
  auto rc = te::reduceAxis(filterChannels, "rc"), ry = te::reduceAxis(kh, "ry"), rx = te::reduceAxis(kw, "rx");
  // The input channel an output channel f reads: its group's first channel + rc.
  auto inputChannel = [&](Expr f) -> Expr {
    if (groups == 1) return rc.var;
    return ir::floordiv(f, Expr(outPerGroup)) * Expr(filterChannels) + rc.var;
  };
  auto row = [&](Expr y) { return scaled(y, sh) + scaled(ry.var, dh); };
  auto column = [&](Expr x) { return scaled(x, sw) + scaled(rx.var, dw); };
  std::string name = groups == 1 ? "conv2d" : "group_conv2d";
  if (nchw) {
    return te::compute(
        {g.batch, outChannels, g.outHeight, g.outWidth},
        [&](const std::vector<Var>& i) {
          Expr x = padded(i[0], inputChannel(i[1]), row(i[2]), column(i[3]));
          return te::sum(multiplyAs(g.outDtype, x, weight(i[1], rc.var, ry.var, rx.var)), {rc, ry, rx});
        },
        name + "_nchw", name + "_nchw", {"nn", "ff", "yy", "xx"});
  }
  return te::compute(
      {g.batch, g.outHeight, g.outWidth, outChannels},
      [&](const std::vector<Var>& i) {
        Expr x = padded(i[0], row(i[1]), column(i[2]), inputChannel(i[3]));
        return te::sum(multiplyAs(g.outDtype, x, weight(ry.var, rx.var, rc.var, i[3])), {ry, rx, rc});
      },
      name + "_nhwc", name + "_nhwc", {"nn", "yy", "xx", "ff"});
}

int64_t defaultPackBlock(const std::vector<int64_t>& weightHwio, const std::vector<int64_t>& outputNhwc, int64_t stride,
                         int64_t lanes, int64_t vectorRegisters) {
  TESSEL_CHECK(weightHwio.size() == 4 && outputNhwc.size() == 4, "defaultPackBlock: a weight {} and an output {} are not HWIO and NHWC",
               shapeString(weightHwio), shapeString(outputNhwc));
  int64_t outChannels = weightHwio[3];
  bool pointwise = weightHwio[0] == 1 && weightHwio[1] == 1 && stride == 1;
  TESSEL_CHECK(lanes >= 1, "defaultPackBlock: {} lanes", lanes);
  if (pointwise && target::CpuMachine::largeRegisterFile(vectorRegisters) && outputNhwc[2] <= kWideBlockMaxWidth && outChannels % (4 * lanes) == 0) return 4 * lanes;
  if (outChannels % (2 * lanes) == 0) return 2 * lanes;
  if (outChannels % lanes == 0 && lanes > 1) return lanes;
  return 0;
}

Tensor packConvWeight(const Tensor& weight, int64_t block) {
  checkRank("pack_conv_weight", "weight", weight, 4);
  const auto& w = weight.shape();
  TESSEL_CHECK(block >= 1 && w[3] % block == 0, "pack_conv_weight: a block of {} does not divide the {} output channels of {}",
               block, w[3], shapeString(w));
  return te::compute(
      {w[3] / block, w[0], w[1], w[2], block},
      [&](const std::vector<Var>& i) { return weight(i[1], i[2], i[3], i[0] * Expr(block) + i[4]); }, "packed_weight",
      "injective", {"ko", "kh", "kw", "ci", "ki"});
}

std::vector<float> packConvWeight(const std::vector<float>& hwio, const std::vector<int64_t>& shape, int64_t block) {
  TESSEL_CHECK(shape.size() == 4 && block >= 1 && shape[3] % block == 0,
               "pack_conv_weight: a block of {} does not fit the weight {}", block, shapeString(shape));
  int64_t taps = shape[0] * shape[1] * shape[2], k = shape[3], blocks = k / block;
  TESSEL_CHECK(int64_t(hwio.size()) == taps * k, "pack_conv_weight: {} values for a weight {}", hwio.size(), shapeString(shape));
  std::vector<float> packed(hwio.size());
  for (int64_t ko = 0; ko < blocks; ++ko)
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t ki = 0; ki < block; ++ki) packed[size_t((ko * taps + t) * block + ki)] = hwio[size_t(t * k + ko * block + ki)];
  return packed;
}

Tensor conv2dPacked(const Tensor& data, const Tensor& packedWeight, const Conv2dAttrs& attrs) {
  const std::string op = "conv2d_packed";
  TESSEL_CHECK(attrs.layout == Layout::NHWC, "{}: only NHWC is supported, got {}", op, layoutName(attrs.layout));
  TESSEL_CHECK(attrs.groups == 1, "{}: only one group, got {}", op, attrs.groups);
  checkRank(op, "packed weight", packedWeight, 5);
  const auto& w = packedWeight.shape();  // [K / block, KH, KW, C, block]
  int64_t kh = w[1], kw = w[2], block = w[4], outChannels = w[0] * w[4];
  auto g = checkConv(op, data, packedWeight, attrs, kh, kw, 5);
  TESSEL_CHECK(w[3] == g.channels, "{}: data has {} channels but the packed weight {} has {}", op, g.channels, shapeString(w), w[3]);
  Tensor padded = padImage(data, 1, 2, attrs.padding, 0.0, "pad_temp");
  int64_t sh = attrs.strides[0], sw = attrs.strides[1], dh = attrs.dilation[0], dw = attrs.dilation[1];
  auto ry = te::reduceAxis(kh, "ry"), rx = te::reduceAxis(kw, "rx"), rc = te::reduceAxis(g.channels, "rc");
  return te::compute(
      {g.batch, g.outHeight, g.outWidth, outChannels},
      [&](const std::vector<Var>& i) {
        Expr x = padded(i[0], scaled(i[1], sh) + scaled(ry.var, dh), scaled(i[2], sw) + scaled(rx.var, dw), rc.var);
        Expr weight = packedWeight(ir::floordiv(i[3], Expr(block)), ry.var, rx.var, rc.var, ir::floormod(i[3], Expr(block)));
        return te::sum(multiplyAs(g.outDtype, x, weight), {ry, rx, rc});
      },
      "conv2d_nhwc", "conv2d_nhwc_packed", {"nn", "yy", "xx", "ff"});
}

Tensor depthwiseConv2d(const Tensor& data, const Tensor& weight, const Conv2dAttrs& attrs) {
  const std::string op = "depthwise_conv2d";
  bool nchw = attrs.layout == Layout::NCHW;
  checkRank(op, "weight", weight, 4);
  const auto& w = weight.shape();
  int64_t kh = nchw ? w[2] : w[0], kw = nchw ? w[3] : w[1];
  int64_t weightChannels = nchw ? w[0] : w[2], multiplier = nchw ? w[1] : w[3];
  auto g = checkConv(op, data, weight, attrs, kh, kw);
  TESSEL_CHECK(weightChannels == g.channels, "depthwise_conv2d: channel mismatch: data has {} channels but weight {} ({}) has {}",
               g.channels, shapeString(w), nchw ? "[C, M, KH, KW]" : "[KH, KW, C, M]", weightChannels);
  TESSEL_CHECK(attrs.groups == 1 || attrs.groups == g.channels,
               "depthwise_conv2d: groups {} contradicts a depthwise convolution of {} channels", attrs.groups, g.channels);
  auto a = axesOf(attrs.layout);
  Tensor padded = padImage(data, a.height, a.width, attrs.padding, 0.0, "PaddedInput");
  int64_t sh = attrs.strides[0], sw = attrs.strides[1], dh = attrs.dilation[0], dw = attrs.dilation[1];
  auto di = te::reduceAxis(kh, "di"), dj = te::reduceAxis(kw, "dj");
  auto row = [&](Expr y) { return scaled(y, sh) + scaled(di.var, dh); };
  auto column = [&](Expr x) { return scaled(x, sw) + scaled(dj.var, dw); };
  // Output channel c reads input channel c / M with filter c % M (c and 0 when M is 1).
  auto inputChannel = [&](Expr c) { return multiplier == 1 ? c : ir::floordiv(c, Expr(multiplier)); };
  auto filter = [&](Expr c) { return multiplier == 1 ? Expr(int64_t(0)) : ir::floormod(c, Expr(multiplier)); };
  int64_t outChannels = g.channels * multiplier;
  if (nchw) {
    return te::compute(
        {g.batch, outChannels, g.outHeight, g.outWidth},
        [&](const std::vector<Var>& i) {
          Expr x = padded(i[0], inputChannel(i[1]), row(i[2]), column(i[3]));
          return te::sum(multiplyAs(g.outDtype, x, weight(inputChannel(i[1]), filter(i[1]), di.var, dj.var)), {di, dj});
        },
        "DepthwiseConv2d", "depthwise_conv2d_nchw", {"b", "c", "i", "j"});
  }
  return te::compute(
      {g.batch, g.outHeight, g.outWidth, outChannels},
      [&](const std::vector<Var>& i) {
        Expr x = padded(i[0], row(i[1]), column(i[2]), inputChannel(i[3]));
        return te::sum(multiplyAs(g.outDtype, x, weight(di.var, dj.var, inputChannel(i[3]), filter(i[3]))), {di, dj});
      },
      "DepthwiseConv2d", "depthwise_conv2d_nhwc", {"b", "i", "j", "c"});
}

}  // namespace tessel::ops
