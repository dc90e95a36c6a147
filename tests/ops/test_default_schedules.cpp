// The default CPU schedule of every operator and of fused functions (a convolution or dense
// with its epilogue, pooling, softmax, injective chains), compiled through the real toolchain
// and compared with the reference evaluator: 1e-5 relative for floats, exact for integers; the
// loop-IR evaluator (tests/common/LoopIrEvaluator.h) must give the same on the same lowered IR.
// All kernels go into one library (one compiler run) to keep the test quick. The shapes are the
// awkward ones: 7x7 images, channel counts no vector width divides, stride 2, dilation, groups,
// asymmetric padding, broadcasting.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#include "codegen/CSource.h"
#include "codegen/Toolchain.h"
#include "common/KernelCheck.h"
#include "ops/BatchNorm.h"
#include "ops/Broadcast.h"
#include "ops/Conv2d.h"
#include "ops/Conv2dTranspose.h"
#include "ops/Dense.h"
#include "ops/Elementwise.h"
#include "ops/LayerNorm.h"
#include "ops/MatmulPacked.h"
#include "ops/Examples.h"
#include "ops/Pooling.h"
#include "ops/Quantize.h"
#include "ops/Reduce.h"
#include "ops/Resize.h"
#include "ops/Schedules.h"
#include "ops/Softmax.h"
#include "ops/Transform.h"
#include "ops/Winograd.h"
#include "passes/Lower.h"
#include "runtime/Module.h"
#include "support/Error.h"
#include "support/TempDir.h"

using namespace tessel;
using namespace tessel::ops;
using te::placeholder;
using te::Tensor;

