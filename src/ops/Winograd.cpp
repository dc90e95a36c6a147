#include "ops/Winograd.h"

#include <fmt/ranges.h>

#include "ops/Shape.h"
#include "ops/WinogradNchw.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

namespace {

// The matrices of Lavin and Gray (2016), section 4.1 (F(2x2, 3x3)) and 4.2 (F(4x4, 3x3), the
// interpolation points 0, 1, -1, 2, -2 and infinity).
WinogradMatrices makeF2() {
  WinogradMatrices w;
  w.m = 2;
  w.alpha = 4;
  w.BT = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  w.G = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  w.AT = {{1, 1, 1, 0}, {0, 1, -1, -1}};
  return w;
}

WinogradMatrices makeF4() {
  WinogradMatrices w;
  w.m = 4;
  w.alpha = 6;
  w.BT = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
          {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  w.G = {{1.0 / 4, 0, 0},
         {-1.0 / 6, -1.0 / 6, -1.0 / 6},
         {-1.0 / 6, 1.0 / 6, -1.0 / 6},
         {1.0 / 24, 1.0 / 12, 1.0 / 6},
         {1.0 / 24, -1.0 / 12, 1.0 / 6},
         {0, 0, 1}};
  w.AT = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
  return w;
}

// F(6x6, 3x3) by the same construction (Lavin and Gray 2016, section 4) on the points 0, 1, -1,
// 2, -2, 1/2, -1/2 and infinity: row j of B^T holds the coefficients of the product of (x - p)
// over the other finite points (the last row: over all of them), G's row j is (1, p_j, p_j^2)
// over that product's value at p_j, and A^T's column j the powers of p_j.
WinogradMatrices makeF6() {
  WinogradMatrices w;
  w.m = 6;
  w.alpha = 8;
  w.BT = {{-1, 0, 21.0 / 4, 0, -21.0 / 4, 0, 1, 0},
          {0, 1, 1, -17.0 / 4, -17.0 / 4, 1, 1, 0},
          {0, -1, 1, 17.0 / 4, -17.0 / 4, -1, 1, 0},
          {0, 0.5, 0.25, -2.5, -1.25, 2, 1, 0},
          {0, -0.5, 0.25, 2.5, -1.25, -2, 1, 0},
          {0, 2, 4, -2.5, -5, 0.5, 1, 0},
          {0, -2, 4, 2.5, -5, -0.5, 1, 0},
          {0, -1, 0, 21.0 / 4, 0, -21.0 / 4, 0, 1}};
  w.G = {{-1, 0, 0},
         {-2.0 / 9, -2.0 / 9, -2.0 / 9},
         {-2.0 / 9, 2.0 / 9, -2.0 / 9},
         {1.0 / 90, 1.0 / 45, 2.0 / 45},
         {1.0 / 90, -1.0 / 45, 2.0 / 45},
         {32.0 / 45, 16.0 / 45, 8.0 / 45},
         {32.0 / 45, -16.0 / 45, 8.0 / 45},
         {0, 0, 1}};
  w.AT = {{1, 1, 1, 1, 1, 1, 1, 0},         {0, 1, -1, 2, -2, 0.5, -0.5, 0},
          {0, 1, 1, 4, 4, 0.25, 0.25, 0},   {0, 1, -1, 8, -8, 0.125, -0.125, 0},
          {0, 1, 1, 16, 16, 1.0 / 16, 1.0 / 16, 0}, {0, 1, -1, 32, -32, 1.0 / 32, -1.0 / 32, 1}};
  return w;
}

/// sum over k of matrix[row][k] * term(k), the zero entries left out and +-1 written as an
/// addition or subtraction.
Expr sparseRow(const std::vector<double>& row, DataType type, const std::function<Expr(int)>& term) {
  Expr sum;
  for (size_t k = 0; k < row.size(); ++k) {
    double c = row[k];
    if (c == 0) continue;
    Expr t = term(int(k));
    if (c == 1) {
      sum = sum.defined() ? sum + t : t;
    } else if (c == -1) {
      sum = sum.defined() ? sum - t : -t;
    } else {
      Expr scaledTerm = ir::makeConst(type, c) * t;
      sum = sum.defined() ? sum + scaledTerm : scaledTerm;
    }
  }
  return sum.defined() ? sum : ir::makeConst(type, 0);
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

Expr winogradRow(const std::vector<std::vector<double>>& matrix, const Expr& row, DataType type,
                 const std::function<Expr(int)>& term) {
  Expr chosen = sparseRow(matrix.back(), type, term);
  for (int i = int(matrix.size()) - 2; i >= 0; --i)
    chosen = ir::ifThenElse(row == Expr(int64_t(i)), sparseRow(matrix[size_t(i)], type, term), chosen);
  return chosen;
}

const WinogradMatrices& winogradMatrices(int m) {
  static const WinogradMatrices f2 = makeF2(), f4 = makeF4(), f6 = makeF6();
  for (const WinogradMatrices* w : {&f2, &f4, &f6})
    if (w->m == m) return *w;
  fail("winograd: tile size m = {} is not supported ({})", m, fmt::join(kWinogradTileSizes, ", "));
}

bool winogradApplies(const Conv2dAttrs& attrs, const std::vector<int64_t>& weightShape, DataType dtype) {
  if (weightShape.size() != 4) return false;
  size_t kernelAxis = attrs.layout == Layout::NHWC ? 0 : 2;  // HWIO or OIHW
  return weightShape[kernelAxis] == 3 && weightShape[kernelAxis + 1] == 3 &&
         attrs.strides == std::array<int64_t, 2>{1, 1} && attrs.dilation == std::array<int64_t, 2>{1, 1} && attrs.groups == 1 &&
         dtype == DataType::float32() && (!attrs.outDtype || *attrs.outDtype == dtype);
}

int defaultWinogradTileSize(int64_t channels, int64_t outChannels, int64_t outHeight, int64_t outWidth, size_t l2Bytes) {
  if (channels < 16 || outChannels < 16) return 0;
  if (winogradWeightBytes(4, channels, outChannels) <= double(l2Bytes)) return 4;
  int64_t tiles2 = ceilDiv(outHeight, 2) * ceilDiv(outWidth, 2);
  return tiles2 >= 32 ? 2 : 0;
}

double winogradWeightBytes(int m, int64_t channels, int64_t outChannels) {
  double alpha = m + 2;
  return alpha * alpha * double(channels) * double(outChannels) * sizeof(float);
}

int largeWinogradTileSize(int64_t channels, int64_t outChannels, int64_t outHeight, int64_t outWidth, size_t l2Bytes) {
  switch (defaultWinogradTileSize(channels, outChannels, outHeight, outWidth, l2Bytes)) {
    case 2: return 4;
    case 4: return winogradWeightBytes(6, channels, outChannels) <= double(l2Bytes) ? 6 : 0;
    default: return 0;
  }
}

Tensor winogradWeightTransform(const Tensor& weight, int m, Layout layout) {
  const auto& w = winogradMatrices(m);
  checkRank("winograd_weight_transform", "weight", weight, 4);
  const auto& s = weight.shape();
  bool hwio = layout == Layout::NHWC;
  size_t kernelAxis = hwio ? 0 : 2;
  TESSEL_CHECK(s[kernelAxis] == 3 && s[kernelAxis + 1] == 3, "winograd_weight_transform: the weight must be {} 3x3, got {}",
               hwio ? "HWIO" : "OIHW", shapeString(s));
  TESSEL_CHECK(weight.dtype().isFloat(), "winograd_weight_transform: the weight is {}, not a float type", weight.dtype().str());
  DataType type = weight.dtype();
  int64_t channels = hwio ? s[2] : s[1], outChannels = hwio ? s[3] : s[0];
  auto tap = [&](int r, int c, const Expr& ci, const Expr& co) {
    Expr row = Expr(int64_t(r)), column = Expr(int64_t(c));
    return hwio ? weight(row, column, ci, co) : weight(co, ci, row, column);
  };
  // Two passes of G, rows then columns, as one expression per element: U[e][u] = sum_r G[e][r]
  // sum_s g[r][s] G[u][s].
  return te::compute(
      {w.alpha, w.alpha, channels, outChannels},
      [&](const std::vector<Var>& i) {
        return winogradRow(w.G, i[0], type,
                           [&](int r) { return winogradRow(w.G, i[1], type, [&](int c) { return tap(r, c, i[2], i[3]); }); });
      },
      "winograd_weight", "winograd_weight_transform", {"eps", "nu", "ci", "co"});
}

std::vector<float> winogradWeightTransform(const std::vector<float>& weight, int64_t channels, int64_t outChannels, int m,
                                           Layout layout) {
  const auto& w = winogradMatrices(m);
  size_t plane = size_t(channels * outChannels);
  TESSEL_CHECK(weight.size() == 9 * plane, "winograd_weight_transform: {} weights for a 3x3 filter of {} x {} channels",
               weight.size(), channels, outChannels);
  // Where tap (r, s) of the filter from input channel c to output channel k is.
  auto tap = [&](int r, int s, int64_t c, int64_t k) {
    return layout == Layout::NHWC ? size_t(r * 3 + s) * plane + size_t(c * outChannels + k) : size_t(((k * channels + c) * 3 + r) * 3 + s);
  };
  int a = w.alpha;
  std::vector<float> out(size_t(a * a) * plane);
  std::vector<double> rows(size_t(a * 3));  // (G g)[e][s] for one (c, k)
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t k = 0; k < outChannels; ++k) {
      for (int e = 0; e < a; ++e)
        for (int s = 0; s < 3; ++s) {
          double sum = 0;
          for (int r = 0; r < 3; ++r) sum += w.G[size_t(e)][size_t(r)] * double(weight[tap(r, s, c, k)]);
          rows[size_t(e * 3 + s)] = sum;
        }
      size_t ck = size_t(c * outChannels + k);
      for (int e = 0; e < a; ++e)
        for (int u = 0; u < a; ++u) {
          double sum = 0;
          for (int s = 0; s < 3; ++s) sum += rows[size_t(e * 3 + s)] * w.G[size_t(u)][size_t(s)];
          out[size_t(e * a + u) * plane + ck] = float(sum);
        }
    }
  return out;
}

WinogradConvShape checkWinogradConv(const Tensor& data, const Tensor& transformedWeight, const Conv2dAttrs& attrs, int m) {
  const std::string op = "conv2d_winograd";
  const auto& w = winogradMatrices(m);
  checkRank(op, "data", data, 4);
  checkRank(op, "transformed weight", transformedWeight, 4);
  TESSEL_CHECK(attrs.layout == Layout::NHWC || attrs.layout == Layout::NCHW, "{}: NHWC or NCHW data, got {}", op,
               layoutName(attrs.layout));
  TESSEL_CHECK(attrs.strides == (std::array<int64_t, 2>{1, 1}) && attrs.dilation == (std::array<int64_t, 2>{1, 1}) && attrs.groups == 1,
               "{}: only stride 1, dilation 1 and one group (strides {}x{}, dilation {}x{}, groups {})", op, attrs.strides[0],
               attrs.strides[1], attrs.dilation[0], attrs.dilation[1], attrs.groups);
  TESSEL_CHECK(data.dtype() == DataType::float32() && transformedWeight.dtype() == data.dtype(),
               "{}: float32 data and weight only, got {} and {}", op, data.dtype().str(), transformedWeight.dtype().str());
  const auto& d = data.shape();
  const auto& u = transformedWeight.shape();
  bool nchw = attrs.layout == Layout::NCHW;
  WinogradConvShape s;
  s.batch = d[0];
  s.channels = nchw ? d[1] : d[3];
  s.height = nchw ? d[2] : d[1];
  s.width = nchw ? d[3] : d[2];
  TESSEL_CHECK(u[0] == w.alpha && u[1] == w.alpha && u[2] == s.channels,
               "{}: the transformed weight {} does not fit F({}x{}, 3x3) of {} input channels", op, shapeString(u), m, m, s.channels);
  s.outChannels = u[3];
  s.outHeight = windowOutputSize(op, "height", s.height, 3, 1, 1, attrs.padding[0], attrs.padding[2]);
  s.outWidth = windowOutputSize(op, "width", s.width, 3, 1, 1, attrs.padding[1], attrs.padding[3]);
  return s;
}

Tensor conv2dWinograd(const Tensor& data, const Tensor& transformedWeight, const Conv2dAttrs& attrs, int m) {
  if (attrs.layout == Layout::NCHW) return conv2dWinogradNCHW(data, transformedWeight, attrs, m);
  WinogradConvShape shape = checkWinogradConv(data, transformedWeight, attrs, m);
  const auto& w = winogradMatrices(m);
  int64_t n = shape.batch, h = shape.height, wd = shape.width, c = shape.channels, a = w.alpha;
  int64_t k = shape.outChannels, oh = shape.outHeight, ow = shape.outWidth;
  int64_t tilesH = ceilDiv(oh, m), tilesW = ceilDiv(ow, m), tiles = n * tilesH * tilesW;
  int64_t pt = attrs.padding[0], pl = attrs.padding[1];
  DataType type = data.dtype();

  // The input, padded and extended to whole tiles (the last tiles read zeros past the image).
  Tensor padded = te::compute(
      {n, tilesH * m + 2, tilesW * m + 2, c},
      [&](const std::vector<Var>& i) {
        Expr y = i[1] - Expr(pt), x = i[2] - Expr(pl);
        Expr inside = (y >= Expr(int64_t(0))) && (y < Expr(h)) && (x >= Expr(int64_t(0))) && (x < Expr(wd));
        return ir::ifThenElse(inside, data(i[0], y, x, i[3]), ir::makeConst(type, 0));
      },
      "winograd_pad", "injective,pad", {"b", "y", "x", "c"});
  // Tile p covers rows m * th .. m * th + alpha - 1 and the same columns of image b.
  auto tileImage = [&](Expr p) { return ir::floordiv(p, Expr(tilesH * tilesW)); };
  auto tileRow = [&](Expr p) { return ir::floormod(ir::floordiv(p, Expr(tilesW)), Expr(tilesH)); };
  auto tileColumn = [&](Expr p) { return ir::floormod(p, Expr(tilesW)); };
  Tensor rows = te::compute(
      {a, a, tiles, c},
      [&](const std::vector<Var>& i) {
        return winogradRow(w.BT, i[0], type, [&](int r) {
          return padded(tileImage(i[2]), tileRow(i[2]) * Expr(int64_t(m)) + Expr(int64_t(r)),
                        tileColumn(i[2]) * Expr(int64_t(m)) + i[1], i[3]);
        });
      },
      "winograd_input_rows", "winograd_input_rows", {"eps", "s", "p", "ci"});
  Tensor input = te::compute(
      {a, a, tiles, c},
      [&](const std::vector<Var>& i) {
        return winogradRow(w.BT, i[1], type, [&](int s) { return rows(i[0], Expr(int64_t(s)), i[2], i[3]); });
      },
      "winograd_input", "winograd_input", {"eps", "nu", "p", "ci"});
  auto rc = te::reduceAxis(c, "rc");
  Tensor gemm = te::compute(
      {a, a, tiles, k},
      [&](const std::vector<Var>& i) { return te::sum(input(i[0], i[1], i[2], rc.var) * transformedWeight(i[0], i[1], rc.var, i[3]), {rc}); },
      "winograd_gemm", "winograd_gemm", {"eps", "nu", "p", "co"});
  Tensor outputRows = te::compute(
      {m, a, tiles, k},
      [&](const std::vector<Var>& i) {
        return winogradRow(w.AT, i[0], type, [&](int e) { return gemm(Expr(int64_t(e)), i[1], i[2], i[3]); });
      },
      "winograd_output_rows", "winograd_output_rows", {"i", "nu", "p", "co"});
  return te::compute(
      {n, oh, ow, k},
      [&](const std::vector<Var>& i) {
        Expr mm = Expr(int64_t(m));
        Expr p = (i[0] * Expr(tilesH) + ir::floordiv(i[1], mm)) * Expr(tilesW) + ir::floordiv(i[2], mm);
        Expr row = ir::floormod(i[1], mm);
        return winogradRow(w.AT, ir::floormod(i[2], mm), type, [&](int v) { return outputRows(row, Expr(int64_t(v)), p, i[3]); });
      },
      "conv2d_winograd_nhwc", "conv2d_winograd_nhwc", {"nn", "yy", "xx", "ff"});
}

}  // namespace tessel::ops
