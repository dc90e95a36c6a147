#include "ops/BatchNorm.h"

#include "ops/Shape.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

Tensor batchNorm(const Tensor& data, const Tensor& gamma, const Tensor& beta, const Tensor& mean, const Tensor& variance,
                 const BatchNormAttrs& attrs) {
  TESSEL_CHECK(data.dtype().isFloat(), "batch_norm: needs float data, got {}", data.dtype().str());
  int axis = normalizeAxis("batch_norm", attrs.axis, data.ndim());
  int64_t channels = data.shape()[size_t(axis)];
  TESSEL_CHECK(attrs.epsilon >= 0, "batch_norm: epsilon must not be negative, got {}", attrs.epsilon);
  for (auto [what, t] : {std::pair{"gamma", &gamma}, {"beta", &beta}, {"moving_mean", &mean}, {"moving_var", &variance}}) {
    TESSEL_CHECK(t->ndim() == 1 && t->shape()[0] == channels,
                 "batch_norm: {} must be 1-D with {} elements (axis {} of data {}), got {}", what, channels, axis,
                 shapeString(data.shape()), shapeString(t->shape()));
    TESSEL_CHECK(t->dtype() == data.dtype(), "batch_norm: {} is {} but data is {}", what, t->dtype().str(), data.dtype().str());
  }
  DataType type = data.dtype();
  return te::compute(
      data.shape(),
      [&](const std::vector<Var>& i) {
        Expr c = i[size_t(axis)];
        Expr x = data(std::vector<Expr>(i.begin(), i.end()));
        Expr factor = ir::call(ir::Intrinsic::Rsqrt, {variance(c) + ir::makeConst(type, attrs.epsilon)});
        if (attrs.scale) factor = factor * gamma(c);
        Expr y = (x - mean(c)) * factor;
        return attrs.center ? y + beta(c) : y;
      },
      "T_batch_norm", "broadcast", axisNames("ax", data.ndim()));
}

}  // namespace tessel::ops