namespace {

struct ScheduleCase {
  std::string name;
  te::ComputeDAG dag;
  bool strict = true;  ///< the rules must apply without falling back
  /// Winograd's transforms sum terms up to 100 times an input in another order than the
  /// reference's roundings: a few float32 ulps of those magnitudes.
  double tolerance = 1e-5;
};

Tensor in(std::vector<int64_t> shape, const std::string& name, DataType dtype = DataType::float32()) {
  return placeholder(std::move(shape), dtype, name);
}

Conv2dAttrs convAttrs(Layout layout, std::array<int64_t, 2> stride = {1, 1}, std::array<int64_t, 4> pad = {0, 0, 0, 0},
                      std::array<int64_t, 2> dilation = {1, 1}, int64_t groups = 1) {
  Conv2dAttrs a;
  a.layout = layout;
  a.strides = stride;
  a.padding = pad;
  a.dilation = dilation;
  a.groups = groups;
  return a;
}

std::vector<ScheduleCase> scheduleCases() {
  std::vector<ScheduleCase> cases;
  auto addCase = [&](std::string name, std::vector<Tensor> outs, std::vector<Tensor> ins, bool strict = true,
                     double tolerance = 1e-5) {
    cases.push_back({std::move(name), te::ComputeDAG(outs, ins), strict, tolerance});
  };
  using L = Layout;
  {  // conv NCHW + bias + relu, the classic fused function
    auto x = in({1, 3, 9, 11}, "data"), w = in({5, 3, 3, 3}, "weight"), b = in({5}, "bias");
    addCase("conv2d_nchw+bias+relu", {relu(biasAdd(conv2d(x, w, convAttrs(L::NCHW, {1, 1}, {1, 1, 1, 1})), b, 1))}, {x, w, b});
  }
  {  // grouped, strided, dilated, asymmetric padding
    auto x = in({2, 4, 10, 9}, "data"), w = in({6, 2, 3, 2}, "weight");
    addCase("group_conv2d_nchw s2 dil", {conv2d(x, w, convAttrs(L::NCHW, {2, 1}, {0, 2, 1, 0}, {1, 2}, 2))}, {x, w});
  }
  {  // NHWC with bias, residual add and relu: the ResNet block epilogue
    auto x = in({1, 7, 7, 16}, "data"), w = in({3, 3, 16, 32}, "weight"), b = in({1, 1, 1, 32}, "bias");
    auto r = in({1, 7, 7, 32}, "residual");
    addCase("conv2d_nhwc+bias+residual+relu", {relu(add(add(conv2d(x, w, convAttrs(L::NHWC, {1, 1}, {1, 1, 1, 1})), b), r))},
        {x, w, b, r});
  }
  {  // Packed weights: 1x1, and 3x3 stride 2 with the ResNet epilogue; blocks of 32 and 16
    auto x = in({1, 7, 7, 24}, "data"), w = in({2, 1, 1, 24, 32}, "weight");
    addCase("conv2d_packed 1x1 block 32", {conv2dPacked(x, w, convAttrs(L::NHWC))}, {x, w});
    auto y = in({2, 9, 8, 8}, "data"), v = in({3, 3, 3, 8, 16}, "weight"), b = in({1, 1, 1, 48}, "bias");
    addCase("conv2d_packed 3x3 s2 block 16 +bias+relu",
            {relu(add(conv2dPacked(y, v, convAttrs(L::NHWC, {2, 2}, {1, 0, 1, 2})), b))}, {y, v, b});
    // Block 64 (ops::defaultPackBlock on small images): 7 pixels x 4 vectors, and on 9 columns
    // a row tile with a tail.
    auto z = in({1, 7, 7, 24}, "data"), u = in({2, 1, 1, 24, 64}, "weight"), c = in({1, 1, 1, 128}, "bias");
    addCase("conv2d_packed 1x1 block 64 +bias+relu", {relu(add(conv2dPacked(z, u, convAttrs(L::NHWC)), c))}, {z, u, c});
    auto t = in({1, 5, 9, 16}, "data"), q = in({1, 1, 1, 16, 64}, "weight");
    addCase("conv2d_packed 1x1 block 64 9 columns", {conv2dPacked(t, q, convAttrs(L::NHWC))}, {t, q});
  }
  {  // A separable block in one function: depthwise + bias + relu6, then a 1x1 conv + bias +
     // relu (HWIO and packed); 15x13 images (no row tile divides 13), 24 channels (no vector
     // width divides), batch 2
    auto x = in({2, 15, 13, 24}, "data"), d = in({3, 3, 24, 1}, "depthwise"), db = in({1, 1, 1, 24}, "dbias");
    auto w = in({1, 1, 24, 40}, "weight"), b = in({1, 1, 1, 40}, "bias");
    auto mid = relu6(add(depthwiseConv2d(x, d, convAttrs(L::NHWC, {1, 1}, {1, 1, 1, 1})), db));
    addCase("depthwise+pointwise nhwc", {relu(add(conv2d(mid, w, convAttrs(L::NHWC)), b))}, {x, d, db, w, b});
    auto v = in({2, 1, 1, 24, 32}, "packed"), pb = in({1, 1, 1, 64}, "pbias");
    addCase("depthwise+pointwise packed", {add(conv2dPacked(mid, v, convAttrs(L::NHWC)), pb)}, {x, d, db, v, pb});
    auto v64 = in({1, 1, 1, 24, 64}, "packed");
    addCase("depthwise+pointwise packed block 64", {add(conv2dPacked(mid, v64, convAttrs(L::NHWC)), pb)}, {x, d, db, v64, pb});
  }
  // Winograd F(2x2) and F(4x4): partial tiles (7x7, 5x9), channel counts no vector width
  // divides, asymmetric padding, batch 2, the ResNet epilogue; the weight transform is part of
  // the function here (a network folds it into a constant).
  for (int m : {2, 4}) {
    auto x = in({2, 7, 7, 24}, "data"), w = in({3, 3, 24, 20}, "weight"), b = in({1, 1, 1, 20}, "bias");
    auto r = in({2, 7, 7, 20}, "residual");
    auto y = conv2dWinograd(x, winogradWeightTransform(w, m), convAttrs(L::NHWC, {1, 1}, {1, 1, 1, 1}), m);
    addCase(fmt::format("winograd F({0}x{0}) nhwc+bias+residual+relu", m), {relu(add(add(y, b), r))}, {x, w, b, r}, true,
            1e-4);
    auto z = in({1, 5, 9, 32}, "data"), v = in({m + 2, m + 2, 32, 16}, "weight");
    addCase(fmt::format("winograd F({0}x{0}) pad 0,2,1,0", m), {conv2dWinograd(z, v, convAttrs(L::NHWC, {1, 1}, {0, 2, 1, 0}), m)},
            {z, v}, true, 1e-4);
  }
  {  // 10 output channels (no vector width divides), stride 2, batch 2
    auto x = in({2, 9, 9, 3}, "data"), w = in({3, 3, 3, 10}, "weight");
    addCase("conv2d_nhwc k10 s2", {conv2d(x, w, convAttrs(L::NHWC, {2, 2}, {1, 1, 1, 1}))}, {x, w});
  }
  {  // row tiles that do not divide the rows (17 = 2 x 8 + 1, 13 channels): peeled tails
    auto x = in({1, 17, 17, 8}, "data"), w = in({3, 3, 8, 32}, "weight");
    addCase("conv2d_nhwc 17x17 row tail", {conv2d(x, w, convAttrs(L::NHWC, {1, 1}, {1, 1, 1, 1}))}, {x, w});
    auto y = in({1, 4, 6, 17}, "data"), v = in({13, 4, 3, 3}, "weight");
    addCase("conv2d_nchw 13 channels x 17 wide", {conv2d(y, v, convAttrs(L::NCHW, {1, 1}, {1, 1, 1, 1}))}, {y, v});
  }
  {  // two outputs: the convolution itself and its activation
    auto x = in({1, 6, 6, 8}, "data"), w = in({3, 3, 8, 16}, "weight");
    auto conv = conv2d(x, w, convAttrs(L::NHWC, {1, 1}, {1, 1, 1, 1}));
    addCase("conv2d_nhwc and relu both outputs", {conv, relu(conv)}, {x, w});
  }
  {
    auto x = in({1, 5, 5, 8}, "data"), w = in({1, 1, 8, 64}, "weight");
    addCase("conv2d_nhwc 1x1 k64", {conv2d(x, w, convAttrs(L::NHWC))}, {x, w});
  }
  {
    auto x = in({1, 9, 7, 8}, "data"), w = in({3, 3, 4, 6}, "weight");
    addCase("group_conv2d_nhwc", {conv2d(x, w, convAttrs(L::NHWC, {1, 2}, {1, 0, 1, 2}, {2, 1}, 2))}, {x, w});
  }
  {
    auto x = in({1, 8, 7, 7}, "data"), w = in({16, 8, 1, 1}, "weight");
    addCase("conv2d_nchw 1x1 7x7", {conv2d(x, w, convAttrs(L::NCHW))}, {x, w});
  }
  {
    auto x = in({1, 8, 12, 10}, "data"), w = in({8, 1, 3, 3}, "weight"), b = in({8}, "bias");
    addCase("depthwise_nchw s2+bias+relu6", {relu6(biasAdd(depthwiseConv2d(x, w, convAttrs(L::NCHW, {2, 2}, {1, 1, 1, 1})), b, 1))},
        {x, w, b});
  }
  {
    auto x = in({1, 11, 13, 12}, "data"), w = in({3, 3, 12, 2}, "weight"), b = in({24}, "bias");
    addCase("depthwise_nhwc multiplier 2+bias", {biasAdd(depthwiseConv2d(x, w, convAttrs(L::NHWC, {1, 1}, {1, 1, 1, 1})), b, 3)},
        {x, w, b});
  }
  {
    auto x = in({1, 7, 7, 32}, "data"), w = in({3, 3, 32, 1}, "weight");
    addCase("depthwise_nhwc s2 dil2", {depthwiseConv2d(x, w, convAttrs(L::NHWC, {2, 2}, {2, 2, 2, 2}, {2, 2}))}, {x, w});
  }
  {
    auto x = in({1, 4, 5, 5}, "data"), w = in({4, 6, 3, 3}, "weight"), b = in({6}, "bias");
    Conv2dTransposeAttrs t;
    t.strides = {2, 2};
    t.padding = {1, 1, 1, 1};
    t.outputPadding = {1, 1};
    addCase("conv2d_transpose+bias", {biasAdd(conv2dTranspose(x, w, t), b, 1)}, {x, w, b});
  }
  {
    auto x = in({3, 40}, "data"), w = in({37, 40}, "weight"), b = in({37}, "bias");
    addCase("dense k40+bias", {biasAdd(dense(x, w), b, 1)}, {x, w, b});
  }
  {
    auto x = in({2, 64}, "data"), w = in({10, 64}, "weight");
    addCase("dense k64", {dense(x, w)}, {x, w});
  }
  {  // an odd reduction: the dense rule does not apply, the fallback must still be right
    auto x = in({2, 15}, "data"), w = in({7, 15}, "weight");
    addCase("dense k15 (fallback)", {relu(dense(x, w))}, {x, w}, false);
  }
  {
    auto a = in({13, 21}, "A"), b = in({21, 40}, "B");
    addCase("matmul 13x21x40", {matmul(a, b)}, {a, b});
  }
  {  // int8 convolution and requantization: int32 accumulation, shift, clip, cast
    auto x = in({1, 4, 6, 6}, "data", DataType::int8()), w = in({8, 4, 3, 3}, "weight", DataType::int8());
    auto acc = conv2d(x, w, convAttrs(L::NCHW, {1, 1}, {1, 1, 1, 1}));
    addCase("int8 conv2d requantize", {cast(clip(rightShift(acc, 2), -127, 127), DataType::int8())}, {x, w});
  }
  {
    auto x = in({2, 32}, "data", DataType::int8()), w = in({20, 32}, "weight", DataType::int8());
    addCase("int8 dense", {dense(x, w)}, {x, w});
  }
  {
    auto x = in({1, 5, 6, 20}, "data");
    auto g = in({20}, "gamma"), b = in({20}, "beta"), m = in({20}, "mean"), v = in({20}, "var");
    BatchNormAttrs attrs;
    attrs.axis = 3;
    addCase("batch_norm nhwc+relu", {relu(batchNorm(x, g, b, m, v, attrs))}, {x, g, b, m, v});
  }
  {
    auto a = in({2, 3, 1, 5}, "a"), b = in({3, 4, 1}, "b"), c = in({5}, "c");
    auto one = in({1}, "one");
    addCase("broadcast arithmetic", {divide(multiply(subtract(add(a, b), c), a), add(b, one))}, {a, b, c, one});
  }
  {
    auto x = in({3, 37}, "x");
    addCase("activations", {add(multiply(sigmoid(tanh(x)), hardSwish(x)), leakyRelu(hardSigmoid(x), 0.1))}, {x});
  }
  {
    auto x = in({1, 3, 13, 11}, "data");
    Pool2dAttrs p;
    p.kernel = {3, 3};
    p.strides = {2, 2};
    p.padding = {1, 1, 1, 1};
    p.ceilMode = true;
    addCase("max_pool nchw ceil", {maxPool2d(x, p)}, {x});
    auto y = in({1, 9, 9, 20}, "data");
    p.layout = L::NHWC;
    p.ceilMode = false;
    p.padding = {0, 1, 1, 0};
    addCase("max_pool nhwc", {maxPool2d(y, p)}, {y});
    auto z = in({1, 2, 9, 8}, "data");
    Pool2dAttrs q;
    q.kernel = {3, 3};
    q.padding = {1, 1, 1, 1};
    addCase("avg_pool nchw exclude pad", {avgPool2d(z, q)}, {z});
    auto u = in({1, 8, 9, 18}, "data");
    q.kernel = {2, 2};
    q.strides = {2, 2};
    q.padding = {0, 0, 0, 0};
    q.ceilMode = true;
    q.countIncludePad = true;
    q.layout = L::NHWC;
    addCase("avg_pool nhwc ceil include pad", {avgPool2d(u, q)}, {u});
  }
  {
    auto x = in({2, 5, 7, 7}, "data");
    addCase("global_avg_pool nchw", {globalAvgPool2d(x, L::NCHW)}, {x});
    auto y = in({1, 3, 3, 40}, "data");
    addCase("global_avg_pool nhwc", {globalAvgPool2d(y, L::NHWC)}, {y});
    addCase("global_max_pool nhwc", {globalMaxPool2d(y, L::NHWC)}, {y});
    // Adaptive average pooling: unequal overlapping windows (masked), replication, identity.
    auto v = in({1, 5, 9, 16}, "data");
    addCase("adaptive_avg_pool nhwc 5x9 -> 3x4", {adaptiveAvgPool2d(v, {3, 4}, L::NHWC)}, {v});
    auto s = in({1, 16, 2, 3}, "data");
    addCase("adaptive_avg_pool nchw 2x3 -> 7x7", {adaptiveAvgPool2d(s, {7, 7}, L::NCHW)}, {s});
    auto e = in({1, 7, 7, 8}, "data");
    addCase("adaptive_avg_pool nhwc identity", {adaptiveAvgPool2d(e, {7, 7}, L::NHWC)}, {e});
  }
  {
    auto x = in({5, 37}, "data");
    addCase("softmax rows", {softmax(x)}, {x});
    auto y = in({2, 3, 4, 5}, "data");
    addCase("softmax axis 1", {softmax(y, 1)}, {y});
    // Rows of a multiple of 16 (and so of any machine's lanes): vectors of partial results.
    auto z = in({3, 64}, "data");
    addCase("softmax of 64-wide rows", {softmax(z)}, {z});
    auto v = in({48}, "data");
    addCase("softmax of a vector", {softmax(v)}, {v});
  }
  {
    // Reductions over any axes: a layer norm's mean of rows, axes around a kept one, everything.
    auto x = in({3, 7, 37}, "data");
    addCase("mean of the last axis, kept", {reduce(x, ReduceKind::Mean, {-1}, true)}, {x});
    addCase("sum over axes 0 and 2", {reduce(x, ReduceKind::Sum, {0, 2}, false)}, {x});
    addCase("max of every element", {reduce(x, ReduceKind::Max, {}, false)}, {x});
    addCase("min over the middle axis, kept", {reduce(x, ReduceKind::Min, {1}, true)}, {x});
    auto i = in({4, 9}, "data", DataType::int32());
    addCase("int32 sum of rows", {reduce(i, ReduceKind::Sum, {1}, false)}, {i});
  }
  {
    // Transformer layers: layer norm of token rows, attention's batched products, an embedding
    // lookup, GELU, and a mask chosen by a comparison.
    auto x = in({1, 6, 40}, "data"), g = in({40}, "gamma"), b = in({40}, "beta");
    // Its output is a sum (the bias added to a scaled normalized value): elements near zero carry
    // the float rounding of their terms, a relative 1e-5 of the largest output.
    addCase("layer_norm of rows", {layerNorm(x, g, b, -1, 1e-5)}, {x, g, b}, true, 1e-4);
    auto wide = in({2, 3, 48}, "data"), wg = in({48}, "gamma"), wb = in({48}, "beta");
    addCase("layer_norm of 48-wide rows", {layerNorm(wide, wg, wb, -1, 1e-5)}, {wide, wg, wb}, true, 1e-4);
    auto q = in({1, 3, 6, 8}, "q"), k = in({1, 3, 8, 6}, "k");
    addCase("batch_matmul of heads", {batchMatmul(q, k)}, {q, k});
    auto w = in({2, 1, 5, 4}, "w"), v = in({3, 4, 7}, "v");
    addCase("batch_matmul broadcast", {batchMatmul(w, v)}, {w, v});
    // A projection of token rows with its weight packed by 16 columns, bias and GELU after.
    auto tokens = in({2, 5, 24}, "tokens"), packed = in({3, 24, 16}, "packed"), bias = in({48}, "bias");
    addCase("matmul_packed+bias+gelu", {gelu(add(matmulPacked(tokens, packed), bias), false)}, {tokens, packed, bias});
    auto rows = in({7, 24}, "rows");
    addCase("matmul_packed of a matrix", {matmulPacked(rows, packed)}, {rows, packed});
    auto table = in({11, 16}, "table"), ids = in({1, 5}, "ids", DataType::int64());
    addCase("take rows", {take(table, ids, 0)}, {table, ids});
    addCase("gelu", {gelu(x, false)}, {x});
    addCase("where of a comparison", {where(less(x, g), x, add(x, b))}, {x, g, b});
  }
  {
    auto a = in({1, 4, 4, 3}, "a"), b = in({1, 4, 4, 16}, "b"), c = in({1, 4, 4, 5}, "c");
    addCase("concatenate channels", {concatenate({a, b, c}, 3)}, {a, b, c});
    auto x = in({2, 3, 4, 5}, "x");
    addCase("reshape", {reshape(x, {6, 20})}, {x});
    addCase("transpose NCHW->NHWC", {transpose(x, {0, 2, 3, 1})}, {x});
    auto f = in({2, 8, 2, 2}, "f");
    addCase("flatten", {flatten(f)}, {f});
    auto p = in({1, 3, 5, 5}, "p");
    PadAttrs widths;
    widths.before = {0, 0, 1, 2};
    widths.after = {0, 1, 0, 3};
    widths.value = -1;
    addCase("pad", {pad(p, widths)}, {p});
  }
  {
    auto x = in({1, 4, 5, 3}, "x");
    Resize2dAttrs r;
    r.outHeight = 8;
    r.outWidth = 10;
    r.layout = L::NHWC;
    r.coordinateMode = CoordinateMode::Asymmetric;
    r.nearestMode = NearestMode::Floor;
    addCase("resize nearest nhwc", {resize2d(x, r)}, {x});
    auto y = in({1, 2, 5, 4}, "y");
    Resize2dAttrs b;
    b.outHeight = 9;
    b.outWidth = 7;
    b.method = ResizeMethod::Bilinear;
    addCase("resize bilinear half_pixel", {resize2d(y, b)}, {y});
    b.coordinateMode = CoordinateMode::AlignCorners;
    addCase("resize bilinear align_corners", {resize2d(y, b)}, {y});
  }
  // The example DAGs keep working under the default schedule.
  cases.push_back({"example conv2d_bias_relu", ops::conv2dBiasReluNCHW(1, 3, 11, 13, 6, 3, 3, 2, 1)});
  cases.push_back({"example softmax", ops::softmax(7, 45)});
  cases.push_back({"example max_pool2d", ops::maxPool2dNCHW(1, 3, 13, 7, 3, 2, 1)});
  cases.push_back({"example matmul", ops::matmul(17, 23, 19)});
  return cases;
}

/// Random convolutions (either layout, depthwise or grouped, any stride, dilation and padding,
/// int8 sometimes), dense layers and pooling windows, each with a random epilogue: shapes no
/// one would pick by hand, to catch a rule that breaks on them.
std::vector<ScheduleCase> randomCases(uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  std::vector<ScheduleCase> cases;
  while (int(cases.size()) < count) {
    try {
      int kind = int(pick(0, 5));
      Layout layout = pick(0, 1) ? Layout::NHWC : Layout::NCHW;
      bool nchw = layout == Layout::NCHW;
      auto epilogue = [&](Tensor t, std::vector<Tensor>& ins, int channelAxis) {
        switch (pick(0, 3)) {
          case 0: return t;
          case 1: {
            auto b = in({t.shape()[size_t(channelAxis)]}, "bias", t.dtype());
            ins.push_back(b);
            return relu(biasAdd(t, b, channelAxis));
          }
          case 2: {
            auto r = in(t.shape(), "residual", t.dtype());
            ins.push_back(r);
            return add(t, r);
          }
          default: return t.dtype().isFloat() ? relu6(t) : clip(t, -50, 50);
        }
      };
      if (kind <= 2) {  // convolution: plain, grouped or depthwise
        int64_t n = pick(1, 2), h = pick(1, 13), w = pick(1, 13), kh = pick(1, 4), kw = pick(1, 3);
        int64_t groups = kind == 1 ? pick(2, 3) : 1;
        int64_t c = kind == 2 ? pick(1, 20) : groups * pick(1, 6), k = kind == 2 ? c * pick(1, 2) : groups * pick(1, 12);
        Conv2dAttrs a = convAttrs(layout, {pick(1, 3), pick(1, 2)}, {pick(0, 2), pick(0, 2), pick(0, 2), pick(0, 1)},
                                  {pick(1, 2), pick(1, 2)}, groups);
        DataType type = pick(0, 4) == 0 ? DataType::int8() : DataType::float32();
        auto x = in(nchw ? std::vector<int64_t>{n, c, h, w} : std::vector<int64_t>{n, h, w, c}, "data", type);
        Tensor weight, out;
        if (kind == 2) {
          int64_t m = k / c;
          weight = in(nchw ? std::vector<int64_t>{c, m, kh, kw} : std::vector<int64_t>{kh, kw, c, m}, "weight", type);
          out = depthwiseConv2d(x, weight, a);
        } else {
          weight = in(nchw ? std::vector<int64_t>{k, c / groups, kh, kw} : std::vector<int64_t>{kh, kw, c / groups, k}, "weight", type);
          out = conv2d(x, weight, a);
        }
        std::vector<Tensor> ins{x, weight};
        auto y = epilogue(out, ins, nchw ? 1 : 3);
        // Tiny shapes (one output column) may leave the tile rule nothing to vectorize: fallback allowed.
        cases.push_back({fmt::format("random conv {}", te::ComputeDAG({y}, ins).toString()), te::ComputeDAG({y}, ins), false});
      } else if (kind == 3) {  // dense
        int64_t n = pick(1, 5), k = pick(1, 70), m = pick(1, 40);
        auto x = in({n, k}, "data"), w = in({m, k}, "weight");
        std::vector<Tensor> ins{x, w};
        auto y = epilogue(dense(x, w), ins, 1);
        cases.push_back({fmt::format("random dense {}x{} -> {}", n, k, m), te::ComputeDAG({y}, ins), false});
      } else {  // pooling
        Pool2dAttrs p;
        p.kernel = {pick(1, 3), pick(1, 3)};
        p.strides = {pick(1, 2), pick(1, 3)};
        p.padding = {pick(0, p.kernel[0] - 1), pick(0, p.kernel[1] - 1), pick(0, p.kernel[0] - 1), pick(0, p.kernel[1] - 1)};
        p.ceilMode = pick(0, 1);
        p.countIncludePad = pick(0, 1);
        p.layout = layout;
        int64_t c = pick(1, 20), h = pick(3, 12), w = pick(3, 12);
        auto x = in(nchw ? std::vector<int64_t>{1, c, h, w} : std::vector<int64_t>{1, h, w, c}, "data");
        auto y = kind == 4 ? maxPool2d(x, p) : avgPool2d(x, p);
        cases.push_back({fmt::format("random pool {}", te::ComputeDAG({y}, {x}).toString()), te::ComputeDAG({y}, {x}), false});
      }
    } catch (const tessel::Error&) {
      // An invalid draw (a window larger than the padded input): draw again.
    }
  }
  return cases;
}

std::vector<schedule::StepPtr> scheduleOf(const ScheduleCase& c) {
  CpuScheduleOptions options;
  options.allowFallback = !c.strict;
  return defaultCpuSchedule(c.dag, options);
}

}  // namespace

