#include "ops/Pooling.h"

#include <algorithm>

#include "ops/Shape.h"
#include "ops/Transform.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

namespace {

struct PoolGeometry {
  LayoutAxes axes;
  std::vector<int64_t> outShape;
  int64_t in[2], out[2];
  std::array<int64_t, 4> padding;  ///< with the extra bottom / right rows ceil mode reads
};

PoolGeometry poolGeometry(const std::string& op, const Tensor& data, const Pool2dAttrs& attrs) {
  checkRank(op, "data", data, 4);
  TESSEL_CHECK(data.dtype().isFloat() || data.dtype().isIntegral(), "{}: unsupported dtype {}", op, data.dtype().str());
  PoolGeometry g;
  g.axes = axesOf(attrs.layout);
  int dims[2] = {g.axes.height, g.axes.width};
  g.padding = attrs.padding;
  g.outShape = data.shape();
  for (int k = 0; k < 2; ++k) {
    const char* dim = k == 0 ? "height" : "width";
    g.in[k] = data.shape()[size_t(dims[k])];
    g.out[k] = windowOutputSize(op, dim, g.in[k], attrs.kernel[size_t(k)], attrs.strides[size_t(k)], attrs.dilation[size_t(k)],
                                attrs.padding[size_t(k)], attrs.padding[size_t(k + 2)], attrs.ceilMode);
    g.outShape[size_t(dims[k])] = g.out[k];
    // Ceil mode's last window may reach past the bottom / right padding: pad further.
    int64_t needed = (g.out[k] - 1) * attrs.strides[size_t(k)] + attrs.dilation[size_t(k)] * (attrs.kernel[size_t(k)] - 1) + 1;
    int64_t have = g.in[k] + attrs.padding[size_t(k)] + attrs.padding[size_t(k + 2)];
    if (needed > have) g.padding[size_t(k + 2)] += needed - have;
  }
  return g;
}

/// The window reduction over the padded input: reduce(padded[.., y * sh + rv * dh, x * sw + rw * dw, ..]).
Tensor windowReduce(const Tensor& padded, const PoolGeometry& g, const Pool2dAttrs& attrs, ir::ReduceOp op,
                    const std::string& name, const std::string& tag) {
  auto rv = te::reduceAxis(attrs.kernel[0], "rv0"), rw = te::reduceAxis(attrs.kernel[1], "rv1");
  return te::compute(
      g.outShape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx(i.begin(), i.end());
        idx[size_t(g.axes.height)] = scaled(i[size_t(g.axes.height)], attrs.strides[0]) + scaled(rv.var, attrs.dilation[0]);
        idx[size_t(g.axes.width)] = scaled(i[size_t(g.axes.width)], attrs.strides[1]) + scaled(rw.var, attrs.dilation[1]);
        Expr x = padded(idx);
        return ir::reduce(op, x, {rv, rw});
      },
      name, tag, axisNames("ax", 4));
}

}  // namespace

Tensor maxPool2d(const Tensor& data, const Pool2dAttrs& attrs) {
  auto g = poolGeometry("max_pool2d", data, attrs);
  // Padding with the lowest finite value, as TVM: a window entirely in the padding gives it.
  Expr low = lowestValue(data.dtype());
  double lowest = data.dtype().isFloat() ? low.as<ir::FloatImmNode>()->value : double(*ir::asConstInt(low));
  Tensor padded = padImage(data, g.axes.height, g.axes.width, g.padding, lowest, "pad_temp");
  return windowReduce(padded, g, attrs, ir::ReduceOp::Max, "pool_max", "pool_max");
}

