#include "ops/Conv2d.h"

#include "ops/Shape.h"
#include "ops/Transform.h"
#include "support/Error.h"

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
                       int64_t kernelHeight, int64_t kernelWidth) {
  checkRank(op, "data", data, 4);
  checkRank(op, "weight", weight, 4);
  TESSEL_CHECK(data.dtype() == weight.dtype(), "{}: data is {} but weight is {}", op, data.dtype().str(), weight.dtype().str());
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