TEST(DefaultSchedules, EveryCaseCompiledMatchesTheReference) {
  auto cases = scheduleCases();
  // TESSEL_OPS_RANDOM=count[,seed] runs more random cases (30 of seed 2026 by default).
  int count = 30;
  uint64_t seed = 2026;
  if (const char* env = std::getenv("TESSEL_OPS_RANDOM")) std::sscanf(env, "%d,%lu", &count, &seed);
  for (auto& c : randomCases(seed, count)) cases.push_back(c);
  std::vector<passes::LoweredFunction> functions;
  std::vector<std::vector<schedule::StepPtr>> steps;
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].name);
    ASSERT_NO_THROW(steps.push_back(scheduleOf(cases[i])));
    functions.push_back(passes::lower(schedule::replay(cases[i].dag, steps.back()), fmt::format("case{}", i)));
  }
  TempDir dir("tessel-ops-test");
  std::string library = dir.path() + "/ops.so";
  codegen::compileSharedLibrary(codegen::generateCSource(functions), library);
  auto module = runtime::Module::load(library);
  for (size_t i = 0; i < cases.size(); ++i) {
    auto data = kernelcheck::makeReferenceData(cases[i].dag, 100 + i);
    double error = kernelcheck::runAndCompare(module.kernel(fmt::format("case{}", i)), data);
    EXPECT_TRUE(kernelcheck::withinTolerance(error, data, cases[i].tolerance))
        << cases[i].name << ": error " << error << "\n" << schedule::printSteps(steps[i]);
    // The loop-IR evaluator on the same IR: what test_ansor_sketches relies on for every op.
    double evaluated = kernelcheck::evaluateAndCompare(functions[i], data);
    EXPECT_TRUE(kernelcheck::withinTolerance(evaluated, data, cases[i].tolerance))
        << cases[i].name << ": evaluated error " << evaluated << "\n" << schedule::printSteps(steps[i]);
  }
}

