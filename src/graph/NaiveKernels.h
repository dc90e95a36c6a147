/// Naive kernels of the heavy operators for the reference interpreter: conv2d (both layouts,
/// groups, dilation, padding), depthwise conv2d, conv2d_blocked, the NCHW conv2d_winograd (the
/// NHWC one is interpreted from its expression), dense and dense_blocked, on float or 8-bit
/// integer operands (int8 inference), and the float reductions (sum, mean, max, min over any
/// axes), as plain loops over doubles. They
/// are written from the operators' definitions independently of the tensor expressions (so the
/// interpreter stays an independent oracle), and they make it about a hundred times faster on
/// whole networks than interpreting those operators' expressions element by element.
#pragma once
#include <optional>
#include <vector>

#include "graph/Graph.h"

namespace tessel::graph {

/// The node's output values (row-major) computed naively, or nothing when there is no naive
/// kernel for it (another operator, other dtypes): the caller interprets its expression.
std::optional<std::vector<double>> evaluateNaively(const Node& node, const std::vector<const std::vector<double>*>& inputs,
                                                   const std::vector<TensorType>& inputTypes);

}  // namespace tessel::graph
