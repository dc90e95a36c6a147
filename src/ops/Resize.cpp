#include "ops/Resize.h"

#include "ops/Shape.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

namespace {

/// The input coordinate of output index `out` as numerator / denominator (denominator > 0).
struct Ratio {
  Expr numerator;
  int64_t denominator;
};

Ratio sourceCoordinate(CoordinateMode mode, Expr out, int64_t inSize, int64_t outSize) {
  switch (mode) {
    case CoordinateMode::AlignCorners:
      if (outSize == 1) return {Expr(int64_t(0)), 1};
      return {out * Expr(inSize - 1), outSize - 1};
    case CoordinateMode::PytorchHalfPixel:
      if (outSize == 1) return {Expr(int64_t(0)), 1};
      [[fallthrough]];
    case CoordinateMode::HalfPixel:
      // (out + 0.5) * in / outSize - 0.5 = ((2 out + 1) in - outSize) / (2 outSize)
      return {(out * Expr(int64_t(2)) + Expr(int64_t(1))) * Expr(inSize) - Expr(outSize), 2 * outSize};
    case CoordinateMode::Asymmetric: return {out * Expr(inSize), outSize};
  }
  return {out, 1};
}

Expr clampIndex(Expr i, int64_t size) { return ir::min(ir::max(i, Expr(int64_t(0))), Expr(size - 1)); }

Expr nearestIndex(NearestMode mode, const Ratio& r, int64_t inSize) {
  Expr n = r.numerator;
  int64_t d = r.denominator;
  Expr i;
  switch (mode) {
    case NearestMode::Floor: i = ir::floordiv(n, Expr(d)); break;
    case NearestMode::Ceil: i = ir::floordiv(n + Expr(d - 1), Expr(d)); break;
    // round half down: ceil(n/d - 1/2) = floor((2n + d - 1) / 2d)
    case NearestMode::RoundPreferFloor: i = ir::floordiv(n * Expr(int64_t(2)) + Expr(d - 1), Expr(2 * d)); break;
    // round half up: floor(n/d + 1/2) = floor((2n + d) / 2d)
    case NearestMode::RoundPreferCeil: i = ir::floordiv(n * Expr(int64_t(2)) + Expr(d), Expr(2 * d)); break;
  }
  return clampIndex(i, inSize);
}

}  // namespace

Tensor resize2d(const Tensor& data, const Resize2dAttrs& attrs) {
  const std::string op = "resize2d";
  checkRank(op, "data", data, 4);
  TESSEL_CHECK(attrs.outHeight >= 1 && attrs.outWidth >= 1, "{}: output size {}x{} must be positive", op, attrs.outHeight,
               attrs.outWidth);
  auto a = axesOf(attrs.layout);
  int dims[2] = {a.height, a.width};
  int64_t in[2] = {data.shape()[size_t(a.height)], data.shape()[size_t(a.width)]};
  int64_t out[2] = {attrs.outHeight, attrs.outWidth};
  std::vector<int64_t> shape = data.shape();
  shape[size_t(a.height)] = attrs.outHeight;
  shape[size_t(a.width)] = attrs.outWidth;
  bool bilinear = attrs.method == ResizeMethod::Bilinear;
  TESSEL_CHECK(!bilinear || data.dtype().isFloat(), "{}: bilinear interpolation needs a float tensor, got {}", op,
               data.dtype().str());
  DataType type = data.dtype();
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) {
        Ratio r[2];
        for (int k = 0; k < 2; ++k) r[k] = sourceCoordinate(attrs.coordinateMode, i[size_t(dims[k])], in[k], out[k]);
        auto read = [&](Expr y, Expr x) {
          std::vector<Expr> idx(i.begin(), i.end());
          idx[size_t(a.height)] = y;
          idx[size_t(a.width)] = x;
          return data(idx);
        };
        if (!bilinear)
          return read(nearestIndex(attrs.nearestMode, r[0], in[0]), nearestIndex(attrs.nearestMode, r[1], in[1]));
        // Bilinear: the two neighbours floor(c) and floor(c) + 1 (clamped to the image) weighted
        // by the fraction of c, which is (n - floor(c) d) / d exactly.
        Expr low[2], high[2], fraction[2];
        for (int k = 0; k < 2; ++k) {
          Expr f = ir::floordiv(r[k].numerator, Expr(r[k].denominator));
          low[k] = clampIndex(f, in[k]);
          high[k] = clampIndex(f + Expr(int64_t(1)), in[k]);
          Expr remainder = r[k].numerator - f * Expr(r[k].denominator);
          fraction[k] = ir::cast(type, remainder) / ir::makeConst(type, double(r[k].denominator));
        }
        Expr one = ir::makeConst(type, 1);
        Expr top = read(low[0], low[1]) * (one - fraction[1]) + read(low[0], high[1]) * fraction[1];
        Expr bottom = read(high[0], low[1]) * (one - fraction[1]) + read(high[0], high[1]) * fraction[1];
        return top * (one - fraction[0]) + bottom * fraction[0];
      },
      "T_resize", "injective", axisNames("ax", 4));
}

}  // namespace tessel::ops
