// What every operator computes: its compute definition, run by the reference evaluator, against
// naive loops written here from the frameworks' definitions (torch / ONNX / TVM), on small
// shapes with the awkward cases (stride 2, dilation, groups, asymmetric padding, broadcasting,
// ceil mode, every resize mode). No compiler involved: these pin down the semantics that the
// compiled kernels (test_default_schedules.cpp) are then checked against.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "ops/BatchNorm.h"
#include "ops/Broadcast.h"
#include "ops/Conv2d.h"
#include "ops/Conv2dTranspose.h"
#include "ops/Dense.h"
#include "ops/Elementwise.h"
#include "ops/Pooling.h"
#include "ops/Quantize.h"
#include "ops/Reduce.h"
#include "ops/Resize.h"
#include "ops/Softmax.h"
#include "ops/Transform.h"
#include "support/Error.h"
#include "te/ReferenceEvaluator.h"

using namespace tessel;
using namespace tessel::ops;
using te::Tensor;

namespace {

/// A dense row-major array of doubles for the naive implementations.
struct Array {
  std::vector<int64_t> shape;
  std::vector<double> data;
  explicit Array(std::vector<int64_t> s = {}) : shape(std::move(s)) {
    int64_t n = 1;
    for (auto e : shape) n *= e;
    data.assign(size_t(n), 0.0);
  }
  size_t offset(std::initializer_list<int64_t> index) const {
    int64_t flat = 0;
    size_t d = 0;
    for (int64_t i : index) flat = flat * shape[d++] + i;
    return size_t(flat);
  }
  double& operator()(std::initializer_list<int64_t> i) { return data[offset(i)]; }
  double operator()(std::initializer_list<int64_t> i) const { return data[offset(i)]; }
};

/// Inputs of one op: placeholders with random values (uniform in [lo, hi), or integers).
class OpCase {
 public:
  Tensor input(std::vector<int64_t> shape, const std::string& name, double lo = -1, double hi = 1,
               DataType dtype = DataType::float32()) {
    Tensor t = te::placeholder(shape, dtype, name);
    Array a(shape);
    std::mt19937_64 rng(seed_++);
    for (auto& v : a.data) {
      v = std::uniform_real_distribution<double>(lo, hi)(rng);
      v = dtype.isFloat() ? double(float(v)) : std::floor(v);
    }
    inputs_.push_back(t);
    values_[name] = a.data;
    arrays_[name] = a;
    return t;
  }
  const Array& array(const std::string& name) { return arrays_.at(name); }

  /// The reference evaluator's values of `out`, shaped.
  Array evaluate(const Tensor& out) {
    te::ComputeDAG dag({out}, inputs_);
    auto all = te::evaluateReference(dag, values_);
    Array a(out.shape());
    a.data = all.at(dag.outputNames()[0]);
    return a;
  }

 private:
  std::vector<Tensor> inputs_;
  te::TensorValues values_;
  std::map<std::string, Array> arrays_;
  uint64_t seed_ = 7;
};

void expectNear(const Array& got, const Array& want, double tolerance = 1e-5) {
  ASSERT_EQ(got.shape, want.shape);
  for (size_t i = 0; i < got.data.size(); ++i)
    ASSERT_NEAR(got.data[i], want.data[i], tolerance * std::max(1.0, std::fabs(want.data[i]))) << "element " << i;
}

// ---- naive convolution ------------------------------------------------------------------------

/// Direct NCHW convolution with OIHW weights, groups, stride, dilation, padding (t, l, b, r).
Array naiveConvNCHW(const Array& x, const Array& w, std::array<int64_t, 2> s, std::array<int64_t, 4> p,
                    std::array<int64_t, 2> d, int64_t groups) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  int64_t k = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  int64_t oh = (h + p[0] + p[2] - d[0] * (kh - 1) - 1) / s[0] + 1, ow = (wd + p[1] + p[3] - d[1] * (kw - 1) - 1) / s[1] + 1;
  EXPECT_EQ(cg * groups, c);
  Array out({n, k, oh, ow});
  for (int64_t b = 0; b < n; ++b)
    for (int64_t f = 0; f < k; ++f)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double acc = 0;
          int64_t g = f / (k / groups);
          for (int64_t rc = 0; rc < cg; ++rc)
            for (int64_t ry = 0; ry < kh; ++ry)
              for (int64_t rx = 0; rx < kw; ++rx) {
                int64_t iy = y * s[0] + ry * d[0] - p[0], ix = xx * s[1] + rx * d[1] - p[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                acc += x({b, g * cg + rc, iy, ix}) * w({f, rc, ry, rx});
              }
          out({b, f, y, xx}) = acc;
        }
  return out;
}

