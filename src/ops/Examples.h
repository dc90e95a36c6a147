/// Built-in example operators as compute DAGs, for `tessel lower`/`run-op`, tests and
/// benchmarks: matmul, conv2d (NCHW and NHWC, with padding and stride), depthwise conv2d,
/// max pooling, softmax, a fused conv2d + bias + relu, a transformer's projection and attention
/// products. Names follow TVM's topi, so the
/// printed DAGs read like the seeds' task listings.
#pragma once
#include <string>
#include <vector>

#include "te/ComputeDAG.h"

namespace tessel::ops {

te::ComputeDAG matmul(int64_t m, int64_t n, int64_t k, DataType dtype = DataType::float32());
/// data [n, c, h, w], weight [k, c, r, s] -> [n, k, oh, ow]
te::ComputeDAG conv2dNCHW(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s, int64_t stride,
                          int64_t pad);
/// data [n, h, w, c], weight [r, s, c, k] -> [n, oh, ow, k]
te::ComputeDAG conv2dNHWC(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s, int64_t stride,
                          int64_t pad);
/// data [n, c, h, w], weight [c, 1, r, s] -> [n, c, oh, ow]
te::ComputeDAG depthwiseConv2dNCHW(int64_t n, int64_t c, int64_t h, int64_t w, int64_t r, int64_t stride, int64_t pad);
te::ComputeDAG maxPool2dNCHW(int64_t n, int64_t c, int64_t h, int64_t w, int64_t kernel, int64_t stride, int64_t pad);
/// Softmax over the last axis of [rows, cols]: a max reduction, an exp-sum reduction, a division.
te::ComputeDAG softmax(int64_t rows, int64_t cols);
/// Winograd F(m x m, 3 x 3) conv2d in NHWC: data [n, h, w, c], transformed weight
/// [m + 2, m + 2, c, k] -> [n, oh, ow, k] (stride 1).
te::ComputeDAG conv2dWinogradNHWC(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t pad, int64_t m);
/// conv2d NCHW followed by a per-channel bias and relu, as one fused function.
te::ComputeDAG conv2dBiasReluNCHW(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s,
                                  int64_t stride, int64_t pad);
/// The same in NHWC with HWIO weights.
te::ComputeDAG conv2dBiasReluNHWC(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s,
                                  int64_t stride, int64_t pad);

/// A dense layer [n, k] x [m, k]^T plus a bias per output (a classifier's function).
te::ComputeDAG denseBias(int64_t n, int64_t k, int64_t m);
/// A transformer's projection: tokens [stack, rows, k] times a weight [k, n] broadcast over the
/// stack, plus a bias, and with `gelu` GELU's tanh form, as one fused function.
te::ComputeDAG projection(int64_t stack, int64_t rows, int64_t k, int64_t n, bool gelu = false);
/// Attention's products for `heads` heads: [1, heads, rows, k] x [1, heads, k, n].
te::ComputeDAG attentionProduct(int64_t heads, int64_t rows, int64_t k, int64_t n);

/// An example by name with integer parameters (as `tessel lower --op NAME --shape a,b,...`):
/// matmul M,N,K; conv2d_nchw / conv2d_nhwc / conv2d_bias_relu N,C,H,W,K,R,S,stride,pad;
/// conv2d_winograd_nhwc N,C,H,W,K,pad,m; depthwise_conv2d N,C,H,W,R,stride,pad; max_pool2d N,C,H,W,kernel,stride,pad; softmax rows,cols.
te::ComputeDAG exampleByName(const std::string& name, const std::vector<int64_t>& shape);
std::vector<std::string> exampleNames();

}  // namespace tessel::ops
