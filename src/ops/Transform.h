/// Injective operators that move elements without arithmetic (tag "injective"): reshape,
/// flatten, transpose, concatenate, strided slice, and pad (tag "injective,pad", which the default schedule
/// keeps as its own stage instead of inlining it into a convolution or pooling).
#pragma once
#include <array>
#include <string>
#include <vector>

#include "te/Tensor.h"

namespace tessel::ops {

/// The same elements in row-major order under a new shape; one extent may be -1 (inferred).
te::Tensor reshape(const te::Tensor& x, const std::vector<int64_t>& newShape);
/// [d0, d1, ..., dn] -> [d0, d1 * ... * dn], as torch.flatten(x, 1) and relay's batch_flatten.
te::Tensor flatten(const te::Tensor& x);
/// out[i0, ..., in] = x[...] with out dimension k being x's dimension axes[k]; empty axes
/// reverse the dimensions (numpy).
te::Tensor transpose(const te::Tensor& x, std::vector<int> axes = {});
/// Joins tensors of one dtype and rank along `axis`; every other extent must match.
te::Tensor concatenate(const std::vector<te::Tensor>& inputs, int axis);
/// Slices of `data` along `axis` picked by run-time indices (ONNX's Gather, numpy's take, an
/// embedding lookup): out[a..., i..., b...] = data[a..., indices[i...], b...], the output's rank
/// data's - 1 + the indices'. Indices are int32 or int64, a negative one counted from the end;
/// one outside the axis is clamped to it (TVM's take mode "clip"): a kernel cannot stop, and
/// must not read outside the data.
te::Tensor take(const te::Tensor& data, const te::Tensor& indices, int axis);
/// x repeated `repeats[d]` times along each axis d (numpy's tile, ONNX's Tile).
te::Tensor tile(const te::Tensor& x, const std::vector<int64_t>& repeats);

/// Every dimension d read from begin[d] in steps of step[d] (negative steps read backwards),
/// shape[d] elements: ONNX's Slice once its bounds are resolved. Every index read must lie
/// inside x; an Error naming the dimension otherwise.
te::Tensor stridedSlice(const te::Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& step,
                        const std::vector<int64_t>& shape);

struct PadAttrs {
  std::vector<int64_t> before;  ///< elements added before each dimension (one per dimension)
  std::vector<int64_t> after;   ///< elements added after each dimension
  double value = 0;             ///< the value of the added elements (constant padding)
};
/// Constant padding (a copy even when every width is zero).
te::Tensor pad(const te::Tensor& x, const PadAttrs& attrs, const std::string& name = "T_pad");
/// Padding of the height and width axes of a 4-D image tensor (top, left, bottom, right), with
/// `value` as a constant of x's dtype; `x` itself when there is none. Used by conv2d and pooling.
te::Tensor padImage(const te::Tensor& x, int heightAxis, int widthAxis, const std::array<int64_t, 4>& padding, double value,
                    const std::string& name);

}  // namespace tessel::ops