Array nhwcToNchw(const Array& a) {
  Array out({a.shape[0], a.shape[3], a.shape[1], a.shape[2]});
  for (int64_t n = 0; n < a.shape[0]; ++n)
    for (int64_t h = 0; h < a.shape[1]; ++h)
      for (int64_t w = 0; w < a.shape[2]; ++w)
        for (int64_t c = 0; c < a.shape[3]; ++c) out({n, c, h, w}) = a({n, h, w, c});
  return out;
}

/// HWIO -> OIHW
Array hwioToOihw(const Array& a) {
  Array out({a.shape[3], a.shape[2], a.shape[0], a.shape[1]});
  for (int64_t h = 0; h < a.shape[0]; ++h)
    for (int64_t w = 0; w < a.shape[1]; ++w)
      for (int64_t i = 0; i < a.shape[2]; ++i)
        for (int64_t o = 0; o < a.shape[3]; ++o) out({o, i, h, w}) = a({h, w, i, o});
  return out;
}

struct ConvShape {
  int64_t n, c, h, w, k, kh, kw;
  std::array<int64_t, 2> stride;
  std::array<int64_t, 4> pad;
  std::array<int64_t, 2> dilation;
  int64_t groups;
};

}  // namespace

TEST(OpSemantics, Conv2dNCHWMatchesDirectConvolution) {
  for (auto s : {ConvShape{1, 3, 7, 9, 4, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
                 ConvShape{2, 4, 9, 8, 6, 3, 2, {2, 1}, {0, 2, 1, 0}, {1, 2}, 2},
                 ConvShape{1, 6, 8, 8, 6, 3, 3, {2, 2}, {1, 0, 2, 1}, {2, 1}, 3},
                 ConvShape{1, 4, 5, 5, 8, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1}}) {
    OpCase t;
    auto x = t.input({s.n, s.c, s.h, s.w}, "x");
    auto w = t.input({s.k, s.c / s.groups, s.kh, s.kw}, "w");
    Conv2dAttrs a;
    a.strides = s.stride;
    a.padding = s.pad;
    a.dilation = s.dilation;
    a.groups = s.groups;
    auto out = conv2d(x, w, a);
    EXPECT_EQ(out.op()->tag, s.groups == 1 ? "conv2d_nchw" : "group_conv2d_nchw");
    expectNear(t.evaluate(out), naiveConvNCHW(t.array("x"), t.array("w"), s.stride, s.pad, s.dilation, s.groups));
  }
}

TEST(OpSemantics, Conv2dNHWCMatchesDirectConvolution) {
  for (auto s : {ConvShape{1, 3, 7, 9, 4, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
                 ConvShape{2, 4, 9, 8, 6, 3, 2, {2, 1}, {0, 2, 1, 0}, {1, 2}, 2}}) {
    OpCase t;
    auto x = t.input({s.n, s.h, s.w, s.c}, "x");
    auto w = t.input({s.kh, s.kw, s.c / s.groups, s.k}, "w");
    Conv2dAttrs a;
    a.strides = s.stride;
    a.padding = s.pad;
    a.dilation = s.dilation;
    a.groups = s.groups;
    a.layout = Layout::NHWC;
    auto out = conv2d(x, w, a);
    EXPECT_EQ(out.op()->tag, s.groups == 1 ? "conv2d_nhwc" : "group_conv2d_nhwc");
    auto want = naiveConvNCHW(nhwcToNchw(t.array("x")), hwioToOihw(t.array("w")), s.stride, s.pad, s.dilation, s.groups);
    expectNear(nhwcToNchw(t.evaluate(out)), want);
  }
}

TEST(OpSemantics, Int8Conv2dAccumulatesInInt32) {
  OpCase t;
  auto x = t.input({1, 3, 5, 5}, "x", -128, 128, DataType::int8());
  auto w = t.input({4, 3, 3, 3}, "w", -128, 128, DataType::int8());
  Conv2dAttrs a;
  a.padding = {1, 1, 1, 1};
  auto out = conv2d(x, w, a);
  EXPECT_EQ(out.dtype(), DataType::int32());
  // Exact: 27 products of at most 2^14 fit int32 easily; the int8 inputs must not wrap.
  expectNear(t.evaluate(out), naiveConvNCHW(t.array("x"), t.array("w"), {1, 1}, {1, 1, 1, 1}, {1, 1}, 1), 0);
}

TEST(OpSemantics, DepthwiseConv2dIsAGroupedConvolutionWithOneGroupPerChannel) {
  for (int64_t multiplier : {1, 2}) {
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      OpCase t;
      bool nchw = layout == Layout::NCHW;
      auto x = nchw ? t.input({1, 3, 8, 7}, "x") : t.input({1, 8, 7, 3}, "x");
      auto w = nchw ? t.input({3, multiplier, 3, 3}, "w") : t.input({3, 3, 3, multiplier}, "w");
      Conv2dAttrs a;
      a.strides = {2, 1};
      a.padding = {1, 0, 1, 2};
      a.dilation = {1, 2};
      a.layout = layout;
      auto out = depthwiseConv2d(x, w, a);
      EXPECT_EQ(out.op()->tag, nchw ? "depthwise_conv2d_nchw" : "depthwise_conv2d_nhwc");
      // As a grouped convolution: weight [C * M, 1, KH, KW] with output channel c * M + m.
      Array wo({3 * multiplier, 1, 3, 3});
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t m = 0; m < multiplier; ++m)
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 3; ++j)
              wo({c * multiplier + m, 0, i, j}) = nchw ? t.array("w")({c, m, i, j}) : t.array("w")({i, j, c, m});
      auto xo = nchw ? t.array("x") : nhwcToNchw(t.array("x"));
      auto want = naiveConvNCHW(xo, wo, a.strides, a.padding, a.dilation, 3);
      auto got = t.evaluate(out);
      expectNear(nchw ? got : nhwcToNchw(got), want);
    }
  }
}

