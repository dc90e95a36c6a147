/// Shape and dtype helpers shared by the operator definitions: checks that raise an Error
/// naming the operator, numpy broadcasting, axis normalization, sliding-window output sizes and
/// the extreme values of a dtype (padding values of max pooling).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "te/Tensor.h"

namespace tessel::ops {

/// "[1, 3, 224, 224]"
std::string shapeString(const std::vector<int64_t>& shape);

/// Throws unless `t` has `rank` dimensions: "<op>: <what> must be 4-D, got [..]".
void checkRank(const std::string& op, const std::string& what, const te::Tensor& t, int rank);

/// checkRank for an operator's data and weight, and that both hold the same dtype.
void checkDataAndWeight(const std::string& op, const te::Tensor& data, int dataRank, const te::Tensor& weight, int weightRank);

/// The numpy broadcast of two shapes (trailing dimensions aligned, equal or 1); throws naming
/// the op and both shapes when they are incompatible.
std::vector<int64_t> broadcastShape(const std::string& op, const std::vector<int64_t>& a, const std::vector<int64_t>& b);

/// The indices into a tensor of `shape` that an element of the broadcast `outIndex` reads:
/// trailing dimensions aligned, dimensions of extent 1 read index 0.
std::vector<ir::Expr> broadcastIndices(const std::vector<int64_t>& shape, const std::vector<te::Var>& outIndex);

/// A possibly negative axis (-1 is the last) as an index in [0, rank); throws naming the op.
int normalizeAxis(const std::string& op, int64_t axis, int rank);

/// The output extent of a sliding window: floor((in + padBefore + padAfter - dilation*(kernel-1) - 1)
/// / stride) + 1, or the ceiling when `ceilMode` (then a last window must start inside the
/// input or the leading padding, as in torch). Throws when it is not positive.
int64_t windowOutputSize(const std::string& op, const char* dimension, int64_t in, int64_t kernel, int64_t stride,
                         int64_t dilation, int64_t padBefore, int64_t padAfter, bool ceilMode = false);

/// The lowest and highest finite value of a scalar dtype, as a constant of that dtype.
ir::Expr lowestValue(DataType type);
ir::Expr highestValue(DataType type);

/// a * b in `type` (the accumulator dtype of int8 convolutions), casting what differs.
ir::Expr multiplyAs(DataType type, ir::Expr a, ir::Expr b);

/// e * factor, or e itself when factor is 1 (keeps printed DAGs free of `*1`).
ir::Expr scaled(ir::Expr e, int64_t factor);

/// The axis names i0, i1, ... or ax0, ax1, ... of a rank.
std::vector<std::string> axisNames(const std::string& prefix, int rank);

}  // namespace tessel::ops
