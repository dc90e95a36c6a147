#include "ops/Conv2dBlocked.h"

#include "ops/Shape.h"
#include "ops/Transform.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

Tensor conv2dBlocked(const Tensor& data, const Tensor& weight, const Conv2dAttrs& attrs) {
  const std::string op = "conv2d_blocked";
  checkDataAndWeight(op, data, 6, weight, 6);
  TESSEL_CHECK(data.dtype().isFloat() || data.dtype().isIntegral(), "{}: unsupported dtype {}", op, data.dtype().str());
  TESSEL_CHECK(attrs.groups == 1, "{}: only one group, got {}", op, attrs.groups);
  TESSEL_CHECK(attrs.dilation[0] == 1 && attrs.dilation[1] == 1, "{}: dilation {}x{} is not supported", op, attrs.dilation[0],
               attrs.dilation[1]);
  const auto& d = data.shape();    // [N / b, C / c, H, W, b, c]
  const auto& w = weight.shape();  // [K / o, C / i, KH, KW, o, i]
  TESSEL_CHECK(d[1] == w[1] && d[5] == w[5],
               "{}: data {} has {} channel blocks of {} but weight {} expects {} blocks of {}", op, shapeString(d), d[1], d[5],
               shapeString(w), w[1], w[5]);
  int64_t kh = w[2], kw = w[3];
  int64_t outHeight = windowOutputSize(op, "height", d[2], kh, attrs.strides[0], 1, attrs.padding[0], attrs.padding[2]);
  int64_t outWidth = windowOutputSize(op, "width", d[3], kw, attrs.strides[1], 1, attrs.padding[1], attrs.padding[3]);
  DataType outDtype = attrs.outDtype.value_or(defaultAccumulatorType(data.dtype()));
  TESSEL_CHECK(outDtype.isScalar() && (outDtype.isFloat() || outDtype.isIntegral()), "{}: unsupported output dtype {}", op,
               outDtype.str());
  Tensor padded = padImage(data, 2, 3, attrs.padding, 0.0, "pad_data");
  int64_t sh = attrs.strides[0], sw = attrs.strides[1];
  auto ko = te::reduceAxis(d[1], "ko"), ry = te::reduceAxis(kh, "ry"), rx = te::reduceAxis(kw, "rx"),
       ki = te::reduceAxis(d[5], "ki");
  return te::compute(
      {d[0], w[0], outHeight, outWidth, d[4], w[4]},
      [&](const std::vector<Var>& i) {
        Expr x = padded(i[0], ko.var, scaled(i[2], sh) + ry.var, scaled(i[3], sw) + rx.var, i[4], ki.var);
        return te::sum(multiplyAs(outDtype, x, weight(i[1], ko.var, ry.var, rx.var, i[5], ki.var)), {ko, ry, rx, ki});
      },
      "conv2d_blocked", "conv2d_blocked", {"bo", "co", "yy", "xx", "bi", "ci"});
}

}  // namespace tessel::ops