TEST(OpSemantics, Conv2dTransposeScattersEveryInputThroughTheKernel) {
  struct Shape {
    int64_t cin, cout, h, w, kh, kw, groups;
    std::array<int64_t, 2> stride;
    std::array<int64_t, 4> pad;
    std::array<int64_t, 2> outPad, dilation;
  };
  for (auto s : {Shape{2, 3, 4, 3, 3, 3, 1, {2, 2}, {1, 1, 1, 1}, {1, 0}, {1, 1}},
                 Shape{4, 2, 3, 4, 2, 3, 2, {1, 2}, {0, 1, 2, 0}, {0, 1}, {2, 1}},
                 Shape{3, 2, 3, 3, 4, 4, 1, {3, 3}, {4, 0, 0, 3}, {2, 0}, {1, 1}}}) {
    OpCase t;
    auto x = t.input({1, s.cin, s.h, s.w}, "x");
    auto w = t.input({s.cin, s.cout / s.groups, s.kh, s.kw}, "w");
    Conv2dTransposeAttrs a;
    a.strides = s.stride;
    a.padding = s.pad;
    a.outputPadding = s.outPad;
    a.dilation = s.dilation;
    a.groups = s.groups;
    auto out = conv2dTranspose(x, w, a);
    int64_t oh = (s.h - 1) * s.stride[0] - s.pad[0] - s.pad[2] + s.dilation[0] * (s.kh - 1) + s.outPad[0] + 1;
    int64_t ow = (s.w - 1) * s.stride[1] - s.pad[1] - s.pad[3] + s.dilation[1] * (s.kw - 1) + s.outPad[1] + 1;
    ASSERT_EQ(out.shape(), (std::vector<int64_t>{1, s.cout, oh, ow}));
    // torch's definition: every input element adds x * w to the outputs its kernel covers.
    Array want({1, s.cout, oh, ow});
    const Array &xa = t.array("x"), &wa = t.array("w");
    int64_t inPerGroup = s.cin / s.groups, outPerGroup = s.cout / s.groups;
    for (int64_t c = 0; c < s.cin; ++c)
      for (int64_t i = 0; i < s.h; ++i)
        for (int64_t j = 0; j < s.w; ++j)
          for (int64_t o = 0; o < outPerGroup; ++o)
            for (int64_t ky = 0; ky < s.kh; ++ky)
              for (int64_t kx = 0; kx < s.kw; ++kx) {
                int64_t y = i * s.stride[0] - s.pad[0] + ky * s.dilation[0];
                int64_t xx = j * s.stride[1] - s.pad[1] + kx * s.dilation[1];
                if (y < 0 || y >= oh || xx < 0 || xx >= ow) continue;
                want({0, (c / inPerGroup) * outPerGroup + o, y, xx}) += xa({0, c, i, j}) * wa({c, o, ky, kx});
              }
    expectNear(t.evaluate(out), want);
  }
}

TEST(OpSemantics, DenseAndMatmul) {
  OpCase t;
  auto x = t.input({3, 5}, "x");
  auto w = t.input({4, 5}, "w");
  auto b = t.input({5, 4}, "b");
  Array want({3, 4}), wantMatmul({3, 4});
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 5; ++k) {
        want({i, j}) += t.array("x")({i, k}) * t.array("w")({j, k});
        wantMatmul({i, j}) += t.array("x")({i, k}) * t.array("b")({k, j});
      }
  auto d = dense(x, w);
  EXPECT_EQ(d.op()->tag, "dense");
  expectNear(t.evaluate(d), want);
  expectNear(t.evaluate(matmul(x, b)), wantMatmul);
}

