#include "ops/MatmulPacked.h"

#include "ops/Conv2d.h"
#include "ops/Shape.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

Tensor matmulPacked(const Tensor& a, const Tensor& packedWeight, std::optional<DataType> outDtype) {
  const std::string op = "matmul_packed";
  TESSEL_CHECK(a.ndim() >= 2, "{}: A must have 2 axes or more, got {}", op, shapeString(a.shape()));
  checkRank(op, "packed weight", packedWeight, 3);
  TESSEL_CHECK(a.dtype() == packedWeight.dtype(), "{}: A is {} but the weight is {}", op, a.dtype().str(), packedWeight.dtype().str());
  const auto& w = packedWeight.shape();  // [N / block, K, block]
  const size_t rank = size_t(a.ndim());
  const int64_t kExtent = a.shape()[rank - 1], block = w[2];
  TESSEL_CHECK(w[1] == kExtent, "{}: reduction mismatch: A {} has {} columns but the packed weight {} has {} rows", op,
               shapeString(a.shape()), kExtent, shapeString(w), w[1]);
  DataType type = outDtype.value_or(defaultAccumulatorType(a.dtype()));
  std::vector<int64_t> shape(a.shape().begin(), a.shape().end() - 1);
  shape.push_back(w[0] * block);
  auto k = te::reduceAxis(kExtent, "k");
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> ia(i.begin(), i.end() - 1);
        ia.push_back(k.var);
        const Var& j = i.back();
        return te::sum(multiplyAs(type, a(ia), packedWeight(ir::floordiv(j, Expr(block)), k.var, ir::floormod(j, Expr(block)))), {k});
      },
      "T_matmul_packed", op, axisNames("i", int(shape.size())));
}

Tensor packMatmulWeight(const Tensor& weight, int64_t block) {
  checkRank("pack_matmul_weight", "weight", weight, 2);
  const auto& w = weight.shape();
  TESSEL_CHECK(block >= 1 && w[1] % block == 0, "pack_matmul_weight: a block of {} does not divide the {} columns of {}", block, w[1],
               shapeString(w));
  return te::compute(
      {w[1] / block, w[0], block}, [&](const std::vector<Var>& i) { return weight(i[1], i[0] * Expr(block) + i[2]); },
      "packed_weight", "injective", {"jo", "k", "ji"});
}

std::vector<float> packMatmulWeight(const std::vector<float>& kn, int64_t k, int64_t n, int64_t block) {
  // B [K, N] is the HWIO weight [1, 1, K, N] of a 1x1 convolution, packed the same way.
  return packConvWeight(kn, {1, 1, k, n}, block);
}

int64_t defaultMatmulPackBlock(int64_t k, int64_t n, int64_t rows, int64_t lanes, int64_t vectorRegisters) {
  return defaultPackBlock({1, 1, k, n}, {1, 1, rows, n}, 1, lanes, vectorRegisters);
}

}  // namespace tessel::ops
