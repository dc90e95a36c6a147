#include "ops/LayerNorm.h"

#include "ops/Shape.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

Tensor layerNorm(const Tensor& x, const Tensor& scale, const std::optional<Tensor>& bias, int axis, double epsilon) {
  TESSEL_CHECK(x.dtype().isFloat(), "layer_norm: needs a float tensor, got {} ('{}')", x.dtype().str(), x.name());
  const int rank = x.ndim();
  const int a = normalizeAxis("layer_norm", axis, rank);
  std::vector<int64_t> normalized(x.shape().begin() + a, x.shape().end());
  auto checkParameter = [&](const Tensor& p, const char* what) {
    TESSEL_CHECK(p.dtype() == x.dtype(), "layer_norm: the {} is {}, the data {}", what, p.dtype().str(), x.dtype().str());
    bool fits = p.ndim() <= int(normalized.size());
    for (int d = 0; fits && d < p.ndim(); ++d) {
      int64_t e = p.shape()[size_t(d)], want = normalized[normalized.size() - size_t(p.ndim()) + size_t(d)];
      fits = e == want || e == 1;
    }
    TESSEL_CHECK(fits, "layer_norm: the {} {} does not broadcast to the normalized axes {}", what, shapeString(p.shape()),
                 shapeString(normalized));
  };
  checkParameter(scale, "scale");
  if (bias) checkParameter(*bias, "bias");
  // The statistics' shape: the leading axes (one row count of 1 when every axis is normalized).
  std::vector<int64_t> rows(x.shape().begin(), x.shape().begin() + a);
  const bool scalar = rows.empty();
  if (scalar) rows.push_back(1);
  int64_t count = 1;
  for (int64_t e : normalized) count *= e;
  DataType t = x.dtype();
  auto rowIndex = [&](const std::vector<Var>& full) {
    std::vector<Expr> idx(full.begin(), full.begin() + a);
    if (scalar) idx.push_back(Expr(int64_t(0)));
    return idx;
  };
  auto reduceVars = [&](const std::string& prefix) {
    std::vector<te::IterVar> vars;
    for (size_t d = 0; d < normalized.size(); ++d) vars.push_back(te::reduceAxis(normalized[d], prefix + std::to_string(d)));
    return vars;
  };
  // x at a row and the reduction variables.
  auto along = [&](const std::vector<Var>& row, const std::vector<te::IterVar>& k) {
    std::vector<Expr> idx;
    for (int d = 0; d < a; ++d) idx.push_back(row[size_t(d)]);
    for (auto& v : k) idx.push_back(v.var);
    return idx;
  };
  auto k1 = reduceVars("k");
  Tensor sum = te::compute(
      rows, [&](const std::vector<Var>& r) { return te::sum(x(along(r, k1)), k1); }, "T_layer_norm_sum", "layer_norm",
      axisNames("i", int(rows.size())));
  auto mean = [&](std::vector<Expr> row) { return sum(std::move(row)) / ir::makeConst(t, double(count)); };
  auto k2 = reduceVars("k");
  Tensor squares = te::compute(
      rows,
      [&](const std::vector<Var>& r) {
        Expr d = x(along(r, k2)) - mean(std::vector<Expr>(r.begin(), r.end()));
        return te::sum(d * d, k2);
      },
      "T_layer_norm_squares", "layer_norm", axisNames("i", int(rows.size())));
  return te::compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        auto row = rowIndex(i);
        Expr centered = x(std::vector<Expr>(i.begin(), i.end())) - mean(row);
        Expr inverse = ir::call(ir::Intrinsic::Rsqrt, {squares(row) / ir::makeConst(t, double(count)) + ir::makeConst(t, epsilon)});
        Expr y = centered * inverse * scale(broadcastIndices(scale.shape(), i));
        return bias ? y + (*bias)(broadcastIndices(bias->shape(), i)) : y;
      },
      "T_layer_norm", "layer_norm", axisNames("i", rank));
}

}  // namespace tessel::ops
