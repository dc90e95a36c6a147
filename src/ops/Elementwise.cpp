#include "ops/Elementwise.h"

#include <cmath>

#include "ops/Shape.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

namespace {

Tensor unary(const Tensor& x, const std::string& name, const std::function<Expr(Expr)>& fn) {
  return te::compute(
      x.shape(), [&](const std::vector<Var>& i) { return fn(x(std::vector<Expr>(i.begin(), i.end()))); }, name, "elemwise",
      axisNames("ax", x.ndim()));
}

void checkFloat(const std::string& op, const Tensor& x) {
  TESSEL_CHECK(x.dtype().isFloat(), "{}: needs a float tensor, got {} ('{}')", op, x.dtype().str(), x.name());
}

void checkNumeric(const std::string& op, const Tensor& x) {
  TESSEL_CHECK(x.dtype().isFloat() || x.dtype().isIntegral(), "{}: needs a numeric tensor, got {} ('{}')", op,
               x.dtype().str(), x.name());
}

/// f(x) of one math intrinsic, on a float tensor.
Tensor floatIntrinsic(const Tensor& x, const std::string& op, ir::Intrinsic f) {
  checkFloat(op, x);
  return unary(x, "T_" + op, [f](Expr v) { return ir::call(f, {v}); });
}

}  // namespace

Tensor relu(const Tensor& x) {
  checkNumeric("relu", x);
  DataType t = x.dtype();
  return unary(x, "T_relu", [&](Expr v) { return ir::max(v, ir::makeConst(t, 0)); });
}

Tensor clip(const Tensor& x, double lo, double hi) {
  checkNumeric("clip", x);
  TESSEL_CHECK(lo <= hi, "clip: lower bound {} is above the upper bound {}", lo, hi);
  DataType t = x.dtype();
  if (t.isIntegral()) {
    TESSEL_CHECK(lo == std::floor(lo) && hi == std::floor(hi), "clip: bounds {} and {} of an {} tensor must be integers", lo,
                 hi, t.str());
    Expr l = lowestValue(t), h = highestValue(t);
    double minimum = double(*ir::asConstInt(l)), maximum = double(*ir::asConstInt(h));
    TESSEL_CHECK(lo >= minimum && hi <= maximum, "clip: bounds {} and {} do not fit {} ([{}, {}])", lo, hi, t.str(), minimum,
                 maximum);
  }
  return unary(x, "T_clip", [&](Expr v) { return ir::min(ir::max(v, ir::makeConst(t, lo)), ir::makeConst(t, hi)); });
}

Tensor relu6(const Tensor& x) { return clip(x, 0, 6); }

Tensor round(const Tensor& x) { return floatIntrinsic(x, "round", ir::Intrinsic::Round); }

Tensor leakyRelu(const Tensor& x, double alpha) {
  checkFloat("leaky_relu", x);
  DataType t = x.dtype();
  return unary(x, "T_leaky_relu", [&](Expr v) {
    return ir::select(v > ir::makeConst(t, 0), v, v * ir::makeConst(t, alpha));
  });
}

Tensor sigmoid(const Tensor& x) { return floatIntrinsic(x, "sigmoid", ir::Intrinsic::Sigmoid); }

Tensor tanh(const Tensor& x) { return floatIntrinsic(x, "tanh", ir::Intrinsic::Tanh); }

Tensor hardSigmoid(const Tensor& x, double alpha, double beta) {
  checkFloat("hard_sigmoid", x);
  DataType t = x.dtype();
  return unary(x, "T_hard_sigmoid", [&](Expr v) {
    Expr y = v * ir::makeConst(t, alpha) + ir::makeConst(t, beta);
    return ir::max(ir::makeConst(t, 0), ir::min(ir::makeConst(t, 1), y));
  });
}

Tensor hardSwish(const Tensor& x) {
  checkFloat("hard_swish", x);
  DataType t = x.dtype();
  return unary(x, "T_hard_swish", [&](Expr v) {
    Expr relu6 = ir::min(ir::max(v + ir::makeConst(t, 3), ir::makeConst(t, 0)), ir::makeConst(t, 6));
    // Divided, not multiplied by 1/6: the same rounding as torch's x * relu6(x + 3) / 6.
    return v * relu6 / ir::makeConst(t, 6);
  });
}

Tensor exp(const Tensor& x) { return floatIntrinsic(x, "exp", ir::Intrinsic::Exp); }

Tensor sqrt(const Tensor& x) { return floatIntrinsic(x, "sqrt", ir::Intrinsic::Sqrt); }

Tensor erf(const Tensor& x) { return floatIntrinsic(x, "erf", ir::Intrinsic::Erf); }

Tensor gelu(const Tensor& x, bool tanhApproximation) {
  checkFloat("gelu", x);
  DataType t = x.dtype();
  auto c = [&](double value) { return ir::makeConst(t, value); };
  return unary(x, "T_gelu", [&](Expr v) {
    Expr inner = tanhApproximation ? ir::call(ir::Intrinsic::Tanh, {c(std::sqrt(2.0 / M_PI)) * (v + c(0.044715) * v * v * v)})
                                   : ir::call(ir::Intrinsic::Erf, {v * c(M_SQRT1_2)});
    return c(0.5) * v * (c(1) + inner);
  });
}

Tensor isNan(const Tensor& x) {
  checkFloat("is_nan", x);
  return unary(x, "T_is_nan", [](Expr v) { return v != v; });
}

Tensor isInf(const Tensor& x, bool positive, bool negative) {
  checkFloat("is_inf", x);
  Expr inf = ir::makeConst(x.dtype(), HUGE_VAL);
  return unary(x, "T_is_inf", [&](Expr v) {
    if (positive && negative) return ir::call(ir::Intrinsic::Abs, {v}) == inf;
    if (positive) return v == inf;
    if (negative) return v == ir::makeConst(x.dtype(), -HUGE_VAL);
    return ir::makeConst(DataType::boolean(), 0);  // detects nothing
  });
}

Tensor logicalNot(const Tensor& x) {
  TESSEL_CHECK(x.dtype() == DataType::boolean(), "logical_not: needs a bool tensor, got {} ('{}')", x.dtype().str(), x.name());
  return unary(x, "T_logical_not", [](Expr v) { return v == ir::makeConst(DataType::boolean(), 0); });
}

}  // namespace tessel::ops