Tensor avgPool2d(const Tensor& data, const Pool2dAttrs& attrs) {
  const std::string op = "avg_pool2d";
  auto g = poolGeometry(op, data, attrs);
  TESSEL_CHECK(attrs.dilation[0] == 1 && attrs.dilation[1] == 1, "{}: dilation {}x{} is not supported (max pooling only)", op,
               attrs.dilation[0], attrs.dilation[1]);
  TESSEL_CHECK(data.dtype().isFloat(), "{}: needs a float tensor, got {}", op, data.dtype().str());
  for (int k = 0; k < 2; ++k)
    TESSEL_CHECK(attrs.padding[size_t(k)] < attrs.kernel[size_t(k)] && attrs.padding[size_t(k + 2)] < attrs.kernel[size_t(k)],
                 "{}: padding ({}, {}) of the {} must be smaller than the kernel ({}), else a window holds no input", op,
                 attrs.padding[size_t(k)], attrs.padding[size_t(k + 2)], k == 0 ? "height" : "width", attrs.kernel[size_t(k)]);
  Tensor padded = padImage(data, g.axes.height, g.axes.width, g.padding, 0.0, "pad_temp");
  Tensor sum = windowReduce(padded, g, attrs, ir::ReduceOp::Sum, "pool_sum", "pool_avg");
  bool extra = g.padding != attrs.padding;
  bool constantCount = !extra && (attrs.countIncludePad || attrs.padding == std::array<int64_t, 4>{0, 0, 0, 0});
  DataType type = data.dtype();
  return te::compute(
      g.outShape,
      [&](const std::vector<Var>& i) {
        Expr s = sum(std::vector<Expr>(i.begin(), i.end()));
        if (constantCount) return s / ir::makeConst(type, double(attrs.kernel[0] * attrs.kernel[1]));
        // The elements of each window: inside the padded input (torch's count_include_pad, not
        // counting ceil mode's extra rows) or inside the input alone.
        Expr count;
        int dims[2] = {g.axes.height, g.axes.width};
        for (int k = 0; k < 2; ++k) {
          Expr start = Expr(i[size_t(dims[k])]) * Expr(attrs.strides[size_t(k)]) - Expr(attrs.padding[size_t(k)]);
          Expr end = start + Expr(attrs.kernel[size_t(k)]);
          Expr n = attrs.countIncludePad ? ir::min(end, Expr(g.in[k] + attrs.padding[size_t(k + 2)])) - start
                                         : ir::min(end, Expr(g.in[k])) - ir::max(start, Expr(int64_t(0)));
          count = count.defined() ? count * n : n;
        }
        return s / ir::cast(type, count);
      },
      "pool_avg", "pool_avg", axisNames("ax", 4));
}

namespace {

Tensor globalReduce(const std::string& op, const Tensor& data, Layout layout, ir::ReduceOp reduceOp, const std::string& name,
                    const std::string& tag) {
  checkRank(op, "data", data, 4);
  auto a = axesOf(layout);
  std::vector<int64_t> shape = data.shape();
  int64_t h = shape[size_t(a.height)], w = shape[size_t(a.width)];
  shape[size_t(a.height)] = shape[size_t(a.width)] = 1;
  auto rh = te::reduceAxis(h, "rv0"), rw = te::reduceAxis(w, "rv1");
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx(i.begin(), i.end());
        idx[size_t(a.height)] = rh.var;
        idx[size_t(a.width)] = rw.var;
        return ir::reduce(reduceOp, data(idx), {rh, rw});
      },
      name, tag, axisNames("ax", 4));
}

}  // namespace

namespace {

/// The windows of one axis of adaptive pooling: output i reads [start(i), end(i)).
struct AdaptiveAxis {
  int64_t in = 0, out = 0;
  int64_t window = 0;    ///< the longest window: the reduction's extent
  bool uniform = false;  ///< every window is in / out rows, starting at i * window

  AdaptiveAxis(int64_t in_, int64_t out_) : in(in_), out(out_) {
    uniform = in % out == 0;
    for (int64_t i = 0; i < out; ++i) window = std::max(window, endOf(i) - startOf(i));
  }
  int64_t startOf(int64_t i) const { return i * in / out; }
  int64_t endOf(int64_t i) const { return ((i + 1) * in + out - 1) / out; }
  Expr start(const Expr& i) const { return uniform ? scaled(i, in / out) : ir::floordiv(i * Expr(in), Expr(out)); }
  Expr end(const Expr& i) const { return ir::floordiv((i + Expr(int64_t(1))) * Expr(in) + Expr(out - 1), Expr(out)); }
};

}  // namespace