TEST(OpSemantics, BatchNormBiasAddAndBroadcasting) {
  OpCase t;
  auto x = t.input({2, 3, 2, 4}, "x");
  auto gamma = t.input({3}, "gamma"), beta = t.input({3}, "beta"), mean = t.input({3}, "mean");
  auto var = t.input({3}, "var", 0.1, 2);
  auto row = t.input({4}, "row");
  auto col = t.input({3, 1, 1}, "col");
  BatchNormAttrs attrs;
  attrs.epsilon = 1e-3;
  auto bn = t.evaluate(batchNorm(x, gamma, beta, mean, var, attrs));
  auto bias = t.evaluate(biasAdd(x, mean, 1));
  auto sum = t.evaluate(add(x, row));
  auto product = t.evaluate(multiply(col, x));
  auto quotient = t.evaluate(divide(x, col));
  auto difference = t.evaluate(subtract(row, col));  // [3, 1, 4]
  ASSERT_EQ(difference.shape, (std::vector<int64_t>{3, 1, 4}));
  const Array& xa = t.array("x");
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t w = 0; w < 4; ++w) {
          double v = xa({n, c, h, w});
          double expected = (v - t.array("mean")({c})) / std::sqrt(t.array("var")({c}) + 1e-3) * t.array("gamma")({c}) +
                            t.array("beta")({c});
          EXPECT_NEAR(bn({n, c, h, w}), expected, 1e-5);
          EXPECT_NEAR(bias({n, c, h, w}), v + t.array("mean")({c}), 1e-6);
          EXPECT_NEAR(sum({n, c, h, w}), v + t.array("row")({w}), 1e-6);
          EXPECT_NEAR(product({n, c, h, w}), v * t.array("col")({c, 0, 0}), 1e-6);
          EXPECT_NEAR(quotient({n, c, h, w}), v / t.array("col")({c, 0, 0}), 1e-5);
        }
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t w = 0; w < 4; ++w) EXPECT_NEAR(difference({c, 0, w}), t.array("row")({w}) - t.array("col")({c, 0, 0}), 1e-6);
}

TEST(OpSemantics, Activations) {
  OpCase t;
  auto x = t.input({64}, "x", -5, 5);
  const Array& xa = t.array("x");
  auto check = [&](const Tensor& out, const std::function<double(double)>& f) {
    auto got = t.evaluate(out);
    EXPECT_EQ(out.op()->tag, "elemwise");
    for (int64_t i = 0; i < 64; ++i) EXPECT_NEAR(got({i}), f(xa({i})), 1e-6) << out.name() << " at " << xa({i});
  };
  check(relu(x), [](double v) { return std::max(v, 0.0); });
  check(relu6(x), [](double v) { return std::min(std::max(v, 0.0), 6.0); });
  check(clip(x, -1.5, 2.5), [](double v) { return std::min(std::max(v, -1.5), 2.5); });
  check(leakyRelu(x, 0.1), [](double v) { return v > 0 ? v : 0.1 * v; });
  check(sigmoid(x), [](double v) { return 1 / (1 + std::exp(-v)); });
  check(tanh(x), [](double v) { return std::tanh(v); });
  check(hardSigmoid(x), [](double v) { return std::max(0.0, std::min(1.0, 0.2 * v + 0.5)); });
  check(hardSigmoid(x, 1.0 / 6, 0.5), [](double v) { return std::min(std::max(v + 3, 0.0), 6.0) / 6; });
  check(hardSwish(x), [](double v) { return v * std::min(std::max(v + 3, 0.0), 6.0) / 6; });
}

TEST(OpSemantics, IntegerRequantization) {
  OpCase t;
  auto acc = t.input({40}, "acc", -100000, 100000, DataType::int32());
  auto shifted = rightShift(acc, 8);
  auto clipped = clip(shifted, -127, 127);
  auto narrow = cast(clipped, DataType::int8());
  auto back = t.evaluate(narrow);
  auto shiftOnly = t.evaluate(shifted);
  auto left = t.evaluate(leftShift(acc, 3));
  EXPECT_EQ(narrow.dtype(), DataType::int8());
  for (int64_t i = 0; i < 40; ++i) {
    int32_t v = int32_t(t.array("acc")({i}));
    EXPECT_EQ(shiftOnly({i}), double(v >> 8)) << v;  // arithmetic shift: rounds toward -infinity
    EXPECT_EQ(back({i}), double(std::min(std::max(v >> 8, -127), 127)));
    EXPECT_EQ(left({i}), double(int32_t(uint32_t(v) << 3)));
  }
  // float -> int truncates toward zero, int -> narrower int wraps.
  OpCase f;
  auto y = f.input({16}, "y", -300, 300);
  auto truncated = f.evaluate(cast(y, DataType::int32()));
  auto wrapped = f.evaluate(cast(cast(y, DataType::int32()), DataType::int8()));
  for (int64_t i = 0; i < 16; ++i) {
    double v = f.array("y")({i});
    EXPECT_EQ(truncated({i}), std::trunc(v));
    EXPECT_EQ(wrapped({i}), double(int8_t(int32_t(std::trunc(v)))));
  }
}

