/// 2-D pooling in NCHW or NHWC: max and average pooling over windows (stride, asymmetric
/// padding, dilation for max, torch's ceil mode, count_include_pad for average), adaptive
/// average pooling to a given output size (torch's AdaptiveAvgPool2d), and global average /
/// max pooling over the whole image. The padded input is its own stage ("pad_temp",
/// tag "injective,pad"). Max pooling is one reduction (tag "pool_max"); average pooling is a
/// sum ("pool_sum", tag "pool_avg") divided by the window's element count ("pool_avg").
#pragma once
#include <array>

#include "ops/Layout.h"
#include "te/Tensor.h"

namespace tessel::ops {

struct Pool2dAttrs {
  std::array<int64_t, 2> kernel{1, 1};          ///< height, width
  std::array<int64_t, 2> strides{1, 1};
  std::array<int64_t, 2> dilation{1, 1};        ///< max pooling only
  std::array<int64_t, 4> padding{0, 0, 0, 0};   ///< top, left, bottom, right
  bool ceilMode = false;          ///< output extent rounded up, as torch's ceil_mode
  bool countIncludePad = false;   ///< average: divide by the window size including padding (torch's default is true)
  Layout layout = Layout::NCHW;
};

te::Tensor maxPool2d(const te::Tensor& data, const Pool2dAttrs& attrs);
te::Tensor avgPool2d(const te::Tensor& data, const Pool2dAttrs& attrs);
/// torch's AdaptiveAvgPool2d: output element i of an axis averages the input rows
/// [floor(i * in / out), ceil((i + 1) * in / out)), so windows may overlap or differ in size
/// (and an output larger than the input replicates rows). `outputSize` is (height, width).
/// One reduction over the largest window ("adaptive_pool_sum", tag "adaptive_pool_avg"), the
/// rows past a shorter window masked out, then the division ("adaptive_pool_avg").
te::Tensor adaptiveAvgPool2d(const te::Tensor& data, std::array<int64_t, 2> outputSize, Layout layout);
/// [N, C, H, W] -> [N, C, 1, 1] (NCHW) or [N, H, W, C] -> [N, 1, 1, C] (NHWC). Integer data
/// (int8 inference's int32 activations) is summed and divided in its own type, the quotient
/// truncated toward zero as TVM's integer average pooling does.
te::Tensor globalAvgPool2d(const te::Tensor& data, Layout layout);
te::Tensor globalMaxPool2d(const te::Tensor& data, Layout layout);

}  // namespace tessel::ops
