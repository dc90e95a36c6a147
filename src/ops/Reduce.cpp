#include "ops/Reduce.h"

#include "ops/Shape.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

namespace {

const char* kindName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Sum: return "sum";
    case ReduceKind::Mean: return "mean";
    case ReduceKind::Max: return "max";
    case ReduceKind::Min: return "min";
  }
  return "reduce";
}

/// Which axes are reduced (all of them for an empty list).
std::vector<bool> reducedAxes(const std::string& op, size_t rank, const std::vector<int>& axes) {
  std::vector<bool> reduced(rank, axes.empty());
  for (int axis : axes) {
    auto a = size_t(normalizeAxis(op, axis, int(rank)));
    TESSEL_CHECK(!reduced[a], "{}: axis {} is listed twice", op, axis);
    reduced[a] = true;
  }
  return reduced;
}

}  // namespace

std::vector<int64_t> reducedShape(const std::string& op, const std::vector<int64_t>& shape, const std::vector<int>& axes, bool keepdims) {
  std::vector<bool> reduced = reducedAxes(op, shape.size(), axes);
  std::vector<int64_t> out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d]) out.push_back(shape[d]);
    else if (keepdims) out.push_back(1);
  }
  if (out.empty()) out.push_back(1);
  return out;
}

Tensor reduce(const Tensor& x, ReduceKind kind, std::vector<int> axes, bool keepdims) {
  const std::string op = kindName(kind);
  TESSEL_CHECK(x.dtype().isFloat() || x.dtype().isIntegral(), "{}: needs a numeric tensor, got {} ('{}')", op, x.dtype().str(),
               x.name());
  const size_t rank = size_t(x.ndim());
  std::vector<bool> reduced = reducedAxes(op, rank, axes);
  std::vector<int64_t> outShape = reducedShape(op, x.shape(), axes, keepdims);
  std::vector<te::IterVar> reduceVars;
  int64_t count = 1;
  for (size_t d = 0; d < rank; ++d)
    if (reduced[d]) {
      reduceVars.push_back(te::reduceAxis(x.shape()[d], "k" + std::to_string(d)));
      count *= x.shape()[d];
    }
  // Output index -> input index: kept axes in order, reduced ones from their reduction variable.
  auto inputIndex = [&](const std::vector<Var>& i) {
    std::vector<Expr> idx;
    size_t next = 0, r = 0;
    for (size_t d = 0; d < rank; ++d) {
      if (reduced[d]) {
        idx.push_back(reduceVars[r++].var);
        if (keepdims) ++next;
      } else {
        idx.push_back(i[next++]);
      }
    }
    return idx;
  };
  ir::ReduceOp reduceOp = kind == ReduceKind::Max ? ir::ReduceOp::Max : kind == ReduceKind::Min ? ir::ReduceOp::Min : ir::ReduceOp::Sum;
  Tensor result = te::compute(
      outShape, [&](const std::vector<Var>& i) { return ir::reduce(reduceOp, x(inputIndex(i)), reduceVars); },
      kind == ReduceKind::Mean ? "T_mean_sum" : "T_" + op, "reduce", axisNames("ax", int(outShape.size())));
  if (kind != ReduceKind::Mean) return result;
  DataType type = x.dtype();
  return te::compute(
      outShape,
      [&](const std::vector<Var>& i) { return result(std::vector<Expr>(i.begin(), i.end())) / ir::makeConst(type, double(count)); },
      "T_mean", "reduce", axisNames("ax", int(outShape.size())));
}

}  // namespace tessel::ops
