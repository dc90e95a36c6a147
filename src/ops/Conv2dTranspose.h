/// Transposed 2-D convolution (the gradient of conv2d with respect to its input, "deconvolution")
/// in NCHW with torch's weight layout [C_in, C_out / groups, KH, KW]. Computed as TVM does: the
/// input dilated by the stride and padded ("data_dilate_pad", tag "injective,pad"), then a
/// stride-1 convolution with the flipped kernel (tag "conv2d_transpose_nchw").
#pragma once
#include <array>
#include <optional>

#include "te/Tensor.h"

namespace tessel::ops {

struct Conv2dTransposeAttrs {
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 4> padding{0, 0, 0, 0};      ///< top, left, bottom, right (removed from the full output)
  std::array<int64_t, 2> outputPadding{0, 0};      ///< extra rows / columns at the bottom / right
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
  std::optional<DataType> outDtype;
};

/// data [N, C_in, H, W], weight [C_in, C_out / groups, KH, KW] -> [N, C_out, OH, OW] with
/// OH = (H - 1) * stride - top - bottom + dilation * (KH - 1) + output_padding + 1.
te::Tensor conv2dTranspose(const te::Tensor& data, const te::Tensor& weight, const Conv2dTransposeAttrs& attrs);

}  // namespace tessel::ops
