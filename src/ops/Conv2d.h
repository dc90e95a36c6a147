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
#include <vector>

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

/// conv2d in NHWC with its weight packed by output-channel blocks: [K / block, KH, KW, C, block]
/// instead of HWIO, so that a register tile of `block` output channels reads its weights as
/// one contiguous stream (HWIO strides K floats between consecutive input channels: a deep
/// layer's tile touched a new cache line every load). One group; K a multiple of block.
/// Tag conv2d_nhwc_packed.
te::Tensor conv2dPacked(const te::Tensor& data, const te::Tensor& packedWeight, const Conv2dAttrs& attrs);

/// The packed weight [K / block, KH, KW, C, block] of an HWIO weight, as a tensor expression
/// (tag "injective": the interpreter's) and in C++ (constant folding of a network's weights).
te::Tensor packConvWeight(const te::Tensor& weight, int64_t block);
std::vector<float> packConvWeight(const std::vector<float>& hwio, const std::vector<int64_t>& shape, int64_t block);

/// The widest output image (columns) whose stride-1 1x1 convolutions pack their weights by 64.
inline constexpr int64_t kWideBlockMaxWidth = 14;

/// The block the default rules pack a conv2d's weights by (weight HWIO, output NHWC) on a machine
/// whose vectors hold `lanes` floats: the register tile's width, two vectors (32 with AVX-512's
/// 16 lanes), or one, or 0 (not packed) when neither divides the output channels. A stride-1 1x1
/// convolution on a small image (at most kWideBlockMaxWidth columns) takes four vectors where
/// they divide them: four vectors by seven pixels (28 of AVX-512's 32 registers) read each
/// weight vector for seven pixels where two by seven read it for the same seven with half the
/// tile, and a small image has few pixels to spread the weights over (measured on mobilenet's
/// layers, NHWC, 2 threads, AVX-512: 1024 to 1024 channels at 7x7 went from 0.69 to 0.60 ms, 512
/// to 1024 from 0.31 to 0.23, 512 to 512 at 14x14 from 0.61 to 0.52). Only with 32 or more
/// `vectorRegisters`: in 16 a four-vector tile has 3 rows, and two vectors by 7 rows won on AVX2
/// (Zen 3, untuned, paired: mobilenet 0.89x, mobilenet-v2 0.91x, resnet-50 0.96x the time).
int64_t defaultPackBlock(const std::vector<int64_t>& weightHwio, const std::vector<int64_t>& outputNhwc, int64_t stride,
                         int64_t lanes, int64_t vectorRegisters);

/// The output dtype conv2d and dense use for inputs of `input` dtype when none is given.
DataType defaultAccumulatorType(DataType input);

}  // namespace tessel::ops
