#include "ops/Examples.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/Dense.h"
#include "ops/Winograd.h"
#include "support/Error.h"

namespace tessel::ops {

using namespace te;
using ir::Expr;

namespace {

Tensor padNCHW(const Tensor& data, int64_t pad, const std::string& name) {
  auto& s = data.shape();
  if (pad == 0) return data;
  return compute(
      {s[0], s[1], s[2] + 2 * pad, s[3] + 2 * pad},
      [&](const std::vector<Var>& i) {
        Expr inside = (i[2] >= Expr(pad)) && (i[2] < Expr(s[2] + pad)) && (i[3] >= Expr(pad)) && (i[3] < Expr(s[3] + pad));
        return ir::ifThenElse(inside, data(i[0], i[1], i[2] - Expr(pad), i[3] - Expr(pad)), Expr(0.0f));
      },
      name, "injective,pad", {"i0", "i1", "i2", "i3"});
}

int64_t outSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad) {
  int64_t out = (in + 2 * pad - kernel) / stride + 1;
  TESSEL_CHECK(out > 0, "output size {} for input {}, kernel {}, stride {}, pad {}", out, in, kernel, stride, pad);
  return out;
}

Tensor conv2dNCHWTensor(const Tensor& data, const Tensor& weight, int64_t stride, int64_t pad) {
  auto& d = data.shape();
  auto& w = weight.shape();
  int64_t oh = outSize(d[2], w[2], stride, pad), ow = outSize(d[3], w[3], stride, pad);
  Tensor padded = padNCHW(data, pad, "pad_temp");
  auto rc = reduceAxis(d[1], "rc"), ry = reduceAxis(w[2], "ry"), rx = reduceAxis(w[3], "rx");
  return compute(
      {d[0], w[0], oh, ow},
      [&](const std::vector<Var>& i) {
        return te::sum(padded(i[0], rc.var, i[2] * Expr(stride) + ry.var, i[3] * Expr(stride) + rx.var) *
                           weight(i[1], rc.var, ry.var, rx.var),
                       {rc, ry, rx});
      },
      "conv2d_nchw", "conv2d_nchw", {"nn", "ff", "yy", "xx"});
}

Tensor conv2dNHWCTensor(const Tensor& data, const Tensor& weight, int64_t stride, int64_t pad) {
  int64_t n = data.shape()[0], h = data.shape()[1], w = data.shape()[2], c = data.shape()[3];
  int64_t r = weight.shape()[0], s = weight.shape()[1], k = weight.shape()[3];
  int64_t oh = outSize(h, r, stride, pad), ow = outSize(w, s, stride, pad);
  Tensor padded = compute(
      {n, h + 2 * pad, w + 2 * pad, c},
      [&](const std::vector<Var>& i) {
        Expr inside = (i[1] >= Expr(pad)) && (i[1] < Expr(h + pad)) && (i[2] >= Expr(pad)) && (i[2] < Expr(w + pad));
        return ir::ifThenElse(inside, data(i[0], i[1] - Expr(pad), i[2] - Expr(pad), i[3]), Expr(0.0f));
      },
      "PaddedInput", "injective,pad");
  auto ry = reduceAxis(r, "ry"), rx = reduceAxis(s, "rx"), rc = reduceAxis(c, "rc");
  return compute(
      {n, oh, ow, k},
      [&](const std::vector<Var>& i) {
        return te::sum(padded(i[0], i[1] * Expr(stride) + ry.var, i[2] * Expr(stride) + rx.var, rc.var) *
                           weight(ry.var, rx.var, rc.var, i[3]),
                       {ry, rx, rc});
      },
      "conv2d_nhwc", "conv2d_nhwc", {"nn", "yy", "xx", "ff"});
}

}  // namespace

ComputeDAG matmul(int64_t m, int64_t n, int64_t k, DataType dtype) {
  auto A = placeholder({m, k}, dtype, "A");
  auto B = placeholder({k, n}, dtype, "B");
  auto rk = reduceAxis(k, "k");
  auto C = compute({m, n}, [&](const std::vector<Var>& i) { return te::sum(A(i[0], rk.var) * B(rk.var, i[1]), {rk}); },
                   "C", "matmul", {"i", "j"});
  return ComputeDAG({C}, {A, B});
}

ComputeDAG conv2dNCHW(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s, int64_t stride, int64_t pad) {
  auto data = placeholder({n, c, h, w}, DataType::float32(), "data");
  auto weight = placeholder({k, c, r, s}, DataType::float32(), "weight");
  return ComputeDAG({conv2dNCHWTensor(data, weight, stride, pad)}, {data, weight});
}

ComputeDAG conv2dNHWC(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s, int64_t stride, int64_t pad) {
  auto data = placeholder({n, h, w, c}, DataType::float32(), "data");
  auto weight = placeholder({r, s, c, k}, DataType::float32(), "weight");
  return ComputeDAG({conv2dNHWCTensor(data, weight, stride, pad)}, {data, weight});
}