// ---- pooling ------------------------------------------------------------------------------

namespace {

/// torch's max_pool2d / avg_pool2d on NCHW, written from its documentation.
Array naivePool(const Array& x, const Pool2dAttrs& a, bool max) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  auto outSize = [&](int64_t in, int k) {
    int64_t eff = a.dilation[size_t(k)] * (a.kernel[size_t(k)] - 1) + 1;
    int64_t span = in + a.padding[size_t(k)] + a.padding[size_t(k + 2)] - eff;
    int64_t s = a.strides[size_t(k)];
    int64_t o = (a.ceilMode ? (span + s - 1) / s : span / s) + 1;
    if (a.ceilMode && (o - 1) * s >= in + a.padding[size_t(k)]) --o;
    return o;
  };
  int64_t oh = outSize(h, 0), ow = outSize(w, 1);
  Array out({n, c, oh, ow});
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double best = -INFINITY, sum = 0;
          int64_t hs = y * a.strides[0] - a.padding[0], ws = xx * a.strides[1] - a.padding[1];
          for (int64_t i = 0; i < a.kernel[0]; ++i)
            for (int64_t j = 0; j < a.kernel[1]; ++j) {
              int64_t iy = hs + i * a.dilation[0], ix = ws + j * a.dilation[1];
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              best = std::max(best, x({b, ch, iy, ix}));
              sum += x({b, ch, iy, ix});
            }
          // torch: the divisor counts the window inside the padded input (count_include_pad)
          // or inside the input.
          int64_t he = std::min(hs + a.kernel[0], h + a.padding[2]), we = std::min(ws + a.kernel[1], w + a.padding[3]);
          int64_t count = (he - hs) * (we - ws);
          if (!a.countIncludePad)
            count = (std::min(he, h) - std::max<int64_t>(hs, 0)) * (std::min(we, w) - std::max<int64_t>(ws, 0));
          out({b, ch, y, xx}) = max ? best : sum / double(count);
        }
  return out;
}

}  // namespace

TEST(OpSemantics, PoolingMatchesTorch) {
  std::vector<Pool2dAttrs> configs;
  Pool2dAttrs p;
  p.kernel = {3, 3};
  p.strides = {2, 2};
  p.padding = {1, 1, 1, 1};
  configs.push_back(p);
  p.ceilMode = true;  // 8x9 input: the last window starts inside, extends past the padding
  configs.push_back(p);
  p.countIncludePad = true;
  configs.push_back(p);
  p.padding = {0, 1, 1, 0};
  p.kernel = {2, 3};
  p.strides = {2, 1};
  p.countIncludePad = false;
  configs.push_back(p);
  for (const auto& config : configs) {
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      OpCase t;
      bool nchw = layout == Layout::NCHW;
      auto x = nchw ? t.input({1, 2, 8, 9}, "x") : t.input({1, 8, 9, 2}, "x");
      Pool2dAttrs a = config;
      a.layout = layout;
      auto xo = nchw ? t.array("x") : nhwcToNchw(t.array("x"));
      auto mx = t.evaluate(maxPool2d(x, a)), avg = t.evaluate(avgPool2d(x, a));
      expectNear(nchw ? mx : nhwcToNchw(mx), naivePool(xo, a, true));
      expectNear(nchw ? avg : nhwcToNchw(avg), naivePool(xo, a, false));
    }
  }
  // Dilated max pooling.
  OpCase t;
  auto x = t.input({1, 2, 9, 9}, "x");
  Pool2dAttrs a;
  a.kernel = {3, 2};
  a.dilation = {2, 3};
  a.strides = {1, 2};
  a.padding = {2, 1, 0, 1};
  expectNear(t.evaluate(maxPool2d(x, a)), naivePool(t.array("x"), a, true));
}

