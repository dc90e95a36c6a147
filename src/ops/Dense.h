/// Fully connected layers: dense (data [N, K] times weight [M, K] transposed, as torch's Linear
/// and TVM's dense; tag "dense", named T_matmul_NT like TVM's), matmul (A [N, K] times
/// B [K, M]; tag "matmul") and batch_matmul (stacks of them). Int8 operands accumulate in `outDtype` (int32 by default).
#pragma once
#include <optional>

#include "te/Tensor.h"

namespace tessel::ops {

te::Tensor dense(const te::Tensor& data, const te::Tensor& weight, std::optional<DataType> outDtype = std::nullopt);
te::Tensor matmul(const te::Tensor& a, const te::Tensor& b, std::optional<DataType> outDtype = std::nullopt);
/// A [..., M, K] times B [..., K, N], the leading (batch) axes broadcast as numpy's (ONNX's
/// MatMul, torch.matmul, attention's Q K^T and its weighted sum); tag "batch_matmul".
te::Tensor batchMatmul(const te::Tensor& a, const te::Tensor& b, std::optional<DataType> outDtype = std::nullopt);

}  // namespace tessel::ops