ComputeDAG conv2dWinogradNHWC(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t pad, int64_t m) {
  auto data = placeholder({n, h, w, c}, DataType::float32(), "data");
  auto weight = placeholder({m + 2, m + 2, c, k}, DataType::float32(), "weight");
  Conv2dAttrs attrs;
  attrs.layout = Layout::NHWC;
  attrs.padding = {pad, pad, pad, pad};
  return ComputeDAG({conv2dWinograd(data, weight, attrs, int(m))}, {data, weight});
}

ComputeDAG depthwiseConv2dNCHW(int64_t n, int64_t c, int64_t h, int64_t w, int64_t r, int64_t stride, int64_t pad) {
  auto data = placeholder({n, c, h, w}, DataType::float32(), "data");
  auto weight = placeholder({c, 1, r, r}, DataType::float32(), "weight");
  Tensor padded = padNCHW(data, pad, "PaddedInput");
  int64_t oh = outSize(h, r, stride, pad), ow = outSize(w, r, stride, pad);
  auto di = reduceAxis(r, "di"), dj = reduceAxis(r, "dj");
  auto out = compute(
      {n, c, oh, ow},
      [&](const std::vector<Var>& i) {
        return te::sum(padded(i[0], i[1], i[2] * Expr(stride) + di.var, i[3] * Expr(stride) + dj.var) *
                           weight(i[1], Expr(int64_t(0)), di.var, dj.var),
                       {di, dj});
      },
      "DepthwiseConv2d", "depthwise_conv2d_nchw", {"b", "c", "i", "j"});
  return ComputeDAG({out}, {data, weight});
}

ComputeDAG maxPool2dNCHW(int64_t n, int64_t c, int64_t h, int64_t w, int64_t kernel, int64_t stride, int64_t pad) {
  auto data = placeholder({n, c, h, w}, DataType::float32(), "data");
  Tensor padded = pad == 0 ? data : compute(
      {n, c, h + 2 * pad, w + 2 * pad},
      [&](const std::vector<Var>& i) {
        Expr inside = (i[2] >= Expr(pad)) && (i[2] < Expr(h + pad)) && (i[3] >= Expr(pad)) && (i[3] < Expr(w + pad));
        return ir::ifThenElse(inside, data(i[0], i[1], i[2] - Expr(pad), i[3] - Expr(pad)), Expr(-3.4028234663852886e38));
      },
      "pad_temp", "injective,pad");
  int64_t oh = outSize(h, kernel, stride, pad), ow = outSize(w, kernel, stride, pad);
  auto rv = reduceAxis(kernel, "rv0"), rw = reduceAxis(kernel, "rv1");
  auto out = compute(
      {n, c, oh, ow},
      [&](const std::vector<Var>& i) {
        return te::max(padded(i[0], i[1], i[2] * Expr(stride) + rv.var, i[3] * Expr(stride) + rw.var), {rv, rw});
      },
      "pool_max", "pool_max", {"ax0", "ax1", "ax2", "ax3"});
  return ComputeDAG({out}, {data});
}

ComputeDAG softmax(int64_t rows, int64_t cols) {
  auto x = placeholder({rows, cols}, DataType::float32(), "placeholder");
  auto k1 = reduceAxis(cols, "k");
  auto maxElem = compute({rows}, [&](const std::vector<Var>& i) { return te::max(x(i[0], k1.var), {k1}); }, "T_softmax_maxelem",
                         "softmax", {"i0"});
  auto expValue = compute({rows, cols}, [&](const std::vector<Var>& i) { return ir::call(ir::Intrinsic::Exp, {x(i[0], i[1]) - maxElem(i[0])}); },
                          "T_softmax_exp", "softmax", {"i0", "i1"});
  auto k2 = reduceAxis(cols, "k");
  auto expSum = compute({rows}, [&](const std::vector<Var>& i) { return te::sum(expValue(i[0], k2.var), {k2}); },
                        "T_softmax_expsum", "softmax", {"i0"});
  auto out = compute({rows, cols}, [&](const std::vector<Var>& i) { return expValue(i[0], i[1]) / expSum(i[0]); },
                     "T_softmax_norm", "softmax", {"i0", "i1"});
  return ComputeDAG({out}, {x});
}

ComputeDAG conv2dBiasReluNCHW(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s, int64_t stride,
                              int64_t pad) {
  auto data = placeholder({n, c, h, w}, DataType::float32(), "data");
  auto weight = placeholder({k, c, r, s}, DataType::float32(), "weight");
  auto bias = placeholder({1, k, 1, 1}, DataType::float32(), "bias");
  auto conv = conv2dNCHWTensor(data, weight, stride, pad);
  auto& cs = conv.shape();
  auto add = compute(cs, [&](const std::vector<Var>& i) { return conv(i[0], i[1], i[2], i[3]) + bias(Expr(int64_t(0)), i[1], Expr(int64_t(0)), Expr(int64_t(0))); },
                     "T_add", "elemwise", {"ax0", "ax1", "ax2", "ax3"});
  auto relu = compute(cs, [&](const std::vector<Var>& i) { return ir::max(add(i[0], i[1], i[2], i[3]), Expr(0.0f)); }, "T_relu",
                      "elemwise", {"ax0", "ax1", "ax2", "ax3"});
  return ComputeDAG({relu}, {data, weight, bias});
}

