/// A fully connected layer in the blocked layouts of a GEMM accelerator (VTA's dense_packed):
/// data NC{b}n{c}c, i.e. [N / b, C / c, b, c], weight OI{o}o{i}i, i.e. [M / o, C / i, o, i],
/// output [N / b, M / o, b, o]. The innermost (b x i) · (i x o) block product is the
/// accelerator's GEMM instruction, as for conv2d_blocked (ops/Conv2dBlocked.h); TVM's
/// dense_packed compute (tvm@v0.18.0:vta/python/vta/top/vta_dense.py) sums the same products.
/// Block sizes come from the shapes; the data's channel block must equal the weight's input
/// block. Int8 operands accumulate in `outDtype` (int32 by default). Tag dense_blocked; output
/// axes bo, co, bi, ci; reduce axes ko, ki.
#pragma once
#include <optional>

#include "te/Tensor.h"

namespace tessel::ops {

te::Tensor denseBlocked(const te::Tensor& data, const te::Tensor& weight, std::optional<DataType> outDtype = std::nullopt);

}  // namespace tessel::ops
