#include "ops/WinogradNchw.h"

#include "ops/Shape.h"
#include "ops/Winograd.h"
#include "support/Error.h"

namespace tessel::ops {

using ir::Expr;
using te::Tensor;
using te::Var;

WinogradNchwTiles winogradNchwTiles(int64_t batch, int64_t outHeight, int64_t outWidth, int m) {
  return {batch, (outHeight + m - 1) / m, (outWidth + m - 1) / m};
}

int gpuWinogradTileSize(int64_t outHeight, int64_t outWidth) { return outHeight % 4 == 0 && outWidth % 4 == 0 ? 4 : 2; }

Tensor conv2dWinogradNCHW(const Tensor& data, const Tensor& transformedWeight, const Conv2dAttrs& attrs, int m) {
  WinogradConvShape shape = checkWinogradConv(data, transformedWeight, attrs, m);
  TESSEL_CHECK(attrs.layout == Layout::NCHW, "conv2d_winograd: the NCHW form got layout {}", layoutName(attrs.layout));
  const auto& w = winogradMatrices(m);
  int64_t n = shape.batch, c = shape.channels, h = shape.height, wd = shape.width, a = w.alpha;
  int64_t k = shape.outChannels, oh = shape.outHeight, ow = shape.outWidth;
  WinogradNchwTiles tiles = winogradNchwTiles(n, oh, ow, m);
  int64_t pt = attrs.padding[0], pl = attrs.padding[1];
  DataType type = data.dtype();
  Expr mm = Expr(int64_t(m));

  // The input, padded and extended to whole tiles (the last tiles read zeros past the image).
  Tensor padded = te::compute(
      {n, c, tiles.tileRows * m + 2, tiles.tileColumns * m + 2},
      [&](const std::vector<Var>& i) {
        Expr y = i[2] - Expr(pt), x = i[3] - Expr(pl);
        Expr inside = (y >= Expr(int64_t(0))) && (y < Expr(h)) && (x >= Expr(int64_t(0))) && (x < Expr(wd));
        return ir::ifThenElse(inside, data(i[0], i[1], y, x), ir::makeConst(type, 0));
      },
      "winograd_nchw_pad", "injective,pad", {"b", "c", "y", "x"});
  // Tile (th, tw) covers rows m th .. m th + alpha - 1 and the same columns.
  Tensor input = te::compute(
      {a, a, c, n, tiles.tileRows, tiles.tileColumns},
      [&](const std::vector<Var>& i) {
        return winogradRow(w.BT, i[0], type, [&](int r) {
          return winogradRow(w.BT, i[1], type, [&](int s) {
            return padded(i[3], i[2], i[4] * mm + Expr(int64_t(r)), i[5] * mm + Expr(int64_t(s)));
          });
        });
      },
      "winograd_nchw_input", "winograd_nchw_input", {"eps", "nu", "ci", "b", "th", "tw"});
  auto rc = te::reduceAxis(c, "rc");
  Tensor gemm = te::compute(
      {a, a, k, n, tiles.tileRows, tiles.tileColumns},
      [&](const std::vector<Var>& i) {
        return te::sum(transformedWeight(i[0], i[1], rc.var, i[2]) * input(i[0], i[1], rc.var, i[3], i[4], i[5]), {rc});
      },
      "winograd_nchw_gemm", "winograd_nchw_gemm", {"eps", "nu", "co", "b", "th", "tw"});
  Tensor outputRows = te::compute(
      {m, a, k, n, tiles.tileRows, tiles.tileColumns},
      [&](const std::vector<Var>& i) {
        return winogradRow(w.AT, i[0], type, [&](int e) { return gemm(Expr(int64_t(e)), i[1], i[2], i[3], i[4], i[5]); });
      },
      "winograd_nchw_output_rows", "winograd_nchw_output_rows", {"i", "nu", "co", "b", "th", "tw"});
  return te::compute(
      {n, k, oh, ow},
      [&](const std::vector<Var>& i) {
        return winogradRow(w.AT, ir::floormod(i[3], mm), type, [&](int v) {
          return outputRows(ir::floormod(i[2], mm), Expr(int64_t(v)), i[1], i[0], ir::floordiv(i[2], mm), ir::floordiv(i[3], mm));
        });
      },
      "conv2d_winograd_nchw", "conv2d_winograd_nchw", {"nn", "ff", "yy", "xx"});
}

}  // namespace tessel::ops
