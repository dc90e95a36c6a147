/// Binary operators with numpy broadcasting (tag "broadcast"): add, subtract, multiply,
/// divide, maximum, minimum, power, the comparisons and logical operators (bool results), where,
/// and bias_add (a 1-D bias along one axis). Both operands must have
/// the same dtype; integer division truncates toward zero, as in C.
#pragma once
#include "te/Tensor.h"

namespace tessel::ops {

te::Tensor add(const te::Tensor& a, const te::Tensor& b);
te::Tensor subtract(const te::Tensor& a, const te::Tensor& b);
te::Tensor multiply(const te::Tensor& a, const te::Tensor& b);
te::Tensor divide(const te::Tensor& a, const te::Tensor& b);
te::Tensor maximum(const te::Tensor& a, const te::Tensor& b);
te::Tensor minimum(const te::Tensor& a, const te::Tensor& b);

/// a ** b (float only).
te::Tensor power(const te::Tensor& a, const te::Tensor& b);
/// Comparisons: bool tensors (a NaN compares false, as in C).
te::Tensor equal(const te::Tensor& a, const te::Tensor& b);
te::Tensor less(const te::Tensor& a, const te::Tensor& b);
te::Tensor lessEqual(const te::Tensor& a, const te::Tensor& b);
te::Tensor greater(const te::Tensor& a, const te::Tensor& b);
te::Tensor greaterEqual(const te::Tensor& a, const te::Tensor& b);
/// Logical and / or of bool tensors.
te::Tensor logicalAnd(const te::Tensor& a, const te::Tensor& b);
te::Tensor logicalOr(const te::Tensor& a, const te::Tensor& b);
/// condition ? a : b elementwise, the three broadcast together (numpy's where, ONNX's Where);
/// condition is bool, a and b of one dtype.
te::Tensor where(const te::Tensor& condition, const te::Tensor& a, const te::Tensor& b);
/// x broadcast with `shape` as numpy broadcasts two operands (ONNX's Expand): the result has
/// both shapes' broadcast shape.
te::Tensor broadcastTo(const te::Tensor& x, const std::vector<int64_t>& shape);
/// data + bias broadcast along `axis` (bias is 1-D with data.shape[axis] elements); axis 1 is
/// NCHW's channel axis, -1 NHWC's and dense's. Named T_add like TVM's lowered bias_add.
te::Tensor biasAdd(const te::Tensor& data, const te::Tensor& bias, int axis = 1);

}  // namespace tessel::ops
