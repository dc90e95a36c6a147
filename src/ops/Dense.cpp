#include "ops/Dense.h"

#include "ops/Conv2d.h"
#include "ops/Shape.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

Tensor dense(const Tensor& data, const Tensor& weight, std::optional<DataType> outDtype) {
  checkDataAndWeight("dense", data, 2, weight, 2);
  TESSEL_CHECK(data.shape()[1] == weight.shape()[1],
               "dense: reduction mismatch: data {} has {} input features but weight {} ([units, input features]) has {}",
               shapeString(data.shape()), data.shape()[1], shapeString(weight.shape()), weight.shape()[1]);
  DataType type = outDtype.value_or(defaultAccumulatorType(data.dtype()));
  auto k = te::reduceAxis(data.shape()[1], "k");
  return te::compute(
      {data.shape()[0], weight.shape()[0]},
      [&](const std::vector<Var>& i) { return te::sum(multiplyAs(type, data(i[0], k.var), weight(i[1], k.var)), {k}); },
      "T_matmul_NT", "dense", {"i", "j"});
}

Tensor matmul(const Tensor& a, const Tensor& b, std::optional<DataType> outDtype) {
  checkRank("matmul", "A", a, 2);
  checkRank("matmul", "B", b, 2);
  TESSEL_CHECK(a.dtype() == b.dtype(), "matmul: A is {} but B is {}", a.dtype().str(), b.dtype().str());
  TESSEL_CHECK(a.shape()[1] == b.shape()[0], "matmul: reduction mismatch: A {} has {} columns but B {} has {} rows",
               shapeString(a.shape()), a.shape()[1], shapeString(b.shape()), b.shape()[0]);
  DataType type = outDtype.value_or(defaultAccumulatorType(a.dtype()));
  auto k = te::reduceAxis(a.shape()[1], "k");
  return te::compute(
      {a.shape()[0], b.shape()[1]},
      [&](const std::vector<Var>& i) { return te::sum(multiplyAs(type, a(i[0], k.var), b(k.var, i[1])), {k}); }, "T_matmul_NN",
      "matmul", {"i", "j"});
}

}  // namespace tessel::ops
