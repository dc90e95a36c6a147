/// 2-D convolution in the blocked layouts of a GEMM accelerator (VTA): data NCHW{b}n{c}c, i.e.
/// [N / b, C / c, H, W, b, c], weight OIHW{o}o{i}i, i.e. [K / o, C / i, KH, KW, o, i], output
/// [N / b, K / o, OH, OW, b, o]. The innermost (b x i) · (i x o) block product is the
/// accelerator's GEMM instruction; the graph's packing pass (graph/passes/GraphPack.cpp) makes
/// these layouts, TVM's graph_pack (tvm@v0.18.0:vta/python/vta/top/graphpack.py) does the same.
/// Block sizes come from the shapes; the data's channel block must equal the weight's input
/// block. One group, no dilation (the accelerator has neither). Int8 data and weights
/// accumulate in `outDtype` (int32). Tag conv2d_blocked.
#pragma once
#include "ops/Conv2d.h"
#include "te/Tensor.h"

namespace tessel::ops {

/// `attrs.layout` and `attrs.groups` are ignored beyond checks (one group).
te::Tensor conv2dBlocked(const te::Tensor& data, const te::Tensor& weight, const Conv2dAttrs& attrs);

}  // namespace tessel::ops
