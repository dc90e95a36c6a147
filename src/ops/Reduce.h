/// Reductions over any set of axes (tag "reduce"): sum, mean, max and min, as Relay's `sum`,
/// `mean`, `max` and `min` and ONNX's ReduceSum/Mean/Max/Min. The reduced axes are kept as
/// extents of 1 (keepdims) or dropped; reducing every axis without keepdims gives one element
/// (shape [1]: the graph has no rank-0 tensors). A mean divides the sum by the count of reduced
/// elements in the tensor's own type.
#pragma once
#include <vector>

#include "te/Tensor.h"

namespace tessel::ops {

enum class ReduceKind { Sum, Mean, Max, Min };

/// `axes` may be negative (counted from the end) and must not repeat; empty reduces every axis.
/// Any numeric dtype; a mean of integers truncates, as C's division does.
te::Tensor reduce(const te::Tensor& x, ReduceKind kind, std::vector<int> axes, bool keepdims);

/// The output shape of reduce(): errors naming `op` for a bad axis.
std::vector<int64_t> reducedShape(const std::string& op, const std::vector<int64_t>& shape, const std::vector<int>& axes, bool keepdims);

}  // namespace tessel::ops
