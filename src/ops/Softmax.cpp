#include "ops/Softmax.h"

#include "ops/Shape.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

Tensor softmax(const Tensor& x, int axis) {
  TESSEL_CHECK(x.dtype().isFloat(), "softmax: needs a float tensor, got {} ('{}')", x.dtype().str(), x.name());
  int rank = x.ndim();
  int a = normalizeAxis("softmax", axis, rank);
  // The reductions' shape: x's without the axis (a scalar row count of 1 for a 1-D x).
  std::vector<int64_t> reducedShape;
  for (int d = 0; d < rank; ++d)
    if (d != a) reducedShape.push_back(x.shape()[size_t(d)]);
  bool scalar = reducedShape.empty();
  if (scalar) reducedShape.push_back(1);
  int64_t extent = x.shape()[size_t(a)];
  auto reducedIndex = [&](const std::vector<Var>& full) {
    std::vector<Expr> idx;
    for (int d = 0; d < rank; ++d)
      if (d != a) idx.push_back(full[size_t(d)]);
    if (scalar) idx.push_back(Expr(int64_t(0)));
    return idx;
  };
  // Reads x with the reduced index and `k` at the axis.
  auto readAlong = [&](const std::vector<Var>& reduced, Expr k) {
    std::vector<Expr> idx;
    size_t next = 0;
    for (int d = 0; d < rank; ++d) idx.push_back(d == a ? k : Expr(reduced[next++]));
    return idx;
  };
  auto k1 = te::reduceAxis(extent, "k");
  Tensor maxElem = te::compute(
      reducedShape, [&](const std::vector<Var>& i) { return te::max(x(readAlong(i, k1.var)), {k1}); }, "T_softmax_maxelem",
      "softmax", axisNames("i", int(reducedShape.size())));
  Tensor expValue = te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        return ir::call(ir::Intrinsic::Exp, {x(std::vector<Expr>(i.begin(), i.end())) - maxElem(reducedIndex(i))});
      },
      "T_softmax_exp", "softmax", axisNames("i", rank));
  auto k2 = te::reduceAxis(extent, "k");
  Tensor expSum = te::compute(
      reducedShape, [&](const std::vector<Var>& i) { return te::sum(expValue(readAlong(i, k2.var)), {k2}); }, "T_softmax_expsum",
      "softmax", axisNames("i", int(reducedShape.size())));
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) { return expValue(std::vector<Expr>(i.begin(), i.end())) / expSum(reducedIndex(i)); },
      "T_softmax_norm", "softmax", axisNames("i", rank));
}

}  // namespace tessel::ops