namespace {

/// The machine a test's expected tiles are written for: AVX-512 (16 float lanes, 32 registers).
const target::CpuMachine& avx512() {
  static const target::CpuMachine machine = target::Target::parse("cpu -mcpu=skylake-avx512").cpu;
  return machine;
}

CpuScheduleOptions optionsFor(const target::CpuMachine& machine) {
  CpuScheduleOptions options;
  options.machine = machine;
  options.allowFallback = false;
  return options;
}

std::string sourceOf(const te::ComputeDAG& dag, const target::CpuMachine& machine = avx512()) {
  CpuScheduleOptions strict = optionsFor(machine);
  return codegen::generateCSource({passes::lower(schedule::replay(dag, defaultCpuSchedule(dag, strict)), "k")});
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t occurrences(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

/// A parallel loop in generated code calls the prelude's tessel_parallel_for with its body as
/// a lambda of the iteration; this is how the call's lambda starts.
const std::string kParallelBody = ", [&](int64_t ";

size_t parallelLoops(const std::string& source) { return occurrences(source, kParallelBody); }

}  // namespace

TEST(DefaultSchedules, ConvolutionGetsAParallelVectorRegisterTile) {
  auto x = in({1, 14, 14, 32}, "data"), w = in({3, 3, 32, 64}, "weight"), b = in({64}, "bias");
  auto out = relu(biasAdd(conv2d(x, w, convAttrs(Layout::NHWC, {1, 1}, {1, 1, 1, 1})), b, 3));
  te::ComputeDAG dag({out}, {x, w, b});
  std::string steps = schedule::printSteps(defaultCpuSchedule(dag, optionsFor(avx512())));
  // The epilogue is the written stage; the convolution accumulates at its tile.
  EXPECT_TRUE(contains(steps, "T_add.compute_inline()")) << steps;
  EXPECT_TRUE(contains(steps, "conv2d_nhwc.compute_at(T_relu")) << steps;
  EXPECT_TRUE(contains(steps, "T_relu.parallel(")) << steps;
  EXPECT_FALSE(contains(steps, "cache_write")) << steps;
  std::string source = sourceOf(dag);
  EXPECT_EQ(parallelLoops(source), 1u) << source;
  EXPECT_TRUE(contains(source, "tessel_floatx16 conv2d_nhwc_r0;")) << source;  // accumulators in registers
  EXPECT_TRUE(contains(source, "tessel_floatx16 conv2d_nhwc_r13;")) << source;  // 7 x 2 of them
}

TEST(DefaultSchedules, EpilogueReadingTheBatchAsIndexZeroIsFused) {
  // The graph's folded batch norm adds a [1, 1, 1, C] tensor; at batch 1 the broadcast reads the
  // convolution at [0, h, w, c]. The epilogue must still be the written stage: else the whole
  // output makes a round trip through memory in a second parallel loop.
  auto x = in({1, 14, 14, 32}, "data"), w = in({1, 1, 32, 64}, "weight"), b = in({1, 1, 1, 64}, "bias");
  auto out = relu(add(conv2d(x, w, convAttrs(Layout::NHWC)), b));
  te::ComputeDAG dag({out}, {x, w, b});
  std::string steps = schedule::printSteps(defaultCpuSchedule(dag));
  EXPECT_TRUE(contains(steps, "conv2d_nhwc.compute_at(T_relu")) << steps;
  EXPECT_FALSE(contains(steps, "cache_write")) << steps;
  std::string source = sourceOf(dag);
  EXPECT_EQ(parallelLoops(source), 1u) << source;
}

TEST(DefaultSchedules, AFusedDepthwiseConvolutionIsComputedPerTileOfThePointwise) {
  auto x = in({1, 14, 14, 32}, "data"), d = in({3, 3, 32, 1}, "depthwise"), db = in({1, 1, 1, 32}, "dbias");
  auto w = in({1, 1, 32, 64}, "weight"), b = in({1, 1, 1, 64}, "bias");
  auto mid = relu(add(depthwiseConv2d(x, d, convAttrs(Layout::NHWC, {1, 1}, {1, 1, 1, 1})), db));
  te::ComputeDAG dag({relu(add(conv2d(mid, w, convAttrs(Layout::NHWC)), b))}, {x, d, db, w, b});
  std::string steps = schedule::printSteps(defaultCpuSchedule(dag));
  // The depthwise output's last stage is kept (not recomputed per block of output channels),
  // computed inside the pointwise loops, the depthwise accumulation inside it.
  EXPECT_TRUE(contains(steps, "T_relu.compute_at(T_relu_1, ")) << steps;
  EXPECT_TRUE(contains(steps, "DepthwiseConv2d.compute_at(T_relu, ")) << steps;
  EXPECT_FALSE(contains(steps, "T_relu.compute_inline()")) << steps;
  std::string source = sourceOf(dag);
  EXPECT_EQ(parallelLoops(source), 1u) << source;
}

TEST(DefaultSchedules, WeightsOuterKeepsTheImageRowsSplitAmongTheThreads) {
  // Output-channel blocks outermost (weights larger than the data): each of 2 threads still
  // computes whole rows of the image (one chunk of 4 rows), the channel blocks inside it,
  // because the next layer splits its input by rows.
  auto x = in({1, 8, 8, 64}, "data"), w = in({3, 3, 64, 256}, "weight"), b = in({1, 1, 1, 256}, "bias");
  te::ComputeDAG dag({relu(add(conv2d(x, w, convAttrs(Layout::NHWC, {1, 1}, {1, 1, 1, 1})), b))}, {x, w, b});
  CpuScheduleOptions options;
  options.allowFallback = false;
  options.machine.cores = 2;
  ASSERT_EQ(defaultAnchorTile(dag, options)->weightsOuter, 1);
  std::string source = codegen::generateCSource({passes::lower(schedule::replay(dag, defaultCpuSchedule(dag, options)), "k")});
  size_t loop = source.rfind("tessel_parallel_for(");  // the convolution's (the last one)
  ASSERT_NE(loop, std::string::npos) << source;
  std::string header = source.substr(loop, source.find('{', loop) - loop);
  EXPECT_TRUE(contains(header, "tessel_parallel_for(2LL,")) << header;  // one chunk per thread
}

TEST(DefaultSchedules, SmallImagePointwiseConvolutionsTakeBlocksOf64AndSevenRowTiles) {
  // ops::defaultPackBlock: 64 for a stride-1 1x1 convolution on at most 14 columns; 32 (or 16)
  // for the rest, a 3x3 kernel, a stride of 2, a wider image or channels 64 does not divide.
  // On AVX-512 (16 lanes):
  EXPECT_EQ(defaultPackBlock({1, 1, 512, 1024}, {1, 7, 7, 1024}, 1, 16, 32), 64);
  EXPECT_EQ(defaultPackBlock({1, 1, 512, 512}, {1, 14, 14, 512}, 1, 16, 32), 64);
  EXPECT_EQ(defaultPackBlock({1, 1, 256, 512}, {1, 28, 28, 512}, 1, 16, 32), 32);
  EXPECT_EQ(defaultPackBlock({1, 1, 256, 512}, {1, 7, 7, 512}, 2, 16, 32), 32);
  EXPECT_EQ(defaultPackBlock({3, 3, 512, 512}, {1, 7, 7, 512}, 1, 16, 32), 32);
  EXPECT_EQ(defaultPackBlock({1, 1, 576, 96}, {1, 7, 7, 96}, 1, 16, 32), 32);
  EXPECT_EQ(defaultPackBlock({1, 1, 24, 48}, {1, 7, 7, 48}, 1, 16, 32), 16);
  EXPECT_EQ(defaultPackBlock({1, 1, 24, 40}, {1, 7, 7, 40}, 1, 16, 32), 0);
  // The blocks are vectors of the machine: on AVX2 (8 lanes) 16 and 8, never four vectors in its
  // 16 registers (a tile of 3 rows); NEON (4 lanes, 32 registers) 16, 8, 4; SSE (4, 16) 8.
  EXPECT_EQ(defaultPackBlock({1, 1, 512, 1024}, {1, 7, 7, 1024}, 1, 8, 16), 16);
  EXPECT_EQ(defaultPackBlock({1, 1, 512, 1024}, {1, 7, 7, 1024}, 1, 4, 16), 8);
  EXPECT_EQ(defaultPackBlock({3, 3, 512, 512}, {1, 7, 7, 512}, 1, 8, 16), 16);
  EXPECT_EQ(defaultPackBlock({1, 1, 24, 40}, {1, 7, 7, 40}, 1, 8, 16), 8);
  EXPECT_EQ(defaultPackBlock({1, 1, 512, 512}, {1, 14, 14, 512}, 1, 4, 32), 16);
  EXPECT_EQ(defaultPackBlock({1, 1, 24, 12}, {1, 7, 7, 12}, 1, 4, 32), 4);
  // Its tile: 4 vectors of 16 lanes by 7 pixels, 28 accumulators beside the 4 weight vectors.
  auto x = in({1, 7, 7, 64}, "data"), w = in({4, 1, 1, 64, 64}, "weight");
  te::ComputeDAG dag({conv2dPacked(x, w, convAttrs(Layout::NHWC))}, {x, w});
  CpuScheduleOptions options = optionsFor(avx512());
  auto tile = defaultAnchorTile(dag, options);
  ASSERT_TRUE(tile.has_value());
  EXPECT_EQ(tile->lanes, 16);
  EXPECT_EQ(tile->vectors, 4);
  EXPECT_EQ(tile->rows, 7);
}

TEST(DefaultSchedules, PackedMatmulsAndBatchMatmulsGetARegisterTile) {
  // BERT's projections: 128 token rows, a weight packed by 32 columns. The tile is one block
  // (two vectors of 16 lanes) by 8 rows, the block's weights one stream.
  auto x = in({1, 128, 64}, "tokens"), w = in({4, 64, 32}, "weight");
  te::ComputeDAG dag({matmulPacked(x, w)}, {x, w});
  auto tile = defaultAnchorTile(dag, optionsFor(avx512()));
  ASSERT_TRUE(tile.has_value());
  EXPECT_EQ(tile->lanes, 16);
  EXPECT_EQ(tile->vectors, 2);
  EXPECT_EQ(tile->rows, 8);
  std::string source = sourceOf(dag);
  EXPECT_TRUE(contains(source, "tessel_floatx16 T_matmul_packed_local_r15;")) << source;  // 8 x 2 accumulators
  EXPECT_EQ(parallelLoops(source), 1u) << source;
  // Attention's products of heads: a tile along the last two axes, the heads parallel.
  auto q = in({1, 12, 128, 64}, "q"), k = in({1, 12, 64, 128}, "k");
  te::ComputeDAG heads({batchMatmul(q, k)}, {q, k});
  auto headTile = defaultAnchorTile(heads, optionsFor(avx512()));
  ASSERT_TRUE(headTile.has_value());
  EXPECT_EQ(headTile->lanes * headTile->vectors, 32);
  EXPECT_EQ(headTile->rows, 8);
  // The weight is packed by the block that ops::defaultPackBlock gives a 1x1 convolution over
  // as many pixels as the product has rows.
  EXPECT_EQ(defaultMatmulPackBlock(768, 3072, 128, 16, 32), 32);
  EXPECT_EQ(defaultMatmulPackBlock(768, 3072, 8, 16, 32), 64);
  EXPECT_EQ(defaultMatmulPackBlock(768, 1000, 128, 16, 32), 0);
  EXPECT_EQ(defaultMatmulPackBlock(768, 3072, 128, 8, 16), 16);
}

TEST(DefaultSchedules, NhwcConvolutionsReadTheirPaddingInlineAndSkipItsTaps) {
  // NHWC: no padded copy; lowering turns the border tests into guarded kernel rows, so the
  // code has no select left. NCHW (lanes along the width) keeps its padded copy.
  auto x = in({1, 7, 7, 32}, "data"), w = in({3, 3, 32, 64}, "weight");
  te::ComputeDAG nhwc({conv2d(x, w, convAttrs(Layout::NHWC, {1, 1}, {1, 1, 1, 1}))}, {x, w});
  CpuScheduleOptions options;
  options.allowFallback = false;
  std::string steps = schedule::printSteps(defaultCpuSchedule(nhwc, options));
  EXPECT_TRUE(contains(steps, "pad_temp.compute_inline()")) << steps;
  EXPECT_EQ(defaultAnchorTile(nhwc, options)->inlinePadding, 1);
  std::string source = sourceOf(nhwc);
  std::string kernel = source.substr(source.find(kParallelBody));
  EXPECT_FALSE(contains(kernel, " ? ")) << kernel;  // the header's helpers have selects of their own
  auto y = in({1, 32, 7, 7}, "data"), v = in({64, 32, 3, 3}, "weight");
  te::ComputeDAG nchw({conv2d(y, v, convAttrs(Layout::NCHW, {1, 1}, {1, 1, 1, 1}))}, {y, v});
  EXPECT_FALSE(contains(schedule::printSteps(defaultCpuSchedule(nchw, options)), "pad_temp.compute_inline()"));
}

TEST(DefaultSchedules, TheTargetsCoresDecideTheRowPartition) {
  // A remote device's cores (`-num-cores`), not this machine's: 4 chunks of 2 rows.
  auto x = in({1, 8, 8, 64}, "data"), w = in({3, 3, 64, 256}, "weight");
  te::ComputeDAG dag({conv2d(x, w, convAttrs(Layout::NHWC, {1, 1}, {1, 1, 1, 1}))}, {x, w});
  CpuScheduleOptions options = cpuScheduleOptionsFor(target::Target::parse("cpu -num-cores=4"));
  EXPECT_EQ(options.machine.cores, 4);
  EXPECT_EQ(cpuScheduleOptionsFor(target::Target::parse("cpu -mcpu=native")).machine.cores, target::hostCpu().cores);
  options.allowFallback = false;
  schedule::State state;
  defaultCpuSchedule(dag, options, &state);
  EXPECT_TRUE(contains(state.toString(), "parallel nn@yy.0 (0,4)")) << state.toString();
}

TEST(DefaultSchedules, AFallbackSaysWhichScheduleAndWhy) {
  // One output channel: the register tile has no vector axis to run along.
  auto x = in({1, 6, 6, 8}, "data"), w = in({3, 3, 8, 1}, "weight");
  te::ComputeDAG narrow({conv2d(x, w, convAttrs(Layout::NHWC, {1, 1}, {1, 1, 1, 1}))}, {x, w});
  std::string fallback = "stale";
  auto steps = defaultCpuSchedule(narrow, {}, nullptr, &fallback);
  EXPECT_TRUE(contains(fallback, "without the register tile rule (")) << fallback;
  EXPECT_TRUE(contains(fallback, "1 elements along its vector axis")) << fallback;
  EXPECT_NO_THROW(passes::lower(schedule::replay(narrow, steps), "k"));
  // The rules applied: nothing to say.
  auto y = in({1, 6, 6, 8}, "data"), v = in({3, 3, 8, 32}, "weight");
  defaultCpuSchedule(te::ComputeDAG({conv2d(y, v, convAttrs(Layout::NHWC, {1, 1}, {1, 1, 1, 1}))}, {y, v}), {}, nullptr, &fallback);
  EXPECT_EQ(fallback, "");
}

TEST(DefaultSchedules, AnchorWithoutEpilogueUsesCacheWrite) {
  auto x = in({1, 16, 24, 24}, "data"), w = in({16, 16, 3, 3}, "weight");
  te::ComputeDAG dag({conv2d(x, w, convAttrs(Layout::NCHW, {1, 1}, {1, 1, 1, 1}))}, {x, w});
  std::string steps = schedule::printSteps(defaultCpuSchedule(dag));
  EXPECT_TRUE(contains(steps, "conv2d_nchw.cache_write(\"local\")")) << steps;
  EXPECT_TRUE(contains(steps, "conv2d_nchw.local.compute_at(conv2d_nchw")) << steps;
  EXPECT_TRUE(contains(steps, "pad_temp.parallel(")) << steps;  // padding at the root, parallel
  EXPECT_TRUE(contains(sourceOf(dag), "tessel_floatx8 conv2d_nchw_local_r0;")) << sourceOf(dag);  // 3 x 8 lanes per row
}

TEST(DefaultSchedules, DenseVectorizesTheReduction) {
  auto x = in({1, 256}, "data"), w = in({100, 256}, "weight"), b = in({100}, "bias");
  te::ComputeDAG dag({biasAdd(dense(x, w), b, 1)}, {x, w, b});
  std::string source = sourceOf(dag);
  EXPECT_TRUE(contains(source, "tessel_floatx16 T_matmul_NT_rf_r3;")) << source;  // 4 vector accumulators
}

TEST(DefaultSchedules, SoftmaxAndPoolingReductionsComputedInsideTheOutput) {
  auto x = in({4, 100}, "data");
  std::string steps = schedule::printSteps(defaultCpuSchedule(te::ComputeDAG({softmax(x)}, {x})));
  EXPECT_TRUE(contains(steps, "T_softmax_expsum.compute_at(T_softmax_norm, i0)")) << steps;
  // The exps once per row (rule 1b), the max they alone read inside that row.
  EXPECT_TRUE(contains(steps, "T_softmax_exp.compute_at(T_softmax_norm, i0)")) << steps;
  EXPECT_TRUE(contains(steps, "T_softmax_maxelem.compute_at(T_softmax_exp, i0)")) << steps;
  EXPECT_TRUE(contains(steps, "T_softmax_norm.vectorize(")) << steps;
  auto y = in({1, 9, 9, 32}, "data");
  Pool2dAttrs p;
  p.kernel = {3, 3};
  p.padding = {1, 1, 1, 1};
  p.layout = Layout::NHWC;
  steps = schedule::printSteps(defaultCpuSchedule(te::ComputeDAG({avgPool2d(y, p)}, {y})));
  EXPECT_TRUE(contains(steps, "pad_temp.compute_inline()")) << steps;
  EXPECT_TRUE(contains(steps, "pool_sum.compute_at(pool_avg")) << steps;
  EXPECT_TRUE(contains(steps, "pool_sum.vectorize(ax3)")) << steps;
}

TEST(DefaultSchedules, RowReductionsAccumulateVectorsOfPartialResults) {
  // Softmax of attention scores: its max and its sum of exps each keep one vector of partial
  // results per row, so that the loads and the exps are whole vectors.
  auto x = in({4, 128}, "scores");
  te::ComputeDAG dag({softmax(x)}, {x});
  std::string steps = schedule::printSteps(defaultCpuSchedule(dag, optionsFor(avx512())));
  EXPECT_TRUE(contains(steps, "T_softmax_maxelem.rfactor(k.1)")) << steps;
  EXPECT_TRUE(contains(steps, "T_softmax_expsum.rfactor(k.1)")) << steps;
  EXPECT_TRUE(contains(steps, "T_softmax_expsum.rf.compute_at(T_softmax_expsum, i0)")) << steps;
  EXPECT_TRUE(contains(steps, "T_softmax_expsum.rf.vectorize(k.1)")) << steps;
  // Its exps: computed once per row, vectorized, then read by the sum and by the output.
  EXPECT_TRUE(contains(steps, "T_softmax_exp.compute_at(T_softmax_norm, i0)")) << steps;
  std::string source = sourceOf(dag);
  EXPECT_EQ(occurrences(source, "tessel_vexp<tessel_floatx16, tessel_int32x16>("), 1u) << source;
  EXPECT_FALSE(contains(source, "__builtin_expf")) << source;
  // A row of 197 (ViT's tokens): the exps still once per row, 12 vectors and a tail of 5.
  auto tokens = in({3, 197}, "scores");
  steps = schedule::printSteps(defaultCpuSchedule(te::ComputeDAG({softmax(tokens)}, {tokens}), optionsFor(avx512())));
  EXPECT_TRUE(contains(steps, "T_softmax_exp.compute_at(T_softmax_norm, i0)")) << steps;
  EXPECT_TRUE(contains(steps, "T_softmax_exp.vectorize(")) << steps;
  // Layer norm's mean and variance alike; a row of 40 (not a multiple of 16 lanes) stays scalar.
  auto t = in({1, 8, 64}, "tokens"), g = in({64}, "gamma"), b = in({64}, "beta");
  steps = schedule::printSteps(defaultCpuSchedule(te::ComputeDAG({layerNorm(t, g, b, -1, 1e-5)}, {t, g, b}), optionsFor(avx512())));
  EXPECT_TRUE(contains(steps, "T_layer_norm_sum.rfactor(")) << steps;
  EXPECT_TRUE(contains(steps, "T_layer_norm_squares.rfactor(")) << steps;
  auto odd = in({1, 8, 40}, "tokens"), og = in({40}, "gamma"), ob = in({40}, "beta");
  steps = schedule::printSteps(defaultCpuSchedule(te::ComputeDAG({layerNorm(odd, og, ob, -1, 1e-5)}, {odd, og, ob}), optionsFor(avx512())));
  EXPECT_FALSE(contains(steps, "rfactor")) << steps;
}

// Regression: a stage attached inside a fused loop computed the whole tensor, because bound
// inference split the fused loop's floordiv into two bounds and floormod of those widened to
// the full modulus.
TEST(DefaultSchedules, TileAttachedUnderAFusedLoopComputesOnlyTheTile) {
  auto x = in({2, 8, 8, 16}, "data"), w = in({3, 3, 16, 32}, "weight");
  auto out = relu(conv2d(x, w, convAttrs(Layout::NHWC, {1, 1}, {1, 1, 1, 1})));
  te::ComputeDAG dag({out}, {x, w});
  auto state = schedule::replay(dag, defaultCpuSchedule(dag, optionsFor(avx512())));
  const auto& conv = state.stage("conv2d_nhwc");
  ASSERT_EQ(conv.attach, schedule::AttachKind::At);
  std::vector<int64_t> extents;
  for (int r = 0; r < 4; ++r) extents.push_back(conv.iterator(r).extent);
  EXPECT_EQ(extents, (std::vector<int64_t>{1, 1, 8, 32}));
}

// With 16 registers (AVX2) the tile takes every register but its weight vectors and the one that
// holds the broadcast input (AVX2's FMA cannot broadcast from memory), 6 x 2. It takes an exact
// tile down to three quarters of that (20 columns: 5 rows), else the fewest tiles made even (56:
// 6 rows with a tail, 14: 5, 7: 4, never a tail of one row). Under a Zen tuning one weight load
// folds into its FMA and the broadcast needs no register of its own: 7 x 2 (20 columns: 7 + 7 +
// 6). With 32 (AVX-512) an exact tile down to half the limit: 56 columns take 8 rows of 2 vectors.
TEST(DefaultSchedules, AnAvx2RegisterTileLeavesARegisterForTheBroadcast) {
  struct Case {
    const char* target;
    int64_t columns, rows, vectors;
  };
  for (const Case& c : {Case{"cpu -mcpu=haswell", 56, 6, 2}, Case{"cpu -mcpu=haswell", 28, 6, 2}, Case{"cpu -mcpu=haswell", 20, 5, 2},
                        Case{"cpu -mcpu=haswell", 14, 5, 2}, Case{"cpu -mcpu=haswell", 12, 6, 2}, Case{"cpu -mcpu=haswell", 7, 4, 2},
                        Case{"cpu -mcpu=znver3", 56, 7, 2}, Case{"cpu -mcpu=znver3", 20, 7, 2}, Case{"cpu -mcpu=znver3", 7, 7, 2},
                        Case{"cpu -mcpu=znver2", 28, 7, 2}, Case{"cpu -mcpu=skylake-avx512", 56, 8, 2}}) {
    auto x = in({1, 8, c.columns, 64}, "data"), w = in({1, 1, 64, 64}, "weight");
    te::ComputeDAG dag({conv2d(x, w, convAttrs(Layout::NHWC))}, {x, w});
    auto tile = defaultAnchorTile(dag, optionsFor(target::Target::parse(c.target).cpu));
    ASSERT_TRUE(tile.has_value()) << c.target;
    EXPECT_EQ(tile->rows, c.rows) << c.target << ", " << c.columns << " columns";
    EXPECT_EQ(tile->vectors, c.vectors) << c.target << ", " << c.columns << " columns";
  }
}

// The machine model reaches the rules: a register tile fits the target's register file, its
// vectors are the target's width, and a packed block is a whole number of its vectors.
TEST(DefaultSchedules, TheRegisterTileIsShapedForTheTargetsMachine) {
  auto x = in({1, 14, 14, 32}, "data"), w = in({3, 3, 32, 64}, "weight"), b = in({64}, "bias");
  te::ComputeDAG conv({relu(biasAdd(conv2d(x, w, convAttrs(Layout::NHWC, {1, 1}, {1, 1, 1, 1})), b, 3))}, {x, w, b});
  auto p = in({1, 7, 7, 256}, "data"), v = in({1, 1, 256, 512}, "weight");
  te::ComputeDAG pointwise({conv2d(p, v, convAttrs(Layout::NHWC))}, {p, v});
  struct Case {
    const char* target;
    int64_t lanes, registers;
  };
  for (const Case& c : {Case{"cpu -mcpu=skylake-avx512", 16, 32}, Case{"cpu -mcpu=haswell", 8, 16}, Case{"cpu -mcpu=znver3", 8, 16},
                        Case{"cpu -mtriple=aarch64-linux-gnu", 4, 32}, Case{"cpu -mcpu=x86-64", 4, 16}}) {
    auto machine = target::Target::parse(c.target).cpu;
    for (const te::ComputeDAG* dag : {&conv, &pointwise}) {
      auto tile = defaultAnchorTile(*dag, optionsFor(machine));
      ASSERT_TRUE(tile.has_value()) << c.target;
      EXPECT_EQ(tile->lanes, c.lanes) << c.target;
      // rows x vectors accumulators, the vectors of weights they multiply and, where the FMA
      // cannot broadcast from memory (no AVX-512), the broadcast input fit the registers.
      EXPECT_LE(tile->rows * tile->vectors + tile->vectors + machine.broadcastRegisters(), c.registers)
          << c.target << ": " << tile->rows << " x " << tile->vectors;
      EXPECT_GE(tile->rows * tile->vectors, c.registers / 4) << c.target;  // and use a good part of them
    }
    std::string source = sourceOf(conv, machine);
    EXPECT_TRUE(contains(source, fmt::format("tessel_floatx{} conv2d_nhwc_r0;", c.lanes))) << c.target;
    EXPECT_FALSE(contains(source, fmt::format("tessel_floatx{} ", 2 * c.lanes))) << c.target;  // nothing wider
  }
}
