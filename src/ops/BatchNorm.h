/// Batch normalization for inference, one injective op (tag "broadcast"):
/// out = (x - mean) / sqrt(var + epsilon) * gamma + beta, with the four parameters 1-D along
/// `axis` (the channel axis). The graph's simplify-inference pass usually folds it into a
/// multiply and an add; this op is what the unsimplified graph and the reference run.
#pragma once
#include "te/Tensor.h"

namespace tessel::ops {

struct BatchNormAttrs {
  int axis = 1;            ///< the channel axis: 1 for NCHW, -1 (or 3) for NHWC
  double epsilon = 1e-5;
  bool center = true;      ///< add beta
  bool scale = true;       ///< multiply by gamma
};

te::Tensor batchNorm(const te::Tensor& data, const te::Tensor& gamma, const te::Tensor& beta, const te::Tensor& mean,
                     const te::Tensor& variance, const BatchNormAttrs& attrs = {});

}  // namespace tessel::ops