ComputeDAG conv2dBiasReluNHWC(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s, int64_t stride,
                              int64_t pad) {
  auto data = placeholder({n, h, w, c}, DataType::float32(), "data");
  auto weight = placeholder({r, s, c, k}, DataType::float32(), "weight");
  auto bias = placeholder({1, 1, 1, k}, DataType::float32(), "bias");
  auto conv = conv2dNHWCTensor(data, weight, stride, pad);
  auto& cs = conv.shape();
  Expr zero(int64_t(0));
  auto add = compute(cs, [&](const std::vector<Var>& i) { return conv(i[0], i[1], i[2], i[3]) + bias(zero, zero, zero, i[3]); },
                     "T_add", "elemwise", {"ax0", "ax1", "ax2", "ax3"});
  auto relu = compute(cs, [&](const std::vector<Var>& i) { return ir::max(add(i[0], i[1], i[2], i[3]), Expr(0.0f)); }, "T_relu",
                      "elemwise", {"ax0", "ax1", "ax2", "ax3"});
  return ComputeDAG({relu}, {data, weight, bias});
}

std::vector<std::string> exampleNames() {
  return {"matmul",           "conv2d_nchw", "conv2d_nhwc", "conv2d_winograd_nhwc", "conv2d_bias_relu",
          "depthwise_conv2d", "max_pool2d",  "softmax"};
}

ComputeDAG denseBias(int64_t n, int64_t k, int64_t m) {
  auto data = placeholder({n, k}, DataType::float32(), "data");
  auto weight = placeholder({m, k}, DataType::float32(), "weight");
  auto bias = placeholder({m}, DataType::float32(), "bias");
  auto product = dense(data, weight);
  auto add = compute(
      product.shape(), [&](const std::vector<Var>& i) { return product(i[0], i[1]) + bias(i[1]); }, "T_add", "elemwise",
      {"ax0", "ax1"});
  return ComputeDAG({add}, {data, weight, bias});
}

ComputeDAG projection(int64_t stack, int64_t rows, int64_t k, int64_t n, bool gelu) {
  auto data = placeholder({stack, rows, k}, DataType::float32(), "tokens");
  auto weight = placeholder({k, n}, DataType::float32(), "weight");
  auto bias = placeholder({n}, DataType::float32(), "bias");
  auto product = batchMatmul(data, weight);
  auto out = compute(
      product.shape(),
      [&](const std::vector<Var>& i) {
        Expr x = product(i[0], i[1], i[2]) + bias(i[2]);
        // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), as GPT-2 writes it.
        Expr inner = Expr(0.7978845608f) * (x + Expr(0.044715f) * x * x * x);
        return gelu ? Expr(0.5f) * x * (Expr(1.0f) + ir::call(ir::Intrinsic::Tanh, {inner})) : x;
      },
      gelu ? "T_gelu" : "T_add", "elemwise");
  return ComputeDAG({out}, {data, weight, bias});
}

ComputeDAG attentionProduct(int64_t heads, int64_t rows, int64_t k, int64_t n) {
  auto a = placeholder({1, heads, rows, k}, DataType::float32(), "q");
  auto b = placeholder({1, heads, k, n}, DataType::float32(), "kt");
  return ComputeDAG({batchMatmul(a, b)}, {a, b});
}

ComputeDAG exampleByName(const std::string& name, const std::vector<int64_t>& p) {
  auto need = [&](size_t count, const char* form) {
    TESSEL_CHECK(p.size() == count, "op '{}' takes --shape {} ({} numbers), got {} numbers", name, form, count, p.size());
  };
  if (name == "matmul") return need(3, "M,N,K"), matmul(p[0], p[1], p[2]);
  if (name == "conv2d_nchw") return need(9, "N,C,H,W,K,R,S,stride,pad"), conv2dNCHW(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8]);
  if (name == "conv2d_nhwc") return need(9, "N,C,H,W,K,R,S,stride,pad"), conv2dNHWC(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8]);
  if (name == "conv2d_winograd_nhwc") return need(7, "N,C,H,W,K,pad,m"), conv2dWinogradNHWC(p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
  if (name == "conv2d_bias_relu")
    return need(9, "N,C,H,W,K,R,S,stride,pad"), conv2dBiasReluNCHW(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8]);
  if (name == "depthwise_conv2d") return need(7, "N,C,H,W,R,stride,pad"), depthwiseConv2dNCHW(p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
  if (name == "max_pool2d") return need(7, "N,C,H,W,kernel,stride,pad"), maxPool2dNCHW(p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
  if (name == "softmax") return need(2, "rows,cols"), softmax(p[0], p[1]);
  fail("unknown op '{}' (available: {})", name, fmt::join(exampleNames(), ", "));
}

}  // namespace tessel::ops
