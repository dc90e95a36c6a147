#include "ops/Broadcast.h"

#include "ops/Shape.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

namespace {

Tensor binary(const std::string& op, const Tensor& a, const Tensor& b, const std::function<Expr(Expr, Expr)>& fn);

Tensor boolean(const std::string& op, const Tensor& a, const Tensor& b, const std::function<Expr(Expr, Expr)>& fn) {
  TESSEL_CHECK(a.dtype() == DataType::boolean() && b.dtype() == DataType::boolean(), "{}: needs bool tensors, got {} '{}' and {} '{}'",
               op, a.dtype().str(), a.name(), b.dtype().str(), b.name());
  return binary(op, a, b, fn);
}

Tensor binary(const std::string& op, const Tensor& a, const Tensor& b, const std::function<Expr(Expr, Expr)>& fn) {
  TESSEL_CHECK(a.dtype() == b.dtype(), "{}: operand dtypes differ ({} '{}' and {} '{}'); cast one first", op, a.dtype().str(),
               a.name(), b.dtype().str(), b.name());
  auto shape = broadcastShape(op, a.shape(), b.shape());
  return te::compute(
      shape, [&](const std::vector<Var>& i) { return fn(a(broadcastIndices(a.shape(), i)), b(broadcastIndices(b.shape(), i))); },
      "T_" + op, "broadcast", axisNames("ax", int(shape.size())));
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) { return binary("add", a, b, [](Expr x, Expr y) { return x + y; }); }
Tensor subtract(const Tensor& a, const Tensor& b) { return binary("subtract", a, b, [](Expr x, Expr y) { return x - y; }); }
Tensor multiply(const Tensor& a, const Tensor& b) { return binary("multiply", a, b, [](Expr x, Expr y) { return x * y; }); }
Tensor divide(const Tensor& a, const Tensor& b) { return binary("divide", a, b, [](Expr x, Expr y) { return x / y; }); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary("maximum", a, b, [](Expr x, Expr y) { return ir::max(x, y); }); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary("minimum", a, b, [](Expr x, Expr y) { return ir::min(x, y); }); }

Tensor power(const Tensor& a, const Tensor& b) {
  TESSEL_CHECK(a.dtype().isFloat(), "power: needs float tensors, got {} ('{}')", a.dtype().str(), a.name());
  return binary("power", a, b, [](Expr x, Expr y) { return ir::call(ir::Intrinsic::Pow, {x, y}); });
}
Tensor equal(const Tensor& a, const Tensor& b) { return binary("equal", a, b, [](Expr x, Expr y) { return x == y; }); }
Tensor less(const Tensor& a, const Tensor& b) { return binary("less", a, b, [](Expr x, Expr y) { return x < y; }); }
Tensor lessEqual(const Tensor& a, const Tensor& b) { return binary("less_equal", a, b, [](Expr x, Expr y) { return x <= y; }); }
Tensor greater(const Tensor& a, const Tensor& b) { return binary("greater", a, b, [](Expr x, Expr y) { return y < x; }); }
Tensor greaterEqual(const Tensor& a, const Tensor& b) { return binary("greater_equal", a, b, [](Expr x, Expr y) { return y <= x; }); }
Tensor logicalAnd(const Tensor& a, const Tensor& b) { return boolean("logical_and", a, b, [](Expr x, Expr y) { return x && y; }); }
Tensor logicalOr(const Tensor& a, const Tensor& b) { return boolean("logical_or", a, b, [](Expr x, Expr y) { return x || y; }); }

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  TESSEL_CHECK(condition.dtype() == DataType::boolean(), "where: the condition must be bool, got {} ('{}')", condition.dtype().str(),
               condition.name());
  TESSEL_CHECK(a.dtype() == b.dtype(), "where: the choices' dtypes differ ({} '{}' and {} '{}')", a.dtype().str(), a.name(),
               b.dtype().str(), b.name());
  auto shape = broadcastShape("where", condition.shape(), broadcastShape("where", a.shape(), b.shape()));
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        return ir::select(condition(broadcastIndices(condition.shape(), i)), a(broadcastIndices(a.shape(), i)),
                          b(broadcastIndices(b.shape(), i)));
      },
      "T_where", "broadcast", axisNames("ax", int(shape.size())));
}

Tensor broadcastTo(const Tensor& x, const std::vector<int64_t>& shape) {
  auto out = broadcastShape("broadcast_to", x.shape(), shape);
  return te::compute(
      out, [&](const std::vector<Var>& i) { return x(broadcastIndices(x.shape(), i)); }, "T_broadcast_to", "broadcast",
      axisNames("ax", int(out.size())));
}

Tensor biasAdd(const Tensor& data, const Tensor& bias, int axis) {
  int a = normalizeAxis("bias_add", axis, data.ndim());
  TESSEL_CHECK(bias.ndim() == 1 && bias.shape()[0] == data.shape()[size_t(a)],
               "bias_add: bias must be 1-D with {} elements (axis {} of data {}), got {}", data.shape()[size_t(a)], a,
               shapeString(data.shape()), shapeString(bias.shape()));
  TESSEL_CHECK(data.dtype() == bias.dtype(), "bias_add: data is {} but bias is {}", data.dtype().str(), bias.dtype().str());
  return te::compute(
      data.shape(),
      [&](const std::vector<Var>& i) { return data(std::vector<Expr>(i.begin(), i.end())) + bias(i[size_t(a)]); }, "T_add",
      "broadcast", axisNames("ax", data.ndim()));
}

}  // namespace tessel::ops