Tensor adaptiveAvgPool2d(const Tensor& data, std::array<int64_t, 2> outputSize, Layout layout) {
  const std::string op = "adaptive_avg_pool2d";
  checkRank(op, "data", data, 4);
  TESSEL_CHECK(data.dtype().isFloat(), "{}: needs a float tensor, got {}", op, data.dtype().str());
  TESSEL_CHECK(outputSize[0] > 0 && outputSize[1] > 0, "{}: output size {}x{} must be positive", op, outputSize[0], outputSize[1]);
  auto a = axesOf(layout);
  int dims[2] = {a.height, a.width};
  std::vector<AdaptiveAxis> axes;
  std::vector<int64_t> shape = data.shape();
  for (int k = 0; k < 2; ++k) {
    axes.emplace_back(shape[size_t(dims[k])], outputSize[size_t(k)]);
    shape[size_t(dims[k])] = outputSize[size_t(k)];
  }
  auto rv = te::reduceAxis(axes[0].window, "rv0"), rw = te::reduceAxis(axes[1].window, "rv1");
  Tensor sum = te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx(i.begin(), i.end());
        Expr valid;
        const te::IterVar* r[2] = {&rv, &rw};
        for (int k = 0; k < 2; ++k) {
          const AdaptiveAxis& ax = axes[size_t(k)];
          Expr row = ax.start(i[size_t(dims[k])]) + r[k]->var;
          if (!ax.uniform) {
            // A shorter window's extra rows are masked out; clamped, their reads stay inside.
            Expr inside = row < ax.end(i[size_t(dims[k])]);
            valid = valid.defined() ? (valid && inside) : inside;
            row = ir::min(row, Expr(ax.in - 1));
          }
          idx[size_t(dims[k])] = row;
        }
        Expr x = data(idx);
        if (valid.defined()) x = ir::select(valid, x, ir::makeConst(data.dtype(), 0.0));
        return ir::reduce(ir::ReduceOp::Sum, x, {rv, rw});
      },
      "adaptive_pool_sum", "adaptive_pool_avg", axisNames("ax", 4));
  DataType type = data.dtype();
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        Expr s = sum(std::vector<Expr>(i.begin(), i.end()));
        if (axes[0].uniform && axes[1].uniform) return s / ir::makeConst(type, double(axes[0].window * axes[1].window));
        Expr count;
        for (int k = 0; k < 2; ++k) {
          const AdaptiveAxis& ax = axes[size_t(k)];
          Expr n = ax.uniform ? Expr(ax.window) : ax.end(i[size_t(dims[k])]) - ax.start(i[size_t(dims[k])]);
          count = count.defined() ? count * n : n;
        }
        return s / ir::cast(type, count);
      },
      "adaptive_pool_avg", "adaptive_pool_avg", axisNames("ax", 4));
}

Tensor globalAvgPool2d(const Tensor& data, Layout layout) {
  TESSEL_CHECK(data.dtype().isFloat() || data.dtype().isIntegral(), "global_avg_pool2d: needs a numeric tensor, got {}",
               data.dtype().str());
  Tensor sum = globalReduce("global_avg_pool2d", data, layout, ir::ReduceOp::Sum, "global_pool_sum", "global_pool_avg");
  auto a = axesOf(layout);
  double count = double(data.shape()[size_t(a.height)] * data.shape()[size_t(a.width)]);
  DataType type = data.dtype();
  return te::compute(
      sum.shape(), [&](const std::vector<Var>& i) { return sum(std::vector<Expr>(i.begin(), i.end())) / ir::makeConst(type, count); },
      "global_pool_avg", "global_pool_avg", axisNames("ax", 4));
}

Tensor globalMaxPool2d(const Tensor& data, Layout layout) {
  return globalReduce("global_max_pool2d", data, layout, ir::ReduceOp::Max, "global_pool_max", "global_pool_max");
}

}  // namespace tessel::ops
