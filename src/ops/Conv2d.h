/// 2-D convolution (cross-correlation, as in every framework) in NCHW with OIHW weights and in
/// NHWC with HWIO weights: stride, asymmetric padding, dilation and groups; and depthwise
/// convolution as its own op (one filter set per input channel, with a channel multiplier).
/// Int8 data and weights accumulate in `outDtype` (int32). The padded input is a separate stage
/// ("pad_temp" / "PaddedInput", tag "injective,pad"); the convolution's tag says what it is:
/// conv2d_nchw, conv2d_nhwc, group_conv2d_nchw, group_conv2d_nhwc, depthwise_conv2d_nchw,
/// depthwise_conv2d_nhwc. The default schedule (Schedules.h) keys on these tags.
#pragma once
#include <array>
#include <optional>

#include "ops/Layout.h"
#include "te/Tensor.h"

namespace tessel::ops {

struct Conv2dAttrs {
  std::array<int64_t, 2> strides{1, 1};         ///< height, width
  std::array<int64_t, 4> padding{0, 0, 0, 0};   ///< top, left, bottom, right
  std::array<int64_t, 2> dilation{1, 1};        ///< height, width
  int64_t groups = 1;                           ///< conv2d only; depthwise ignores it unless it contradicts
  Layout layout = Layout::NCHW;
  /// The accumulator and output dtype; unset: the data's dtype for floats, int32 for integers.
  std::optional<DataType> outDtype;
};

/// NCHW: data [N, C, H, W], weight [K, C / groups, KH, KW] -> [N, K, OH, OW].
/// NHWC: data [N, H, W, C], weight [KH, KW, C / groups, K] -> [N, OH, OW, K].
te::Tensor conv2d(const te::Tensor& data, const te::Tensor& weight, const Conv2dAttrs& attrs);

/// Depthwise: every input channel c convolved with its own M filters (channel multiplier M),
/// output channel c * M + m. NCHW: weight [C, M, KH, KW] (the memory of torch's [C * M, 1, KH,
/// KW]) -> [N, C * M, OH, OW]. NHWC: weight [KH, KW, C, M] -> [N, OH, OW, C * M].
te::Tensor depthwiseConv2d(const te::Tensor& data, const te::Tensor& weight, const Conv2dAttrs& attrs);

/// The output dtype conv2d and dense use for inputs of `input` dtype when none is given.
DataType defaultAccumulatorType(DataType input);

}  // namespace tessel::ops