// torch.nn.AdaptiveAvgPool2d: output i of an axis averages input rows [floor(i * in / out),
// ceil((i + 1) * in / out)) — overlapping windows of unequal size when out does not divide in,
// replicated rows when out > in (VGG's (7, 7) pool on a small image), the identity when equal.
TEST(OpSemantics, AdaptiveAvgPoolingMatchesTorch) {
  struct Case {
    int64_t h, w, oh, ow;
  };
  for (Case c : std::vector<Case>{{5, 7, 3, 2}, {1, 1, 7, 7}, {2, 3, 7, 7}, {6, 6, 3, 2}, {7, 7, 7, 7}, {9, 4, 1, 1}}) {
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      OpCase t;
      bool nchw = layout == Layout::NCHW;
      auto x = nchw ? t.input({2, 3, c.h, c.w}, "x") : t.input({2, c.h, c.w, 3}, "x");
      auto got = t.evaluate(adaptiveAvgPool2d(x, {c.oh, c.ow}, layout));
      auto xa = nchw ? t.array("x") : nhwcToNchw(t.array("x"));
      Array want({2, 3, c.oh, c.ow});
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t ch = 0; ch < 3; ++ch)
          for (int64_t i = 0; i < c.oh; ++i)
            for (int64_t j = 0; j < c.ow; ++j) {
              int64_t h0 = i * c.h / c.oh, h1 = ((i + 1) * c.h + c.oh - 1) / c.oh;
              int64_t w0 = j * c.w / c.ow, w1 = ((j + 1) * c.w + c.ow - 1) / c.ow;
              double sum = 0;
              for (int64_t y = h0; y < h1; ++y)
                for (int64_t xx = w0; xx < w1; ++xx) sum += xa({n, ch, y, xx});
              want({n, ch, i, j}) = sum / double((h1 - h0) * (w1 - w0));
            }
      expectNear(nchw ? got : nhwcToNchw(got), want);
    }
  }
}

TEST(OpSemantics, GlobalPoolingAndSoftmax) {
  OpCase t;
  auto x = t.input({2, 3, 4, 5}, "x", -3, 3);
  auto avg = t.evaluate(globalAvgPool2d(x, Layout::NCHW));
  auto mx = t.evaluate(globalMaxPool2d(x, Layout::NCHW));
  auto avgNhwc = t.evaluate(globalAvgPool2d(x, Layout::NHWC));  // x read as [N, H=3, W=4, C=5]
  ASSERT_EQ(avg.shape, (std::vector<int64_t>{2, 3, 1, 1}));
  ASSERT_EQ(avgNhwc.shape, (std::vector<int64_t>{2, 1, 1, 5}));
  const Array& xa = t.array("x");
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c) {
      double sum = 0, best = -INFINITY;
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t w = 0; w < 5; ++w) sum += xa({n, c, h, w}), best = std::max(best, xa({n, c, h, w}));
      EXPECT_NEAR(avg({n, c, 0, 0}), sum / 20, 1e-6);
      EXPECT_EQ(mx({n, c, 0, 0}), best);
    }
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 5; ++c) {
      double sum = 0;
      for (int64_t h = 0; h < 3; ++h)
        for (int64_t w = 0; w < 4; ++w) sum += xa.data[size_t(((n * 3 + h) * 4 + w) * 5 + c)];
      EXPECT_NEAR(avgNhwc({n, 0, 0, c}), sum / 12, 1e-6);
    }
  for (int axis : {-1, 1, 0}) {
    auto s = t.evaluate(softmax(x, axis));
    int a = axis < 0 ? 3 : axis;
    // Along the axis the values are exp(x) / sum(exp(x)).
    std::vector<int64_t> idx(4, 0);
    for (int64_t flat = 0; flat < 120; ++flat) {
      int64_t r = flat;
      for (int d = 3; d >= 0; --d) idx[size_t(d)] = r % xa.shape[size_t(d)], r /= xa.shape[size_t(d)];
      double denominator = 0;
      auto at = [&](const Array& arr, int64_t k) {
        auto j = idx;
        j[size_t(a)] = k;
        return arr.data[size_t(((j[0] * 3 + j[1]) * 4 + j[2]) * 5 + j[3])];
      };
      for (int64_t k = 0; k < xa.shape[size_t(a)]; ++k) denominator += std::exp(at(xa, k));
      EXPECT_NEAR(s.data[size_t(flat)], std::exp(xa.data[size_t(flat)]) / denominator, 1e-6) << "axis " << axis;
    }
  }
}

