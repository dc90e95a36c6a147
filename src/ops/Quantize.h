/// The integer operators of int8 inference (tag "elemwise"): dtype casts and arithmetic shifts,
/// as quantized networks use them to requantize int32 accumulators: cast(int32), right_shift by
/// a constant, clip to the int8 range, cast(int8). Clip itself is in Elementwise.h; int8
/// convolution and dense accumulating in int32 are conv2d / dense with `outDtype` int32.
#pragma once
#include "te/Tensor.h"

namespace tessel::ops {

/// Converts every element to `dtype`; float to integer truncates toward zero, integer to a
/// narrower integer wraps around (as C and TVM do).
te::Tensor cast(const te::Tensor& x, DataType dtype);
/// Arithmetic shift right by a constant number of bits (rounding toward minus infinity, like
/// `>>` on signed integers); integer tensors only.
te::Tensor rightShift(const te::Tensor& x, int bits);
/// Shift left by a constant number of bits (wrapping around like `<<`); integer tensors only.
te::Tensor leftShift(const te::Tensor& x, int bits);

}  // namespace tessel::ops
