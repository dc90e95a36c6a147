/// A tensor's elements as doubles and back, for every numeric dtype (float32/64, int8/32/64,
/// uint8, bool): the view the reference interpreter and constant folding compute on.
#pragma once
#include <vector>

#include "runtime/Tensor.h"

namespace tessel::graph {

/// The elements in row-major order; Error naming the dtype when it has no numeric values.
std::vector<double> tensorValues(const runtime::Tensor& t);

/// A CPU tensor of `shape` and `dtype` holding `values` (converted to the dtype).
runtime::Tensor valuesToTensor(const std::vector<int64_t>& shape, DataType dtype, const std::vector<double>& values);

}  // namespace tessel::graph
