/// Fully connected layers: dense (data [N, K] times weight [M, K] transposed, as torch's Linear
/// and TVM's dense; tag "dense", named T_matmul_NT like TVM's) and matmul (A [N, K] times
/// B [K, M]; tag "matmul"). Int8 operands accumulate in `outDtype` (int32 by default).
#pragma once
#include <optional>

#include "te/Tensor.h"

namespace tessel::ops {

te::Tensor dense(const te::Tensor& data, const te::Tensor& weight, std::optional<DataType> outDtype = std::nullopt);
te::Tensor matmul(const te::Tensor& a, const te::Tensor& b, std::optional<DataType> outDtype = std::nullopt);

}  // namespace tessel::ops
