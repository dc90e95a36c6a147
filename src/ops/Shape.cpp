#include "ops/Shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

#include "ops/Layout.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;

Layout parseLayout(const std::string& text) {
  if (text == "NCHW") return Layout::NCHW;
  if (text == "NHWC") return Layout::NHWC;
  fail("unknown layout '{}' (expected NCHW or NHWC)", text);
}

std::string shapeString(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

void checkRank(const std::string& op, const std::string& what, const te::Tensor& t, int rank) {
  TESSEL_CHECK(t.ndim() == rank, "{}: {} must be {}-D, got shape {}", op, what, rank, shapeString(t.shape()));
}

void checkDataAndWeight(const std::string& op, const te::Tensor& data, int dataRank, const te::Tensor& weight, int weightRank) {
  checkRank(op, "data", data, dataRank);
  checkRank(op, "weight", weight, weightRank);
  TESSEL_CHECK(data.dtype() == weight.dtype(), "{}: data is {} but weight is {}", op, data.dtype().str(), weight.dtype().str());
}

std::vector<int64_t> broadcastShape(const std::string& op, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    // Aligned from the right: dimension k of the result is dimension k - (rank - size) of each.
    int64_t x = k + a.size() >= rank ? a[k + a.size() - rank] : 1;
    int64_t y = k + b.size() >= rank ? b[k + b.size() - rank] : 1;
    TESSEL_CHECK(x == y || x == 1 || y == 1, "{}: shapes {} and {} cannot be broadcast (dimension {} of the result: {} vs {})",
                 op, shapeString(a), shapeString(b), k, x, y);
    out[k] = x == 1 ? y : x;
  }
  return out;
}

std::vector<Expr> broadcastIndices(const std::vector<int64_t>& shape, const std::vector<te::Var>& outIndex) {
  std::vector<Expr> idx;
  size_t offset = outIndex.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) idx.push_back(shape[d] == 1 ? Expr(int64_t(0)) : Expr(outIndex[offset + d]));
  return idx;
}

int normalizeAxis(const std::string& op, int64_t axis, int rank) {
  TESSEL_CHECK(axis >= -rank && axis < rank, "{}: axis {} is out of range for a {}-D tensor", op, axis, rank);
  return int(axis < 0 ? axis + rank : axis);
}

int64_t windowOutputSize(const std::string& op, const char* dimension, int64_t in, int64_t kernel, int64_t stride,
                         int64_t dilation, int64_t padBefore, int64_t padAfter, bool ceilMode) {
  TESSEL_CHECK(kernel >= 1, "{}: kernel {} must be at least 1, got {}", op, dimension, kernel);
  TESSEL_CHECK(stride >= 1, "{}: stride {} must be at least 1, got {}", op, dimension, stride);
  TESSEL_CHECK(dilation >= 1, "{}: dilation {} must be at least 1, got {}", op, dimension, dilation);
  TESSEL_CHECK(padBefore >= 0 && padAfter >= 0, "{}: padding of the {} must not be negative, got {} and {}", op, dimension,
               padBefore, padAfter);
  int64_t span = in + padBefore + padAfter - dilation * (kernel - 1) - 1;
  TESSEL_CHECK(span >= 0, "{}: the {} window ({} with dilation {}) is larger than the padded input ({} + {} + {})", op,
               dimension, kernel, dilation, in, padBefore, padAfter);
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // torch: in ceil mode the last window must start inside the input or the leading padding.
  if (ceilMode && (out - 1) * stride >= in + padBefore) --out;
  return out;
}

Expr lowestValue(DataType type) {
  if (type.isFloat()) return ir::makeConst(type, type.bits == 16 ? -65504.0 : type.bits == 32 ? -double(std::numeric_limits<float>::max())
                                                                                                : std::numeric_limits<double>::lowest());
  return ir::reduceIdentity(ir::ReduceOp::Max, type);  // the lowest value: the identity of max
}

Expr highestValue(DataType type) {
  if (type.isFloat()) return ir::makeConst(type, type.bits == 16 ? 65504.0 : type.bits == 32 ? double(std::numeric_limits<float>::max())
                                                                                               : std::numeric_limits<double>::max());
  return ir::reduceIdentity(ir::ReduceOp::Min, type);
}

Expr multiplyAs(DataType type, Expr a, Expr b) {
  if (a.type() != type) a = ir::cast(type, a);
  if (b.type() != type) b = ir::cast(type, b);
  return a * b;
}

Expr scaled(Expr e, int64_t factor) { return factor == 1 ? e : e * Expr(factor); }

std::vector<std::string> axisNames(const std::string& prefix, int rank) {
  std::vector<std::string> names;
  for (int d = 0; d < rank; ++d) names.push_back(fmt::format("{}{}", prefix, d));
  return names;
}

}  // namespace tessel::ops
