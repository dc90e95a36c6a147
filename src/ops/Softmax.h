/// Softmax along one axis (tag "softmax"), in the numerically safe form TVM uses: the maximum
/// along the axis (T_softmax_maxelem), exp(x - max) (T_softmax_exp), their sum
/// (T_softmax_expsum) and the quotient (T_softmax_norm). Float tensors only.
#pragma once
#include "te/Tensor.h"

namespace tessel::ops {

te::Tensor softmax(const te::Tensor& x, int axis = -1);

}  // namespace tessel::ops