TEST(OpSemantics, ReductionsOverAnyAxes) {
  OpCase t;
  auto x = t.input({2, 3, 4}, "x", -3, 3);
  const Array& xa = t.array("x");
  // mean over the last axis, kept: a layer norm's statistics.
  auto mean = t.evaluate(reduce(x, ReduceKind::Mean, {-1}, true));
  ASSERT_EQ(mean.shape, (std::vector<int64_t>{2, 3, 1}));
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b) {
      double sum = 0;
      for (int64_t c = 0; c < 4; ++c) sum += xa({a, b, c});
      EXPECT_NEAR(mean({a, b, 0}), sum / 4, 1e-6);
    }
  // sum over the outer two axes, dropped: one value per column.
  auto sum = t.evaluate(reduce(x, ReduceKind::Sum, {0, 1}, false));
  ASSERT_EQ(sum.shape, (std::vector<int64_t>{4}));
  for (int64_t c = 0; c < 4; ++c) {
    double want = 0;
    for (int64_t a = 0; a < 2; ++a)
      for (int64_t b = 0; b < 3; ++b) want += xa({a, b, c});
    EXPECT_NEAR(sum({c}), want, 1e-5);
  }
  // max and min of everything: one element.
  auto mx = t.evaluate(reduce(x, ReduceKind::Max, {}, false));
  auto mn = t.evaluate(reduce(x, ReduceKind::Min, {}, true));
  ASSERT_EQ(mx.shape, (std::vector<int64_t>{1}));
  ASSERT_EQ(mn.shape, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(mx.data[0], *std::max_element(xa.data.begin(), xa.data.end()));
  EXPECT_EQ(mn.data[0], *std::min_element(xa.data.begin(), xa.data.end()));
  // A mean of integers truncates, as C's division does.
  auto i = t.input({1, 3}, "i", -9, 9, DataType::int32());
  auto imean = t.evaluate(reduce(i, ReduceKind::Mean, {1}, false));
  const Array& ia = t.array("i");
  EXPECT_EQ(imean.data[0], double(int64_t(ia.data[0] + ia.data[1] + ia.data[2]) / 3));
  EXPECT_THROW(reduce(x, ReduceKind::Sum, {1, -2}, false), tessel::Error);  // the same axis twice
  EXPECT_THROW(reduce(x, ReduceKind::Sum, {3}, false), tessel::Error);
}

