/// Layer normalization (tag "layer_norm"), as ONNX's LayerNormalization (opset 17) and
/// torch.nn.LayerNorm: over the axes from `axis` to the last, y = (x - mean) / sqrt(var + eps) *
/// scale + bias, the mean and the (biased) variance taken over those axes. Two reductions per
/// row, like softmax's: the default schedule computes them inside the output's rows.
#pragma once
#include <optional>

#include "te/Tensor.h"

namespace tessel::ops {

/// `scale` and the optional `bias` broadcast against the normalized axes (x.shape[axis:]); float only.
te::Tensor layerNorm(const te::Tensor& x, const te::Tensor& scale, const std::optional<te::Tensor>& bias, int axis, double epsilon);

}  // namespace tessel::ops
