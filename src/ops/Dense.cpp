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

Tensor batchMatmul(const Tensor& a, const Tensor& b, std::optional<DataType> outDtype) {
  TESSEL_CHECK(a.ndim() >= 2 && b.ndim() >= 2, "batch_matmul: operands must have 2 axes or more, got {} and {}",
               shapeString(a.shape()), shapeString(b.shape()));
  TESSEL_CHECK(a.dtype() == b.dtype(), "batch_matmul: A is {} but B is {}", a.dtype().str(), b.dtype().str());
  const size_t ra = size_t(a.ndim()), rb = size_t(b.ndim());
  const int64_t m = a.shape()[ra - 2], kExtent = a.shape()[ra - 1], n = b.shape()[rb - 1];
  TESSEL_CHECK(kExtent == b.shape()[rb - 2], "batch_matmul: reduction mismatch: A {} has {} columns but B {} has {} rows",
               shapeString(a.shape()), kExtent, shapeString(b.shape()), b.shape()[rb - 2]);
  std::vector<int64_t> batchA(a.shape().begin(), a.shape().end() - 2), batchB(b.shape().begin(), b.shape().end() - 2);
  std::vector<int64_t> shape = broadcastShape("batch_matmul", batchA, batchB);
  const size_t batchRank = shape.size();
  shape.push_back(m);
  shape.push_back(n);
  DataType type = outDtype.value_or(defaultAccumulatorType(a.dtype()));
  auto k = te::reduceAxis(kExtent, "k");
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<Var> batch(i.begin(), i.begin() + long(batchRank));
        std::vector<Expr> ia = broadcastIndices(batchA, batch), ib = broadcastIndices(batchB, batch);
        ia.push_back(i[batchRank]);
        ia.push_back(k.var);
        ib.push_back(k.var);
        ib.push_back(i[batchRank + 1]);
        return te::sum(multiplyAs(type, a(ia), b(ib)), {k});
      },
      "T_batch_matmul", "batch_matmul", axisNames("i", int(shape.size())));
}

}  // namespace tessel::ops