TEST(OpSemantics, Transforms) {
  OpCase t;
  auto x = t.input({2, 3, 4}, "x");
  auto y = t.input({2, 1, 4}, "y");
  const Array &xa = t.array("x"), &ya = t.array("y");
  auto r = t.evaluate(reshape(x, {4, -1}));
  ASSERT_EQ(r.shape, (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(r.data, xa.data);  // row-major order is kept
  auto f = t.evaluate(flatten(x));
  ASSERT_EQ(f.shape, (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(f.data, xa.data);
  auto tr = t.evaluate(transpose(x, {2, 0, 1}));
  ASSERT_EQ(tr.shape, (std::vector<int64_t>{4, 2, 3}));
  auto rev = t.evaluate(transpose(x));
  ASSERT_EQ(rev.shape, (std::vector<int64_t>{4, 3, 2}));
  auto cat = t.evaluate(concatenate({x, y, x}, 1));
  ASSERT_EQ(cat.shape, (std::vector<int64_t>{2, 7, 4}));
  // x[1:2, 2::-2, 3::-1]: backwards steps, as ONNX's Slice gives them.
  auto sliced = t.evaluate(stridedSlice(x, {1, 2, 3}, {1, -2, -1}, {1, 2, 4}));
  ASSERT_EQ(sliced.shape, (std::vector<int64_t>{1, 2, 4}));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(sliced.data[size_t(b * 4 + c)], xa.data[size_t(12 + (2 - 2 * b) * 4 + (3 - c))]);
  PadAttrs p;
  p.before = {0, 1, 2};
  p.after = {1, 0, 1};
  p.value = 2.5;
  auto padded = t.evaluate(pad(x, p));
  ASSERT_EQ(padded.shape, (std::vector<int64_t>{3, 4, 7}));
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 4; ++c) {
        EXPECT_EQ(tr({c, a, b}), xa({a, b, c}));
        EXPECT_EQ(rev({c, b, a}), xa({a, b, c}));
        EXPECT_EQ(cat({a, b, c}), xa({a, b, c}));
        EXPECT_EQ(cat({a, b + 4, c}), xa({a, b, c}));
        EXPECT_EQ(padded({a, b + 1, c + 2}), xa({a, b, c}));
      }
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(cat({a, 3, c}), ya({a, 0, c}));
  EXPECT_EQ(padded({2, 0, 0}), 2.5);
  EXPECT_EQ(padded({0, 0, 3}), 2.5);
  EXPECT_EQ(padded({1, 3, 6}), 2.5);
}

// ---- resize -------------------------------------------------------------------------------

namespace {

/// ONNX Resize for one axis, in doubles: the source coordinate of output index `o`.
double sourceCoordinate(CoordinateMode mode, int64_t o, int64_t in, int64_t out) {
  double scale = double(out) / double(in);
  switch (mode) {
    case CoordinateMode::AlignCorners: return out == 1 ? 0 : double(o) * double(in - 1) / double(out - 1);
    case CoordinateMode::HalfPixel: return (double(o) + 0.5) / scale - 0.5;
    case CoordinateMode::PytorchHalfPixel: return out > 1 ? (double(o) + 0.5) / scale - 0.5 : 0;
    case CoordinateMode::Asymmetric: return double(o) / scale;
  }
  return 0;
}

int64_t nearest(NearestMode mode, double c, int64_t in) {
  double r = 0;
  switch (mode) {
    case NearestMode::Floor: r = std::floor(c); break;
    case NearestMode::Ceil: r = std::ceil(c); break;
    case NearestMode::RoundPreferFloor: r = (c - std::floor(c) == 0.5) ? std::floor(c) : std::round(c); break;
    case NearestMode::RoundPreferCeil: r = (c - std::floor(c) == 0.5) ? std::ceil(c) : std::round(c); break;
  }
  return std::min<int64_t>(std::max<int64_t>(int64_t(r), 0), in - 1);
}

}  // namespace

TEST(OpSemantics, ResizeFollowsOnnxCoordinateAndRoundingModes) {
  // Sizes whose ratios make the coordinates exact binary fractions (so that double arithmetic
  // here decides ties exactly as the op's integer arithmetic does), up and down.
  struct Size {
    int64_t inH, inW, outH, outW;
  };
  for (auto size : {Size{4, 3, 8, 6}, Size{8, 4, 2, 3}, Size{5, 3, 5, 1}}) {
    for (auto mode : {CoordinateMode::AlignCorners, CoordinateMode::HalfPixel, CoordinateMode::PytorchHalfPixel,
                      CoordinateMode::Asymmetric}) {
      for (auto method : {ResizeMethod::Nearest, ResizeMethod::Bilinear}) {
        for (auto rounding : {NearestMode::RoundPreferFloor, NearestMode::RoundPreferCeil, NearestMode::Floor, NearestMode::Ceil}) {
          if (method == ResizeMethod::Bilinear && rounding != NearestMode::RoundPreferFloor) continue;
          OpCase t;
          auto x = t.input({1, 2, size.inH, size.inW}, "x");
          Resize2dAttrs a;
          a.outHeight = size.outH;
          a.outWidth = size.outW;
          a.method = method;
          a.coordinateMode = mode;
          a.nearestMode = rounding;
          auto got = t.evaluate(resize2d(x, a));
          const Array& xa = t.array("x");
          for (int64_t c = 0; c < 2; ++c)
            for (int64_t y = 0; y < size.outH; ++y)
              for (int64_t xx = 0; xx < size.outW; ++xx) {
                double cy = sourceCoordinate(mode, y, size.inH, size.outH);
                double cx = sourceCoordinate(mode, xx, size.inW, size.outW);
                double want;
                if (method == ResizeMethod::Nearest) {
                  want = xa({0, c, nearest(rounding, cy, size.inH), nearest(rounding, cx, size.inW)});
                } else {
                  // Clamp the neighbours, weight by the fraction (TVM and ONNX agree on this).
                  auto clampIndex = [](int64_t i, int64_t n) { return std::min<int64_t>(std::max<int64_t>(i, 0), n - 1); };
                  int64_t y0 = int64_t(std::floor(cy)), x0 = int64_t(std::floor(cx));
                  double fy = cy - double(y0), fx = cx - double(x0);
                  auto at = [&](int64_t i, int64_t j) { return xa({0, c, clampIndex(i, size.inH), clampIndex(j, size.inW)}); };
                  want = (at(y0, x0) * (1 - fx) + at(y0, x0 + 1) * fx) * (1 - fy) + (at(y0 + 1, x0) * (1 - fx) + at(y0 + 1, x0 + 1) * fx) * fy;
                }
                EXPECT_NEAR(got({0, c, y, xx}), want, 1e-6)
                    << "mode " << int(mode) << " method " << int(method) << " rounding " << int(rounding) << " at " << y << "," << xx;
              }
        }
      }
    }
  }
  // NHWC reads the same pixels.
  OpCase t;
  auto x = t.input({1, 4, 3, 2}, "x");
  Resize2dAttrs a;
  a.outHeight = 8;
  a.outWidth = 5;
  a.method = ResizeMethod::Bilinear;
  a.layout = Layout::NHWC;
  auto nhwc = nhwcToNchw(t.evaluate(resize2d(x, a)));
  Resize2dAttrs b = a;
  b.layout = Layout::NCHW;
  // Build the NCHW input from the NHWC one and compare.
  Array transposed = nhwcToNchw(t.array("x"));
  te::Tensor p = te::placeholder({1, 2, 4, 3}, DataType::float32(), "p");
  te::ComputeDAG dag({resize2d(p, b)}, {p});
  auto all = te::evaluateReference(dag, {{"p", transposed.data}});
  Array nchw({1, 2, 8, 5});
  nchw.data = all.at(dag.outputNames()[0]);
  expectNear(nhwc, nchw);
}
