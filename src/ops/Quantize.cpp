#include "ops/Quantize.h"

#include "ops/Shape.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

Tensor cast(const Tensor& x, DataType dtype) {
  TESSEL_CHECK(dtype.isScalar() && (dtype.isFloat() || dtype.isIntegral()), "cast: cannot cast to {}", dtype.str());
  return te::compute(
      x.shape(), [&](const std::vector<Var>& i) { return ir::cast(dtype, x(std::vector<Expr>(i.begin(), i.end()))); },
      "T_cast", "elemwise", axisNames("ax", x.ndim()));
}

namespace {

void checkShift(const char* op, const Tensor& x, int bits) {
  TESSEL_CHECK(x.dtype().isIntegral(), "{}: needs an integer tensor, got {} ('{}')", op, x.dtype().str(), x.name());
  TESSEL_CHECK(bits >= 0 && bits < x.dtype().bits, "{}: shift of {} bits out of range for {} (0 to {})", op, bits,
               x.dtype().str(), x.dtype().bits - 1);
}

}  // namespace

Tensor rightShift(const Tensor& x, int bits) {
  checkShift("right_shift", x, bits);
  DataType t = x.dtype();
  // The loop IR has no shift: an arithmetic right shift is a floor division by 2^bits, and a
  // logical one (unsigned) is too.
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        return ir::floordiv(x(std::vector<Expr>(i.begin(), i.end())), ir::makeConst(t, double(int64_t(1) << bits)));
      },
      "T_right_shift", "elemwise", axisNames("ax", x.ndim()));
}

Tensor leftShift(const Tensor& x, int bits) {
  checkShift("left_shift", x, bits);
  DataType t = x.dtype();
  // The multiplier 2^bits may not fit t itself (1 << 31 in int32): multiply in int64, wrap back.
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        Expr wide = ir::cast(DataType::int64(), x(std::vector<Expr>(i.begin(), i.end())));
        return ir::cast(t, wide * ir::makeConst(DataType::int64(), double(int64_t(1) << bits)));
      },
      "T_left_shift", "elemwise", axisNames("ax", x.ndim()));
}

}  // namespace tessel::ops
